//! SASS text as nvdisasm prints it: a structured instruction, its printer and its parser.
//!
//! Both directions meet here: the codec prints decoded words into this form and the
//! assembler reads it back; the nvdisasm oracle parses the tool's lines into it, so the
//! two can be compared structurally (meaning) and textually (syntax) apart.

mod parse;
mod print;
mod quick;
#[cfg(test)]
mod tests;

pub use parse::{
    parse_body, parse_float, parse_imm, parse_instruction, parse_int, parse_mem, parse_operand, MemError, OperandError, ParseError, QNAN_BITS, SNAN_BITS,
};
pub(crate) use parse::{parse_full, parse_mem_parts, plain_body, split_suffixes};
pub use print::hex_signed;
pub(crate) use quick::{InstRef, OperandRef};

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
    Reg {
        /// The register number.
        n: u16,
    },
    /// `UR<n>`; [`URZ`] is the zero register, whose index depends on the architecture
    /// (63 on SM90, 255 on SM100): the codec maps it.
    UReg {
        /// The register number ([`URZ`] for the zero register).
        n: u16,
    },
    /// `P<n>`/`PT` (7).
    Pred {
        /// The predicate number (7 is `PT`).
        n: u8,
    },
    /// `UP<n>`/`UPT` (7).
    UPred {
        /// The predicate number (7 is `UPT`).
        n: u8,
    },
    /// `B<n>`: a convergence barrier register (`BSSY B0, …`, `BSYNC B0`).
    Barrier {
        /// The barrier number.
        n: u8,
    },
    /// Integer immediate as printed (`0x10`, `-0x8`). Wider than a word's half: a 64-bit
    /// field prints unsigned (`MOV.64 R22, 0xfff8000000000000`), a signed one down to -2^63.
    Imm {
        /// The value as printed (negative when printed with a minus sign).
        value: i128,
    },
    /// Floating immediate; `text` is kept because nvdisasm's float formatting is syntax.
    /// The value's bits are kept too: `+SNAN` is a NaN with the quiet bit clear. Specials
    /// (`±INF`, `±QNAN`, `±SNAN`, `-0.0`) carry nvdisasm's trailing space in `text`.
    Float {
        /// The value, NaN payloads included.
        value: f64,
        /// The spelling nvdisasm uses (empty when the value's own formatting is it).
        text: String,
    },
    /// `c[bank][offset]`.
    Const {
        /// The bank, `c[bank]`.
        bank: u32,
        /// The byte offset in the bank.
        offset: i64,
    },
    /// `cx[URn][offset]`.
    ConstX {
        /// The uniform register that selects the bank.
        ureg: u16,
        /// The byte offset in the bank.
        offset: i64,
    },
    /// A memory address, `[R1.64+UR4+-0x10]`, and what stands before its brackets
    /// (`desc[UR4]`, `a`, `c[0x0]`, `cx[UR2]`). The components are those printed: nvdisasm
    /// leaves some out (`codec::conventions::mem_printed`); the base register's suffixes
    /// (`.64`, `.U32`, `.X4`) are the operand's [`Operand::suffixes`]. A constant bank
    /// with a lone immediate is [`Body::Const`]/[`Body::ConstX`] (see [`Body::mem`]).
    Mem {
        /// What stands before the brackets.
        space: MemSpace,
        /// The base register, when printed.
        reg: Option<u16>,
        /// The uniform register added, when printed.
        ureg: Option<u16>,
        /// The immediate offset, when printed.
        imm: Option<i64>,
    },
    /// Anything else, verbatim (memory operands, labels, …).
    Other {
        /// The text.
        text: String,
    },
}

/// What stands before a memory operand's brackets.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "space", rename_all = "snake_case")]
pub enum MemSpace {
    /// `[…]`.
    Plain,
    /// `desc[URn][…]`: a memory descriptor in a uniform register.
    Desc {
        /// The uniform register holding the descriptor.
        ureg: u16,
    },
    /// `a[…]`: attribute space.
    Attr,
    /// `c[bank][…]`.
    Const {
        /// The bank.
        bank: u32,
    },
    /// `cx[URn][…]`.
    ConstX {
        /// The uniform register that selects the bank.
        ureg: u16,
    },
    /// A descriptor or tensor-memory operand whose brackets are its components:
    /// `desc[UR7]`, `gdesc[UR0]`, `idesc[UR1]`, `tmem[UR12+-0x1f000000]`.
    Named {
        /// Which descriptor.
        name: Descriptor,
    },
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
