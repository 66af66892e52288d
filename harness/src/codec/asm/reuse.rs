//! `.reuse` as written: the reuse bits (122–125) that make a word print the text's
//! `.reuse` marks, where the control bits it was given do not.

use super::*;
use crate::codec::{print_word, Schedule};

/// `found` (a variant and word for `inst`), its reuse bits changed, if need be, so that the
/// word prints `.reuse` on exactly the operands `inst` marks: the given bits where they do
/// already (or the form has no stored conventions, without which nothing prints `.reuse`),
/// else the smallest value that does, the word's stall and yield bits kept (nvdisasm
/// prints `.reuse` by all three). An error where none does.
pub fn reuse_as_written(codec: &Codec, inst: &Instruction, (vi, w): (usize, Word)) -> Result<(usize, Word), AsmError> {
    let v = codec.variant(vi);
    let Some(c) = v.conventions.as_deref() else { return Ok((vi, w)) };
    let wanted: Vec<bool> = inst.operands.iter().map(|o| o.reuse).collect();
    if !wanted.contains(&true) && c.reuse_mask(w) == 0 {
        return Ok((vi, w));
    }
    let marks = |w: Word| -> Vec<bool> { print_word(v, &codec.extract(vi, w), w).operands.iter().map(|o| o.reuse).collect() };
    if marks(w) == wanted {
        return Ok((vi, w));
    }
    let given = Schedule::of(w);
    let reading = |s: Schedule| (0..16).map(|reuse| Schedule { reuse, ..s }.apply(w)).find(|&x| c.legal(x) && marks(x) == wanted);
    if let Some(x) = reading(given) {
        return Ok((vi, x));
    }
    // For the message: the stall and yield bits nearest the word's that do print the marks
    // (the same stall first; nvdisasm prints `.reuse` only where the warp does not yield).
    let mut tried: Vec<Schedule> = (0..16).flat_map(|stall| [true, false].map(|yields| Schedule { stall, yields, ..given })).collect();
    tried.sort_by_key(|s| (s.stall.abs_diff(given.stall), s.yields != given.yields));
    let works = tried.into_iter().find_map(reading);
    Err(AsmError::Reuse { text: inst.to_string(), key: v.key.clone(), works: works.map(|x| Schedule::of(x).to_string()) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Schedule;

    /// `[scheduling] text` assembled with the annotation's control bits, then its `.reuse`
    /// marks honoured: the word and what it prints, or the error.
    fn assembled(c: &Codec, a: &Assembler, line: &str) -> Result<(Word, String), AsmError> {
        let (schedule, text) = Schedule::split_off(line).unwrap();
        let inst = crate::sass::parse_instruction(text).unwrap();
        let found = a.assemble_inst(Arch(90), &inst, schedule.unwrap().apply(Word::ZERO))?;
        let (vi, w) = reuse_as_written(c, &inst, found)?;
        Ok((w, crate::codec::print_word(c.variant(vi), &c.extract(vi, w), w).to_string()))
    }

    /// The reuse bits follow the text's `.reuse` marks: set where the annotation's stall
    /// and yield let them print (nvdisasm prints `.reuse` only where the warp does not
    /// yield), cleared where the text has none, and an error naming scheduling bits that
    /// would print them where these do not (none for a uniform register, never reused).
    #[test]
    fn reuse_bits_follow_the_texts_marks() {
        let s = crate::spec::builtin::load_builtin(Arch(90)).unwrap();
        let c = Codec::new(&s);
        let a = Assembler::new(&c);
        let both = "FFMA R7, R2.reuse, UR6, R7.reuse ;";
        let (w, printed) = assembled(&c, &a, &format!("[B------:R-:W-:-:S04] {both}")).unwrap();
        assert_eq!((printed.as_str(), Schedule::of(w).to_string()), (both, "[R-R-:B------:R-:W-:-:S04]".to_string()));
        let (w, printed) = assembled(&c, &a, "[R-R-:B------:R-:W-:-:S04] FFMA R7, R2, UR6, R7 ;").unwrap();
        assert_eq!((printed.as_str(), Schedule::of(w).reuse), ("FFMA R7, R2, UR6, R7 ;", 0));
        let e = assembled(&c, &a, "[B------:R-:W-:Y:S04] FFMA R7, R2.reuse, UR6, R7 ;").unwrap_err();
        assert!(matches!(&e, AsmError::Reuse { works: Some(s), .. } if s == "[R---:B------:R-:W-:-:S04]"), "{e}");
        let e = assembled(&c, &a, "[B------:R-:W-:-:S04] FFMA R7, R2, UR6.reuse, R7 ;").unwrap_err();
        assert!(matches!(&e, AsmError::Reuse { works: None, .. }), "{e}");
    }
}
