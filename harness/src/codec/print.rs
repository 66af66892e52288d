//! Decoded instruction → SASS text in nvdisasm's syntax, from what the page says.
//!
//! Where the page is silent, nvdisasm's conventions fill in (`conventions` holds those that
//! depend on the architecture or must be learned from nvdisasm): `RZ` is R255, `URZ` the
//! architecture's last uniform register, predicate bit 3 negates and index 7 is PT
//! (omitted when not negated), a `P`/`UP` operand's 7 is `PT`/`UPT` (printed always, `!PT`
//! when its cNOT is set), constant-bank offsets count 4-byte words and are signed in
//! `c[I][I]`, and an `F` operand of a D-prefixed (fp64) instruction holds the high 32 bits
//! of a double, a 16-bit one of another instruction an fp16, unless the form token names
//! the format (`F.BF16`, `F.F64`). A scaled immediate prints `offset + field << shift`
//! (`I*4`, `I*2+1`, `[R+I*32]`), a `REL*N` target counts N-byte units. Values a table does
//! not list print as `UNLISTED<n>`.

use super::bits::Values;
use super::conventions::{FormConventions, OffsetSpelling, RegSuffix, SlotId};
use crate::sass::{Body, Instruction, MemSpace, Operand, Predicate};
use crate::spec::{FieldKind, MemImm, MemShape, MemSlot, MemSpaceKind, ModSlot, OperandKind, OperandSpec, Row, RowKind, Table, Variant};
use crate::word::Word;

mod fast;
mod float;
mod printer;

pub use printer::{FormPrinter, Printer};

/// How a table value the page does not list prints: `UNLISTED` and the value
/// (`UNLISTED5`), so that the text shows it and nvdisasm's rejection reads as a finding.
pub const UNLISTED: &str = "UNLISTED";

/// Tokens a table value prints (empty for `(default)`).
pub fn row_tokens(t: Option<&Table>, v: u64) -> Vec<String> {
    match t.and_then(|t| t.row(v)) {
        Some(r) if r.kind == RowKind::Default => vec![],
        Some(r) => r.name.split('.').map(str::to_string).collect(),
        None => vec![format!("{UNLISTED}{v}")],
    }
}

pub use crate::spec::FloatFormat;

/// The format of operand `o`'s `F` field when the instruction prints `modifiers` (see
/// [`Variant::float_format`]: a modifier may choose it, `HFMA2.BF16_V2`).
pub fn float_format(v: &Variant, o: &OperandSpec, modifiers: &[String]) -> FloatFormat {
    v.float_format(o, modifiers)
}

/// The operand body of a float field holding `bits` in `format`: its value and the text
/// nvdisasm spells it with.
pub fn float_body(format: FloatFormat, bits: u64) -> Body {
    let (value, text) = float_text(bits, format);
    Body::Float { value, text }
}

/// An `F` field's value as nvdisasm spells it, and as a double (bits kept: a signalling
/// NaN stays signalling).
pub fn float_text(bits: u64, format: FloatFormat) -> (f64, String) {
    let (value, quiet) = float_value(bits, format);
    (value, format_float(value, quiet))
}

/// An `F` field's value as a double (bits kept: a signalling NaN stays signalling) and
/// whether it is a quiet NaN.
fn float_value(bits: u64, format: FloatFormat) -> (f64, bool) {
    match format {
        FloatFormat::DoubleHigh => {
            let b = bits << 32;
            (f64::from_bits(b), b >> 51 & 1 == 1)
        }
        FloatFormat::Single | FloatFormat::BFloat => {
            let b = if format == FloatFormat::BFloat { (bits as u32) << 16 } else { bits as u32 };
            let quiet = b >> 22 & 1 == 1;
            let x = f32::from_bits(b);
            // `as f64` would quiet a signalling NaN: keep sign and quietness by hand.
            (if x.is_nan() { nan_f64(b >> 31 == 1, quiet) } else { x as f64 }, quiet)
        }
        FloatFormat::Half => half_to_f64(bits as u16),
    }
}

/// A NaN double with this sign and quietness.
fn nan_f64(negative: bool, quiet: bool) -> f64 {
    f64::from_bits(u64::from(negative) << 63 | if quiet { crate::sass::QNAN_BITS } else { crate::sass::SNAN_BITS })
}

/// The bfloat16 that is exactly `x` (NaNs keep sign and quietness), if there is one.
pub fn f64_to_bfloat(x: f64) -> Option<u16> {
    if x.is_nan() {
        let quiet = x.to_bits() >> 51 & 1 == 1;
        return Some(((x.to_bits() >> 63) as u16) << 15 | if quiet { 0x7fc0 } else { 0x7fa0 });
    }
    let f = x as f32;
    (f as f64 == x && f.to_bits() & 0xffff == 0).then_some((f.to_bits() >> 16) as u16)
}

/// An fp16 as a double (exact), and whether it is a quiet NaN.
pub fn half_to_f64(b: u16) -> (f64, bool) {
    let negative = b >> 15 == 1;
    let sign = if negative { -1.0 } else { 1.0 };
    let (e, m) = (i32::from(b >> 10 & 0x1f), f64::from(b & 0x3ff));
    let quiet = b >> 9 & 1 == 1;
    match e {
        0 => (sign * m * 2f64.powi(-24), false),
        31 if m == 0.0 => (sign * f64::INFINITY, false),
        31 => (nan_f64(negative, quiet), quiet),
        _ => (sign * (1024.0 + m) * 2f64.powi(e - 25), false),
    }
}

/// The fp16 that is exactly `x` (NaNs keep sign and quietness), if there is one.
pub fn f64_to_half(x: f64) -> Option<u16> {
    let sign = ((x.to_bits() >> 63) as u16) << 15;
    if x.is_nan() {
        let quiet = x.to_bits() >> 51 & 1 == 1;
        return Some(sign | if quiet { 0x7e00 } else { 0x7d00 });
    }
    if x.is_infinite() {
        return Some(sign | 0x7c00);
    }
    if x == 0.0 {
        return Some(sign);
    }
    let bits = x.to_bits();
    let exp = (bits >> 52 & 0x7ff) as i32 - 1023;
    let mant = bits & ((1u64 << 52) - 1);
    if (-14..=15).contains(&exp) {
        // Normal: 10 mantissa bits, the other 42 must be zero.
        return (mant & ((1u64 << 42) - 1) == 0).then(|| sign | ((exp + 15) as u16) << 10 | (mant >> 42) as u16);
    }
    if (-24..-14).contains(&exp) && bits >> 52 & 0x7ff != 0 {
        // Subnormal: units of 2^-24.
        let full = mant | 1u64 << 52;
        let shift = 52 - (exp + 24) as u32;
        return (full & ((1u64 << shift) - 1) == 0).then(|| sign | (full >> shift) as u16);
    }
    None
}

/// A float as nvdisasm spells it (nvdisasm 13.5, fp32 and fp64 alike): `%.20e` from 1e9 up,
/// otherwise `%.20g` (so integers below 1e9 print as integers); `+INF`, `+QNAN`, `+SNAN`,
/// `-0.0` followed by a space. Every finite spelling parses back to the same value.
pub fn format_float(x: f64, quiet: bool) -> String {
    let mut s = String::new();
    push_float(x, quiet, &mut s);
    s
}

/// [`format_float`] appended to `out`: from the exact digits in integer arithmetic
/// where they fit a `u128` (`float.rs`), else through `fmt`.
pub fn push_float(x: f64, quiet: bool, out: &mut String) {
    if x.is_finite() && x != 0.0 && float::push_finite(x, out) {
        return;
    }
    out.push_str(&format_float_fmt(x, quiet));
}

/// [`format_float`] through `fmt`'s exact mode: for the specials and the digits past a
/// `u128`, and what the tests compare the integer path with.
fn format_float_fmt(x: f64, quiet: bool) -> String {
    let sign = if x.is_sign_negative() { '-' } else { '+' };
    if x.is_nan() {
        return format!("{sign}{}NAN ", if quiet { 'Q' } else { 'S' });
    }
    if x.is_infinite() {
        return format!("{sign}INF ");
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0 ".into() } else { "0".into() };
    }
    let exp_text = |m: &str, e: i32| format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    if x.abs() >= 1e9 {
        let sci = format!("{x:.20e}");
        let (m, e) = sci.split_once('e').unwrap_or((&sci, "0"));
        return exp_text(m, e.parse().unwrap_or(0));
    }
    // %.20g: the exponent after rounding to 20 significant digits picks the style.
    let sci = format!("{x:.19e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    if e < -4 {
        return exp_text(mant.trim_end_matches('0').trim_end_matches('.'), e);
    }
    let fixed = format!("{:.*}", (19 - e).max(0) as usize, x);
    if fixed.contains('.') {
        fixed.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        fixed
    }
}

/// What the page alone predicts: no learned conventions (control bits print nothing, the
/// terminator is the distilled line's, modifiers in page order).
/// Whether the page's distilled line (nvdisasm's text for the zero word) has a uniform
/// guard, `@UP0`: the guard field of a uniform-datapath form holds a uniform predicate.
pub fn guard_is_uniform(v: &Variant) -> bool {
    let d = v.distilled.trim_start();
    d.starts_with("@UP") || d.starts_with("@!UP")
}

/// Whether the page's distilled line (nvdisasm's text for the zero word) spells constant
/// operands `c[0x0] [0x0]`.
fn distilled_const_spaced(v: &Variant) -> bool {
    v.distilled.contains("] [")
}

/// What the page alone predicts nvdisasm prints for `values` of `v`: no stored
/// conventions, so no `.reuse`, no terminator rule, page modifier order ([`print_word`]
/// uses them).
pub fn print(v: &Variant, values: &Values) -> Instruction {
    print_with(v, values, None)
}

/// The text nvdisasm prints for `word` (whose field values are `values`) with the
/// conventions stored for its form ([`Variant::conventions`]); without them, what the
/// page alone predicts ([`print()`]). Never asks nvdisasm.
pub fn print_word(v: &Variant, values: &Values, word: Word) -> Instruction {
    print_with(v, values, v.conventions.as_deref().map(|c| (c, word)))
}

/// The text nvdisasm prints for `word` (whose field values are `values`), with what was
/// learned about this form: `.reuse`, the terminator and the modifier order.
pub fn print_with(v: &Variant, values: &Values, learned: Option<(&FormConventions, Word)>) -> Instruction {
    print_planned(v, &PrintPlan::new(v, learned.map(|l| l.0), false), values, learned)
}

/// [`print_with`] along a plan built once for `v` and `learned`'s conventions
/// (`PrintPlan::new(v, conventions, _)`): for many words of one form.
pub fn print_with_plan(v: &Variant, plan: &PrintPlan, values: &Values, learned: Option<(&FormConventions, Word)>) -> Instruction {
    print_planned(v, plan, values, learned)
}

/// What printing a form reads of its page and conventions besides the field values,
/// worked out once: most words meet forms not printed lately, whose page data (fields,
/// strings, each its own allocation) is not in cache, so a [`Printer`] keeps this small
/// and reads the page only for what the values choose.
#[derive(Clone, Debug)]
pub struct PrintPlan {
    /// The guard's fields (one, on every page seen; the last that is not `PT` prints).
    guards: Box<[u16]>,
    /// [`guard_is_uniform`].
    uniform_guard: bool,
    /// [`distilled_const_spaced`].
    const_spaced: bool,
    /// The modifier slots in the learned order, where every slot has a place in it.
    order: Option<Box<[u16]>>,
    /// Per operand, [`zero_offset_stands_in`]; `None`: asked when needed (it parses the
    /// distilled line, which a plan built per call should not do for every memory form).
    zero_offset: Option<Box<[bool]>>,
    /// The field of each of the learned [`FormConventions::signed_imm_by`]'s bits.
    signed_by: Box<[Option<u16>]>,
    /// Per field, where its table's rows are; `None` (a plan not `eager`): the page's
    /// tables are searched when needed.
    rows: Option<Box<[FieldRows]>>,
}

/// Where a field's table rows are, for [`Rows::row`]: in the page, a table is found by
/// its identity and a row by scanning, each a cache miss on a form not printed lately.
#[derive(Clone, Debug)]
enum FieldRows {
    /// No table.
    NoTable,
    /// Table `table` of the variant; `by_value[x]`: the index of value `x`'s first row
    /// (`u16::MAX`: none), for values below its length (others scan the rows).
    At { table: u16, by_value: Box<[u16]> },
}

/// Values a [`FieldRows::At`] lists directly: tables of values below 2^10.
const DENSE_ROWS: u64 = 1 << 10;

impl FieldRows {
    fn new(v: &Variant, field: usize) -> FieldRows {
        let Some(t) = v.field_table(field) else { return FieldRows::NoTable };
        let Some(table) = v.tables.iter().position(|x| std::ptr::eq(x, t)) else { return FieldRows::NoTable };
        // Row indices must fit a u16 (else every value scans, from an empty list).
        let dense = t.rows.len() < usize::from(u16::MAX);
        let n = if dense { t.rows.iter().map(|r| r.value.saturating_add(1)).max().unwrap_or(0).min(DENSE_ROWS) } else { 0 };
        let mut by_value = vec![u16::MAX; n as usize];
        // Last to first, so that a value's first row (as `Table::row` finds it) stays.
        for (i, r) in t.rows.iter().enumerate().rev() {
            if r.value < n {
                by_value[r.value as usize] = i as u16;
            }
        }
        FieldRows::At { table: table as u16, by_value: by_value.into_boxed_slice() }
    }
}

/// How printing finds a field's table row: through a plan's [`FieldRows`], or the page.
#[derive(Clone, Copy)]
struct Rows<'p>(Option<&'p [FieldRows]>);

impl Rows<'_> {
    /// The row of `field`'s table for value `x` (`v.field_table(field)?.row(x)`).
    fn row(self, v: &Variant, field: usize, x: u64) -> Option<&Row> {
        let Some(rows) = self.0 else { return v.field_table(field).and_then(|t| t.row(x)) };
        match &rows[field] {
            FieldRows::NoTable => None,
            FieldRows::At { table, by_value } => {
                let t = &v.tables[usize::from(*table)];
                match by_value.get(x as usize) {
                    Some(&u16::MAX) => None,
                    Some(&i) => Some(&t.rows[usize::from(i)]),
                    None => t.row(x),
                }
            }
        }
    }
}

impl PrintPlan {
    /// The plan for printing `v` with `learned` conventions (none: the page's printing);
    /// `eager`: work out now what is otherwise asked only when a word needs it.
    pub fn new(v: &Variant, learned: Option<&FormConventions>, eager: bool) -> PrintPlan {
        let guards = (0..v.fields.len() as u16).filter(|&i| v.fields[usize::from(i)].kind == FieldKind::Pred).collect();
        let order = learned.and_then(|c| learned_order(v, c));
        let zero_offset = eager.then(|| v.operands.iter().map(|o| matches!(o.kind, OperandKind::Mem(_)) && zero_offset_stands_in(v, o)).collect());
        let signed_by = learned.map(|c| c.signed_imm_by.iter().map(|(bit, _, _)| v.fields.iter().position(|f| f.bits[0] == *bit).map(|i| i as u16)).collect());
        PrintPlan {
            guards,
            uniform_guard: guard_is_uniform(v),
            const_spaced: distilled_const_spaced(v),
            order,
            zero_offset,
            signed_by: signed_by.unwrap_or_default(),
            rows: eager.then(|| (0..v.fields.len()).map(|f| FieldRows::new(v, f)).collect()),
        }
    }
}

/// The modifier slots of `v` in `c`'s learned order, where every slot has a place in it.
fn learned_order(v: &Variant, c: &FormConventions) -> Option<Box<[u16]>> {
    let ranks: Option<Vec<usize>> = v.modifiers.iter().map(|slot| c.modifier_order.iter().position(|id| is_slot(v, slot, id))).collect();
    let ranks = ranks?;
    let mut order: Vec<u16> = (0..v.modifiers.len() as u16).collect();
    // Stable, as the page's order breaks ties.
    order.sort_by_key(|&i| ranks[usize::from(i)]);
    Some(order.into_boxed_slice())
}

/// [`print_word`]'s modifiers alone, for deciding between readings of a text by the
/// modifiers they print: the operands (floats among them, costly to format) are printed
/// only where an alias of the form's conventions depends on them.
pub fn printed_modifiers(v: &Variant, values: &Values, word: Word) -> Vec<String> {
    let learned = v.conventions.as_deref();
    if learned.is_some_and(|c| !c.aliases.is_empty()) {
        return print_word(v, values, word).modifiers;
    }
    let order = learned.and_then(|c| learned_order(v, c));
    modifiers(v, values, order.as_deref(), Rows(None))
}

/// [`print_with`] along `plan` (built for `v` and `learned`'s conventions; a plan's learned
/// order is read only with them).
fn print_planned(v: &Variant, plan: &PrintPlan, values: &Values, learned: Option<(&FormConventions, Word)>) -> Instruction {
    let pred = plan.guards.iter().rev().find_map(|&g| {
        let p = values.get(usize::from(g));
        let (index, negated) = ((p & 7) as u8, (p >> 3) & 1 == 1);
        (index != 7 || negated).then_some(Predicate { negated, index, uniform: plan.uniform_guard })
    });
    let rows = Rows(plan.rows.as_deref());
    let mut modifiers = modifiers(v, values, learned.and(plan.order.as_deref()), rows);
    let signed_imm = learned.is_some_and(|(c, _)| signed_imm(values, c, &plan.signed_by));
    let mut operands: Vec<Operand> =
        v.operands.iter().enumerate().map(|(k, o)| operand(v, o, values, signed_imm, &modifiers, plan.zero_offset.as_ref().map(|z| z[k]), rows)).collect();
    if let Some((c, _)) = learned {
        respell_rz_offsets(v, plan, values, c, rows, &mut operands);
    }
    for (op, spec) in operands.iter_mut().zip(&v.operands) {
        op.joined = spec.joined;
    }
    let mut terminator = v.terminator;
    let mut gone: Vec<usize> = (0..v.operands.len()).filter(|&k| zero_left_out(v, values, k, &operands[k]) || nameless(v, k, &operands[k])).collect();
    if let Some((c, w)) = learned {
        let mask = c.reuse_mask(w);
        for (k, op) in operands.iter_mut().enumerate() {
            // Eight reuse slots: an operand past them has none (not slot k mod 8).
            op.reuse = u32::try_from(k).ok().and_then(|k| mask.checked_shr(k)).is_some_and(|m| m & 1 == 1);
        }
        terminator = c.terminator(w).unwrap_or(terminator);
        c.alias(&mut modifiers, &operands);
        gone.extend(c.omitted.iter().filter(|&&k| k < operands.len() && left_out(v, values, k, &operands[k])));
        unnamed(v, values, c, &mut operands);
    }
    gone.sort_unstable();
    gone.dedup();
    // Right to left, so that the indices of the others stay put.
    for &k in gone.iter().rev() {
        operands.remove(k);
    }
    Instruction { pred, mnemonic: v.mnemonic.clone(), modifiers, operands, terminator, const_spaced: plan.const_spaced }
}

/// The memory operands of [`FormConventions::rz_offsets`], printed again with their
/// stored offset spelling (it matters only where their base register is RZ).
fn respell_rz_offsets(v: &Variant, plan: &PrintPlan, values: &Values, c: &FormConventions, rows: Rows, operands: &mut [Operand]) {
    for &(k, spelling) in &c.rz_offsets {
        let (Some(o), Some(op)) = (v.operands.get(k), operands.get_mut(k)) else { continue };
        if let OperandKind::Mem(m) = o.kind {
            *op = mem_operand(v, o, m, values, plan.zero_offset.as_ref().map(|z| z[k]), rows, Some(spelling));
        }
    }
}

/// The operands of [`FormConventions::unnamed`] whose register is all ones: nvdisasm names
/// it `???255` (`???63` in a 6-bit field), not the zero register, and prints it where it
/// prints a register (`[???255.64+UR0]`). The text stays verbatim, as nvdisasm's reads.
fn unnamed(v: &Variant, values: &Values, c: &FormConventions, operands: &mut [Operand]) {
    for &k in &c.unnamed {
        let Some(f) = v.operands.get(k).and_then(|o| o.register_field()).filter(|&f| values.get(f) == v.fields[f].max()) else { continue };
        let Some(op) = operands.get_mut(k) else { continue };
        let token = format!("???{}", v.fields[f].max());
        let text = match &op.body {
            Body::Reg { .. } | Body::UReg { .. } => token,
            Body::Mem { space, ureg, imm, .. } => {
                // Printed as a register would be: the zero register's rules do not apply.
                let body = Body::Mem { space: *space, reg: Some(crate::sass::RZ), ureg: *ureg, imm: *imm };
                let bare = Operand { suffixes: op.suffixes.clone(), ..Operand::new(body) }.to_string();
                let at = bare.rfind('[').map_or(0, |p| p + 1);
                format!("{}{token}{}", &bare[..at], bare[at..].strip_prefix("RZ").unwrap_or(&bare[at..]))
            }
            _ => continue,
        };
        op.body = Body::Other { text };
        op.suffixes.clear();
    }
}

/// Is page operand `k` (printed as `op`) at its all-ones value and undecorated, as
/// nvdisasm leaves out the operands of [`FormConventions::omitted`]?
fn left_out(v: &Variant, values: &Values, k: usize, op: &Operand) -> bool {
    let o = &v.operands[k];
    let all_ones = matches!(o.value_fields.as_slice(), [Some(f)] if values.get(*f) == v.fields[*f].max());
    all_ones && !op.not && !op.neg && !op.abs && op.suffixes.is_empty()
}

/// Is page operand `k` (printed as `op`) one the page says nvdisasm leaves out at zero
/// ([`crate::spec::LeftOutAtZero`]), with its field zero and undecorated?
fn zero_left_out(v: &Variant, values: &Values, k: usize, op: &Operand) -> bool {
    let o = &v.operands[k];
    let zero = matches!(o.value_fields.as_slice(), [Some(f)] if values.get(*f) == 0);
    o.zero_omitted && zero && !op.not && !op.neg && !op.abs && op.suffixes.is_empty()
}

/// Is page operand `k` a name whose table row prints nothing (its `(default)` row)? nvdisasm
/// then leaves the operand out: HGMMA's `gsb0` at 7 (`HGMMA.64x8x16.F16 R0, gdesc[UR4], R0`).
fn nameless(v: &Variant, k: usize, op: &Operand) -> bool {
    v.operands[k].kind == OperandKind::Name && matches!(&op.body, Body::Other { text } if text.is_empty()) && op.suffixes.is_empty()
}

/// Does the immediate print signed for these values? The base rule, unless a group's
/// current value was seen to change it.
/// `fields`: the field at each entry's bit ([`PrintPlan::signed_by`]).
fn signed_imm(values: &Values, c: &FormConventions, fields: &[Option<u16>]) -> bool {
    let set = |f: Option<u16>, x: u64| f.is_some_and(|f| values.get(usize::from(f)) == x);
    c.signed_imm_by.iter().zip(fields).find(|((_, x, s), &f)| *s != c.signed_imm && set(f, *x)).map(|((_, _, s), _)| *s).unwrap_or(c.signed_imm)
}

/// The modifier tokens, in `order` (nvdisasm's, where learned: [`PrintPlan::order`]),
/// else the page's.
fn modifiers(v: &Variant, values: &Values, order: Option<&[u16]>, rows: Rows) -> Vec<String> {
    let mut out = Vec::with_capacity(v.modifiers.len());
    match order {
        Some(order) => order.iter().for_each(|&i| slot_tokens(v, &v.modifiers[usize::from(i)], values, rows, &mut out)),
        None => v.modifiers.iter().for_each(|slot| slot_tokens(v, slot, values, rows, &mut out)),
    }
    out
}

/// Appends the tokens modifier slot `slot` prints to `out`.
fn slot_tokens(v: &Variant, slot: &ModSlot, values: &Values, rows: Rows, out: &mut Vec<String>) {
    match slot {
        ModSlot::Fixed { text } => out.push(text.clone()),
        ModSlot::Group { field, hidden_zero } => {
            let x = values.get(*field);
            if !(*hidden_zero && x == 0) {
                push_row_tokens(rows.row(v, *field, x), x, out);
            }
        }
        ModSlot::Flag { field } => {
            if values.get(*field) != 0 {
                out.push(v.fields[*field].name.clone());
            }
        }
    }
}

/// [`row_tokens`] of `row` (the table's row for value `v`, if any) appended to `out`,
/// without a vector of its own.
fn push_row_tokens(row: Option<&Row>, v: u64, out: &mut Vec<String>) {
    match row {
        Some(r) if r.kind == RowKind::Default => {}
        Some(r) => out.extend(r.name.split('.').map(str::to_string)),
        None => out.push(format!("{UNLISTED}{v}")),
    }
}

/// Is `id` this slot's identity ([`slot_id`] without building it: printing asks per slot)?
pub(super) fn is_slot(v: &Variant, slot: &ModSlot, id: &SlotId) -> bool {
    match (slot, id) {
        (ModSlot::Fixed { text }, SlotId::Fixed(t)) => text == t,
        (ModSlot::Group { field, .. } | ModSlot::Flag { field }, SlotId::FieldAt(b)) => v.fields[*field].bits[0] == *b,
        _ => false,
    }
}

/// A modifier slot's identity across page edits (see [`SlotId`]).
pub fn slot_id(v: &Variant, slot: &ModSlot) -> SlotId {
    match slot {
        ModSlot::Fixed { text } => SlotId::Fixed(text.clone()),
        ModSlot::Group { field, .. } | ModSlot::Flag { field } => SlotId::FieldAt(v.fields[*field].bits[0]),
    }
}

/// Where a branch target field's value points from a word at address 0: the next
/// instruction (0x10) plus the value's units of 2^`shift` bytes (4-byte words for `REL`).
pub fn target_at_zero(value: i64, shift: u8) -> i64 {
    0x10i64.wrapping_add(value.wrapping_shl(u32::from(shift)))
}

/// The value page operand `k` of `o` prints: its field's, or for a derived one its
/// source's field plus the constant (see [`crate::spec::Derived`]).
pub fn slot_value(v: &Variant, o: &OperandSpec, values: &Values, k: usize) -> u64 {
    let Some(f) = o.value_fields[k] else { return 0 };
    match o.derived_plus(k) {
        // An illegal sum (past the zero register) prints the zero register.
        Some(plus) => crate::spec::Derived::value(plus, values.get(f), v.fields[f].max()).unwrap_or(v.fields[f].max()),
        None => values.get(f),
    }
}

/// `zero_offset`: [`zero_offset_stands_in`] for `o` if known.
fn operand(v: &Variant, o: &OperandSpec, values: &Values, signed_imm: bool, modifiers: &[String], zero_offset: Option<bool>, rows: Rows) -> Operand {
    let val = |i: usize| values.get(i);
    let fv = |k: usize| slot_value(v, o, values, k);
    let width = |k: usize| o.value_fields[k].map(|f| v.fields[f].width()).unwrap_or(0);
    // A register without bits is its zero register (`spec::parse`'s `constant_zero`).
    let no_bits = o.value_fields.first() == Some(&None);
    let body = match o.kind {
        OperandKind::Reg if no_bits => Body::Reg { n: crate::sass::RZ },
        OperandKind::UReg if no_bits => Body::UReg { n: crate::sass::URZ },
        OperandKind::Reg => Body::Reg { n: fv(0) as u16 },
        OperandKind::UReg => Body::UReg { n: ureg(v, fv(0)) },
        OperandKind::Imm(m) if signed_imm => Body::Imm { value: m.apply(signed(fv(0), width(0)).into()) },
        OperandKind::Imm(m) => Body::Imm { value: m.apply(fv(0).into()) },
        OperandKind::Float(_) => float_body(float_format(v, o, modifiers), fv(0)),
        OperandKind::Const => Body::Const { bank: fv(0) as u32, offset: signed(fv(1), width(1)) * 4 },
        OperandKind::ConstX => Body::ConstX { ureg: ureg(v, fv(0)), offset: (fv(1) * 4) as i64 },
        OperandKind::Pred => Body::Pred { n: fv(0) as u8 },
        OperandKind::UPred => Body::UPred { n: fv(0) as u8 },
        OperandKind::Mem(m) => return mem_operand(v, o, m, values, zero_offset, rows, None),
        OperandKind::Barrier => Body::Barrier { n: fv(0) as u8 },
        // The name is the row of the operand's table: body and suffixes as nvdisasm's text.
        OperandKind::Special | OperandKind::Name => {
            let row = o.suffix_fields.first().map(|&s| {
                let mut toks = vec![];
                push_row_tokens(rows.row(v, s, val(s)), val(s), &mut toks);
                toks.join(".")
            });
            let name = row.or_else(|| o.fixed_name.clone()).unwrap_or_default();
            return crate::sass::parse_operand(&name).unwrap_or_else(|_| Operand::new(Body::Other { text: name }));
        }
        OperandKind::Target(shift) => Body::Imm { value: target_at_zero(signed(fv(0), width(0)), shift).into() },
    };
    let mut op = Operand::new(body);
    decorate(v, o, values, rows, &mut op);
    // As the text parser reads it: only bars with suffixes have a placement.
    op.after_bars = o.suffixes_after_bars && op.abs && !op.suffixes.is_empty();
    op
}

/// The flags and suffixes of an operand.
fn decorate(v: &Variant, o: &OperandSpec, values: &Values, rows: Rows, op: &mut Operand) {
    let val = |i: usize| values.get(i);
    op.abs = o.abs_field.map(|f| val(f) != 0).unwrap_or(false);
    op.neg = o.neg_field.map(|f| val(f) != 0).unwrap_or(false);
    op.not = o.not_field.map(|f| val(f) != 0).unwrap_or(false);
    op.suffixes.extend(o.fixed_suffixes.iter().cloned());
    for &s in &o.suffix_fields {
        push_row_tokens(rows.row(v, s, val(s)), val(s), &mut op.suffixes);
    }
    for &s in &o.selector_fields {
        if val(s) != 0 {
            op.suffixes.push(v.fields[s].name.clone());
        }
    }
}

/// A memory operand: each page operand fills its component; nvdisasm leaves some out
/// (`conventions::mem_printed`). The register's fixed suffix comes before any table's.
fn mem_operand(
    v: &Variant,
    o: &OperandSpec,
    m: MemShape,
    values: &Values,
    zero_offset: Option<bool>,
    rows: Rows,
    rz_offset: Option<OffsetSpelling>,
) -> Operand {
    let mut op = Operand::new(Body::Imm { value: 0 });
    op.suffixes.extend(m.reg_suffix.map(str::to_string));
    decorate(v, o, values, rows, &mut op);
    let slot = |k: usize| (slot_value(v, o, values, k), o.value_fields[k].map(|f| v.fields[f].width()).unwrap_or(0));
    let urz = u64::from(super::conventions::uniform_zero(v.arch));
    let (body, keep_suffixes) = mem_body(m, slot, urz, !op.suffixes.is_empty(), || zero_offset.unwrap_or_else(|| zero_offset_stands_in(v, o)), rz_offset);
    if !keep_suffixes {
        // Suffixes belong to the register (a descriptor's follow its brackets); with none
        // printed, or RZ standing in for nothing, there is none to carry them.
        op.suffixes.clear();
    }
    op.body = body;
    op
}

/// The roles of a memory operand's value slots, in order ([`MemShape::slot_roles`], without
/// a vector).
fn mem_roles(m: MemShape) -> impl Iterator<Item = MemSlot> {
    let space = matches!(m.space, MemSpaceKind::Desc | MemSpaceKind::Const | MemSpaceKind::ConstX);
    [(space, MemSlot::Space), (m.reg, MemSlot::Reg), (m.ureg, MemSlot::UReg), (m.imm != MemImm::Absent, MemSlot::Imm)]
        .into_iter()
        .filter_map(|(on, role)| on.then_some(role))
}

/// The body a memory operand of shape `m` prints, and whether its suffixes print (the
/// register carries them, or a descriptor): one function for [`mem_operand`] and the
/// compiled path (`fast/mem.rs`), so that the two cannot drift. `slot(k)`: value slot
/// `k`'s value and width; `urz`: the architecture's uniform zero register; `suffixed`:
/// whether a suffix prints (tables, flags, fixed ones); `zero_offset`:
/// [`zero_offset_stands_in`], asked only where a lone RZ is left.
fn mem_body(
    m: MemShape,
    slot: impl Fn(usize) -> (u64, u32),
    urz: u64,
    suffixed: bool,
    zero_offset: impl FnOnce() -> bool,
    rz_offset: Option<OffsetSpelling>,
) -> (Body, bool) {
    let ureg = |x: u64| if x == urz { crate::sass::URZ } else { x as u16 };
    let (mut space, mut reg, mut ur, mut imm) = (0, None, None, None);
    // The offset's bits, for a signed offset nvdisasm prints unsigned.
    let mut imm_mask = i64::MAX;
    let mut raw_imm = None;
    for (k, role) in mem_roles(m).enumerate() {
        let (x, width) = slot(k);
        match role {
            MemSlot::Space => space = x,
            MemSlot::Reg => reg = Some(x as u16),
            MemSlot::UReg => ur = Some(ureg(x)),
            MemSlot::Imm if m.imm == MemImm::Signed => {
                imm = Some(signed(x, width) << m.imm_shift);
                imm_mask = if width + u32::from(m.imm_shift) >= 63 { i64::MAX } else { ((1i64 << width) - 1) << m.imm_shift };
                raw_imm = Some((x, width));
            }
            MemSlot::Imm => {
                imm = Some((x as i64) << m.imm_shift);
                raw_imm = Some((x, width));
            }
        }
    }
    // The form's stored spelling beside an RZ base (`FormConventions::rz_offsets`) replaces
    // the fixed rules below.
    let spelled = rz_offset.filter(|_| reg == Some(crate::sass::RZ)).zip(raw_imm);
    if let Some((s, (x, width))) = spelled {
        imm = Some(s.value(x, width, m.imm_shift));
    }
    let space = match m.space {
        MemSpaceKind::Plain => MemSpace::Plain,
        MemSpaceKind::Desc => MemSpace::Desc { ureg: ureg(space) },
        MemSpaceKind::Attr => MemSpace::Attr,
        MemSpaceKind::Const => MemSpace::Const { bank: space as u32 },
        MemSpaceKind::ConstX => MemSpace::ConstX { ureg: ureg(space) },
        MemSpaceKind::Named(name) => MemSpace::Named { name },
    };
    let suffix = match (m.reg_suffix, suffixed) {
        (Some(_), _) => RegSuffix::Form,
        (None, false) => RegSuffix::None,
        (None, true) => RegSuffix::Table,
    };
    // A form that leaves RZ out (`MemShape::reg_elided`) prints it as a register without
    // a suffix would: not at all when another component prints.
    let shown_as = if m.reg_elided { RegSuffix::None } else { suffix };
    let (mut reg, ur, mut imm) = super::conventions::mem_printed(m.space, reg, shown_as, ur, m.ureg_elided, imm);
    if reg == Some(crate::sass::RZ) && ur.is_none() && imm.is_none() && !m.reg && zero_offset() {
        (reg, imm) = (None, Some(0));
    }
    // A left-out URZ still makes the offset relative (`[-0x446bd70c]`, LDCU).
    if spelled.is_none() && super::conventions::mem_offset_unsigned(m.space, reg.is_some(), ur.is_some() || m.ureg_elided) {
        imm = imm.map(|x| x & imm_mask);
    }
    let keep_suffixes = matches!(m.space, MemSpaceKind::Named(_)) || super::conventions::mem_reg_suffixed(m.space, reg, suffix, ur.is_some());
    (Body::mem(space, reg, ur, imm), keep_suffixes)
}

/// Does a memory operand without a register field print `[0x0]` rather than `[RZ]` when
/// nothing else prints? The distilled line (the zero word's text) says: ULDC's `[0x0]` and
/// `c[0x0][0x0]`, but an RZ-based form's `[RZ]` (LDS, ATOMS, whose RZ is fixed bits).
fn zero_offset_stands_in(v: &Variant, o: &OperandSpec) -> bool {
    let Some(k) = v.operands.iter().position(|x| std::ptr::eq(x, o)) else { return false };
    let Ok(d) = crate::sass::parse_instruction(&v.distilled) else { return false };
    d.operands.get(k).and_then(|x| x.body.as_mem()).is_some_and(|(_, reg, ur, imm)| reg.is_none() && ur.is_none() && imm == Some(0))
}

/// The uniform register a field value names: the architecture's zero register prints `URZ`.
fn ureg(v: &Variant, x: u64) -> u16 {
    if x == super::conventions::uniform_zero(v.arch) as u64 {
        crate::sass::URZ
    } else {
        x as u16
    }
}

/// A `c[I][I]` offset field is signed (nvdisasm prints `c[0x0][-0x8000]` for its top bit).
fn signed(x: u64, width: u32) -> i64 {
    if width == 0 || width >= 64 || x >> (width - 1) & 1 == 0 {
        x as i64
    } else {
        x as i64 - (1i64 << width)
    }
}

/// Does `values` print distinctly from every other value of `v` (so text → word is exact)?
/// Not when a table gives two values one name, when a table field holds a value its table does not list
/// (`UNLISTEDn` reads as any table's), or a float operand holds a NaN: nvdisasm spells
/// every NaN `+QNAN`/`-QNAN`, and so do we.
pub fn lossless(v: &Variant, values: &Values) -> bool {
    let mods = || modifiers(v, values, None, Rows(None));
    injective(v)
        && !rz_offset_cut(v, values)
        && (0..v.fields.len()).all(|f| v.field_table(f).is_none_or(|t| t.row(values.get(f)).is_some()))
        && v.operands.iter().all(|o| {
            !o.kind.is_float()
                || o.value_fields[0]
                    .map(|f| match float_body(float_format(v, o, &mods()), values.get(f)) {
                        Body::Float { value, .. } => !value.is_nan(),
                        _ => true,
                    })
                    .unwrap_or(true)
        })
}

/// Does a stored offset spelling beside RZ print only the low bits of these values'
/// offset ([`OffsetSpelling::Bits`]: `a[0x22d]` for 0x62d and 0x22d alike)?
fn rz_offset_cut(v: &Variant, values: &Values) -> bool {
    let Some(c) = v.conventions.as_deref() else { return false };
    c.rz_offsets.iter().any(|&(k, s)| {
        let Some(o) = v.operands.get(k) else { return false };
        let (OperandKind::Mem(m), OffsetSpelling::Bits(_)) = (o.kind, s) else { return false };
        let field = |role: MemSlot| m.slot_roles().iter().position(|r| *r == role).and_then(|i| o.value_fields.get(i).copied().flatten());
        let (Some(r), Some(f)) = (field(MemSlot::Reg), field(MemSlot::Imm)) else { return false };
        let x = values.get(f);
        values.get(r) == u64::from(crate::sass::RZ)
            && s.value(x, v.fields[f].width(), m.imm_shift) != OffsetSpelling::Unsigned.value(x, v.fields[f].width(), m.imm_shift)
    })
}

/// Does this variant print every value distinctly (so text → word is exact)? Each name a
/// table prints belongs to one row. (A name two tables print, a placeholder `???n` say,
/// reads by its place: the page's modifier order, or nvdisasm's where it is stored.)
pub fn injective(v: &Variant) -> bool {
    v.tables.iter().all(|t| {
        let mut names: Vec<&str> = t.rows.iter().map(|r| if r.kind == RowKind::Default { "" } else { r.name.as_str() }).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        names.len() == n
    })
}

#[cfg(test)]
mod tests {
    use super::{f64_to_bfloat, f64_to_half, float_text, FloatFormat};

    #[test]
    fn bfloat16_immediates_are_the_top_half_of_an_fp32() {
        // nvdisasm 13.5, FRND.BF16 R0, <F> on SM90.
        for (bits, text) in [(0xbfde, "-1.734375"), (0x3f80, "1"), (0x7f80, "+INF "), (0x7fc0, "+QNAN "), (0xffa0, "-SNAN "), (0x8000, "-0.0 ")] {
            let (x, t) = float_text(bits, FloatFormat::BFloat);
            assert_eq!(t, text);
            assert_eq!(f64_to_bfloat(x), Some(bits as u16), "{text}");
        }
        assert_eq!(f64_to_bfloat(0.1), None);
        assert_eq!(f64_to_bfloat(1e39), None);
    }
    #[test]
    fn floats_are_spelled_like_nvdisasm() {
        // (F field, is fp64, nvdisasm 13.5's text) from DFMA R,R,R,F and FFMA R,R,F,R words.
        #[rustfmt::skip]
        let seen: &[(u64, bool, &str)] = &[
            (0x3ff00000, true, "1"), (0x40240000, true, "10"), (0x3fb99999, true, "0.099999964237213134766"),
            (0x00000001, true, "2.1219957909652723151e-314"), (0x41e00000, true, "2.14748364800000000000e+09"),
            (0x7fefffff, true, "1.79769227765543015872e+308"), (0x00100000, true, "2.2250738585072013831e-308"),
            (0x3e800000, true, "1.1920928955078125e-07"), (0x44300000, true, "2.95147905179352825856e+20"),
            (0x41dfffff, true, "2.14748262400000000000e+09"), (0x3ff00001, true, "1.0000009536743164062"),
            (0x7ff00000, true, "+INF "), (0xfff00000, true, "-INF "), (0x7ff80000, true, "+QNAN "),
            (0xfff80000, true, "-QNAN "), (0x7ff40000, true, "+SNAN "), (0xfff00001, true, "-SNAN "),
            (0x80000000, true, "-0.0 "), (0x00000000, true, "0"),
            (0x3f800000, false, "1"), (0x7f800000, false, "+INF "), (0x7fc00000, false, "+QNAN "),
            (0xffc00000, false, "-QNAN "), (0x7fa00000, false, "+SNAN "), (0x7f800001, false, "+SNAN "),
            (0x80000000, false, "-0.0 "), (0x3dcccccd, false, "0.10000000149011611938"),
            (0x4f000000, false, "2.14748364800000000000e+09"), (0x4effffff, false, "2.14748352000000000000e+09"),
            (0x00000001, false, "1.4012984643248170709e-45"), (0x7f7fffff, false, "3.40282346638528859812e+38"),
            (0x4e6e6b28, false, "1.00000000000000000000e+09"), (0x4e6e6b27, false, "999999936"),
            (0x4e800000, false, "1.07374182400000000000e+09"), (0x4e000000, false, "536870912"),
            (0x3727c5ac, false, "9.9999997473787516356e-06"), (0x47f12065, false, "123456.7890625"),
        ];
        for &(bits, double, text) in seen {
            assert_eq!(float_text(bits, fmt(double)).1, text, "{bits:#x} double={double}");
        }
        // Finite spellings read back to the same bits; NaNs keep sign and quietness.
        for &(bits, double, text) in seen {
            let x: f64 = crate::sass::parse_float(text.trim_end()).unwrap();
            let back = if double { x.to_bits() >> 32 } else { x as f32 as f64 as f32 as u64 };
            if !x.is_nan() && double {
                assert_eq!(back, bits, "{text}");
            }
            assert_eq!(x.is_nan(), float_text(bits, fmt(double)).0.is_nan());
        }
    }

    /// A [`super::Printer`]'s plans, and each form's [`super::FormPrinter`], print what the
    /// page and conventions do, word for word, over every form of the whole discovered spec
    /// (random values, control bits included); [`super::printed_modifiers`] the same
    /// modifiers.
    #[test]
    fn printer_prints_as_print_word() {
        let root = crate::oracle::tools::repo_root();
        let spec = crate::spec::load(&[root.join("corpus/isa-discovered")]).expect("discovered pages load");
        let codec = crate::codec::Codec::new(&spec);
        let printer = super::Printer::new(&codec);
        let mut rng = crate::gen::Rng::new(11);
        let (mut buf, mut stored) = (String::new(), 0);
        for (vi, v) in codec.variants().iter().enumerate() {
            stored += usize::from(v.conventions.is_some());
            let form = super::FormPrinter::new(v, v.conventions.as_deref());
            for i in 0..48 {
                let mut values = crate::gen::random_values(v, &mut rng);
                // A third with fields at 0, 1 or all ones: zero registers, `PT`, operands
                // left out, aliases (`IMAD.MOV`), `???255`, which random values seldom meet.
                for f in (0..v.fields.len()).filter(|_| i % 3 == 0) {
                    let x = [values.get(f), 0, 1, v.fields[f].max()][rng.below(4) as usize];
                    values.set(f, x & v.fields[f].max());
                }
                let w = codec.encode_unchecked(vi, &values);
                buf.clear();
                printer.print_word_into(vi, &values, w, &mut buf);
                let printed = super::print_word(v, &values, w);
                assert_eq!(super::printed_modifiers(v, &values, w), printed.modifiers, "{} (printed_modifiers)", v.key);
                let want = printed.to_string();
                assert_eq!(buf, want, "{}", v.key);
                buf.clear();
                form.print_word_into(v, &values, w, &mut buf);
                assert_eq!(buf, want, "{} (FormPrinter)", v.key);
                assert_eq!(form.print_word(v, &values, w).to_string(), want, "{} (FormPrinter)", v.key);
                buf.clear();
                printer.print_into(vi, &values, &mut buf);
                assert_eq!(buf, super::print(v, &values).to_string(), "{}", v.key);
            }
        }
        // The stored conventions were read: else this compares the page's printing only.
        assert!(stored > codec.variants().len() / 2, "{stored} of {} forms with conventions", codec.variants().len());
        // And most forms printed by the compiled path: else this compares the general one with itself.
        let compiled = printer.compiled.forms.iter().filter(|f| f.is_some()).count();
        eprintln!("{compiled} of {} forms compiled", codec.variants().len());
        assert!(compiled * 5 > codec.variants().len() * 4, "{compiled} of {} forms compiled", codec.variants().len());
    }

    fn fmt(double: bool) -> FloatFormat {
        if double {
            FloatFormat::DoubleHigh
        } else {
            FloatFormat::Single
        }
    }

    #[test]
    fn halves_are_spelled_like_nvdisasm() {
        // (fp16 F field, nvdisasm 13.5's text) from `HADD2.F32 R0, R0, F` words (bits 32–47).
        #[rustfmt::skip]
        let seen: &[(u64, &str)] = &[
            (0x7c00, "+INF "), (0xfc00, "-INF "), (0x7e00, "+QNAN "), (0xfe00, "-QNAN "), (0x7d00, "+SNAN "),
            (0x7c01, "+SNAN "), (0x8000, "-0.0 "), (0x0000, "0"), (0x0001, "5.9604644775390625e-08"), (0x7bff, "65504"),
            (0x3c00, "1"), (0x3555, "0.333251953125"), (0x0400, "6.103515625e-05"), (0x03ff, "6.0975551605224609375e-05"),
            (0x67de, "2014"), (0x5bff, "255.875"), (0x6400, "1024"), (0x63ff, "1023.5"), (0xc6ac, "-6.671875"),
            (0x8569, "-8.2552433013916015625e-05"), (0x130b, "0.000859737396240234375"), (0xfac2, "-55360"),
        ];
        for &(bits, text) in seen {
            let (x, t) = float_text(bits, FloatFormat::Half);
            assert_eq!(t, text, "{bits:#x}");
            // Every spelling reads back to the same fp16 (NaNs: sign and quietness).
            let back = f64_to_half(crate::sass::parse_float(text.trim_end()).unwrap());
            let want = if x.is_nan() { bits as u16 & 0xfe00 | if bits & 0x200 == 0 { 0x100 } else { 0 } } else { bits as u16 };
            assert_eq!(back, Some(want), "{text}");
        }
        assert_eq!(f64_to_half(0.1), None);
        assert_eq!(f64_to_half(65536.0), None);
        assert_eq!(f64_to_half(2f64.powi(-25)), None);
        assert_eq!(FloatFormat::of("HFMA2", 16), FloatFormat::Half);
        assert_eq!(FloatFormat::of("DFMA", 32), FloatFormat::DoubleHigh);
        assert_eq!(FloatFormat::of("FFMA", 32), FloatFormat::Single);
    }
}
