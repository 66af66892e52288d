//! Which disagreements a known, documented limitation of the pages explains.
//!
//! An explained finding stays a finding (same class, severity, word and seed); it carries
//! its reason, and the summary counts it apart, so that "0 unexplained" is a number the
//! tool prints. Only limitations the docs name are here; everything else is unexplained.

use super::judge::Disagreement;
use crate::codec::{Codec, Values};
use crate::spec::Variant;
use crate::validate::finding::Class;
use crate::word::Word;
use std::fmt;

/// How an explained finding's `proposal` starts.
pub const EXPLAINED: &str = "explained: ";

/// A limitation of the pages that accounts for a disagreement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Explanation {
    /// A field holds a value its table does not list. Discovery enumerates a table's rows
    /// as nvdisasm prints them and leaves out the values it rejected (docs/discovery.md),
    /// but the page format keeps a left-out value only as "omitted" (page-format.md:
    /// `omitted-values`), not as illegal: the spec prints it `UNLISTEDn` where nvdisasm
    /// rejects the word or reads it as another form (docs/findings.md, "Warnings left on
    /// the discovered pages").
    UnlistedValue { field: String, value: u64 },
    /// An immediate whose top bit is set, next to a base register at `RZ` that nvdisasm
    /// prints as an operand of its own (AL2P: `AL2P R0, 0x14b` for the page's `-0x2b5`),
    /// that the spec prints signed and nvdisasm unsigned (whole, or without that bit), or
    /// the other way. The stored conventions spell a memory operand's offset beside RZ
    /// (`offset beside RZ`), not an immediate beside a register operand, nor anything in
    /// a form with none stored (docs/findings.md, "Warnings left on the discovered pages").
    SignAtRzBase { field: String, value: u64 },
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Explanation::UnlistedValue { field, value } => write!(
                f,
                "{EXPLAINED}{field} = {value:#x} is a value its table leaves out (discovery keeps only the rows nvdisasm prints; \
                 the page cannot mark it illegal), so the spec prints UNLISTEDn where nvdisasm does not"
            ),
            Explanation::SignAtRzBase { field, value } => write!(
                f,
                "{EXPLAINED}{field} = {value:#x} is an offset beside an RZ base, whose sign the stored conventions cannot tie to the base \
                 (learned per form or from one bit), so the spec and nvdisasm print it with opposite signs"
            ),
        }
    }
}

/// The limitation that explains disagreement `d` on `word` of form `vi`, if one does.
/// Notes need none (spelling only); a word with no form has no page to blame.
pub fn explain(codec: &Codec, vi: Option<usize>, word: Word, d: &Disagreement) -> Option<Explanation> {
    let vi = vi?;
    if d.class == Class::Syntax || d.class == Class::Unexpressible {
        return None;
    }
    let v = codec.variant(vi);
    let values = codec.extract(vi, word);
    // Only where the spec's own text shows the left-out row: a word that merely holds one
    // in some field and differs elsewhere is not explained by it.
    let shows_unlisted = d.expected.contains(crate::codec::print::UNLISTED);
    let unlisted = (0..v.fields.len()).filter(|_| shows_unlisted).find_map(|fi| {
        let x = values.get(fi);
        let t = v.field_table(fi)?;
        t.row(x).is_none().then(|| Explanation::UnlistedValue { field: v.fields[fi].name.clone(), value: x })
    });
    unlisted.or_else(|| sign_at_rz_base(v, &values, d))
}

/// [`Explanation::SignAtRzBase`]: an operand value field with its top bit set, while
/// another holds all ones (`RZ`: the base, which nvdisasm may print as its own operand, as
/// AL2P's), which one text spells signed where the other spells it unsigned.
fn sign_at_rz_base(v: &Variant, values: &Values, d: &Disagreement) -> Option<Explanation> {
    d.field.filter(|_| d.class == Class::FieldBits)?;
    let fields: Vec<usize> = v.operands.iter().flat_map(|o| o.value_fields.iter().flatten().copied()).collect();
    // A memory operand's offset beside RZ is a stored convention (`offset beside RZ`):
    // where the form has conventions stored, a disagreement there is no known limitation.
    let stated: Vec<usize> = v
        .operands
        .iter()
        .filter(|o| v.conventions.is_some() && matches!(o.kind, crate::spec::OperandKind::Mem(_)))
        .flat_map(|o| o.value_fields.iter().flatten().copied())
        .collect();
    let rz = |g: usize| values.get(g) == v.fields[g].max();
    fields.iter().copied().filter(|&fi| !stated.contains(&fi) && fields.iter().any(|&g| g != fi && rz(g))).find_map(|fi| {
        let (x, width) = (values.get(fi), v.fields[fi].width());
        if width == 0 || width >= 64 || x >> (width - 1) & 1 == 0 {
            return None;
        }
        // Unsigned: the whole field, or (as nvdisasm prints ALD's and AL2P's) its low bits
        // without the sign bit.
        let signed = format!("-{:#x}", (1u64 << width) - x);
        let unsigned = [format!("{x:#x}"), format!("{:#x}", x & ((1u64 << (width - 1)) - 1))];
        let spelled = |a: &str, b: &str| d.expected.contains(a) && d.actual.contains(b);
        let opposite = unsigned.iter().any(|u| spelled(&signed, u) || spelled(u, &signed));
        opposite.then(|| Explanation::SignAtRzBase { field: v.fields[fi].name.clone(), value: x })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Arch;

    #[test]
    fn an_unlisted_table_value_explains_and_a_listed_one_does_not() {
        let spec = crate::spec::builtin::load_builtin(Arch(90)).unwrap();
        let c = Codec::new(&spec);
        let listed = |vi: usize, values: &crate::codec::Values| {
            let v = c.variant(vi);
            (0..v.fields.len()).all(|f| v.field_table(f).is_none_or(|t| t.row(values.get(f)).is_some()))
        };
        // A form whose zero word lists every table value, with a table that leaves some out.
        let (vi, fi, unlisted) = (0..c.variants().len())
            .filter(|&vi| listed(vi, &crate::gen::distilled_values(c.variant(vi))))
            .find_map(|vi| {
                let v = c.variant(vi);
                (0..v.fields.len()).find_map(|fi| v.field_table(fi).and_then(|t| t.omitted.first()).map(|&x| (vi, fi, x)))
            })
            .expect("a form with a table that leaves values out");
        let v = c.variant(vi);
        let mut values = crate::gen::distilled_values(v);
        assert_eq!(explain(&c, Some(vi), c.encode_unchecked(vi, &values), &dis(Class::FieldBits, None, "", "")), None);
        values.set(fi, unlisted);
        let w = c.encode_unchecked(vi, &values);
        let shown = crate::codec::print_word(v, &values, w).to_string();
        assert!(shown.contains("UNLISTED"), "{shown}");
        // Differing elsewhere, with the row not in the spec's text: not explained by it.
        assert_eq!(explain(&c, Some(vi), w, &dis(Class::Legality, None, "", "")), None);
        let e = explain(&c, Some(vi), w, &dis(Class::Legality, None, &shown, "")).expect("explained");
        assert_eq!(e, Explanation::UnlistedValue { field: v.fields[fi].name.clone(), value: unlisted });
        assert!(e.to_string().starts_with("explained: "), "{e}");
        assert_eq!(explain(&c, Some(vi), w, &dis(Class::Syntax, None, &shown, "")), None);
        assert_eq!(explain(&c, None, w, &dis(Class::Legality, None, &shown, "")), None);
    }

    fn dis(class: Class, field: Option<usize>, expected: &str, actual: &str) -> Disagreement {
        let severity = crate::validate::finding::Severity::Warning;
        Disagreement { class, severity, elements: vec![], field, expected: expected.into(), actual: actual.into() }
    }

    /// SM90 `AL2P R0, 0x14b`: the spec prints `-0x2b5` for the 11-bit 0x54b beside an RZ
    /// register operand (validate's warning on the discovered pages); explained where the
    /// base is RZ and the spellings are each other's. An offset inside a memory operand
    /// (`ALD.P R0, a[0x3ff], ???0` against `a[-0x1]`) is a stored convention (`offset beside
    /// RZ`): not explained.
    #[test]
    fn an_offset_beside_rz_printed_with_the_other_sign_is_explained() {
        let spec = crate::spec::builtin::load_builtin(Arch(90)).unwrap();
        let c = Codec::new(&spec);
        let vi = c.index_of("AL2P_R_R_I", Some(Arch(90))).expect("the form");
        let w = Word::parse_hex("200a02000000000000054b00ff000920").unwrap();
        let v = c.variant(vi);
        // The judge blames an operand's first value field (here the base register).
        let fi = v.operands[1].value_fields.iter().flatten().copied().next().expect("operand 1's field");
        let (exp, act) = ("@P0 AL2P R0, -0x2b5 ;", "@P0 AL2P R0, 0x14b ;");
        let e = explain(&c, Some(vi), w, &dis(Class::FieldBits, Some(fi), exp, act));
        assert!(matches!(e, Some(Explanation::SignAtRzBase { value: 0x54b, .. })), "{e:?}");
        // Another value, or a base that is not RZ, is not this limitation.
        assert_eq!(explain(&c, Some(vi), w, &dis(Class::FieldBits, Some(fi), exp, "@P0 AL2P R0, 0x14a ;")), None);
        let mut values = c.extract(vi, w);
        values.set(fi, 0);
        assert_eq!(explain(&c, Some(vi), c.encode_unchecked(vi, &values), &dis(Class::FieldBits, Some(fi), exp, act)), None);
        // A memory operand's offset: the form's stored conventions spell it.
        let vi = c.index_of("ALD_R_M_a_R_I_N", Some(Arch(90))).expect("the form");
        assert!(c.variant(vi).conventions.is_some(), "ALD's conventions stored");
        let w = Word::parse_hex("00000000000010000007ff00ff000321").unwrap();
        let fi = c.variant(vi).operands[1].value_fields.iter().flatten().copied().next().expect("operand 1's fields");
        let (exp, act) = ("@P0 ALD.P R0, a[-0x1], ???0 ;", "@P0 ALD.P R0, a[0x3ff], ???0 ;");
        assert_eq!(explain(&c, Some(vi), w, &dis(Class::FieldBits, Some(fi), exp, act)), None);
    }
}
