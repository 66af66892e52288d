//! What one probe word did, compared with the seed: the effect classes of single-bit flips.

use crate::codec::print::{f64_to_bfloat, f64_to_half, FloatFormat};
use crate::sass::MemSpace;
use crate::sass::{self, Body, Instruction, Operand};
use crate::spec::{Arch, FlagRole, ImmMap, MemImm, MemShape, MemSlot, MemSpaceKind, OperandKind, MEM_REG_SUFFIXES};

/// Everything about the seed's text that the classification needs.
#[derive(Clone, Debug)]
pub struct Seed {
    pub arch: Arch,
    pub text: String,
    pub inst: Instruction,
    pub kinds: Vec<OperandKind>,
    /// How the form's `F` immediates read as bits (fp32, or fp64 high bits for `D…`, until
    /// the flips show fp16: see [`Seed::classify_all`]).
    pub float: FloatFormat,
}

/// Why a bit is written as a fixed cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fixed {
    /// nvdisasm rejects the flipped word.
    Illegal,
    /// No line at all.
    Silent,
    /// The same text: nvdisasm ignores the bit.
    Ignored,
    /// Only the terminator's spacing changes (`;` → ` ;`).
    Terminator,
    /// Another mnemonic, operand count or operand kind: an opcode or form bit.
    Other,
}

/// The effect of flipping one bit of the seed.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    Fixed(Fixed),
    Pred,
    /// The modifier list changed to this.
    Modifiers(Vec<String>),
    /// Form operand `operand`, sub-value `sub` (bank/UR = 0, offset = 1) changed by 2^`weight`
    /// units (`None`: not a power of two, or a NaN).
    Value {
        operand: usize,
        sub: usize,
        weight: Option<u32>,
    },
    /// Form operand `operand` prints other suffixes (`R0.H1`, `R0.INVALID1`).
    Suffix {
        operand: usize,
    },
    /// A `-`, `|…|`, `!` or `~` decoration appeared on form operand `operand`.
    Flag {
        operand: usize,
        role: FlagRole,
    },
    /// Like [`Effect::Value`] for form operand `operand`'s sub-value `sub`, and a later
    /// register (`derived`: form operand, sub-value) prints the same value plus `plus`
    /// (`BAR.SYNC R1, R1`, `SYNCS.CAS.64 …, UR13, UR15`): one field printed twice.
    Linked {
        operand: usize,
        sub: usize,
        weight: Option<u32>,
        derived: (usize, usize),
        plus: u8,
    },
    /// Something a page cannot say (several changes at once), with the text.
    Unexpressible(String),
}

/// What an operand's table row says of it: its suffixes (`H0_H0`), or for a special
/// register its whole name (`SR_TID.X`).
pub fn suffix_tokens(kind: OperandKind, o: &Operand) -> Vec<String> {
    match (kind, &o.body) {
        (k, Body::Other { text }) if k.is_named() => std::iter::once(text.clone()).chain(o.suffixes.iter().cloned()).collect(),
        _ => o.suffixes.clone(),
    }
}

/// `SR_TID`, `SRZ`, and the unnamed ones nvdisasm numbers (`SR254`).
fn is_special_register(text: &str) -> bool {
    text.starts_with("SR_") || text == "SRZ" || text.strip_prefix("SR").is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
}

/// A name nvdisasm prints from an operand's table (`1D`, `COMP_STATUS`, `INVALID0`, `???3`,
/// `Rpc`): letters, digits, `_` and `?`, not a number, register or memory operand (those
/// parse to other bodies first).
fn is_name(text: &str) -> bool {
    let set = text.strip_prefix('{').and_then(|t| t.strip_suffix('}'));
    match set {
        // A set of scoreboards (`DEPBAR {5,4,3,2,1,0}`), named by a table as a name is.
        Some(inner) => !inner.is_empty() && inner.bytes().all(|c| c.is_ascii_digit() || c == b','),
        None => !text.is_empty() && text.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'?'),
    }
}

/// The operand kind a printed operand has, as the page's form line writes it.
pub fn kind_of(o: &Operand) -> Option<OperandKind> {
    match o.body {
        Body::Reg { .. } => Some(OperandKind::Reg),
        Body::UReg { .. } => Some(OperandKind::UReg),
        Body::Imm { .. } => Some(OperandKind::Imm(ImmMap::PLAIN)),
        Body::Float { .. } => Some(OperandKind::Float(None)),
        Body::Const { .. } => Some(OperandKind::Const),
        Body::ConstX { .. } => Some(OperandKind::ConstX),
        Body::Pred { .. } => Some(OperandKind::Pred),
        Body::UPred { .. } => Some(OperandKind::UPred),
        Body::Barrier { .. } => Some(OperandKind::Barrier),
        Body::Other { ref text } if is_special_register(text) => Some(OperandKind::Special),
        Body::Other { ref text } if is_name(text) => Some(OperandKind::Name),
        Body::Mem { .. } => o.body.as_mem().map(|(space, reg, ureg, imm)| OperandKind::Mem(printed_shape(space, reg, &o.suffixes, ureg, imm))),
        _ => None,
    }
}

/// The shape a printed memory operand shows: its visible components (a form may have more,
/// which print only when not zero; see [`Seed::widen`]).
fn printed_shape(space: MemSpace, reg: Option<u16>, suffixes: &[String], ureg: Option<u16>, imm: Option<i64>) -> MemShape {
    let reg_suffix = suffixes.first().and_then(|s| MEM_REG_SUFFIXES.iter().find(|k| *k == s)).copied();
    let imm = match imm {
        None => MemImm::Absent,
        Some(x) if x < 0 => MemImm::Signed,
        Some(_) => MemImm::Unsigned,
    };
    MemShape { space: MemSpaceKind::of(space), reg: reg.is_some(), reg_suffix, reg_elided: false, ureg: ureg.is_some(), ureg_elided: false, imm, imm_shift: 0 }
}

/// Components of a printed memory operand that are values rather than stand-ins: a
/// register other than a bare RZ (`[RZ]` prints when nothing else would), a uniform
/// register, a non-zero immediate (`a[0x0]` stands in likewise); and whether that
/// immediate is negative.
fn shown_components(o: &Operand) -> Option<(MemSpaceKind, bool, bool, Option<bool>)> {
    let (space, reg, ureg, imm) = o.body.as_mem()?;
    let reg = reg.is_some_and(|n| n != sass::RZ || !o.suffixes.is_empty());
    Some((MemSpaceKind::of(space), reg, ureg.is_some(), imm.filter(|&x| x != 0).map(|x| x < 0)))
}

/// The memory shape of a form operand: a memory operand's, or a constant's seen as one
/// (`c[0x0][0x358]` is `c[I][I]` until a flip shows a register in its brackets).
fn mem_view(kind: OperandKind, o: &Operand) -> Option<MemShape> {
    match (kind, &o.body) {
        (OperandKind::Mem(m), _) => Some(m),
        (OperandKind::Const | OperandKind::ConstX, Body::Const { .. } | Body::ConstX { .. }) => {
            o.body.as_mem().map(|(space, _, _, imm)| printed_shape(space, None, &[], None, imm))
        }
        _ => None,
    }
}

/// Does printed operand `o` fit memory shape `m`: the same space, and no value in a
/// component the shape lacks?
fn fits(m: &MemShape, o: &Operand) -> bool {
    shown_components(o)
        .is_some_and(|(space, reg, ureg, imm)| space == m.space && (!reg || m.reg) && (!ureg || m.ureg) && (imm.is_none() || m.imm != MemImm::Absent))
}

/// A seed text that cannot start a solve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    #[error("seed text '{text}': {source}")]
    Text { text: String, source: sass::ParseError },
    #[error("seed text '{0}' has an operand kind pages cannot name (only {tokens})", tokens = OperandKind::form_tokens())]
    Unnamed(String),
}

impl Seed {
    /// Reads the seed's text; an error if it does not read or an operand is of a kind
    /// pages cannot name.
    pub fn new(arch: Arch, text: &str) -> Result<Seed, SeedError> {
        let inst = sass::parse_instruction(text).map_err(|source| SeedError::Text { text: text.to_string(), source })?;
        let kinds = inst.operands.iter().map(kind_of).collect::<Option<Vec<_>>>();
        let kinds = kinds.ok_or_else(|| SeedError::Unnamed(text.to_string()))?;
        let float = FloatFormat::of(&inst.mnemonic, 32);
        Ok(Seed { arch, text: text.to_string(), inst, kinds, float })
    }

    /// Widens each memory operand's shape to every component the texts of this form show
    /// (the seed's and its flips', nvdisasm having named the same form for each): the seed
    /// `[R0]` prints no offset, its flips `[R0+0x1]`. An offset shown negative is signed.
    pub fn widen(&mut self, texts: &[&str]) {
        let insts: Vec<Instruction> = texts.iter().filter_map(|t| sass::parse_instruction(t).ok()).collect();
        let same = |i: &Instruction| i.mnemonic == self.inst.mnemonic && i.operands.len() == self.inst.operands.len();
        for (k, kind) in self.kinds.iter_mut().enumerate() {
            let Some(seed_shape) = mem_view(*kind, &self.inst.operands[k]) else { continue };
            let mut m = MemShape { reg: false, ureg: false, imm: MemImm::Absent, ..seed_shape };
            let ops: Vec<&Operand> = std::iter::once(&self.inst).chain(insts.iter().filter(|i| same(i))).map(|i| &i.operands[k]).collect();
            for (space, reg, ureg, imm) in ops.iter().filter_map(|o| shown_components(o)) {
                if space != m.space {
                    continue;
                }
                m.reg |= reg;
                m.ureg |= ureg;
                m.imm = match (m.imm, imm) {
                    (_, Some(true)) | (MemImm::Signed, _) => MemImm::Signed,
                    (_, Some(false)) | (MemImm::Unsigned, _) => MemImm::Unsigned,
                    _ => MemImm::Absent,
                };
            }
            if m.reg_suffix.is_some() && !m.reg {
                m.reg = true;
            }
            // Nothing but stand-ins: keep what the seed shows (the page then lacks a field
            // and the form stays unsolved, rather than named wrongly). A constant (offsets in
            // 4-byte words) stays one unless a register shows in its brackets
            // (`c[0x0][UR4+0x358]`, LDCU) or an offset that is no multiple of 4 does
            // (`c[0x0][0x222]`, ULDC.U16): its offset then counts bytes.
            let constant = matches!(kind, OperandKind::Const | OperandKind::ConstX);
            let unaligned =
                ops.iter().filter_map(|o| o.body.as_mem()).any(|(sp, _, _, imm)| MemSpaceKind::of(sp) == m.space && imm.is_some_and(|x| x % 4 != 0));
            if m.slots() > 0 && (!constant || m.reg || m.ureg || unaligned) {
                *kind = OperandKind::Mem(m);
            }
        }
    }

    /// The sub-values of form operand `i` as printed in `o`, in field units: for a memory
    /// operand one per page operand of its shape, a left-out component at the value
    /// nvdisasm leaves out (RZ, URZ, 0); otherwise [`Seed::values`].
    pub fn operand_values(&self, i: usize, o: &Operand, raw: &str) -> Vec<Option<i128>> {
        let Some(OperandKind::Mem(m)) = self.kinds.get(i) else { return self.values(i, o, raw) };
        let Some((space, reg, ureg, imm)) = o.body.as_mem() else { return vec![None; m.slots()] };
        let ur = |n: u16| if n == sass::URZ { self.urz() } else { n as i128 };
        let space = match space {
            MemSpace::Desc { ureg } | MemSpace::ConstX { ureg } => ur(ureg),
            MemSpace::Const { bank } => bank as i128,
            MemSpace::Plain | MemSpace::Attr | MemSpace::Named { .. } => 0,
        };
        m.slot_roles()
            .into_iter()
            .map(|role| {
                Some(match role {
                    MemSlot::Space => space,
                    MemSlot::Reg => reg.unwrap_or(sass::RZ) as i128,
                    MemSlot::UReg => ur(ureg.unwrap_or(sass::URZ)),
                    MemSlot::Imm => return ImmMap { shift: m.imm_shift, offset: 0 }.invert(imm.unwrap_or(0) as i128),
                })
            })
            .collect()
    }

    /// Uniform register zero: UR63 (6 bits) before SM100, UR255 (8 bits) from SM100.
    pub fn urz(&self) -> i128 {
        if self.arch.0 >= 100 {
            255
        } else {
            63
        }
    }

    /// The sub-values of a printed operand, in field units (offsets in 4-byte units).
    pub fn values(&self, k: usize, o: &Operand, raw: &str) -> Vec<Option<i128>> {
        let ureg = |n: u16| if raw.contains("URZ") { self.urz() } else { n as i128 };
        if self.kinds.get(k).is_some_and(|k| k.is_named()) {
            return vec![]; // a name, not a number: its bits are a table's (see `suffix_tokens`)
        }
        if let (Some(OperandKind::Target(shift)), Body::Imm { value }) = (self.kinds.get(k), &o.body) {
            // Texts are rewritten as at address 0 (see `Oracle::targets`): 0x10 + 2^shift × value.
            let d = *value - 0x10;
            return vec![(d % (1 << shift) == 0).then_some(d >> shift)];
        }
        match &o.body {
            Body::Reg { n } => vec![Some(*n as i128)],
            Body::UReg { n } => vec![Some(ureg(*n))],
            Body::Imm { value } => match self.kinds.get(k) {
                Some(OperandKind::Imm(m)) => vec![m.invert(*value)],
                _ => vec![Some(*value)],
            },
            Body::Float { value, .. } => vec![float_bits(*value, self.float)],
            Body::Const { bank, offset } => vec![Some(*bank as i128), Some(*offset as i128 / 4)],
            Body::ConstX { ureg: u, offset } => vec![Some(ureg(*u)), Some(*offset as i128 / 4)],
            Body::Pred { n } | Body::UPred { n } | Body::Barrier { n } => vec![Some(*n as i128)],
            _ => vec![None],
        }
    }

    /// Classifies the text of the seed with one bit flipped.
    pub fn classify(&self, out: Option<&str>) -> Effect {
        let Some(text) = out else { return Effect::Fixed(Fixed::Illegal) };
        if text.is_empty() {
            return Effect::Fixed(Fixed::Silent);
        }
        if text == self.text {
            return Effect::Fixed(Fixed::Ignored);
        }
        let Ok(inst) = sass::parse_instruction(text) else { return Effect::Fixed(Fixed::Other) };
        if let Some(back) = self.pt_put_back(&inst).or_else(|| self.zero_put_back(&inst)) {
            return self.classify(Some(&back));
        }
        if inst.mnemonic != self.inst.mnemonic || inst.operands.len() != self.inst.operands.len() {
            return Effect::Fixed(Fixed::Other);
        }
        let mut changes = vec![];
        if inst.pred != self.inst.pred {
            changes.push(Effect::Pred);
        }
        if inst.modifiers != self.inst.modifiers {
            changes.push(Effect::Modifiers(inst.modifiers.clone()));
        }
        let raws = raw_operands(text);
        for (i, (a, b)) in self.inst.operands.iter().zip(&inst.operands).enumerate() {
            match self.operand_change(i, a, b, raws.get(i).map(String::as_str).unwrap_or("")) {
                Ok(mut c) => changes.append(&mut c),
                Err(e) => return e,
            }
        }
        // A bit of an integer immediate may also change the modifiers: nvdisasm's aliases
        // for some values (`IMAD.MOV` for a zero multiplier, `.IADD` for one). One bit can
        // belong to one field only, so the value is what it encodes.
        let imm_value = |e: &Effect| matches!(e, Effect::Value { operand, .. } if matches!(self.kinds[*operand], OperandKind::Imm(_)));
        if changes.len() == 2 && changes.iter().any(|e| matches!(e, Effect::Modifiers(_))) && changes.iter().any(imm_value) {
            changes.retain(imm_value);
        }
        match changes.len() {
            0 => Effect::Fixed(Fixed::Terminator),
            1 => changes.remove(0),
            2 => self.linked(&changes, &inst, &raws).unwrap_or_else(|| Effect::Unexpressible(text.to_string())),
            _ => Effect::Unexpressible(text.to_string()),
        }
    }

    /// Two registers that changed together, the later one printing the earlier one's value
    /// plus the same constant in the seed and in `inst`: a [`Effect::Linked`] value.
    fn linked(&self, changes: &[Effect], inst: &Instruction, raws: &[String]) -> Option<Effect> {
        let [Effect::Value { operand: i, sub: a, .. }, Effect::Value { operand: j, sub: b, .. }] = *changes else { return None };
        if !self.is_register(i, a) || !self.is_register(j, b) {
            return None;
        }
        let seed_raws = raw_operands(&self.text);
        let raw = |r: &[String], k: usize| r.get(k).cloned().unwrap_or_default();
        let value = |x: &Instruction, r: &[String], k: usize, sub: usize| self.operand_values(k, &x.operands[k], &raw(r, k)).get(sub).copied().flatten();
        let (sa, sb) = (value(&self.inst, &seed_raws, i, a)?, value(&self.inst, &seed_raws, j, b)?);
        let (fa, fb) = (value(inst, raws, i, a)?, value(inst, raws, j, b)?);
        let plus = u8::try_from(sb - sa).ok()?;
        (fb - fa == sb - sa).then(|| Effect::Linked { operand: i, sub: a, weight: power_of_two((sa ^ fa).unsigned_abs()), derived: (j, b), plus })
    }

    /// Is form operand `k`'s sub-value `sub` a register (`R`, `UR`, one inside a memory
    /// operand, or `desc[UR]`'s)?
    fn is_register(&self, k: usize, sub: usize) -> bool {
        match self.kinds.get(k) {
            Some(OperandKind::Reg | OperandKind::UReg) => sub == 0,
            Some(OperandKind::Mem(m)) => match m.slot_roles().get(sub) {
                Some(MemSlot::Reg | MemSlot::UReg) => true,
                Some(MemSlot::Space) => m.space == MemSpaceKind::Desc,
                _ => false,
            },
            _ => false,
        }
    }

    /// `inst` (one operand fewer than the seed) with the PT or UPT nvdisasm left out put
    /// back as text: a flip that sets a predicate field to all ones drops the operand
    /// (`B2R.RESULT R15, P5` → `B2R.RESULT R15`), a value bit all the same. The operand is the
    /// seed's undecorated predicate without which the seed's operands are the text's.
    fn pt_put_back(&self, inst: &Instruction) -> Option<String> {
        if inst.mnemonic != self.inst.mnemonic || inst.operands.len() + 1 != self.inst.operands.len() {
            return None;
        }
        let k = (0..self.inst.operands.len()).find(|&k| {
            let o = &self.inst.operands[k];
            let rest = self.inst.operands.iter().enumerate().filter(|(i, _)| *i != k).map(|(_, o)| o);
            let undecorated = !o.not && o.suffixes.is_empty();
            matches!(o.body, Body::Pred { n } | Body::UPred { n } if n != 7) && undecorated && rest.eq(inst.operands.iter())
        })?;
        let pt = match self.inst.operands[k].body {
            Body::UPred { .. } => Body::UPred { n: 7 },
            _ => Body::Pred { n: 7 },
        };
        let mut back = inst.clone();
        back.operands.insert(k, Operand::new(pt));
        Some(back.to_string())
    }

    /// `inst` (one operand fewer than the seed, the same modifiers) with the immediate
    /// nvdisasm left out at zero put back as text: a flip that clears the one set bit of an
    /// immediate's field drops the operand (`BAR.SYNC 0x0, 0x1` → `BAR.SYNC 0x0`, `BRX P0,
    /// R0 0x4` → `BRX P0, R0`), a value bit all the same. The operand is the seed's
    /// undecorated immediate of one set bit (in field units) without which the seed's
    /// operands are the text's.
    fn zero_put_back(&self, inst: &Instruction) -> Option<String> {
        let same = inst.mnemonic == self.inst.mnemonic && inst.pred == self.inst.pred && inst.modifiers == self.inst.modifiers;
        if !same || inst.operands.len() + 1 != self.inst.operands.len() {
            return None;
        }
        let one_bit = |k: usize| {
            let o = &self.inst.operands[k];
            let plain = !o.not && !o.neg && !o.abs && o.suffixes.is_empty();
            match (self.kinds[k], &o.body) {
                (OperandKind::Imm(m), Body::Imm { value }) if plain => {
                    m.invert(*value).and_then(|x| power_of_two(x.unsigned_abs()).filter(|_| x > 0)).map(|_| m)
                }
                _ => None,
            }
        };
        let (k, m) = (0..self.inst.operands.len()).find_map(|k| {
            let rest = self.inst.operands.iter().enumerate().filter(|(i, _)| *i != k).map(|(_, o)| o);
            one_bit(k).filter(|_| rest.eq(inst.operands.iter())).map(|m| (k, m))
        })?;
        let mut back = inst.clone();
        let joined = self.inst.operands[k].joined;
        back.operands.insert(k, Operand { joined, ..Operand::new(Body::Imm { value: m.apply(0) }) });
        Some(back.to_string())
    }

    /// Classifies every flip (`texts[k]` for `bits[k]`); when the form has `F` operands
    /// whose flips step by no power of two as fp32, but all do as fp16 (`HADD2 R0, R0, 0`)
    /// or as a double's high half (`FRND.F64 R0, 0`), the immediates are of that format and
    /// the seed reads them so from now on.
    pub fn classify_all(&mut self, texts: &[Option<&str>]) -> Vec<Effect> {
        let effects: Vec<Effect> = texts.iter().map(|t| self.classify(*t)).collect();
        if self.float != FloatFormat::Single || self.odd_float_steps(&effects) == 0 {
            return effects;
        }
        for float in [FloatFormat::Half, FloatFormat::DoubleHigh] {
            let other = Seed { float, ..self.clone() };
            let again: Vec<Effect> = texts.iter().map(|t| other.classify(*t)).collect();
            if other.odd_float_steps(&again) == 0 {
                *self = other;
                return again;
            }
        }
        effects
    }

    /// Scales the flips show: an immediate whose lowest value bit weighs 2^s > 1 (JMP's
    /// absolute target and `a[0x..]` offsets count 4-byte words, STG.256's offset 32-byte
    /// units) is read as `I*2^s` from now on, plus the seed's remainder below 2^s
    /// (`BPT.TRAP 0x1`: `I*2+1`); an fp32 immediate whose 16 bits weigh 2^16…2^31 is a
    /// bfloat16; a branch target (read in bytes until now) counts units of its lowest
    /// weight (4-byte words for BRA, bytes for LEPC). True when a kind changed (classify again).
    pub fn fit_scales(&mut self, effects: &[Effect]) -> bool {
        let mut lowest: std::collections::BTreeMap<(usize, usize), (u32, usize)> = Default::default();
        for e in effects {
            if let Effect::Value { operand, sub, weight } = *e {
                let w = weight.unwrap_or(0);
                let at = lowest.entry((operand, sub)).or_insert((w, 0));
                *at = (at.0.min(w), at.1 + 1);
            }
        }
        let mut changed = false;
        for ((i, sub), (shift, n)) in lowest {
            if shift == 0 || shift > 32 {
                continue;
            }
            changed |= self.scale(i, sub, shift, n);
        }
        changed
    }

    /// Reads form operand `i`'s sub-value `sub` as scaled by 2^`shift` (`n` value bits).
    fn scale(&mut self, i: usize, sub: usize, shift: u32, n: usize) -> bool {
        match (self.kinds[i], &self.inst.operands[i].body) {
            (OperandKind::Imm(ImmMap::PLAIN), Body::Imm { value }) => {
                let offset = value.rem_euclid(1i128 << shift);
                let Ok(offset) = u8::try_from(offset) else { return false };
                self.kinds[i] = OperandKind::Imm(ImmMap { shift: shift as u8, offset });
                true
            }
            (OperandKind::Mem(mut m), _) if m.imm_shift == 0 && m.slot_roles().get(sub) == Some(&MemSlot::Imm) => {
                m.imm_shift = shift as u8;
                self.kinds[i] = OperandKind::Mem(m);
                true
            }
            (OperandKind::Target(0), _) if shift <= 16 => {
                self.kinds[i] = OperandKind::Target(shift as u8);
                true
            }
            (OperandKind::Float(None), _) if self.float == FloatFormat::Single && shift == 16 && n == 16 => {
                self.float = FloatFormat::BFloat;
                true
            }
            _ => false,
        }
    }

    /// The format's bit whose flip turns the seed's float `bits` into the NaN `b` prints
    /// (nvdisasm prints no payload: an exponent bit that completes all ones), if just one does.
    fn nan_weight(&self, bits: i128, b: &Operand) -> Option<u32> {
        let Body::Float { value, text } = &b.body else { return None };
        if !value.is_nan() {
            return None;
        }
        let width = if matches!(self.float, FloatFormat::Half | FloatFormat::BFloat) { 16 } else { 32 };
        let hits: Vec<u32> = (0..width).filter(|&j| crate::codec::print::float_text((bits as u64) ^ 1 << j, self.float).1.trim() == text.trim()).collect();
        match hits.as_slice() {
            [j] => Some(*j),
            _ => None,
        }
    }

    /// How many effects change an `F` operand by a step that is not a power of two.
    fn odd_float_steps(&self, effects: &[Effect]) -> usize {
        effects.iter().filter(|e| matches!(e, Effect::Value { operand, weight: None, .. } if self.kinds[*operand].is_float())).count()
    }

    fn operand_change(&self, i: usize, a: &Operand, b: &Operand, raw: &str) -> Result<Vec<Effect>, Effect> {
        let same_kind = match &self.kinds[i] {
            OperandKind::Mem(m) => fits(m, b),
            k => kind_of(b) == Some(k.printed_kind()),
        };
        if !same_kind {
            return Err(Effect::Fixed(Fixed::Other));
        }
        let mut out = vec![];
        if suffix_tokens(self.kinds[i], b) != suffix_tokens(self.kinds[i], a) {
            out.push(Effect::Suffix { operand: i });
        }
        if a.not != b.not {
            out.push(Effect::Flag { operand: i, role: FlagRole::Not });
        }
        if a.neg != b.neg {
            out.push(Effect::Flag { operand: i, role: FlagRole::Neg });
        }
        if a.abs != b.abs {
            out.push(Effect::Flag { operand: i, role: FlagRole::Abs });
        }
        let seed_raw = raw_operands(&self.text);
        let va = self.operand_values(i, a, seed_raw.get(i).map(String::as_str).unwrap_or(""));
        let vb = self.operand_values(i, b, raw);
        for (sub, (x, y)) in va.iter().zip(&vb).enumerate() {
            if x == y && x.is_some() {
                continue;
            }
            let weight = match (x, y) {
                (Some(x), Some(y)) => power_of_two((x ^ y).unsigned_abs()),
                (Some(x), None) if self.kinds[i].is_float() => self.nan_weight(*x, b),
                _ => None,
            };
            out.push(Effect::Value { operand: i, sub, weight });
        }
        Ok(out)
    }
}

fn power_of_two(d: u128) -> Option<u32> {
    (d != 0 && d & (d - 1) == 0).then(|| d.trailing_zeros())
}

/// The bits of a printed float immediate in `format` (`None`: a NaN, or not exact).
pub fn float_bits(v: f64, format: FloatFormat) -> Option<i128> {
    if v.is_nan() {
        return None;
    }
    match format {
        FloatFormat::DoubleHigh => Some((v.to_bits() >> 32) as i128),
        FloatFormat::Half => f64_to_half(v).map(i128::from),
        FloatFormat::BFloat => f64_to_bfloat(v).map(i128::from),
        FloatFormat::Single => {
            let f = v as f32;
            (f as f64 == v || v.is_infinite()).then(|| f.to_bits() as i128)
        }
    }
}

/// The operands of an instruction text as printed, split at top-level commas.
pub fn raw_operands(text: &str) -> Vec<String> {
    let body = text.trim_end().trim_end_matches(';').trim_end();
    let body = match body.strip_prefix('@') {
        Some(r) => r.split_once(' ').map(|x| x.1).unwrap_or(""),
        None => body,
    };
    let Some((_, ops)) = body.split_once(' ') else { return vec![] };
    let (mut out, mut cur, mut depth) = (vec![], String::new(), 0i32);
    for ch in ops.chars() {
        match ch {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    // `R0 0x3440`: two operands, the second joined to the first (`sass::Operand::joined`);
    // `c[0x0] [0x4]` is one.
    out.into_iter()
        .flat_map(|p| match p.split_once(' ') {
            Some((a, b)) if !p.contains("] [") => vec![a.to_string(), b.trim_start().to_string()],
            _ => vec![p],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(t: &str) -> Seed {
        Seed::new(Arch(90), t).unwrap()
    }

    #[test]
    fn a_predicate_dropped_at_pt_is_a_value_bit() {
        // P5 → PT (bit 1 of the field) drops the operand; the PT put back shows the step.
        let s = seed("B2R.RESULT R15, P5;");
        assert_eq!(s.classify(Some("B2R.RESULT R15;")), Effect::Value { operand: 1, sub: 0, weight: Some(1) });
        let s = seed("IADD3.X R0, P6, R1, R2, R3, P0, P1;");
        assert_eq!(s.classify(Some("IADD3.X R0, R1, R2, R3, P0, P1;")), Effect::Value { operand: 1, sub: 0, weight: Some(0) });
        // A decorated predicate is not left out; nor is another operand.
        assert_eq!(seed("B2R.RESULT R15, !P5;").classify(Some("B2R.RESULT R15;")), Effect::Fixed(Fixed::Other));
        assert_eq!(s.classify(Some("IADD3.X R0, P6, R2, R3, P0, P1;")), Effect::Fixed(Fixed::Other));
    }

    #[test]
    fn an_immediate_dropped_at_zero_is_a_value_bit() {
        // BAR.SYNC's count 0x1 → 0 drops the operand; the 0x0 put back shows the step.
        let s = seed("@P0 BAR.SYNC 0x0, 0x1;");
        assert_eq!(s.classify(Some("@P0 BAR.SYNC 0x0;")), Effect::Value { operand: 1, sub: 0, weight: Some(0) });
        // BRX's offset, joined to its register, its bit 2 weighing 4 bytes.
        let b = seed("@P0 BRX P0, R0 0x4;");
        assert_eq!(b.classify(Some("@P0 BRX P0, R0;")), Effect::Value { operand: 2, sub: 0, weight: Some(2) });
        // Not from a value of several bits, nor with other changes; the operand whose
        // removal leaves the text.
        assert_eq!(seed("@P0 BAR.SYNC 0x0, 0x3;").classify(Some("@P0 BAR.SYNC 0x0;")), Effect::Fixed(Fixed::Other));
        assert_eq!(s.classify(Some("@P0 BAR.SYNC.DEFER_BLOCKING 0x0;")), Effect::Fixed(Fixed::Other));
        assert_eq!(seed("@P0 BAR.SYNC 0x2, 0x1;").classify(Some("@P0 BAR.SYNC 0x2;")), Effect::Value { operand: 1, sub: 0, weight: Some(0) });
    }

    #[test]
    fn flips_are_classified_like_nvdisasm_prints_them() {
        let s = seed("@P0 FFMA R0, R0, R0, c[0x0][0x0];");
        assert_eq!(s.classify(None), Effect::Fixed(Fixed::Illegal));
        assert_eq!(s.classify(Some("@P0 FFMA R0, R0, R0, c[0x0][0x0] ;")), Effect::Fixed(Fixed::Terminator));
        assert_eq!(s.classify(Some("@P1 FFMA R0, R0, R0, c[0x0][0x0];")), Effect::Pred);
        assert_eq!(s.classify(Some("@P0 FFMA R0, R0, R0, c[0x0][-0x8000];")), Effect::Value { operand: 3, sub: 1, weight: Some(13) });
        assert_eq!(s.classify(Some("@P0 FFMA R0, R0, R0, c[0x10][0x0];")), Effect::Value { operand: 3, sub: 0, weight: Some(4) });
        assert_eq!(s.classify(Some("@P0 FFMA R0, R0, R0, -c[0x0][0x0];")), Effect::Flag { operand: 3, role: FlagRole::Neg });
        assert_eq!(s.classify(Some("@P0 FFMA.RM R0, R0, R0, c[0x0][0x0];")), Effect::Modifiers(vec!["RM".into()]));
        assert_eq!(s.classify(Some("@P0 FADD R0, R0, c[0x0][0x0];")), Effect::Fixed(Fixed::Other));
    }

    #[test]
    fn predicates_and_their_negation() {
        let s = seed("@P0 ISETP.GE.AND P0, P0, R0, R0, P0;");
        assert_eq!(s.kinds, [OperandKind::Pred, OperandKind::Pred, OperandKind::Reg, OperandKind::Reg, OperandKind::Pred]);
        assert_eq!(s.classify(Some("@P0 ISETP.GE.AND P0, P4, R0, R0, P0;")), Effect::Value { operand: 1, sub: 0, weight: Some(2) });
        assert_eq!(s.classify(Some("@P0 ISETP.GE.AND P0, P0, R0, R0, !P0;")), Effect::Flag { operand: 4, role: FlagRole::Not });
        assert_eq!(s.classify(Some("@P0 ISETP.GE.AND P0, P0, ~R0, R0, P0;")), Effect::Flag { operand: 2, role: FlagRole::Not });
        // A negation and a value change at once is two cells' worth.
        assert!(matches!(s.classify(Some("@P0 ISETP.GE.AND P0, P0, R0, R0, !P1;")), Effect::Unexpressible(_)));
        // A predicate operand that turns into a register is another form.
        assert_eq!(s.classify(Some("@P0 ISETP.GE.AND P0, P0, R0, R0, R0;")), Effect::Fixed(Fixed::Other));
        let u = seed("PLOP3.LUT PT, P5, PT, P3, !UPT, 0x0, 0x0;");
        assert_eq!(u.kinds[4], OperandKind::UPred);
        let o = &u.inst.operands;
        assert_eq!([0, 1, 4].map(|k| u.values(k, &o[k], "")), [vec![Some(7)], vec![Some(5)], vec![Some(7)]]);
    }

    #[test]
    fn operand_suffixes_and_fp16_immediates() {
        let s = seed("@P0 HADD2.F32 R0, R0, 0;");
        assert_eq!(s.classify(Some("@P0 HADD2.F32 R0, R0.H0_H0, 0;")), Effect::Suffix { operand: 1 });
        assert_eq!(s.classify(Some("@P0 HADD2.F32 R0, R0, c[0x0] [0x0].INVALID1;")), Effect::Fixed(Fixed::Other));
        // A suffix and a value at once is two cells' worth.
        assert!(matches!(s.classify(Some("@P0 HADD2.F32 R0, R1.H1_H1, 0;")), Effect::Unexpressible(_)));
        // fp16 bits 0, 10 and 14 of the immediate: no power-of-two step as fp32, all as fp16.
        let mut h = s.clone();
        let flips = [Some("@P0 HADD2.F32 R0, R0, 5.9604644775390625e-08;"), Some("@P0 HADD2.F32 R0, R0, 6.103515625e-05;"), Some("@P0 HADD2.F32 R0, R0, 2;")];
        let e = h.classify_all(&flips);
        assert_eq!(h.float, FloatFormat::Half);
        assert_eq!(e.iter().map(|e| matches!(e, Effect::Value { weight: Some(w), .. } if [0, 10, 14].contains(w))).collect::<Vec<_>>(), [true; 3]);
        // FFMA's fp32 immediate stays fp32.
        let mut f = seed("@P0 FFMA R0, R0, 0, R0;");
        f.classify_all(&[Some("@P0 FFMA R0, R0, 2, R0;"), Some("@P0 FFMA R0, R0, 1.4012984643248170709e-45, R0;")]);
        assert_eq!(f.float, FloatFormat::Single);
    }

    #[test]
    fn scales_and_float_formats_are_fitted_from_the_flips() {
        // JMP's absolute target: the field's bit 0 moves it by 4.
        let mut j = seed("@P0 JMP P0, 0x0;");
        let flips = [Some("@P0 JMP P0, 0x4;"), Some("@P0 JMP P0, 0x8;")];
        let e = j.classify_all(&flips);
        assert!(j.fit_scales(&e));
        assert_eq!(j.kinds[1], OperandKind::Imm(ImmMap { shift: 2, offset: 0 }));
        assert_eq!(j.classify_all(&flips), [0, 1].map(|w| Effect::Value { operand: 1, sub: 0, weight: Some(w) }));
        // BPT.TRAP's odd codes: the low bit is the form's.
        let mut b = seed("@P0 BPT.TRAP 0x1;");
        let e = b.classify_all(&[Some("@P0 BPT.TRAP 0x3;"), Some("@P0 BPT.TRAP 0x5;")]);
        assert!(b.fit_scales(&e));
        assert_eq!(b.kinds[0], OperandKind::Imm(ImmMap { shift: 1, offset: 1 }));
        // IPA's attribute offset in 4-byte words.
        let mut a = seed("@P0 IPA.PASS R0, P0, a[0x4];");
        let e = a.classify_all(&[Some("@P0 IPA.PASS R0, P0, a[0xc];"), Some("@P0 IPA.PASS R0, P0, a[0x0];")]);
        assert!(a.fit_scales(&e));
        assert!(matches!(a.kinds[2], OperandKind::Mem(m) if m.imm_shift == 2));
        // A bfloat16: 16 bits weighing 2^16..2^31 as fp32.
        let mut f = seed("@P0 FRND.BF16 R0, 0;");
        let flips: Vec<String> = (16..32).map(|k| format!("@P0 FRND.BF16 R0, {};", crate::codec::print::float_text(1 << k, FloatFormat::Single).1)).collect();
        let flips: Vec<Option<&str>> = flips.iter().map(|t| Some(t.as_str())).collect();
        let e = f.classify_all(&flips);
        assert!(f.fit_scales(&e));
        assert_eq!(f.float, FloatFormat::BFloat);
        assert!(f.classify_all(&flips).iter().enumerate().all(|(k, e)| *e == Effect::Value { operand: 1, sub: 0, weight: Some(k as u32) }));
        // A plain immediate stays plain.
        let mut p = seed("@P0 IADD3 R0, R0, 0x0, R0;");
        let e = p.classify_all(&[Some("@P0 IADD3 R0, R0, 0x1, R0;"), Some("@P0 IADD3 R0, R0, 0x2, R0;")]);
        assert!(!p.fit_scales(&e));
    }

    #[test]
    fn fp64_high_halves_and_nan_flips() {
        // FRND.F64 (no D mnemonic): flips step by powers of two as a double's high half only.
        let mut d = seed("@P0 FRND.F64 R0, 0;");
        let flips = [Some("@P0 FRND.F64 R0, 2.1219957909652723151e-314;"), Some("@P0 FRND.F64 R0, 2;")];
        let e = d.classify_all(&flips);
        assert_eq!(d.float, FloatFormat::DoubleHigh);
        assert_eq!(e, [0, 30].map(|w| Effect::Value { operand: 1, sub: 0, weight: Some(w) }));
        // fp16 58528 (0x7b25): its one clear exponent bit (10) makes a quiet NaN.
        let mut h = seed("@P0 FRND.F16 R0, 58528;");
        let e = h.classify_all(&[Some("@P0 FRND.F16 R0, +QNAN ;"), Some("@P0 FRND.F16 R0, 58496;")]);
        assert_eq!(h.float, FloatFormat::Half);
        assert_eq!(e, [10, 0].map(|w| Effect::Value { operand: 1, sub: 0, weight: Some(w) }));
    }

    #[test]
    fn names_special_registers_and_joined_targets() {
        let t = seed("@P0 TXQ R0, R0, R0, TEX_HEADER_DIMENSION, 0x0, 0x0, 0x0;");
        assert_eq!(t.kinds[3], OperandKind::Name);
        // A name's change is its table's (a suffix), not a value.
        assert_eq!(t.classify(Some("@P0 TXQ R0, R0, R0, TEX_HEADER_SAMPLER_POS, 0x0, 0x0, 0x0;")), Effect::Suffix { operand: 3 });
        assert_eq!(t.values(3, &t.inst.operands[3], ""), vec![]);
        for (text, k) in [("@P0 FSWZADD R0, R0, R0, PPPPPPPP;", 3), ("@P0 BMOV.32 B0, ???0;", 1), ("@P0 TEX.EF P0, R0, R0, R0, R0, 0x0, 0x0, 1D, 0x0;", 7)] {
            assert_eq!(seed(text).kinds[k], OperandKind::Name, "{text}");
        }
        assert_eq!(seed("@P0 S2R R0, SR_TID.X;").kinds[1], OperandKind::Special);
        // A name turning into a register is another form.
        let o = seed("@P0 OUT.CUT R0, R0, ???0;");
        assert_eq!(o.classify(Some("@P0 OUT.CUT R0, R0, RZ;")), Effect::Fixed(Fixed::Other));
        assert_eq!(raw_operands("@P0 CALL.REL P0, R0 0x3440;"), ["P0", "R0", "0x3440"]);
        assert_eq!(raw_operands("@P0 HADD2 R0, R0, c[0x0] [0x4];"), ["R0", "R0", "c[0x0] [0x4]"]);
    }

    #[test]
    fn uniform_zero_and_floats() {
        let s = Seed::new(Arch(100), "@P0 FFMA R0, R0, UR0, R0;").unwrap();
        assert_eq!(s.classify(Some("@P0 FFMA R0, R0, UR128, R0;")), Effect::Value { operand: 2, sub: 0, weight: Some(7) });
        let z = sass::parse_operand("URZ").unwrap();
        assert_eq!(s.values(0, &z, "URZ"), vec![Some(255)]);
        assert_eq!(float_bits(-0.0, FloatFormat::Single), Some(0x8000_0000));
        assert_eq!(float_bits(2.0, FloatFormat::DoubleHigh), Some(0x4000_0000));
        assert_eq!(float_bits(-6.671875, FloatFormat::Half), Some(0xc6ac));
        assert_eq!(float_bits(0.1, FloatFormat::Half), None);
        assert_eq!(float_bits(-1.734375, FloatFormat::BFloat), Some(0xbfde));
        assert_eq!(float_bits(1.0 + 2f64.powi(-8), FloatFormat::BFloat), None);
        assert_eq!(raw_operands("@P0 FFMA R0, -|R1|, cx[UR0][0x4], R2 ;"), vec!["R0", "-|R1|", "cx[UR0][0x4]", "R2"]);
    }

    #[test]
    fn registers_that_move_together_are_linked() {
        let s = Seed::new(Arch(100), "@UP0 SYNCS.???0.64 UR0, [UR0], UR0, UR2;").unwrap();
        let linked = |weight, plus| Effect::Linked { operand: 2, sub: 0, weight: Some(weight), derived: (3, 0), plus };
        assert_eq!(s.classify(Some("@UP0 SYNCS.???0.64 UR0, [UR0], UR16, UR18;")), linked(4, 2));
        // Another distance than the seed's: no link.
        assert!(matches!(s.classify(Some("@UP0 SYNCS.???0.64 UR0, [UR0], UR1, UR4;")), Effect::Unexpressible(_)));
        let b = Seed::new(Arch(90), "@P0 BAR.SYNC R0, R0;").unwrap();
        assert_eq!(b.classify(Some("@P0 BAR.SYNC R4, R4;")), Effect::Linked { operand: 0, sub: 0, weight: Some(2), derived: (1, 0), plus: 0 });
        // A register and a memory operand's descriptor register (LDGSTS): + 1.
        let l = Seed::new(Arch(100), "LDGSTS.E.BYPASS.128 [R18+UR8], desc[UR9][R2.64+0x10];").unwrap();
        let e = l.classify(Some("LDGSTS.E.BYPASS.128 [R18+UR40], desc[UR41][R2.64+0x10];"));
        assert_eq!(e, Effect::Linked { operand: 0, sub: 1, weight: Some(5), derived: (1, 0), plus: 1 });
    }
}
