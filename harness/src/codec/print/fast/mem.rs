//! Memory operands on the compiled path: the components [`super::super::mem_operand`]
//! works out, and their text as `Operand`'s `Display` writes it, without an `Operand`.

use super::{constant, constant_x, push_hex_signed, push_ureg, reg, ureg_n, Compiled, Flags, Form, FormOperand};
use crate::codec::bits::Values;
use crate::codec::conventions::{mem_offset_unsigned, mem_printed, mem_reg_suffixed, RegSuffix};
use crate::sass::{Body, MemSpace};
use crate::spec::{MemImm, MemShape, MemSlot, MemSpaceKind};

/// What a memory operand prints for some values.
pub(super) struct Parts {
    /// `Body::mem`'s: a memory body, or a constant one (`c[0x0][0x10]`).
    body: Body,
    /// Whether its suffixes print (the register carries them, or a descriptor).
    keep_suffixes: bool,
    /// Whether it prints any suffix (for leaving it out undecorated).
    pub(super) suffixed: bool,
}

/// The roles of a memory operand's value slots, in order ([`MemShape::slot_roles`], without
/// a vector).
fn roles(m: MemShape) -> impl Iterator<Item = MemSlot> {
    let space = matches!(m.space, MemSpaceKind::Desc | MemSpaceKind::Const | MemSpaceKind::ConstX);
    [(space, MemSlot::Space), (m.reg, MemSlot::Reg), (m.ureg, MemSlot::UReg), (m.imm != MemImm::Absent, MemSlot::Imm)]
        .into_iter()
        .filter_map(|(on, role)| on.then_some(role))
}

/// The components printed of memory operand `o` (shape `m`) for `values`, as
/// `mem_operand` gives them; `flags`: its decorations.
pub(super) fn parts(f: &Form, o: &FormOperand, m: MemShape, zero_offset: bool, values: &Values, flags: Flags) -> Parts {
    let (mut space, mut reg, mut ur, mut imm) = (0, None, None, None);
    // The offset's bits, for a signed offset nvdisasm prints unsigned.
    let mut imm_mask = i64::MAX;
    for (k, role) in roles(m).enumerate() {
        let x = o.slots[k].map_or(0, |s| s.value(values));
        let width = o.slots[k].map_or(0, |s| s.width());
        match role {
            MemSlot::Space => space = x,
            MemSlot::Reg => reg = Some(x as u16),
            MemSlot::UReg => ur = Some(ureg_n(f, x)),
            MemSlot::Imm if m.imm == MemImm::Signed => {
                imm = Some(crate::codec::print::signed(x, width) << m.imm_shift);
                imm_mask = if width + u32::from(m.imm_shift) >= 63 { i64::MAX } else { ((1i64 << width) - 1) << m.imm_shift };
            }
            MemSlot::Imm => imm = Some((x as i64) << m.imm_shift),
        }
    }
    let space = match m.space {
        MemSpaceKind::Plain => MemSpace::Plain,
        MemSpaceKind::Desc => MemSpace::Desc { ureg: ureg_n(f, space) },
        MemSpaceKind::Attr => MemSpace::Attr,
        MemSpaceKind::Const => MemSpace::Const { bank: space as u32 },
        MemSpaceKind::ConstX => MemSpace::ConstX { ureg: ureg_n(f, space) },
        MemSpaceKind::Named(name) => MemSpace::Named { name },
    };
    let suffix = match (m.reg_suffix, flags.suffixed) {
        (Some(_), _) => RegSuffix::Form,
        (None, false) => RegSuffix::None,
        (None, true) => RegSuffix::Table,
    };
    let shown_as = if m.reg_elided { RegSuffix::None } else { suffix };
    let (mut reg, ur, mut imm) = mem_printed(m.space, reg, shown_as, ur, m.ureg_elided, imm);
    if reg == Some(crate::sass::RZ) && ur.is_none() && imm.is_none() && !m.reg && zero_offset {
        (reg, imm) = (None, Some(0));
    }
    if mem_offset_unsigned(m.space, reg.is_some(), ur.is_some() || m.ureg_elided) {
        imm = imm.map(|x| x & imm_mask);
    }
    let keep_suffixes = matches!(m.space, MemSpaceKind::Named(_)) || mem_reg_suffixed(m.space, reg, suffix, ur.is_some());
    let suffixed = keep_suffixes && (m.reg_suffix.is_some() || flags.suffixed);
    Parts { body: Body::mem(space, reg, ur, imm), keep_suffixes, suffixed }
}

impl Compiled {
    /// A memory operand's suffixes (`.64`, then its tables' and flags'), if it keeps them.
    fn mem_suffixes(&self, f: &Form, o: &FormOperand, m: MemShape, parts: &Parts, values: &Values, out: &mut String) {
        if parts.keep_suffixes {
            if let Some(s) = m.reg_suffix {
                out.push('.');
                out.push_str(s);
            }
            self.suffixes(f, o, values, out);
        }
    }

    /// A memory operand as `Operand`'s `Display` prints it (`-[R2.64+UR4+0x10].reuse`,
    /// `gdesc[UR12].B_KEEP`), or the constant it may be (`c[0x0][0x10]`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mem_text(&self, f: &Form, o: &FormOperand, m: MemShape, parts: &Parts, values: &Values, flags: Flags, reuse: bool, out: &mut String) {
        if flags.neg {
            out.push('-');
        }
        if flags.not {
            out.push('~');
        }
        if flags.abs {
            out.push('|');
        }
        let (space, base, ureg, imm) = match parts.body {
            Body::Const { bank, offset } => return self.constant_text(f, o, m, parts, values, flags, reuse, |out| constant(out, f, bank, offset), out),
            Body::ConstX { ureg, offset } => return self.constant_text(f, o, m, parts, values, flags, reuse, |out| constant_x(out, f, ureg, offset), out),
            Body::Mem { space, reg, ureg, imm } => (space, reg, ureg, imm),
            _ => unreachable!("Body::mem gives a memory or constant body"),
        };
        space_prefix(space, out);
        let named = matches!(space, MemSpace::Named { .. });
        out.push('[');
        let mut plus = false;
        if let Some(n) = base {
            reg(out, n);
            if !named {
                self.mem_suffixes(f, o, m, parts, values, out);
            }
            plus = true;
        }
        if let Some(n) = ureg {
            if std::mem::replace(&mut plus, true) {
                out.push('+');
            }
            push_ureg(out, n);
        }
        if let Some(x) = imm {
            if plus {
                out.push('+');
            }
            push_hex_signed(out, i128::from(x));
        }
        out.push(']');
        if named {
            self.mem_suffixes(f, o, m, parts, values, out);
        }
        if reuse {
            out.push_str(".reuse");
        }
        if flags.abs {
            out.push('|');
        }
    }

    /// The rest of a memory operand that prints as a constant (`Operand`'s `Display` of a
    /// constant body, its prefix written): the body, `.reuse`, suffixes, bars.
    #[allow(clippy::too_many_arguments)]
    fn constant_text(
        &self,
        f: &Form,
        o: &FormOperand,
        m: MemShape,
        parts: &Parts,
        values: &Values,
        flags: Flags,
        reuse: bool,
        body: impl FnOnce(&mut String),
        out: &mut String,
    ) {
        body(out);
        if reuse && !flags.abs {
            out.push_str(".reuse");
        }
        // `mem_operand` never places suffixes after the bars.
        self.mem_suffixes(f, o, m, parts, values, out);
        if flags.abs {
            out.push('|');
            if reuse {
                out.push_str(".reuse");
            }
        }
    }
}

/// What stands before a memory operand's brackets (`desc[UR4]`, `a`, `c[0x0]`, `gdesc`).
fn space_prefix(space: MemSpace, out: &mut String) {
    match space {
        MemSpace::Plain => {}
        MemSpace::Desc { ureg } => {
            out.push_str("desc[");
            push_ureg(out, ureg);
            out.push(']');
        }
        MemSpace::Attr => out.push('a'),
        MemSpace::Const { bank } => {
            out.push_str("c[");
            push_hex_signed(out, i128::from(bank));
            out.push(']');
        }
        MemSpace::ConstX { ureg } => {
            out.push_str("cx[");
            push_ureg(out, ureg);
            out.push(']');
        }
        MemSpace::Named { name } => out.push_str(name.prefix()),
    }
}
