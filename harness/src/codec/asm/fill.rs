//! Filling a form's fields from a text's operands: immediates, floats, memory operands,
//! special registers.

use super::error::owned;
use super::*;

/// An integer immediate as its field's bits: non-negative values must fit the field (`f`,
/// whose slot is `s`), negative ones its two's complement range.
pub(super) fn imm_bits(v: &Variant, s: ValueSlot, f: usize, k: usize, value: i128) -> Result<u64, FillError> {
    let (w, max) = (s.width(), s.max);
    let fits = if value >= 0 { value <= i128::from(max) } else { w > 0 && value >= -(1i128 << (w - 1)) };
    if w == 0 || !fits {
        return Err(OperandFault::DoesNotFit { shown: sass::hex_signed(value), field: v.fields[f].name.clone(), width: w }.at(k));
    }
    Ok(value as u64 & max)
}

/// What a scaled immediate must be, for messages: `a multiple of 4`, `2 × n + 1`.
pub(super) fn scale_text(m: ImmMap) -> String {
    match m.offset {
        0 => format!("a multiple of {}", 1u64 << m.shift),
        o => format!("{} × n + {o}", 1u64 << m.shift),
    }
}

/// Why a memory operand's printed parts do not fit a form's shape.
pub(super) enum MemMismatch {
    /// Another space (`desc[…][…]` for `[…]`).
    Space,
    /// A register, uniform register or immediate the form has no place for.
    Lacks(&'static str),
    /// No uniform register, which the form always prints.
    UregAlways,
    /// A negative offset for an unsigned one.
    Unsigned(i64),
}

/// The space's field value of a memory operand's printed `parts` read as shape `m` (`urz`:
/// the architecture's `URZ` index), or why they do not fit it. A register or immediate the
/// text leaves out takes the value nvdisasm leaves out (RZ, 0: `conventions::mem_printed`);
/// one the form lacks may only stand in for nothing printed (`[RZ]`, `a[0x0]`).
pub(super) fn mem_fit(m: MemShape, parts: sass::MemParts, urz: u64) -> Result<u64, MemMismatch> {
    let (space, reg, ur, imm) = parts;
    let ureg_index = |n: u16| if n == sass::URZ { urz } else { u64::from(n) };
    let space_value = match (m.space, space) {
        (MemSpaceKind::Plain, MemSpace::Plain) | (MemSpaceKind::Attr, MemSpace::Attr) => 0,
        (MemSpaceKind::Desc, MemSpace::Desc { ureg }) | (MemSpaceKind::ConstX, MemSpace::ConstX { ureg }) => ureg_index(ureg),
        (MemSpaceKind::Const, MemSpace::Const { bank }) => bank as u64,
        (MemSpaceKind::Named(a), MemSpace::Named { name }) if a == name => 0,
        _ => return Err(MemMismatch::Space),
    };
    if let (false, Some(n)) = (m.reg, reg) {
        if n != sass::RZ {
            return Err(MemMismatch::Lacks("register"));
        }
    }
    match (m.ureg, ur) {
        (false, Some(_)) => return Err(MemMismatch::Lacks("uniform register")),
        // nvdisasm prints a form's uniform register always (`[R0+URZ]`), unless the form
        // leaves URZ out (`MemShape::ureg_elided`): then a missing one is URZ.
        (true, None) if !m.ureg_elided => return Err(MemMismatch::UregAlways),
        _ => {}
    }
    match (m.imm, imm) {
        (MemImm::Absent, Some(x)) if x != 0 => Err(MemMismatch::Lacks("immediate")),
        (MemImm::Unsigned, Some(x)) if x < 0 => Err(MemMismatch::Unsigned(x)),
        _ => Ok(space_value),
    }
}

/// Operand `k` of an instruction read as variant `v`, whose fields `op` names.
pub(super) struct OperandFill<'a> {
    pub(super) v: &'a Variant,
    pub(super) k: usize,
    pub(super) op: &'a FormOperand,
    /// The operand's value slots ([`Form::value`]).
    pub(super) value: &'a [ValueSlot],
    /// The instruction's modifiers: one may choose a float immediate's format.
    pub(super) modifiers: &'a [&'a str],
    /// The architecture's `URZ` index.
    pub(super) urz: u64,
    /// [`Form::unsigned_imm`] and [`Form::float_by`].
    pub(super) unsigned_imm: bool,
    pub(super) float_by: bool,
}

impl OperandFill<'_> {
    /// A uniform register's field value: `URZ` is the architecture's zero register.
    pub(super) fn ureg_index(&self, n: u16) -> u64 {
        if n == crate::sass::URZ {
            self.urz
        } else {
            n as u64
        }
    }

    /// [`Variant::float_format`] for borrowed modifiers: the first that names a format,
    /// else the operand's own.
    pub(super) fn float_format(&self) -> FloatFormat {
        if !self.float_by {
            return self.op.float;
        }
        match self.v.float_by.iter().find(|(m, _)| self.modifiers.contains(&m.as_str())) {
            Some((_, f)) => *f,
            None => self.op.float,
        }
    }

    /// Sets the operand's `slot`-th value field to `x`; `shown` is the value as written,
    /// for the message (formatted only then).
    pub(super) fn set(&self, values: &mut Values, slot: usize, x: u64, shown: &dyn fmt::Display) -> Result<(), FillError> {
        let (v, k) = (self.v, self.k);
        let s = self.value[slot];
        if let (Some(plus), Some(f)) = (s.plus, s.field()) {
            // A derived register has no bits: it must be what its source (set before it,
            // earlier in print order) prints it as.
            let (src, name) = (values.get(f), &v.fields[f].name);
            return match crate::spec::Derived::value(plus, src, s.max) {
                Some(want) if want == x => Ok(()),
                Some(want) => Err(OperandFault::NotDerived { shown: shown.to_string(), field: name.clone(), want, plus }.at(k)),
                None => Err(OperandFault::PassesZero { source_value: src, plus }.at(k)),
            };
        }
        match s.field() {
            Some(f) if x <= s.max => {
                values.set(f, x);
                Ok(())
            }
            Some(f) => Err(OperandFault::DoesNotFit { shown: shown.to_string(), field: v.fields[f].name.clone(), width: v.fields[f].width() }.at(k)),
            None if x == 0 => Ok(()),
            None => Err(OperandFault::NoBits.at(k)),
        }
    }

    /// The value fields, from the operand's body (register, immediate, constant, …).
    pub(super) fn body(&self, o: &OperandRef, values: &mut Values) -> Result<(), FillError> {
        let (v, k, body) = (self.v, self.k, &o.body);
        match (self.op.kind, body) {
            // A register without bits is its zero register (see `spec::parse`'s `constant_zero`).
            (OperandKind::Reg | OperandKind::UReg, Body::Reg { n } | Body::UReg { n }) if self.value.first().is_some_and(|s| s.at.is_none()) => {
                let (zero, name) = if self.op.kind == OperandKind::Reg { (sass::RZ, "RZ") } else { (sass::URZ, "URZ") };
                let same_file = matches!(body, Body::Reg { .. }) == (self.op.kind == OperandKind::Reg);
                if same_file && *n == zero {
                    Ok(())
                } else {
                    Err(OperandFault::ZeroRegister(name).at(k))
                }
            }
            // Registers are checked against the page's field, not the register file: the
            // printer shows what the page's field holds (UR86 in an 8-bit field), and the
            // two must roundtrip; a field wider than the hardware's is the validator's finding.
            (OperandKind::Reg, Body::Reg { n }) => self.set(values, 0, *n as u64, &format_args!("R{n}")),
            (OperandKind::UReg, Body::UReg { n }) => self.set(values, 0, self.ureg_index(*n), body),
            (OperandKind::Imm(m), Body::Imm { value }) => {
                // Without bits, the page's immediate is a constant zero (see
                // `spec::parse`'s `constant_zero`).
                let Some(f) = self.value[0].field() else {
                    return if *value == 0 { Ok(()) } else { Err(OperandFault::NoBits.at(k)) };
                };
                let x = m.invert(*value).ok_or_else(|| OperandFault::NotScaled { value: *value, scale: scale_text(m) }.at(k))?;
                // nvdisasm never prints this form's immediate negative (its stored
                // conventions): a negative one is another form's (AL2P R,R,I's, not R,I's).
                if x < 0 && self.unsigned_imm {
                    return Err(OperandFault::UnsignedImmediate(*value).at(k));
                }
                values.set(f, imm_bits(v, self.value[0], f, k, x)?);
                Ok(())
            }
            (OperandKind::Float(_), Body::Float { value, .. }) => {
                let bits = float_bits(self.float_format(), *value, o.text).map_err(|e| e.at(k))?;
                self.set(values, 0, bits, &o.text)
            }
            (OperandKind::Barrier, Body::Barrier { n }) => self.set(values, 0, *n as u64, body),
            (OperandKind::Target(shift), Body::Imm { value }) => {
                // The inverse of codec::print::target_at_zero, in the signed field.
                let value = i64::try_from(*value).map_err(|_| OperandFault::TargetPast(*value).at(k))?;
                let w = self.value[0].width();
                let unit = 1i64 << shift;
                let units = value.wrapping_sub(0x10) / unit;
                if value.wrapping_sub(0x10) % unit != 0 || w == 0 || w < 64 && (units < -(1i64 << (w - 1)) || units >= 1i64 << (w - 1)) {
                    return Err(OperandFault::Target { value, unit, width: w }.at(k));
                }
                self.set(values, 0, (units as u64) & (u64::MAX >> (64 - w)), &format_args!("target {value:#x}"))
            }
            (OperandKind::Const, Body::Const { bank, offset }) => {
                // The offset field is signed (see codec::print).
                let w = self.value[1].width();
                let units = *offset / 4;
                if offset % 4 != 0 || w == 0 || units < -(1i64 << (w - 1)) || units >= 1i64 << (w - 1) {
                    return Err(OperandFault::ConstOffset { offset: *offset, width: w }.at(k));
                }
                self.set(values, 0, *bank as u64, &format_args!("bank {bank:#x}"))?;
                self.set(values, 1, (units as u64) & ((1u64 << w) - 1), &format_args!("offset {offset:#x}"))
            }
            (OperandKind::ConstX, Body::ConstX { ureg, offset }) => {
                if *offset < 0 || offset % 4 != 0 {
                    return Err(OperandFault::ConstXOffset(*offset).at(k));
                }
                self.set(values, 0, self.ureg_index(*ureg), &Body::UReg { n: *ureg })?;
                self.set(values, 1, (*offset / 4) as u64, &format_args!("offset {offset:#x}"))
            }
            (OperandKind::Pred, Body::Pred { n }) | (OperandKind::UPred, Body::UPred { n }) => {
                if *n > PT {
                    let u = if self.op.kind == OperandKind::UPred { "U" } else { "" };
                    return Err(OperandFault::NoSuchPredicate { shown: body.to_string(), u }.at(k));
                }
                self.set(values, 0, *n as u64, body)
            }
            (OperandKind::Mem(m), body) if body.as_mem().is_some() => self.mem(m, body, values),
            (kind, _) => Err(OperandFault::Expected { expected: kind.form_token().into_owned(), found: o.full_body().to_string() }.at(k)),
        }
    }

    /// A memory operand's fields, once its parts fit the form's shape (see [`mem_fit`]).
    pub(super) fn mem(&self, m: MemShape, body: &Body, values: &mut Values) -> Result<(), FillError> {
        let (v, k) = (self.v, self.k);
        let Some(parts @ (space, reg, ur, imm)) = body.as_mem() else { return Err(OperandFault::NotMemory(body.to_string()).at(k)) };
        let space_value = mem_fit(m, parts, self.urz).map_err(|e| {
            let (form, found) = (m.token(), body.to_string());
            match e {
                MemMismatch::Space => OperandFault::Expected { expected: form, found },
                MemMismatch::Lacks(what) => OperandFault::MemLacks { form, what, found },
                MemMismatch::UregAlways => OperandFault::UregAlways { form, found },
                MemMismatch::Unsigned(x) => OperandFault::UnsignedOffset(x.into()),
            }
            .at(k)
        })?;
        for (slot, role) in m.slot_roles().into_iter().enumerate() {
            match role {
                MemSlot::Space => self.set(values, slot, space_value, &format_args!("{space:?}"))?,
                MemSlot::Reg => self.set(values, slot, reg.unwrap_or(sass::RZ) as u64, &format_args!("R{}", reg.unwrap_or(sass::RZ)))?,
                MemSlot::UReg => {
                    let n = ur.unwrap_or(sass::URZ);
                    self.set(values, slot, self.ureg_index(n), &Body::UReg { n })?;
                }
                MemSlot::Imm => {
                    let f = self.value[slot].field().ok_or(FillError::NoBits("offset"))?;
                    let scale = ImmMap { shift: m.imm_shift, offset: 0 };
                    let x = imm.unwrap_or(0);
                    let units = scale.invert(i128::from(x)).ok_or_else(|| OperandFault::OffsetNotScaled { value: x.into(), scale: scale_text(scale) }.at(k))?;
                    values.set(f, imm_bits(v, self.value[slot], f, k, units)?);
                }
            }
        }
        Ok(())
    }

    /// The `|…|`, `-` and `~`/`!` flags.
    pub(super) fn flags(&self, o: &OperandRef, values: &mut Values) -> Result<(), FillError> {
        let k = self.k;
        let not = if matches!(self.op.kind, OperandKind::Pred | OperandKind::UPred) { "!" } else { "~" };
        for (want, field, what) in [(o.abs, self.op.abs_field, "|…|"), (o.neg, self.op.neg_field, "-"), (o.not, self.op.not_field, not)] {
            match (want, field) {
                (true, Some(f)) => values.set(f.into(), 1),
                (true, None) => return Err(OperandFault::NoFlag(what).at(k)),
                _ => {}
            }
        }
        // Where the suffixes stand is the page's (`suffixes after bars:`), as printed.
        let placed = o.abs && !o.suffixes.is_empty() && !matches!(o.body, Body::Mem { .. });
        if placed && o.after_bars != self.op.suffixes_after_bars {
            let (want, got) = if self.op.suffixes_after_bars { ("after", "inside") } else { ("inside", "after") };
            return Err(OperandFault::SuffixPlace { want, got }.at(k));
        }
        Ok(())
    }
}

/// A floating-point literal as its field's bits: a double's high 32 bits when the variant
/// takes doubles, an exact fp16 in a 16-bit field, else an exact 32-bit float.
pub(super) fn float_bits(format: FloatFormat, value: f64, text: &str) -> Result<u64, OperandFault> {
    let inexact = |format| OperandFault::NotExact { text: text.to_string(), format };
    // A finite literal too large for f64 parses as infinity: say so, not +INF.
    if value.is_infinite() && !text.contains("INF") {
        return Err(OperandFault::FloatRange(text.to_string()));
    }
    if format == FloatFormat::Half {
        return f64_to_half(value).map(u64::from).ok_or_else(|| inexact("a 16-bit float"));
    }
    if format == FloatFormat::BFloat {
        return f64_to_bfloat(value).map(u64::from).ok_or_else(|| inexact("a bfloat16"));
    }
    if format == FloatFormat::DoubleHigh {
        let b = value.to_bits();
        if b & 0xffff_ffff != 0 {
            return Err(OperandFault::DoubleHigh(value.to_string()));
        }
        // NaNs come from parse_float with their sign and quiet bit only.
        return Ok(b >> 32);
    }
    let f = value as f32;
    if f as f64 != value && !value.is_nan() {
        return Err(inexact("a 32-bit float"));
    }
    if value.is_nan() {
        let quiet = value.to_bits() >> 51 & 1 == 1;
        Ok((if quiet { 0x7fc0_0000 } else { 0x7fa0_0000 }) | ((value.to_bits() >> 63) << 31))
    } else {
        Ok(f.to_bits() as u64)
    }
}

/// How many of `suffixes` are fixed by the form (no field): a memory form's register
/// suffix (`[R2.64+UR4]`) or an operand's fixed suffixes (`R0.SIGN`); an error when the
/// text lacks them.
pub(super) fn fixed_suffix(spec: &OperandSpec, suffixes: &[&str]) -> Result<usize, OperandFault> {
    let printed = &spec.fixed_suffixes;
    match spec.kind {
        OperandKind::Mem(MemShape { reg_suffix: Some(fixed), .. }) => match suffixes.first() {
            Some(&s) if s == fixed => Ok(1),
            _ => Err(OperandFault::RegisterSuffix { fixed: fixed.to_string(), found: owned(suffixes) }),
        },
        _ if printed.len() <= suffixes.len() && printed.iter().zip(suffixes).all(|(f, s)| f == s) => Ok(printed.len()),
        _ => Err(OperandFault::FixedSuffix { fixed: spec.fixed_suffixes.join("."), found: owned(suffixes) }),
    }
}

/// A special register: its name (body and suffixes) is a row of the operand's table.
pub(super) fn fill_special(v: &Variant, k: usize, o: &OperandRef, tokens: &[&str], spec: &OperandSpec, values: &mut Values) -> Result<(), FillError> {
    let name = sass::Operand { reuse: false, ..o.to_operand(tokens) }.to_string();
    let Some(&f) = spec.suffix_fields.first() else {
        // No table: the one name the form prints.
        return match &spec.fixed_name {
            Some(n) if *n == name => Ok(()),
            n => Err(OperandFault::NotName { found: name, name: n.clone().unwrap_or_default() }.at(k)),
        };
    };
    let nameless = |r: &&crate::spec::Row| name.is_empty() && r.kind == crate::spec::RowKind::Default;
    let row = v.field_table(f).and_then(|t| t.rows.iter().find(|r| r.name == name || nameless(r)));
    let row = row.ok_or_else(|| OperandFault::NotInTable(name.clone()).at(k))?;
    values.set(f, row.value);
    Ok(())
}
