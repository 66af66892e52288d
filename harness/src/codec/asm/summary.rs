//! Packed summaries of a form and of a text (operand kinds, flags, modifier tokens) that
//! reject most candidates with a few integer operations.

use super::*;

/// What [`shape_fits`] and [`Form::tokens_fit`] look at, packed into integers: for a
/// variant, what it accepts; for a text, what it has. A `shape` of `None`: too many
/// operands to pack (then the shape rejects nothing).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Summary {
    pub(super) shape: Option<Shape>,
    /// Modifier token ids as a 64-bit Bloom filter: for a variant, those its slots read
    /// (any `UNLISTED` reads as a table); for a text, those not starting with `UNLISTED`.
    pub(super) tokens: u64,
    /// For a variant, the fixed tokens; for a text, all its modifier tokens.
    pub(super) required: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// 4 bits per operand (see [`kind_code`]).
    pub(super) kinds: u64,
    /// For a variant, 0xf in the 4 bits of each memory operand: it prints as a memory
    /// operand or as a constant (`c[0x0][0x10]` when its register is RZ), so its kind is
    /// left to [`shape_fits`]. Zero for a text.
    pub(super) wild: u64,
    /// 3 bits per operand: `|…|`, `-`, `~`/`!` (for a variant, those it has fields for);
    /// from bit [`SUFFIXED`], one per operand: it has suffix tokens (for a variant, it may).
    pub(super) flags: u64,
    /// At most [`PACKED`].
    pub(super) n: u8,
    /// 0 for no guard (text only), 1 for a plain predicate, 2 for a uniform one.
    pub(super) guard: u8,
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
            wild: ops.iter().enumerate().fold(0, |k, (i, o)| k | (u64::from(matches!(o.kind, OperandKind::Mem(_))) * 0xf) << (4 * i)),
            flags: ops.iter().enumerate().map(flags).chain(f.operands.iter().enumerate().map(suffixed)).fold(0, |k, b| k | b),
            n: ops.len() as u8,
            guard: 1 + f.uniform_guard as u8,
        });
        Summary { shape, tokens: bloom(f.modifiers.vocabulary()), required: bloom(f.modifiers.required()) }
    }

    /// `tokens`: the text's [`Vocabulary::ids`].
    pub(super) fn of_text(inst: &InstRef, tokens: &[u32]) -> Summary {
        let ops = &inst.operands;
        let shape = (ops.len() <= PACKED).then(|| Shape {
            kinds: ops.iter().enumerate().fold(0, |k, (i, o)| k | body_code(&o.body) << (4 * i)),
            wild: 0,
            flags: ops
                .iter()
                .enumerate()
                .fold(0, |k, (i, o)| k | flag_bits(o.abs, o.neg, o.not) << (3 * i) | u64::from(!o.suffixes.is_empty()) << (SUFFIXED + i)),
            n: ops.len() as u8,
            guard: inst.pred.as_ref().map_or(0, |p| 1 + p.uniform as u8),
        });
        let mods = &tokens[..inst.n_modifiers];
        Summary { shape, tokens: bloom(mods.iter().filter(|&&t| t & UNLISTED_BIT == 0)), required: bloom(mods) }
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
        let tokens_ok = text.tokens & !self.tokens == 0 && self.required & !text.required == 0;
        let (Some(v), Some(t)) = (&self.shape, &text.shape) else { return tokens_ok };
        let (vn, tn) = (usize::from(v.n), usize::from(t.n));
        if !tokens_ok || vn <= tn || (vn - tn) > omittable.count_ones() as usize {
            return false;
        }
        let code = |kinds: u64, i: usize| kinds >> (4 * i) & 0xf;
        // Bit j of `at`: the variant's operands so far can read the text's first j.
        let mut at: u32 = 1;
        for k in 0..vn {
            let mut next = if omittable >> k & 1 == 1 { at } else { 0 };
            for j in (0..tn).filter(|&j| at >> j & 1 == 1) {
                if code(v.kinds, k) == code(t.kinds, j) || code(v.wild, k) != 0 {
                    next |= 1 << (j + 1);
                }
            }
            at = next;
        }
        at >> tn & 1 == 1
    }

    /// False only where [`shape_fits`] or [`Form::tokens_fit`] is (`self` a variant's,
    /// `text` a text's); the shape is checked in full when both are packed.
    pub(super) fn admits(&self, text: &Summary) -> bool {
        let shape_ok = match (&self.shape, &text.shape) {
            (Some(v), Some(t)) => v.n == t.n && (v.kinds ^ t.kinds) & !v.wild == 0 && t.flags & !v.flags == 0 && (t.guard == 0 || t.guard == v.guard),
            _ => true,
        };
        shape_ok && text.tokens & !self.tokens == 0 && self.required & !text.required == 0
    }
}
