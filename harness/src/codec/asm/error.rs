//! Why a text does not read as one form: the assembler's typed reasons, which
//! [`super::AsmError::NoVariant`] lists per variant.

use crate::sass::hex_signed;

/// Why an instruction's text does not read as one variant ([`super::fill`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FillError {
    #[error("predicate P{0} does not exist (P0..P6, PT)")]
    NoPredicate(u8),
    /// `expected`: "a plain" or "a uniform"; `found`: the guard as written.
    #[error("this form's guard is {expected} predicate, not '{found}'")]
    GuardKind { expected: &'static str, found: String },
    #[error("the page has no predicate field for '@…'")]
    NoGuardField,
    #[error("predicate value {value:#x} does not fit '{field}' ({width} bits)")]
    GuardTooWide { value: u64, field: String, width: u32 },
    #[error("{found} operands, the form '{form}' has {expected}")]
    OperandCount { found: usize, form: String, expected: usize },
    /// The page gives an immediate or an offset no field.
    #[error("{0} without bits")]
    NoBits(&'static str),
    #[error("operand {k}: {fault}")]
    Operand { k: usize, fault: OperandFault },
    #[error(transparent)]
    Modifiers(#[from] TokensMismatch),
}

/// Tokens (modifiers, or an operand's suffixes) that the form's slots do not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("modifiers {found:?} do not fit [{}]", expected.join(", "))]
pub struct TokensMismatch {
    pub found: Vec<String>,
    /// What each slot reads: a fixed token, a table's title or `[flag]`.
    pub expected: Vec<String>,
}

/// Why one operand does not read as the form's (see [`FillError::Operand`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OperandFault {
    /// `shown`: the value as written (`R256`, `bank 0x20`, `0x100`).
    #[error("{shown} does not fit '{field}' ({width} bits)")]
    DoesNotFit { shown: String, field: String, width: u32 },
    #[error("{shown} is not the register '{field}' gives it ({want}: the source's value + {plus})")]
    NotDerived { shown: String, field: String, want: u64, plus: u8 },
    #[error("the source's value {source_value} + {plus} passes the zero register (nvdisasm rejects the word)")]
    PassesZero { source_value: u64, plus: u8 },
    #[error("no bits for a non-zero value")]
    NoBits,
    /// `scale`: `a multiple of 4`, `2 × n + 1`.
    #[error("{} is not {scale}", hex_signed(*.value))]
    NotScaled { value: i128, scale: String },
    #[error("offset {} is not {scale}", hex_signed(*.value))]
    OffsetNotScaled { value: i128, scale: String },
    #[error("the form prints its immediate unsigned, not {}", hex_signed(*.0))]
    UnsignedImmediate(i128),
    #[error("target {0:#x} is past 64-bit addresses")]
    TargetPast(i128),
    #[error("target {value:#x} is not 0x10 plus a multiple of {unit} that fits the signed {width}-bit field ({unit}-byte units)")]
    Target { value: i64, unit: i64, width: u32 },
    #[error("offset {offset:#x} does not fit: not a multiple of 4 in the signed {width}-bit field (4-byte units)")]
    ConstOffset { offset: i64, width: u32 },
    #[error("offset {0:#x} is not a non-negative multiple of 4")]
    ConstXOffset(i64),
    /// `u`: "U" for a uniform predicate, else empty.
    #[error("predicate {shown} does not exist ({u}P0..{u}P6, {u}PT)")]
    NoSuchPredicate { shown: String, u: &'static str },
    #[error("expected {expected}, found '{found}'")]
    Expected { expected: String, found: String },
    #[error("'{0}' is not a memory operand")]
    NotMemory(String),
    /// `what`: "register", "uniform register" or "immediate".
    #[error("the form {form} has no {what} for '{found}'")]
    MemLacks { form: String, what: &'static str, found: String },
    #[error("the form {form} prints its uniform register always, '{found}' has none")]
    UregAlways { form: String, found: String },
    #[error("the form's offset is unsigned, not {}", hex_signed(*.0))]
    UnsignedOffset(i128),
    /// `what`: `|…|`, `-`, `~` or `!`.
    #[error("the page has no {0} flag for it")]
    NoFlag(&'static str),
    /// `want`, `got`: "after" or "inside".
    #[error("nvdisasm prints this operand's suffixes {want} its |…| bars, not {got}")]
    SuffixPlace { want: &'static str, got: &'static str },
    #[error("{0} is out of range for a floating-point literal")]
    FloatRange(String),
    /// `format`: "a 16-bit float", "a bfloat16", "a 32-bit float".
    #[error("{text} is not exactly {format}")]
    NotExact { text: String, format: &'static str },
    /// `value`: the double as Rust prints it.
    #[error("{0} needs more than the high 32 bits of a double")]
    DoubleHigh(String),
    #[error("the form's register prints '.{fixed}', not {found:?}")]
    RegisterSuffix { fixed: String, found: Vec<String> },
    /// `fixed`: the form's fixed suffixes, joined by `.`.
    #[error("the form's operand prints '.{fixed}', not {found:?}")]
    FixedSuffix { fixed: String, found: Vec<String> },
    #[error("'{found}' is not this form's name '{name}'")]
    NotName { found: String, name: String },
    #[error("'{0}' is not a name of this form's table")]
    NotInTable(String),
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
        assert!(e.to_string().starts_with("operand 0: R256 does not fit '"), "{e}");
        assert_eq!(fill("@P9 DFMA R0, R0, R0, R0 ;").unwrap_err(), FillError::NoPredicate(9));
        assert_eq!(fill("DFMA R0, R0, R0 ;").unwrap_err().to_string(), "3 operands, the form 'R,R,R,R' has 4");
        let e = fill("DFMA.XYZ R0, R0, R0, R0 ;").unwrap_err();
        assert!(matches!(&e, FillError::Modifiers(TokensMismatch { found, .. }) if found == &["XYZ"]), "{e:?}");
        assert!(e.to_string().starts_with("modifiers [\"XYZ\"] do not fit ["), "{e}");
    }

    #[test]
    fn parse_errors_are_typed() {
        assert_eq!(parse_operand(""), Err(OperandError::Empty));
        assert_eq!(parse_operand("|R1").unwrap_err().to_string(), "unclosed '|' in '|R1'");
        assert_eq!(parse_mem("desc[R4][R0]"), Err(MemError::NotUniform { space: "desc", inner: "R4".into() }));
        assert_eq!(parse_mem("cx]UR6][UR1]").unwrap_err().to_string(), "unclosed 'cx['");
    }
}
