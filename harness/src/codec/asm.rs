//! SASS text → word: the assembler direction of the printer.
//!
//! Control fields (stall, yield, barriers, reuse) never appear in nvdisasm's text, so they
//! come from a separate word (`controls_from`), as an assembler takes scheduling info.

use super::bits::{Codec, Values};
use super::print::{float_is_double, UNLISTED};
use crate::sass::{self, Body, Instruction, MemSpace};
use crate::spec::{Arch, FieldKind, MemImm, MemShape, MemSlot, MemSpaceKind, ModSlot, OperandKind, OperandSpec, RowKind, Table, Variant};
use crate::word::Word;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error("cannot read the text: {0}")]
    Syntax(#[from] sass::ParseError),
    #[error("no {arch} variant of '{mnemonic}' takes these operands{detail}")]
    NoVariant { arch: Arch, mnemonic: String, detail: String },
    /// Two encodings print this text (nvdisasm's printing loses the bits that differ).
    #[error("'{text}' reads as several different words ({keys:?})")]
    Ambiguous { text: String, keys: Vec<String>, words: Vec<Word> },
}

/// Assembles `text` for `arch`; control fields are copied from `controls_from`.
pub fn assemble(codec: &Codec, arch: Arch, text: &str, controls_from: Word) -> Result<(usize, Word), AsmError> {
    let inst = sass::parse_instruction(text)?;
    assemble_inst(codec, arch, &inst, controls_from)
}

pub fn assemble_inst(codec: &Codec, arch: Arch, inst: &Instruction, controls_from: Word) -> Result<(usize, Word), AsmError> {
    let mut hits: Vec<(usize, Word)> = vec![];
    let mut reasons: Vec<String> = vec![];
    for (vi, v) in codec.variants().iter().enumerate() {
        if v.arch != arch || v.mnemonic != inst.mnemonic {
            continue;
        }
        match fill(v, inst) {
            Ok(mut values) => {
                let ctl = codec.extract(vi, controls_from);
                for (i, f) in v.fields.iter().enumerate() {
                    if f.is_control() {
                        values.set(i, ctl.get(i));
                    }
                }
                let w = codec.encode_unchecked(vi, &values);
                if !hits.iter().any(|(_, x)| *x == w) {
                    hits.push((vi, w));
                }
            }
            Err(e) => reasons.push(format!("{}: {e}", v.key)),
        }
    }
    match hits.len() {
        1 => Ok(hits[0]),
        0 => Err(AsmError::NoVariant {
            arch,
            mnemonic: inst.mnemonic.clone(),
            detail: if reasons.is_empty() { String::new() } else { format!(" ({})", reasons.join("; ")) },
        }),
        _ => Err(AsmError::Ambiguous {
            text: inst.to_string(),
            keys: hits.iter().map(|(i, _)| codec.variant(*i).key.clone()).collect(),
            words: hits.iter().map(|(_, w)| *w).collect(),
        }),
    }
}

/// Highest predicate index (`PT`); the predicate field holds it and a negation bit above.
const PT: u8 = 7;

/// The guard predicate's field value (`@!P3` → 0b1011; none → PT), range-checked.
fn fill_pred(v: &Variant, inst: &Instruction, values: &mut Values) -> Result<(), String> {
    let fields: Vec<usize> = (0..v.fields.len()).filter(|&i| v.fields[i].kind == FieldKind::Pred).collect();
    let x = match &inst.pred {
        Some(p) if p.index > PT => return Err(format!("predicate P{} does not exist (P0..P6, PT)", p.index)),
        Some(p) if p.uniform != super::print::guard_is_uniform(v) => {
            return Err(format!("this form's guard is {} predicate, not '{p}'", if p.uniform { "a plain" } else { "a uniform" }))
        }
        Some(p) => p.index as u64 | if p.negated { 8 } else { 0 },
        None => PT as u64,
    };
    if fields.is_empty() && x != PT as u64 {
        return Err("the page has no predicate field for '@…'".into());
    }
    for i in fields {
        if x > v.fields[i].max() {
            return Err(format!("predicate value {x:#x} does not fit '{}' ({} bits)", v.fields[i].name, v.fields[i].width()));
        }
        values.set(i, x);
    }
    Ok(())
}

/// An integer immediate as its field's bits: non-negative values must fit the field,
/// negative ones its two's complement range.
fn imm_bits(v: &Variant, f: usize, k: usize, value: i64) -> Result<u64, String> {
    let w = v.fields[f].width();
    let max = v.fields[f].max();
    let fits = if value >= 0 { value as u64 <= max } else { w >= 64 || value >= -(1i128 << (w - 1)) as i64 };
    if w == 0 || !fits {
        return Err(format!("operand {k}: {} does not fit '{}' ({w} bits)", sass::hex_signed(value), v.fields[f].name));
    }
    Ok(value as u64 & max)
}

/// Field values for `inst` read as variant `v`, control fields zero.
pub fn fill(v: &Variant, inst: &Instruction) -> Result<Values, String> {
    let mut values = Values::zero(v.fields.len());
    fill_pred(v, inst, &mut values)?;
    if inst.operands.len() != v.operands.len() {
        return Err(format!("{} operands, the form '{}' has {}", inst.operands.len(), v.form, v.operands.len()));
    }
    for (k, (o, spec)) in inst.operands.iter().zip(&v.operands).enumerate() {
        fill_operand(v, k, o, spec, &mut values)?;
    }
    let slots: Vec<Slot> = v
        .modifiers
        .iter()
        .map(|m| match m {
            ModSlot::Fixed { text } => Slot::Fixed { text: text.clone() },
            ModSlot::Group { field, hidden_zero } => Slot::Table { field: *field, hidden_zero: *hidden_zero },
            ModSlot::Flag { field } => Slot::Flag { field: *field },
        })
        .collect();
    match_tokens(v, &slots, &inst.modifiers, &mut values)?;
    Ok(values)
}

/// A uniform register's field value: `URZ` is the architecture's zero register.
fn ureg_index(v: &Variant, n: u16) -> u64 {
    if n == crate::sass::URZ {
        super::conventions::uniform_zero(v.arch) as u64
    } else {
        n as u64
    }
}

/// One operand's fields, range-checked; `k` numbers it in messages.
fn fill_operand(v: &Variant, k: usize, o: &sass::Operand, spec: &OperandSpec, values: &mut Values) -> Result<(), String> {
    let fill = OperandFill { v, k, spec };
    fill.body(&o.body, values)?;
    fill.flags(o, values)?;
    // Suffixes: operand-modifier tables in order, then selector flags.
    let mut slots: Vec<Slot> = spec.suffix_fields.iter().map(|&f| Slot::Table { field: f, hidden_zero: false }).collect();
    slots.extend(spec.selector_fields.iter().map(|&f| Slot::Flag { field: f }));
    let mut suffixes: &[String] = &o.suffixes;
    // A memory form's fixed register suffix (`[R2.64+UR4]`) comes first and has no field.
    if let OperandKind::Mem(MemShape { reg_suffix: Some(fixed), .. }) = spec.kind {
        match suffixes.split_first() {
            Some((s, rest)) if s == fixed => suffixes = rest,
            _ => return Err(format!("operand {k}: the form's register prints '.{fixed}', not {:?}", o.suffixes)),
        }
    }
    match_tokens(v, &slots, suffixes, values).map_err(|e| format!("operand {k}: {e}"))?;
    Ok(())
}

/// Operand `k` of an instruction read as variant `v`, whose fields `spec` names.
struct OperandFill<'a> {
    v: &'a Variant,
    k: usize,
    spec: &'a OperandSpec,
}

impl OperandFill<'_> {
    /// Sets the operand's `slot`-th value field to `x`; `shown` is the value as written,
    /// for the message.
    fn set(&self, values: &mut Values, slot: usize, x: u64, shown: &str) -> Result<(), String> {
        let (v, k) = (self.v, self.k);
        match self.spec.value_fields[slot] {
            Some(f) if x <= v.fields[f].max() => {
                values.set(f, x);
                Ok(())
            }
            Some(f) => Err(format!("operand {k}: {shown} does not fit '{}' ({} bits)", v.fields[f].name, v.fields[f].width())),
            None if x == 0 => Ok(()),
            None => Err(format!("operand {k}: no bits for a non-zero value")),
        }
    }

    /// The value fields, from the operand's body (register, immediate, constant, …).
    fn body(&self, body: &Body, values: &mut Values) -> Result<(), String> {
        let (v, k) = (self.v, self.k);
        match (self.spec.kind, body) {
            // Registers are checked against the page's field, not the register file: the
            // printer shows what the page's field holds (UR86 in an 8-bit field), and the
            // two must roundtrip; a field wider than the hardware's is the validator's finding.
            (OperandKind::Reg, Body::Reg { n }) => self.set(values, 0, *n as u64, &format!("R{n}")),
            (OperandKind::UReg, Body::UReg { n }) => self.set(values, 0, ureg_index(v, *n), &Body::UReg { n: *n }.to_string()),
            (OperandKind::Imm, Body::Imm { value }) => {
                let f = self.spec.value_fields[0].ok_or("immediate without bits")?;
                values.set(f, imm_bits(v, f, k, *value)?);
                Ok(())
            }
            (OperandKind::Float, Body::Float { value, text }) => self.set(values, 0, float_bits(v, k, *value, text)?, text),
            (OperandKind::Const, Body::Const { bank, offset }) => {
                // The offset field is signed (see codec::print).
                let w = self.spec.value_fields[1].map(|f| v.fields[f].width()).unwrap_or(0);
                let units = *offset / 4;
                if offset % 4 != 0 || w == 0 || units < -(1i64 << (w - 1)) || units >= 1i64 << (w - 1) {
                    return Err(format!("operand {k}: offset {offset:#x} does not fit: not a multiple of 4 in the signed {w}-bit field (4-byte units)"));
                }
                self.set(values, 0, *bank as u64, &format!("bank {bank:#x}"))?;
                self.set(values, 1, (units as u64) & ((1u64 << w) - 1), &format!("offset {offset:#x}"))
            }
            (OperandKind::ConstX, Body::ConstX { ureg, offset }) => {
                if *offset < 0 || offset % 4 != 0 {
                    return Err(format!("operand {k}: offset {offset:#x} is not a non-negative multiple of 4"));
                }
                self.set(values, 0, ureg_index(v, *ureg), &Body::UReg { n: *ureg }.to_string())?;
                self.set(values, 1, (*offset / 4) as u64, &format!("offset {offset:#x}"))
            }
            (OperandKind::Pred, Body::Pred { n }) | (OperandKind::UPred, Body::UPred { n }) => {
                if *n > PT {
                    let u = if self.spec.kind == OperandKind::UPred { "U" } else { "" };
                    return Err(format!("operand {k}: predicate {body} does not exist ({u}P0..{u}P6, {u}PT)"));
                }
                self.set(values, 0, *n as u64, &body.to_string())
            }
            (OperandKind::Mem(m), body) if body.as_mem().is_some() => self.mem(m, body, values),
            (kind, body) => Err(format!("operand {k}: expected {}, found '{body}'", kind.form_token())),
        }
    }

    /// A memory operand's fields. A register or immediate the text leaves out takes the value
    /// nvdisasm leaves out (RZ, 0: `conventions::mem_printed`); one the form lacks may only
    /// stand in for nothing printed (`[RZ]`, `a[0x0]`).
    fn mem(&self, m: MemShape, body: &Body, values: &mut Values) -> Result<(), String> {
        let (v, k) = (self.v, self.k);
        let Some((space, reg, ur, imm)) = body.as_mem() else { return Err(format!("operand {k}: '{body}' is not a memory operand")) };
        let space_value = match (m.space, space) {
            (MemSpaceKind::Plain, MemSpace::Plain) | (MemSpaceKind::Attr, MemSpace::Attr) => 0,
            (MemSpaceKind::Desc, MemSpace::Desc { ureg }) | (MemSpaceKind::ConstX, MemSpace::ConstX { ureg }) => ureg_index(v, ureg),
            (MemSpaceKind::Const, MemSpace::Const { bank }) => bank as u64,
            _ => return Err(format!("operand {k}: expected {}, found '{body}'", m.token())),
        };
        let lacks = |what: &str| Err(format!("operand {k}: the form {} has no {what} for '{body}'", m.token()));
        match (m.reg, reg) {
            (false, Some(n)) if n != sass::RZ => return lacks("register"),
            (false, _) | (true, _) => {}
        }
        match (m.ureg, ur) {
            (false, Some(_)) => return lacks("uniform register"),
            // nvdisasm prints a form's uniform register always (`[R0+URZ]`).
            (true, None) => return Err(format!("operand {k}: the form {} prints its uniform register always, '{body}' has none", m.token())),
            _ => {}
        }
        match (m.imm, imm) {
            (MemImm::Absent, Some(x)) if x != 0 => return lacks("immediate"),
            (MemImm::Unsigned, Some(x)) if x < 0 => return Err(format!("operand {k}: the form's offset is unsigned, not {}", sass::hex_signed(x))),
            _ => {}
        }
        for (slot, role) in m.slot_roles().into_iter().enumerate() {
            match role {
                MemSlot::Space => self.set(values, slot, space_value, &format!("{space:?}"))?,
                MemSlot::Reg => self.set(values, slot, reg.unwrap_or(sass::RZ) as u64, &format!("R{}", reg.unwrap_or(sass::RZ)))?,
                MemSlot::UReg => {
                    let n = ur.unwrap_or(sass::URZ);
                    self.set(values, slot, ureg_index(v, n), &Body::UReg { n }.to_string())?;
                }
                MemSlot::Imm => {
                    let f = self.spec.value_fields[slot].ok_or("offset without bits")?;
                    values.set(f, imm_bits(v, f, k, imm.unwrap_or(0))?);
                }
            }
        }
        Ok(())
    }

    /// The `|…|`, `-` and `~`/`!` flags.
    fn flags(&self, o: &sass::Operand, values: &mut Values) -> Result<(), String> {
        let k = self.k;
        let not = if matches!(self.spec.kind, OperandKind::Pred | OperandKind::UPred) { "!" } else { "~" };
        for (want, field, what) in [(o.abs, self.spec.abs_field, "|…|"), (o.neg, self.spec.neg_field, "-"), (o.not, self.spec.not_field, not)] {
            match (want, field) {
                (true, Some(f)) => values.set(f, 1),
                (true, None) => return Err(format!("operand {k}: the page has no {what} flag for it")),
                _ => {}
            }
        }
        Ok(())
    }
}

/// A floating-point literal as its field's bits: a double's high 32 bits when the variant
/// takes doubles, else an exact 32-bit float.
fn float_bits(v: &Variant, k: usize, value: f64, text: &str) -> Result<u64, String> {
    // A finite literal too large for f64 parses as infinity: say so, not +INF.
    if value.is_infinite() && !text.contains("INF") {
        return Err(format!("operand {k}: {text} is out of range for a floating-point literal"));
    }
    if float_is_double(v) {
        let b = value.to_bits();
        if b & 0xffff_ffff != 0 {
            return Err(format!("operand {k}: {value} needs more than the high 32 bits of a double"));
        }
        // NaNs come from parse_float with their sign and quiet bit only.
        return Ok(b >> 32);
    }
    let f = value as f32;
    if f as f64 != value && !value.is_nan() {
        return Err(format!("operand {k}: {text} is not exactly a 32-bit float"));
    }
    if value.is_nan() {
        let quiet = value.to_bits() >> 51 & 1 == 1;
        Ok((if quiet { 0x7fc0_0000 } else { 0x7fa0_0000 }) | ((value.to_bits() >> 63) << 31))
    } else {
        Ok(f.to_bits() as u64)
    }
}

enum Slot {
    Fixed { text: String },
    Table { field: usize, hidden_zero: bool },
    Flag { field: usize },
}

/// Every way a slot can consume tokens at `toks[0..]`: (value, tokens used), longest first.
fn options(v: &Variant, slot: &Slot, toks: &[String]) -> Vec<(Option<(usize, u64)>, usize)> {
    let starts = |names: &[&str]| names.len() <= toks.len() && names.iter().zip(toks).all(|(a, b)| a == b);
    match slot {
        Slot::Fixed { text } => {
            if toks.first() == Some(text) {
                vec![(None, 1)]
            } else {
                vec![]
            }
        }
        Slot::Flag { field } => {
            let mut o = vec![];
            if toks.first().map(|t| *t == v.fields[*field].name).unwrap_or(false) {
                o.push((Some((*field, 1)), 1));
            }
            o.push((Some((*field, 0)), 0));
            o
        }
        Slot::Table { field, hidden_zero } => {
            let t: Option<&Table> = v.field_table(*field);
            let mut o: Vec<(Option<(usize, u64)>, usize)> = vec![];
            if let Some(t) = t {
                for r in &t.rows {
                    if r.kind == RowKind::Default {
                        continue;
                    }
                    let names: Vec<&str> = r.name.split('.').collect();
                    if starts(&names) {
                        o.push((Some((*field, r.value)), names.len()));
                    }
                }
                if let Some(x) = toks.first().and_then(|t| t.strip_prefix(UNLISTED)).and_then(|n| n.parse::<u64>().ok()) {
                    if t.row(x).is_none() && x <= v.fields[*field].max() {
                        o.push((Some((*field, x)), 1));
                    }
                }
                o.sort_by_key(|x| std::cmp::Reverse(x.1));
                if *hidden_zero {
                    o.push((Some((*field, 0)), 0));
                }
                if let Some(r) = t.rows.iter().find(|r| r.kind == RowKind::Default) {
                    o.push((Some((*field, r.value)), 0));
                }
            }
            o
        }
    }
}

fn go_refs(v: &Variant, slots: &[&Slot], toks: &[String], values: &mut Values) -> bool {
    let Some((first, rest)) = slots.split_first() else { return toks.is_empty() };
    for (set, used) in options(v, first, toks) {
        if let Some((f, x)) = set {
            values.set(f, x);
        }
        if go_refs(v, rest, &toks[used..], values) {
            return true;
        }
    }
    false
}

/// Lexicographic next permutation; false after the last.
fn next_permutation(a: &mut [usize]) -> bool {
    let n = a.len();
    if n < 2 {
        return false;
    }
    let mut i = n - 1;
    while i > 0 && a[i - 1] >= a[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = n - 1;
    while a[j] <= a[i - 1] {
        j -= 1;
    }
    a.swap(i - 1, j);
    a[i..].reverse();
    true
}

fn match_tokens(v: &Variant, slots: &[Slot], toks: &[String], values: &mut Values) -> Result<(), String> {
    let in_page_order: Vec<&Slot> = slots.iter().collect();
    if go_refs(v, &in_page_order, toks, values) {
        return Ok(());
    }
    // nvdisasm's modifier order is not always the page's (a syntax difference the validator
    // reports): accept any order, trying the page's first.
    if slots.len() <= 6 {
        let mut order: Vec<usize> = (0..slots.len()).collect();
        while next_permutation(&mut order) {
            let perm: Vec<&Slot> = order.iter().map(|&i| &slots[i]).collect();
            if go_refs(v, &perm, toks, values) {
                return Ok(());
            }
        }
    }
    {
        let expect: Vec<String> = slots
            .iter()
            .map(|s| match s {
                Slot::Fixed { text } => text.clone(),
                Slot::Table { field, .. } => v.field_table(*field).map(|t| t.title.clone()).unwrap_or_default(),
                Slot::Flag { field } => format!("[{}]", v.fields[*field].name),
            })
            .collect();
        Err(format!("modifiers {:?} do not fit [{}]", toks, expect.join(", ")))
    }
}
