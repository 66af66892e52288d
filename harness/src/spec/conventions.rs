//! nvdisasm's printing conventions that pages do not state, per form, and the file that
//! stores them beside an architecture's pages (`conventions.json`, see [`ConventionsFile`]).
//!
//! What was seen (nvdisasm 13.5, SM90 DFMA): bits 105–109 (stall, yield) and 122–125
//! (reuse) form one table-coded "opex" field: most combinations are illegal, and `.reuse`
//! prints only in some legal ones (yield set and a stall of 1–11); the terminator is ` ;`
//! except when both barrier fields (bits 110–115) are 7, the wait mask and the opex bits
//! are 0. None of this is labelled on the pages, so it is learned by bit position, not by
//! the page's control-field names, by `oracle::learn`, and checked there against what a
//! page's file stores.

use crate::sass::Terminator;
use crate::spec::Arch;
use crate::word::Word;
use std::collections::HashMap;

/// Bits 105–109 (stall, yield) and 122–125 (reuse): nvdisasm's "opex" table index.
pub fn opex_index(w: Word) -> usize {
    let b = w.0;
    ((b >> 105) & 0x1f | ((b >> 122) & 0xf) << 5) as usize
}

/// The word with opex index `i` in bits 105–109 and 122–125.
pub fn with_opex(w: Word, i: usize) -> Word {
    let i = i as u128;
    let clear = !((0x1fu128 << 105) | (0xfu128 << 122));
    Word(w.0 & clear | (i & 0x1f) << 105 | (i >> 5 & 0xf) << 122)
}

/// Bits 110–115: the two barrier fields.
pub fn barrier_index(w: Word) -> usize {
    ((w.0 >> 110) & 0x3f) as usize
}

/// The word with barrier index `i` (its low 6 bits) in bits 110–115.
pub fn with_barriers(w: Word, i: usize) -> Word {
    Word(w.0 & !(0x3fu128 << 110) | ((i as u128) & 0x3f) << 110)
}

/// Bits 116–121: the wait mask.
pub fn wait_index(w: Word) -> usize {
    ((w.0 >> 116) & 0x3f) as usize
}

/// The word with wait mask `i` (its low 6 bits) in bits 116–121.
pub fn with_wait(w: Word, i: usize) -> Word {
    Word(w.0 & !(0x3fu128 << 116) | ((i as u128) & 0x3f) << 116)
}

/// How many wait masks there are (6 bits): the wait sweep's length.
pub const WAIT_VALUES: usize = 64;
/// How many opex indices there are (9 bits: 105–109 and 122–125): the opex sweep's length.
pub const OPEX_VALUES: usize = 512;
/// How many barrier indices there are (6 bits: two 3-bit barriers): the barrier sweep's
/// length.
pub const BARRIER_VALUES: usize = 64;

/// One variant's printing conventions, learned from nvdisasm and stored beside its page
/// (see [`ConventionsFile`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormConventions {
    /// Per opex index: `None` when nvdisasm rejects it, else which printed operands (bit k:
    /// operand k) carry `.reuse`.
    pub opex: Vec<Option<u8>>,
    /// Per opex index, with both barriers 7: does nvdisasm end the line with `;` (no space)?
    pub opex_semicolon: Vec<bool>,
    /// Per barrier index, with opex 0: the terminator.
    pub terminator: Vec<Terminator>,
    /// Per barrier index, with opex 0: does nvdisasm accept it? (Branches, EXIT and BAR
    /// take only 7 and 7, "no barrier".)
    pub barrier_legal: Vec<bool>,
    /// Per wait mask (bits 116–121), with opex 0 and both barriers 7: `;` without a space?
    pub wait_semicolon: Vec<bool>,
    /// Modifier print order: the first word bit of each modifier slot's field (or the
    /// fixed text of a heading modifier), in the order nvdisasm prints them. Empty when
    /// it could not be learned: the page's order is used.
    pub modifier_order: Vec<SlotId>,
    /// Integer immediates print signed (`-0x21b6c350`, as I2F does) rather than unsigned,
    /// with every modifier group at zero.
    pub signed_imm: bool,
    /// Group values that change that (I2F R,I: `.U32` makes the immediate unsigned): the
    /// group field's first bit, its value, and the signedness then.
    pub signed_imm_by: Vec<(u8, u64, bool)>,
    /// The page's operands (printed operand indices) that nvdisasm leaves out when their
    /// value field is all ones and they are undecorated: PT/UPT (`IADD3 R0, R1, R2, RZ`
    /// for `IADD3 R0, PT, PT, R1, R2, RZ`), RZ (`BAR.SYNC 0x0` for `BAR.SYNC 0x0, RZ`), an
    /// immediate (`MOV R0, cx[UR0][0x0]` for its `0xf`); each is left out on its own.
    pub omitted: Vec<usize>,
    /// The page's operands (printed operand indices: a register, uniform register, or a
    /// memory operand's register) whose all-ones register is no zero register here:
    /// nvdisasm prints `???255` where other forms print `RZ` (SM100 `CCTLT.IVTH ???255`,
    /// `[???255.64+UR0]` in ATOM, the texture forms' sources).
    pub unnamed: Vec<usize>,
    /// The page's memory operands (printed operand indices) whose offset, beside a base
    /// register at all ones (RZ), nvdisasm spells otherwise than the fixed rules say
    /// ([`crate::codec::conventions::mem_offset_unsigned`]): SM100 LDGSTS `[-0x645d]` and
    /// LDSM/STSM signed where a lone offset is otherwise an unsigned address, LDC
    /// `cx[UR0][0xe25b]` unsigned, AST/ALD `a[0x22d]` its low 10 bits. Forms that follow
    /// the fixed rules have no entry.
    pub rz_offsets: Vec<(usize, OffsetSpelling)>,
    /// Modifiers nvdisasm adds for some operand values (`IMAD.MOV.U32 R0, RZ, RZ, R1` for
    /// the page's `IMAD.U32`; `IMAD.IADD R0, R1, 0x1, R2`, `IMAD.SHL R0, R1, 0x4, RZ`).
    pub aliases: Vec<Alias>,
    /// Bits the page marks as ignored that make nvdisasm end the line with ` ;` when set
    /// (SM90 ATOMS.POPC.INC's and FFMA's bits 102–103); the sweeps above have them clear.
    pub space_bits: Vec<u8>,
}

/// What an integer immediate is, as far as aliases go: nvdisasm names `x*0+c` MOV, `x*1+c`
/// IADD and `x*2^k+RZ` SHL (but not for 2^16), so each power of two is its own class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImmClass {
    /// 0 (`IMAD.MOV`).
    Zero,
    /// 1 (`IMAD.IADD`).
    One,
    /// `2^k` for `k` ≥ 1, holding `k` (`IMAD.SHL`).
    PowerOfTwo(u8),
    /// Any other value, negative ones included.
    Other,
}

/// How an offset's field prints ([`FormConventions::rz_offsets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OffsetSpelling {
    /// Two's complement of the field's width (`[-0x645d]`).
    Signed,
    /// The field's bits, unsigned (`cx[UR0][0xe25b]`).
    Unsigned,
    /// The low `n` bits of the (scaled) field, unsigned: nvdisasm's attribute offsets
    /// beside RZ (`a[0x22d]` for the 11-bit field 0x62d: 10 bits).
    Bits(u8),
}

impl OffsetSpelling {
    /// The offset printed for field value `x` of `width` bits, scaled by `2^shift`.
    pub fn value(self, x: u64, width: u32, shift: u8) -> i64 {
        let scaled = |v: i64| v.checked_shl(u32::from(shift)).unwrap_or(0);
        match self {
            OffsetSpelling::Signed if width > 0 && width < 64 && x >> (width - 1) & 1 == 1 => scaled(x as i64 - (1i64 << width)),
            OffsetSpelling::Signed | OffsetSpelling::Unsigned => scaled(x as i64),
            OffsetSpelling::Bits(n) => scaled(x as i64) & ((1i64 << n.min(62)) - 1),
        }
    }

    /// Which spelling printed `printed` for the field value all ones (`width` bits, scaled
    /// by `2^shift`): -1 is signed, all ones unsigned, `2^n - 1` (scaled) the low `n` bits.
    pub fn of_all_ones(printed: i64, width: u32, shift: u8) -> Option<OffsetSpelling> {
        let ones = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
        let candidates = [OffsetSpelling::Signed, OffsetSpelling::Unsigned].into_iter().chain((1..width.min(62) as u8 + shift).map(OffsetSpelling::Bits));
        candidates.into_iter().find(|s| s.value(ones, width, shift) == printed)
    }

    /// `signed`, `unsigned` or `N bits`.
    pub fn token(self) -> String {
        match self {
            OffsetSpelling::Signed => "signed".into(),
            OffsetSpelling::Unsigned => "unsigned".into(),
            OffsetSpelling::Bits(n) => format!("{n} bits"),
        }
    }

    /// Reads [`OffsetSpelling::token`]'s spelling.
    pub fn parse(t: &str) -> Result<OffsetSpelling, StoredError> {
        match t {
            "signed" => Ok(OffsetSpelling::Signed),
            "unsigned" => Ok(OffsetSpelling::Unsigned),
            _ => t
                .strip_suffix(" bits")
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|&n| (1..63).contains(&n))
                .map(OffsetSpelling::Bits)
                .ok_or_else(|| bad(format!("'{t}'"), "not signed, unsigned or N bits (1..62)")),
        }
    }
}

impl ImmClass {
    /// The class of immediate value `value`.
    pub fn of(value: i128) -> ImmClass {
        match value {
            0 => ImmClass::Zero,
            1 => ImmClass::One,
            v if v > 1 && (v as u128).is_power_of_two() => ImmClass::PowerOfTwo(v.trailing_zeros() as u8),
            _ => ImmClass::Other,
        }
    }

    /// The classes a field of `width` bits can hold (at least two bits: none otherwise),
    /// `Other` first; powers of two up to 2^32.
    pub fn all(width: u32) -> Vec<ImmClass> {
        if width < 2 {
            return vec![];
        }
        let pows = (1..width.min(33) as u8).map(ImmClass::PowerOfTwo);
        [ImmClass::Other, ImmClass::Zero, ImmClass::One].into_iter().chain(pows).collect()
    }

    /// A field value of this class.
    pub fn example(self) -> u64 {
        match self {
            ImmClass::Zero => 0,
            ImmClass::One => 1,
            ImmClass::PowerOfTwo(k) => 1 << k,
            ImmClass::Other => 3,
        }
    }
}

/// An alias nvdisasm prints: `token` at modifier position `at` when, of the page's register
/// operands `regs`, exactly those in `rz` are RZ, and the immediate operand (if any) is of
/// the given class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The register operands the alias depends on (printed operand indices): the form's
    /// `R` operands with 8-bit fields, those learning sets to RZ or leaves.
    pub regs: Vec<usize>,
    /// Those of `regs` that are RZ when the alias prints; the others are not.
    pub rz: Vec<usize>,
    /// The plain `I` operand (printed operand index) and the class its value has when the
    /// alias prints; `None` when the form has none (or its field is one bit wide).
    pub imm: Option<(usize, ImmClass)>,
    /// The modifier nvdisasm adds (`MOV`, `SHL`).
    pub token: String,
    /// Where in the modifier list it goes (`IMAD.MOV.U32`: 0); past the end, at the end.
    pub at: usize,
}

impl Alias {
    fn applies(&self, operands: &[crate::sass::Operand]) -> bool {
        let rz = |k: usize| matches!(operands.get(k), Some(o) if o.body == crate::sass::Body::Reg { n: crate::sass::RZ });
        let imm = match self.imm {
            None => true,
            Some((k, class)) => matches!(operands.get(k), Some(o) if matches!(o.body, crate::sass::Body::Imm { value } if ImmClass::of(value) == class)),
        };
        imm && self.regs.iter().all(|&k| rz(k) == self.rz.contains(&k))
    }
}

/// A modifier slot, named so that it survives page edits that renumber fields.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SlotId {
    /// A heading modifier, by its text ([`ModSlot::Fixed`](crate::spec::ModSlot::Fixed)).
    Fixed(String),
    /// A group or flag field, by its first bit (0–127).
    FieldAt(u8),
}

impl FormConventions {
    /// Conventions holding only what the control-field sweeps tell (opex, barriers,
    /// terminators, wait masks), every per-form convention empty: a stored `control`
    /// entry as read, and the validator's early guess ([`crate::oracle::learn::Lesson::guess`]).
    /// One constructor, so that a new convention kind is added in one place.
    pub fn controls_only(
        opex: Vec<Option<u8>>,
        opex_semicolon: Vec<bool>,
        terminator: Vec<Terminator>,
        barrier_legal: Vec<bool>,
        wait_semicolon: Vec<bool>,
    ) -> FormConventions {
        FormConventions {
            opex,
            opex_semicolon,
            terminator,
            barrier_legal,
            wait_semicolon,
            modifier_order: vec![],
            signed_imm: false,
            signed_imm_by: vec![],
            omitted: vec![],
            unnamed: vec![],
            rz_offsets: vec![],
            aliases: vec![],
            space_bits: vec![],
        }
    }

    /// Is this word's control combination one nvdisasm accepts?
    pub fn legal(&self, w: Word) -> bool {
        self.opex.get(opex_index(w)).is_some_and(Option::is_some)
    }
    /// Which printed operands carry `.reuse` with this word's control bits (bit k: operand
    /// k); 0 where nvdisasm rejects them.
    pub fn reuse_mask(&self, w: Word) -> u8 {
        self.opex.get(opex_index(w)).copied().flatten().unwrap_or(0)
    }
    /// `;` only where all three sweeps saw `;`: nvdisasm 13.5 drops the space when the
    /// barriers, the wait mask and the opex bits all say "nothing to wait for" (DFMA: both barriers 7, stall,
    /// yield and reuse 0), and FFMA-like forms never print it.
    pub fn terminator(&self, w: Word) -> Option<Terminator> {
        let by_barriers = self.terminator.get(barrier_index(w)).copied()?;
        let by_opex = *self.opex_semicolon.get(opex_index(w))?;
        let by_wait = *self.wait_semicolon.get(wait_index(w))?;
        let by_bits = !self.space_bits.iter().any(|&b| w.bit(b));
        Some(if by_barriers == Terminator::Semicolon && by_opex && by_wait && by_bits { Terminator::Semicolon } else { Terminator::SpaceSemicolon })
    }
    /// Opex indices nvdisasm accepts (what random probes draw their control bits from).
    pub fn legal_opex(&self) -> Vec<usize> {
        (0..self.opex.len()).filter(|&i| self.opex[i].is_some()).collect()
    }
    /// Adds to `modifiers` the alias modifiers nvdisasm prints for `operands` (the page's
    /// printing, every operand present).
    pub fn alias(&self, modifiers: &mut Vec<String>, operands: &[crate::sass::Operand]) {
        for a in self.aliases.iter().filter(|a| a.applies(operands)) {
            if !modifiers.contains(&a.token) {
                modifiers.insert(a.at.min(modifiers.len()), a.token.clone());
            }
        }
    }

    /// Whether [`FormConventions::unalias`] takes a modifier out of `inst` (an alias
    /// applies and its token is there): a cheap look before the copy.
    pub fn has_alias_in(&self, inst: &crate::sass::Instruction) -> bool {
        self.aliases.iter().any(|a| inst.modifiers.contains(&a.token) && a.applies(&inst.operands))
    }

    /// nvdisasm's text `inst` without the alias modifiers: what the page's assembler reads.
    pub fn unalias(&self, inst: &crate::sass::Instruction) -> crate::sass::Instruction {
        let mut out = inst.clone();
        for a in self.aliases.iter().filter(|a| a.applies(&inst.operands)) {
            if let Some(i) = out.modifiers.iter().position(|m| *m == a.token) {
                out.modifiers.remove(i);
            }
        }
        out
    }

    /// Barrier indices nvdisasm accepts.
    pub fn legal_barriers(&self) -> Vec<usize> {
        (0..self.barrier_legal.len()).filter(|&i| self.barrier_legal[i]).collect()
    }
}

/// Learned conventions of every variant, by (architecture, key).
#[derive(Clone, Debug, Default)]
pub struct Conventions {
    forms: HashMap<(Arch, String), FormConventions>,
}

impl Conventions {
    /// The conventions learned for variant `key` of `arch`, if any.
    pub fn get(&self, arch: Arch, key: &str) -> Option<&FormConventions> {
        self.forms.get(&(arch, key.to_string()))
    }
    /// Keeps `c` for variant `key` of `arch`, replacing what it had.
    pub fn insert(&mut self, arch: Arch, key: &str, c: FormConventions) {
        self.forms.insert((arch, key.to_string()), c);
    }
    /// How many variants have conventions.
    pub fn len(&self) -> usize {
        self.forms.len()
    }
    /// Does no variant have any?
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }
}

// ---------------------------------------------------------------------------------------
// The stored form: `conventions.json` beside an architecture's pages.
// ---------------------------------------------------------------------------------------

/// The name of the file beside an architecture's pages that stores their conventions.
pub const FILE_NAME: &str = "conventions.json";

/// The largest conventions file read (the discovered SM90 pages' is about 200 kB).
pub const MAX_FILE_BYTES: usize = 64 << 20;

/// One architecture's stored conventions: the control tables (shared: SM90's 1 130 forms
/// have 38) and, per form, its table's id and the rest of its conventions. Kept in one
/// reviewed file beside the pages rather than as page lines, because a control table is
/// 16 rows of 32 entries that most forms share, and a page should stay what the ISA viewer
/// prints; one form per line, so a new nvdisasm shows up as a readable diff.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConventionsFile {
    /// What wrote it and how to redo it.
    #[serde(default)]
    pub about: String,
    /// The nvdisasm they were learned from (`nvdisasm 13.5.37`).
    #[serde(default)]
    pub tool: String,
    /// The control tables, by id ([`StoredControl::id`], `c` and 8 hex digits).
    pub controls: std::collections::BTreeMap<String, StoredControl>,
    /// By `"<arch> <key>"` (`"SM90 DFMA_R_R_R_R"`).
    pub forms: std::collections::BTreeMap<String, StoredForm>,
}

/// A form's control-bit conventions: which stall/yield/reuse combinations (the "opex"
/// index, bits 105–109 and 122–125) and barriers (110–115) nvdisasm accepts, where it
/// prints `.reuse`, and when the line ends in `;` rather than ` ;`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct StoredControl {
    /// Barrier indices (bits 110–115) nvdisasm accepts, as ranges (`0..63`).
    #[serde(rename = "legal barriers")]
    pub legal_barriers: String,
    /// The line ends in `;` only where the barrier index, the wait mask (bits 116–121) and
    /// the opex index are each in these sets (and no [`FormConventions::space_bits`] bit is
    /// set); else ` ;`.
    #[serde(rename = "semicolon barriers")]
    pub semicolon_barriers: String,
    /// The wait masks (bits 116–121) that allow `;`, as ranges.
    #[serde(rename = "semicolon wait")]
    pub semicolon_wait: String,
    /// The opex indices that allow `;`, as ranges (legal ones only).
    #[serde(rename = "semicolon opex")]
    pub semicolon_opex: String,
    /// One row per value of bits 122–125: 32 entries, stall 0–15 with yield clear, a space,
    /// stall 0–15 with yield set; `.` illegal, `-` accepted, `+` accepted and printing
    /// `.reuse` on the printed operands listed after the row (`+` entries of one row
    /// always decorate the same operands).
    pub reuse: Vec<String>,
}

/// A form's other conventions; see [`FormConventions`] for each.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredForm {
    /// The id of its [`StoredControl`].
    pub control: String,
    /// Modifier print order: `@N` for the slot whose field starts at bit N, else a heading
    /// modifier's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    /// Integer immediates print signed with every group at zero (left out when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub signed: bool,
    /// `[first bit of a group field, its value, signed then]`.
    #[serde(default, rename = "signed by", skip_serializing_if = "Vec::is_empty")]
    pub signed_by: Vec<(u8, u64, bool)>,
    /// Printed operands left out at all ones.
    #[serde(default, rename = "left out at all ones", skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<usize>,
    /// Printed operands whose all-ones register prints `???N`, not the zero register.
    #[serde(default, rename = "unnamed at all ones", skip_serializing_if = "Vec::is_empty")]
    pub unnamed: Vec<usize>,
    /// `[printed operand, spelling]`: memory operands whose offset beside an RZ base
    /// prints `signed`, `unsigned` or its low `N bits`, against the fixed rules.
    #[serde(default, rename = "offset beside RZ", skip_serializing_if = "Vec::is_empty")]
    pub rz_offsets: Vec<(usize, String)>,
    /// The modifiers nvdisasm adds for some operand values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<StoredAlias>,
    /// Ignored bits that make the line end in ` ;` when set, as ranges.
    #[serde(default, rename = "space bits", skip_serializing_if = "String::is_empty")]
    pub space_bits: String,
}

/// An [`Alias`]: `imm` is `[operand, class]` with class `other`, `0`, `1` or `2^k`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredAlias {
    /// [`Alias::token`]: the modifier (`MOV`).
    pub token: String,
    /// [`Alias::at`]: its place in the modifier list.
    pub at: usize,
    /// [`Alias::regs`]: the register operands it depends on.
    pub regs: Vec<usize>,
    /// [`Alias::rz`]: those that are RZ when it prints.
    pub rz: Vec<usize>,
    /// [`Alias::imm`], the class spelled `other`, `0`, `1` or `2^k` (left out when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imm: Option<(usize, String)>,
}

/// A stored convention that cannot be read back: what and why.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {why}")]
pub struct StoredError {
    /// What could not be read: a form key (`SM90 DFMA_R_R_R_R`), `file.json:LINE`, a
    /// row or entry (`reuse row 3 '…'`, `'0..x'`).
    pub what: String,
    /// Why not.
    pub why: String,
}

fn bad(what: impl Into<String>, why: impl Into<String>) -> StoredError {
    StoredError { what: what.into(), why: why.into() }
}

/// `0..3,7` for the indices given (sorted, inclusive ranges); empty for none.
pub fn ranges(xs: impl IntoIterator<Item = usize>) -> String {
    let mut xs: Vec<usize> = xs.into_iter().collect();
    xs.sort_unstable();
    xs.dedup();
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    while i < xs.len() {
        let mut j = i;
        while j + 1 < xs.len() && xs[j + 1] == xs[j] + 1 {
            j += 1;
        }
        out.push(if j == i { xs[i].to_string() } else { format!("{}..{}", xs[i], xs[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// The indices below `limit` that [`ranges`] wrote.
pub fn parse_ranges(s: &str, limit: usize) -> Result<Vec<usize>, StoredError> {
    let mut out = vec![];
    for part in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (a, b) = part.split_once("..").unwrap_or((part, part));
        let n = |x: &str| {
            x.trim().parse::<usize>().ok().filter(|&n| n < limit).ok_or_else(|| bad(format!("'{part}'"), format!("not an index or range below {limit}")))
        };
        let (a, b) = (n(a)?, n(b)?);
        if a > b {
            return Err(bad(format!("'{part}'"), "runs backwards"));
        }
        out.extend(a..=b);
    }
    Ok(out)
}

impl ImmClass {
    fn token(self) -> String {
        match self {
            ImmClass::Zero => "0".into(),
            ImmClass::One => "1".into(),
            ImmClass::PowerOfTwo(k) => format!("2^{k}"),
            ImmClass::Other => "other".into(),
        }
    }
    fn parse(t: &str) -> Result<ImmClass, String> {
        match t {
            "0" => Ok(ImmClass::Zero),
            "1" => Ok(ImmClass::One),
            "other" => Ok(ImmClass::Other),
            _ => t
                .strip_prefix("2^")
                .and_then(|k| k.parse::<u8>().ok())
                .filter(|&k| k > 0 && k < 64)
                .map(ImmClass::PowerOfTwo)
                .ok_or_else(|| format!("'{t}' is not 0, 1, 2^k or other")),
        }
    }
}

impl SlotId {
    /// `@N` for a field starting at bit N, else the fixed text.
    pub fn token(&self) -> String {
        match self {
            SlotId::FieldAt(b) => format!("@{b}"),
            SlotId::Fixed(t) => t.clone(),
        }
    }
    /// Reads [`SlotId::token`]'s spelling.
    pub fn parse(t: &str) -> Result<SlotId, StoredError> {
        match t.strip_prefix('@') {
            Some(b) => b.parse::<u8>().ok().filter(|&b| b < 128).map(SlotId::FieldAt).ok_or_else(|| bad(format!("'{t}'"), "not @bit (0..127)")),
            None if t.is_empty() => Err(bad("modifier slot", "empty")),
            None => Ok(SlotId::Fixed(t.to_string())),
        }
    }
}

impl StoredControl {
    /// The control part of `c`; an error when one row's `.reuse` entries decorate
    /// different operands (never seen; the row format cannot say it).
    pub fn of(c: &FormConventions) -> Result<StoredControl, StoredError> {
        let mut reuse = vec![];
        for r in 0..OPEX_VALUES / 32 {
            let row = &c.opex[r * 32..(r + 1) * 32];
            let masks: Vec<u8> = row.iter().filter_map(|x| x.filter(|&m| m != 0)).collect();
            if masks.iter().any(|&m| m != masks[0]) {
                return Err(bad(format!("reuse row {r}"), format!("entries decorate different operands ({masks:?})")));
            }
            let sym = |x: &Option<u8>| match x {
                None => '.',
                Some(0) => '-',
                Some(_) => '+',
            };
            let mut s: String = row[..16].iter().map(sym).collect();
            s.push(' ');
            s.extend(row[16..].iter().map(sym));
            if let Some(&m) = masks.first() {
                s.push(' ');
                s.push_str(&(0..8).filter(|k| m >> k & 1 == 1).map(|k| k.to_string()).collect::<Vec<_>>().join(","));
            }
            reuse.push(s);
        }
        let set = |v: &[bool]| ranges((0..v.len()).filter(|&i| v[i]));
        Ok(StoredControl {
            legal_barriers: set(&c.barrier_legal),
            semicolon_barriers: ranges((0..c.terminator.len()).filter(|&i| c.barrier_legal[i] && c.terminator[i] == Terminator::Semicolon)),
            semicolon_wait: set(&c.wait_semicolon),
            semicolon_opex: ranges((0..c.opex.len()).filter(|&i| c.opex[i].is_some() && c.opex_semicolon[i])),
            reuse,
        })
    }

    /// A short id that names this table by its content (the same table: the same id).
    pub fn id(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        // FNV-1a: stable across runs and platforms (std's hasher is not).
        let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        format!("c{:08x}", (h >> 32) as u32 ^ h as u32)
    }

    /// The control part of [`FormConventions`] (the rest empty).
    fn tables(&self) -> Result<FormConventions, StoredError> {
        if self.reuse.len() != OPEX_VALUES / 32 {
            return Err(bad("reuse", format!("{} rows, expected {}", self.reuse.len(), OPEX_VALUES / 32)));
        }
        let mut opex = Vec::with_capacity(OPEX_VALUES);
        for (r, row) in self.reuse.iter().enumerate() {
            let mut parts = row.split(' ');
            let (clear, set, ops) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next());
            let what = || format!("reuse row {r} '{row}'");
            if clear.chars().count() != 16 || set.chars().count() != 16 || parts.next().is_some() {
                return Err(bad(what(), "expected 16 entries, a space, 16 entries and the operands"));
            }
            let mut mask = 0u8;
            for t in ops.unwrap_or("").split(',').filter(|t| !t.is_empty()) {
                let k = t.parse::<u8>().ok().filter(|&k| k < 8).ok_or_else(|| bad(what(), format!("'{t}' is not an operand 0..7")))?;
                mask |= 1 << k;
            }
            for ch in clear.chars().chain(set.chars()) {
                opex.push(match ch {
                    '.' => None,
                    '-' => Some(0),
                    '+' if mask != 0 => Some(mask),
                    _ => return Err(bad(what(), format!("'{ch}' is not '.', '-' or '+' (with operands listed)"))),
                });
            }
        }
        let set = |name: &str, s: &str, n: usize| -> Result<Vec<bool>, StoredError> {
            let on = parse_ranges(s, n).map_err(|e| bad(name, e.to_string()))?;
            Ok((0..n).map(|i| on.contains(&i)).collect())
        };
        let barrier_legal = set("legal barriers", &self.legal_barriers, BARRIER_VALUES)?;
        let semi = set("semicolon barriers", &self.semicolon_barriers, BARRIER_VALUES)?;
        let terminator = semi.iter().map(|&s| if s { Terminator::Semicolon } else { Terminator::SpaceSemicolon }).collect();
        let wait = set("semicolon wait", &self.semicolon_wait, WAIT_VALUES)?;
        let opex_semicolon = set("semicolon opex", &self.semicolon_opex, OPEX_VALUES)?;
        Ok(FormConventions::controls_only(opex, opex_semicolon, terminator, barrier_legal, wait))
    }
}

impl StoredForm {
    /// `c`'s form part, naming control table `control`.
    pub fn of(c: &FormConventions, control: String) -> StoredForm {
        StoredForm {
            control,
            order: c.modifier_order.iter().map(SlotId::token).collect(),
            signed: c.signed_imm,
            signed_by: c.signed_imm_by.iter().filter(|(_, _, s)| *s != c.signed_imm).copied().collect(),
            omitted: c.omitted.clone(),
            unnamed: c.unnamed.clone(),
            rz_offsets: c.rz_offsets.iter().map(|&(k, s)| (k, s.token())).collect(),
            aliases: c
                .aliases
                .iter()
                .map(|a| StoredAlias { token: a.token.clone(), at: a.at, regs: a.regs.clone(), rz: a.rz.clone(), imm: a.imm.map(|(k, c)| (k, c.token())) })
                .collect(),
            space_bits: ranges(c.space_bits.iter().map(|&b| usize::from(b))),
        }
    }

    /// The conventions this form and its control table say.
    pub fn conventions(&self, control: &StoredControl) -> Result<FormConventions, StoredError> {
        let c = control.tables()?;
        let modifier_order = self.order.iter().map(|t| SlotId::parse(t).map_err(|e| bad("order", e.to_string()))).collect::<Result<_, _>>()?;
        let aliases = self
            .aliases
            .iter()
            .map(|a| {
                let imm = a.imm.as_ref().map(|(k, c)| ImmClass::parse(c).map(|c| (*k, c))).transpose().map_err(|e| bad(format!("alias {}", a.token), e))?;
                Ok(Alias { regs: a.regs.clone(), rz: a.rz.clone(), imm, token: a.token.clone(), at: a.at })
            })
            .collect::<Result<_, StoredError>>()?;
        let rz_offsets = self
            .rz_offsets
            .iter()
            .map(|(k, t)| Ok((*k, OffsetSpelling::parse(t).map_err(|e| bad("offset beside RZ", e.to_string()))?)))
            .collect::<Result<_, StoredError>>()?;
        let space_bits = parse_ranges(&self.space_bits, 128).map_err(|e| bad("space bits", e.to_string()))?.into_iter().map(|b| b as u8).collect();
        Ok(FormConventions {
            modifier_order,
            signed_imm: self.signed,
            signed_imm_by: self.signed_by.clone(),
            omitted: self.omitted.clone(),
            unnamed: self.unnamed.clone(),
            rz_offsets,
            aliases,
            space_bits,
            ..c
        })
    }
}

/// The key a form has in [`ConventionsFile::forms`].
pub fn form_key(arch: crate::spec::Arch, key: &str) -> String {
    format!("{arch} {key}")
}

impl ConventionsFile {
    /// An empty file whose conventions come from `tool`.
    pub fn new(tool: &str) -> ConventionsFile {
        ConventionsFile {
            about: "nvdisasm's printing conventions per form, learned by `sass-harness conventions`; `validate` checks them and `fix` corrects them".into(),
            tool: tool.to_string(),
            ..Default::default()
        }
    }

    /// Stores `c` for form `key` of `arch`, adding its control table when new.
    pub fn insert(&mut self, arch: crate::spec::Arch, key: &str, c: &FormConventions) -> Result<(), StoredError> {
        let control = StoredControl::of(c).map_err(|e| bad(form_key(arch, key), e.to_string()))?;
        let id = control.id();
        self.controls.insert(id.clone(), control);
        self.forms.insert(form_key(arch, key), StoredForm::of(c, id));
        Ok(())
    }

    /// The conventions of every form, read back; the first form that cannot be read is an
    /// error naming it.
    pub fn read_forms(&self) -> Result<HashMap<String, FormConventions>, StoredError> {
        let mut out = HashMap::with_capacity(self.forms.len());
        for (k, f) in &self.forms {
            let control = self.controls.get(&f.control).ok_or_else(|| bad(k.clone(), format!("control table '{}' is not in the file", f.control)))?;
            let c = f.conventions(control).map_err(|e| bad(k.clone(), e.to_string()))?;
            out.insert(k.clone(), c);
        }
        Ok(out)
    }

    /// Drops control tables no form names.
    pub fn prune(&mut self) {
        let used: std::collections::HashSet<&String> = self.forms.values().map(|f| &f.control).collect();
        let keep: Vec<String> = self.controls.keys().filter(|k| used.contains(k)).cloned().collect();
        self.controls.retain(|k, _| keep.contains(k));
    }

    /// The file's text: JSON with one control table row and one form per line, so that
    /// diffs read line by line.
    pub fn to_text(&self) -> String {
        let j = js;
        let mut out = String::from("{\n");
        out.push_str(&format!("  \"about\": {},\n  \"tool\": {},\n  \"controls\": {{\n", j(&self.about), j(&self.tool)));
        let n = self.controls.len();
        for (i, (id, c)) in self.controls.iter().enumerate() {
            out.push_str(&format!("    {}: {{\n", j(id)));
            out.push_str(&format!("      \"legal barriers\": {},\n", j(&c.legal_barriers)));
            out.push_str(&format!("      \"semicolon barriers\": {},\n", j(&c.semicolon_barriers)));
            out.push_str(&format!("      \"semicolon wait\": {},\n", j(&c.semicolon_wait)));
            out.push_str(&format!("      \"semicolon opex\": {},\n      \"reuse\": [\n", j(&c.semicolon_opex)));
            let rows: Vec<String> = c.reuse.iter().map(|r| format!("        {}", j(r))).collect();
            out.push_str(&rows.join(",\n"));
            out.push_str(&format!("\n      ]\n    }}{}\n", if i + 1 < n { "," } else { "" }));
        }
        out.push_str("  },\n  \"forms\": {\n");
        let n = self.forms.len();
        for (i, (k, f)) in self.forms.iter().enumerate() {
            out.push_str(&format!("    {}: {}{}\n", j(k), serde_json::to_string(f).unwrap_or_default(), if i + 1 < n { "," } else { "" }));
        }
        out.push_str("  }\n}\n");
        out
    }

    /// Reads a file's text (`name` for messages).
    pub fn from_text(name: &str, text: &[u8]) -> Result<ConventionsFile, StoredError> {
        if text.len() > MAX_FILE_BYTES {
            return Err(bad(name, format!("{} bytes, at most {MAX_FILE_BYTES} are read", text.len())));
        }
        serde_json::from_slice(text).map_err(|e| bad(format!("{name}:{}", e.line()), format!("not a conventions file: {e}")))
    }
}

/// A JSON string literal.
fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_write_and_read_back() {
        for xs in [vec![], vec![0], vec![0, 1, 2, 5, 7, 8], vec![63], (0..64).collect()] {
            assert_eq!(parse_ranges(&ranges(xs.clone()), 64).unwrap(), xs);
        }
        assert_eq!(ranges([5, 1, 2, 3]), "1..3,5");
        assert!(parse_ranges("3..1", 64).unwrap_err().to_string().contains("backwards"));
        assert!(parse_ranges("64", 64).unwrap_err().to_string().contains("below 64"));
    }

    /// A DFMA-like table: `.reuse` on operands 1 and 2 in rows 1 and 2 where yield is set
    /// and the stall 1–11.
    fn sample() -> FormConventions {
        let opex = (0..OPEX_VALUES)
            .map(|i| {
                let (s, y, r) = (i & 15, i >> 4 & 1, i >> 5);
                let legal = r < 6 && (y == 0 && (r == 0 || s > 0) || (1..=11).contains(&s));
                legal.then_some(if y == 1 && (r == 1 || r == 2) { 1u8 << r } else { 0 })
            })
            .collect();
        FormConventions {
            opex,
            opex_semicolon: (0..OPEX_VALUES).map(|i| i == 0).collect(),
            terminator: (0..BARRIER_VALUES).map(|i| if i == 63 { Terminator::Semicolon } else { Terminator::SpaceSemicolon }).collect(),
            barrier_legal: vec![true; BARRIER_VALUES],
            wait_semicolon: (0..WAIT_VALUES).map(|i| i == 0).collect(),
            modifier_order: vec![SlotId::FieldAt(84), SlotId::Fixed("F64".into())],
            signed_imm: true,
            signed_imm_by: vec![(84, 1, false)],
            omitted: vec![1],
            unnamed: vec![2],
            rz_offsets: vec![(0, OffsetSpelling::Signed), (1, OffsetSpelling::Bits(10))],
            aliases: vec![Alias { regs: vec![1, 2], rz: vec![1], imm: Some((3, ImmClass::PowerOfTwo(2))), token: "SHL".into(), at: 0 }],
            space_bits: vec![102, 103],
        }
    }

    #[test]
    fn conventions_survive_the_file() {
        let c = sample();
        let mut f = ConventionsFile { about: "test".into(), tool: "nvdisasm 13.5.37".into(), ..Default::default() };
        f.insert(crate::spec::Arch(90), "DFMA_R_R_R_R", &c).unwrap();
        f.insert(crate::spec::Arch(90), "DFMA_R_R_I_R", &c).unwrap();
        assert_eq!(f.controls.len(), 1, "one table for two forms");
        let text = f.to_text();
        let back = ConventionsFile::from_text("x.json", text.as_bytes()).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.read_forms().unwrap()["SM90 DFMA_R_R_I_R"], c);
        assert!(text.contains("\".--------------- .+++++++++++.... 1\""), "{text}");
    }

    /// nvdisasm 13.5's offsets beside RZ: SM100 LDGSTS's 20-bit 0xf9ba3 as `-0x645d`, LDC's
    /// 16-bit 0xe25b unsigned, AST's 11-bit 0x62d as `0x22d` (its low 10 bits); each
    /// spelling is read back from the all-ones probe and its token.
    #[test]
    fn offset_spellings_print_read_back_and_are_learned_from_all_ones() {
        assert_eq!(OffsetSpelling::Signed.value(0xf9ba3, 20, 0), -0x645d);
        assert_eq!(OffsetSpelling::Signed.value(0x79ba3, 20, 0), 0x79ba3);
        assert_eq!(OffsetSpelling::Unsigned.value(0xe25b, 16, 0), 0xe25b);
        assert_eq!(OffsetSpelling::Bits(10).value(0x62d, 11, 0), 0x22d);
        assert_eq!(OffsetSpelling::Signed.value(0x7ff, 11, 2), -4);
        for (printed, width, shift, s) in [
            (-1, 20, 0, OffsetSpelling::Signed),
            (0xffff, 16, 0, OffsetSpelling::Unsigned),
            (0x3ff, 11, 0, OffsetSpelling::Bits(10)),
            (-4, 11, 2, OffsetSpelling::Signed),
            (0x1ffc, 11, 2, OffsetSpelling::Unsigned),
            (0xffc, 11, 2, OffsetSpelling::Bits(12)),
        ] {
            assert_eq!(OffsetSpelling::of_all_ones(printed, width, shift), Some(s), "{printed:#x}");
            assert_eq!(OffsetSpelling::parse(&s.token()).unwrap(), s);
        }
        assert_eq!(OffsetSpelling::of_all_ones(0x3fe, 11, 0), None);
        assert!(OffsetSpelling::parse("10 bytes").unwrap_err().to_string().contains("N bits"));
    }

    #[test]
    fn a_broken_file_names_what_is_wrong() {
        let mut f = ConventionsFile::default();
        f.insert(crate::spec::Arch(90), "K", &sample()).unwrap();
        let id = f.forms["SM90 K"].control.clone();
        f.controls.get_mut(&id).unwrap().reuse[1] = "short".into();
        let e = f.read_forms().unwrap_err();
        assert!(e.to_string().contains("SM90 K") && e.to_string().contains("reuse row 1"), "{e}");
        let e = ConventionsFile::from_text("c.json", b"{\n \"forms\": 3 }").unwrap_err();
        assert!(e.to_string().starts_with("c.json:2"), "{e}");
    }
}
