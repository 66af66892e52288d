//! SASS text → word: the assembler direction of the printer.
//!
//! Control fields (stall, yield, barriers, reuse) never appear in nvdisasm's text, so they
//! come from a separate word (`controls_from`), as an assembler takes scheduling info.

use super::bits::{Codec, Values};
use super::print::{f64_to_bfloat, f64_to_half, guard_is_uniform, FloatFormat};
use crate::sass::{self, Body, InstRef, Instruction, MemSpace, OperandRef};
use crate::spec::{Arch, FieldKind, ImmMap, MemImm, MemShape, MemSlot, MemSpaceKind, ModSlot, OperandKind, OperandSpec, Variant};
use crate::word::Word;
use slots::{Slot, SlotPool, Slots, Toks};
use smallvec::SmallVec;
use std::fmt;
use vocab::{StrMap, Vocabulary, UNLISTED_BIT};

mod error;
mod fill;
mod form;
mod hits;
mod index;
mod layout;
mod omitted;
mod reuse;
mod slots;
mod summary;
mod vocab;

pub use error::{FillError, OperandFault, TokensMismatch};
use fill::*;
use form::*;
use hits::*;
pub use index::Assembler;
use layout::Layout;
use omitted::*;
pub use reuse::reuse_as_written;
use summary::*;

/// Why a text does not assemble to one word.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    /// The text is not an instruction's syntax.
    #[error("cannot read the text: {0}")]
    Syntax(#[from] sass::ParseError),
    /// No form of the mnemonic reads the text.
    #[error("no {arch} variant of '{mnemonic}' takes these operands{detail}")]
    NoVariant {
        /// The architecture asked for.
        arch: Arch,
        /// The text's mnemonic.
        mnemonic: String,
        /// Why each form of the mnemonic does not read it ([`FillError`]s, in codec order),
        /// as ` (…; …)`, or empty when the spec has no form of it.
        detail: String,
    },
    /// No reuse flags make the word print `.reuse` where the text marks it (with the
    /// word's stall and yield bits, which nvdisasm prints `.reuse` by too): see
    /// [`reuse_as_written`].
    #[error("no reuse flags (bits 122–125) print '{text}' with its .reuse marks as {key} with this word's stall and yield bits{}", works.as_ref().map(|s| format!(" (these scheduling bits do: {s})")).unwrap_or_default())]
    Reuse {
        /// The text.
        text: String,
        /// The key of the variant it reads as.
        key: String,
        /// Scheduling bits that print the marks, the stall and yield nearest the word's
        /// (its notation, [`crate::codec::Schedule`]), if any do.
        works: Option<String>,
    },
    /// Two encodings print this text (nvdisasm's printing loses the bits that differ).
    #[error("'{text}' reads as several different words ({keys:?})")]
    Ambiguous {
        /// The text.
        text: String,
        /// The keys of the variants it reads as, one per word.
        keys: Vec<String>,
        /// The words.
        words: Vec<Word>,
    },
}

/// Assembles `text` for `arch`; control fields are copied from `controls_from`.
///
/// Looks the mnemonic up by scanning the codec's variants: to assemble many texts, build an
/// [`Assembler`] once, which indexes them.
pub fn assemble(codec: &Codec, arch: Arch, text: &str, controls_from: Word) -> Result<(usize, Word), AsmError> {
    let inst = sass::parse_instruction(text)?;
    assemble_inst(codec, arch, &inst, controls_from)
}

/// [`assemble`] for a parsed instruction.
pub fn assemble_inst(codec: &Codec, arch: Arch, inst: &Instruction, controls_from: Word) -> Result<(usize, Word), AsmError> {
    let first = assemble_as_written(codec, arch, inst, controls_from);
    if first.is_err() {
        let candidates = codec.named(arch, &inst.mnemonic).iter().map(|&vi| codec.variant(vi));
        let again = |u: &Instruction| assemble_as_written(codec, arch, u, controls_from);
        return unaliased(codec, candidates, inst, again).or_else(|| unnamed(codec, inst, again)).unwrap_or(first);
    }
    first
}

/// A register nvdisasm names `???255` (`???63`), not the zero register, in forms whose
/// stored conventions say so ([`super::conventions::FormConventions::unnamed`]): a text
/// that does not assemble as written is read with such names as `RZ` or `URZ` (each
/// choice per operand: a name operand may print `???255` too, FOOTPRINT's), and a reading counts
/// only where the word it gives prints the text's operands again; one that reads as
/// several words is that ambiguity.
fn unnamed(
    codec: &Codec,
    inst: &Instruction,
    mut assemble: impl FnMut(&Instruction) -> Result<(usize, Word), AsmError>,
) -> Option<Result<(usize, Word), AsmError>> {
    let unknown: Vec<usize> = (0..inst.operands.len()).filter(|&k| matches!(&inst.operands[k].body, Body::Other { text } if text.contains("???"))).collect();
    let mut ambiguous = None;
    // Each operand kept, read as RZ or as URZ (SM90 TEX prints `???255` and `???63`).
    for choice in 1..3u32.pow(unknown.len().min(4) as u32) {
        let zeros = (0..unknown.len().min(4)).filter_map(|i| match choice / 3u32.pow(i as u32) % 3 {
            0 => None,
            1 => Some((unknown[i], "RZ")),
            _ => Some((unknown[i], "URZ")),
        });
        let Some(u) = named_zero(inst, zeros) else { continue };
        match assemble(&u) {
            Ok((vi, w)) if super::print_word(codec.variant(vi), &codec.extract(vi, w), w).operands == inst.operands => return Some(Ok((vi, w))),
            Err(e @ AsmError::Ambiguous { .. }) => ambiguous = ambiguous.or(Some(e)),
            _ => {}
        }
    }
    ambiguous.map(Err)
}

/// `inst` with the `???N` of each operand `k` read as the register `zero`.
fn named_zero<'z>(inst: &Instruction, zeros: impl Iterator<Item = (usize, &'z str)>) -> Option<Instruction> {
    let mut u = inst.clone();
    for (k, zero) in zeros {
        let op = &mut u.operands[k];
        let Body::Other { text } = &op.body else { return None };
        let at = text.find("???")?;
        let digits = text[at + 3..].chars().take_while(char::is_ascii_digit).count();
        let read = sass::parse_operand(&format!("{}{zero}{}", &text[..at], &text[at + 3 + digits..])).ok()?;
        (op.body, op.suffixes) = (read.body, read.suffixes);
    }
    Some(u)
}

/// nvdisasm's alias modifiers (`IMAD.MOV.U32` for the page's `IMAD.U32`: see
/// [`super::conventions::Alias`]): a text that does not assemble as written is read
/// without each candidate form's alias tokens, and a reading counts only where the form's
/// stored conventions print the text's modifiers again for the word it gives.
/// `candidates`: the variants of the text's architecture and mnemonic, in codec order.
fn unaliased<'s>(
    codec: &Codec<'s>,
    candidates: impl Iterator<Item = &'s Variant>,
    inst: &Instruction,
    mut assemble: impl FnMut(&Instruction) -> Result<(usize, Word), AsmError>,
) -> Option<Result<(usize, Word), AsmError>> {
    let mut tried: Vec<Instruction> = vec![];
    for v in candidates {
        // Most forms have no alias that applies: no copy of the text for them.
        let Some(c) = v.conventions.as_deref().filter(|c| c.has_alias_in(inst)) else { continue };
        let u = c.unalias(inst);
        if u.modifiers == inst.modifiers || tried.contains(&u) {
            continue;
        }
        if let Ok((vi, w)) = assemble(&u) {
            if super::print_word(codec.variant(vi), &codec.extract(vi, w), w).modifiers == inst.modifiers {
                return Some(Ok((vi, w)));
            }
        }
        tried.push(u);
    }
    None
}

/// [`assemble_inst`] without reading alias modifiers.
fn assemble_as_written(codec: &Codec, arch: Arch, inst: &Instruction, controls_from: Word) -> Result<(usize, Word), AsmError> {
    let inst = &InstRef::of(inst);
    let (mut vocabulary, mut rows) = (Vocabulary::of_text(inst), SlotPool::default());
    let tokens = vocabulary.ids(inst);
    let candidates = codec.named(arch, inst.mnemonic);
    // Forms only for the variants whose operands fit: building one costs more than this look.
    let fitting: Vec<(usize, Form)> = candidates
        .iter()
        .filter(|&&vi| shape_fits(codec.variant(vi), guard_is_uniform(codec.variant(vi)), inst))
        .map(|&vi| (vi, Form::new(codec.variant(vi), &mut vocabulary, &mut rows)))
        .collect();
    let mut hits = hits(fitting.iter().map(|(vi, f)| (*vi, f)).filter(|(_, f)| f.tokens_fit(inst, &tokens)), inst, &tokens, controls_from);
    let longer: Vec<(usize, Form)> = candidates
        .iter()
        .filter(|&&vi| codec.variant(vi).operands.len() > inst.operands.len())
        .map(|&vi| (vi, Form::new(codec.variant(vi), &mut vocabulary, &mut rows)))
        .collect();
    omitted_pt_hits(longer.iter().map(|(vi, f)| (*vi, f)), inst, &tokens, controls_from, &mut hits);
    outcome(codec, hits, arch, inst, || {
        candidates.iter().filter_map(|&vi| Form::new(codec.variant(vi), &mut vocabulary, &mut rows).reason(inst, &tokens)).collect()
    })
}

/// Field values for `inst` read as variant `v`, control fields zero.
pub fn fill(v: &Variant, inst: &Instruction) -> Result<Values, FillError> {
    let inst = &InstRef::of(inst);
    let mut vocabulary = Vocabulary::of_text(inst);
    let tokens = vocabulary.ids(inst);
    Form::new(v, &mut vocabulary, &mut SlotPool::default()).fill(inst, &tokens)
}
