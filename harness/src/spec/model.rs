//! The spec: what a page says about each variant, in types that keep it honest.

use super::token::{Derived, FloatFormat, ImmMap, Inverted, MemShape, MemSlot};
use crate::word::{BitSet, Word};
use serde::Serialize;

/// An architecture by its SM number: `Arch(90)` is SM90 (H100), `Arch(100)` SM100,
/// `Arch(120)` SM120. Displays as nvdisasm names it (`SM90`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Arch(pub u32);

impl Arch {
    /// nvdisasm's `-b` name, e.g. `SM90`.
    pub fn nvdisasm_name(self) -> String {
        format!("SM{}", self.0)
    }
    /// ptxas's `-arch`, e.g. `sm_90`.
    pub fn ptxas_name(self) -> String {
        format!("sm_{}", self.0)
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SM{}", self.0)
    }
}

/// One operand of the form line; `c[I][I]` and `cx[UR][I]` print as two page operands, a
/// memory operand as one per component (see [`MemShape`]). In JSON a plain kind is its
/// name (`"imm"`, `"target"`), as before scales and formats; a scaled or formatted one
/// carries them (`{"imm": {"shift": 2, "offset": 0}}`, `{"float": "b_float"}`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", remote = "OperandKind")]
pub enum OperandKind {
    /// `R`: a general register.
    Reg,
    /// `UR`: a uniform register.
    UReg,
    /// `I`: an integer immediate; `I*4`, `I*2+1`: scaled (see [`ImmMap`]).
    Imm(ImmMap),
    /// `F`: a floating immediate (the high 32 bits of a double for fp64 ops); `F.BF16` and
    /// the like name a format other than [`FloatFormat::of`]'s.
    Float(Option<FloatFormat>),
    /// `c[I][I]`: constant bank and offset.
    Const,
    /// `cx[UR][I]`: constant bank in a uniform register, and offset.
    ConstX,
    /// `P`: a predicate register, 3 bits (7 prints `PT`).
    Pred,
    /// `UP`: a uniform predicate register, 3 bits (7 prints `UPT`).
    UPred,
    /// `REL`: a branch target, in signed 4-byte words from the next instruction. nvdisasm
    /// prints the absolute address (`BRA 0x4e0`); the harness prints and compares targets
    /// as if the word sat at address 0 (`0x10 + 4 × value`; see
    /// `codec::conventions::target_at_zero`). The field's unit as a shift: 2 for `REL`,
    /// another spelled `REL*N` (`LEPC R0, 0x10` counts bytes: `REL*1`).
    Target(u8),
    /// `B`: a convergence barrier register, `B0`…`B15`.
    Barrier,
    /// `SR`: a special register (`SR_TID.X`, `SR_LANEID`, `SRZ`): a name, not a number. Its
    /// bits are a plain `modi` span whose "Operand K Modifiers" table lists the names.
    Special,
    /// `N`: any other name printed from a table, as special registers are (`1D`, `ARRAY_CUBE`
    /// for a texture's shape, `COMP_STATUS`, `PPPPPPPP`, `SB0`, and the `INVALIDn`/`???n`
    /// nvdisasm prints for undefined rows): a plain `modi` span whose "Operand K Modifiers"
    /// table lists the names; without one, the name is fixed and the distilled line's
    /// (`PR` in `P2R R0, PR, R0, R0`).
    Name,
    /// A memory operand: `[R+UR+I]`, `desc[UR][R.64+I]`, `c[I][R+I]`, … (see [`MemShape`]).
    Mem(MemShape),
}

impl Serialize for OperandKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            OperandKind::Imm(ImmMap::PLAIN) => s.serialize_unit_variant("OperandKind", 2, "imm"),
            OperandKind::Float(None) => s.serialize_unit_variant("OperandKind", 3, "float"),
            OperandKind::Target(2) => s.serialize_unit_variant("OperandKind", 8, "target"),
            k => OperandKind::serialize(&k, s),
        }
    }
}

impl OperandKind {
    /// The token the form line spells this kind with, as the parser reads it back: `R`,
    /// `I*4`, `F.BF16`, `c[I][I]`, `REL`, `REL*1`, `desc[UR][R.64+I]`.
    pub fn form_token(self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(match self {
            OperandKind::Mem(m) => return m.token().into(),
            OperandKind::Reg => "R",
            OperandKind::UReg => "UR",
            OperandKind::Imm(m) if m != ImmMap::PLAIN => return format!("I{}", m.token()).into(),
            OperandKind::Imm(_) => "I",
            OperandKind::Float(Some(f)) => return format!("F.{}", f.token()).into(),
            OperandKind::Float(None) => "F",
            OperandKind::Const => "c[I][I]",
            OperandKind::ConstX => "cx[UR][I]",
            OperandKind::Pred => "P",
            OperandKind::UPred => "UP",
            OperandKind::Target(2) => "REL",
            OperandKind::Target(s) => return format!("REL*{}", 1u64 << s).into(),
            OperandKind::Barrier => "B",
            OperandKind::Special => "SR",
            OperandKind::Name => "N",
        })
    }

    /// The kind of operand nvdisasm's text shows: a branch target prints as an immediate,
    /// a scaled immediate or a float of a named format as any other.
    pub fn printed_kind(self) -> OperandKind {
        match self {
            OperandKind::Target(_) | OperandKind::Imm(_) => OperandKind::Imm(ImmMap::PLAIN),
            OperandKind::Float(_) => OperandKind::Float(None),
            k => k,
        }
    }

    /// An integer immediate `I`, of any scale (a branch target `REL` is not one).
    pub fn is_imm(self) -> bool {
        matches!(self, OperandKind::Imm(_))
    }

    /// A floating immediate `F`, of any format.
    pub fn is_float(self) -> bool {
        matches!(self, OperandKind::Float(_))
    }

    /// The form token as a variant key spells it: `I_I` for `c[I][I]`, `M_desc_UR_R_64_I`
    /// for `desc[UR][R.64+I]`.
    pub fn key_token(self) -> String {
        match self {
            OperandKind::Const => "I_I".into(),
            OperandKind::ConstX => "UR_I".into(),
            // A scale or float format does not tell forms apart: `I`, `F`, `REL` as ever.
            OperandKind::Imm(_) | OperandKind::Float(_) => self.printed_kind().form_token().into_owned(),
            OperandKind::Target(_) => "REL".into(),
            OperandKind::Mem(m) => {
                // A scale does not tell forms apart: `a[uI*4]` keys as `M_a_uI`.
                let t = MemShape { imm_shift: 0, ..m }.token();
                let words: Vec<&str> = t.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
                std::iter::once("M").chain(words).collect::<Vec<_>>().join("_")
            }
            k => k.form_token().into_owned(),
        }
    }
    /// Every kind, in the order messages list the form tokens.
    pub const ALL: [OperandKind; 12] = [
        OperandKind::Reg,
        OperandKind::UReg,
        OperandKind::Imm(ImmMap::PLAIN),
        OperandKind::Float(None),
        OperandKind::Const,
        OperandKind::ConstX,
        OperandKind::Pred,
        OperandKind::UPred,
        OperandKind::Target(2),
        OperandKind::Barrier,
        OperandKind::Special,
        OperandKind::Name,
    ];
    /// The accepted form tokens, for messages: `R, UR, I, F, c[I][I], cx[UR][I], P, UP`
    /// and the memory shapes.
    pub fn form_tokens() -> String {
        let plain: Vec<_> = OperandKind::ALL.iter().map(|k| k.form_token()).collect();
        format!("{}, memory [R+UR+I] (components optional, in that order; R may carry .64/.U32/.X4/.X8/.X16, I (signed, also sI) may be uI (unsigned); prefixed by desc[UR], a, c[I] or cx[UR]; or a descriptor's desc, gdesc, idesc or tmem)", plain.join(", "))
    }
    /// A name rather than a number (`SR`, `N`): its bits, if any, are a table's rows.
    pub fn is_named(self) -> bool {
        matches!(self, OperandKind::Special | OperandKind::Name)
    }
    /// How many `operand N` numbers the page gives this operand.
    pub fn page_slots(self) -> usize {
        match self {
            OperandKind::Const | OperandKind::ConstX => 2,
            OperandKind::Mem(m) => m.slots(),
            _ => 1,
        }
    }
}

/// A control-bit field, by the name the page's layout gives it (bits 105–125 on the seed
/// pages). These labels are the page generator's assumptions: printing conventions are
/// learned by bit position, not from them (see [`crate::spec::conventions`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// `stall`: stall cycles (4 bits, 105–108 on the seeds).
    Stall,
    /// `y`: the yield bit (109 on the seeds).
    Yield,
    /// `r-bar`: the scoreboard barrier a read sets (3 bits, 110–112; 7 sets none).
    ReadBarrier,
    /// `w-bar`: the scoreboard barrier a write sets (3 bits, 113–115; 7 sets none).
    WriteBarrier,
    /// `b-mask`: the barriers to wait on, one bit each (6 bits, 116–121).
    WaitMask,
    /// `reuse`: the operand reuse flags (4 bits, 122–125); with stall and yield they index
    /// nvdisasm's "opex" table, which says where `.reuse` prints.
    Reuse,
}

/// Where a flag shows up in the text.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagRole {
    /// `cABS`: `|x|` on an operand.
    Abs,
    /// `cNEG`: `-x` on an operand.
    Neg,
    /// `cNOT`: `!P0` on a predicate operand, `~R0` (bitwise not) on any other.
    Not,
    /// An operand selector such as `H1`: `x.H1`.
    Selector,
    /// An instruction modifier such as `SAT`: `OP.SAT`.
    Modifier,
}

/// What a layout field is, read off its name on the page (in JSON, tagged by `kind`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldKind {
    /// `pred`: guard predicate, 3 bits of index and a negation bit.
    Pred,
    /// `operand N`: page operand N (see [`Variant::operands`]).
    Operand {
        /// The `N` of `operand N`.
        page_operand: usize,
    },
    /// `modi N`: Modifier Group N.
    Group {
        /// The `N` of `modi N`: its table is titled `Modifier Group N`.
        group: u32,
    },
    /// plain `modi`: the k-th such span belongs to the k-th "Operand K Modifiers" table.
    /// A span named `operand K modi` names its table itself (HFMA2's bits 60, 61, 86).
    OperandModifier {
        /// The `K` of the "Operand K Modifiers" table whose rows the field indexes.
        page_operand: usize,
    },
    /// A one-bit (or wider) named flag.
    Flag {
        /// The cell's name as written (`cABS`, `SAT`, `H1`, `16x2`).
        name: String,
        /// How it prints, from the name.
        role: FlagRole,
        /// For an operand decoration (every role but [`FlagRole::Modifier`]): the first
        /// page operand of the form operand it decorates, chosen by the
        /// `flag-operand-assumed` rules. `None` for a modifier, and for a decoration with no
        /// source operand to apply to (it is then not printed).
        page_operand: Option<usize>,
    },
    /// A control-bit field (`stall`, `y`, `r-bar`, `w-bar`, `b-mask`, `reuse`).
    Control {
        /// Which one.
        control: Control,
    },
}

/// One field of a variant's layout: a name and the bits its span(s) cover.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Field {
    /// The name as the page writes it (`operand 2`, `modi 1`, `cABS`).
    pub name: String,
    /// What the name makes it.
    pub kind: FieldKind,
    /// Bit positions, least significant value bit first.
    pub bits: Vec<u8>,
    /// The page line of the layout content row where the field's name first appears.
    pub line: usize,
    /// nvdisasm prints the field's bitwise complement (see [`Inverted`]): the codec's
    /// values are the printed numbers. Left out of the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inverted: bool,
    /// nvdisasm rejects the word when the field prints all ones (the page's `illegal at
    /// all ones:` line): SM100/SM120 `LDG.256`/`STG.256` `desc[UR][R.64+…]` take no RZ.
    /// Left out of the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub illegal_at_all_ones: bool,
}

impl Field {
    /// The bits a value of the field holds in the word: the value itself, or its
    /// complement for an inverted field (the value is the printed number).
    pub fn raw(&self, value: u64) -> u64 {
        if self.inverted {
            Inverted::apply(value, self.width())
        } else {
            value
        }
    }
    /// The field's width in bits (1 to 64).
    pub fn width(&self) -> u32 {
        self.bits.len() as u32
    }
    /// The all-ones value `2^width - 1`: RZ (255) for an 8-bit register field, PT (7) for
    /// a 3-bit predicate.
    pub fn max(&self) -> u64 {
        if self.bits.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits.len()) - 1
        }
    }
    /// The field's bits as a set of word bits.
    pub fn mask(&self) -> BitSet {
        BitSet::from_bits(self.bits.iter().copied())
    }
    /// Is it a control-bit field ([`FieldKind::Control`])?
    pub fn is_control(&self) -> bool {
        matches!(self.kind, FieldKind::Control { .. })
    }
}

/// What a table row's name is, from its spelling.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    /// `(default)`: prints nothing.
    Default,
    /// A name printed as written, one modifier token per `.`-separated part (`RM`,
    /// `F16.U32`).
    Named,
    /// `INVALIDn`: the generator saw nvdisasm reject the value.
    Invalid,
    /// `???n`: nvdisasm printed `???n` itself.
    Unknown,
}

/// One row of a modifier table: `01<TAB>RM`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The field value, read from the binary column (`01` → 1).
    pub value: u64,
    /// The name column as written (`RM`, `(default)`, `INVALID3`, `???2`).
    pub name: String,
    /// What the name is.
    pub kind: RowKind,
    /// The row's page line (where a [`RowName`](crate::spec::edit::Edit::RowName) edit
    /// writes).
    pub line: usize,
}

impl Row {
    /// The modifier tokens this row prints (`F16.U32` → two).
    pub fn tokens(&self) -> Vec<&str> {
        if self.kind == RowKind::Default {
            vec![]
        } else {
            self.name.split('.').collect()
        }
    }
}

/// Which field a table serves, read off its title (in JSON, tagged by `kind`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TableId {
    /// `Modifier Group N`: the table of the `modi N` field.
    Group {
        /// The `N`.
        group: u32,
    },
    /// `Operand K Modifiers`: the table of a plain `modi` (or `operand K modi`) field,
    /// whose rows print as page operand K's suffixes, or as its name for an `SR`/`N`
    /// operand.
    Operand {
        /// The `K`.
        page_operand: usize,
    },
}

/// A modifier table after a variant's layout: its title, then `Binary<TAB>Value` rows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Table {
    /// Which field it serves, from the title.
    pub id: TableId,
    /// The title as written (`Modifier Group 1`, `Operand 3 Modifiers`): what edits name
    /// the table by.
    pub title: String,
    /// The rows' width in bits (the binary column's length, 1 to 16): its field's width.
    pub width: u32,
    /// The rows in page order.
    pub rows: Vec<Row>,
    /// Values of `width` bits the table does not list.
    pub omitted: Vec<u64>,
    /// The title's page line.
    pub line: usize,
}

impl Table {
    /// The row listing field value `value`; `None` for an omitted value.
    pub fn row(&self, value: u64) -> Option<&Row> {
        self.rows.iter().find(|r| r.value == value)
    }

    /// The row of the page's base word (see [`crate::gen::base_values`]): value 0, or the
    /// lowest listed value when the table leaves 0 out (nvdisasm rejects it, or it is
    /// another form: F2F's one-hot `F16`/`F32` pair).
    pub fn base_row(&self) -> Option<&Row> {
        self.row(0).or_else(|| self.rows.iter().min_by_key(|r| r.value))
    }
}

/// One element of the instruction's modifier list, in print order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModSlot {
    /// Text the heading carries (e.g. `???0` in `I2F.???0`), printed always.
    Fixed {
        /// The modifier as the heading writes it, without its `.`.
        text: String,
    },
    /// A `modi N` field: its table's row for the field's value prints here.
    Group {
        /// Index of the field in [`Variant::fields`].
        field: usize,
        /// The zero row has a name, but the distilled line does not print it separately,
        /// so value zero prints nothing (rule `hidden-at-zero`).
        hidden_zero: bool,
    },
    /// A modifier flag (`SAT`): its name prints here when the bit is set.
    Flag {
        /// Index of the flag's field in [`Variant::fields`].
        field: usize,
    },
}

/// How one form operand prints (from one or more page operands).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OperandSpec {
    /// The form token's kind (`R`, `c[I][I]`, a memory shape, …).
    pub kind: OperandKind,
    /// Page operand numbers: one; bank or register then offset for `c[I][I]`/`cx[UR][I]`;
    /// one per component of a memory operand ([`MemShape::slot_roles`]).
    pub page_operands: Vec<usize>,
    /// Field indices holding the value(s), in `page_operands` order (`None`: no bits; an
    /// immediate prints 0, a register `R` or `UR` its zero register, `RZ` or `URZ`).
    /// A derived page operand's is its source's field (see [`OperandSpec::derived`]).
    pub value_fields: Vec<Option<usize>>,
    /// Per page operand, the constant a derived one adds to its source's field (see
    /// [`Derived`]); empty when none is (left out of the JSON then).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<Option<u8>>,
    /// Field indices of operand-modifier tables printed as suffixes.
    pub suffix_fields: Vec<usize>,
    /// `cABS`: the field index of the flag that prints `|…|` around the operand.
    pub abs_field: Option<usize>,
    /// `cNEG`: the field index of the flag that prints `-` before the operand.
    pub neg_field: Option<usize>,
    /// `cNOT`: `!` before a predicate, `~` before any other operand (left out of the JSON
    /// when absent, as on every page without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_field: Option<usize>,
    /// Selector flags (`H1`) printed as suffixes when set.
    pub selector_fields: Vec<usize>,
    /// Suffixes printed whatever the bits (`R0.SIGN` in PLOP3), before any table's: read
    /// off the distilled line for operands without suffix fields (left out of the JSON
    /// when absent).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixed_suffixes: Vec<String>,
    /// A named operand ([`OperandKind::is_named`]) without a table prints this name always,
    /// the distilled line's (left out of the JSON when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed_name: Option<String>,
    /// Printed after the operand before it with a space, not a comma, as the distilled line
    /// shows (`CALL.REL P0, R0 0x3440`; see [`crate::sass::Operand::joined`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub joined: bool,
    /// nvdisasm prints the operand's suffixes after its `|…|` bars (`-|R0|.H0_H0`), not
    /// inside them (`|UR6.H1_H1|`): the page's `suffixes after bars:` line, learned by
    /// discovery (left out of the JSON when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub suffixes_after_bars: bool,
    /// nvdisasm leaves the operand out when its field is zero (see
    /// [`LeftOutAtZero`](crate::spec::LeftOutAtZero); left out of the JSON when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub zero_omitted: bool,
}

impl OperandSpec {
    /// The constant page operand `slot` adds to its source's field, if it is derived.
    pub fn derived_plus(&self, slot: usize) -> Option<u8> {
        self.derived.get(slot).copied().flatten()
    }

    /// The field of the register the operand names: a plain `R`/`UR` operand's, or a
    /// memory operand's base register (`[R0.64+UR4]`). Where its all-ones value is no zero
    /// register (`FormConventions::unnamed`), nvdisasm prints `???255` for it. A derived
    /// register has no field of its own.
    pub fn register_field(&self) -> Option<usize> {
        let slot = match self.kind {
            OperandKind::Reg | OperandKind::UReg => 0,
            OperandKind::Mem(m) => m.slot_roles().iter().position(|r| *r == MemSlot::Reg)?,
            _ => return None,
        };
        self.value_fields.get(slot).copied().flatten().filter(|_| self.derived_plus(slot).is_none())
    }
}

/// One variant of a page (one form of the instruction), as the codec encodes, decodes,
/// prints and assembles it: its head lines, its layout read into fields and fixed bits,
/// its tables, and how each operand and modifier prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// The `key:` line (`DFMA_R_R_R_R`): unique per architecture among the pages loaded.
    pub key: String,
    /// The page's architecture.
    pub arch: Arch,
    /// The heading line as written: the mnemonic, with modifiers printed always where it
    /// carries some (`I2F.???0`).
    pub heading: String,
    /// The heading up to its first `.` (`I2F`): the page's instruction name.
    pub mnemonic: String,
    /// The operand form line as written (`R,R,c[I][I],R`; `(none)` without operands).
    pub form: String,
    /// How each form operand prints, one per form token, in print order.
    pub operands: Vec<OperandSpec>,
    /// The `distilled:` line's text (`@P0 DFMA R0, R0, R0, R0 ;`): nvdisasm's text of the
    /// variant with every field zero.
    pub distilled: String,
    /// The distilled line's terminator (`;` or ` ;`): what the printer ends a line with
    /// where no conventions say otherwise for the word's control bits.
    pub terminator: crate::sass::Terminator,
    /// Bits the page calls fixed, and their values.
    pub fixed_mask: BitSet,
    /// The fixed bits' values (at `fixed_mask`'s positions; 0 elsewhere, and at inferred
    /// bits).
    pub fixed_value: Word,
    /// Bits inferred rather than read (a dropped cell): fixed, but unconfirmed by the page.
    pub inferred: BitSet,
    /// Fixed bits nvdisasm ignores in this form (the page's `ignored bits:` line): a word
    /// decodes whatever they hold; encoding writes `fixed_value`'s.
    #[serde(skip_serializing_if = "BitSet::is_empty_ref")]
    pub ignored: BitSet,
    /// The layout's fields, in the order their names first appear from bit 0 up: a field
    /// index (in [`ModSlot`], [`OperandSpec`], the codec's values) indexes this.
    pub fields: Vec<Field>,
    /// The modifier tables, in page order.
    pub tables: Vec<Table>,
    /// Modifier print order, derived from the distilled line.
    pub modifiers: Vec<ModSlot>,
    /// Modifiers that choose the format of the `F` operands when printed (the page's
    /// `floats: BF16_V2=BF16` line): `HFMA2.BF16_V2`'s immediates are bf16 pairs, not fp16,
    /// `MUFU.RSQ64H`'s the high half of a double. Empty on most pages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub float_by: Vec<(String, FloatFormat)>,
    /// The page's file name, as given to [`parse_page`](crate::spec::parse_page): its path
    /// when loaded from disk, `builtin:sm90/…` for the built-in spec.
    pub file: String,
    /// The heading's line.
    pub line: usize,
    /// The `distilled:` line's page line: what `fix` rewrites for an
    /// [`Edit::Distilled`](crate::spec::edit::Edit::Distilled).
    pub distilled_line: usize,
    /// The page lines of the layout's four rows (index and content for bits 0–63, then for
    /// 64–127): what `fix` rewrites for a layout edit.
    pub layout_lines: [usize; 4],
    /// nvdisasm's printing conventions for this form, when its folder's
    /// [`conventions::FILE_NAME`](crate::spec::conventions::FILE_NAME) stores them: with
    /// them the printer speaks nvdisasm exactly without asking it.
    #[serde(skip)]
    pub conventions: Option<std::sync::Arc<crate::spec::conventions::FormConventions>>,
}

impl Variant {
    /// The printed operands that are branch targets ([`OperandKind::Target`]).
    pub fn target_operands(&self) -> Vec<usize> {
        (0..self.operands.len()).filter(|&k| matches!(self.operands[k].kind, OperandKind::Target(_))).collect()
    }
    /// The table with id `id`, if the page has one.
    pub fn table(&self, id: &TableId) -> Option<&Table> {
        self.tables.iter().find(|t| &t.id == id)
    }
    /// The table of field index `field`: a `modi N` field's group table, a plain `modi`
    /// field's operand table; `None` for any other field.
    pub fn field_table(&self, field: usize) -> Option<&Table> {
        match &self.fields[field].kind {
            FieldKind::Group { group } => self.table(&TableId::Group { group: *group }),
            FieldKind::OperandModifier { page_operand } => self.table(&TableId::Operand { page_operand: *page_operand }),
            _ => None,
        }
    }
    /// The format of `F` operand `o` when the instruction prints `modifiers`: the format
    /// the first of them names in [`Variant::float_by`], else the form token's, else
    /// [`FloatFormat::of`]'s for the field's width.
    pub fn float_format(&self, o: &OperandSpec, modifiers: &[String]) -> FloatFormat {
        if let Some((_, f)) = self.float_by.iter().find(|(m, _)| modifiers.contains(m)) {
            return *f;
        }
        if let OperandKind::Float(Some(f)) = o.kind {
            return f;
        }
        let width = o.value_fields.first().copied().flatten().map(|f| self.fields[f].width()).unwrap_or(32);
        FloatFormat::of(&self.mnemonic, width)
    }
    /// Does field `field` at `value` make a derived register pass the zero register (an
    /// illegal word, see [`Derived`])?
    pub fn derived_illegal(&self, field: usize, value: u64) -> bool {
        let max = self.fields[field].max();
        self.operands.iter().any(|o| {
            (0..o.derived.len()).any(|k| o.value_fields[k] == Some(field) && o.derived_plus(k).is_some_and(|plus| Derived::value(plus, value, max).is_none()))
        })
    }
    /// Does field `field` at `value` make an illegal word that the page predicts: a derived
    /// register past the zero register, or a field at the all-ones value its page operand
    /// may not take ([`Field::illegal_at_all_ones`])?
    pub fn value_illegal(&self, field: usize, value: u64) -> bool {
        let f = &self.fields[field];
        self.derived_illegal(field, value) || (f.illegal_at_all_ones && value == f.max())
    }
    /// The index of the first field the page names `name` (`operand 2`, `modi 1`; of a
    /// repeated flag name such as `cABS`, the lowest).
    pub fn field_by_name(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
    /// Every bit the page assigns to a field.
    pub fn field_mask(&self) -> BitSet {
        self.fields.iter().fold(BitSet::EMPTY, |a, f| a.union(f.mask()))
    }
}

/// One parsed page: one instruction on one architecture, its variants, and the
/// irregularities the parser repaired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Page {
    /// The name it was parsed under (see [`Variant::file`]).
    pub file: String,
    /// The instruction name line (`DFMA`): every variant heading starts with it.
    pub instruction: String,
    /// The description line as written (`FP64 Fused Mutiply Add`, as DFMA's seed page
    /// spells it); `None` when the page has none (rule `missing-description`).
    pub description: Option<String>,
    /// The architecture of the `9 variants on SM90 (H100)` line.
    pub arch: Arch,
    /// The GPU that line names after the architecture, parentheses removed (`H100`);
    /// `None` when it names none.
    pub gpu: Option<String>,
    /// The variants in page order.
    pub variants: Vec<Variant>,
    /// One per irregularity a rule repaired, in the order met.
    pub warnings: Vec<Diagnostic>,
}

/// A warning about a page: an irregularity one of the parser's rules repaired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The page's file name.
    pub file: String,
    /// The page line (1-based).
    pub line: usize,
    /// The rule's name, one of [`rules`](crate::spec::parse::rules) (`dropped-cell`).
    pub rule: &'static str,
    /// What the page had and what the parser did about it.
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}: {}", self.file, self.line, self.rule, self.message)
    }
}

/// Every variant of every page loaded, per architecture.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Spec {
    /// The pages, in the order loaded ([`load`](crate::spec::load) sorts them by path).
    pub pages: Vec<Page>,
}

impl Spec {
    /// Every variant, page by page, each page's in page order.
    pub fn variants(&self) -> impl Iterator<Item = &Variant> {
        self.pages.iter().flat_map(|p| p.variants.iter())
    }
    /// The first variant with key `key`, whatever its architecture (a key may repeat
    /// across architectures).
    pub fn variant(&self, key: &str) -> Option<&Variant> {
        self.variants().find(|v| v.key == key)
    }
    /// The variant with key `key` on architecture `arch` (keys are unique per
    /// architecture).
    pub fn variant_on(&self, arch: Arch, key: &str) -> Option<&Variant> {
        self.variants().find(|v| v.arch == arch && v.key == key)
    }
    /// Every page's warnings, page by page.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.pages.iter().flat_map(|p| p.warnings.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::token::*;

    #[test]
    fn memory_form_tokens_read_and_spell_back() {
        for t in [
            "[R+UR+I]",
            "[R.64+UR+I]",
            "[R.U32+UR+uI]",
            "desc[UR][R.64+I]",
            "c[I][R+I]",
            "c[I][sI]",
            "cx[UR][R+I]",
            "cx[UR][uI]",
            "a[UR+I]",
            "a[R]",
            "[uI]",
            "[UR]",
            "desc[UR][R]",
            "desc[UR]",
            "gdesc[UR]",
            "idesc[UR]",
            "tmem[UR+I]",
            "c[I][UR?+I]",
            "[UR?+I]",
        ] {
            let m = MemShape::parse(t).unwrap_or_else(|e| panic!("{t}: {e}"));
            assert_eq!(m.token(), t);
            assert_eq!(OperandKind::Mem(m).page_slots(), m.slot_roles().len());
        }
        let m = MemShape::parse("desc[UR][R.64+UR+I]").unwrap();
        assert_eq!(m.slot_roles(), [MemSlot::Space, MemSlot::Reg, MemSlot::UReg, MemSlot::Imm]);
        assert_eq!((m.reg_suffix, m.imm), (Some("64"), MemImm::Signed));
        assert_eq!(OperandKind::Mem(m).key_token(), "M_desc_UR_R_64_UR_I");
        // A descriptor alone has no page operand of its own, `desc[UR][…]`'s space has one.
        let d = MemShape::parse("desc[UR]").unwrap();
        assert_eq!((d.space, d.slot_roles()), (MemSpaceKind::Named(crate::sass::Descriptor::Desc), vec![MemSlot::UReg]));
        assert_eq!(OperandKind::Mem(MemShape::parse("tmem[UR+I]").unwrap()).key_token(), "M_tmem_UR_I");
        // `sI` is read anywhere, and written only where `I` would read as the constant kind.
        assert_eq!(MemShape::parse("[R+sI]").unwrap().token(), "[R+I]");
        // `UR?`: a uniform register the form leaves out at URZ; the key does not tell it apart.
        let e = MemShape::parse("c[I][UR?+I]").unwrap();
        assert!(e.ureg && e.ureg_elided);
        assert_eq!(OperandKind::Mem(e).key_token(), "M_c_I_UR_I");
        assert!(MemShape::parse("[I+UR?]").is_err() && MemShape::parse("[R.64+I?]").is_err());
        // `R?`: a register the form leaves out at RZ (LDG.256); the key does not tell it apart.
        let r = MemShape::parse("[R.64?+UR+I*32]").unwrap();
        assert!(r.reg && r.reg_elided && r.reg_suffix == Some("64"));
        assert_eq!((r.token(), OperandKind::Mem(r).key_token()), ("[R.64?+UR+I*32]".to_string(), "M_R_64_UR_I".to_string()));
        assert_eq!(MemShape::parse("[R?+UR]").unwrap().token(), "[R?+UR]");
        assert!(MemShape::parse("[RX?+UR]").unwrap_err().to_string().contains("component 'RX' is not R, R.<suffix>, R?"));
    }

    #[test]
    fn scaled_immediates_and_float_formats_read_and_spell_back() {
        for (t, shift, offset) in [("", 0, 0), ("*4", 2, 0), ("*2+1", 1, 1), ("*32", 5, 0)] {
            let m = ImmMap::parse(t).unwrap_or_else(|e| panic!("{t}: {e}"));
            assert_eq!((m.shift, m.offset, m.token()), (shift, offset, t.to_string()));
        }
        let bpt = ImmMap { shift: 1, offset: 1 };
        assert_eq!((bpt.apply(2), bpt.invert(5), bpt.invert(4)), (5, Some(2), None));
        assert_eq!(ImmMap { shift: 2, offset: 0 }.invert(-4), Some(-1));
        for bad in ["*3", "*1", "*4+4", "4", "*", "*2+x", "*8589934592"] {
            assert!(ImmMap::parse(bad).unwrap_err().to_string().contains("is not '*N'"), "{bad}");
        }
        assert_eq!(OperandKind::Imm(ImmMap { shift: 2, offset: 0 }).form_token(), "I*4");
        assert_eq!(OperandKind::Imm(bpt).key_token(), "I");
        assert_eq!(OperandKind::Float(Some(FloatFormat::BFloat)).form_token(), "F.BF16");
        assert_eq!(OperandKind::Float(Some(FloatFormat::BFloat)).key_token(), "F");
        assert_eq!(FloatFormat::ALL.map(|f| FloatFormat::parse(f.token())), FloatFormat::ALL.map(Ok));
        assert!(FloatFormat::parse("E4M3").is_err());
        // Plain kinds keep their JSON names (the spec snapshots); scaled ones say how.
        let json = |k: OperandKind| serde_json::to_string(&k).unwrap();
        assert_eq!(
            [OperandKind::Imm(ImmMap::PLAIN), OperandKind::Float(None), OperandKind::Target(2), OperandKind::Reg].map(json),
            ["\"imm\"", "\"float\"", "\"target\"", "\"reg\""]
        );
        assert_eq!(json(OperandKind::Imm(bpt)), r#"{"imm":{"shift":1,"offset":1}}"#);
        assert_eq!(json(OperandKind::Target(0)), r#"{"target":0}"#);
        assert_eq!(json(OperandKind::Float(Some(FloatFormat::BFloat))), r#"{"float":"b_float"}"#);
        assert_eq!(
            json(OperandKind::Mem(MemShape::parse("a[uI]").unwrap())),
            r#"{"mem":{"space":"attr","reg":false,"reg_suffix":null,"ureg":false,"imm":"unsigned"}}"#
        );
        let m = MemShape::parse("[R+UR+I*32]").unwrap();
        assert_eq!((m.imm_shift, m.token()), (5, "[R+UR+I*32]".to_string()));
        assert_eq!(MemShape::parse("a[uI*4]").unwrap().token(), "a[uI*4]");
        assert_eq!(OperandKind::Mem(MemShape::parse("a[UR+uI*4]").unwrap()).key_token(), "M_a_UR_uI");
        assert!(MemShape::parse("[R*4]").unwrap_err().to_string().contains("only the immediate takes a scale"));
        // A memory offset takes no remainder: `+1` reads as a component.
        assert!(MemShape::parse("[R+I*2+1]").unwrap_err().to_string().contains("component '1' is not R"));
    }

    #[test]
    fn derived_operands_read_spell_back_and_stop_at_the_zero_register() {
        let d = Derived::parse("operand 4 = operand 3 + 2").unwrap();
        assert_eq!((d, d.token()), (Derived { page_operand: 4, source: 3, plus: 2 }, "operand 4 = operand 3 + 2".to_string()));
        assert_eq!(Derived::parse(" operand 1 =operand 0+ 0 ").unwrap().plus, 0);
        for bad in ["operand 1 = operand 1 + 0", "operand 1 = operand 0 - 1", "operand 1 = operand 0 + 300", "1 = 0 + 1", "operand 1 = operand 0"] {
            assert!(Derived::parse(bad).unwrap_err().to_string().contains("is not 'operand N"), "{bad}");
        }
        // 8-bit field: URZ derives itself, UR253 + 2 is URZ, UR254 + 2 passes it (illegal).
        assert_eq!([0, 253, 254, 255].map(|x| Derived::value(2, x, 255)), [Some(2), Some(255), None, Some(255)]);
        assert_eq!(Derived::value(0, 255, 255), Some(255));
    }

    #[test]
    fn inverted_operands_read_spell_back_and_complement() {
        let x = Inverted::parse(" operand 6 ").unwrap();
        assert_eq!((x.page_operand, x.token()), (6, "operand 6".to_string()));
        assert!(Inverted::parse("operand").is_err() && Inverted::parse("6").is_err());
        // LDG's 3-bit predicate: field 1 prints P6, 0 prints PT (7); a register's 0 is RZ.
        assert_eq!([0, 1, 7].map(|v| Inverted::apply(v, 3)), [7, 6, 0]);
        assert_eq!(Inverted::apply(0, 8), 255);
        let f = Field {
            name: "operand 6".into(),
            kind: FieldKind::Operand { page_operand: 6 },
            bits: vec![87, 88, 89],
            line: 1,
            inverted: true,
            illegal_at_all_ones: false,
        };
        assert_eq!((f.raw(6), f.raw(7), Field { inverted: false, ..f.clone() }.raw(6)), (1, 0, 6));
    }

    #[test]
    fn malformed_memory_form_tokens_say_why() {
        for (t, why) in [
            ("[R+R]", "out of order or repeated"),
            ("[I+R]", "out of order"),
            ("[R+X]", "component 'X' is not R"),
            ("[R.FOO]", "register suffix '.FOO' is not one of"),
            ("[UR.64]", "only the register takes a suffix"),
            ("[]", "has no component"),
            ("x[R]", "does not start with"),
            ("[R", "expected one '[…]'"),
            ("xdesc[UR]", "does not start with"),
            ("c[I][[R]]", "expected one '[…]'"),
        ] {
            let e = MemShape::parse(t).unwrap_err().to_string();
            assert!(e.contains(why), "{t}: {e}");
        }
    }
}
