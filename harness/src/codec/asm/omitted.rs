//! Readings of a text with the operands nvdisasm leaves out put back.

use super::*;

/// Highest predicate index (`PT`); the predicate field holds it and a negation bit above.
pub(super) const PT: u8 = 7;

/// The readings of `inst` as `form`'s variant, when it has fewer operands than the form,
/// with the missing ones taken for operands that nvdisasm leaves out at all ones
/// (`IADD3 R0, R1, R2, RZ` for two PT; `BAR.SYNC 0x0` for an RZ): `P`/`UP` operands and
/// those the page says are left out at zero (`BRX R6` for `BRX PT, R6 0x0`), or with
/// `general` also `R`, `UR` and `I` operands of one field (those the form's stored
/// conventions leave out, where it has them); one reading per choice of which (two
/// encodings may print alike), and only those of the form's shape ([`Form::shape_fits`]:
/// the others are not built). Readings that leave out later operands come first (for
/// `IADD3 R0, P1, R2, R3, RZ ;`, P1 as the first carry and PT the second before the other
/// way round): the first word of an ambiguous text is the one ptxas writes (see
/// [`crate::listing::assemble_one`]).
pub(super) fn with_omitted<'t, 'a>(form: &'a Form, inst: &'a InstRef<'t>, general: bool) -> impl Iterator<Item = InstRef<'t>> + 'a {
    let n = form.operands.len();
    let missing = n.saturating_sub(inst.operands.len());
    let cands = &form.omitted[usize::from(general)];
    let guard_ok = inst.pred.as_ref().is_none_or(|p| p.uniform == form.uniform_guard);
    // The body put back at operand `k` by `mask` (bit i: `cands[i]`), if one is.
    let put = move |mask: u32, k: usize| cands.iter().position(|(p, _)| *p == k).filter(|i| mask >> i & 1 == 1).map(|i| &cands[i].1);
    let fits = move |&mask: &u32| {
        let mut given = inst.operands.iter();
        form.operands.iter().enumerate().all(|(k, op)| match put(mask, k) {
            Some(body) => kind_fits(op.kind, body),
            None => given.next().is_some_and(|o| operand_may_fit(o, op.kind, op.flags())),
        })
    };
    let build = move |mask: u32| {
        let mut given = inst.operands.iter();
        let mut operands = SmallVec::with_capacity(n);
        for k in 0..n {
            match put(mask, k) {
                Some(body) => operands.push(OperandRef::new(body.clone())),
                None => operands.extend(given.next().cloned()),
            }
        }
        InstRef { operands, ..inst.clone() }
    };
    // Masks from the highest: a mask with later candidates left out before one with
    // earlier ones (they have the same number left out). None when nothing is missing or
    // the guard is of the other kind.
    let end = if missing > 0 && guard_ok { 1u32 << cands.len().min(8) } else { 0 };
    (0..end).rev().filter(move |m| m.count_ones() as usize == missing).filter(fits).map(build)
}

/// The operands of `v` that [`with_omitted`] may put back (with `general`, also those
/// left out at all ones that the stored conventions name; without them, any that may
/// be), with what each prints then, in operand order.
pub(super) fn omitted_candidates(v: &Variant, general: bool) -> Box<[(usize, Body)]> {
    let stored = |k: usize| v.conventions.as_deref().is_none_or(|c| c.omitted.contains(&k));
    (0..v.operands.len()).filter_map(|k| omitted_body(v, k, false).or_else(|| omitted_body(v, k, general).filter(|_| stored(k))).map(|b| (k, b))).collect()
}

/// What operand `k` of `v` prints at the value it is left out at, if it may be left out
/// (see [`with_omitted`]): zero for one the page says so of, else all ones.
pub(super) fn omitted_body(v: &Variant, k: usize, general: bool) -> Option<Body> {
    let o = &v.operands[k];
    match o.kind {
        OperandKind::Imm(m) if o.zero_omitted => return Some(Body::Imm { value: m.apply(0) }),
        OperandKind::Pred => return Some(Body::Pred { n: PT }),
        OperandKind::UPred => return Some(Body::UPred { n: PT }),
        // A name whose table has a row that prints nothing (HGMMA's `gsb0` at 7).
        OperandKind::Name if has_nameless_row(v, o) => return Some(Body::Other { text: String::new() }),
        _ if !general => return None,
        _ => {}
    }
    let [Some(f)] = o.value_fields.as_slice() else { return None };
    let max = v.fields[*f].max();
    match o.kind {
        OperandKind::Reg if max == u64::from(sass::RZ) => Some(Body::Reg { n: sass::RZ }),
        OperandKind::UReg if max == u64::from(crate::codec::conventions::uniform_zero(v.arch)) => Some(Body::UReg { n: sass::URZ }),
        OperandKind::Imm(crate::spec::ImmMap::PLAIN) if v.fields[*f].width() <= 32 => Some(Body::Imm { value: max.into() }),
        _ => None,
    }
}

/// Does name operand `o`'s table have a `(default)` row, which nvdisasm prints by leaving
/// the operand out?
pub(super) fn has_nameless_row(v: &Variant, o: &OperandSpec) -> bool {
    o.suffix_fields.first().and_then(|&f| v.field_table(f)).is_some_and(|t| t.rows.iter().any(|r| r.kind == crate::spec::RowKind::Default))
}
