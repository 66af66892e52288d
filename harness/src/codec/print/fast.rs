//! A [`super::Printer`]'s compiled forms: what printing a form reads, packed once into
//! small arrays with every table row's text pre-rendered (`.A.B`) in one shared arena, so
//! that printing a word writes its text straight into the caller's buffer without building
//! an [`crate::sass::Instruction`] (a `String` per token) or reading the page (most words
//! meet forms not printed lately, whose page data is not in cache).
//!
//! It prints exactly what [`super::print_planned`] and the `Display` of its instruction
//! print (`printer_prints_as_print_word` compares them over every discovered form). What
//! it does not compile falls back to that path: a form whose table values pass
//! [`super::DENSE_ROWS`]; per word, one an alias of its conventions may apply to or that
//! names a register `???N`; per operand, name operands (printed through
//! [`super::operand`] into the same buffer).

use super::super::bits::Values;
use super::super::conventions::{barrier_index, opex_index, wait_index, Alias, FormConventions, ImmClass, OffsetSpelling};
use super::{float_value, push_float, target_at_zero, FloatFormat, PrintPlan, Rows, DENSE_ROWS, UNLISTED};
use crate::sass::{Body, Operand, Terminator};
use crate::spec::{ImmMap, MemShape, ModSlot, OperandKind, OperandSpec, RowKind, Variant};
use crate::word::Word;
use smallvec::SmallVec;

mod mem;

/// Every form's compiled plan (`None`: printed by the general path) and the arena of the
/// texts they print.
pub(super) struct Compiled {
    texts: String,
    pub(super) forms: Vec<Option<Form>>,
    /// The forms' control tables, each once: forms share a few dozen per architecture, so
    /// these stay in cache where each form's own copy would not.
    controls: Vec<Control>,
}

/// What a form's stored conventions say of its control bits (see
/// [`FormConventions::reuse_mask`] and [`FormConventions::terminator`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Control {
    /// Per opex index: the reuse mask (bits 0–7), `;` by the opex bits (bit 8) and whether
    /// that is known (bit 9).
    opex: Box<[u16]>,
    /// Per barrier index: `;` by the barriers.
    barriers: Box<[bool]>,
    /// Per wait mask: `;` by the wait mask.
    wait: Box<[bool]>,
    space_bits: Box<[u8]>,
}

const OPEX_SEMICOLON: u16 = 1 << 8;
const OPEX_KNOWN: u16 = 1 << 9;

impl Control {
    fn new(c: &FormConventions) -> Control {
        let n = c.opex.len().max(c.opex_semicolon.len());
        let opex = (0..n)
            .map(|i| {
                let mask = c.opex.get(i).copied().flatten().map_or(0, u16::from);
                let semicolon = c.opex_semicolon.get(i).map_or(0, |&s| OPEX_KNOWN | if s { OPEX_SEMICOLON } else { 0 });
                mask | semicolon
            })
            .collect();
        Control {
            opex,
            barriers: c.terminator.iter().map(|&t| t == Terminator::Semicolon).collect(),
            wait: c.wait_semicolon.clone().into(),
            space_bits: c.space_bits.clone().into(),
        }
    }

    fn reuse_mask(&self, w: Word) -> u8 {
        self.opex.get(opex_index(w)).map_or(0, |&x| x as u8)
    }

    /// [`FormConventions::terminator`].
    fn terminator(&self, w: Word) -> Option<Terminator> {
        let by_barriers = *self.barriers.get(barrier_index(w))?;
        let opex = self.opex.get(opex_index(w)).copied().unwrap_or(0);
        let by_wait = *self.wait.get(wait_index(w))?;
        if opex & OPEX_KNOWN == 0 {
            return None;
        }
        let by_bits = !self.space_bits.iter().any(|&b| w.bit(b));
        Some(if by_barriers && opex & OPEX_SEMICOLON != 0 && by_wait && by_bits { Terminator::Semicolon } else { Terminator::SpaceSemicolon })
    }
}

/// A span of [`Compiled::texts`].
#[derive(Clone, Copy, Debug, Default)]
struct Text {
    start: u32,
    len: u32,
}

/// A table row as printed: nothing (its `(default)` row), its tokens (`.A.B`), or
/// `UNLISTED<n>` (no row lists the value).
#[derive(Clone, Copy, Debug)]
enum RowText {
    Default,
    Tokens(Text),
    Unlisted,
}

/// A table by value, dense from 0 (values past its end are unlisted).
type TableText = Box<[RowText]>;

#[derive(Debug)]
enum Mod {
    Fixed(Text),
    Group { field: u16, hidden_zero: bool, table: u16 },
    Flag { field: u16, name: Text },
}

/// A value slot: its field, width and all-ones value, and for a derived register what it
/// adds to its source ([`super::slot_value`]).
#[derive(Clone, Copy, Debug)]
struct Slot {
    field: u16,
    width: u8,
    plus: Option<u8>,
}

impl Slot {
    fn value(&self, values: &Values) -> u64 {
        let x = values.get(usize::from(self.field));
        match self.plus {
            Some(plus) => crate::spec::Derived::value(plus, x, self.max()).unwrap_or(self.max()),
            None => x,
        }
    }

    /// The field's all-ones value (`Field::max`).
    fn max(&self) -> u64 {
        u64::MAX.checked_shr(64 - u32::from(self.width).min(64)).unwrap_or(0)
    }

    fn width(&self) -> u32 {
        u32::from(self.width)
    }
}

/// What an operand prints: a body the compiled path writes, or [`Kind::General`].
#[derive(Clone, Copy, Debug)]
enum Kind {
    Reg,
    UReg,
    Imm(ImmMap),
    Float(FloatFormat),
    Const,
    ConstX,
    Pred,
    UPred,
    Barrier,
    Target(u8),
    /// A memory operand (see [`mem`]) and whether a lone zero offset stands in for RZ
    /// ([`super::zero_offset_stands_in`]).
    Mem(MemShape, bool),
    /// Name operands: [`super::operand`]'s.
    General,
}

#[derive(Debug)]
struct FormOperand {
    kind: Kind,
    /// Value slots (`None`: no bits, the value 0): one, two for a constant, up to four
    /// for a memory operand.
    slots: [Option<Slot>; 4],
    abs: Option<u16>,
    neg: Option<u16>,
    not: Option<u16>,
    /// The fixed suffixes, rendered (`.SIGN`), and whether there are any.
    fixed: Option<Text>,
    /// Suffix tables: (field, table).
    tables: Box<[(u16, u16)]>,
    /// Selector flags: (field, `.NAME`).
    selectors: Box<[(u16, Text)]>,
    joined: bool,
    suffixes_after_bars: bool,
    /// The operand's one value field and its all-ones value, if it has exactly one (what
    /// leaving it out at zero or all ones asks).
    single: Option<(u16, u64)>,
    zero_omitted: bool,
    /// In the stored conventions' `omitted`.
    omitted: bool,
    /// Its stored offset spelling beside RZ ([`FormConventions::rz_offsets`]).
    rz_offset: Option<OffsetSpelling>,
}

/// A compiled form.
#[derive(Debug)]
pub(super) struct Form {
    /// Inline, as every form reads them (a form's own allocations are cache misses).
    guards: SmallVec<[u16; 2]>,
    uniform_guard: bool,
    mnemonic: Text,
    /// Page order.
    mods: SmallVec<[Mod; 4]>,
    /// The learned print order ([`PrintPlan::order`]).
    order: Option<Box<[u16]>>,
    operands: Box<[FormOperand]>,
    tables: Box<[TableText]>,
    const_spaced: bool,
    /// The architecture's uniform zero register ([`super::ureg`]).
    urz: u64,
    terminator: Terminator,
    /// Its stored conventions' [`Control`] (none stored: `None`).
    control: Option<u32>,
    signed_imm: bool,
    /// [`FormConventions::signed_imm_by`] with each bit's field.
    signed_by: Box<[(Option<u16>, u64, bool)]>,
    /// [`FormConventions::aliases`]: where one may apply, the general path prints.
    aliases: Box<[Alias]>,
    /// The register fields of [`FormConventions::unnamed`]'s operands with their all-ones
    /// value, at which the general path prints (`???255`).
    unnamed: Box<[(u16, u64)]>,
    /// [`Variant::float_by`], compiled: the first that holds chooses the floats' format.
    float_by: Box<[FloatBy]>,
}

/// A float format that a printed modifier token chooses ([`Variant::float_by`]): where
/// the token prints (always, at some values of a group field, or with a flag set).
#[derive(Debug)]
struct FloatBy {
    format: FloatFormat,
    always: bool,
    /// Group fields with the values whose row prints the token, sorted.
    rows: Box<[(u16, Box<[u64]>)]>,
    flags: Box<[u16]>,
}

impl FloatBy {
    /// `None` (the general path) for a token an unlisted value could print (`UNLISTEDn`).
    fn new(v: &Variant, token: &str, format: FloatFormat) -> Option<FloatBy> {
        if token.starts_with(UNLISTED) {
            return None;
        }
        let (mut always, mut rows, mut flags) = (false, vec![], vec![]);
        for m in &v.modifiers {
            match m {
                ModSlot::Fixed { text } => always |= text == token,
                ModSlot::Flag { field } => {
                    if v.fields[*field].name == token {
                        flags.push(*field as u16);
                    }
                }
                ModSlot::Group { field, hidden_zero } => {
                    // Without a table a group prints `UNLISTEDn` only.
                    let Some(t) = v.field_table(*field) else { continue };
                    // A value prints its first row (`Table::row`), a `(default)` one nothing.
                    let first = |r: &crate::spec::Row| t.row(r.value).is_some_and(|f| std::ptr::eq(f, r));
                    let mut values: Vec<u64> = t
                        .rows
                        .iter()
                        .filter(|r| first(r) && r.kind != RowKind::Default && r.name.split('.').any(|p| p == token))
                        .map(|r| r.value)
                        .filter(|&x| !(*hidden_zero && x == 0))
                        .collect();
                    values.sort_unstable();
                    if !values.is_empty() {
                        rows.push((*field as u16, values.into_boxed_slice()));
                    }
                }
            }
        }
        Some(FloatBy { format, always, rows: rows.into(), flags: flags.into() })
    }

    /// Does the token print for these values?
    fn holds(&self, values: &Values) -> bool {
        let x = |f: u16| values.get(usize::from(f));
        self.always || self.flags.iter().any(|&f| x(f) != 0) || self.rows.iter().any(|(f, listed)| listed.binary_search(&x(*f)).is_ok())
    }
}

/// Where a word's form is on the page, for what the compiled path leaves to the general one
/// (read only then: the page is mostly not in cache).
pub(super) struct Page<'a> {
    pub(super) v: &'a Variant,
    pub(super) plan: &'a PrintPlan,
}

impl Compiled {
    /// `conventions`: each variant's (its stored ones, or those a validation learned).
    pub(super) fn new(variants: &[&Variant], plans: &[PrintPlan], conventions: &[Option<&FormConventions>]) -> Compiled {
        let mut c = Compiled { texts: String::new(), forms: Vec::with_capacity(variants.len()), controls: vec![] };
        let mut controls = std::collections::HashMap::new();
        for ((v, plan), &conventions) in variants.iter().zip(plans).zip(conventions) {
            let mut f = c.form(v, plan, conventions);
            if let (Some(f), Some(conventions)) = (&mut f, conventions) {
                let control = Control::new(conventions);
                let n = controls.len();
                let at = *controls.entry(control.clone()).or_insert(n);
                if at == n {
                    c.controls.push(control);
                }
                f.control = u32::try_from(at).ok();
            }
            c.forms.push(f);
        }
        c.texts.shrink_to_fit();
        c
    }

    fn text(&mut self, parts: &[&str], dotted: bool) -> Text {
        let start = self.texts.len() as u32;
        for p in parts {
            if dotted {
                self.texts.push('.');
            }
            self.texts.push_str(p);
        }
        Text { start, len: self.texts.len() as u32 - start }
    }

    fn get(&self, t: Text) -> &str {
        &self.texts[t.start as usize..(t.start + t.len) as usize]
    }

    /// `v` compiled, or `None` where it takes the general path (see the module's docs).
    fn form(&mut self, v: &Variant, plan: &PrintPlan, c: Option<&FormConventions>) -> Option<Form> {
        if v.fields.len() > usize::from(u16::MAX) {
            return None;
        }
        let float_by = v.float_by.iter().map(|(token, format)| FloatBy::new(v, token, *format)).collect::<Option<_>>()?;
        let mut tables: Vec<TableText> = vec![];
        let mut table_of = |this: &mut Compiled, field: usize| -> Option<u16> {
            let t = this.table(v, field)?;
            tables.push(t);
            u16::try_from(tables.len() - 1).ok()
        };
        let mut mods = Vec::with_capacity(v.modifiers.len());
        for m in &v.modifiers {
            mods.push(match m {
                ModSlot::Fixed { text } => Mod::Fixed(self.text(&[text], true)),
                ModSlot::Group { field, hidden_zero } => Mod::Group { field: *field as u16, hidden_zero: *hidden_zero, table: table_of(self, *field)? },
                ModSlot::Flag { field } => Mod::Flag { field: *field as u16, name: self.text(&[&v.fields[*field].name], true) },
            });
        }
        let mut operands = Vec::with_capacity(v.operands.len());
        for (k, o) in v.operands.iter().enumerate() {
            let suffix_tables = o.suffix_fields.iter().map(|&f| Some((f as u16, table_of(self, f)?))).collect::<Option<_>>()?;
            let omitted = c.is_some_and(|c| c.omitted.contains(&k));
            let mut op = self.operand(v, o, suffix_tables, omitted, plan.zero_offset.as_ref().map(|z| z[k]))?;
            op.rz_offset = c.and_then(|c| c.rz_offsets.iter().find(|(at, _)| *at == k)).map(|&(_, s)| s);
            operands.push(op);
        }
        let mnemonic = self.text(&[&v.mnemonic], false);
        let signed_by = c.map(|c| c.signed_imm_by.iter().zip(plan.signed_by.iter()).map(|(&(_, x, s), &f)| (f, x, s)).collect()).unwrap_or_default();
        Some(Form {
            guards: plan.guards.iter().copied().collect(),
            uniform_guard: plan.uniform_guard,
            mnemonic,
            mods: mods.into_iter().collect(),
            order: plan.order.clone(),
            operands: operands.into(),
            tables: tables.into(),
            const_spaced: plan.const_spaced,
            urz: u64::from(super::super::conventions::uniform_zero(v.arch)),
            terminator: v.terminator,
            control: None,
            signed_imm: c.is_some_and(|c| c.signed_imm),
            signed_by,
            aliases: c.map(|c| c.aliases.clone().into()).unwrap_or_default(),
            unnamed: c.map(|c| unnamed_fields(v, c)).unwrap_or_default(),
            float_by,
        })
    }

    /// Field `field`'s table by value, its rows rendered; `None` (the general path) without
    /// a table or with values past [`DENSE_ROWS`].
    fn table(&mut self, v: &Variant, field: usize) -> Option<TableText> {
        let t = v.field_table(field)?;
        let n = t.rows.iter().map(|r| r.value.saturating_add(1)).max().unwrap_or(0);
        if n > DENSE_ROWS {
            return None;
        }
        let mut by_value = vec![RowText::Unlisted; n as usize];
        // Last to first, so that a value's first row (as `Table::row` finds it) stays.
        for r in t.rows.iter().rev() {
            by_value[r.value as usize] = match r.kind {
                RowKind::Default => RowText::Default,
                _ => RowText::Tokens(self.text(&r.name.split('.').collect::<Vec<_>>(), true)),
            };
        }
        Some(by_value.into())
    }

    fn operand(&mut self, v: &Variant, o: &OperandSpec, tables: Box<[(u16, u16)]>, omitted: bool, zero_offset: Option<bool>) -> Option<FormOperand> {
        let kind = match o.kind {
            // A register without bits (its zero register): the general path prints it.
            OperandKind::Reg | OperandKind::UReg if o.value_fields.first() == Some(&None) => return None,
            OperandKind::Reg => Kind::Reg,
            OperandKind::UReg => Kind::UReg,
            OperandKind::Imm(m) => Kind::Imm(m),
            OperandKind::Float(_) => Kind::Float(v.float_format(o, &[])),
            OperandKind::Const => Kind::Const,
            OperandKind::ConstX => Kind::ConstX,
            OperandKind::Pred => Kind::Pred,
            OperandKind::UPred => Kind::UPred,
            OperandKind::Barrier => Kind::Barrier,
            OperandKind::Target(s) => Kind::Target(s),
            // Its slots are its roles' (see `mem::parts`).
            OperandKind::Mem(m) if m.slot_roles().len() == o.value_fields.len() => Kind::Mem(m, zero_offset?),
            OperandKind::Mem(_) => return None,
            OperandKind::Special | OperandKind::Name => Kind::General,
        };
        let most = if matches!(kind, Kind::Mem(..)) { 4 } else { 2 };
        if o.value_fields.len() > most && !matches!(kind, Kind::General) {
            return None;
        }
        let mut slots = [None; 4];
        for (k, f) in o.value_fields.iter().enumerate().take(4) {
            slots[k] = f.map(|f| Slot { field: f as u16, width: v.fields[f].width().min(64) as u8, plus: o.derived_plus(k) });
        }
        let fixed = (!o.fixed_suffixes.is_empty()).then(|| self.text(&o.fixed_suffixes.iter().map(String::as_str).collect::<Vec<_>>(), true));
        let selectors = o.selector_fields.iter().map(|&f| (f as u16, self.text(&[&v.fields[f].name], true))).collect();
        let single = match o.value_fields.as_slice() {
            [Some(f)] => Some((*f as u16, v.fields[*f].max())),
            _ => None,
        };
        Some(FormOperand {
            kind,
            slots,
            abs: o.abs_field.map(|f| f as u16),
            neg: o.neg_field.map(|f| f as u16),
            not: o.not_field.map(|f| f as u16),
            fixed,
            tables,
            selectors,
            joined: o.joined,
            suffixes_after_bars: o.suffixes_after_bars,
            single,
            zero_omitted: o.zero_omitted,
            omitted,
            rz_offset: None,
        })
    }
}

/// [`Form::unnamed`].
fn unnamed_fields(v: &Variant, c: &FormConventions) -> Box<[(u16, u64)]> {
    c.unnamed.iter().filter_map(|&k| v.operands.get(k)?.register_field()).map(|f| (f as u16, v.fields[f].max())).collect()
}

/// The decorations of one operand for these values.
#[derive(Clone, Copy)]
struct Flags {
    neg: bool,
    abs: bool,
    not: bool,
    /// Any suffix printed.
    suffixed: bool,
}

impl Compiled {
    /// Appends the text of the form compiled as `f` (`page`: where it is on the page) for
    /// `values`, with its stored conventions for `word` if `learned` (else the page's
    /// printing); false, with nothing appended, where the general path is to print it.
    pub(super) fn print<'a>(&self, f: &Form, page: impl Fn() -> Page<'a>, values: &Values, learned: Option<Word>, out: &mut String) -> bool {
        let signed_imm = learned.is_some() && signed_imm(f, values);
        if learned.is_some() && (f.unnamed.iter().any(|&(field, max)| values.get(usize::from(field)) == max) || alias_may_apply(f, values, signed_imm)) {
            return false;
        }
        self.guard(f, values, out);
        out.push_str(self.get(f.mnemonic));
        match learned.and(f.order.as_deref()) {
            Some(order) => order.iter().for_each(|&i| self.modifier(f, &f.mods[usize::from(i)], values, out)),
            None => f.mods.iter().for_each(|m| self.modifier(f, m, values, out)),
        }
        // The stored conventions' control table, as interned.
        let control = learned.and_then(|w| Some((&self.controls[f.control? as usize], w)));
        let mask = control.map_or(0, |(c, w)| c.reuse_mask(w));
        let mut first = true;
        for (k, o) in f.operands.iter().enumerate() {
            let reuse = k < 8 && mask >> k & 1 == 1;
            if let Kind::General = o.kind {
                let Page { v, plan } = page();
                let mut op = super::operand(v, &v.operands[k], values, signed_imm, &[], plan.zero_offset.as_ref().map(|z| z[k]), Rows(plan.rows.as_deref()));
                if gone_general(v, values, k, o, &op, learned.is_some()) {
                    continue;
                }
                op.joined = o.joined;
                op.reuse = reuse;
                separator(&mut first, o.joined, out);
                general_operand(&op, f.const_spaced, out);
                continue;
            }
            let flags = self.flags(f, o, values);
            if let Kind::Mem(m, zero_offset) = o.kind {
                let parts = mem::parts(f, o, m, zero_offset, values, flags, learned.is_some());
                if gone(o, values, Flags { suffixed: parts.suffixed, ..flags }, learned.is_some()) {
                    continue;
                }
                separator(&mut first, o.joined, out);
                self.mem_text(f, o, m, &parts, values, flags, reuse, out);
                continue;
            }
            if gone(o, values, flags, learned.is_some()) {
                continue;
            }
            separator(&mut first, o.joined, out);
            self.operand_text(f, o, values, flags, reuse, signed_imm, out);
        }
        let terminator = control.and_then(|(c, w)| c.terminator(w)).unwrap_or(f.terminator);
        out.push_str(match terminator {
            Terminator::SpaceSemicolon => " ;",
            Terminator::Semicolon => ";",
            Terminator::Missing => "",
        });
        true
    }

    /// The guard, `@!P3 `, unless it is PT (the last guard field that is not).
    fn guard(&self, f: &Form, values: &Values, out: &mut String) {
        let Some((index, negated)) = f.guards.iter().rev().find_map(|&g| {
            let p = values.get(usize::from(g));
            let (index, negated) = ((p & 7) as u8, (p >> 3) & 1 == 1);
            (index != 7 || negated).then_some((index, negated))
        }) else {
            return;
        };
        out.push('@');
        if negated {
            out.push('!');
        }
        if f.uniform_guard {
            out.push('U');
        }
        if index == 7 {
            out.push_str("PT");
        } else {
            out.push('P');
            push_dec(out, u64::from(index));
        }
        out.push(' ');
    }

    fn modifier(&self, f: &Form, m: &Mod, values: &Values, out: &mut String) {
        match *m {
            Mod::Fixed(t) => out.push_str(self.get(t)),
            Mod::Group { field, hidden_zero, table } => {
                let x = values.get(usize::from(field));
                if !(hidden_zero && x == 0) {
                    self.row(&f.tables[usize::from(table)], x, out);
                }
            }
            Mod::Flag { field, name } => {
                if values.get(usize::from(field)) != 0 {
                    out.push_str(self.get(name));
                }
            }
        }
    }

    /// Appends table row `x`'s tokens; whether it printed any.
    fn row(&self, t: &TableText, x: u64, out: &mut String) -> bool {
        match usize::try_from(x).ok().and_then(|i| t.get(i)).copied().unwrap_or(RowText::Unlisted) {
            RowText::Default => false,
            RowText::Tokens(text) => {
                out.push_str(self.get(text));
                true
            }
            RowText::Unlisted => {
                out.push('.');
                out.push_str(UNLISTED);
                push_dec(out, x);
                true
            }
        }
    }

    fn flags(&self, f: &Form, o: &FormOperand, values: &Values) -> Flags {
        let set = |x: Option<u16>| x.is_some_and(|x| values.get(usize::from(x)) != 0);
        let row_prints = |&(field, table): &(u16, u16)| {
            let t: &TableText = &f.tables[usize::from(table)];
            let x = values.get(usize::from(field));
            !matches!(usize::try_from(x).ok().and_then(|i| t.get(i)), Some(RowText::Default))
        };
        let suffixed = o.fixed.is_some() || o.tables.iter().any(row_prints) || o.selectors.iter().any(|&(s, _)| values.get(usize::from(s)) != 0);
        Flags { neg: set(o.neg), abs: set(o.abs), not: set(o.not), suffixed }
    }

    fn suffixes(&self, f: &Form, o: &FormOperand, values: &Values, out: &mut String) {
        if let Some(t) = o.fixed {
            out.push_str(self.get(t));
        }
        for &(field, table) in o.tables.iter() {
            self.row(&f.tables[usize::from(table)], values.get(usize::from(field)), out);
        }
        for &(s, name) in o.selectors.iter() {
            if values.get(usize::from(s)) != 0 {
                out.push_str(self.get(name));
            }
        }
    }

    /// An operand as `Operand`'s `Display` prints it (`-|R2|.reuse.H1`).
    #[allow(clippy::too_many_arguments)]
    fn operand_text(&self, f: &Form, o: &FormOperand, values: &Values, flags: Flags, reuse: bool, signed_imm: bool, out: &mut String) {
        if flags.neg {
            out.push('-');
        }
        if flags.not {
            out.push(if matches!(o.kind, Kind::Pred | Kind::UPred) { '!' } else { '~' });
        }
        if flags.abs {
            out.push('|');
        }
        body(f, o, values, signed_imm, out);
        if reuse && !flags.abs {
            out.push_str(".reuse");
        }
        let outside = flags.abs && o.suffixes_after_bars && flags.suffixed;
        if !outside {
            self.suffixes(f, o, values, out);
        }
        if flags.abs {
            out.push('|');
            if reuse {
                out.push_str(".reuse");
            }
        }
        if outside {
            self.suffixes(f, o, values, out);
        }
    }
}

/// Whether one of the form's aliases may apply ([`Alias::applies`] for the operands these
/// values print; an operand the general path prints counts as one that may match).
fn alias_may_apply(f: &Form, values: &Values, signed_imm: bool) -> bool {
    let rz = |k: usize| match f.operands.get(k) {
        Some(o @ FormOperand { kind: Kind::Reg, .. }) => Some(o.slots[0].map_or(0, |s| s.value(values)) as u16 == crate::sass::RZ),
        Some(FormOperand { kind: Kind::General, .. }) => None,
        _ => Some(false),
    };
    let imm = |k: usize, class: ImmClass| match f.operands.get(k) {
        Some(o @ FormOperand { kind: Kind::Imm(m), .. }) => Some(ImmClass::of(imm_value(o, *m, values, signed_imm)) == class),
        Some(FormOperand { kind: Kind::General, .. }) => None,
        _ => Some(false),
    };
    f.aliases.iter().any(|a| {
        let imm_ok = a.imm.map_or(Some(true), |(k, class)| imm(k, class));
        let regs_ok = a.regs.iter().try_fold(true, |all, &k| Some(all && rz(k)? == a.rz.contains(&k)));
        // Unknown (`None`) may apply.
        imm_ok != Some(false) && regs_ok != Some(false)
    })
}

/// The value an immediate operand prints.
fn imm_value(o: &FormOperand, m: ImmMap, values: &Values, signed_imm: bool) -> i128 {
    let x = o.slots[0].map_or(0, |s| s.value(values));
    if signed_imm {
        m.apply(super::signed(x, o.slots[0].map_or(0, |s| s.width())).into())
    } else {
        m.apply(x.into())
    }
}

/// `, ` between operands, ` ` before the first and a joined one.
fn separator(first: &mut bool, joined: bool, out: &mut String) {
    out.push_str(if *first || joined { " " } else { ", " });
    *first = false;
}

/// Does the immediate print signed ([`super::signed_imm`])?
fn signed_imm(f: &Form, values: &Values) -> bool {
    let set = |field: Option<u16>, x: u64| field.is_some_and(|field| values.get(usize::from(field)) == x);
    f.signed_by.iter().find(|&&(field, x, s)| s != f.signed_imm && set(field, x)).map_or(f.signed_imm, |&(_, _, s)| s)
}

/// Is the operand left out: at zero where the page says so ([`super::zero_left_out`]), at
/// all ones where the conventions do ([`super::left_out`])?
fn gone(o: &FormOperand, values: &Values, flags: Flags, learned: bool) -> bool {
    let plain = !flags.not && !flags.neg && !flags.abs && !flags.suffixed;
    let Some((field, max)) = o.single else { return false };
    let x = values.get(usize::from(field));
    plain && ((o.zero_omitted && x == 0) || (learned && o.omitted && x == max))
}

/// [`gone`] for an operand printed by the general path, and [`super::nameless`].
fn gone_general(v: &Variant, values: &Values, k: usize, o: &FormOperand, op: &Operand, learned: bool) -> bool {
    super::zero_left_out(v, values, k, op) || super::nameless(v, k, op) || (learned && o.omitted && super::left_out(v, values, k, op))
}

/// An operand of the general path, as `Instruction`'s `Display` prints it.
fn general_operand(op: &Operand, const_spaced: bool, out: &mut String) {
    use std::fmt::Write;
    match op.body {
        Body::Const { .. } | Body::ConstX { .. } if const_spaced => out.push_str(&op.to_string().replacen("][", "] [", 1)),
        // Writing to a String cannot fail.
        _ => drop(write!(out, "{op}")),
    }
}

/// The body of a compiled operand (`Body`'s `Display`).
fn body(f: &Form, o: &FormOperand, values: &Values, signed_imm: bool, out: &mut String) {
    let fv = |k: usize| o.slots[k].map_or(0, |s| s.value(values));
    let width = |k: usize| o.slots[k].map_or(0, |s| s.width());
    match o.kind {
        Kind::Reg => reg(out, fv(0) as u16),
        Kind::UReg => ureg(out, fv(0), f),
        Kind::Imm(m) => push_hex_signed(out, imm_value(o, m, values, signed_imm)),
        Kind::Float(format) => {
            // The format a printed modifier chooses, else the operand's own.
            let format = f.float_by.iter().find(|b| b.holds(values)).map_or(format, |b| b.format);
            let (x, quiet) = float_value(fv(0), format);
            push_float(x, quiet, out);
        }
        Kind::Const => constant(out, f, fv(0) as u32, super::signed(fv(1), width(1)) * 4),
        Kind::ConstX => constant_x(out, f, ureg_n(f, fv(0)), (fv(1) * 4) as i64),
        Kind::Pred => pred(out, "P", fv(0) as u8),
        Kind::UPred => pred(out, "UP", fv(0) as u8),
        Kind::Barrier => {
            out.push('B');
            push_dec(out, u64::from(fv(0) as u8));
        }
        Kind::Target(shift) => push_hex_signed(out, target_at_zero(super::signed(fv(0), width(0)), shift).into()),
        Kind::Mem(..) | Kind::General => unreachable!("memory and name operands are printed by `mem_text` and `general_operand`"),
    }
}

fn reg(out: &mut String, n: u16) {
    if n == crate::sass::RZ {
        out.push_str("RZ");
    } else {
        out.push('R');
        push_dec(out, u64::from(n));
    }
}

/// A uniform register field's value: the architecture's zero register is `URZ`.
fn ureg(out: &mut String, x: u64, f: &Form) {
    push_ureg(out, ureg_n(f, x));
}

/// The register a uniform register field's value names ([`super::ureg`]).
fn ureg_n(f: &Form, x: u64) -> u16 {
    if x == f.urz {
        crate::sass::URZ
    } else {
        x as u16
    }
}

/// `Body::UReg`'s text.
fn push_ureg(out: &mut String, n: u16) {
    if n == crate::sass::URZ {
        out.push_str("URZ");
    } else {
        out.push_str("UR");
        push_dec(out, u64::from(n));
    }
}

/// `c[bank][offset]` (`c[bank] [offset]` where the form spaces it).
fn constant(out: &mut String, f: &Form, bank: u32, offset: i64) {
    out.push_str("c[");
    push_hex_signed(out, i128::from(bank));
    out.push_str(if f.const_spaced { "] [" } else { "][" });
    push_hex_signed(out, i128::from(offset));
    out.push(']');
}

/// `cx[UR][offset]`.
fn constant_x(out: &mut String, f: &Form, ureg: u16, offset: i64) {
    out.push_str("cx[");
    push_ureg(out, ureg);
    out.push_str(if f.const_spaced { "] [" } else { "][" });
    push_hex_signed(out, i128::from(offset));
    out.push(']');
}

fn pred(out: &mut String, prefix: &str, n: u8) {
    out.push_str(prefix);
    if n == 7 {
        out.push('T');
    } else {
        push_dec(out, u64::from(n));
    }
}

/// `x` in decimal, without `fmt`: register numbers and the like (below 1000) digit by
/// digit, the rest through a buffer. Each digit is pushed as a `char` (ASCII), so no
/// UTF-8 check of a buffer is made.
fn push_dec(out: &mut String, x: u64) {
    let digit = |d: u64| char::from(b'0' + (d % 10) as u8);
    if x < 10 {
        out.push(digit(x));
    } else if x < 100 {
        out.push(digit(x / 10));
        out.push(digit(x));
    } else if x < 1000 {
        out.push(digit(x / 100));
        out.push(digit(x / 10));
        out.push(digit(x));
    } else {
        push_digits(out, u128::from(x), 10);
    }
}

/// `x` in base `radix` (10 or 16, lower-case), most significant digit first.
fn push_digits(out: &mut String, mut x: u128, radix: u128) {
    let mut buf = [0u8; 40];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b"0123456789abcdef"[(x % radix) as usize];
        x /= radix;
        if x == 0 {
            break;
        }
    }
    out.extend(buf[i..].iter().map(|&b| char::from(b)));
}

/// [`crate::sass::hex_signed`] appended, without `fmt`: `0x10`, `-0x8`.
fn push_hex_signed(out: &mut String, v: i128) {
    if v < 0 {
        out.push('-');
    }
    out.push_str("0x");
    match u64::try_from(v.unsigned_abs()) {
        // Most immediates fit 64 bits: shifts of a u64, not u128 divisions.
        Ok(mut x) => {
            let mut buf = [0u8; 16];
            let mut i = buf.len();
            loop {
                i -= 1;
                buf[i] = b"0123456789abcdef"[(x & 15) as usize];
                x >>= 4;
                if x == 0 {
                    break;
                }
            }
            out.extend(buf[i..].iter().map(|&b| char::from(b)));
        }
        Err(_) => push_digits(out, v.unsigned_abs(), 16),
    }
}

impl Form {
    /// Whether the form has stored conventions (then it has a control table).
    pub(super) fn has_conventions(&self) -> bool {
        self.control.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digit pushers write what `fmt` writes, at each arm's edges.
    #[test]
    fn numbers_print_as_fmt_prints_them() {
        for x in [0u64, 7, 9, 10, 42, 99, 100, 255, 999, 1000, 65_535, u64::MAX] {
            let mut s = String::new();
            push_dec(&mut s, x);
            assert_eq!(s, x.to_string());
        }
        for v in [0i128, 1, -8, 0x10, 0xffff_ffff, i128::from(u64::MAX), i128::from(u64::MAX) + 1, -i128::from(u64::MAX) - 1, i128::MAX, i128::MIN] {
            let mut s = String::new();
            push_hex_signed(&mut s, v);
            assert_eq!(s, crate::sass::hex_signed(v), "{v}");
        }
    }
}
