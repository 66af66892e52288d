//! Why a text does not read as one form: the assembler's typed reasons, which
//! [`super::AsmError::NoVariant`] lists per variant.

use crate::sass::hex_signed;

/// Why an instruction's text does not read as one variant ([`super::fill`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FillError {
    /// The guard names a predicate past P6.
    #[error("predicate P{0} does not exist (P0..P6, PT)")]
    NoPredicate(u8),
    /// A plain predicate where the form's guard is uniform, or the other way.
    #[error("this form's guard is {expected} predicate, not '{found}'")]
    GuardKind {
        /// "a plain" or "a uniform".
        expected: &'static str,
        /// The guard as written.
        found: String,
    },
    /// The text has a guard and the page gives the form no predicate field.
    #[error("the page has no predicate field for '@…'")]
    NoGuardField,
    /// The guard's predicate number does not fit the predicate field.
    #[error("predicate value {value:#x} does not fit the field '{field}' ({width} bits)")]
    GuardTooWide {
        /// The predicate's number.
        value: u64,
        /// The predicate field's name.
        field: String,
        /// Its width in bits.
        width: u32,
    },
    /// The text has more or fewer operands than the form prints.
    #[error("{found} operands, the form '{form}' has {expected}")]
    OperandCount {
        /// The text's operand count.
        found: usize,
        /// The form (the page's operand list, `R,R,R,R`).
        form: String,
        /// The form's operand count.
        expected: usize,
    },
    /// The page gives an immediate or an offset no field.
    #[error("{0} without bits")]
    NoBits(&'static str),
    /// Operand `k` does not read as the form's.
    #[error("operand {k}: {fault}")]
    Operand {
        /// The operand's index in the text (0 first).
        k: usize,
        /// Why.
        fault: OperandFault,
    },
    /// The modifiers do not fit the form's slots.
    #[error(transparent)]
    Modifiers(#[from] TokensMismatch),
}

/// Tokens (modifiers, or an operand's suffixes) that the form's slots do not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("modifiers {found:?} do not fit [{}]", expected.join(", "))]
pub struct TokensMismatch {
    /// The tokens as written.
    pub found: Vec<String>,
    /// What each slot reads: a fixed token, a table's title or `[flag]`.
    pub expected: Vec<String>,
}

/// Why one operand does not read as the form's (see [`FillError::Operand`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OperandFault {
    /// A value wider than its field.
    #[error("{shown} does not fit the field '{field}' ({width} bits)")]
    DoesNotFit {
        /// The value as written (`R256`, `bank 0x20`, `0x100`).
        shown: String,
        /// The field's name.
        field: String,
        /// Its width in bits.
        width: u32,
    },
    /// A register the page derives from another field's (`R(n+1)` of a pair) that is not
    /// that register.
    #[error("{shown} is not the register '{field}' gives it ({want}: the source's value + {plus})")]
    NotDerived {
        /// The register as written.
        shown: String,
        /// The source field's name.
        field: String,
        /// The register the source gives.
        want: u64,
        /// What is added to the source's value.
        plus: u8,
    },
    /// A derived register past the zero register, which nvdisasm rejects.
    #[error("the source's value {source_value} + {plus} passes the zero register (nvdisasm rejects the word)")]
    PassesZero {
        /// The source field's value.
        source_value: u64,
        /// What is added to it.
        plus: u8,
    },
    /// A non-zero value where the page gives the operand no bits.
    #[error("no bits for a non-zero value")]
    NoBits,
    /// Another register where the page gives a register operand no bits: it is always the
    /// zero register.
    #[error("the form has no bits for this register: it is always {0}")]
    ZeroRegister(&'static str),
    /// An immediate the field holds in units (a multiple of 4, `2 × n + 1`) that is not one.
    #[error("{} is not {scale}", hex_signed(*.value))]
    NotScaled {
        /// The value as written.
        value: i128,
        /// What it must be: `a multiple of 4`, `2 × n + 1`.
        scale: String,
    },
    /// A memory offset the field holds in units that is not a multiple of them.
    #[error("offset {} is not {scale}", hex_signed(*.value))]
    OffsetNotScaled {
        /// The offset as written.
        value: i128,
        /// What it must be.
        scale: String,
    },
    /// A negative immediate where the form prints its immediate unsigned.
    #[error("the form prints its immediate unsigned, not {}", hex_signed(*.0))]
    UnsignedImmediate(i128),
    /// A branch target past 64-bit addresses.
    #[error("target {0:#x} is past 64-bit addresses")]
    TargetPast(i128),
    /// A branch target the relative field cannot reach from this instruction.
    #[error("target {value:#x} is not 0x10 plus a multiple of {unit} that fits the signed {width}-bit field ({unit}-byte units)")]
    Target {
        /// The target as written.
        value: i64,
        /// The field's unit in bytes.
        unit: i64,
        /// The field's width in bits.
        width: u32,
    },
    /// A constant-bank offset not a multiple of 4 or too wide for its field.
    #[error("offset {offset:#x} does not fit: not a multiple of 4 in the signed {width}-bit field (4-byte units)")]
    ConstOffset {
        /// The offset as written.
        offset: i64,
        /// The field's width in bits.
        width: u32,
    },
    /// A `cx[…]` offset that is negative or not a multiple of 4.
    #[error("offset {0:#x} is not a non-negative multiple of 4")]
    ConstXOffset(i64),
    /// A predicate operand past P6 (UP6).
    #[error("predicate {shown} does not exist ({u}P0..{u}P6, {u}PT)")]
    NoSuchPredicate {
        /// The predicate as written.
        shown: String,
        /// "U" for a uniform predicate, else empty.
        u: &'static str,
    },
    /// Another kind of operand than the form's (a register for an immediate, another space).
    #[error("expected {expected}, found '{found}'")]
    Expected {
        /// The form's operand, as the page names it.
        expected: String,
        /// The operand as written.
        found: String,
    },
    /// Not a memory operand where the form has one.
    #[error("'{0}' is not a memory operand")]
    NotMemory(String),
    /// A memory operand with a part (register, uniform register, immediate) the form lacks.
    #[error("the form {form} has no {what} for '{found}'")]
    MemLacks {
        /// The form's memory operand.
        form: String,
        /// "register", "uniform register" or "immediate".
        what: &'static str,
        /// The operand as written.
        found: String,
    },
    /// A memory operand without the uniform register the form always prints.
    #[error("the form {form} prints its uniform register always, '{found}' has none")]
    UregAlways {
        /// The form's memory operand.
        form: String,
        /// The operand as written.
        found: String,
    },
    /// A negative offset where the form prints its offset unsigned.
    #[error("the form's offset is unsigned, not {}", hex_signed(*.0))]
    UnsignedOffset(i128),
    /// An operand flag (`|…|`, `-`, `~` or `!`) the page gives the operand no field for.
    #[error("the page has no {0} flag for it")]
    NoFlag(&'static str),
    /// Suffixes written on the other side of `|…|` than nvdisasm prints them.
    #[error("nvdisasm prints this operand's suffixes {want} its |…| bars, not {got}")]
    SuffixPlace {
        /// "after" or "inside": where nvdisasm prints them.
        want: &'static str,
        /// Where the text has them.
        got: &'static str,
    },
    /// A float literal out of range.
    #[error("{0} is out of range for a floating-point literal")]
    FloatRange(String),
    /// A float literal the field's format cannot hold exactly.
    #[error("{text} is not exactly {format}")]
    NotExact {
        /// The literal as written.
        text: String,
        /// "a 16-bit float", "a bfloat16", "a 32-bit float".
        format: &'static str,
    },
    /// A double whose low 32 bits are not zero, where the field holds the high half.
    /// The value is the double as Rust prints it.
    #[error("{0} needs more than the high 32 bits of a double")]
    DoubleHigh(String),
    /// Register suffixes other than the form's fixed ones.
    #[error("the form's register prints '.{fixed}', not {found:?}")]
    RegisterSuffix {
        /// The form's suffixes, joined by `.`.
        fixed: String,
        /// The suffixes as written.
        found: Vec<String>,
    },
    /// Operand suffixes other than the form's fixed ones.
    #[error("the form's operand prints '.{fixed}', not {found:?}")]
    FixedSuffix {
        /// The form's fixed suffixes, joined by `.`.
        fixed: String,
        /// The suffixes as written.
        found: Vec<String>,
    },
    /// Another name than the one the form's special-register operand prints (it has no table).
    #[error("'{found}' is not this form's name '{name}'")]
    NotName {
        /// The name as written.
        found: String,
        /// The form's name.
        name: String,
    },
    /// A special-register name no row of the operand's table prints.
    #[error("'{0}' is not a name of this form's table")]
    NotInTable(String),
    /// Operand suffixes the form's slots do not read.
    #[error(transparent)]
    Suffixes(#[from] TokensMismatch),
}

impl OperandFault {
    /// This fault as operand `k`'s.
    pub fn at(self, k: usize) -> FillError {
        FillError::Operand { k, fault: self }
    }
}

/// Strings as owned, for an error.
pub(super) fn owned(toks: &[&str]) -> Vec<String> {
    toks.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{asm, Codec};
    use crate::sass::{parse_instruction, parse_mem, parse_operand, MemError, OperandError};

    /// `fill` says which operand fails and why, as a value; the message reads as before.
    #[test]
    fn fill_errors_are_typed_and_read_as_before() {
        let s = crate::spec::load(&[crate::oracle::tools::repo_root().join("corpus/isa")]).unwrap();
        let c = Codec::new(&s);
        let v = c.variants().iter().find(|v| v.arch == crate::spec::Arch(90) && v.mnemonic == "DFMA" && v.form == "R,R,R,R").expect("DFMA R,R,R,R");
        let fill = |t: &str| asm::fill(v, &parse_instruction(t).unwrap());
        assert!(fill("DFMA R0, R1, R2, R3 ;").is_ok());
        let e = fill("DFMA R256, R0, R0, R0 ;").unwrap_err();
        assert!(matches!(&e, FillError::Operand { k: 0, fault: OperandFault::DoesNotFit { shown, width: 8, .. } } if shown == "R256"), "{e:?}");
        assert!(e.to_string().starts_with("operand 0: R256 does not fit the field '"), "{e}");
        assert_eq!(fill("@P9 DFMA R0, R0, R0, R0 ;").unwrap_err(), FillError::NoPredicate(9));
        assert_eq!(fill("DFMA R0, R0, R0 ;").unwrap_err().to_string(), "3 operands, the form 'R,R,R,R' has 4");
        let e = fill("DFMA.XYZ R0, R0, R0, R0 ;").unwrap_err();
        assert!(matches!(&e, FillError::Modifiers(TokensMismatch { found, .. }) if found == &["XYZ"]), "{e:?}");
        assert!(e.to_string().starts_with("modifiers [\"XYZ\"] do not fit ["), "{e}");
    }

    /// A text that leaves out operands nvdisasm leaves out (IADD3's PT carries) and fails
    /// for another reason is told that reason, as read with them put back.
    #[test]
    fn a_text_with_left_out_operands_is_told_why_it_fails_with_them_put_back() {
        let s = crate::spec::load(&[crate::oracle::tools::repo_root().join("corpus/isa-discovered/sm90")]).unwrap();
        let c = Codec::new(&s);
        let a = asm::Assembler::new(&c);
        assert!(a.assemble(crate::spec::Arch(90), "IADD3 R1, R2, R3, RZ ;", crate::word::Word::ZERO).is_ok());
        let e = a.assemble(crate::spec::Arch(90), "IADD3 R1, R2, R300, RZ ;", crate::word::Word::ZERO).unwrap_err().to_string();
        let want = "IADD3_R_P_P_R_R_R: read as 'IADD3 R1, PT, PT, R2, R300, RZ ;': operand 4: R300 does not fit the field '";
        assert!(e.contains(want), "{e}");
    }

    #[test]
    fn parse_errors_are_typed() {
        assert_eq!(parse_operand(""), Err(OperandError::Empty));
        assert_eq!(parse_operand("|R1").unwrap_err().to_string(), "unclosed '|' in '|R1'");
        assert_eq!(parse_mem("desc[R4][R0]"), Err(MemError::NotUniform { space: "desc", inner: "R4".into() }));
        assert_eq!(parse_mem("cx]UR6][UR1]").unwrap_err().to_string(), "unclosed 'cx['");
    }
}
