//! A variant as the assembler reads text against it: its fields, modifier slots and
//! operands kept small and together.

use super::*;
use std::sync::Arc;

/// A variant as the assembler reads text against it.
pub(super) struct Form<'s> {
    pub(super) v: &'s Variant,
    /// The variant's number of fields and its `URZ` index, kept here with what else a text
    /// reads, so that filling one does not read the variant (mostly not in cache).
    pub(super) n_fields: usize,
    pub(super) urz: u64,
    /// The predicate fields with their largest values.
    pub(super) pred_fields: SmallVec<[(usize, u64); 1]>,
    pub(super) uniform_guard: bool,
    /// Whether nvdisasm never prints its immediates negative (its stored conventions), and
    /// whether a modifier may choose its float format ([`Variant::float_by`]): kept here,
    /// as reading them from the variant is a cache miss.
    pub(super) unsigned_imm: bool,
    pub(super) float_by: bool,
    /// How its filled fields make a word (the codec's runs, kept here).
    pub(super) layout: Layout,
    /// The instruction's modifiers, in page order.
    pub(super) modifiers: Arc<Slots>,
    pub(super) operands: Box<[FormOperand]>,
    /// Every operand's value slots and fixed suffix ids (see [`Form::value`] and
    /// [`Form::fixed`]): kept out of the operands, so that those stay small.
    value_slots: Box<[ValueSlot]>,
    fixed_ids: Box<[u32]>,
    /// The operands [`with_omitted`] may put back, with what they print: without and
    /// with `general` (see [`omitted_candidates`]); worked out once, as they read the page.
    pub(super) omitted: [Box<[(usize, Body)]>; 2],
}

/// Where an operand's value slots or fixed suffix ids are in its form's.
#[derive(Clone, Copy)]
pub(super) struct Span {
    start: u32,
    len: u32,
}

/// An operand as the assembler reads text against it: what filling it reads of its
/// [`OperandSpec`] and fields, kept together and small (64 bytes, asserted below: a text's
/// candidate forms, mostly not in cache, are read operand by operand; the spec's operands
/// lie in several allocations).
pub(super) struct FormOperand {
    pub(super) kind: OperandKind,
    /// [`OperandSpec::value_fields`], with their widths and [`OperandSpec::derived`] (see
    /// [`Form::value`]).
    value: Span,
    pub(super) abs_field: Option<Field>,
    pub(super) neg_field: Option<Field>,
    pub(super) not_field: Option<Field>,
    pub(super) suffixes_after_bars: bool,
    /// A float operand's format when no modifier names one (see [`OperandFill::float_format`]).
    pub(super) float: FloatFormat,
    /// Ids of the suffixes the form prints before those its fields read (see
    /// [`fixed_suffix`] and [`Form::fixed`]).
    fixed: Span,
    /// Its suffixes: operand-modifier tables in order, then selector flags; `None` for
    /// none (most operands: the slots are kept out of line).
    suffixes: Option<Arc<Slots>>,
}

const _: () = assert!(std::mem::size_of::<FormOperand>() <= 64);

/// A value slot of an operand: its field (none: no bits), the field's width and largest
/// value, and for a derived register what it adds to its source.
#[derive(Clone, Copy)]
pub(super) struct ValueSlot {
    pub(super) max: u64,
    pub(super) at: Option<Field>,
    pub(super) width: u16,
    pub(super) plus: Option<u8>,
}

impl ValueSlot {
    pub(super) fn field(&self) -> Option<usize> {
        self.at.map(usize::from)
    }

    pub(super) fn width(&self) -> u32 {
        self.width.into()
    }
}

/// A field's index, small: a variant has at most [`crate::codec::bits::MAX_FIELDS`] fields (and a
/// field at most 128 bits, which a `u16` width holds too).
pub(super) type Field = u16;

impl FormOperand {
    /// Operand `o` of `v`, its value slots and fixed suffix ids pushed to `pools`'.
    pub(super) fn new<'a, 's>(
        v: &'s Variant,
        o: &'s OperandSpec,
        vocabulary: &mut Vocabulary<'a>,
        pool: &mut SlotPool,
        pools: &mut (Vec<ValueSlot>, Vec<u32>),
    ) -> FormOperand
    where
        's: 'a,
    {
        let mut slots: Vec<Slot> = o.suffix_fields.iter().map(|&f| Slot::table(v, f, false, vocabulary)).collect();
        slots.extend(o.selector_fields.iter().map(|&f| Slot::flag(v, f, vocabulary)));
        let slot = |(k, f): (usize, &Option<usize>)| {
            let (width, max) = f.map_or((0, 0), |f| (v.fields[f].width(), v.fields[f].max()));
            ValueSlot { max, at: f.map(|f| f as Field), width: width as u16, plus: o.derived_plus(k) }
        };
        let fixed: Vec<&str> = match o.kind {
            OperandKind::Mem(MemShape { reg_suffix: Some(fixed), .. }) => vec![fixed],
            _ => o.fixed_suffixes.iter().map(String::as_str).collect(),
        };
        let value = Span::push(&mut pools.0, o.value_fields.iter().enumerate().map(slot));
        let fixed = Span::push(&mut pools.1, fixed.into_iter().map(|t| vocabulary.intern(t)));
        FormOperand {
            kind: o.kind,
            value,
            abs_field: o.abs_field.map(|f| f as Field),
            neg_field: o.neg_field.map(|f| f as Field),
            not_field: o.not_field.map(|f| f as Field),
            suffixes_after_bars: o.suffixes_after_bars,
            float: v.float_format(o, &[]),
            fixed,
            suffixes: (!slots.is_empty()).then(|| Slots::new(slots, &[], pool)),
        }
    }

    /// Whether it has fields for `|…|`, `-` and `~`/`!` (see [`operand_may_fit`]).
    pub(super) fn flags(&self) -> [bool; 3] {
        [self.abs_field.is_some(), self.neg_field.is_some(), self.not_field.is_some()]
    }

    /// Whether it has suffix slots.
    pub(super) fn has_suffix_slots(&self) -> bool {
        self.suffixes.is_some()
    }

    /// The ids of the tokens its suffix slots read (see [`Slots::vocabulary`]), if it has any.
    pub(super) fn suffix_vocabulary(&self) -> Option<&[u32]> {
        self.suffixes.as_deref().map(Slots::vocabulary)
    }

    /// [`Slots::may_read`] of its suffix slots (none read no tokens).
    pub(super) fn suffixes_may_read(&self, ids: &[u32]) -> bool {
        self.suffixes.as_ref().map_or(ids.is_empty(), |s| s.may_read(ids))
    }

    /// [`Slots::read`] of its suffix slots (none read no tokens).
    pub(super) fn read_suffixes(&self, v: &Variant, toks: Toks, values: &mut Values) -> Result<(), TokensMismatch> {
        match &self.suffixes {
            Some(s) => s.read(v, toks, values),
            None if toks.ids.is_empty() => Ok(()),
            None => Err(TokensMismatch { found: error::owned(toks.text), expected: vec![] }),
        }
    }
}

impl Span {
    /// Pushes `items` to `pool`: where they are.
    fn push<T>(pool: &mut Vec<T>, items: impl IntoIterator<Item = T>) -> Span {
        let start = pool.len();
        pool.extend(items);
        let at = |n: usize| u32::try_from(n).expect("a page of at most 4 MiB has fewer than 2^32 operand fields and suffixes");
        Span { start: at(start), len: at(pool.len() - start) }
    }

    fn of<T>(self, pool: &[T]) -> &[T] {
        &pool[self.start as usize..][..self.len as usize]
    }
}

/// The page's modifier slots in the order the form's stored conventions print them; the
/// page's order where none is stored or a slot has no place in it.
pub(super) fn printed_order(v: &Variant) -> Vec<usize> {
    let page: Vec<usize> = (0..v.modifiers.len()).collect();
    let Some(c) = v.conventions.as_deref() else { return page };
    let ranks: Option<Vec<usize>> = v.modifiers.iter().map(|m| c.modifier_order.iter().position(|id| crate::codec::print::is_slot(v, m, id))).collect();
    match ranks {
        Some(ranks) => {
            let mut order = page;
            order.sort_by_key(|&k| ranks[k]);
            order
        }
        None => page,
    }
}

impl<'s> Form<'s> {
    /// `slots`: the slot lists of the forms built before, which this one shares where alike.
    pub(super) fn new<'a>(v: &'s Variant, vocabulary: &mut Vocabulary<'a>, slots: &mut SlotPool) -> Form<'s>
    where
        's: 'a,
    {
        let modifiers = v
            .modifiers
            .iter()
            .map(|m| match m {
                ModSlot::Fixed { text } => Slot::Fixed { id: vocabulary.intern(text) },
                ModSlot::Group { field, hidden_zero } => Slot::table(v, *field, *hidden_zero, vocabulary),
                ModSlot::Flag { field } => Slot::flag(v, *field, vocabulary),
            })
            .collect();
        let mut pools = (vec![], vec![]);
        let operands = v.operands.iter().map(|o| FormOperand::new(v, o, vocabulary, slots, &mut pools)).collect();
        Form {
            v,
            n_fields: v.fields.len(),
            urz: crate::codec::conventions::uniform_zero(v.arch) as u64,
            pred_fields: (0..v.fields.len()).filter(|&i| v.fields[i].kind == FieldKind::Pred).map(|i| (i, v.fields[i].max())).collect(),
            uniform_guard: guard_is_uniform(v),
            unsigned_imm: v.conventions.as_deref().is_some_and(|c| !c.signed_imm && c.signed_imm_by.is_empty()),
            float_by: !v.float_by.is_empty(),
            layout: Layout::new(v),
            modifiers: Slots::new(modifiers, &printed_order(v), slots),
            operands,
            value_slots: pools.0.into(),
            fixed_ids: pools.1.into(),
            omitted: [omitted_candidates(v, false), omitted_candidates(v, true)],
        }
    }

    /// A load from each of its parts (its own lines, its operands, each slot list's
    /// arrays), for the caller to pass to [`std::hint::black_box`]: a text's candidate
    /// forms are mostly not in cache, and their loads, issued together here, wait for
    /// memory at once rather than one after another as reading the form reaches each part.
    pub(super) fn warm(&self) -> u64 {
        let ops = self.operands.iter().fold(0, |x, o| x ^ u64::from(o.value.start) ^ o.suffixes.as_ref().map_or(0, |s| s.touch()));
        let parts = self.value_slots.first().map_or(0, |s| s.max) ^ self.fixed_ids.first().map_or(0, |&i| u64::from(i));
        let own = self.n_fields as u64 ^ self.layout.control_bits as u64 ^ self.omitted[0].len() as u64 ^ self.omitted[1].len() as u64;
        ops ^ parts ^ own ^ self.modifiers.touch()
    }

    /// The bytes of its parts: its record, operands, value slots and fixed ids, modifier
    /// slots, operand suffix slots, left-out operands (see `forms_stay_compact`); a slot
    /// list shared by several forms counts as its share.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> [usize; 6] {
        use std::mem::size_of;
        let share = |s: &Arc<Slots>| s.bytes() / Arc::strong_count(s);
        let suffixes = self.operands.iter().filter_map(|o| o.suffixes.as_ref()).map(share).sum();
        [
            size_of::<Form>(),
            self.operands.len() * size_of::<FormOperand>(),
            self.value_slots.len() * size_of::<ValueSlot>() + self.fixed_ids.len() * size_of::<u32>(),
            share(&self.modifiers),
            suffixes,
            self.omitted.iter().map(|o| o.len() * size_of::<(usize, Body)>()).sum(),
        ]
    }

    /// Operand `op`'s value slots (`op` one of [`Form::operands`]).
    pub(super) fn value(&self, op: &FormOperand) -> &[ValueSlot] {
        op.value.of(&self.value_slots)
    }

    /// The ids of operand `op`'s fixed suffixes (see [`FormOperand::fixed`]).
    pub(super) fn fixed(&self, op: &FormOperand) -> &[u32] {
        op.fixed.of(&self.fixed_ids)
    }

    /// How many of `toks` are operand `k`'s fixed suffixes, as [`fixed_suffix`] (the
    /// spec's operand, read only when the ids do not settle it: the page is mostly not in
    /// cache) counts them, with its error.
    pub(super) fn fixed_suffix(&self, k: usize, toks: Toks) -> Result<usize, OperandFault> {
        let fixed = self.fixed(&self.operands[k]);
        if toks.starts_with(fixed) {
            return Ok(fixed.len());
        }
        fixed_suffix(&self.v.operands[k], toks.text)
    }

    /// False only where [`Form::fill`] fails on the modifier and suffix tokens (`tokens`:
    /// their [`Vocabulary::ids`]); the operands' shape is [`shape_fits`]' to check.
    pub(super) fn tokens_fit(&self, inst: &InstRef, tokens: &[u32]) -> bool {
        let (mods, mut rest) = tokens.split_at(inst.n_modifiers);
        self.modifiers.may_read(mods)
            && inst.operands.iter().zip(&self.operands).all(|(o, op)| {
                let (ids, after) = rest.split_at(o.suffixes.len());
                rest = after;
                // A special register's suffix is part of its name (see `fill_special`).
                let fixed = self.fixed(op);
                op.kind.is_named() || Toks { text: inst.suffixes(o), ids }.starts_with(fixed) && op.suffixes_may_read(&ids[fixed.len()..])
            })
    }

    /// False only where [`Form::fill`] fails on a memory operand's shape (see [`mem_fit`]):
    /// a quick rejection, without the message.
    pub(super) fn mems_fit(&self, inst: &InstRef) -> bool {
        inst.operands.iter().zip(&self.operands).all(|(o, op)| match (op.kind, o.body.as_mem()) {
            (OperandKind::Mem(m), Some(parts)) => mem_fit(m, parts, self.urz).is_ok(),
            _ => true,
        })
    }

    /// Why `inst` (whose token ids are `tokens`) does not read as this variant, if it
    /// does not. A text with fewer operands than the form is told why its first reading
    /// with left-out operands put back that has the form's shape fails (`R300` out of
    /// range, say), rather than only that operands are missing: nvdisasm leaves out PT
    /// operands, so users leave them out too.
    pub(super) fn reason(&self, inst: &InstRef, tokens: &[u32]) -> Option<String> {
        let e = self.fill(inst, tokens).err()?;
        let key = &self.v.key;
        if inst.operands.len() < self.operands.len() {
            for read in [false, true].into_iter().flat_map(|general| with_omitted(self, inst, general)) {
                if let Err(why) = self.fill(&read, tokens) {
                    return Some(format!("{key}: read as '{}': {why}", read.to_instruction()));
                }
            }
        }
        Some(format!("{key}: {e}"))
    }

    /// Field values for `inst`, whose modifier and suffix token ids are `tokens`.
    pub(super) fn fill(&self, inst: &InstRef, tokens: &[u32]) -> Result<Values, FillError> {
        let mut values = Values::zero(self.n_fields);
        self.fill_into(inst, tokens, &mut values)?;
        Ok(values)
    }

    /// [`Form::fill`] into `values` (zero, of the variant's length), which are left
    /// partly set on failure: written in place, as moving 328-byte values costs.
    pub(super) fn fill_into(&self, inst: &InstRef, tokens: &[u32], values: &mut Values) -> Result<(), FillError> {
        let v = self.v;
        self.fill_pred(inst, values)?;
        if inst.operands.len() != self.operands.len() {
            return Err(FillError::OperandCount { found: inst.operands.len(), form: v.form.clone(), expected: v.operands.len() });
        }
        let (mods, mut rest) = tokens.split_at(inst.n_modifiers);
        for (k, (o, op)) in inst.operands.iter().zip(&self.operands).enumerate() {
            let (ids, after) = rest.split_at(o.suffixes.len());
            rest = after;
            if op.kind.is_named() {
                fill_special(v, k, o, &inst.tokens, &v.operands[k], values)?;
                continue;
            }
            let (value, modifiers) = (self.value(op), inst.modifiers());
            let fill = OperandFill { v, k, op, value, modifiers, urz: self.urz, unsigned_imm: self.unsigned_imm, float_by: self.float_by };
            fill.body(o, values)?;
            fill.flags(o, values)?;
            let toks = Toks { text: inst.suffixes(o), ids };
            let n = self.fixed_suffix(k, toks).map_err(|e| e.at(k))?;
            op.read_suffixes(v, toks.skip(n), values).map_err(|e| OperandFault::from(e).at(k))?;
        }
        self.modifiers.read(v, Toks { text: inst.modifiers(), ids: mods }, values)?;
        Ok(())
    }

    /// The guard predicate's field value (`@!P3` → 0b1011; none → PT), range-checked.
    pub(super) fn fill_pred(&self, inst: &InstRef, values: &mut Values) -> Result<(), FillError> {
        let v = self.v;
        let x = match &inst.pred {
            Some(p) if p.index > PT => return Err(FillError::NoPredicate(p.index)),
            Some(p) if p.uniform != self.uniform_guard => {
                return Err(FillError::GuardKind { expected: if p.uniform { "a plain" } else { "a uniform" }, found: p.to_string() })
            }
            Some(p) => p.index as u64 | if p.negated { 8 } else { 0 },
            None => PT as u64,
        };
        if self.pred_fields.is_empty() && x != PT as u64 {
            return Err(FillError::NoGuardField);
        }
        for &(i, max) in &self.pred_fields {
            if x > max {
                return Err(FillError::GuardTooWide { value: x, field: v.fields[i].name.clone(), width: v.fields[i].width() });
            }
            values.set(i, x);
        }
        Ok(())
    }
}

/// False only where [`Form::fill`] fails on the guard's kind (`uniform_guard`: the
/// variant's), the number of operands or an operand's kind or flags.
pub(super) fn shape_fits(v: &Variant, uniform_guard: bool, inst: &InstRef) -> bool {
    let ops = v.operands.iter().map(|o| (o.kind, [o.abs_field.is_some(), o.neg_field.is_some(), o.not_field.is_some()]));
    fits_shape(inst, uniform_guard, v.operands.len(), ops)
}

impl Form<'_> {
    /// [`shape_fits`] for this form, read from the form (not the page, mostly not in cache).
    pub(super) fn shape_fits(&self, inst: &InstRef) -> bool {
        let ops = self.operands.iter().map(|o| (o.kind, o.flags()));
        fits_shape(inst, self.uniform_guard, self.operands.len(), ops)
    }
}

/// [`shape_fits`] against `n` operands, each of a kind and with the `|…|`, `-` and `~`/`!`
/// fields `ops` gives.
fn fits_shape(inst: &InstRef, uniform_guard: bool, n: usize, mut ops: impl Iterator<Item = (OperandKind, [bool; 3])>) -> bool {
    inst.pred.as_ref().is_none_or(|p| p.uniform == uniform_guard)
        && inst.operands.len() == n
        && inst.operands.iter().zip(&mut ops).all(|(o, (kind, flags))| operand_may_fit(o, kind, flags))
}

/// False only where [`OperandFill`] fails on the operand's kind or flags: the form's
/// operand is of `kind`, with fields for `|…|`, `-` and `~`/`!` where `flags` says so.
pub(super) fn operand_may_fit(o: &OperandRef, kind: OperandKind, flags: [bool; 3]) -> bool {
    let [abs, neg, not] = flags;
    kind_fits(kind, &o.body) && (!o.abs || abs) && (!o.neg || neg) && (!o.not || not)
}

/// False only where [`OperandFill`] fails on the operand's kind: the form's operand is of
/// `kind`, the text's operand has `body`.
pub(super) fn kind_fits(kind: OperandKind, body: &Body) -> bool {
    matches!(
        (kind, body),
        (OperandKind::Reg, Body::Reg { .. })
            | (OperandKind::UReg, Body::UReg { .. })
            | (OperandKind::Imm(_), Body::Imm { .. })
            | (OperandKind::Float(_), Body::Float { .. })
            | (OperandKind::Const, Body::Const { .. })
            | (OperandKind::ConstX, Body::ConstX { .. })
            | (OperandKind::Pred, Body::Pred { .. })
            | (OperandKind::UPred, Body::UPred { .. })
            | (OperandKind::Target(_), Body::Imm { .. })
            | (OperandKind::Barrier, Body::Barrier { .. })
            | (OperandKind::Special | OperandKind::Name, Body::Other { .. })
    ) || matches!(kind, OperandKind::Mem(_)) && body.as_mem().is_some()
}
