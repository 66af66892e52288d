//! A variant as read, before and while its fields are classified and checked.

use super::*;

/// A variant as read from the page, before its fields are interpreted and checked: its
/// head lines and its layout and tables.
pub(super) struct VariantDraft {
    pub(super) file: String,
    pub(super) arch: Arch,
    pub(super) head: VariantHead,
    pub(super) raw: Vec<RawField>,
    pub(super) fixed_mask: BitSet,
    pub(super) fixed_value: Word,
    pub(super) inferred: BitSet,
    pub(super) tables: Vec<Table>,
}

/// Fields classified so far, and what later checks need from the classification.
#[derive(Default)]
pub(super) struct FieldScan {
    pub(super) fields: Vec<Field>,
    /// Plain `modi` spans met, matched in order to the `Operand K Modifiers` tables.
    pub(super) plain_modi: usize,
    /// Flag name → (spans, line of the first), for the repeated-name warning.
    pub(super) name_counts: Vec<(String, usize, usize)>,
}

impl VariantDraft {
    pub(super) fn err(&self, line: usize, m: impl std::fmt::Display) -> PageError {
        PageError { file: self.file.clone(), line, message: format!("{}: {m}", self.head.key) }
    }

    /// Page operand numbers per form operand: c[I][I] and cx[UR][I] take two numbers.
    pub(super) fn page_ops(&self) -> Vec<Vec<usize>> {
        let mut next = 0;
        self.head
            .kinds
            .iter()
            .map(|k| {
                let ops = (next..next + k.page_slots()).collect();
                next += k.page_slots();
                ops
            })
            .collect()
    }

    /// The page operands of the `Operand K Modifiers` tables, in page order.
    pub(super) fn operand_tables(&self) -> Vec<usize> {
        self.tables
            .iter()
            .filter_map(|t| match t.id {
                TableId::Operand { page_operand } => Some(page_operand),
                _ => None,
            })
            .collect()
    }

    /// Classifies every layout span as a field; warns about repeated flag names.
    pub(super) fn fields(&self, p: &mut Lines, n_page: usize) -> Result<Vec<Field>, PageError> {
        // Tables that an `operand K modi` field names are not matched to plain spans.
        let named: Vec<usize> = self.raw.iter().filter_map(|f| split_modi_operand(&f.name)).collect();
        let operand_tables: Vec<usize> = self.operand_tables().into_iter().filter(|o| !named.contains(o)).collect();
        let mut scan = FieldScan::default();
        for f in &self.raw {
            let mut bits: Vec<u8> = f.spans.iter().flatten().copied().collect();
            bits.sort_unstable();
            let kind = self.field_kind(f, &bits, n_page, &operand_tables, &mut scan)?;
            if let FieldKind::Flag { role: FlagRole::Modifier, .. } = &kind {
                if bits.len() != 1 {
                    return Err(self.err(f.line, format!("flag '{}' spans {} bits; flags are one bit", f.name, bits.len())));
                }
            }
            if bits.len() > 64 {
                return Err(self.err(f.line, format!("field '{}' spans {} bits", f.name, bits.len())));
            }
            scan.fields.push(Field { name: f.name.clone(), kind, bits, line: f.line, inverted: false, illegal_at_all_ones: false });
        }
        if scan.fields.len() > crate::codec::MAX_FIELDS {
            let m = format!("{} fields; at most {} are supported", scan.fields.len(), crate::codec::MAX_FIELDS);
            return Err(self.err(self.head.line, m));
        }
        for (n, c, l) in &scan.name_counts {
            if *c > 1 {
                let m = format!("{}: '{n}' names {c} separate fields; they are told apart by operand", self.head.key);
                p.warn(*l, rules::REPEATED_NAME, m);
            }
        }
        if scan.plain_modi < operand_tables.len() {
            let m = format!("{} 'Operand K Modifiers' tables but {} plain 'modi' spans", operand_tables.len(), scan.plain_modi);
            return Err(self.err(self.head.line, m));
        }
        Ok(scan.fields)
    }

    /// What one layout span is, from its name.
    pub(super) fn field_kind(&self, f: &RawField, bits: &[u8], n_page: usize, operand_tables: &[usize], scan: &mut FieldScan) -> Result<FieldKind, PageError> {
        Ok(match f.name.as_str() {
            "pred" => FieldKind::Pred,
            "stall" => FieldKind::Control { control: Control::Stall },
            "y" => FieldKind::Control { control: Control::Yield },
            "r-bar" => FieldKind::Control { control: Control::ReadBarrier },
            "w-bar" => FieldKind::Control { control: Control::WriteBarrier },
            "b-mask" => FieldKind::Control { control: Control::WaitMask },
            "reuse" => FieldKind::Control { control: Control::Reuse },
            "modi" => {
                let Some(&op) = operand_tables.get(scan.plain_modi) else {
                    let m = format!("plain 'modi' span #{} at bit {} has no 'Operand K Modifiers' table", scan.plain_modi + 1, bits[0]);
                    return Err(self.err(f.line, m));
                };
                scan.plain_modi += 1;
                FieldKind::OperandModifier { page_operand: op }
            }
            n => match split_modi_operand(n) {
                Some(op) if self.tables.iter().any(|t| t.id == TableId::Operand { page_operand: op }) => FieldKind::OperandModifier { page_operand: op },
                Some(op) => return Err(self.err(f.line, format!("'{n}' has no 'Operand {op} Modifiers' table"))),
                None => self.named_kind(f, n, bits, n_page, scan)?,
            },
        })
    }

    /// `operand N`, `modi N`, or a flag (`cABS`, `SAT`, `H1`, …).
    pub(super) fn named_kind(&self, f: &RawField, n: &str, bits: &[u8], n_page: usize, scan: &mut FieldScan) -> Result<FieldKind, PageError> {
        if let Some(num) = n.strip_prefix("operand ") {
            let page_operand: usize = num.parse().map_err(|_| self.err(f.line, format!("expected 'operand N', found '{n}'")))?;
            if page_operand >= n_page {
                let m = format!("'{n}' but the form '{}' has page operands 0..{}", self.head.form, n_page.saturating_sub(1));
                return Err(self.err(f.line, m));
            }
            return Ok(FieldKind::Operand { page_operand });
        }
        if let Some(num) = n.strip_prefix("modi ") {
            let group: u32 = num.parse().map_err(|_| self.err(f.line, format!("expected 'modi N', found '{n}'")))?;
            if !self.tables.iter().any(|t| t.id == TableId::Group { group }) {
                return Err(self.err(f.line, format!("'{n}' has no 'Modifier Group {group}' table")));
            }
            return Ok(FieldKind::Group { group });
        }
        if !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(self.err(f.line, format!("unknown layout cell '{n}' at bit {}", bits[0])));
        }
        let role = match n {
            "cABS" => FlagRole::Abs,
            "cNEG" => FlagRole::Neg,
            "cNOT" => FlagRole::Not,
            s if is_selector(s) => FlagRole::Selector,
            _ => FlagRole::Modifier,
        };
        match scan.name_counts.iter_mut().find(|(x, _, _)| x == n) {
            Some(e) => e.1 += 1,
            None => scan.name_counts.push((n.to_string(), 1, f.line)),
        }
        Ok(FieldKind::Flag { name: n.to_string(), role, page_operand: None })
    }

    /// Each table appears once, names an operand of the form, and is used by exactly the
    /// field of its width.
    pub(super) fn check_tables(&self, fields: &[Field], n_page: usize) -> Result<(), PageError> {
        for (i, t) in self.tables.iter().enumerate() {
            if self.tables[..i].iter().any(|u| u.id == t.id) {
                return Err(self.err(t.line, format!("table '{}' appears twice", t.title)));
            }
            if let TableId::Operand { page_operand } = t.id {
                if page_operand >= n_page {
                    return Err(self.err(t.line, format!("table '{}' names an operand the form '{}' does not have", t.title, self.head.form)));
                }
            }
            let users: Vec<&Field> = fields
                .iter()
                .filter(|f| match (&f.kind, &t.id) {
                    (FieldKind::Group { group }, TableId::Group { group: g }) => group == g,
                    (FieldKind::OperandModifier { page_operand }, TableId::Operand { page_operand: o }) => page_operand == o,
                    _ => false,
                })
                .collect();
            match users.as_slice() {
                [] => return Err(self.err(t.line, format!("table '{}' is used by no layout field", t.title))),
                [f] if f.width() != t.width => {
                    let m = format!("table '{}' has {}-bit rows but its field spans {} bits", t.title, t.width, f.width());
                    return Err(self.err(t.line, m));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Every page operand has an `operand N` field, or is derived from one that has.
    pub(super) fn check_operand_fields(&self, fields: &[Field], page_ops: &[Vec<usize>]) -> Result<(), PageError> {
        self.check_derived(fields, page_ops)?;
        for (i, ops) in page_ops.iter().enumerate() {
            for &po in ops.iter().filter(|po| !self.head.derived.iter().any(|d| d.page_operand == **po)) {
                // A name's bits are its table's (an operand-modifier field), or it has none
                // and prints the distilled line's name.
                let named = self.head.kinds[i].is_named();
                if !named && !self.constant_zero(i, ops) && !fields.iter().any(|f| f.kind == FieldKind::Operand { page_operand: po }) {
                    let m = format!("form operand {i} ('{}') has no 'operand {po}' field in the layout", self.head.kinds[i].form_token());
                    return Err(self.err(self.head.line, m));
                }
            }
        }
        Ok(())
    }

    /// Whether form operand `i` (page operands `ops`) may have no field: an immediate
    /// nvdisasm prints as `0x0` whatever the word (SM100's and SM120's TXQ with a uniform
    /// register: `TXQ RZ, R6, R6, TEX_HEADER_DIMENSION, UR4, 0x0, 0x1`), or a register it
    /// prints as the zero register (SM100's and SM120's UMEMSETS, what `st.bulk` compiles
    /// to: `UMEMSETS.64 [UR6], URZ, UR7`), as its distilled line shows it. Without bits an
    /// immediate prints 0 and a register its zero register (see
    /// [`OperandSpec::value_fields`]).
    fn constant_zero(&self, i: usize, ops: &[usize]) -> bool {
        let zero = match self.head.kinds[i] {
            OperandKind::Imm(_) => sass::Body::Imm { value: 0 },
            OperandKind::Reg => sass::Body::Reg { n: sass::RZ },
            OperandKind::UReg => sass::Body::UReg { n: sass::URZ },
            _ => return false,
        };
        let plain_zero = |o: &sass::Operand| o.body == zero && !o.neg && !o.abs && !o.not && o.suffixes.is_empty();
        ops.len() == 1 && self.head.dinst.operands.get(i).is_some_and(plain_zero)
    }

    /// A derived page operand is a register (of a register, uniform register or memory
    /// operand) without a field of its own; its source one with a field, not derived itself.
    pub(super) fn check_derived(&self, fields: &[Field], page_ops: &[Vec<usize>]) -> Result<(), PageError> {
        let has_field = |po: usize| fields.iter().any(|f| f.kind == FieldKind::Operand { page_operand: po });
        let register = |po: usize| {
            let Some(i) = page_ops.iter().position(|ops| ops.contains(&po)) else { return false };
            match self.head.kinds[i] {
                OperandKind::Reg | OperandKind::UReg => true,
                OperandKind::Mem(m) => {
                    let slot = page_ops[i].iter().position(|&x| x == po).unwrap_or(0);
                    let role = m.slot_roles()[slot];
                    role == MemSlot::Reg || role == MemSlot::UReg || role == MemSlot::Space && m.space == MemSpaceKind::Desc
                }
                _ => false,
            }
        };
        for d in &self.head.derived {
            let why = if !register(d.page_operand) || !register(d.source) {
                "both must be registers (R, UR, or one inside a memory operand)"
            } else if has_field(d.page_operand) {
                "the derived operand has a field of its own"
            } else if !has_field(d.source) || self.head.derived.iter().any(|e| e.page_operand == d.source) {
                "the source has no field of its own"
            } else {
                continue;
            };
            return Err(self.err(self.head.line, format!("derived '{}': {why}", d.token())));
        }
        Ok(())
    }

    /// Fields do not overlap each other or fixed bits, and together cover all 128 bits.
    pub(super) fn check_coverage(&self, fields: &[Field]) -> Result<(), PageError> {
        let mut seen = self.fixed_mask;
        for f in fields {
            let m = f.mask();
            if !seen.intersect(m).is_empty() {
                return Err(self.err(self.head.line, format!("field '{}' overlaps other bits", f.name)));
            }
            seen = seen.union(m);
        }
        if seen != BitSet::ALL {
            return Err(self.err(self.head.line, "layout does not cover all 128 bits"));
        }
        Ok(())
    }

    /// Sets the operand of every `cABS`/`cNEG`/selector flag by the rules of [`FlagOwners`],
    /// in bit order, warning about each assumption.
    pub(super) fn assign_flag_operands(&self, p: &mut Lines, fields: &mut [Field], page_ops: &[Vec<usize>]) {
        let mut order: Vec<usize> = (0..fields.len()).collect();
        order.sort_by_key(|&i| fields[i].bits[0]);
        let mut owners = FlagOwners::new(page_ops, &self.head.kinds);
        for i in order {
            let FieldKind::Flag { name, role, .. } = fields[i].kind.clone() else { continue };
            if role == FlagRole::Modifier {
                continue;
            }
            let bit = fields[i].bits[0];
            let (op, how) = owners.owner(fields, &name, role, bit);
            let key = &self.head.key;
            if op.is_none() {
                p.warn(self.head.line, rules::FLAG_OPERAND, format!("{key}: '{name}' at bit {bit} has no source operand to apply to; it is not printed"));
            }
            if let FieldKind::Flag { page_operand, .. } = &mut fields[i].kind {
                *page_operand = op;
            }
            if let Some(o) = op {
                p.warn(self.head.line, rules::FLAG_OPERAND, format!("{key}: '{name}' at bit {bit} applies to operand {o} ({how})"));
            }
        }
    }

    /// Which operands print their suffixes after the `|…|` bars: those the page's
    /// `suffixes after bars:` line names (each must have a `cABS`). A page without the
    /// line (the committed pages before discovery learned it, hand-written seeds) keeps
    /// the rule the printer used to key on the mnemonic: the fp16x2 ALU instructions
    /// (`HADD2`, `HFMA2`, `HMNMX2`, … on SM90 and SM100) print a general register's
    /// suffixes after the bars (`-|R0|.H0_H0`), everything else inside.
    pub(super) fn suffix_placement(&self, operands: &mut [OperandSpec]) -> Result<(), PageError> {
        let Some((line, after)) = &self.head.after_bars else {
            let h2 = self.head.mnemonic.starts_with('H') && self.head.mnemonic.ends_with('2');
            for o in operands.iter_mut() {
                o.suffixes_after_bars = h2 && o.kind == OperandKind::Reg;
            }
            return Ok(());
        };
        for &po in after {
            match operands.iter_mut().find(|o| o.page_operands.first() == Some(&po)) {
                Some(o) if o.abs_field.is_some() => o.suffixes_after_bars = true,
                Some(_) => return Err(self.err(*line, format!("suffixes after bars: operand {po} has no cABS flag"))),
                None => return Err(self.err(*line, format!("suffixes after bars: no operand {po} (the first page operand of a form operand)"))),
            }
        }
        Ok(())
    }

    /// Marks the value field of each operand of the `inverted:` line (a register or
    /// predicate of the form: `check_inverted`); one without a field is an error.
    pub(super) fn mark_inverted(&self, operands: &[OperandSpec], fields: &mut [Field]) -> Result<(), PageError> {
        for x in self.head.inverted.iter().flat_map(|(_, xs)| xs) {
            match operands.iter().find(|o| o.page_operands == [x.page_operand]).map(|o| o.value_fields.as_slice()) {
                Some([Some(f)]) => fields[*f].inverted = true,
                _ => return Err(self.err(self.head.line, format!("inverted: operand {} has no field of its own", x.page_operand))),
            }
        }
        let Some((line, illegal)) = &self.head.illegal_all_ones else { return Ok(()) };
        for &po in illegal {
            let field = operands.iter().find_map(|o| o.page_operands.iter().position(|&x| x == po).map(|i| o.value_fields[i]));
            match field.flatten() {
                Some(f) if operands.iter().all(|o| o.derived.is_empty() || !o.value_fields.contains(&Some(f))) => fields[f].illegal_at_all_ones = true,
                _ => return Err(self.err(*line, format!("illegal at all ones: operand {po} has no field of its own"))),
            }
        }
        Ok(())
    }

    /// The `ignored bits:` line's bits, each a fixed bit of the layout.
    pub(super) fn ignored_bits(&self) -> Result<BitSet, PageError> {
        let Some((line, bits)) = self.head.ignored else { return Ok(BitSet::EMPTY) };
        match bits.minus(self.fixed_mask).iter().next() {
            Some(b) => Err(self.err(line, format!("ignored bits: bit {b} is not a fixed bit of the layout"))),
            None => Ok(bits),
        }
    }

    /// Interprets and checks the draft: the variant, or the first error.
    pub(super) fn build(mut self, p: &mut Lines) -> Result<Variant, PageError> {
        let page_ops = self.page_ops();
        let n_page = page_ops.iter().map(Vec::len).sum();
        let mut fields = self.fields(p, n_page)?;
        self.check_tables(&fields, n_page)?;
        self.check_operand_fields(&fields, &page_ops)?;
        self.assign_flag_operands(p, &mut fields, &page_ops);
        let mut operands = build_operands(&fields, &page_ops, &self.head.kinds, &self.head.dinst, &self.head.derived);
        for x in &self.head.left_out {
            // `put_back_left_out` checked that it is a form operand's one page operand.
            operands.iter_mut().filter(|o| o.page_operands == [x.page_operand]).for_each(|o| o.zero_omitted = true);
        }
        self.mark_inverted(&operands, &mut fields)?;
        fixed_suffixes(&mut operands, &self.head.dinst);
        self.suffix_placement(&mut operands)?;
        self.check_coverage(&fields)?;
        let ignored = self.ignored_bits()?;
        let mut v = Variant {
            key: self.head.key.clone(),
            arch: self.arch,
            heading: std::mem::take(&mut self.head.heading),
            mnemonic: std::mem::take(&mut self.head.mnemonic),
            form: std::mem::take(&mut self.head.form),
            operands,
            distilled: std::mem::take(&mut self.head.distilled),
            terminator: self.head.dinst.terminator,
            fixed_mask: self.fixed_mask,
            fixed_value: self.fixed_value,
            inferred: self.inferred,
            ignored,
            fields,
            tables: std::mem::take(&mut self.tables),
            modifiers: vec![],
            float_by: std::mem::take(&mut self.head.float_by),
            file: self.file.clone(),
            line: self.head.line,
            distilled_line: self.head.distilled_line,
            layout_lines: [0; 4],
            conventions: None,
        };
        v.modifiers = modifier_order(p, &v, &self.head.heading_mods, &self.head.dinst).map_err(|m| self.err(self.head.line, m))?;
        check_nameless(&v, &self.head.dinst).map_err(|m| self.err(self.head.distilled_line, m))?;
        if let Some((m, _)) = v.float_by.iter().find(|(m, _)| !printable_modifiers(&v).contains(m)) {
            return Err(self.err(self.head.line, format!("floats: '{m}' is not a modifier this variant prints")));
        }
        Ok(v)
    }
}

/// A name operand the distilled line lacks (put back nameless by the head's reading) must
/// print nothing at zero: its table's row 0 is `(default)`.
fn check_nameless(v: &Variant, dinst: &sass::Instruction) -> Result<(), String> {
    for (k, (o, d)) in v.operands.iter().zip(&dinst.operands).enumerate() {
        let nameless = o.kind == OperandKind::Name && matches!(&d.body, sass::Body::Other { text } if text.is_empty());
        let prints_nothing =
            o.suffix_fields.first().and_then(|&f| v.field_table(f)).is_some_and(|t| t.rows.iter().any(|r| r.value == 0 && r.kind == RowKind::Default));
        if nameless && !prints_nothing {
            return Err(format!("{}: the distilled line lacks operand {k}, a name whose table has no (default) row at 0", v.key));
        }
    }
    Ok(())
}
