//! Memory operands on the compiled path: the components [`super::super::mem_body`]
//! works out (as for the general path), and their text as `Operand`'s `Display` writes it, without an `Operand`.

use super::{constant, constant_x, push_hex_signed, push_ureg, reg, Compiled, Flags, Form, FormOperand};
use crate::codec::bits::Values;
use crate::sass::{Body, MemSpace};
use crate::spec::MemShape;

/// What a memory operand prints for some values.
pub(super) struct Parts {
    /// `Body::mem`'s: a memory body, or a constant one (`c[0x0][0x10]`).
    body: Body,
    /// Whether its suffixes print (the register carries them, or a descriptor).
    keep_suffixes: bool,
    /// Whether it prints any suffix (for leaving it out undecorated).
    pub(super) suffixed: bool,
}

/// The components printed of memory operand `o` (shape `m`) for `values`, as
/// `mem_operand` gives them (both through [`super::super::mem_body`]); `flags`: its
/// decorations.
/// `learned`: printing with the stored conventions, whose offset spelling beside RZ
/// ([`FormOperand::rz_offset`]) then applies.
pub(super) fn parts(f: &Form, o: &FormOperand, m: MemShape, zero_offset: bool, values: &Values, flags: Flags, learned: bool) -> Parts {
    let slot = |k: usize| o.slots[k].map_or((0, 0), |s| (s.value(values), s.width()));
    let (body, keep_suffixes) = super::super::mem_body(m, slot, f.urz, flags.suffixed, || zero_offset, o.rz_offset.filter(|_| learned));
    let suffixed = keep_suffixes && (m.reg_suffix.is_some() || flags.suffixed);
    Parts { body, keep_suffixes, suffixed }
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
