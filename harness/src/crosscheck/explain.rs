//! Which disagreements a known, documented limitation of the pages explains.
//!
//! An explained finding stays a finding (same class, severity, word and seed); it carries
//! its reason, and the summary counts it apart, so that "0 unexplained" is a number the
//! tool prints. Only limitations the docs name are here; everything else is unexplained.

use crate::codec::Codec;
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
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Explanation::UnlistedValue { field, value } => write!(
                f,
                "{EXPLAINED}{field} = {value:#x} is a value its table leaves out (discovery keeps only the rows nvdisasm prints; \
                 the page cannot mark it illegal), so the spec prints UNLISTEDn where nvdisasm does not"
            ),
        }
    }
}

/// The limitation that explains a disagreement of `class` on `word` of form `vi`, if one
/// does. Notes need none (spelling only); a word with no form has no page to blame.
pub fn explain(codec: &Codec, vi: Option<usize>, word: Word, class: Class) -> Option<Explanation> {
    let vi = vi?;
    if class == Class::Syntax || class == Class::Unexpressible {
        return None;
    }
    let v = codec.variant(vi);
    let values = codec.extract(vi, word);
    (0..v.fields.len()).find_map(|fi| {
        let x = values.get(fi);
        let t = v.field_table(fi)?;
        t.row(x).is_none().then(|| Explanation::UnlistedValue { field: v.fields[fi].name.clone(), value: x })
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
        assert_eq!(explain(&c, Some(vi), c.encode_unchecked(vi, &values), Class::FieldBits), None);
        values.set(fi, unlisted);
        let w = c.encode_unchecked(vi, &values);
        let e = explain(&c, Some(vi), w, Class::Legality).expect("explained");
        assert_eq!(e, Explanation::UnlistedValue { field: v.fields[fi].name.clone(), value: unlisted });
        assert!(e.to_string().starts_with("explained: "), "{e}");
        assert_eq!(explain(&c, Some(vi), w, Class::Syntax), None);
        assert_eq!(explain(&c, None, w, Class::Legality), None);
    }
}
