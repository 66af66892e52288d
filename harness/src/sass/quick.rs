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
        let mut tokens = SmallVec::new();
        let (mnemonic, op_end) = read_opcode(rest, &mut tokens)?;
        let n_modifiers = tokens.len();
        let mut operands = SmallVec::new();
        read_operands(&rest[op_end..], &mut tokens, &mut operands)?;
        Some(InstRef { pred, mnemonic, tokens, n_modifiers, operands, terminator, const_spaced: false })
    }
}

/// The mnemonic of the opcode that starts `rest` (`LDG.E.128`, up to the first space), its
/// modifiers pushed to `tokens`, and where the opcode ends; `None` where the full parser
/// errs (a mnemonic not of letters, digits and `_`; an empty modifier).
fn read_opcode<'t>(rest: &'t str, tokens: &mut SmallVec<[&'t str; 12]>) -> Option<(&'t str, usize)> {
    let b = rest.as_bytes();
    let end = b.iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'_')).unwrap_or(b.len());
    if end == 0 {
        return None;
    }
    let mut at = end;
    while b.get(at) == Some(&b'.') {
        let start = at + 1;
        at = b[start..].iter().position(|&c| c == b'.' || is_space(c)).map_or(b.len(), |k| start + k);
        if at == start {
            return None;
        }
        tokens.push(&rest[start..at]);
    }
    // The opcode ends at a space (or the text's end): a mnemonic's other bytes are no mnemonic.
    if at < b.len() && !is_space(b[at]) {
        return None;
    }
    Some((&rest[..end], at))
}

/// The operands after the opcode (`ops`: from the space after it on), split at commas
/// outside brackets as [`sass::parse::split_operands`] splits them, each pushed to `operands`
/// and its suffixes to `tokens`; `None` where one is not read here.
fn read_operands<'t>(ops: &'t str, tokens: &mut SmallVec<[&'t str; 12]>, operands: &mut SmallVec<[OperandRef<'t>; 6]>) -> Option<()> {
    let b = ops.as_bytes();
    if b.iter().all(|&c| is_space(c)) {
        return Some(());
    }
    let mut at = 0;
    loop {
        let (start, mut depth) = (at, 0i32);
        loop {
            at = next_delimiter(b, at);
            match b.get(at) {
                Some(b'[') => depth += 1,
                Some(b']') => depth -= 1,
                Some(b',') if depth != 0 => {}
                // A set (`DEPBAR {5,4,3,2,1,0}`, rare): the full parser reads it.
                Some(b'{') => return None,
                _ => break,
            }
            at += 1;
        }
        let t = trim_end(trim_start(&ops[start..at]));
        if find_space(t).is_some() {
            return None;
        }
        let mark = tokens.len();
        let operand = match plain_operand(t, tokens) {
            Some(o) => o,
            None => {
                tokens.truncate(mark);
                parse_operand(t, tokens)?
            }
        };
        operands.push(operand);
        if at == b.len() {
            return Some(());
        }
        at += 1;
    }
}

/// Where the first `,`, `[`, `]` or `{` of `b` from `at` on is (`b.len()` for none),
/// eight bytes at a time: operands are mostly letters and digits.
fn next_delimiter(b: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // The lowest byte of `x` that is zero has its high bit set here (higher ones may too,
    // after a borrow; the lowest is exact).
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & (ONES << 7);
    while let Some(chunk) = b.get(at..at + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let hits = zero_byte(x ^ (ONES * u64::from(b',')))
            | zero_byte(x ^ (ONES * u64::from(b'[')))
            | zero_byte(x ^ (ONES * u64::from(b']')))
            | zero_byte(x ^ (ONES * u64::from(b'{')));
        if hits != 0 {
            return at + (hits.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + b[at..].iter().position(|c| matches!(c, b',' | b'[' | b']' | b'{')).unwrap_or(b.len() - at)
}

/// The commonest operands, read in one pass: a register or predicate with its suffixes
/// (`R12.H1.reuse`), a hex immediate; `None` leaves the rest to [`parse_operand`] (which
/// reads these as here: no sign, bars or brackets, suffixes from the first dot).
fn plain_operand<'t>(t: &'t str, tokens: &mut SmallVec<[&'t str; 12]>) -> Option<OperandRef<'t>> {
    let b = t.as_bytes();
    if !matches!(b.first(), Some(b'R' | b'U' | b'P' | b'0' | b'-')) {
        return None;
    }
    let dot = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    let body = quick_body(&t[..dot])?;
    // A number runs to its end (`split_suffixes`): `0x1.H` is no immediate with a suffix.
    if dot < b.len() && matches!(body, Body::Imm { .. }) {
        return None;
    }
    let start = tokens.len();
    let mut reuse = false;
    read_suffixes(&t[dot..], tokens, &mut reuse)?;
    Some(OperandRef { suffixes: start..tokens.len(), reuse, ..OperandRef::new(body) })
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
    if bare {
        if let Some((b, sfx)) = quick_mem(core) {
            if !sfx.is_empty() {
                tokens.extend(dots(sfx));
            }
            return Some((b, ""));
        }
    }
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
        None if sass::parse::is_verbatim(core) => Some((Body::Other { text: String::new() }, core)),
        None => None,
    }
}

/// [`sass::plain_body`] of the commonest bodies, read byte by byte: a register, a
/// predicate, a hex immediate (`plain_body` tries each kind's prefix in turn); `None`
/// leaves the rest, and any spelling it doubts, to `plain_body`.
fn quick_body(s: &str) -> Option<Body> {
    let b = s.as_bytes();
    match *b.first()? {
        b'R' => match &b[1..] {
            b"Z" => Some(Body::Reg { n: sass::RZ }),
            d => register_number(d).map(|n| Body::Reg { n }),
        },
        b'U' => match &b[1..] {
            b"RZ" => Some(Body::UReg { n: sass::URZ }),
            b"PT" => Some(Body::UPred { n: 7 }),
            [b'R', d @ ..] => register_number(d).map(|n| Body::UReg { n }),
            // As `plain_body` reads them: the number as a `u16`, then cast.
            [b'P', d @ ..] => register_number(d).map(|n| Body::UPred { n: n as u8 }),
            _ => None,
        },
        b'P' => match &b[1..] {
            b"T" => Some(Body::Pred { n: 7 }),
            d => register_number(d).map(|n| Body::Pred { n: n as u8 }),
        },
        // No register, predicate, barrier or constant starts so: `plain_body` reads an
        // immediate or nothing.
        b'0' | b'-' if b.starts_with(b"0x") || b.starts_with(b"-0x") => sass::parse_imm(s).map(|value| Body::Imm { value }),
        _ => None,
    }
}

/// [`sass::parse_mem_parts`] of the commonest memory operands, read byte by byte:
/// `[R2.64+UR4+-0x10]`, `a[UR5+0x4]`, `desc[UR4][R2.64]` (no other body reads as these
/// start); `None` leaves the rest, and any spelling it doubts, to `parse_mem_parts`.
fn quick_mem(core: &str) -> Option<(Body, &str)> {
    let b = core.as_bytes();
    let (space, bracketed) = match b {
        [b'[', ..] => (MemSpace::Plain, core),
        [b'a', b'[', ..] => (MemSpace::Attr, &core[1..]),
        [b'd', b'e', b's', b'c', b'[', ..] => {
            // `desc[UR4][…]`: the space's uniform register, then the address.
            let close = b.iter().position(|&c| c == b']')?;
            let ureg = uniform_register(&b[5..close])?;
            (MemSpace::Desc { ureg }, core.get(close + 1..).filter(|r| r.starts_with('['))?)
        }
        _ => return None,
    };
    let inner = bracketed.strip_prefix('[')?.strip_suffix(']')?;
    if inner.is_empty() || inner.bytes().any(|c| c == b'[' || c == b']') {
        return None;
    }
    let (mut reg, mut ureg, mut imm, mut suffixes) = (None, None, None, "");
    // As `parse_mem_parts`: a register, a uniform register, an immediate, in that order.
    let mut stage = 0;
    for piece in inner.split('+') {
        let p = piece.as_bytes();
        match p {
            [b'0', b'x', ..] | [b'-', b'0', b'x', ..] if stage <= 2 => {
                imm = Some(sass::parse_int(piece)?);
                stage = 3;
            }
            [b'U', b'R', ..] if stage <= 1 => {
                ureg = Some(uniform_register(p)?);
                stage = 2;
            }
            [b'R', ..] if stage == 0 => {
                let dot = p.iter().position(|&c| c == b'.').unwrap_or(p.len());
                reg = Some(match &p[..dot] {
                    b"RZ" => sass::RZ,
                    [b'R', d @ ..] => register_number(d)?,
                    _ => return None,
                });
                suffixes = piece.get(dot + 1..).unwrap_or_default();
                if dot < p.len() && (suffixes.is_empty() || suffixes.split('.').any(str::is_empty)) {
                    return None;
                }
                stage = 1;
            }
            _ => return None,
        }
    }
    Some((Body::mem(space, reg, ureg, imm), suffixes))
}

/// `URZ` or `UR<n>`, as `sass::parse_reg_num` reads them.
fn uniform_register(b: &[u8]) -> Option<u16> {
    match b {
        b"URZ" => Some(sass::URZ),
        [b'U', b'R', d @ ..] => register_number(d),
        _ => None,
    }
}

/// A register's decimal number as `sass::parse_reg_num` reads it: digits, no leading
/// zero, at most `u16::MAX`.
fn register_number(d: &[u8]) -> Option<u16> {
    if d.is_empty() || d.len() > 5 || (d.len() > 1 && d[0] == b'0') {
        return None;
    }
    let mut n = 0u32;
    for &c in d {
        let digit = c.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        n = n * 10 + u32::from(digit);
    }
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
        if let Err(f) = crate::fuzz::reads_as_the_full_parser(t) {
            panic!("{f}");
        }
        sass::parse_full(t).ok().map(|_| InstRef::parse(t).is_some())
    }

    /// How many of `edges` `fast` reads, each as `full` does (asserted).
    fn read_as<'a, T: PartialEq + std::fmt::Debug>(edges: &[&'a str], fast: impl Fn(&'a str) -> Option<T>, full: impl Fn(&'a str) -> Option<T>) -> usize {
        let mut read = 0;
        for &t in edges {
            if let Some(b) = fast(t) {
                assert_eq!(Some(b), full(t), "{t}");
                read += 1;
            }
        }
        read
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
        let read = read_as(&edges, quick_body, sass::plain_body);
        assert!(read >= 12, "{read} of {} read byte by byte", edges.len());
    }

    /// Texts of SASS-like fragments joined at random (registers, suffixes, brackets,
    /// signs, bars, constants, descriptors, floats, stray spaces and dots): the fast
    /// parser reads each as the full parser does, or leaves it to it; and it reads many.
    #[test]
    fn fragments_joined_at_random_read_as_the_full_parser_reads_them() {
        // A table of data: one line a row.
        #[rustfmt::skip]
        const FRAGMENTS: [&str; 51] = [
            "R1", "R255", "RZ", "UR4", "URZ", "P0", "PT", "UP1", "B2", "R01", ".reuse", ".64", ".U32", ".H1", ".", "..", "[", "]", "+", "-", "!", "~",
            "|", "0x10", "-0x1f", "0x", "1.5", "-2e+10", "+INF", "-QNAN", "c[0x0]", "cx[UR2]", "desc[UR4]", "gdesc[UR12]", "a", ".B_KEEP",
            "SR_TID.X", "???255", ", ", ",", " ", "\t", "@", "@!P1 ", "IMAD", ".MOV", ";", " ;", "{5,4}", "{", "}",
        ];
        let mut rng = Rng::new(0x0f_a9_3e);
        let (mut fast, mut total) = (0, 0);
        for _ in 0..60_000 {
            let mnemonic = ["IMAD", "LDG.E", "@P0 ST.E.64", "FADD.FTZ", "", "HADD2"][rng.below(6) as usize];
            let mut t = format!("{mnemonic} ");
            for _ in 0..=rng.below(12) {
                t.push_str(FRAGMENTS[rng.below(FRAGMENTS.len() as u64) as usize]);
            }
            fast += usize::from(agrees(&t) == Some(true));
            total += 1;
        }
        assert!(fast * 20 >= total, "{fast} of {total} texts read fast");
    }

    /// The byte-by-byte memory operands are `parse_mem_parts`' where they read one, at the
    /// edges too (component order, empty suffixes, widths, a descriptor's register).
    #[test]
    fn quick_memory_operands_are_parse_mem_parts() {
        let edges = [
            "[R1]",
            "[RZ]",
            "[URZ]",
            "[R2.64+UR4+-0x10]",
            "[R2.U32.X+0x8]",
            "[R01]",
            "[R1.]",
            "[R1..64]",
            "[R1.64.]",
            "[UR4+R1]",
            "[UR4.64]",
            "[0x10+R1]",
            "[R1+0x1+0x2]",
            "[R1+]",
            "[]",
            "[0xffffffffffffffff]",
            "[0x10000000000000000]",
            "[-0x8000000000000000]",
            "a[UR5+0x4]",
            "a[R1.X]",
            "desc[UR4][R2.64]",
            "desc[URZ][R1.U32+0x4]",
            "desc[R4][R2]",
            "desc[UR4]",
            "desc[UR4]x[R2]",
            "[R1][R2]",
        ];
        let read = read_as(&edges, quick_mem, |t| sass::parse_mem_parts(t).ok());
        assert!(read >= 10, "{read} of {} read byte by byte", edges.len());
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
            "DEPBAR {5,4,3,2,1,0} ;",
            "DEPBAR.LE SB0, 0x0, {5,4,3,2,1,0} ;",
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
