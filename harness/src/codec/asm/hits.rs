//! Collecting a text's readings as candidate forms into words, and the outcome: one
//! word, none, or several.

use super::*;

/// The distinct words `inst` assembles to as each of `forms` (codec order), with their
/// variants.
pub(super) fn hits<'f, 's: 'f>(forms: impl Iterator<Item = (usize, &'f Form<'s>)>, inst: &InstRef, tokens: &[u32], controls_from: Word) -> Hits {
    let mut hits = Hits { first: None, more: vec![] };
    for (vi, form) in forms {
        let mut values = Values::zero(form.n_fields);
        if form.fill_into(inst, tokens, &mut values).is_ok() {
            hits.add(vi, form.layout.encode(&values, controls_from));
        }
    }
    hits
}

/// Adds to `hits` the words of `inst` read as each of `forms` (whose forms have more
/// operands) with the operands nvdisasm leaves out put back (see [`with_omitted`]): PT/UPT
/// first, and other operands at all ones (RZ, URZ, `0xf`) only when nothing else reads the
/// text, as the assembler does not know which forms leave them out. Token ids stay
/// valid: the operands put back have no suffixes.
pub(super) fn omitted_pt_hits<'f, 's: 'f>(
    forms: impl Iterator<Item = (usize, &'f Form<'s>)>,
    inst: &InstRef,
    tokens: &[u32],
    controls_from: Word,
    hits: &mut Hits,
) {
    let forms: Vec<(usize, &Form)> = forms.collect();
    for general in [false, true] {
        if general && hits.first.is_some() {
            break;
        }
        for &(vi, form) in &forms {
            for read in with_omitted(form, inst, general) {
                if form.tokens_fit(&read, tokens) {
                    let found = self::hits(std::iter::once((vi, form)), &read, tokens, controls_from);
                    for (vj, w) in found.first.into_iter().chain(found.more) {
                        hits.add(vj, w);
                    }
                }
            }
        }
    }
}

/// Distinct words with their variants, in the order found; the first kept apart, as
/// usually there is only one.
pub(super) struct Hits {
    pub(super) first: Option<(usize, Word)>,
    pub(super) more: Vec<(usize, Word)>,
}

impl Hits {
    pub(super) fn add(&mut self, vi: usize, w: Word) {
        match self.first {
            None => self.first = Some((vi, w)),
            Some((_, x)) if x == w => {}
            Some(_) if self.more.iter().any(|(_, x)| *x == w) => {}
            Some(_) => self.more.push((vi, w)),
        }
    }
}

/// One word, or why none or several; `reasons` (why each variant of the mnemonic fails,
/// in codec order) is asked for only when none fits.
pub(super) fn outcome(codec: &Codec, hits: Hits, arch: Arch, inst: &InstRef, reasons: impl FnOnce() -> Vec<String>) -> Result<(usize, Word), AsmError> {
    match hits.first {
        Some(hit) if hits.more.is_empty() => Ok(hit),
        None => {
            let reasons = reasons();
            Err(AsmError::NoVariant {
                arch,
                mnemonic: inst.mnemonic.to_string(),
                detail: if reasons.is_empty() { String::new() } else { format!(" ({})", reasons.join("; ")) },
            })
        }
        Some(first) => {
            let all: Vec<(usize, Word)> = std::iter::once(first).chain(hits.more).collect();
            // A reading in another modifier order than nvdisasm's is a word that prints
            // other text: keep the words that print the text's modifiers as written, where
            // every reading's form has stored conventions (its print is nvdisasm's).
            let modifiers = inst.modifiers();
            let stored = all.iter().all(|&(vi, _)| codec.variant(vi).conventions.is_some());
            let as_written: Vec<(usize, Word)> = all.iter().copied().filter(|&(_, w)| stored && prints_modifiers(codec, arch, w, modifiers)).collect();
            let all = match as_written[..] {
                [one] => return Ok(one),
                [] => all,
                _ => as_written,
            };
            Err(AsmError::Ambiguous {
                text: inst.to_instruction().to_string(),
                keys: all.iter().map(|(i, _)| codec.variant(*i).key.clone()).collect(),
                words: all.iter().map(|(_, w)| *w).collect(),
            })
        }
    }
}

/// Whether word `w` decodes as a form that prints `modifiers` (with its stored
/// conventions).
pub(super) fn prints_modifiers(codec: &Codec, arch: Arch, w: Word, modifiers: &[&str]) -> bool {
    codec.decode(arch, w).is_ok_and(|(vi, vals)| crate::codec::print::printed_modifiers(codec.variant(vi), &vals, w).iter().eq(modifiers))
}
