//! The spec: what a page says about each variant, in types that keep it honest.

use crate::word::{BitSet, Word};
use serde::Serialize;

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

/// One operand of the form line; `c[I][I]` and `cx[UR][I]` print as two page operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OperandKind {
    /// `R`: a general register.
    Reg,
    /// `UR`: a uniform register.
    UReg,
    /// `I`: an integer immediate.
    Imm,
    /// `F`: a floating immediate (the high 32 bits of a double for fp64 ops).
    Float,
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
    /// `codec::conventions::target_at_zero`).
    Target,
    /// `B`: a convergence barrier register, `B0`…`B15`.
    Barrier,
    /// `SR`: a special register (`SR_TID.X`, `SR_LANEID`, `SRZ`): a name, not a number. Its
    /// bits are a plain `modi` span whose "Operand K Modifiers" table lists the names.
    Special,
}

impl OperandKind {
    pub fn form_token(self) -> &'static str {
        match self {
            OperandKind::Reg => "R",
            OperandKind::UReg => "UR",
            OperandKind::Imm => "I",
            OperandKind::Float => "F",
            OperandKind::Const => "c[I][I]",
            OperandKind::ConstX => "cx[UR][I]",
            OperandKind::Pred => "P",
            OperandKind::UPred => "UP",
            OperandKind::Target => "REL",
            OperandKind::Barrier => "B",
            OperandKind::Special => "SR",
        }
    }

    /// The kind of operand nvdisasm's text shows: a branch target prints as an immediate.
    pub fn printed_kind(self) -> OperandKind {
        match self {
            OperandKind::Target => OperandKind::Imm,
            k => k,
        }
    }
    /// Every kind, in the order messages list the form tokens.
    pub const ALL: [OperandKind; 11] = [
        OperandKind::Reg,
        OperandKind::UReg,
        OperandKind::Imm,
        OperandKind::Float,
        OperandKind::Const,
        OperandKind::ConstX,
        OperandKind::Pred,
        OperandKind::UPred,
        OperandKind::Target,
        OperandKind::Barrier,
        OperandKind::Special,
    ];
    /// The accepted form tokens, for messages: `R, UR, I, F, c[I][I], cx[UR][I], P, UP`.
    pub fn form_tokens() -> String {
        OperandKind::ALL.iter().map(|k| k.form_token()).collect::<Vec<_>>().join(", ")
    }
    /// How many `operand N` numbers the page gives this operand.
    pub fn page_slots(self) -> usize {
        match self {
            OperandKind::Const | OperandKind::ConstX => 2,
            _ => 1,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    Stall,
    Yield,
    ReadBarrier,
    WriteBarrier,
    WaitMask,
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldKind {
    /// `pred`: guard predicate, 3 bits of index and a negation bit.
    Pred,
    /// `operand N`: page operand N (see [`Variant::operands`]).
    Operand {
        page_operand: usize,
    },
    /// `modi N`: Modifier Group N.
    Group {
        group: u32,
    },
    /// plain `modi`: the k-th such span belongs to the k-th "Operand K Modifiers" table.
    OperandModifier {
        page_operand: usize,
    },
    /// A one-bit (or wider) named flag.
    Flag {
        name: String,
        role: FlagRole,
        page_operand: Option<usize>,
    },
    Control {
        control: Control,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Field {
    /// The name as the page writes it (`operand 2`, `modi 1`, `cABS`).
    pub name: String,
    pub kind: FieldKind,
    /// Bit positions, least significant value bit first.
    pub bits: Vec<u8>,
    /// The page line of the layout content row where the field's name first appears.
    pub line: usize,
}

impl Field {
    pub fn width(&self) -> u32 {
        self.bits.len() as u32
    }
    pub fn max(&self) -> u64 {
        if self.bits.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits.len()) - 1
        }
    }
    pub fn mask(&self) -> BitSet {
        BitSet::from_bits(self.bits.iter().copied())
    }
    pub fn is_control(&self) -> bool {
        matches!(self.kind, FieldKind::Control { .. })
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    /// `(default)`: prints nothing.
    Default,
    Named,
    /// `INVALIDn`: the generator saw nvdisasm reject the value.
    Invalid,
    /// `???n`: nvdisasm printed `???n` itself.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    pub value: u64,
    pub name: String,
    pub kind: RowKind,
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TableId {
    Group { group: u32 },
    Operand { page_operand: usize },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Table {
    pub id: TableId,
    pub title: String,
    pub width: u32,
    pub rows: Vec<Row>,
    /// Values of `width` bits the table does not list.
    pub omitted: Vec<u64>,
    pub line: usize,
}

impl Table {
    pub fn row(&self, value: u64) -> Option<&Row> {
        self.rows.iter().find(|r| r.value == value)
    }
}

/// One element of the instruction's modifier list, in print order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModSlot {
    /// Text the heading carries (e.g. `???0` in `I2F.???0`), printed always.
    Fixed { text: String },
    /// Field index of a `modi N` field. `hidden_zero`: the zero row has a name, but the
    /// distilled line does not print it separately, so value zero prints nothing.
    Group { field: usize, hidden_zero: bool },
    /// Field index of a modifier flag (`SAT`).
    Flag { field: usize },
}

/// How one page operand prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OperandSpec {
    pub kind: OperandKind,
    /// Page operand numbers: one, or bank/register then offset.
    pub page_operands: Vec<usize>,
    /// Field indices holding the value(s), in `page_operands` order (`None`: no bits, prints 0).
    pub value_fields: Vec<Option<usize>>,
    /// Field indices of operand-modifier tables printed as suffixes.
    pub suffix_fields: Vec<usize>,
    pub abs_field: Option<usize>,
    pub neg_field: Option<usize>,
    /// `cNOT`: `!` before a predicate, `~` before any other operand (left out of the JSON
    /// when absent, as on every page without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_field: Option<usize>,
    /// Selector flags (`H1`) printed as suffixes when set.
    pub selector_fields: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Variant {
    pub key: String,
    pub arch: Arch,
    pub heading: String,
    pub mnemonic: String,
    pub form: String,
    pub operands: Vec<OperandSpec>,
    pub distilled: String,
    pub terminator: crate::sass::Terminator,
    /// Bits the page calls fixed, and their values.
    pub fixed_mask: BitSet,
    pub fixed_value: Word,
    /// Bits inferred rather than read (a dropped cell): fixed, but unconfirmed by the page.
    pub inferred: BitSet,
    pub fields: Vec<Field>,
    pub tables: Vec<Table>,
    /// Modifier print order, derived from the distilled line.
    pub modifiers: Vec<ModSlot>,
    pub file: String,
    /// The heading's line.
    pub line: usize,
    /// Lines of the `distilled:` line and of the layout's four rows (index and content
    /// for bits 0–63, then for 64–127): what `fix` rewrites.
    pub distilled_line: usize,
    pub layout_lines: [usize; 4],
}

impl Variant {
    /// The printed operands that are branch targets ([`OperandKind::Target`]).
    pub fn target_operands(&self) -> Vec<usize> {
        (0..self.operands.len()).filter(|&k| self.operands[k].kind == OperandKind::Target).collect()
    }
    pub fn table(&self, id: &TableId) -> Option<&Table> {
        self.tables.iter().find(|t| &t.id == id)
    }
    pub fn field_table(&self, field: usize) -> Option<&Table> {
        match &self.fields[field].kind {
            FieldKind::Group { group } => self.table(&TableId::Group { group: *group }),
            FieldKind::OperandModifier { page_operand } => self.table(&TableId::Operand { page_operand: *page_operand }),
            _ => None,
        }
    }
    pub fn field_by_name(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
    /// Every bit the page assigns to a field.
    pub fn field_mask(&self) -> BitSet {
        self.fields.iter().fold(BitSet::EMPTY, |a, f| a.union(f.mask()))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Page {
    pub file: String,
    pub instruction: String,
    pub description: Option<String>,
    pub arch: Arch,
    pub gpu: Option<String>,
    pub variants: Vec<Variant>,
    pub warnings: Vec<Diagnostic>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub file: String,
    pub line: usize,
    pub rule: &'static str,
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
    pub pages: Vec<Page>,
}

impl Spec {
    pub fn variants(&self) -> impl Iterator<Item = &Variant> {
        self.pages.iter().flat_map(|p| p.variants.iter())
    }
    pub fn variant(&self, key: &str) -> Option<&Variant> {
        self.variants().find(|v| v.key == key)
    }
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.pages.iter().flat_map(|p| p.warnings.iter())
    }
}
