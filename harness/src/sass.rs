//! SASS text as nvdisasm prints it: a structured instruction, its printer and its parser.
//!
//! Both directions meet here: the codec prints decoded words into this form and the
//! assembler reads it back; the nvdisasm oracle parses the tool's lines into it, so the
//! two can be compared structurally (meaning) and textually (syntax) apart.

use serde::Serialize;
use std::fmt;

/// The guard before an instruction: `@P0`, `@!PT`, `@UP1`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Predicate {
    /// `@!P0`: the instruction runs where the predicate is false.
    pub negated: bool,
    /// 0..=6 for P0..P6, 7 for PT.
    pub index: u8,
    /// `@UP0`: a uniform predicate guards the instruction (uniform-datapath forms).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub uniform: bool,
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("@")?;
        if self.negated {
            f.write_str("!")?;
        }
        if self.uniform {
            f.write_str("U")?;
        }
        if self.index == 7 {
            f.write_str("PT")
        } else {
            write!(f, "P{}", self.index)
        }
    }
}

/// What an operand names, without its decorations.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Body {
    /// `R<n>`; RZ is 255.
    Reg { n: u16 },
    /// `UR<n>`; [`URZ`] is the zero register, whose index depends on the architecture
    /// (63 on SM90, 255 on SM100): the codec maps it.
    UReg { n: u16 },
    /// `P<n>`/`PT` (7).
    Pred { n: u8 },
    /// `UP<n>`/`UPT` (7).
    UPred { n: u8 },
    /// `B<n>`: a convergence barrier register (`BSSY B0, …`, `BSYNC B0`).
    Barrier { n: u8 },
    /// Integer immediate as printed (`0x10`, `-0x8`). Wider than a word's half: a 64-bit
    /// field prints unsigned (`MOV.64 R22, 0xfff8000000000000`), a signed one down to -2^63.
    Imm { value: i128 },
    /// Floating immediate; `text` is kept because nvdisasm's float formatting is syntax.
    /// The value's bits are kept too: `+SNAN` is a NaN with the quiet bit clear. Specials
    /// (`±INF`, `±QNAN`, `±SNAN`, `-0.0`) carry nvdisasm's trailing space in `text`.
    Float { value: f64, text: String },
    /// `c[bank][offset]`.
    Const { bank: u32, offset: i64 },
    /// `cx[URn][offset]`.
    ConstX { ureg: u16, offset: i64 },
    /// A memory address, `[R1.64+UR4+-0x10]`, and what stands before its brackets
    /// (`desc[UR4]`, `a`, `c[0x0]`, `cx[UR2]`). The components are those printed: nvdisasm
    /// leaves some out (`codec::conventions::mem_printed`); the base register's suffixes
    /// (`.64`, `.U32`, `.X4`) are the operand's [`Operand::suffixes`]. A constant bank
    /// with a lone immediate is [`Body::Const`]/[`Body::ConstX`] (see [`Body::mem`]).
    Mem { space: MemSpace, reg: Option<u16>, ureg: Option<u16>, imm: Option<i64> },
    /// Anything else, verbatim (memory operands, labels, …).
    Other { text: String },
}

/// What stands before a memory operand's brackets.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "space", rename_all = "snake_case")]
pub enum MemSpace {
    /// `[…]`.
    Plain,
    /// `desc[URn][…]`: a memory descriptor in a uniform register.
    Desc { ureg: u16 },
    /// `a[…]`: attribute space.
    Attr,
    /// `c[bank][…]`.
    Const { bank: u32 },
    /// `cx[URn][…]`.
    ConstX { ureg: u16 },
    /// A descriptor or tensor-memory operand whose brackets are its components:
    /// `desc[UR7]`, `gdesc[UR0]`, `idesc[UR1]`, `tmem[UR12+-0x1f000000]`.
    Named { name: Descriptor },
}

/// The name before a descriptor operand's brackets ([`MemSpace::Named`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Descriptor {
    /// `desc[UR7]` alone (UTMALDG, UBLKCP): a descriptor, not `desc[UR][…]`'s prefix.
    Desc,
    /// `gdesc[UR0]`: a matrix descriptor (HGMMA, UTCHMMA).
    GDesc,
    /// `idesc[UR1]`: an instruction descriptor (UTCHMMA).
    IDesc,
    /// `tmem[UR12+0x10]`: tensor memory (LDTM, STTM, UTC*).
    Tmem,
}

impl Descriptor {
    /// Every descriptor name, for parsers that try each.
    pub const ALL: [Descriptor; 4] = [Descriptor::Desc, Descriptor::GDesc, Descriptor::IDesc, Descriptor::Tmem];
    /// The name as printed before the brackets (`gdesc`).
    pub fn prefix(self) -> &'static str {
        match self {
            Descriptor::Desc => "desc",
            Descriptor::GDesc => "gdesc",
            Descriptor::IDesc => "idesc",
            Descriptor::Tmem => "tmem",
        }
    }
}

/// A memory operand's space and printed components: register, uniform register, immediate.
pub type MemParts = (MemSpace, Option<u16>, Option<u16>, Option<i64>);

impl Body {
    /// A memory operand's body: `c[bank][imm]` and `cx[UR][imm]` are the constant kinds
    /// (the same text, one structure, whichever form printed it).
    pub fn mem(space: MemSpace, reg: Option<u16>, ureg: Option<u16>, imm: Option<i64>) -> Body {
        match (space, reg, ureg, imm) {
            (MemSpace::Const { bank }, None, None, Some(offset)) => Body::Const { bank, offset },
            (MemSpace::ConstX { ureg }, None, None, Some(offset)) => Body::ConstX { ureg, offset },
            _ => Body::Mem { space, reg, ureg, imm },
        }
    }

    /// The memory view of a body: a memory operand, or a constant as one.
    pub fn as_mem(&self) -> Option<MemParts> {
        match *self {
            Body::Mem { space, reg, ureg, imm } => Some((space, reg, ureg, imm)),
            Body::Const { bank, offset } => Some((MemSpace::Const { bank }, None, None, Some(offset))),
            Body::ConstX { ureg, offset } => Some((MemSpace::ConstX { ureg }, None, None, Some(offset))),
            _ => None,
        }
    }
}

/// `RZ`, the zero register: R255 on every architecture.
pub const RZ: u16 = 255;
/// `URZ`, whatever its index on the architecture (see [`Body::UReg`]).
pub const URZ: u16 = u16::MAX;

/// nvdisasm prints these float spellings with a space after them (`+INF , R2`, `-0.0  ;`).
pub fn is_special_float(text: &str) -> bool {
    matches!(text.trim_end(), "+INF" | "-INF" | "+QNAN" | "-QNAN" | "+SNAN" | "-SNAN" | "-0.0")
}

/// One printed operand: a [`Body`] with its decorations (`-|R2|.H1.reuse`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Operand {
    /// A leading `-`.
    pub neg: bool,
    /// `|…|` bars around the body.
    pub abs: bool,
    /// `!P0`, `~R0`.
    pub not: bool,
    /// What the operand names.
    pub body: Body,
    /// Selectors and modifiers after the operand (`B3210`, `H1`), `reuse` excluded.
    pub suffixes: Vec<String>,
    /// `.reuse`: the operand-reuse cache flag (printed only in some control-bit combinations).
    pub reuse: bool,
    /// Printed after the operand before it with a space, not a comma: a call's or return's
    /// target after its register, `CALL.REL P0, R0 0x3440`, `RET.REL P0, UR0 0x10`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub joined: bool,
    /// The suffixes print after the `|…|` bars (`-|R0|.H0_H0`, `|R6|.reuse.H1`), not
    /// inside them (`|UR6.H1_H1|`): nvdisasm's choice differs per form and operand (the
    /// page states it, see `spec::OperandSpec::suffixes_after_bars`). Set only with `abs`
    /// and suffixes, so that two readings of one text compare equal.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub after_bars: bool,
}

impl Operand {
    /// A bare operand: no decorations, suffixes or reuse.
    pub fn new(body: Body) -> Operand {
        Operand { neg: false, abs: false, not: false, body, suffixes: vec![], reuse: false, joined: false, after_bars: false }
    }
}

/// The terminator is `" ;"` or `";"`: spacing, not meaning (nvdisasm's choice depends on
/// the instruction and its barrier bits; `codec::conventions` learns it). A float special
/// before it brings its own space (`+INF  ;` is `+INF ` and ` ;`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Terminator {
    /// ` ;`.
    SpaceSemicolon,
    /// `;`.
    Semicolon,
    /// No `;` at all: a text typed by hand (the assembler takes it).
    Missing,
}

/// One instruction as nvdisasm prints it: `@P0 DFMA.RM R4, -R2, c[0x0][0x210], |R8| ;`.
/// Its `Display` prints that text; [`parse_instruction`] reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Instruction {
    /// The guard; `None` when none is printed (nvdisasm leaves out `@PT`).
    pub pred: Option<Predicate>,
    /// `DFMA`.
    pub mnemonic: String,
    /// `RM` for `DFMA.RM`, in printed order.
    pub modifiers: Vec<String>,
    /// In printed order.
    pub operands: Vec<Operand>,
    /// ` ;` or `;`: spacing, not meaning.
    pub terminator: Terminator,
    /// nvdisasm prints this form's constant operands with a space, `c[0x0] [0x4]` (the
    /// half-precision and conversion forms): a per-form spelling, read off the page's
    /// distilled line by the printer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub const_spaced: bool,
}

impl fmt::Display for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Body::Reg { n } if *n == RZ => f.write_str("RZ"),
            Body::Reg { n } => write!(f, "R{n}"),
            Body::UReg { n } if *n == URZ => f.write_str("URZ"),
            Body::UReg { n } => write!(f, "UR{n}"),
            Body::Pred { n: 7 } => f.write_str("PT"),
            Body::Pred { n } => write!(f, "P{n}"),
            Body::UPred { n: 7 } => f.write_str("UPT"),
            Body::UPred { n } => write!(f, "UP{n}"),
            Body::Barrier { n } => write!(f, "B{n}"),
            Body::Imm { value } => f.write_str(&hex_signed(*value)),
            Body::Float { text, .. } => f.write_str(text),
            Body::Const { bank, offset } => write!(f, "c[{:#x}][{}]", bank, hex_signed(*offset)),
            Body::ConstX { ureg, offset } => {
                let u = Body::UReg { n: *ureg };
                write!(f, "cx[{u}][{}]", hex_signed(*offset))
            }
            Body::Mem { .. } => fmt_mem(f, self, &[]),
            Body::Other { text } => f.write_str(text),
        }
    }
}

/// A memory operand as nvdisasm prints it: `desc[UR4][R2.64+UR5+-0x10]`, the register's
/// suffixes right after it.
fn fmt_mem(f: &mut fmt::Formatter<'_>, body: &Body, suffixes: &[String]) -> fmt::Result {
    let Body::Mem { space, reg, ureg, imm } = *body else { return write!(f, "{body}") };
    match space {
        MemSpace::Plain => {}
        MemSpace::Desc { ureg } => write!(f, "desc[{}]", Body::UReg { n: ureg })?,
        MemSpace::Attr => f.write_str("a")?,
        MemSpace::Const { bank } => write!(f, "c[{bank:#x}]")?,
        MemSpace::ConstX { ureg } => write!(f, "cx[{}]", Body::UReg { n: ureg })?,
        MemSpace::Named { name } => f.write_str(name.prefix())?,
    }
    let named = matches!(space, MemSpace::Named { .. });
    let mut parts: Vec<String> = vec![];
    if let Some(n) = reg {
        let mut r = Body::Reg { n }.to_string();
        for s in suffixes.iter().filter(|_| !named) {
            r = format!("{r}.{s}");
        }
        parts.push(r);
    }
    parts.extend(ureg.map(|n| Body::UReg { n }.to_string()));
    parts.extend(imm.map(hex_signed));
    write!(f, "[{}]", parts.join("+"))?;
    // A descriptor's suffixes follow its brackets (`gdesc[UR12].B_KEEP`).
    if named {
        for s in suffixes {
            write!(f, ".{s}")?;
        }
    }
    Ok(())
}

/// `0x10`, `-0x8`: nvdisasm's spelling of a signed number.
pub fn hex_signed(v: impl Into<i128>) -> String {
    let v: i128 = v.into();
    if v < 0 {
        format!("-{:#x}", v.unsigned_abs())
    } else {
        format!("{v:#x}")
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.neg {
            f.write_str("-")?;
        }
        if self.not {
            f.write_str(if matches!(self.body, Body::Pred { .. } | Body::UPred { .. }) { "!" } else { "~" })?;
        }
        // nvdisasm puts selectors inside the bars (`|UR0.B3210|`), `.reuse` straight after
        // a bare register (`R7.reuse.H1`) and after the bars (`-|R244|.reuse`).
        if self.abs {
            f.write_str("|")?;
        }
        if let Body::Mem { .. } = self.body {
            // The suffixes belong to the base register, inside the brackets.
            fmt_mem(f, &self.body, &self.suffixes)?;
            if self.reuse {
                f.write_str(".reuse")?;
            }
            return if self.abs { f.write_str("|") } else { Ok(()) };
        }
        write!(f, "{}", self.body)?;
        if self.reuse && !self.abs {
            f.write_str(".reuse")?;
        }
        let outside = self.abs && self.after_bars;
        if !outside {
            for s in &self.suffixes {
                write!(f, ".{s}")?;
            }
        }
        if self.abs {
            f.write_str("|")?;
            if self.reuse {
                f.write_str(".reuse")?;
            }
        }
        // After the bars, `.reuse` comes first (`|R6|.reuse.H1`, nvdisasm 13.5, SM100 FHADD).
        if outside {
            for s in &self.suffixes {
                write!(f, ".{s}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.pred {
            write!(f, "{p} ")?;
        }
        f.write_str(&self.mnemonic)?;
        for m in &self.modifiers {
            write!(f, ".{m}")?;
        }
        for (i, o) in self.operands.iter().enumerate() {
            f.write_str(if i == 0 || o.joined { " " } else { ", " })?;
            match o.body {
                Body::Const { .. } | Body::ConstX { .. } if self.const_spaced => f.write_str(&o.to_string().replacen("][", "] [", 1))?,
                _ => write!(f, "{o}")?,
            }
        }
        f.write_str(match self.terminator {
            Terminator::SpaceSemicolon => " ;",
            Terminator::Semicolon => ";",
            Terminator::Missing => "",
        })
    }
}

/// Text that is not an instruction, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ParseError {
    /// Where the trouble starts: 1-based, in bytes.
    pub column: usize,
    /// What was expected there.
    pub message: String,
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
            match joined_pair(&t) {
                Some((first, second)) => operands.extend([first, second]),
                None => operands.push(parse_operand(&t).map_err(|m| perr(at, m))?),
            }
            c += piece.len() + 1;
        }
    }
    Ok(Instruction { pred, mnemonic, modifiers, operands, terminator, const_spaced })
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
    let mut depth = 0i32;
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        // Brackets and commas are ASCII: bytes suffice.
        for (i, &b) in s.as_bytes().iter().enumerate().skip(start) {
            match b {
                b'[' => depth += 1,
                b']' => depth -= 1,
                b',' if depth == 0 => {
                    let piece = &s[start..i];
                    start = i + 1;
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
pub fn parse_operand(t: &str) -> Result<Operand, String> {
    if t.is_empty() {
        return Err("expected an operand, found nothing".into());
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
        let end = r.find('|').ok_or_else(|| format!("unclosed '|' in '{t}'"))?;
        abs = true;
        let (inner, inner_sfx) = split_suffixes(&r[..end]);
        let after = &r[end + 1..];
        if !inner_sfx.is_empty() && !after.is_empty() && after != ".reuse" {
            return Err(format!("suffixes both inside and outside '|…|' in '{t}'"));
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
        None => (parsed.or_else(|| other_body(core)).ok_or_else(|| format!("cannot read operand '{t}'"))?, vec![]),
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
fn read_suffixes(tail: &str, t: &str, op: &mut Operand) -> Result<(), String> {
    if tail.is_empty() {
        return Ok(());
    }
    let tail = tail.strip_prefix('.').ok_or_else(|| format!("unexpected '{tail}' after operand in '{t}'"))?;
    for sfx in tail.split('.') {
        if sfx.is_empty() {
            return Err(format!("empty suffix in '{t}'"));
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
pub fn parse_mem(s: &str) -> Result<(Body, Vec<String>), String> {
    let (body, suffixes) = parse_mem_parts(s)?;
    Ok((body, if suffixes.is_empty() { vec![] } else { suffixes.split('.').map(str::to_string).collect() }))
}

/// [`parse_mem`] without allocating: the base register's suffixes as printed, `64.U32`
/// (empty for none; never with an empty suffix).
pub(crate) fn parse_mem_parts(s: &str) -> Result<(Body, &str), String> {
    let (space, rest) = mem_space(s)?;
    let inner = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')).ok_or_else(|| format!("expected '[…]' after the space, found '{rest}'"))?;
    if inner.contains(['[', ']']) {
        return Err(format!("unexpected bracket inside '[{inner}]'"));
    }
    if inner.is_empty() {
        return Err("empty brackets".into());
    }
    let (mut reg, mut ureg, mut imm, mut suffixes) = (None, None, None, "");
    // The next component allowed: 0 register, 1 uniform register, 2 immediate, 3 none.
    let mut stage = 0;
    for piece in inner.split('+') {
        if stage > 2 {
            return Err(format!("'{piece}' follows the immediate"));
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
                return Err(format!("empty suffix in '{piece}'"));
            }
            stage = 1;
        } else {
            return Err(format!("'{piece}' is not a register, uniform register or immediate in that order (R+UR+imm)"));
        }
    }
    Ok((Body::mem(space, reg, ureg, imm), suffixes))
}

/// The space before a memory operand's brackets, and the rest from `[` on.
fn mem_space(s: &str) -> Result<(MemSpace, &str), String> {
    // `[…]` at the start of `r`: its contents and the length used.
    fn bracketed(r: &str) -> Option<(&str, usize)> {
        let inner = r.strip_prefix('[')?;
        let end = inner.find(']')?;
        Some((&inner[..end], end + 2))
    }
    let ureg_in = |r: &'_ str, what: &str| -> Result<(u16, usize), String> {
        let (u, used) = bracketed(r).ok_or_else(|| format!("unclosed '{what}['"))?;
        let n = parse_reg_num(u, "UR", "URZ", URZ).ok_or_else(|| format!("expected a uniform register in '{what}[{u}]'"))?;
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
        let (b, used) = bracketed(r).ok_or("unclosed 'c['")?;
        let bank = parse_int(b).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| format!("expected a bank number in 'c[{b}]'"))?;
        return Ok((MemSpace::Const { bank }, &r[used..]));
    }
    if let Some(r) = s.strip_prefix('a') {
        return Ok((MemSpace::Attr, r));
    }
    if s.starts_with('[') {
        return Ok((MemSpace::Plain, s));
    }
    Err(format!("'{s}' does not start with '[', 'desc[', 'gdesc[', 'idesc[', 'tmem[', 'a[', 'c[' or 'cx['"))
}

pub(crate) fn split_suffixes(s: &str) -> (&str, &str) {
    if looks_numeric(s) {
        // Floats contain '.', and never carry suffixes in nvdisasm's output.
        return (s, "");
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
    if h.is_empty() || !h.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let v = u64::from_str_radix(h, 16).ok()?;
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

/// Verbatim text that is no other body (`SR_TID.X`, `1D`).
fn other_body(s: &str) -> Option<Body> {
    (!s.is_empty() && s.chars().all(|c| !c.is_whitespace() && c != ',')).then(|| Body::Other { text: s.to_string() })
}

/// [`parse_body`] without its verbatim fallback (which allocates: a memory operand is tried
/// before it).
fn parse_known_body(s: &str) -> Option<Body> {
    match plain_body(s)? {
        Body::Float { value, .. } => Some(Body::Float { value, text: if is_special_float(s) { format!("{s} ") } else { s.to_string() } }),
        b => Some(b),
    }
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
        let (u, rest) = r.split_once("][")?;
        let off = rest.strip_suffix(']')?;
        let ureg = parse_reg_num(u, "UR", "URZ", URZ)?;
        return Some(Body::ConstX { ureg, offset: parse_int(off)? });
    }
    if let Some(r) = s.strip_prefix("c[") {
        let (b, rest) = r.split_once("][")?;
        let off = rest.strip_suffix(']')?;
        let bank = u32::try_from(parse_int(b)?).ok()?;
        return Some(Body::Const { bank, offset: parse_int(off)? });
    }
    if let Some(v) = parse_imm(s) {
        return Some(Body::Imm { value: v });
    }
    parse_float(s).map(|value| Body::Float { value, text: String::new() })
}

#[cfg(test)]
mod tests {

    #[test]
    fn spaced_constants_read_and_print_as_nvdisasm_spells_them() {
        for t in ["@P0 HADD2 R0, R0, c[0x0] [0x4];", "@P0 F2FP.F16.F32.MERGE_C R0, R0, cx[UR0] [0x0];"] {
            let i = parse_instruction(t).unwrap();
            assert!(i.const_spaced);
            assert_eq!(i.to_string(), t);
        }
        let i = parse_instruction("@P0 FFMA R0, R0, R0, c[0x0][0x4] ;").unwrap();
        assert!(!i.const_spaced);
        assert_eq!(i.operands[3].body, Body::Const { bank: 0, offset: 4 });
    }

    use super::*;

    fn rt(s: &str) {
        let i = parse_instruction(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(i.to_string(), s, "{i:?}");
    }

    /// A 64-bit field prints unsigned (MOV.64 on SM120): numbers up to 2^64 - 1 are
    /// immediates, read and printed back; offsets stay 64-bit signed.
    #[test]
    fn sixty_four_bit_immediates_read_and_print() {
        for (t, v) in [("0xfff8000000000000", 0xfff8_0000_0000_0000i128), ("0xffffffffffffffff", u64::MAX.into()), ("-0x8000000000000000", i64::MIN.into())] {
            let i = parse_instruction(&format!("MOV.64 R22, {t} ;")).unwrap();
            assert_eq!(i.operands[1].body, Body::Imm { value: v });
            assert_eq!(i.to_string(), format!("MOV.64 R22, {t} ;"));
        }
        assert_eq!(parse_imm("0x10000000000000000"), None);
        assert_eq!(parse_int("0x8000000000000000"), None);
        assert!(matches!(parse_operand("c[0x0][0x8000000000000000]").map(|o| o.body), Ok(Body::Other { .. }) | Err(_)));
    }

    #[test]
    fn roundtrips_nvdisasm_lines() {
        for s in [
            "@P0 DFMA R0, R0, R0, R0 ;",
            "DFMA RZ, R0, R0, R0 ;",
            "@!PT DFMA R0, -R5, |R0|, -|R2| ;",
            "@P0 QADD4.E5M2x4.E5M2x4 R0, R0.B3210, R0.B3210;",
            "@P0 I2F.???0.U8 R0, R0 ;",
            "@P0 DFMA R0, R0, R0, c[0x0][-0x8000] ;",
            "BSSY B1, 0x4e0 ;",
            "@P0 S2R R0, SR_TID.X ;",
            "@P0 DFMA R0, R0, R0, -c[0x10][0x4] ;",
            "@P0 DFMA R0, R0, cx[UR0][0x0], R0 ;",
            "@P0 DFMA R0, R0, R0, -1.5 ;",
            "@P0 DFMA R0, R0, R0, +INF  ;",
            "@P0 FFMA R0, R1, R3, +INF ;",
            "@P0 DFMA R0, R0, -SNAN , R0 ;",
            "@P0 DFMA R0, R0, R0, -0.0  ;",
            "@P0 DFMA R0, R0, R0, 2.1219957909652723151e-314 ;",
            "@P0 DFMA R0, R0.reuse, URZ, R0 ;",
            "@P0 I2F.???0.U32 R0, 0x0 ;",
            "@P0 DFMA R0, R0, R0, 100 ;",
            "@P0 QADD4.E5M2x4.E5M2x4 R0, R0.B3210, |UR0.B3210|;",
            "@P0 FHFMA R0, -|R1.H1|.reuse, R0, R0 ;",
            "@P0 HADD2.F32 R0, -R0, -|R0|.H0_H0;",
            "@P0 HADD2 R155, -|R180|.H0_H0, -|c[0xb] [-0x2494].H1_H1|;",
            "@P0 HADD2.F32 R43, -R219.H0_H0, |UR22.H1_H1|;",
            "FHFMA.SAT R8, R7, R7.reuse.H1, R2 ;",
            "FHADD.BF16 R4, -|R6|.reuse.H1, -R11 ;",
            "FHFMA.BF16 R243, |R162|.H1, |UR77.H1|, |R109| ;",
        ] {
            rt(s);
        }
    }

    #[test]
    fn structure() {
        let i = parse_instruction("@!P3 FHFMA.RZ.SAT R1, -|R2|.H1, UR4, R255 ;").unwrap();
        assert_eq!(i.pred, Some(Predicate { negated: true, index: 3, uniform: false }));
        let u = parse_instruction("@!UP1 UIADD3 UR4, UR4, 0x1, URZ ;").unwrap();
        assert_eq!(u.pred, Some(Predicate { negated: true, index: 1, uniform: true }));
        assert_eq!(u.to_string(), "@!UP1 UIADD3 UR4, UR4, 0x1, URZ ;");
        assert_eq!(i.modifiers, vec!["RZ", "SAT"]);
        let o = &i.operands[1];
        assert!(o.neg && o.abs);
        assert_eq!(o.body, Body::Reg { n: 2 });
        assert_eq!(o.suffixes, vec!["H1"]);
        // Where the suffixes stood is kept: the same text prints back.
        assert!(o.after_bars);
        let inside = parse_instruction("FHFMA R1, -|R2.H1|.reuse, |UR4|, R255 ;").unwrap();
        assert!(!inside.operands[1].after_bars && inside.operands[1].reuse && !inside.operands[2].after_bars);
        assert_eq!(i.operands[3].body, Body::Reg { n: 255 });
        assert_eq!(i.operands[3].to_string(), "RZ");
        let f = parse_instruction("DFMA R0, R0, R0, -0.0  ;").unwrap();
        assert!(matches!(f.operands[3].body, Body::Float { value, .. } if value == 0.0 && value.is_sign_negative()));
        let d = parse_instruction("DFMA R0, R0, R0, -902600192 ;").unwrap();
        assert!(matches!(d.operands[3].body, Body::Float { value, .. } if value == -902600192.0));
    }

    /// nvdisasm 13.5's memory operands (SM90 words of LDS, LDL, LDG, ATOMG, ATOMS, LDC, ULDC,
    /// ALD, LDGSTS), each read and printed back byte for byte.
    #[test]
    fn memory_operands_roundtrip_as_nvdisasm_prints_them() {
        for s in [
            "@P0 LDS.U8 R0, [R0] ;",
            "@P0 LDS.U8 R0, [R0+-0x800000] ;",
            "LDS.U8 RZ, [RZ] ;",
            "LDS.U8 RZ, [0x800000] ;",
            "LDS R6, [UR5+0x20] ;",
            "LDS R6, [R254+UR5+0x20] ;",
            "LDS R6, [URZ] ;",
            "@P0 LDL.EF.U8 R0, [R0+URZ] ;",
            "LDG.E.128 R12, desc[UR4][R12.64] ;",
            "ATOMG.E.ADD.STRONG.GPU PT, R20, [RZ.U32+UR4], R12 ;",
            "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R19, [R38.64+UR4+0x10], R13 ;",
            "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R19, desc[UR4][RZ.64+0x10], R13 ;",
            "ATOMS.CAST.SPIN.INVALID7 R0, [R0.X16], R0, R0 ;",
            "@!P0 ATOMS.ARRIVE.???4 R237, [R235.X4+UR45+-0x2f686f] ;",
            "@P0 LDC.U8 R0, c[0x0][R0+-0x8000] ;",
            "LDC.U8 RZ, c[0x0][RZ] ;",
            "LDC.U8 RZ, c[0x1][0x4] ;",
            "@P3 LDC.S8 R176, cx[UR24][R25+0x1ea9] ;",
            "@UP0 ULDC.U8 UR0, c[0x0][URZ];",
            "ULDC.INVALID6 UR4, [UR5+-0x1fb8d89], !UPT;",
            "@!UP2 ULDC.U8 UR6, [0x290807] ;",
            "@P1 ALD.O.128 R51, a[UR21+-0x2c7], R214 ;",
            "ALD RZ, a[0x0], R0 ;",
            "LDGSTS.E.BYPASS.128 [R18+UR8], desc[UR9][R2.64+0x10] ;",
            // Stores and reductions, from ptxas's SM90 code (their words need control bits).
            "STS [R24], RZ ;",
            "@!P1 STS [R0+0x100], R11 ;",
            "REDG.E.ADD.64.STRONG.GPU desc[UR4][R38.64+0x8], R8 ;",
        ] {
            rt(s);
        }
    }

    /// nvdisasm 13.5's descriptor operands and targets joined to their register (SM90 and
    /// SM100 census texts), read and printed back byte for byte.
    #[test]
    fn descriptors_and_joined_targets_roundtrip() {
        for s in [
            "@UP4 UTMALDG.1D [UR57], [UR46], desc[UR39];",
            "UTMASTG.1D [UR12], [URZ], desc[UR0];",
            "LDTM.16dp256bit.x4 R0, tmem[UR12+-0x1f000000];",
            "UTCQMMA tmem[UR38].A_KEEP, gdesc[UR12].B_KEEP.BUFFER1, tmem[UR4], tmem[UR0], idesc[UR1], UR0, !UP0;",
            "@P0 HGMMA.64x8x16.F16 R0, gdesc[UR0], R0, gsb0;",
            "@P0 CALL.REL P0, R0 0x3440;",
            "RET.ABS.NODEC !PT, UR0 -0x1000000000000 ;",
            "LDG.E.128 R12, desc[UR4][R12.64] ;",
        ] {
            rt(s);
        }
        let d = parse_instruction("UTMALDG.1D [UR57], [UR46], desc[UR39];").unwrap();
        let named = |name| MemSpace::Named { name };
        assert_eq!(d.operands[2].body, Body::Mem { space: named(Descriptor::Desc), reg: None, ureg: Some(39), imm: None });
        let t = parse_instruction("UTCQMMA tmem[UR38+0x10].A_KEEP, gdesc[UR12];").unwrap();
        assert_eq!(t.operands[0].body, Body::Mem { space: named(Descriptor::Tmem), reg: None, ureg: Some(38), imm: Some(0x10) });
        assert_eq!(t.operands[0].suffixes, ["A_KEEP"]);
        // Suffixes after the brackets belong to descriptors only.
        assert_eq!(parse_instruction("LDS R0, [R0].X;").unwrap().operands[1].body, Body::Other { text: "[R0]".into() });
        let c = parse_instruction("@P0 CALL.REL P0, R0 0x3440;").unwrap();
        assert_eq!(c.operands.iter().map(|o| o.joined).collect::<Vec<_>>(), [false, false, true]);
        assert_eq!((&c.operands[1].body, &c.operands[2].body), (&Body::Reg { n: 0 }, &Body::Imm { value: 0x3440 }));
        // Two things that are not both operands stay an error.
        assert!(parse_instruction("CALL.REL P0, R0 |x;").is_err());
    }

    #[test]
    fn memory_operand_structure() {
        let i = parse_instruction("ATOMG.E.ADD.STRONG.GPU PT, R19, desc[UR4][R38.64+UR5+-0x10], R13 ;").unwrap();
        let o = &i.operands[2];
        assert_eq!(o.body, Body::Mem { space: MemSpace::Desc { ureg: 4 }, reg: Some(38), ureg: Some(5), imm: Some(-0x10) });
        assert_eq!(o.suffixes, ["64"]);
        let l = parse_instruction("LDS R6, [URZ+0x20] ;").unwrap();
        assert_eq!(l.operands[1].body, Body::Mem { space: MemSpace::Plain, reg: None, ureg: Some(URZ), imm: Some(0x20) });
        // A constant bank with a lone offset is the constant kind, whichever form printed it.
        let c = parse_instruction("LDC.U8 RZ, c[0x1][0x4] ;").unwrap();
        assert_eq!(c.operands[1].body, Body::Const { bank: 1, offset: 4 });
        assert_eq!(c.operands[1].body.as_mem(), Some((MemSpace::Const { bank: 1 }, None, None, Some(4))));
        let r = parse_instruction("@P0 LDC.U8 R0, c[0x2][RZ] ;").unwrap();
        assert_eq!(r.operands[1].body, Body::Mem { space: MemSpace::Const { bank: 2 }, reg: Some(RZ), ureg: None, imm: None });
        assert_eq!(
            parse_instruction("ALD RZ, a[0x0], R0 ;").unwrap().operands[1].body,
            Body::Mem { space: MemSpace::Attr, reg: None, ureg: None, imm: Some(0) }
        );
    }

    #[test]
    fn malformed_memory_operands_say_why_and_stay_verbatim() {
        for (t, why) in [
            ("[R0+R1]", "'R1' is not a register, uniform register or immediate in that order"),
            ("[UR1+R0]", "'R0' is not"),
            ("[0x4+UR1]", "'UR1' follows the immediate"),
            ("[]", "empty brackets"),
            ("[R0.]", "empty suffix"),
            ("desc[R4][R0]", "expected a uniform register in 'desc[R4]'"),
            ("c[UR0][R0]", "expected a bank number"),
            ("[R0", "expected '[…]' after the space"),
            ("x[R0]", "does not start with"),
            // A closing bracket first is an error, not a panic.
            ("cx]UR6][UR1]", "unclosed 'cx['"),
            ("c]0x0][R1]", "unclosed 'c['"),
        ] {
            let e = parse_mem(t).unwrap_err();
            assert!(e.contains(why), "{t}: {e}");
        }
        // In an instruction such a text is kept verbatim, as before memory operands were read.
        let i = parse_instruction("LDS R0, [R0+R1] ;").unwrap();
        assert_eq!(i.operands[1].body, Body::Other { text: "[R0+R1]".into() });
    }

    #[test]
    fn errors_name_the_column() {
        assert!(parse_instruction("").is_err());
        assert_eq!(parse_instruction("@Q1 DFMA R0 ;").unwrap_err().column, 1);
        let e = parse_instruction("DFMA R0, , R1 ;").unwrap_err();
        assert!(e.message.contains("nothing"), "{e}");
        assert!(parse_instruction("DFMA R0, |R1 ;").is_err());
    }
}
