//! Packed summaries of a form and of a text (operand kinds, flags, modifier tokens) that
//! reject most candidates with a few integer operations.

use super::*;

/// What [`shape_fits`], [`Form::tokens_fit`] and [`Form::mems_fit`] look at, packed into
/// integers: for a variant, what it accepts; for a text, what it has. A `shape` of `None`:
/// too many operands to pack (then the shape rejects nothing).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Summary {
    pub(super) shape: Option<Shape>,
    /// Modifier token ids as a 64-bit Bloom filter: for a variant, those its slots read
    /// (any `UNLISTED` reads as a table); for a text, those not starting with `UNLISTED`.
    pub(super) tokens: u64,
    /// For a variant, the fixed tokens; for a text, all its modifier tokens.
    pub(super) required: u64,
    /// Operand suffix token ids, as `tokens`: for a variant, those its operands' fixed
    /// suffixes and suffix slots read (all ones where an operand is a name, which reads any);
    /// for a text, those not starting with `UNLISTED`.
    pub(super) suffixes: u64,
    /// The first memory operand (see [`MemCode`]).
    pub(super) mem: MemCode,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// 4 bits per operand (see [`kind_code`]). A variant's memory operand prints as a memory
    /// operand or as a constant (`c[0x0][0x10]` when its register is RZ), so its kind is
    /// left to [`shape_fits`] (see [`wild`]).
    pub(super) kinds: u64,
    /// 3 bits per operand: `|…|`, `-`, `~`/`!` (for a variant, those it has fields for);
    /// from bit [`SUFFIXED`], one per operand: it has suffix tokens (for a variant, it may).
    pub(super) flags: u64,
    /// At most [`PACKED`].
    pub(super) n: u8,
    pub(super) guard: Guard,
}

/// A guard as a [`Shape`] keeps it (an enum, so that `Option<Shape>` takes no more room:
/// an [`Entry`] is at most a cache line).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Guard {
    /// No guard (a text only).
    None,
    Plain,
    Uniform,
}

/// The kind nibbles of `kinds` that are memory operands' ([`kind_code`] 10), all ones.
fn wild(kinds: u64) -> u64 {
    const NIBBLES: u64 = 0x1111_1111_1111_1111;
    // Zero in the nibbles that are 10, nonzero elsewhere.
    let x = kinds ^ (NIBBLES * 10);
    let mut t = x | x >> 1;
    t |= t >> 2;
    !((t & NIBBLES) * 0xf)
}

/// A memory operand's shape in 16 bits, for a quick [`mem_fit`]: bits 0–3 the operand's
/// place (15: none), 4–6 its space ([`space_code`]), then for a variant what its shape
/// accepts (bit 7 a register, 8 a uniform register, 10 an immediate, 11 a negative one)
/// and requires (9 a uniform register: [`MemShape::ureg`] without `ureg_elided`), and for
/// a text what it has (7 a register other than RZ, 8 a uniform register, 10 a nonzero
/// immediate, 11 a negative one; 9 unused).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct MemCode(u16);

const NO_MEM: MemCode = MemCode(0xf);

impl MemCode {
    /// A variant's first memory operand, `m` at place `k`.
    fn of_shape(k: usize, m: MemShape) -> MemCode {
        let bits = [m.reg, m.ureg, m.ureg && !m.ureg_elided, m.imm != MemImm::Absent, m.imm == MemImm::Signed];
        MemCode(k as u16 | space_code(m.space) << 4 | bits.iter().enumerate().fold(0, |c, (i, &b)| c | u16::from(b) << (7 + i)))
    }

    /// A text's first memory operand, `parts` at place `k`.
    fn of_parts(k: usize, (space, reg, ureg, imm): sass::MemParts) -> MemCode {
        let space = MemSpaceKind::of(space);
        let bits = [reg.is_some_and(|n| n != sass::RZ), ureg.is_some(), false, imm.is_some_and(|x| x != 0), imm.is_some_and(|x| x < 0)];
        MemCode(k as u16 | space_code(space) << 4 | bits.iter().enumerate().fold(0, |c, (i, &b)| c | u16::from(b) << (7 + i)))
    }

    /// False only where [`mem_fit`] fails (`self` a variant's, `text` a text's). Without
    /// branches but the result's: a text meets a dozen candidates, and which of their
    /// checks fail follows no pattern a predictor learns.
    fn admits(self, text: MemCode) -> bool {
        let (v, t) = (self.0, text.0);
        let elsewhere = (v & 0xf != t & 0xf) | (v & 0xf == 0xf);
        // Bits 7, 8, 10, 11: what the text has, the variant accepts; bit 9: what the
        // variant requires (a uniform register), the text has.
        let lacking = (t & !v & 0b1101_1000_0000) | (v & !(t << 1) & 0b10_0000_0000);
        elsewhere | ((v >> 4 & 7 == t >> 4 & 7) & (lacking == 0))
    }
}

/// A memory space's kind in 3 bits (named spaces alike: [`mem_fit`] compares their names).
fn space_code(space: MemSpaceKind) -> u16 {
    match space {
        MemSpaceKind::Plain => 0,
        MemSpaceKind::Desc => 1,
        MemSpaceKind::Attr => 2,
        MemSpaceKind::Const => 3,
        MemSpaceKind::ConstX => 4,
        MemSpaceKind::Named(_) => 5,
    }
}

/// Operands a [`Shape`] packs.
pub(super) const PACKED: usize = 16;
/// Where [`Shape::flags`]' suffix bits start, after 3 bits per operand.
pub(super) const SUFFIXED: usize = 3 * PACKED;

pub(super) fn bloom<'a>(ids: impl IntoIterator<Item = &'a u32>) -> u64 {
    ids.into_iter().fold(0, |b, &id| b | 1 << ((id & !UNLISTED_BIT) % 64))
}

pub(super) fn kind_code(kind: OperandKind) -> u64 {
    match kind {
        OperandKind::Reg => 1,
        OperandKind::UReg => 2,
        OperandKind::Imm(_) => 3,
        OperandKind::Float(_) => 4,
        OperandKind::Const => 5,
        OperandKind::ConstX => 6,
        OperandKind::Pred => 7,
        OperandKind::UPred => 8,
        // A branch target prints as an immediate, a special register as a name.
        OperandKind::Target(_) => 3,
        OperandKind::Barrier => 9,
        OperandKind::Special | OperandKind::Name => 15,
        OperandKind::Mem(_) => 10,
    }
}

pub(super) fn body_code(body: &Body) -> u64 {
    match body {
        Body::Reg { .. } => 1,
        Body::UReg { .. } => 2,
        Body::Imm { .. } => 3,
        Body::Float { .. } => 4,
        Body::Const { .. } => 5,
        Body::ConstX { .. } => 6,
        Body::Pred { .. } => 7,
        Body::UPred { .. } => 8,
        Body::Barrier { .. } => 9,
        Body::Mem { .. } => 10,
        Body::Other { .. } => 15,
    }
}

pub(super) fn flag_bits(abs: bool, neg: bool, not: bool) -> u64 {
    abs as u64 | (neg as u64) << 1 | (not as u64) << 2
}

impl Summary {
    pub(super) fn of_form(f: &Form) -> Summary {
        let ops = &f.v.operands;
        let flags = |(i, o): (usize, &OperandSpec)| flag_bits(o.abs_field.is_some(), o.neg_field.is_some(), o.not_field.is_some()) << (3 * i);
        // An operand reads suffix tokens with its slots, as fixed suffixes or as part of a name.
        let suffixed = |(i, op): (usize, &FormOperand)| u64::from(op.has_suffix_slots() || !f.fixed(op).is_empty() || op.kind.is_named()) << (SUFFIXED + i);
        let shape = (ops.len() <= PACKED).then(|| Shape {
            kinds: ops.iter().enumerate().fold(0, |k, (i, o)| k | kind_code(o.kind) << (4 * i)),
            flags: ops.iter().enumerate().map(flags).chain(f.operands.iter().enumerate().map(suffixed)).fold(0, |k, b| k | b),
            n: ops.len() as u8,
            guard: if f.uniform_guard { Guard::Uniform } else { Guard::Plain },
        });
        let suffixes =
            f.operands.iter().fold(0, |b, op| b | if op.kind.is_named() { u64::MAX } else { bloom(f.fixed(op)) | op.suffix_vocabulary().map_or(0, bloom) });
        let mem = ops.iter().enumerate().find_map(|(k, o)| match o.kind {
            OperandKind::Mem(m) if k < 15 => Some(MemCode::of_shape(k, m)),
            _ => None,
        });
        Summary { shape, tokens: bloom(f.modifiers.vocabulary()), required: bloom(f.modifiers.required()), suffixes, mem: mem.unwrap_or(NO_MEM) }
    }

    /// `tokens`: the text's [`Vocabulary::ids`].
    pub(super) fn of_text(inst: &InstRef, tokens: &[u32]) -> Summary {
        let ops = &inst.operands;
        let shape = (ops.len() <= PACKED).then(|| Shape {
            kinds: ops.iter().enumerate().fold(0, |k, (i, o)| k | body_code(&o.body) << (4 * i)),
            flags: ops
                .iter()
                .enumerate()
                .fold(0, |k, (i, o)| k | flag_bits(o.abs, o.neg, o.not) << (3 * i) | u64::from(!o.suffixes.is_empty()) << (SUFFIXED + i)),
            n: ops.len() as u8,
            guard: match &inst.pred {
                None => Guard::None,
                Some(p) if p.uniform => Guard::Uniform,
                Some(_) => Guard::Plain,
            },
        });
        let (mods, sfx) = tokens.split_at(inst.n_modifiers);
        let listed = |ids: &[u32]| bloom(ids.iter().filter(|&&t| t & UNLISTED_BIT == 0));
        let mem = ops.iter().take(15).enumerate().find_map(|(k, o)| o.body.as_mem().map(|parts| MemCode::of_parts(k, parts)));
        Summary { shape, tokens: listed(mods), required: bloom(mods), suffixes: listed(sfx), mem: mem.unwrap_or(NO_MEM) }
    }

    /// Whether [`Summary::admits`] checked the whole shape.
    pub(super) fn packs(&self, text: &Summary) -> bool {
        self.shape.is_some() && text.shape.is_some()
    }

    /// False only where no reading of the text with left-out operands put back (see
    /// [`with_omitted`]) fits: the variant (`self`, `omittable` the operands that may be
    /// left out) has more operands, its modifier tokens admit the text's, and the text's
    /// operand kinds are the variant's with some omittable ones taken out.
    pub(super) fn may_omit(&self, text: &Summary, omittable: u16) -> bool {
        // The operands put back have no suffixes: the text's are read by the others.
        let tokens_ok = (text.tokens & !self.tokens) | (self.required & !text.required) | (text.suffixes & !self.suffixes) == 0;
        let (Some(v), Some(t)) = (&self.shape, &text.shape) else { return tokens_ok };
        let (vn, tn) = (usize::from(v.n), usize::from(t.n));
        let v_wild = wild(v.kinds);
        // Bitwise: see [`MemCode::admits`] (most candidates have no more operands).
        if !tokens_ok | (vn <= tn) || (vn - tn) > omittable.count_ones() as usize {
            return false;
        }
        let code = |kinds: u64, i: usize| kinds >> (4 * i) & 0xf;
        // Bit j of `at`: the variant's operands so far can read the text's first j.
        let mut at: u32 = 1;
        for k in 0..vn {
            let mut next = if omittable >> k & 1 == 1 { at } else { 0 };
            for j in (0..tn).filter(|&j| at >> j & 1 == 1) {
                if code(v.kinds, k) == code(t.kinds, j) || code(v_wild, k) != 0 {
                    next |= 1 << (j + 1);
                }
            }
            at = next;
        }
        at >> tn & 1 == 1
    }

    /// False only where [`shape_fits`], [`Form::tokens_fit`] or [`Form::mems_fit`] is
    /// (`self` a variant's, `text` a text's); the shape is checked in full when both are
    /// packed.
    pub(super) fn admits(&self, text: &Summary) -> bool {
        // Bitwise, not short-circuit: see [`MemCode::admits`].
        let shape_ok = match (&self.shape, &text.shape) {
            (Some(v), Some(t)) => {
                (v.n == t.n) & ((v.kinds ^ t.kinds) & !wild(v.kinds) == 0) & (t.flags & !v.flags == 0) & ((t.guard == Guard::None) | (t.guard == v.guard))
            }
            _ => true,
        };
        let tokens_ok = (text.tokens & !self.tokens) | (self.required & !text.required) | (text.suffixes & !self.suffixes) == 0;
        shape_ok & tokens_ok & self.mem.admits(text.mem)
    }
}
