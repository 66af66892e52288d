//! Operands from fields: which operand a flag decorates (the SM70+ ALU slots), the
//! operand specs built from the page's operand fields and distilled line.

use super::*;

/// Every modifier token the variant can print: fixed ones, flags' names, group rows' tokens.
pub(super) fn printable_modifiers(v: &Variant) -> Vec<String> {
    let mut out = vec![];
    for slot in &v.modifiers {
        match slot {
            ModSlot::Fixed { text } => out.push(text.clone()),
            ModSlot::Flag { field } => out.push(v.fields[*field].name.clone()),
            ModSlot::Group { field, .. } => {
                let rows = v.field_table(*field).map(|t| t.rows.as_slice()).unwrap_or_default();
                out.extend(rows.iter().flat_map(|r| r.name.split('.').map(str::to_string)));
            }
        }
    }
    out
}

/// The page operand of an operand-modifier field named `operand K modi`: how a page
/// writes one whose bits are not one span (HFMA2's `[60, 61, 86]`), each span so named and
/// read as one field; a plain `modi` span cannot continue elsewhere.
pub(super) fn split_modi_operand(name: &str) -> Option<usize> {
    name.strip_prefix("operand ")?.strip_suffix(" modi")?.parse().ok()
}

/// Operand selectors print after an operand (`R0.H1`), not after the mnemonic.
pub(super) fn is_selector(s: &str) -> bool {
    matches!(s, "H0" | "H1" | "B0" | "B1" | "B2" | "B3")
}

/// Which operand does each `cABS`/`cNEG`/`cNOT`/selector flag belong to? The page does not
/// say. Rules, in order (each assumption is a warning, and validation checks it):
/// 0. a `cNOT` directly above a `P`/`UP` operand's field negates that predicate;
/// 1. flags directly before a plain `modi` belong to that operand-modifier table's operand;
/// 2. the SM70+ ALU slots (as Mesa NAK encodes them): 72/73 → the operand whose value
///    starts in bits 24–31, 62/63 → in bits 32–61 (a register, uniform register or
///    constant in the second source slot, wherever the form prints it), 74/75 and (fp16
///    ops such as HFMA2, checked with nvdisasm) a `cABS`/`cNEG` at 83/84 → in 64–71;
/// 3. otherwise, the k-th occurrence of a name → the k-th source operand.
pub(super) struct FlagOwners<'a> {
    pub(super) page_ops: &'a [Vec<usize>],
    pub(super) kinds: &'a [OperandKind],
    /// The head page operand of each form operand that can take flags (not immediates).
    pub(super) sources: Vec<usize>,
    /// Occurrences so far of each flag name (rule 3).
    pub(super) counts: Vec<(String, usize)>,
}

impl<'a> FlagOwners<'a> {
    pub(super) fn new(page_ops: &'a [Vec<usize>], kinds: &'a [OperandKind]) -> Self {
        let sources: Vec<usize> = page_ops
            .iter()
            .zip(kinds)
            .skip(1)
            .filter(|(_, k)| !matches!(k, OperandKind::Imm(_) | OperandKind::Float(_) | OperandKind::Target(_)))
            .map(|(o, _)| o[0])
            .collect();
        FlagOwners { page_ops, kinds, sources, counts: vec![] }
    }

    /// The operand of flag `name` (of `role`) at `bit`, and the rule that chose it.
    pub(super) fn owner(&mut self, fields: &[Field], name: &str, role: FlagRole, bit: u8) -> (Option<usize>, &'static str) {
        if let Some(o) = self.predicate_below(fields, bit).filter(|_| role == FlagRole::Not) {
            (Some(o), "directly above that predicate")
        } else if let Some(o) = before_modi(fields, bit) {
            (Some(self.base(o)), "precedes that operand's modifier table")
        } else if let Some(o) = alu_slot(fields, bit, role).filter(|&o| self.sources.contains(&self.base(o))) {
            (Some(self.base(o)), "SM70+ ALU flag slot")
        } else {
            let c = self.occurrence(name);
            (self.sources.get(c - 1).copied(), "k-th occurrence → k-th source operand")
        }
    }

    /// Rule 0: the P/UP operand whose field ends right below `bit`.
    pub(super) fn predicate_below(&self, fields: &[Field], bit: u8) -> Option<usize> {
        let is_pred = |o: usize| self.page_ops.iter().zip(self.kinds).any(|(ops, k)| ops.contains(&o) && matches!(k, OperandKind::Pred | OperandKind::UPred));
        fields.iter().find_map(|f| match f.kind {
            FieldKind::Operand { page_operand } if f.bits.last().map(|&b| b + 1) == Some(bit) && is_pred(page_operand) => Some(page_operand),
            _ => None,
        })
    }

    /// The head page operand of the form operand that page operand `o` belongs to.
    pub(super) fn base(&self, o: usize) -> usize {
        self.page_ops.iter().find(|ops| ops.contains(&o)).map(|ops| ops[0]).unwrap_or(o)
    }

    /// Counts one more occurrence of `name`: 1 for the first.
    pub(super) fn occurrence(&mut self, name: &str) -> usize {
        match self.counts.iter_mut().find(|(n, _)| n == name) {
            Some(e) => {
                e.1 += 1;
                e.1
            }
            None => {
                self.counts.push((name.to_string(), 1));
                1
            }
        }
    }
}

/// Rule 1: scan forward from `bit` over adjacent abs/neg flags to a plain `modi`; its
/// table's page operand.
pub(super) fn before_modi(fields: &[Field], bit: u8) -> Option<usize> {
    let mut b = bit + 1;
    while let Some(f) = fields.iter().find(|f| f.bits.first() == Some(&b)) {
        match &f.kind {
            FieldKind::Flag { role: FlagRole::Abs | FlagRole::Neg | FlagRole::Not, .. } => b = *f.bits.last().unwrap() + 1,
            FieldKind::OperandModifier { page_operand } => return Some(*page_operand),
            _ => return None,
        }
    }
    None
}

/// Rule 2: the page operand in the SM70+ ALU source slot that a flag at `bit` belongs to.
pub(super) fn alu_slot(fields: &[Field], bit: u8, role: FlagRole) -> Option<usize> {
    match bit {
        72 | 73 => start_in(fields, 24..32),
        62 | 63 => start_in(fields, 32..62),
        74 | 75 => start_in(fields, 64..72),
        // The fp16 ALU ops (HFMA2) keep their third slot's `|…|`/`-` here (74/75 select
        // halves); an `H1` selector here is FHFMA's (SM100) and follows rule 3.
        83 | 84 if matches!(role, FlagRole::Abs | FlagRole::Neg) => start_in(fields, 64..72),
        _ => None,
    }
}

/// The operand whose value starts inside a source slot's bits (a register at 32, or a
/// constant's bank and offset anywhere in 32..62).
pub(super) fn start_in(fields: &[Field], slot: std::ops::Range<u8>) -> Option<usize> {
    fields.iter().find_map(|f| match f.kind {
        FieldKind::Operand { page_operand } if f.bits.first().is_some_and(|b| slot.contains(b)) => Some(page_operand),
        _ => None,
    })
}

pub(super) fn build_operands(
    fields: &[Field],
    page_ops: &[Vec<usize>],
    kinds: &[OperandKind],
    distilled: &sass::Instruction,
    derived: &[Derived],
) -> Vec<OperandSpec> {
    page_ops
        .iter()
        .zip(kinds)
        .enumerate()
        .map(|(i, (ops, &kind))| {
            // A derived page operand reads its source's field.
            let of = |po: usize| derived.iter().find(|d| d.page_operand == po);
            let source = |po: usize| of(po).map(|d| d.source).unwrap_or(po);
            let value_fields = ops.iter().map(|&po| fields.iter().position(|f| f.kind == FieldKind::Operand { page_operand: source(po) })).collect();
            let pluses: Vec<Option<u8>> = ops.iter().map(|&po| of(po).map(|d| d.plus)).collect();
            let derived = if pluses.iter().any(Option::is_some) { pluses } else { vec![] };
            let head = ops[0];
            let flag = |want: FlagRole| {
                fields.iter().position(|f| matches!(&f.kind, FieldKind::Flag { role, page_operand: Some(o), .. } if *role == want && *o == head))
            };
            let suffix_fields: Vec<usize> = fields
                .iter()
                .enumerate()
                .filter(|(_, f)| matches!(f.kind, FieldKind::OperandModifier { page_operand } if ops.contains(&page_operand)))
                .map(|(i, _)| i)
                .collect();
            // A name without a table is the distilled line's (the form has as many operands).
            let fixed_name = (kind.is_named() && suffix_fields.is_empty())
                .then(|| distilled.operands.get(i).map(|o| sass::Operand { reuse: false, ..o.clone() }.to_string()))
                .flatten();
            let selector_fields = fields
                .iter()
                .enumerate()
                .filter(|(_, f)| matches!(&f.kind, FieldKind::Flag { role: FlagRole::Selector, page_operand: Some(o), .. } if *o == head))
                .map(|(i, _)| i)
                .collect();
            OperandSpec {
                kind,
                page_operands: ops.clone(),
                value_fields,
                derived,
                suffix_fields,
                abs_field: flag(FlagRole::Abs),
                neg_field: flag(FlagRole::Neg),
                not_field: flag(FlagRole::Not),
                selector_fields,
                fixed_suffixes: vec![],
                fixed_name,
                joined: distilled.operands.get(i).is_some_and(|o| o.joined),
                suffixes_after_bars: false,
                zero_omitted: false,
            }
        })
        .collect()
}

/// Suffixes the distilled line shows on an operand that has no suffix or selector field
/// (`PLOP3.LUT P0, P0, P0, R0.SIGN, …`) print whatever the bits: the operand's fixed
/// suffixes. Memory operands (their register suffix is in the form) and special registers
/// (the name is a table row) are left alone, as is a distilled line of another length.
pub(super) fn fixed_suffixes(operands: &mut [OperandSpec], dinst: &sass::Instruction) {
    if dinst.operands.len() != operands.len() {
        return;
    }
    for (o, d) in operands.iter_mut().zip(&dinst.operands) {
        let plain = !matches!(o.kind, OperandKind::Mem(_) | OperandKind::Special);
        if plain && o.suffix_fields.is_empty() && o.selector_fields.is_empty() {
            o.fixed_suffixes = d.suffixes.clone();
        }
    }
}
