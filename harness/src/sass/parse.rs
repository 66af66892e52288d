//! Instructions and operands read from text as nvdisasm prints them.

use super::*;

/// Text that is not an instruction, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ParseError {
    /// Where the trouble starts: 1-based, in bytes.
    pub column: usize,
    /// What was expected there.
    pub message: String,
}

/// Why an operand's text is not an operand ([`parse_operand`]); each names the operand.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OperandError {
    /// No text.
    #[error("expected an operand, found nothing")]
    Empty,
    /// `|R1` without its closing bar.
    #[error("unclosed '|' in '{0}'")]
    UnclosedBars(String),
    /// `|R1.H0|.H1`: suffixes on both sides of the bars.
    #[error("suffixes both inside and outside '|…|' in '{0}'")]
    SuffixesInsideAndOutside(String),
    /// No body reads the text.
    #[error("cannot read operand '{0}'")]
    Unreadable(String),
    /// Text after the operand that is no `.suffix`.
    #[error("unexpected '{tail}' after operand in '{operand}'")]
    Trailing {
        /// What follows the operand.
        tail: String,
        /// The operand's whole text.
        operand: String,
    },
    /// `R0..H1`, `R0.`.
    #[error("empty suffix in '{0}'")]
    EmptySuffix(String),
}

/// Why a text is not a memory operand ([`parse_mem`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    /// The space is not followed by one `[…]`.
    #[error("expected '[…]' after the space, found '{0}'")]
    NoBrackets(String),
    /// A bracket inside the address.
    #[error("unexpected bracket inside '[{0}]'")]
    NestedBracket(String),
    /// `[]`.
    #[error("empty brackets")]
    EmptyBrackets,
    /// A component after the immediate, which comes last.
    #[error("'{0}' follows the immediate")]
    AfterImmediate(String),
    /// `[R0.]`, `[R0..64]`.
    #[error("empty suffix in '{0}'")]
    EmptySuffix(String),
    /// A component that is not R, UR and immediate, in that order.
    #[error("'{0}' is not a register, uniform register or immediate in that order (R+UR+imm)")]
    Component(String),
    /// `desc[`, `cx[` or `c[` (the space named) without its `]`.
    #[error("unclosed '{0}['")]
    Unclosed(&'static str),
    /// `desc[R4]`: the space's brackets hold no uniform register.
    #[error("expected a uniform register in '{space}[{inner}]'")]
    NotUniform {
        /// `desc` or `cx`.
        space: &'static str,
        /// What the brackets hold.
        inner: String,
    },
    /// `c[UR0]`: no bank number.
    #[error("expected a bank number in 'c[{0}]'")]
    Bank(String),
    /// No space nvdisasm prints.
    #[error("'{0}' does not start with '[', 'desc[', 'gdesc[', 'idesc[', 'tmem[', 'a[', 'c[' or 'cx['")]
    Space(String),
}

fn perr(column: usize, message: impl Into<String>) -> ParseError {
    ParseError { column, message: message.into() }
}

impl std::str::FromStr for Instruction {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        parse_instruction(s)
    }
}

/// Parses one instruction as nvdisasm prints it (without address or encoding comments).
pub fn parse_instruction(text: &str) -> Result<Instruction, ParseError> {
    // A plain text (nearly every one nvdisasm or the printer makes) is read in one pass
    // over borrowed tokens, as the full parser reads it (`quick`'s tests), then copied.
    match InstRef::parse(text) {
        Some(i) => Ok(i.to_instruction()),
        None => parse_full(text),
    }
}

/// [`parse_instruction`] without the one-pass reading: every text, and what is wrong
/// with one that is no instruction.
pub(crate) fn parse_full(text: &str) -> Result<Instruction, ParseError> {
    let trimmed_end = text.trim_end();
    let (body, terminator) = match trimmed_end.strip_suffix(';') {
        // A float special ends the operands with a space of its own (`+INF ;` has the
        // terminator `;`, `+INF  ;` has ` ;`).
        Some(b) => {
            let spaces = b.len() - b.trim_end_matches(' ').len();
            // Only a text ending in a special's spelling can end in one (a quick look first).
            let maybe_special = ["INF", "NAN", "-0.0"].iter().any(|e| b.trim_end().ends_with(e));
            let own = usize::from(maybe_special && last_operand(b).split_whitespace().last().is_some_and(is_special_float));
            (b.trim_end_matches(' '), if spaces > own { Terminator::SpaceSemicolon } else { Terminator::Semicolon })
        }
        None => (trimmed_end, Terminator::Missing),
    };
    let lead = body.len() - body.trim_start().len();
    let mut rest = body.trim_start();
    let mut col = lead + 1;
    if rest.is_empty() {
        return Err(perr(col, "expected an instruction, found nothing"));
    }
    let mut pred = None;
    if let Some(p) = rest.strip_prefix('@') {
        let (negated, p) = match p.strip_prefix('!') {
            Some(q) => (true, q),
            None => (false, p),
        };
        let end = p.find(char::is_whitespace).ok_or_else(|| perr(col, "predicate without an instruction after it"))?;
        let (index, uniform) = match parse_body(&p[..end]) {
            Some(Body::Pred { n }) => (n, false),
            Some(Body::UPred { n }) => (n, true),
            _ => return Err(perr(col, format!("expected a predicate P0..P6, PT, UP0..UP6 or UPT after '@', found '{}'", &p[..end]))),
        };
        pred = Some(Predicate { negated, index, uniform });
        let consumed = rest.len() - p[end..].len();
        col += consumed;
        let r2 = p[end..].trim_start();
        col += p[end..].len() - r2.len();
        rest = r2;
    }
    let op_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let opcode = &rest[..op_end];
    let mut parts = opcode.split('.');
    let mnemonic = parts.next().unwrap_or_default().to_string();
    if mnemonic.is_empty() || !mnemonic.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(perr(col, format!("expected a mnemonic, found '{opcode}'")));
    }
    let mut modifiers: Vec<String> = Vec::with_capacity(opcode.bytes().filter(|&b| b == b'.').count());
    modifiers.extend(parts.map(str::to_string));
    if modifiers.iter().any(|m| m.is_empty()) {
        return Err(perr(col, format!("empty modifier in '{opcode}'")));
    }
    col += op_end;
    let ops_text = &rest[op_end..];
    let mut operands = Vec::with_capacity(1 + ops_text.bytes().filter(|&b| b == b',').count());
    let mut const_spaced = false;
    if !ops_text.trim().is_empty() {
        let mut c = col;
        for piece in split_operands(ops_text) {
            let t = piece.trim();
            let at = c + (piece.len() - piece.trim_start().len());
            // `c[0x0] [0x4]`: the same operand as `c[0x0][0x4]`, spelled with a space.
            let spaced = t.contains(' ') && t.contains("] [");
            const_spaced |= spaced;
            let t = if spaced { std::borrow::Cow::Owned(t.replacen("] [", "][", 1)) } else { std::borrow::Cow::Borrowed(t) };
            if let Some(one) = special_with_suffixes(&t) {
                operands.push(one);
            } else if let Some((first, second)) = joined_pair(&t) {
                operands.extend([first, second]);
            } else {
                operands.push(parse_operand(&t).map_err(|e| perr(at, e.to_string()))?);
            }
            c += piece.len() + 1;
        }
    }
    Ok(Instruction { pred, mnemonic, modifiers, operands, terminator, const_spaced })
}

/// A float special with suffixes, which nvdisasm prints after the special's own space
/// (`-QNAN .H0`: F2FP's `UNPACK_B` immediate and the half it reads), read as one operand.
fn special_with_suffixes(t: &str) -> Option<Operand> {
    let (a, b) = t.split_once(' ')?;
    if !is_special_float(a) || !b.starts_with('.') || b.contains(' ') {
        return None;
    }
    let one = parse_operand(&format!("{a}{b}")).ok()?;
    matches!(one.body, Body::Float { .. }).then_some(one)
}

/// Two operands printed with a space between them and no comma (`R0 0x3440`, see
/// [`Operand::joined`]), each readable alone; `None` for anything else.
fn joined_pair(t: &str) -> Option<(Operand, Operand)> {
    let (a, b) = t.split_once(' ')?;
    let first = parse_operand(a).ok()?;
    let second = Operand { joined: true, ..parse_operand(b.trim_start()).ok()? };
    Some((first, second))
}

/// Splits on commas outside brackets.
pub(crate) fn split_operands(s: &str) -> impl Iterator<Item = &str> {
    let (mut depth, mut braces) = (0i32, 0u32);
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        // Brackets and commas are ASCII: bytes suffice. From `start` on, not skipped to
        // (`skip` walks the bytes before it again for every piece).
        for (k, &b) in s.as_bytes()[start..].iter().enumerate() {
            match b {
                b'[' => depth += 1,
                b']' => depth -= 1,
                // A set (`DEPBAR {5,4,3,2,1,0}`) is one operand, as a bracketed address is;
                // a `}` that closes none is a plain byte.
                b'{' => braces += 1,
                b'}' if braces > 0 => braces -= 1,
                b',' if depth == 0 && braces == 0 => {
                    let piece = &s[start..start + k];
                    start += k + 1;
                    return Some(piece);
                }
                _ => {}
            }
        }
        done = true;
        Some(&s[start..])
    })
}

/// The last of [`split_operands`]' pieces.
fn last_operand(s: &str) -> &str {
    split_operands(s).last().unwrap_or_default()
}

/// Parses one operand as nvdisasm prints it (`-|R2|.H1`, `c[0x0][0x210]`,
/// `desc[UR4][R2.64+0x10]`); the message says what was expected.
pub fn parse_operand(t: &str) -> Result<Operand, OperandError> {
    if t.is_empty() {
        return Err(OperandError::Empty);
    }
    let mut s = t;
    let mut neg = false;
    let mut not = false;
    let mut abs = false;
    // A leading '-' belongs to the operand unless it starts a number.
    if let Some(r) = s.strip_prefix('-') {
        if !r.starts_with(|c: char| c.is_ascii_digit()) && !r.starts_with("INF") && !r.starts_with("QNAN") && !r.starts_with("SNAN") && !r.starts_with("NAN") {
            neg = true;
            s = r;
        }
    }
    if let Some(r) = s.strip_prefix('!').or_else(|| s.strip_prefix('~')) {
        not = true;
        s = r;
    }
    // The suffixes are `tail` then `after` (`|R1.H1|.reuse`), read as one string.
    let (core, tail, after) = if let Some(r) = s.strip_prefix('|') {
        let end = r.find('|').ok_or_else(|| OperandError::UnclosedBars(t.into()))?;
        abs = true;
        let (inner, inner_sfx) = split_suffixes(&r[..end]);
        let after = &r[end + 1..];
        if !inner_sfx.is_empty() && !after.is_empty() && after != ".reuse" {
            return Err(OperandError::SuffixesInsideAndOutside(t.into()));
        }
        (inner, inner_sfx, after)
    } else {
        // Suffixes start at the first '.' outside brackets and not inside a number.
        let (c, tail) = split_suffixes(s);
        (c, tail, "")
    };
    let parsed = parse_known_body(core);
    // A bracketed text that is no memory operand stays verbatim (`Body::Other`).
    let bare = tail.is_empty() && after.is_empty();
    let mem = if parsed.is_none() && core.contains('[') { parse_mem(core).ok() } else { None };
    // Only a descriptor carries suffixes after its brackets (`gdesc[UR12].B_KEEP`).
    let mem = mem.filter(|(b, _)| bare || matches!(b, Body::Mem { space: MemSpace::Named { .. }, .. }));
    let (body, suffixes) = match mem {
        Some(m) => m,
        None => (parsed.or_else(|| other_body(core)).ok_or_else(|| OperandError::Unreadable(t.into()))?, vec![]),
    };
    let mut op = Operand { neg, abs, not, body, suffixes, reuse: false, joined: false, after_bars: false };
    // A non-empty `tail` starts with '.', and `after` is empty or `.reuse` when it is not:
    // reading them in turn is reading them joined.
    read_suffixes(tail, t, &mut op)?;
    read_suffixes(after, t, &mut op)?;
    op.after_bars = after.split('.').any(|x| !x.is_empty() && x != "reuse");
    Ok(op)
}

/// Reads `.A.B.reuse` (`tail`) into `op`'s suffixes and reuse flag; `t` is the operand.
fn read_suffixes(tail: &str, t: &str, op: &mut Operand) -> Result<(), OperandError> {
    if tail.is_empty() {
        return Ok(());
    }
    let tail = tail.strip_prefix('.').ok_or_else(|| OperandError::Trailing { tail: tail.into(), operand: t.into() })?;
    for sfx in tail.split('.') {
        if sfx.is_empty() {
            return Err(OperandError::EmptySuffix(t.into()));
        }
        if sfx == "reuse" {
            op.reuse = true;
        } else {
            op.suffixes.push(sfx.to_string());
        }
    }
    Ok(())
}

/// A memory operand (`[R2.64+UR4+-0x10]`, `desc[UR4][R2.64]`, `a[UR5+0x4]`,
/// `c[0x0][R0]`, `cx[UR2][R1+0x8]`): its body and the base register's suffixes.
/// Components come in nvdisasm's order, register, uniform register, immediate, each once.
pub fn parse_mem(s: &str) -> Result<(Body, Vec<String>), MemError> {
    let (body, suffixes) = parse_mem_parts(s)?;
    Ok((body, if suffixes.is_empty() { vec![] } else { suffixes.split('.').map(str::to_string).collect() }))
}

/// [`parse_mem`] without allocating: the base register's suffixes as printed, `64.U32`
/// (empty for none; never with an empty suffix).
pub(crate) fn parse_mem_parts(s: &str) -> Result<(Body, &str), MemError> {
    let (space, rest) = mem_space(s)?;
    let inner = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')).ok_or_else(|| MemError::NoBrackets(rest.into()))?;
    if inner.contains(['[', ']']) {
        return Err(MemError::NestedBracket(inner.into()));
    }
    if inner.is_empty() {
        return Err(MemError::EmptyBrackets);
    }
    let (mut reg, mut ureg, mut imm, mut suffixes) = (None, None, None, "");
    // The next component allowed: 0 register, 1 uniform register, 2 immediate, 3 none.
    let mut stage = 0;
    for piece in inner.split('+') {
        if stage > 2 {
            return Err(MemError::AfterImmediate(piece.into()));
        }
        let (r, sfx) = piece.split_once('.').unwrap_or((piece, ""));
        if let Some(v) = parse_int(piece) {
            imm = Some(v);
            stage = 3;
        } else if let Some(n) = parse_reg_num(piece, "UR", "URZ", URZ).filter(|_| stage <= 1) {
            ureg = Some(n);
            stage = 2;
        } else if let Some(n) = parse_reg_num(r, "R", "RZ", RZ).filter(|_| stage == 0) {
            reg = Some(n);
            suffixes = sfx;
            if (!sfx.is_empty() && sfx.split('.').any(str::is_empty)) || piece.ends_with('.') {
                return Err(MemError::EmptySuffix(piece.into()));
            }
            stage = 1;
        } else {
            return Err(MemError::Component(piece.into()));
        }
    }
    Ok((Body::mem(space, reg, ureg, imm), suffixes))
}

/// The space before a memory operand's brackets, and the rest from `[` on.
fn mem_space(s: &str) -> Result<(MemSpace, &str), MemError> {
    // `[…]` at the start of `r`: its contents and the length used.
    fn bracketed(r: &str) -> Option<(&str, usize)> {
        let inner = r.strip_prefix('[')?;
        let end = inner.find(']')?;
        Some((&inner[..end], end + 2))
    }
    let ureg_in = |r: &'_ str, space: &'static str| -> Result<(u16, usize), MemError> {
        let (u, used) = bracketed(r).ok_or(MemError::Unclosed(space))?;
        let n = parse_reg_num(u, "UR", "URZ", URZ).ok_or_else(|| MemError::NotUniform { space, inner: u.into() })?;
        Ok((n, used))
    };
    // `desc[UR4][R2]` has a descriptor space; `desc[UR7]` alone is a descriptor.
    if let Some(r) = s.strip_prefix("desc").filter(|r| r.find(']').is_some_and(|e| r[e + 1..].starts_with('['))) {
        let (ureg, used) = ureg_in(r, "desc")?;
        return Ok((MemSpace::Desc { ureg }, &r[used..]));
    }
    if let Some((name, r)) = Descriptor::ALL.iter().find_map(|d| s.strip_prefix(d.prefix()).filter(|r| r.starts_with('[')).map(|r| (*d, r))) {
        return Ok((MemSpace::Named { name }, r));
    }
    if let Some(r) = s.strip_prefix("cx") {
        let (ureg, used) = ureg_in(r, "cx")?;
        return Ok((MemSpace::ConstX { ureg }, &r[used..]));
    }
    if let Some(r) = s.strip_prefix('c') {
        let (b, used) = bracketed(r).ok_or(MemError::Unclosed("c"))?;
        let bank = parse_int(b).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| MemError::Bank(b.into()))?;
        return Ok((MemSpace::Const { bank }, &r[used..]));
    }
    if let Some(r) = s.strip_prefix('a') {
        return Ok((MemSpace::Attr, r));
    }
    if s.starts_with('[') {
        return Ok((MemSpace::Plain, s));
    }
    Err(MemError::Space(s.into()))
}

pub(crate) fn split_suffixes(s: &str) -> (&str, &str) {
    // No dot, no suffix (most operands): found by `memchr`, before the checks below.
    if !s.as_bytes().contains(&b'.') {
        return (s, "");
    }
    if looks_numeric(s) {
        return split_float_selector(s);
    }
    let mut depth = 0;
    // Brackets and dots are ASCII: bytes suffice.
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b'.' if depth == 0 => return (&s[..i], &s[i..]),
            _ => {}
        }
    }
    (s, "")
}

/// A decimal float's dots are its own, but for a selector after it: nvdisasm prints F2FP's
/// `UNPACK_B` immediate as a float with the half it reads (`4.5736980577097704378e-41.H0`).
/// A dot before a capital letter starts the suffixes; a hex number runs to its end (`0x1.H`
/// is no immediate with a suffix).
fn split_float_selector(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    let digits = s.trim_start_matches(['-', '+']);
    if digits.starts_with("0x") {
        return (s, "");
    }
    match (1..b.len()).find(|&i| b[i - 1] == b'.' && b[i].is_ascii_uppercase()) {
        Some(i) => (&s[..i - 1], &s[i - 1..]),
        None => (s, ""),
    }
}

fn looks_numeric(s: &str) -> bool {
    let s = s.trim_start_matches(['-', '+']);
    s.starts_with(|c: char| c.is_ascii_digit()) || s.starts_with("INF") || s.starts_with("QNAN") || s.starts_with("SNAN") || s.starts_with("NAN")
}

// Inlined, its constant names are compared in place rather than by a call to memcmp.
#[inline]
pub(crate) fn parse_reg_num(s: &str, prefix: &str, zero: &str, zval: u16) -> Option<u16> {
    // `zero` starts with `prefix`: what does not is neither.
    let d = s.strip_prefix(prefix)?;
    if s == zero {
        return Some(zval);
    }
    if d.is_empty() || !d.chars().all(|c| c.is_ascii_digit()) || (d.len() > 1 && d.starts_with('0')) {
        return None;
    }
    d.parse().ok()
}

/// An integer immediate (`0x10`, `-0x8`) that fits an `i64`.
pub fn parse_int(s: &str) -> Option<i64> {
    parse_imm(s).and_then(|v| i64::try_from(v).ok())
}

/// An immediate operand's number: hex of at most 64 bits, either sign (a 64-bit field
/// prints unsigned, so 0x8000000000000000 and above are immediates too).
pub fn parse_imm(s: &str) -> Option<i128> {
    let (neg, d) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    // nvdisasm prints integers in hex; decimal numbers are floats.
    let h = d.strip_prefix("0x")?;
    if h.is_empty() {
        return None;
    }
    // Digit by digit (`u64::from_str_radix` reads a sign too, and costs more): none past 64 bits.
    let mut v = 0u64;
    for c in h.bytes() {
        let digit = (c as char).to_digit(16)?;
        v = v.checked_mul(16)? | u64::from(digit);
    }
    Some(if neg { -i128::from(v) } else { i128::from(v) })
}

/// Quiet and signalling NaNs as doubles (the quiet bit is mantissa bit 51).
pub const QNAN_BITS: u64 = 0x7ff8_0000_0000_0000;
/// The signalling NaN nvdisasm's `+SNAN` reads as (quiet bit clear).
pub const SNAN_BITS: u64 = 0x7ff4_0000_0000_0000;

/// A float immediate as nvdisasm prints it (`0.5`, `1e+10`, `+INF`, `-QNAN`, `+SNAN`), with
/// the NaN's sign and quiet bit kept; `None` for hex (an integer) or other text.
pub fn parse_float(s: &str) -> Option<f64> {
    let nan = |bits: u64| Some(f64::from_bits(bits));
    match s {
        "+INF" | "INF" => return Some(f64::INFINITY),
        "-INF" => return Some(f64::NEG_INFINITY),
        // The sign of a NaN is a bit of the word: `-QNAN` must read back negative, and
        // `SNAN` keeps its quiet bit clear.
        "+QNAN" | "QNAN" | "NAN" | "+NAN" => return nan(QNAN_BITS),
        "-QNAN" | "-NAN" => return nan(QNAN_BITS | 1 << 63),
        "+SNAN" | "SNAN" => return nan(SNAN_BITS),
        "-SNAN" => return nan(SNAN_BITS | 1 << 63),
        _ => {}
    }
    if s.starts_with("0x") || s.starts_with("-0x") {
        return None;
    }
    if !s.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')) {
        return None;
    }
    s.parse().ok()
}

/// An operand's body without decorations (`R2`, `c[0x0][0x10]`, `SR_TID.X`); `None` for
/// empty text or text with a space or comma.
pub fn parse_body(s: &str) -> Option<Body> {
    parse_known_body(s).or_else(|| other_body(s))
}

/// Verbatim text that is no other body (`SR_TID.X`, `1D`, a set `{5,4,3,2,1,0}`).
fn other_body(s: &str) -> Option<Body> {
    is_verbatim(s).then(|| Body::Other { text: s.to_string() })
}

/// Whether `s` reads as a verbatim body: not empty, no whitespace, and no comma but
/// inside a set's braces.
pub(crate) fn is_verbatim(s: &str) -> bool {
    let set = s.len() >= 2 && s.starts_with('{') && s.ends_with('}') && !s[1..s.len() - 1].contains(['{', '}']);
    !s.is_empty() && s.chars().all(|c| !c.is_whitespace() && (c != ',' || set))
}

/// [`parse_body`] without its verbatim fallback (which allocates: a memory operand is tried
/// before it).
fn parse_known_body(s: &str) -> Option<Body> {
    match plain_body(s)? {
        Body::Float { value, .. } => Some(Body::Float { value, text: if is_special_float(s) { format!("{s} ") } else { s.to_string() } }),
        b => Some(b),
    }
}

/// `r.split_once("][")` by a byte scan (a `&str` pattern sets up a searcher first, which
/// costs more than these short texts' scan).
fn split_brackets(r: &str) -> Option<(&str, &str)> {
    let i = r.as_bytes().windows(2).position(|w| w == b"][")?;
    Some((&r[..i], &r[i + 2..]))
}

/// [`parse_known_body`] without allocating: a float's `text` is left empty (it is `s`,
/// with a space after a special's spelling).
pub(crate) fn plain_body(s: &str) -> Option<Body> {
    if s.is_empty() {
        return None;
    }
    if let Some(n) = parse_reg_num(s, "UR", "URZ", URZ) {
        return Some(Body::UReg { n });
    }
    if let Some(n) = parse_reg_num(s, "R", "RZ", RZ) {
        return Some(Body::Reg { n });
    }
    if let Some(n) = parse_reg_num(s, "UP", "UPT", 7) {
        return Some(Body::UPred { n: n as u8 });
    }
    if let Some(n) = parse_reg_num(s, "P", "PT", 7) {
        return Some(Body::Pred { n: n as u8 });
    }
    if let Some(n) = s.strip_prefix('B').filter(|d| !d.is_empty() && d.len() <= 2 && d.bytes().all(|c| c.is_ascii_digit())) {
        return Some(Body::Barrier { n: n.parse().ok()? });
    }
    if let Some(r) = s.strip_prefix("cx[") {
        let (u, rest) = split_brackets(r)?;
        let off = rest.strip_suffix(']')?;
        let ureg = parse_reg_num(u, "UR", "URZ", URZ)?;
        return Some(Body::ConstX { ureg, offset: parse_int(off)? });
    }
    if let Some(r) = s.strip_prefix("c[") {
        let (b, rest) = split_brackets(r)?;
        let off = rest.strip_suffix(']')?;
        let bank = u32::try_from(parse_int(b)?).ok()?;
        return Some(Body::Const { bank, offset: parse_int(off)? });
    }
    if let Some(v) = parse_imm(s) {
        return Some(Body::Imm { value: v });
    }
    parse_float(s).map(|value| Body::Float { value, text: String::new() })
}
