//! The small values a page spells as tokens, each read by `parse` and spelled back by
//! `token`: parts of a form token (a memory operand's shape, an immediate's scale, a float
//! format) and the entries of the optional operand lines (`derived:`, `left out at zero:`,
//! `inverted:`). A malformed one is a [`TokenError`] naming what it was read as.

use serde::Serialize;

/// What a malformed token was read as: the start of its message.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// What follows `I` in a form token (`*4`).
    ImmScale,
    /// What follows `F.` in a form token (`BF16`).
    FloatFormat,
    /// A memory form token (`desc[UR][R.64+I]`).
    MemOperand,
    /// An entry of the `derived:` line.
    Derived,
    /// An entry of the `left out at zero:` line.
    LeftOut,
    /// An entry of a line listing page operands, named as the line names them
    /// (`inverted`, `illegal-at-all-ones`).
    OperandList(&'static str),
}

impl std::fmt::Display for TokenKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenKind::ImmScale => f.write_str("immediate scale"),
            TokenKind::FloatFormat => f.write_str("float format"),
            TokenKind::MemOperand => f.write_str("memory operand"),
            TokenKind::Derived => f.write_str("derived operand"),
            TokenKind::LeftOut => f.write_str("left-out operand"),
            TokenKind::OperandList(what) => write!(f, "{what} operand"),
        }
    }
}

/// A malformed token: what it was read as, its text, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} '{text}'{problem}")]
pub struct TokenError {
    /// What the token was read as.
    pub kind: TokenKind,
    /// The text read: the whole token, but what follows `I` or `F.` for
    /// [`TokenKind::ImmScale`] and [`TokenKind::FloatFormat`].
    pub text: String,
    /// The message's tail (`: component 'X' is not …`, ` is not 'operand N'`).
    problem: String,
}

impl TokenError {
    fn new(kind: TokenKind, text: &str, problem: impl Into<String>) -> TokenError {
        TokenError { kind, text: text.to_string(), problem: problem.into() }
    }
}

// The page parser files a token's message under the page's line.
impl From<TokenError> for String {
    fn from(e: TokenError) -> String {
        e.to_string()
    }
}

/// What stands before a memory operand's brackets, as the form token spells it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemSpaceKind {
    /// `[…]`.
    Plain,
    /// `desc[UR][…]`: one page operand, the descriptor's uniform register.
    Desc,
    /// `a[…]`.
    Attr,
    /// `c[I][…]`: one page operand, the bank.
    Const,
    /// `cx[UR][…]`: one page operand, the bank's uniform register.
    ConstX,
    /// `gdesc[…]`, `idesc[…]`, `tmem[…]`, `desc[…]` alone: a descriptor whose brackets are
    /// its components (no page operand of its own).
    Named(crate::sass::Descriptor),
}

impl MemSpaceKind {
    /// The kind of a printed memory operand's space (its register or bank left out).
    pub fn of(space: crate::sass::MemSpace) -> MemSpaceKind {
        use crate::sass::MemSpace;
        match space {
            MemSpace::Plain => MemSpaceKind::Plain,
            MemSpace::Desc { .. } => MemSpaceKind::Desc,
            MemSpace::Attr => MemSpaceKind::Attr,
            MemSpace::Const { .. } => MemSpaceKind::Const,
            MemSpace::ConstX { .. } => MemSpaceKind::ConstX,
            MemSpace::Named { name } => MemSpaceKind::Named(name),
        }
    }
}

/// How an immediate field's value becomes the printed number: `offset + (field << shift)`.
/// The form token spells it after the `I`: `I*4` (JMP's absolute targets, `a[0x..]`
/// offsets: the field counts 4-byte words), `I*2+1` (BPT.TRAP: odd codes only, the low bit
/// is the form's). Plain `I` is shift 0, offset 0.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ImmMap {
    /// The scale as a power of two: the field counts units of `2^shift` (2 for `I*4`, at
    /// most 32).
    pub shift: u8,
    /// Added after scaling, below the scale (1 for `I*2+1`).
    pub offset: u8,
}

impl ImmMap {
    /// Plain `I`: the printed number is the field value.
    pub const PLAIN: ImmMap = ImmMap { shift: 0, offset: 0 };

    /// `*4`, `*2+1` or nothing: what follows `I` in a form token.
    pub fn token(self) -> String {
        match (self.shift, self.offset) {
            (0, 0) => String::new(),
            (s, 0) => format!("*{}", 1u64 << s),
            (s, o) => format!("*{}+{o}", 1u64 << s),
        }
    }

    /// Reads what follows `I` (see [`ImmMap::token`]); the scale must be a power of two up
    /// to 2^32 and the offset below it.
    pub fn parse(t: &str) -> Result<ImmMap, TokenError> {
        if t.is_empty() {
            return Ok(ImmMap::PLAIN);
        }
        let bad = || TokenError::new(TokenKind::ImmScale, t, " is not '*N' or '*N+K' (N a power of two up to 2^32, K below N)");
        let rest = t.strip_prefix('*').ok_or_else(bad)?;
        let (scale, offset) = rest.split_once('+').unwrap_or((rest, "0"));
        let scale: u64 = scale.parse().map_err(|_| bad())?;
        let offset: u64 = offset.parse().map_err(|_| bad())?;
        // `*1` is plain `I`, spelled one way only.
        if !scale.is_power_of_two() || scale == 1 || scale > 1 << 32 || offset >= scale || offset > u64::from(u8::MAX) {
            return Err(bad());
        }
        Ok(ImmMap { shift: scale.trailing_zeros() as u8, offset: offset as u8 })
    }

    /// The printed number of field value `x` (already sign-extended where signed).
    pub fn apply(self, x: i128) -> i128 {
        // A field is at most 64 bits and the scale at most 2^32: no overflow.
        i128::from(self.offset) + (x << self.shift)
    }

    /// The field value of printed number `v`, if it is one of this map's.
    pub fn invert(self, v: i128) -> Option<i128> {
        let d = v - i128::from(self.offset);
        (d.rem_euclid(1i128 << self.shift) == 0).then(|| d >> self.shift)
    }
}

/// How an `F` field's bits read as a number.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FloatFormat {
    /// An fp16 (a 16-bit field, as in `HADD2 R0, R0, 0`).
    Half,
    /// A bfloat16: the top half of an fp32 (`F2I.BF16 R0, 0`).
    BFloat,
    /// An fp32.
    Single,
    /// The high 32 bits of a double (fp64 instructions: the mnemonic starts with `D`).
    DoubleHigh,
}

impl FloatFormat {
    /// The format of an `F` field of `width` bits in an instruction `mnemonic` when the form
    /// token does not name one: fp64 ops hold a double's high 32 bits, a 16-bit field an
    /// fp16, any other an fp32.
    pub fn of(mnemonic: &str, width: u32) -> FloatFormat {
        if mnemonic.starts_with('D') {
            FloatFormat::DoubleHigh
        } else if width == 16 {
            FloatFormat::Half
        } else {
            FloatFormat::Single
        }
    }

    /// The form token's suffix naming it: `F.F16`, `F.BF16`, `F.F32`, `F.F64`.
    pub fn token(self) -> &'static str {
        match self {
            FloatFormat::Half => "F16",
            FloatFormat::BFloat => "BF16",
            FloatFormat::Single => "F32",
            FloatFormat::DoubleHigh => "F64",
        }
    }

    /// Every format, in the order [`FloatFormat::parse`] tries them.
    pub const ALL: [FloatFormat; 4] = [FloatFormat::Single, FloatFormat::Half, FloatFormat::BFloat, FloatFormat::DoubleHigh];

    /// Reads what follows `F.` in a form token (`BF16`; see [`FloatFormat::token`]).
    pub fn parse(t: &str) -> Result<FloatFormat, TokenError> {
        FloatFormat::ALL.into_iter().find(|f| f.token() == t).ok_or_else(|| TokenError::new(TokenKind::FloatFormat, t, " is not F16, BF16, F32 or F64"))
    }
}

/// A memory operand's immediate component: `I` prints signed (`+-0x10`), `uI` unsigned.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemImm {
    /// No immediate component.
    Absent,
    /// `I` (`sI` in a constant space): printed signed (`[R2+-0x10]`).
    Signed,
    /// `uI`: printed unsigned.
    Unsigned,
}

/// Register suffixes a memory form may print always (`[R2.64+UR4]`: the bit that would
/// change it selects another form).
pub const MEM_REG_SUFFIXES: [&str; 5] = ["64", "U32", "X4", "X8", "X16"];

/// The shape of a memory operand, as its form token spells it (`desc[UR][R.64+I]`): the
/// space, then the components in nvdisasm's order (register, uniform register,
/// immediate). Each component, and the space's bank or register, is one page operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemShape {
    /// What stands before the brackets.
    pub space: MemSpaceKind,
    /// It has a register component `R` (the first).
    pub reg: bool,
    /// A suffix the register always prints (one of [`MEM_REG_SUFFIXES`]).
    pub reg_suffix: Option<&'static str>,
    /// The register is left out, with its suffix, when it is RZ and another component
    /// prints (SM100/SM120 `LDG.256`/`STG.256`: `[UR2+0x20]` for `[RZ.64+UR2+0x20]`), where
    /// other forms print it always (`[RZ.64+0x10]`, LDGSTS). Spelled `R?` (`R.64?`) in the
    /// form token; learned from nvdisasm per form. Left out of the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reg_elided: bool,
    /// It has a uniform register component `UR` (after the register).
    pub ureg: bool,
    /// The uniform register is left out when it is URZ and another component prints
    /// (`c[0x0][0x358]` for `c[0x0][URZ+0x358]`, but `c[0x0][URZ]`; LDCU, LDTRAM), where
    /// other forms print it always (`[R2.64+URZ+0x10]`). Spelled `UR?` in the form token;
    /// learned from nvdisasm per form. Left out of the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ureg_elided: bool,
    /// Its immediate component (the last), if any, and how it prints.
    pub imm: MemImm,
    /// The immediate's scale, as a shift: `[R+I*32]` (STG.256 counts 32-byte units). Left
    /// out of the JSON when 0, as on every page without one.
    #[serde(skip_serializing_if = "is_zero")]
    pub imm_shift: u8,
}

impl MemShape {
    /// The form token: `[R+UR+I]`, `desc[UR][R.64+uI]`, `c[I][R+I]`, `a[UR+I]`, `[]`.
    pub fn token(&self) -> String {
        let space = match self.space {
            MemSpaceKind::Plain => "",
            MemSpaceKind::Desc => "desc[UR]",
            MemSpaceKind::Attr => "a",
            MemSpaceKind::Const => "c[I]",
            MemSpaceKind::ConstX => "cx[UR]",
            MemSpaceKind::Named(d) => d.prefix(),
        };
        let mut parts = vec![];
        if self.reg {
            parts.push(format!("R{}{}", self.reg_suffix.map(|s| format!(".{s}")).unwrap_or_default(), if self.reg_elided { "?" } else { "" }));
        }
        if self.ureg {
            parts.push(if self.ureg_elided { "UR?" } else { "UR" }.into());
        }
        // `c[I][I]` and `cx[UR][I]` are the constant kinds (offsets in 4-byte words): a
        // constant-space memory operand with a lone signed byte offset spells it `sI`.
        let lone = matches!(self.space, MemSpaceKind::Const | MemSpaceKind::ConstX) && !self.reg && !self.ureg;
        let scale = ImmMap { shift: self.imm_shift, offset: 0 }.token();
        match self.imm {
            MemImm::Absent => {}
            MemImm::Signed if lone => parts.push(format!("sI{scale}")),
            MemImm::Signed => parts.push(format!("I{scale}")),
            MemImm::Unsigned => parts.push(format!("uI{scale}")),
        }
        format!("{space}[{}]", parts.join("+"))
    }

    /// Reads a form token; the message says what is wrong with a malformed one.
    pub fn parse(t: &str) -> Result<MemShape, TokenError> {
        let bad = |problem: String| TokenError::new(TokenKind::MemOperand, t, problem);
        let named = crate::sass::Descriptor::ALL.map(|d| (d.prefix(), MemSpaceKind::Named(d)));
        // `desc[UR][…]` before `desc[…]` alone.
        let (space, rest) = [("desc[UR]", MemSpaceKind::Desc), ("cx[UR]", MemSpaceKind::ConstX), ("c[I]", MemSpaceKind::Const), ("a", MemSpaceKind::Attr)]
            .into_iter()
            .chain(named)
            .chain([("", MemSpaceKind::Plain)])
            .find_map(|(p, k)| t.strip_prefix(p).filter(|r| r.starts_with('[')).map(|r| (k, r)))
            .ok_or_else(|| bad(" does not start with '[', 'desc[UR][', 'a[', 'c[I][', 'cx[UR][', 'desc[', 'gdesc[', 'idesc[' or 'tmem['".into()))?;
        let inner = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')).filter(|i| !i.contains(['[', ']']));
        let inner = inner.ok_or_else(|| bad(": expected one '[…]' of components after the space".into()))?;
        let mut shape = MemShape { space, reg: false, reg_suffix: None, reg_elided: false, ureg: false, ureg_elided: false, imm: MemImm::Absent, imm_shift: 0 };
        let mut stage = 0;
        for c in inner.split('+').filter(|_| !inner.is_empty()) {
            let (c, scale) = c.find('*').map(|at| c.split_at(at)).unwrap_or((c, ""));
            // `R?`, `R.64?`: a register left out at RZ.
            let (c, elided) = match c.strip_suffix('?') {
                Some(r) if r.starts_with('R') => (r, true),
                _ => (c, false),
            };
            let (name, sfx) = c.split_once('.').map(|(n, s)| (n, Some(s))).unwrap_or((c, None));
            if !scale.is_empty() {
                let map = ImmMap::parse(scale).map_err(|e| bad(format!(": {e}")))?;
                if !matches!(name, "I" | "sI" | "uI") || map.offset != 0 {
                    return Err(bad(format!(": only the immediate takes a scale ('I*N'), not '{c}{scale}'")));
                }
                shape.imm_shift = map.shift;
            }
            let at = match name {
                "R" => 0,
                "UR" | "UR?" => 1,
                "I" | "sI" | "uI" => 2,
                _ => return Err(bad(format!(": component '{c}' is not R, R.<suffix>, R?, UR, UR?, I, sI or uI"))),
            };
            if at < stage {
                return Err(bad(format!(": component '{c}' out of order or repeated (R+UR+I, each at most once)")));
            }
            stage = at + 1;
            // Only `R` gets here with `elided` (`RX?` is no component above).
            shape.reg_elided |= elided;
            match (name, sfx) {
                ("R", None) => shape.reg = true,
                ("R", Some(s)) => {
                    let known = MEM_REG_SUFFIXES.iter().find(|k| **k == s);
                    shape.reg_suffix = Some(known.ok_or_else(|| bad(format!(": register suffix '.{s}' is not one of {MEM_REG_SUFFIXES:?}")))?);
                    shape.reg = true;
                }
                (_, Some(_)) => return Err(bad(format!(": only the register takes a suffix, not '{c}'"))),
                ("UR", None) => shape.ureg = true,
                ("UR?", None) => (shape.ureg, shape.ureg_elided) = (true, true),
                ("I" | "sI", None) => shape.imm = MemImm::Signed,
                _ => shape.imm = MemImm::Unsigned,
            }
        }
        if shape.slots() == 0 {
            return Err(bad(" has no component (a page operand) at all".into()));
        }
        Ok(shape)
    }

    /// Page operands of the space (bank or register) and of each component, in order.
    pub fn slots(&self) -> usize {
        let space = usize::from(matches!(self.space, MemSpaceKind::Desc | MemSpaceKind::Const | MemSpaceKind::ConstX));
        space + usize::from(self.reg) + usize::from(self.ureg) + usize::from(self.imm != MemImm::Absent)
    }

    /// What each page operand of the shape holds, in page order.
    pub fn slot_roles(&self) -> Vec<MemSlot> {
        let mut out = vec![];
        if matches!(self.space, MemSpaceKind::Desc | MemSpaceKind::Const | MemSpaceKind::ConstX) {
            out.push(MemSlot::Space);
        }
        if self.reg {
            out.push(MemSlot::Reg);
        }
        if self.ureg {
            out.push(MemSlot::UReg);
        }
        if self.imm != MemImm::Absent {
            out.push(MemSlot::Imm);
        }
        out
    }
}

/// What one page operand of a memory operand holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemSlot {
    /// The bank (`c[I]`) or uniform register (`desc[UR]`, `cx[UR]`).
    Space,
    /// The register component `R`.
    Reg,
    /// The uniform register component `UR`.
    UReg,
    /// The immediate component `I`/`uI`.
    Imm,
}

pub(super) fn is_zero(x: &u8) -> bool {
    *x == 0
}

/// A page operand with no bits of its own: nvdisasm prints it as another page operand's
/// field plus a constant, 0 in `BAR.SYNC R1, R1`, 2 in `SYNCS.CAS.64 UR4, [URZ], UR13,
/// UR15`, 1 in `LDGSTS [R18+UR9], desc[UR10][…]`. The page says it on a `derived:` line
/// (`derived: operand 3 = operand 2 + 2`). The zero register (the field's all-ones value)
/// derives itself (`URZ, URZ`); any other source whose sum passes it is illegal (nvdisasm
/// rejects UR254 plus 2, prints `UR253, URZ`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Derived {
    /// The derived page operand: the `N` of `operand N = operand M + K`.
    pub page_operand: usize,
    /// The page operand whose field holds the value; it comes first in print order.
    pub source: usize,
    /// The constant `K` added to the source's field.
    pub plus: u8,
}

impl Derived {
    /// `operand 3 = operand 2 + 2`, as the `derived:` line spells it.
    pub fn token(self) -> String {
        format!("operand {} = operand {} + {}", self.page_operand, self.source, self.plus)
    }

    /// Reads [`Derived::token`]'s spelling; the message says what is malformed.
    pub fn parse(t: &str) -> Result<Derived, TokenError> {
        let bad = || TokenError::new(TokenKind::Derived, t, " is not 'operand N = operand M + K' (M < N, K at most 255)");
        let (lhs, rhs) = t.split_once('=').ok_or_else(bad)?;
        let (src, plus) = rhs.split_once('+').ok_or_else(bad)?;
        let num = |x: &str, pre: &str| x.trim().strip_prefix(pre).and_then(|n| n.trim().parse::<usize>().ok());
        let (Some(page_operand), Some(source)) = (num(lhs, "operand"), num(src, "operand")) else { return Err(bad()) };
        let plus: u8 = plus.trim().parse().map_err(|_| bad())?;
        if source >= page_operand {
            return Err(bad());
        }
        Ok(Derived { page_operand, source, plus })
    }

    /// The printed value for source field value `x` of a field whose all-ones value is
    /// `max`; `None` where the sum passes the zero register (an illegal word).
    pub fn value(plus: u8, x: u64, max: u64) -> Option<u64> {
        match x.checked_add(u64::from(plus)) {
            _ if x == max => Some(max),
            Some(y) if y <= max => Some(y),
            _ => None,
        }
    }
}

/// A page operand nvdisasm leaves out when its field is zero: `BAR.SYNC 0x1` for `BAR.SYNC
/// 0x1, 0x0` (a thread count), `BRX R6` for `BRX R6 0x0` (an offset joined to its
/// register), `BPT.TRAP` for `BPT.TRAP 0x0`. Every other value prints. The page says it on a
/// `left out at zero:` line (`left out at zero: operand 2 joined`), `joined` when the
/// operand prints after the one before it with a space, not a comma (the distilled line,
/// the zero word's text, cannot show that).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct LeftOutAtZero {
    /// The immediate's page operand.
    pub page_operand: usize,
    /// It prints after the operand before it with a space, not a comma (`BRX R6 -0x120`).
    pub joined: bool,
}

impl LeftOutAtZero {
    /// `operand 2 joined`, `operand 1`: one entry of the `left out at zero:` line.
    pub fn token(self) -> String {
        format!("operand {}{}", self.page_operand, if self.joined { " joined" } else { "" })
    }

    /// Reads [`LeftOutAtZero::token`]'s spelling; the message says what is malformed.
    pub fn parse(t: &str) -> Result<LeftOutAtZero, TokenError> {
        let bad = || TokenError::new(TokenKind::LeftOut, t, " is not 'operand N' or 'operand N joined'");
        let rest = t.trim().strip_prefix("operand").ok_or_else(bad)?.trim();
        let (n, joined) = match rest.strip_suffix("joined") {
            Some(n) => (n.trim(), true),
            None => (rest, false),
        };
        let page_operand = n.parse::<usize>().map_err(|_| bad())?;
        Ok(LeftOutAtZero { page_operand, joined })
    }
}

/// A register or predicate page operand whose field nvdisasm prints inverted: the printed
/// number is `2^width - 1 - field` (bitwise NOT), so field 0 prints the all-ones value
/// (`PT`, left out; `RZ`). SM100/SM120 `LDG.256`'s last predicate: bits 87–89 = 1 print
/// `P6`, 7 print `P0`, 0 `PT`; its `!` bit is plain. The page says it on an `inverted:`
/// line (`inverted: operand 6`); the distilled line (the zero word's text) then leaves
/// such a `P`/`UP` operand out, and the parser puts its `PT`/`UPT` back.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Inverted {
    /// The register or predicate page operand printed inverted.
    pub page_operand: usize,
}

impl Inverted {
    /// `operand 6`: one entry of the `inverted:` line.
    pub fn token(self) -> String {
        format!("operand {}", self.page_operand)
    }

    /// Reads [`Inverted::token`]'s spelling; the message says what is malformed.
    pub fn parse(t: &str) -> Result<Inverted, TokenError> {
        Ok(Inverted { page_operand: page_operand_token(t, "inverted")? })
    }

    /// The printed number of field value `x` of a `width`-bit field, and back (its own
    /// inverse).
    pub fn apply(x: u64, width: u32) -> u64 {
        x ^ u64::MAX.checked_shr(64 - width.min(64)).unwrap_or(0)
    }
}

/// `operand N`, one entry of a line that lists page operands (`inverted:`, `illegal at all
/// ones:`); `what` names the line's entries in the message.
pub fn page_operand_token(t: &str, what: &'static str) -> Result<usize, TokenError> {
    let bad = || TokenError::new(TokenKind::OperandList(what), t.trim(), " is not 'operand N'");
    let n = t.trim().strip_prefix("operand").ok_or_else(bad)?.trim();
    n.parse::<usize>().map_err(|_| bad())
}
