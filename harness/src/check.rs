//! The pure roundtrip properties, shared by `sass-harness check`, `cargo test` and the
//! fuzz targets.

use crate::codec::asm::Assembler;
use crate::codec::{self, AsmError, Codec, Printer, Values};
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
/// codec: many checks go faster through a [`Checker`].
pub fn roundtrip(c: &Codec, vi: usize, values: &Values) -> Result<Word, RoundtripFailure> {
    let print = |vk: usize, vals: &Values, w: Word| codec::print_word(c.variant(vk), vals, w).to_string();
    roundtrip_with(c, &print, &|arch, text, w| codec::asm::assemble(c, arch, text, w), vi, values)
}

/// [`roundtrip`] through an [`Assembler`] (which indexes the codec's variants once).
pub fn roundtrip_in(a: &Assembler, vi: usize, values: &Values) -> Result<Word, RoundtripFailure> {
    let c = a.codec();
    let print = |vk: usize, vals: &Values, w: Word| codec::print_word(c.variant(vk), vals, w).to_string();
    roundtrip_with(c, &print, &|arch, text, w| a.assemble(arch, text, w), vi, values)
}

/// [`roundtrip`] for many words: an [`Assembler`] and a [`Printer`] (each form's print
/// plan), both built once, so a check pays only for its word. What the fuzz targets and
/// `sass-harness check` use.
pub struct Checker<'a, 'c, 's> {
    asm: &'a Assembler<'c, 's>,
    printer: Printer<'c, 's>,
}

impl<'a, 'c, 's> Checker<'a, 'c, 's> {
    pub fn new(asm: &'a Assembler<'c, 's>) -> Checker<'a, 'c, 's> {
        Checker { asm, printer: Printer::new(asm.codec()) }
    }

    pub fn assembler(&self) -> &'a Assembler<'c, 's> {
        self.asm
    }

    pub fn codec(&self) -> &'c Codec<'s> {
        self.asm.codec()
    }

    /// [`roundtrip`] of variant `vi`'s values.
    pub fn roundtrip(&self, vi: usize, values: &Values) -> Result<Word, RoundtripFailure> {
        let print = |vk: usize, vals: &Values, w: Word| {
            let mut text = String::with_capacity(64);
            self.printer.print_word_into(vk, vals, w, &mut text);
            text
        };
        roundtrip_with(self.codec(), &print, &|arch, text, w| self.asm.assemble(arch, text, w), vi, values)
    }
}

/// Text → word for one architecture, with control bits from a word.
type Assemble<'a> = dyn Fn(Arch, &str, Word) -> Result<(usize, Word), AsmError> + 'a;

/// Word → text: [`codec::print_word`] of variant `vi`'s values (a [`Printer`]'s, or not).
type Print<'a> = dyn Fn(usize, &Values, Word) -> String + 'a;

fn roundtrip_with(c: &Codec, print: &Print, assemble: &Assemble, vi: usize, values: &Values) -> Result<Word, RoundtripFailure> {
    let v = c.variant(vi);
    let w = c.encode(vi, values).map_err(|e| RoundtripFailure::Encode(e.to_string()))?;
    let (vj, back) = c.decode(v.arch, w).map_err(|e| RoundtripFailure::Decode { word: w, error: e.to_string() })?;
    let again = c.encode_unchecked(vj, &back);
    if again != w || (vj == vi && back != *values) {
        return Err(RoundtripFailure::Values { word: w, again });
    }
    text_roundtrip(c, print, assemble, vj, &back, w)?;
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
///
/// The text is printed once; whether it is exact is asked only when the assembler gives
/// another word (most texts give theirs back, and `lossless` costs as much as printing).
fn text_roundtrip(c: &Codec, print: &Print, assemble: &Assemble, vi: usize, values: &Values, w: Word) -> Result<(), RoundtripFailure> {
    let v = c.variant(vi);
    if (0..v.fields.len()).any(|f| v.value_illegal(f, values.get(f))) {
        // The page says nvdisasm rejects the word: there is no text to read back.
        return Ok(());
    }
    let text = print(vi, values, w);
    let reprint = |x: Word| c.decode(v.arch, x).ok().map(|(vk, vals)| print(vk, &vals, x));
    match assemble(v.arch, &text, w) {
        Ok((_, w2)) if w2 == w => Ok(()),
        Ok((_, w2)) if v.conventions.is_none() && codec::print::lossless(v, values) => Err(RoundtripFailure::AsmWord { word: w, text, again: w2 }),
        Ok((_, w2)) => match reprint(w2) {
            Some(again) if again == text => Ok(()),
            again => Err(RoundtripFailure::AsmText { word: w, text, again: again.unwrap_or_else(|| format!("{w2}, which decodes as no form")) }),
        },
        Err(AsmError::Ambiguous { words, .. }) if words.contains(&w) || words.iter().all(|&x| reprint(x).as_ref() == Some(&text)) => Ok(()),
        Err(e) => Err(RoundtripFailure::Asm { word: w, text, error: e.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{random_values, Rng};

    /// A [`Checker`] prints through its plans; it must judge every word as the plain
    /// property does (the same word, or the same failure).
    #[test]
    fn the_checker_agrees_with_the_plain_property() {
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/isa"));
        let spec = crate::fuzz::load_spec(&[dir]).expect("corpus/isa loads");
        let c = Codec::new(&spec);
        let a = Assembler::new(&c);
        let k = Checker::new(&a);
        let mut rng = Rng::new(0x21_21);
        let mut held = 0;
        for vi in 0..c.variants().len() {
            for _ in 0..200 {
                let values = random_values(c.variant(vi), &mut rng);
                let plain = roundtrip_in(&a, vi, &values);
                assert_eq!(k.roundtrip(vi, &values), plain, "{} {values:?}", c.variant(vi).key);
                held += usize::from(plain.is_ok());
            }
        }
        assert!(held > 0, "no word held the property");
    }

    /// A text that assembles to another word is a failure where the form prints every
    /// bit: the lossless check, now asked only then, still runs.
    #[test]
    fn a_text_that_gives_another_word_fails_where_the_print_is_lossless() {
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/isa"));
        let spec = crate::fuzz::load_spec(&[dir]).expect("corpus/isa loads");
        let c = Codec::new(&spec);
        let vi = c.index_of("DFMA_R_R_R_R", Some(Arch(90))).expect("seed variant");
        let v = c.variant(vi);
        let values = Values::zero(v.fields.len());
        let w = c.encode(vi, &values).expect("zero values encode");
        // The seed pages store no conventions: the page's print names every bit.
        assert!(v.conventions.is_none() && codec::print::lossless(v, &values));
        let print = |_: usize, vals: &Values, x: Word| codec::print_word(v, vals, x).to_string();
        let wrong = |_: Arch, _: &str, x: Word| Ok((vi, x.flip(20)));
        let e = text_roundtrip(&c, &print, &wrong, vi, &values, w);
        assert!(matches!(e, Err(RoundtripFailure::AsmWord { again, .. }) if again == w.flip(20)), "{e:?}");
    }
}
