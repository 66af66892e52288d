//! The pure roundtrip properties, shared by `sass-harness check`, `cargo test` and the
//! fuzz targets.

use crate::codec::{self, Codec, Values};
use crate::word::Word;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoundtripFailure {
    Encode(String),
    Decode { word: Word, error: String },
    WrongVariant { word: Word, got: String },
    Values { word: Word, again: Word },
    Asm { word: Word, text: String, error: String },
    AsmWord { word: Word, text: String, again: Word },
    AsmText { word: Word, text: String, again: String },
}

impl std::fmt::Display for RoundtripFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoundtripFailure::Encode(e) => write!(f, "encode: {e}"),
            RoundtripFailure::Decode { word, error } => write!(f, "decode {word}: {error}"),
            RoundtripFailure::WrongVariant { word, got } => write!(f, "{word} decodes as {got}"),
            RoundtripFailure::Values { word, again } => write!(f, "encode∘decode({word}) = {again}"),
            RoundtripFailure::Asm { word, text, error } => write!(f, "assemble '{text}' (from {word}): {error}"),
            RoundtripFailure::AsmWord { word, text, again } => write!(f, "'{text}' assembles to {again}, printed from {word}"),
            RoundtripFailure::AsmText { word, text, again } => write!(f, "'{text}' (from {word}) reprints as '{again}'"),
        }
    }
}

/// encode → decode → encode, and print → assemble → encode, for one variant's values.
pub fn roundtrip(c: &Codec, vi: usize, values: &Values) -> Result<Word, RoundtripFailure> {
    let v = c.variant(vi);
    let w = c.encode(vi, values).map_err(|e| RoundtripFailure::Encode(e.to_string()))?;
    let (vj, back) = c.decode(v.arch, w).map_err(|e| RoundtripFailure::Decode { word: w, error: e.to_string() })?;
    if vj != vi {
        return Err(RoundtripFailure::WrongVariant { word: w, got: c.variant(vj).key.clone() });
    }
    let again = c.encode_unchecked(vj, &back);
    if again != w || back != *values {
        return Err(RoundtripFailure::Values { word: w, again });
    }
    let text = codec::print(v, &back).to_string();
    let (_, w2) = codec::asm::assemble(c, v.arch, &text, w).map_err(|e| RoundtripFailure::Asm { word: w, text: text.clone(), error: e.to_string() })?;
    if codec::print::lossless(v, &back) {
        if w2 != w {
            return Err(RoundtripFailure::AsmWord { word: w, text, again: w2 });
        }
    } else {
        // Two values print alike (a table's duplicate names, NaN payloads): the text, not the
        // word, must survive.
        let (vk, v2) = c.decode(v.arch, w2).map_err(|e| RoundtripFailure::Decode { word: w2, error: e.to_string() })?;
        let t2 = codec::print(c.variant(vk), &v2).to_string();
        if t2 != text {
            return Err(RoundtripFailure::AsmText { word: w, text, again: t2 });
        }
    }
    Ok(w)
}

/// print (with the conventions stored for the form: nvdisasm's text) → assemble gives the
/// word back (`check --nvdisasm-text`; not yet part of [`roundtrip`]: on random words the
/// assembler does not read every stored convention back, e.g. signed immediates): exactly, or another word that prints the same text (the bits that differ are
/// lost in printing: reuse flags nvdisasm does not show, ignored bits), or an ambiguity
/// that includes the word. Forms without stored conventions pass.
pub fn nvdisasm_text(c: &Codec, vi: usize, values: &Values, w: Word) -> Result<(), RoundtripFailure> {
    let v = c.variant(vi);
    if v.conventions.is_none() {
        return Ok(());
    }
    let text = codec::print_word(v, values, w).to_string();
    match codec::asm::assemble(c, v.arch, &text, w) {
        Ok((_, w2)) if w2 == w => Ok(()),
        Ok((vk, w2)) => {
            let again = codec::print_word(c.variant(vk), &c.extract(vk, w2), w2).to_string();
            if again == text {
                Ok(())
            } else {
                Err(RoundtripFailure::AsmText { word: w, text, again })
            }
        }
        Err(codec::AsmError::Ambiguous { words, .. }) if words.contains(&w) => Ok(()),
        Err(e) => Err(RoundtripFailure::Asm { word: w, text, error: e.to_string() }),
    }
}
