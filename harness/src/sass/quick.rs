//! An instruction whose modifiers and suffixes borrow from the text, read without
//! allocating when the text is plain (as the printer and nvdisasm make them), else from a
//! parsed [`Instruction`]: the assembler's view of a text, and the first try of
//! [`sass::parse_instruction`].

use crate::sass::{self, Body, Instruction, MemSpace, Operand, Predicate, Terminator};
use smallvec::SmallVec;
use std::ops::Range;

/// An instruction as [`Instruction`], its tokens borrowed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InstRef<'t> {
    pub pred: Option<Predicate>,
    pub mnemonic: &'t str,
    /// The modifiers, then each operand's suffixes in turn (see [`OperandRef::suffixes`]).
    pub tokens: SmallVec<[&'t str; 12]>,
    pub n_modifiers: usize,
    pub operands: SmallVec<[OperandRef<'t>; 6]>,
    pub terminator: Terminator,
    pub const_spaced: bool,
}

/// An operand as [`Operand`], its text and suffixes borrowed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OperandRef<'t> {
    pub neg: bool,
    pub abs: bool,
    pub not: bool,
    /// A float's or a verbatim body's text is left empty here (no allocation): it is `text`.
    pub body: Body,
    pub text: &'t str,
    /// Where the suffixes are in [`InstRef::tokens`].
    pub suffixes: Range<usize>,
    pub reuse: bool,
    pub joined: bool,
    pub after_bars: bool,
}

impl<'t> OperandRef<'t> {
    /// An operand without text, flags or suffixes.
    pub fn new(body: Body) -> OperandRef<'t> {
        OperandRef { neg: false, abs: false, not: false, body, text: "", suffixes: 0..0, reuse: false, joined: false, after_bars: false }
    }

    fn of(o: &'t Operand, suffixes: Range<usize>) -> OperandRef<'t> {
        let (body, text) = match &o.body {
            Body::Float { value, text } => (Body::Float { value: *value, text: String::new() }, text.as_str()),
            Body::Other { text } => (Body::Other { text: String::new() }, text.as_str()),
            b => (b.clone(), ""),
        };
        OperandRef { neg: o.neg, abs: o.abs, not: o.not, body, text, suffixes, reuse: o.reuse, joined: o.joined, after_bars: o.after_bars }
    }

    /// The body with its text (allocates for floats and verbatim bodies).
    pub fn full_body(&self) -> Body {
        match self.body {
            Body::Float { value, .. } => Body::Float { value, text: self.text.to_string() },
            Body::Other { .. } => Body::Other { text: self.text.to_string() },
            ref b => b.clone(),
        }
    }

    /// The operand as an [`Operand`]; `tokens`: its instruction's.
    pub fn to_operand(&self, tokens: &[&str]) -> Operand {
        Operand {
            neg: self.neg,
            abs: self.abs,
            not: self.not,
            body: self.full_body(),
            suffixes: tokens[self.suffixes.clone()].iter().map(|s| s.to_string()).collect(),
            reuse: self.reuse,
            joined: self.joined,
            after_bars: self.after_bars,
        }
    }
}

impl<'t> InstRef<'t> {
    pub fn of(inst: &'t Instruction) -> InstRef<'t> {
        let mut tokens: SmallVec<[&'t str; 12]> = inst.modifiers.iter().map(String::as_str).collect();
        let mut operands = SmallVec::with_capacity(inst.operands.len());
        for o in &inst.operands {
            let start = tokens.len();
            tokens.extend(o.suffixes.iter().map(String::as_str));
            operands.push(OperandRef::of(o, start..tokens.len()));
        }
        InstRef {
            pred: inst.pred.clone(),
            mnemonic: &inst.mnemonic,
            tokens,
            n_modifiers: inst.modifiers.len(),
            operands,
            terminator: inst.terminator,
            const_spaced: inst.const_spaced,
        }
    }

    pub fn modifiers(&self) -> &[&'t str] {
        &self.tokens[..self.n_modifiers]
    }

    pub fn suffixes(&self, o: &OperandRef) -> &[&'t str] {
        &self.tokens[o.suffixes.clone()]
    }

    /// The instruction as an [`Instruction`] (allocates).
    pub fn to_instruction(&self) -> Instruction {
        Instruction {
            pred: self.pred.clone(),
            mnemonic: self.mnemonic.to_string(),
            modifiers: self.modifiers().iter().map(|s| s.to_string()).collect(),
            operands: self.operands.iter().map(|o| o.to_operand(&self.tokens)).collect(),
            terminator: self.terminator,
            const_spaced: self.const_spaced,
        }
    }

    /// `text` read as [`sass::parse_full`] reads it, for a plain text; `None` for
    /// the rest (an error, a float special, a spaced constant, operands joined by a space,
    /// a predicate or operand the parser reads otherwise), which the caller parses in full.
    pub fn parse(text: &'t str) -> Option<InstRef<'t>> {
        // Whitespace is then ASCII's, read byte by byte (see `is_space`).
        if !text.is_ascii() {
            return None;
        }
        let trimmed = trim_end(text);
        let (body, terminator) = match trimmed.strip_suffix(';') {
            // With float specials left to the full parser, every space before `;` is the terminator's.
            Some(b) => {
                let t = b.trim_end_matches(' ');
                (t, if t.len() < b.len() { Terminator::SpaceSemicolon } else { Terminator::Semicolon })
            }
            None => (trimmed, Terminator::Missing),
        };
        let (pred, rest) = parse_pred(trim_start(body))?;
        let op_end = find_space(rest).unwrap_or(rest.len());
        let mut parts = dots(&rest[..op_end]);
        let mnemonic = parts.next().filter(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))?;
        let mut tokens: SmallVec<[&'t str; 12]> = parts.collect();
        if tokens.iter().any(|m| m.is_empty()) {
            return None;
        }
        let n_modifiers = tokens.len();
        let ops_text = &rest[op_end..];
        let mut operands = SmallVec::new();
        if !trim_start(ops_text).is_empty() {
            for piece in sass::split_operands(ops_text) {
                let t = trim_end(trim_start(piece));
                if find_space(t).is_some() {
                    return None;
                }
                operands.push(parse_operand(t, &mut tokens)?);
            }
        }
        Some(InstRef { pred, mnemonic, tokens, n_modifiers, operands, terminator, const_spaced: false })
    }
}

/// The guard (`@!P3 `) and what follows it, trimmed; `None` where the full parser errs.
fn parse_pred(rest: &str) -> Option<(Option<Predicate>, &str)> {
    if rest.is_empty() {
        return None;
    }
    let Some(p) = rest.strip_prefix('@') else { return Some((None, rest)) };
    let (negated, p) = p.strip_prefix('!').map_or((false, p), |q| (true, q));
    let end = find_space(p)?;
    let (index, uniform) = match quick_body(&p[..end]).or_else(|| sass::plain_body(&p[..end]))? {
        Body::Pred { n } => (n, false),
        Body::UPred { n } => (n, true),
        _ => return None,
    };
    Some((Some(Predicate { negated, index, uniform }), trim_start(&p[end..])))
}

/// `char::is_whitespace` for an ASCII byte.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn find_space(s: &str) -> Option<usize> {
    s.bytes().position(is_space)
}

fn trim_start(s: &str) -> &str {
    &s[s.bytes().position(|b| !is_space(b)).unwrap_or(s.len())..]
}

fn trim_end(s: &str) -> &str {
    &s[..s.bytes().rposition(|b| !is_space(b)).map_or(0, |i| i + 1)]
}

/// One operand (no whitespace in it) as [`sass::parse_operand`] reads it, its suffixes
/// pushed to `tokens`; `None` where it errs or reads a float special.
fn parse_operand<'t>(t: &'t str, tokens: &mut SmallVec<[&'t str; 12]>) -> Option<OperandRef<'t>> {
    let mut s = t;
    let (mut neg, mut not, mut abs) = (false, false, false);
    // A leading '-' belongs to the operand unless it starts a number.
    if let Some(r) = s.strip_prefix('-') {
        if !r.starts_with(|c: char| c.is_ascii_digit()) && !["INF", "QNAN", "SNAN", "NAN"].iter().any(|p| r.starts_with(p)) {
            neg = true;
            s = r;
        }
    }
    if let Some(r) = s.strip_prefix('!').or_else(|| s.strip_prefix('~')) {
        not = true;
        s = r;
    }
    let (core, tail, after) = match s.strip_prefix('|') {
        Some(r) => {
            let end = r.find('|')?;
            abs = true;
            let (inner, inner_sfx) = sass::split_suffixes(&r[..end]);
            let after = &r[end + 1..];
            if !inner_sfx.is_empty() && !after.is_empty() && after != ".reuse" {
                return None;
            }
            (inner, inner_sfx, after)
        }
        None => {
            let (c, tail) = sass::split_suffixes(s);
            (c, tail, "")
        }
    };
    let start = tokens.len();
    let (body, text) = body(core, tail.is_empty() && after.is_empty(), tokens)?;
    let mut reuse = false;
    read_suffixes(tail, tokens, &mut reuse)?;
    read_suffixes(after, tokens, &mut reuse)?;
    let after_bars = !after.is_empty() && dots(after).any(|x| !x.is_empty() && x != "reuse");
    Some(OperandRef { neg, abs, not, body, text, suffixes: start..tokens.len(), reuse, joined: false, after_bars })
}

/// An operand's body and text, a memory operand's register suffixes pushed to `tokens`;
/// `bare`: the operand has no suffixes after it.
fn body<'t>(core: &'t str, bare: bool, tokens: &mut SmallVec<[&'t str; 12]>) -> Option<(Body, &'t str)> {
    let parsed = quick_body(core).or_else(|| sass::plain_body(core));
    let mem = if parsed.is_none() && core.contains('[') { sass::parse_mem_parts(core).ok() } else { None };
    // Only a descriptor carries suffixes after its brackets (`gdesc[UR12].B_KEEP`).
    if let Some((b, sfx)) = mem.filter(|(b, _)| bare || matches!(b, Body::Mem { space: MemSpace::Named { .. }, .. })) {
        if !sfx.is_empty() {
            tokens.extend(dots(sfx));
        }
        return Some((b, ""));
    }
    match parsed {
        Some(Body::Float { value, .. }) if value.is_finite() && !sass::is_special_float(core) => Some((Body::Float { value, text: String::new() }, core)),
        Some(Body::Float { .. }) => None,
        Some(b) => Some((b, "")),
        None if !core.is_empty() && core.chars().all(|c| !c.is_whitespace() && c != ',') => Some((Body::Other { text: String::new() }, core)),
        None => None,
    }
}

/// [`sass::plain_body`] of the commonest bodies, read byte by byte: a register, a
/// predicate, a hex immediate (`plain_body` tries each kind's prefix in turn); `None`
/// leaves the rest, and any spelling it doubts, to `plain_body`.
fn quick_body(s: &str) -> Option<Body> {
    match s.as_bytes() {
        b"RZ" => Some(Body::Reg { n: sass::RZ }),
        b"URZ" => Some(Body::UReg { n: sass::URZ }),
        b"PT" => Some(Body::Pred { n: 7 }),
        b"UPT" => Some(Body::UPred { n: 7 }),
        [b'R', d @ ..] => register_number(d).map(|n| Body::Reg { n }),
        [b'U', b'R', d @ ..] => register_number(d).map(|n| Body::UReg { n }),
        // As `plain_body` reads them: the number as a `u16`, then cast.
        [b'P', d @ ..] => register_number(d).map(|n| Body::Pred { n: n as u8 }),
        [b'U', b'P', d @ ..] => register_number(d).map(|n| Body::UPred { n: n as u8 }),
        // No register, predicate, barrier or constant starts so: `plain_body` reads an
        // immediate or nothing.
        [b'0', b'x', ..] | [b'-', b'0', b'x', ..] => sass::parse_imm(s).map(|value| Body::Imm { value }),
        _ => None,
    }
}

/// A register's decimal number as `sass::parse_reg_num` reads it: digits, no leading
/// zero, at most `u16::MAX`.
fn register_number(d: &[u8]) -> Option<u16> {
    if d.is_empty() || d.len() > 5 || !d.iter().all(u8::is_ascii_digit) || (d.len() > 1 && d[0] == b'0') {
        return None;
    }
    let n = d.iter().fold(0u32, |n, &c| n * 10 + u32::from(c - b'0'));
    u16::try_from(n).ok()
}

/// `s.split('.')` by a byte scan: a text's dotted runs are short, and `split`'s
/// searcher costs more to set up than the scan.
fn dots(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.bytes().position(|b| b == b'.') {
            Some(i) => {
                rest = Some(&r[i + 1..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// Reads `.A.B.reuse` into `tokens` and `reuse`; `None` where the full parser errs.
fn read_suffixes<'t>(tail: &'t str, tokens: &mut SmallVec<[&'t str; 12]>, reuse: &mut bool) -> Option<()> {
    if tail.is_empty() {
        return Some(());
    }
    for sfx in dots(tail.strip_prefix('.')?) {
        match sfx {
            "" => return None,
            "reuse" => *reuse = true,
            _ => tokens.push(sfx),
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{self, Codec};
    use crate::gen::{random_values, Rng};

    /// The fast reading is the full parser's, or none; `Some(true)` when it read the text.
    fn agrees(t: &str) -> Option<bool> {
        let full = sass::parse_full(t);
        let fast = InstRef::parse(t);
        match &full {
            Ok(full) => {
                if let Some(f) = &fast {
                    assert_eq!(*f, InstRef::of(full), "{t}");
                    assert_eq!(f.to_instruction(), *full, "{t}");
                }
                Some(fast.is_some())
            }
            Err(_) => {
                assert!(fast.is_none(), "{t}: the full parser rejects it, the fast one reads {fast:?}");
                None
            }
        }
    }

    /// Texts the printer makes of every discovered variant, and those texts altered: the
    /// fast parser reads most of them, each exactly as the full parser does.
    #[test]
    fn fast_reading_is_the_full_parsers() {
        let s = crate::spec::load(&[crate::oracle::tools::repo_root().join("corpus/isa-discovered")]).unwrap();
        let c = Codec::new(&s);
        let mut rng = Rng::new(0x7e47);
        let (mut fast, mut total) = (0, 0);
        for v in c.variants() {
            for _ in 0..4 {
                let text = codec::print(v, &random_values(v, &mut rng)).to_string();
                fast += usize::from(agrees(&text) == Some(true));
                total += 1;
                let cut = text.len() - 1 - rng.below(text.len() as u64) as usize;
                let spaced = [text.replacen(' ', "\t", 2), format!("\x0c{text}\x0b"), text.replacen(", ", " ,\r", 1), text.replacen(' ', "\u{a0}", 1)];
                let altered = [text.replacen(", ", " ", 1), text.replacen('R', "R0", 1), text.replacen(".", "..", 1), text.replacen('|', "", 1)];
                for t in spaced.iter().chain(&altered).map(String::as_str).chain([&text[..cut]]) {
                    if t.is_char_boundary(t.len()) {
                        agrees(t);
                    }
                }
            }
        }
        assert!(fast * 10 >= total * 9, "{fast} of {total} printed texts read fast");
    }

    /// The byte-by-byte bodies are `plain_body`'s where they read one, at the edges too
    /// (widths, leading zeros, index past the predicates, bare prefixes).
    #[test]
    fn quick_bodies_are_plain_bodies() {
        let edges = [
            "RZ",
            "URZ",
            "PT",
            "UPT",
            "R0",
            "R255",
            "R65535",
            "R65536",
            "R01",
            "R",
            "UR63",
            "UR0x1",
            "P6",
            "P8",
            "P300",
            "UP7",
            "0x0",
            "-0x1f",
            "0x",
            "-0x",
            "0xffffffffffffffffff",
        ];
        let mut read = 0;
        for t in edges {
            if let Some(b) = quick_body(t) {
                assert_eq!(Some(b), sass::plain_body(t), "{t}");
                read += 1;
            }
        }
        assert!(read >= 12, "{read} of {} read byte by byte", edges.len());
    }

    #[test]
    fn specials_spaces_and_errors_are_left_to_the_full_parser() {
        for t in [
            "@P0 DFMA R0, R0, R0, +INF  ;",
            "@P0 FFMA R0, R1, R3, +INF ;",
            "@P0 DFMA R0, R0, -SNAN , R0 ;",
            "@P0 DFMA R0, R0, R0, -0.0  ;",
            "@P0 HADD2 R155, -|R180|.H0_H0, -|c[0xb] [-0x2494].H1_H1|;",
            "@P0 CALL.REL P0, R0 0x3440;",
        ] {
            assert_eq!(agrees(t), Some(false), "{t}");
        }
        for t in ["DFMA R0, , R1 ;", "@Q1 DFMA R0 ;", "", "DFMA R0, |R1 ;", "DFMA..RZ R0 ;"] {
            assert_eq!(agrees(t), None, "{t}");
        }
        for t in [
            "@!P3 FHFMA.RZ.SAT R1, -|R2|.H1, UR4, R255 ;",
            "LDG.E.128 R12, desc[UR4][R12.64] ;",
            "UTCQMMA tmem[UR38].A_KEEP, gdesc[UR12].B_KEEP;",
            "S2R R0, SR_TID.X ;",
        ] {
            assert_eq!(agrees(t), Some(true), "{t}");
        }
    }
}
