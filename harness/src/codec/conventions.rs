//! nvdisasm's printing conventions that pages do not state: in one place.
//!
//! Two kinds. Fixed rules that depend only on the architecture ([`uniform_zero`]) were
//! read off nvdisasm once and are checked against it by tests. Rules that differ per
//! instruction form — which control-bit combinations nvdisasm accepts, where it prints
//! `.reuse`, the space before `;`, the order of modifiers — are learned from nvdisasm at
//! the start of each run ([`crate::oracle::learn`]) and kept in a [`Conventions`] the printer consults.
//!
//! What was seen (nvdisasm 13.5, SM90 DFMA): bits 105–109 (stall, yield) and 122–125
//! (reuse) form one table-coded "opex" field: most combinations are illegal, and `.reuse`
//! prints only in some legal ones (yield set and a stall of 1–11); the terminator is ` ;`
//! except when both barrier fields (bits 110–115) are 7 the wait mask and the opex bits are 0, but FFMA
//! and FHFMA print `;` whatever the barriers. None of this is labelled on the pages, so it is learned by bit
//! position, not by the page's control-field names.

pub use crate::spec::conventions::*;
use crate::spec::{Arch, MemSpaceKind};

/// The uniform zero register's index: uniform registers have 6 bits before SM100 and 8
/// from SM100 on (nvdisasm prints `UR63` on SM100 and `URZ` for 255).
pub fn uniform_zero(arch: Arch) -> u16 {
    if arch.0 >= 100 {
        255
    } else {
        63
    }
}

/// nvdisasm prints a PC-relative operand (a branch target) as an absolute address: the
/// word's address plus a constant of the word. The harness compares such operands as if
/// the word sat at address 0; this rewrites nvdisasm's `text` for a word at `addr` so,
/// subtracting `addr` from form operands `targets` of a form of `form_len` operands.
/// Targets are counted from the end: they come after the predicates nvdisasm may leave
/// out (`BRA 0x4e0` for `BRA PT, 0x4e0`). Texts it cannot read stay as they are.
pub fn target_at_zero(text: &str, targets: &[usize], form_len: usize, addr: u64) -> String {
    if targets.is_empty() || addr == 0 {
        return text.to_string();
    }
    let Ok(inst) = crate::sass::parse_instruction(text) else { return text.to_string() };
    let mut out = text.to_string();
    let shown = inst.operands.len();
    // Right to left, so that an earlier operand's position is not moved by a later edit.
    for &k in targets.iter().rev() {
        let Some(k) = (shown + k).checked_sub(form_len) else { continue };
        let Some(crate::sass::Body::Imm { value }) = inst.operands.get(k).map(|o| &o.body) else { continue };
        let old = crate::sass::hex_signed(*value);
        let new = crate::sass::hex_signed(*value - i128::from(addr));
        if let Some(at) = out.rfind(&old) {
            out.replace_range(at..at + old.len(), &new);
        }
    }
    out
}

/// The components nvdisasm prints of a memory operand whose form has the components
/// given (`None`: the form has no such component), read off nvdisasm 13.5 on SM90 (LDS,
/// LDL, LDG, ATOMG, ATOMS, LDC, ULDC, IPA): the uniform register always (`[R0+URZ]`), the
/// immediate unless 0, the register unless RZ; RZ prints all the same after a descriptor
/// (`desc[UR18][RZ+0x20]`, LDL), with the form's fixed suffix (`[RZ.U32+UR7]`,
/// `[RZ.64+0x10]`, LDGSTS), with a table's suffix next to a uniform register
/// (`[RZ.X4+UR5]`; without one RZ and its suffix are left out: `[0xa3809c]` for
/// `[RZ.X4+-0x5c7f64]`, ATOMS) or when nothing else would print (`[RZ]`, `c[0x0][RZ]`,
/// without a table's suffix: see [`mem_reg_suffixed`]), except
/// in attribute space and after `cx[UR]`, where the zero immediate stands in (`a[0x0]`,
/// `cx[UR0][0x0]`: LDC, seen by validation).
pub fn mem_printed(
    space: MemSpaceKind,
    reg: Option<u16>,
    suffix: RegSuffix,
    ureg: Option<u16>,
    ureg_elided: bool,
    imm: Option<i64>,
) -> (Option<u16>, Option<u16>, Option<i64>) {
    let keeps = |n: u16| match suffix {
        RegSuffix::Form => true,
        RegSuffix::Table => ureg.is_some(),
        RegSuffix::None => n != crate::sass::RZ,
    };
    let r = reg.filter(|&n| n != crate::sass::RZ || keeps(n) || space == MemSpaceKind::Desc);
    let i = imm.filter(|&x| x != 0);
    // Some forms leave URZ out like RZ (`c[0x0][0x358]`, `c[0x0][URZ]`): `MemShape::ureg_elided`.
    let ureg = ureg.filter(|&n| !(ureg_elided && n == crate::sass::URZ && (r.is_some() || i.is_some())));
    if r.is_none() && ureg.is_none() && i.is_none() {
        return if matches!(space, MemSpaceKind::Attr | MemSpaceKind::ConstX) { (None, None, Some(0)) } else { (Some(crate::sass::RZ), None, None) };
    }
    (r, ureg, i)
}

/// The suffixes a memory operand's register carries: none, the form's own (`.64`, maybe
/// with a table's after it), or a table's only (`.X4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegSuffix {
    /// No suffix.
    None,
    /// The form's own suffix (`.64`, `.U32`), maybe with a table's after it.
    Form,
    /// A table's suffix only (`.X4`).
    Table,
}

/// Does the printed register `reg` of a memory operand carry its suffixes? Not when it is
/// RZ with a table's suffix standing in for nothing else printed (`[RZ]` for `[RZ.X4]`,
/// ATOMS), as [`mem_printed`] gives it.
pub fn mem_reg_suffixed(space: MemSpaceKind, reg: Option<u16>, suffix: RegSuffix, ureg_printed: bool) -> bool {
    reg.is_some_and(|n| n != crate::sass::RZ || suffix != RegSuffix::Table || ureg_printed || space == MemSpaceKind::Desc)
}

/// Does a memory operand print its offset unsigned, whatever its form says? A plain `[imm]`
/// (no register, no uniform register printed) is an absolute address: nvdisasm prints
/// `[R0+-0x800000]` but `[0x800000]` when the register is RZ (the word is then the RZ-based
/// form's); a constant bank keeps the sign (`c[0x0][-0x8000]`), as does `[UR5+-0x7fffe0]`.
pub fn mem_offset_unsigned(space: MemSpaceKind, reg_printed: bool, ureg_printed: bool) -> bool {
    space == MemSpaceKind::Plain && !reg_printed && !ureg_printed
}

/// Whether nvdisasm prints `text`'s branch target as an absolute address: its `.ABS`
/// modifier says so (`RET.ABS.NODEC R0 0x10` prints the same wherever the word sits;
/// `RET.REL`, `BRA.CONV` and the rest print PC-relative targets as addresses).
pub fn target_is_absolute(text: &str) -> bool {
    crate::sass::parse_instruction(text).is_ok_and(|i| i.modifiers.iter().any(|m| m == "ABS"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::{RZ, URZ};

    /// Each case as nvdisasm 13.5 printed it on SM90 (LDS, LDL, ATOMG, LDC, ALD words).
    #[test]
    fn memory_components_print_as_nvdisasm_leaves_them_out() {
        let plain = MemSpaceKind::Plain;
        // `[R0]`, `[R0+0x1]`, `[0x1]` (RZ left out), `[RZ]` (nothing else to print).
        assert_eq!(mem_printed(plain, Some(0), RegSuffix::None, None, false, Some(0)), (Some(0), None, None));
        assert_eq!(mem_printed(plain, Some(0), RegSuffix::None, None, false, Some(1)), (Some(0), None, Some(1)));
        assert_eq!(mem_printed(plain, Some(RZ), RegSuffix::None, None, false, Some(1)), (None, None, Some(1)));
        assert_eq!(mem_printed(plain, Some(RZ), RegSuffix::None, None, false, Some(0)), (Some(RZ), None, None));
        assert_eq!(mem_printed(plain, None, RegSuffix::None, None, false, Some(0)), (Some(RZ), None, None));
        // `[0xa3809c]` for `[RZ.X4+-0x5c7f64]`, `[RZ]` for `[RZ.X4]` (ATOMS, LDS, STS).
        assert_eq!(mem_printed(plain, Some(RZ), RegSuffix::Table, None, false, Some(0xa3809c)), (None, None, Some(0xa3809c)));
        assert_eq!(mem_printed(plain, Some(RZ), RegSuffix::Table, None, false, Some(0)), (Some(RZ), None, None));
        assert!(!mem_reg_suffixed(plain, Some(RZ), RegSuffix::Table, false));
        assert!(mem_reg_suffixed(plain, Some(RZ), RegSuffix::Table, true) && mem_reg_suffixed(plain, Some(0), RegSuffix::Table, false));
        assert!(mem_reg_suffixed(MemSpaceKind::Desc, Some(RZ), RegSuffix::Table, false));
        // `[RZ.64+0x10]` (LDGSTS): the form's own suffix keeps RZ.
        assert_eq!(mem_printed(plain, Some(RZ), RegSuffix::Form, None, false, Some(0x10)), (Some(RZ), None, Some(0x10)));
        // `[R0+URZ]`, `[URZ]`: the uniform register always prints.
        assert_eq!(mem_printed(plain, Some(0), RegSuffix::None, Some(URZ), false, Some(0)), (Some(0), Some(URZ), None));
        assert_eq!(mem_printed(plain, Some(RZ), RegSuffix::None, Some(URZ), false, Some(0)), (None, Some(URZ), None));
        // `[RZ.U32+UR4]`: a suffixed RZ prints.
        assert_eq!(mem_printed(plain, Some(RZ), RegSuffix::Form, Some(4), false, Some(0)), (Some(RZ), Some(4), None));
        // `desc[UR18][RZ+0x20]`.
        assert_eq!(mem_printed(MemSpaceKind::Desc, Some(RZ), RegSuffix::None, None, false, Some(0x20)), (Some(RZ), None, Some(0x20)));
        // `c[0x0][RZ]`, but `a[0x0]`.
        assert_eq!(mem_printed(MemSpaceKind::Const, Some(RZ), RegSuffix::None, None, false, Some(0)), (Some(RZ), None, None));
        assert_eq!(mem_printed(MemSpaceKind::Attr, None, RegSuffix::None, None, false, Some(0)), (None, None, Some(0)));
        assert_eq!(mem_printed(MemSpaceKind::ConstX, Some(RZ), RegSuffix::None, None, false, Some(0)), (None, None, Some(0)));
        // A form that leaves URZ out (LDCU, SM100): `c[0x0][0x358]`, `c[0x0][URZ]`, `c[0x0][UR15+0x358]`.
        let c = MemSpaceKind::Const;
        assert_eq!(mem_printed(c, None, RegSuffix::None, Some(URZ), true, Some(0x358)), (None, None, Some(0x358)));
        assert_eq!(mem_printed(c, None, RegSuffix::None, Some(URZ), true, Some(0)), (None, Some(URZ), None));
        assert_eq!(mem_printed(c, None, RegSuffix::None, Some(15), true, Some(0x358)), (None, Some(15), Some(0x358)));
        // `[0x800000]` (LDL, RZ base), `c[0x0][-0x8000]` (LDC, RZ base), `[UR5+-0x7fffe0]`.
        assert!(mem_offset_unsigned(plain, false, false));
        assert!(!mem_offset_unsigned(MemSpaceKind::Const, false, false));
        assert!(!mem_offset_unsigned(plain, false, true));
        assert!(!mem_offset_unsigned(plain, true, false));
    }

    #[test]
    fn targets_are_rewritten_as_at_address_zero() {
        // `BRA 0x4e0` at 0x4e0 (to itself) reads as at 0: `BRA 0x0`; `-0x10` at 0x100 stays signed.
        assert_eq!(target_at_zero("@P0 BRA 0x4e0 ;", &[0], 1, 0x4e0), "@P0 BRA 0x0 ;");
        assert_eq!(target_at_zero("BSSY B0, 0xf0 ;", &[1], 2, 0x100), "BSSY B0, -0x10 ;");
        // The PT before the target left out: targets count from the end.
        assert_eq!(target_at_zero("BRA 0x30;", &[1], 2, 0x20), "BRA 0x10;");
        // Other operands with the same digits are left alone.
        assert_eq!(target_at_zero("WARPSYNC.COLLECTIVE R0, 0x20;", &[1], 2, 0x10), "WARPSYNC.COLLECTIVE R0, 0x10;");
        assert_eq!(target_at_zero("not an instruction", &[0], 1, 0x10), "not an instruction");
        // RET.ABS prints an absolute address; RET.REL and BRA.CONV print targets.
        assert!(target_is_absolute("@P0 RET.ABS.NODEC P0, R0 0x10 ;"));
        assert!(!target_is_absolute("@P0 RET.REL P0, R0 0x3440 ;") && !target_is_absolute("@P0 BRA.CONV P0, 0xad0;"));
    }
}
