//! The pure roundtrip properties, shared by `sass-harness check`, `cargo test` and the
//! fuzz targets.

use crate::codec::asm::Assembler;
use crate::codec::{self, AsmError, Codec, Values};
use crate::spec::Arch;
use crate::word::Word;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoundtripFailure {
    Encode(String),
    Decode { word: Word, error: String },
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
            RoundtripFailure::Values { word, again } => write!(f, "encode∘decode({word}) = {again}"),
            RoundtripFailure::Asm { word, text, error } => write!(f, "assemble '{text}' (from {word}): {error}"),
            RoundtripFailure::AsmWord { word, text, again } => write!(f, "'{text}' assembles to {again}, printed from {word}"),
            RoundtripFailure::AsmText { word, text, again } => write!(f, "'{text}' (from {word}) reprints as '{again}'"),
        }
    }
}

/// encode → decode → encode, then print → assemble, for one variant's values; the word.
///
/// The word may decode as another variant: a more specific form owns part of a general
/// form's encodings (the decoder's precedence, [`Codec::find`]), and what is kept is the
/// word, read as that form. The text is nvdisasm's (the stored conventions, where the form
/// has them), and the assembler reads it back.
///
/// Assembles with [`codec::asm::assemble`], which looks the mnemonic up in the whole
/// codec: many checks go faster through [`roundtrip_in`] and an [`Assembler`].
pub fn roundtrip(c: &Codec, vi: usize, values: &Values) -> Result<Word, RoundtripFailure> {
    roundtrip_with(c, &|arch, text, w| codec::asm::assemble(c, arch, text, w), vi, values)
}

/// [`roundtrip`] through an [`Assembler`] (which indexes the codec's variants once).
pub fn roundtrip_in(a: &Assembler, vi: usize, values: &Values) -> Result<Word, RoundtripFailure> {
    roundtrip_with(a.codec(), &|arch, text, w| a.assemble(arch, text, w), vi, values)
}

/// Text → word for one architecture, with control bits from a word.
type Assemble<'a> = dyn Fn(Arch, &str, Word) -> Result<(usize, Word), AsmError> + 'a;

fn roundtrip_with(c: &Codec, assemble: &Assemble, vi: usize, values: &Values) -> Result<Word, RoundtripFailure> {
    let v = c.variant(vi);
    let w = c.encode(vi, values).map_err(|e| RoundtripFailure::Encode(e.to_string()))?;
    let (vj, back) = c.decode(v.arch, w).map_err(|e| RoundtripFailure::Decode { word: w, error: e.to_string() })?;
    let again = c.encode_unchecked(vj, &back);
    if again != w || (vj == vi && back != *values) {
        return Err(RoundtripFailure::Values { word: w, again });
    }
    text_roundtrip(c, assemble, vj, &back, w)?;
    Ok(w)
}

/// print → assemble for a decoded word (`values` of variant `vi`).
///
/// The text must give the word back exactly where it names every bit: the form has no
/// stored conventions and [`codec::print::lossless`] holds. Otherwise the bits nvdisasm
/// does not show (reuse flags it leaves out, operands left out at their default,
/// placeholder modifiers any table could hold) may come back other, and the word the text
/// assembles to must print that same text; a text several words print must count this
/// word among them, or be printed by each of them.
fn text_roundtrip(c: &Codec, assemble: &Assemble, vi: usize, values: &Values, w: Word) -> Result<(), RoundtripFailure> {
    let v = c.variant(vi);
    if (0..v.fields.len()).any(|f| v.value_illegal(f, values.get(f))) {
        // The page says nvdisasm rejects the word: there is no text to read back.
        return Ok(());
    }
    let text = codec::print_word(v, values, w).to_string();
    let exact = v.conventions.is_none() && codec::print::lossless(v, values);
    match assemble(v.arch, &text, w) {
        Ok((_, w2)) if w2 == w => Ok(()),
        Ok((_, w2)) if exact => Err(RoundtripFailure::AsmWord { word: w, text, again: w2 }),
        Ok((_, w2)) => match reprint(c, v.arch, w2) {
            Some(again) if again == text => Ok(()),
            again => Err(RoundtripFailure::AsmText { word: w, text, again: again.unwrap_or_else(|| format!("{w2}, which decodes as no form")) }),
        },
        Err(AsmError::Ambiguous { words, .. }) if words.contains(&w) || words.iter().all(|&x| reprint(c, v.arch, x).as_ref() == Some(&text)) => Ok(()),
        Err(e) => Err(RoundtripFailure::Asm { word: w, text, error: e.to_string() }),
    }
}

/// The text of word `x`, decoded as the decoder reads it.
fn reprint(c: &Codec, arch: Arch, x: Word) -> Option<String> {
    c.decode(arch, x).ok().map(|(vk, vals)| codec::print_word(c.variant(vk), &vals, x).to_string())
}
