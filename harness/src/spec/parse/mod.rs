//! The ISA-viewer page parser.
//!
//! Real pages are copy-pasted and carry irregularities. Each one has an explicit rule here,
//! named in [`rules`], and each occurrence becomes a warning with file and line. Anything
//! the rules do not cover is an error naming file, line and what was expected: a page is
//! never parsed partially.

mod draft;
mod grid;
mod operands;
mod order;

use super::model::*;
use super::token::*;
use crate::sass;
use crate::word::{BitSet, Word};
use draft::*;
use grid::*;
use operands::*;
use order::*;

/// The names of the irregularity rules, as they appear in warnings.
pub mod rules {
    /// No `NVIDIA ISA Viewer` banner line before the instruction name.
    pub const MISSING_BANNER: &str = "missing-banner";
    /// No description line between the instruction name and the variant count.
    pub const MISSING_DESCRIPTION: &str = "missing-description";
    /// The page does not end with a newline.
    pub const NO_FINAL_NEWLINE: &str = "no-final-newline";
    /// CRLF line endings, read as LF.
    pub const CRLF: &str = "crlf-line-endings";
    /// A byte-order mark, removed.
    pub const BOM: &str = "byte-order-mark";
    /// A layout index row lacks a cell: a fixed 0 is inserted and marked inferred.
    pub const DROPPED_CELL: &str = "dropped-cell";
    /// A layout content row cut short: its last field continues to the row's end.
    pub const SHORT_ROW: &str = "short-row";
    /// A numbered name (`operand 2`, `modi 1`) in several spans: one field.
    pub const SPLIT_FIELD: &str = "split-field";
    /// An unnumbered flag name (`cABS`) on several spans: separate fields.
    pub const REPEATED_NAME: &str = "repeated-name";
    /// A variant heading with a modifier (`I2F.???0`): printed always.
    pub const HEADING_MODIFIER: &str = "heading-modifier";
    /// An `INVALIDn` or `???n` table row, kept as written.
    pub const PLACEHOLDER_ROW: &str = "placeholder-row";
    /// A table lists fewer than `2^width` values: the others are kept as omitted.
    pub const OMITTED_VALUES: &str = "omitted-values";
    /// One name on several rows of a table: the assembler picks the first.
    pub const DUPLICATE_NAMES: &str = "duplicate-names";
    /// A group's named zero row that the distilled line does not print: value 0 prints
    /// nothing.
    pub const HIDDEN_AT_ZERO: &str = "hidden-at-zero";
    /// Which operand a `cABS`/`cNEG`/`cNOT`/selector flag applies to, as assumed.
    pub const FLAG_OPERAND: &str = "flag-operand-assumed";
    /// The page announces another number of variants than it has.
    pub const VARIANT_COUNT: &str = "variant-count";
}

/// Why pages did not load: a page that does not parse (never partially), or a file that
/// cannot be read as one. Displays as `file:line: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PageError {
    /// The path at fault (a page, another file or folder met while loading, a
    /// `conventions.json`; `builtin:…` in the built-in spec) or, when no page was found,
    /// the paths given, joined with `, `.
    pub file: String,
    /// The page line (1-based); 0 when the error is about the file, not one of its lines.
    pub line: usize,
    /// What is wrong, and what was expected.
    pub message: String,
}

struct Lines<'a> {
    file: &'a str,
    lines: Vec<(usize, &'a str)>,
    pos: usize,
    warnings: Vec<Diagnostic>,
}

impl<'a> Lines<'a> {
    fn err<T>(&self, line: usize, msg: impl Into<String>) -> Result<T, PageError> {
        Err(PageError { file: self.file.to_string(), line, message: msg.into() })
    }
    fn warn(&mut self, line: usize, rule: &'static str, msg: impl Into<String>) {
        self.warnings.push(Diagnostic { file: self.file.to_string(), line, rule, message: msg.into() });
    }
    /// Next non-blank line.
    fn peek(&self) -> Option<(usize, &'a str)> {
        self.lines[self.pos..].iter().copied().find(|(_, l)| !l.trim().is_empty())
    }
    fn next(&mut self) -> Option<(usize, &'a str)> {
        while self.pos < self.lines.len() {
            let (n, l) = self.lines[self.pos];
            self.pos += 1;
            if !l.trim().is_empty() {
                return Some((n, l));
            }
        }
        None
    }
    fn last_line(&self) -> usize {
        self.lines.last().map(|l| l.0).unwrap_or(1)
    }
    fn expect(&mut self, what: &str) -> Result<(usize, &'a str), PageError> {
        match self.next() {
            Some(l) => Ok(l),
            None => {
                let n = self.last_line();
                self.err(n, format!("unexpected end of page: expected {what}"))
            }
        }
    }
}

/// Parses one page. `file` is used in messages only.
pub fn parse_page(file: &str, bytes: &[u8]) -> Result<Page, PageError> {
    let mut p = page_lines(file, bytes)?;
    let h = parse_header(&mut p)?;
    let mut variants: Vec<Variant> = vec![];
    // Key → line of its variant: a map, so a page of many variants parses in linear time.
    let mut keys: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    while p.peek().is_some() {
        let v = parse_variant(&mut p, &h.instruction, h.arch)?;
        if let Some(first) = keys.insert(v.key.clone(), v.line) {
            return p.err(v.line, format!("duplicate key '{}' (first at line {first})", v.key));
        }
        variants.push(v);
    }
    if variants.is_empty() {
        return p.err(h.line, "page has no variants");
    }
    if variants.len() != h.count {
        p.warn(h.line, rules::VARIANT_COUNT, format!("page announces {} variants but has {}", h.count, variants.len()));
    }
    let Header { instruction, description, arch, gpu, .. } = h;
    Ok(Page { file: file.to_string(), instruction, description, arch, gpu, variants, warnings: p.warnings })
}

/// The page's text as numbered lines: UTF-8 checked, a byte-order mark removed, CRLF read
/// as LF, each with its warning, and a missing final newline warned about.
fn page_lines<'a>(file: &'a str, bytes: &'a [u8]) -> Result<Lines<'a>, PageError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        PageError { file: file.into(), line, message: "page is not valid UTF-8".into() }
    })?;
    let mut pre = vec![];
    let mut text = text;
    if let Some(t) = text.strip_prefix('\u{feff}') {
        pre.push((1, rules::BOM, "byte-order mark removed".to_string()));
        text = t;
    }
    if text.contains('\r') {
        pre.push((1, rules::CRLF, "CRLF line endings read as LF".to_string()));
    }
    let lines: Vec<(usize, &str)> = text.split('\n').enumerate().map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l))).collect();
    let mut p = Lines { file, lines, pos: 0, warnings: vec![] };
    for (line, rule, msg) in pre {
        p.warn(line, rule, msg);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        let n = p.last_line();
        p.warn(n, rules::NO_FINAL_NEWLINE, "page does not end with a newline");
    }
    Ok(p)
}

/// A page's header: [banner] name [description] "N variants on SMxx (GPU)".
struct Header {
    instruction: String,
    description: Option<String>,
    /// The variants the page announces.
    count: usize,
    arch: Arch,
    gpu: Option<String>,
    /// The variant-count line: where page-wide errors point.
    line: usize,
}

fn parse_header(p: &mut Lines) -> Result<Header, PageError> {
    let (mut ln, mut l) = p.expect("the instruction name")?;
    if l.trim() == "NVIDIA ISA Viewer" {
        (ln, l) = p.expect("the instruction name after the banner")?;
    } else {
        p.warn(ln, rules::MISSING_BANNER, "no 'NVIDIA ISA Viewer' banner line");
    }
    let instruction = l.trim().to_string();
    if !is_mnemonic(&instruction) {
        return p.err(ln, format!("expected an instruction name (letters and digits), found '{instruction}'"));
    }
    let (mut ln2, mut l2) = p.expect("a description or 'N variants on SMxx (GPU)'")?;
    let mut description = None;
    if parse_variant_count(l2).is_none() {
        description = Some(l2.trim().to_string());
        (ln2, l2) = p.expect("'N variants on SMxx (GPU)'")?;
    } else {
        p.warn(ln2, rules::MISSING_DESCRIPTION, "no description line");
    }
    let (count, arch, gpu) = match parse_variant_count(l2) {
        Some(x) => x,
        None => return p.err(ln2, format!("expected 'N variants on SMxx (GPU)', found '{}'", l2.trim())),
    };
    Ok(Header { instruction, description, count, arch, gpu, line: ln2 })
}

fn is_mnemonic(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && s.starts_with(|c: char| c.is_ascii_uppercase())
}

fn parse_variant_count(l: &str) -> Option<(usize, Arch, Option<String>)> {
    let l = l.trim();
    let (n, rest) = l.split_once(' ')?;
    let n: usize = n.parse().ok()?;
    let rest = rest.strip_prefix("variants on ").or_else(|| rest.strip_prefix("variant on "))?;
    let (sm, gpu) = match rest.split_once(' ') {
        Some((sm, g)) => (sm, Some(g.trim().trim_start_matches('(').trim_end_matches(')').to_string())),
        None => (rest, None),
    };
    let num: u32 = sm.strip_prefix("SM")?.parse().ok()?;
    Some((n, Arch(num), gpu))
}

/// A form line; `(none)` (or nothing) for an instruction without operands. Commas inside
/// brackets do not occur in any token, so the line splits at every comma.
fn parse_form(s: &str) -> Result<Vec<OperandKind>, String> {
    if s.is_empty() || s == NO_OPERANDS {
        return Ok(vec![]);
    }
    s.split(',')
        .map(|t| match t.trim() {
            "R" => Ok(OperandKind::Reg),
            "UR" => Ok(OperandKind::UReg),
            "F" => Ok(OperandKind::Float(None)),
            "c[I][I]" => Ok(OperandKind::Const),
            "cx[UR][I]" => Ok(OperandKind::ConstX),
            "P" => Ok(OperandKind::Pred),
            "UP" => Ok(OperandKind::UPred),
            "REL" => Ok(OperandKind::Target(2)),
            t if t.starts_with("REL*") => target_unit(&t[4..]).map(OperandKind::Target),
            "B" => Ok(OperandKind::Barrier),
            "SR" => Ok(OperandKind::Special),
            "N" => Ok(OperandKind::Name),
            t if t.contains('[') => MemShape::parse(t).map(OperandKind::Mem).map_err(String::from),
            t if t.starts_with('I') => ImmMap::parse(&t[1..]).map(OperandKind::Imm).map_err(String::from),
            t if t.starts_with("F.") => FloatFormat::parse(&t[2..]).map(|f| OperandKind::Float(Some(f))).map_err(String::from),
            t => Err(format!("unknown operand token '{t}'")),
        })
        .collect()
}

/// The unit of a `REL*N` target as a shift: N a power of two up to 2^16 other than 4
/// (plain `REL`).
fn target_unit(n: &str) -> Result<u8, String> {
    match n.parse::<u64>() {
        Ok(x) if x.is_power_of_two() && x != 4 && x <= 1 << 16 => Ok(x.trailing_zeros() as u8),
        _ => Err(format!("branch target unit 'REL*{n}' is not a power of two up to 65536 (4 is plain 'REL')")),
    }
}

/// The form line of a variant without operands (a blank line would read as a separator).
pub const NO_OPERANDS: &str = "(none)";

fn parse_variant(p: &mut Lines, instruction: &str, arch: Arch) -> Result<Variant, PageError> {
    let head = read_variant_head(p, instruction)?;
    let (cells, layout_lines) = read_layout(p)?;
    let (raw, fixed_mask, fixed_value, inferred) = spans(p, &cells)?;
    let tables = read_tables(p)?;
    let draft = VariantDraft { file: p.file.to_string(), arch, head, raw, fixed_mask, fixed_value, inferred, tables };
    let mut v = draft.build(p)?;
    v.layout_lines = layout_lines;
    Ok(v)
}

/// A variant's head: heading, operand form, distilled text and key, and between the last
/// two the optional lines (`aliases:`, `floats:`, `derived:`, `left out at zero:`,
/// `inverted:`, `illegal at all ones:`, `suffixes after bars:`, `ignored bits:`).
struct VariantHead {
    /// The heading's line.
    line: usize,
    heading: String,
    mnemonic: String,
    heading_mods: Vec<String>,
    form: String,
    kinds: Vec<OperandKind>,
    distilled_line: usize,
    distilled: String,
    dinst: sass::Instruction,
    derived: Vec<Derived>,
    /// The `left out at zero:` line's operands (empty without one).
    left_out: Vec<LeftOutAtZero>,
    /// The `inverted:` line's line and operands (see [`Inverted`]).
    inverted: Option<(usize, Vec<Inverted>)>,
    /// The `illegal at all ones:` line's line and page operands.
    illegal_all_ones: Option<(usize, Vec<usize>)>,
    key: String,
    float_by: Vec<(String, FloatFormat)>,
    /// The `suffixes after bars:` line, if any: its line and page operands.
    after_bars: Option<(usize, Vec<usize>)>,
    /// The `ignored bits:` line, if any: its line and bits.
    ignored: Option<(usize, BitSet)>,
}

/// The optional lines between a variant's distilled line and its key. Pages write them in
/// this order; a reader takes them in any order, each at most once.
const OPTIONAL_LINES: [&str; 8] =
    ["aliases:", "floats:", "derived:", "left out at zero:", "inverted:", "illegal at all ones:", "suffixes after bars:", "ignored bits:"];

/// Reads the four lines and checks that the distilled line (the zero word's text) has the
/// heading's mnemonic and one operand per form operand.
fn read_variant_head(p: &mut Lines, instruction: &str) -> Result<VariantHead, PageError> {
    let Heading { line, heading, mnemonic, heading_mods } = read_heading(p, instruction)?;
    let (form, kinds) = read_form(p)?;
    let (distilled_line, distilled, mut dinst) = read_distilled(p)?;
    let (mut aliases, mut float_by, mut derived) = (vec![], vec![], vec![]);
    let (mut left_out, mut inverted, mut illegal_all_ones, mut after_bars, mut ignored) = (None, None, None, None, None);
    let mut seen: Vec<&str> = vec![];
    while let Some((at, text)) = p.peek() {
        let Some(&prefix) = OPTIONAL_LINES.iter().find(|x| text.trim_start().starts_with(**x)) else { break };
        if seen.contains(&prefix) {
            return p.err(at, format!("a second '{prefix}' line: each of a variant's optional lines comes at most once"));
        }
        seen.push(prefix);
        match prefix {
            "aliases:" => aliases = read_aliases(p),
            "floats:" => float_by = read_floats(p)?,
            "derived:" => derived = read_derived(p)?,
            "left out at zero:" => left_out = read_left_out(p)?,
            "inverted:" => inverted = read_inverted(p)?,
            "illegal at all ones:" => illegal_all_ones = read_illegal_all_ones(p)?,
            "suffixes after bars:" => after_bars = read_after_bars(p)?,
            _ => ignored = read_ignored(p)?,
        }
    }
    for alias in aliases {
        match dinst.modifiers.iter().position(|m| *m == alias) {
            Some(i) => drop(dinst.modifiers.remove(i)),
            None => return p.err(distilled_line, format!("alias '{alias}' is not a modifier of the distilled line")),
        }
    }
    let (kl, k) = p.expect("'key: <KEY>'")?;
    let key = match k.trim_start().strip_prefix("key:") {
        Some(s) if !s.trim().is_empty() => s.trim().to_string(),
        _ => return p.err(kl, format!("expected 'key: <KEY>', found '{}'", k.trim())),
    };
    if dinst.mnemonic != mnemonic {
        return p.err(distilled_line, format!("{key}: distilled mnemonic '{}' differs from the heading '{mnemonic}'", dinst.mnemonic));
    }
    let (left_out_line, left_out) = left_out.unwrap_or((distilled_line, vec![]));
    let (inverted_line, inv) = inverted.clone().unwrap_or((distilled_line, vec![]));
    check_inverted(&kinds, &inv).or_else(|e| p.err(inverted_line, format!("{key}: {e}")))?;
    put_back_left_out(&mut dinst, &kinds, &left_out, &inv).or_else(|e| p.err(left_out_line, format!("{key}: {e}")))?;
    if dinst.operands.len() != kinds.len() {
        let m = format!("{key}: distilled line has {} operands but the form '{form}' has {}", dinst.operands.len(), kinds.len());
        return p.err(distilled_line, m);
    }
    if !float_by.is_empty() && !kinds.iter().any(|k| k.is_float()) {
        return p.err(distilled_line, format!("{key}: a 'floats:' line, but the form '{form}' has no F operand"));
    }
    Ok(VariantHead {
        line,
        heading,
        mnemonic,
        heading_mods,
        form,
        kinds,
        distilled_line,
        distilled,
        dinst,
        derived,
        left_out,
        inverted,
        illegal_all_ones,
        key,
        float_by,
        after_bars,
        ignored,
    })
}

/// The optional `ignored bits:` line before the key: fixed bits nvdisasm ignores in this
/// form (each value prints the same text, but for the terminator's spacing: see
/// `FormConventions::space_bits`), as inclusive ranges (`ignored bits: 72..75,78`).
/// The decoder takes any value there; the encoder writes the layout's.
fn read_ignored(p: &mut Lines) -> Result<Option<(usize, BitSet)>, PageError> {
    let Some((line, rest)) = p.peek().and_then(|(l, t)| t.trim_start().strip_prefix("ignored bits:").map(|r| (l, r.to_string()))) else {
        return Ok(None);
    };
    p.next();
    match parse_ranges(&rest) {
        Ok(bits) if !bits.is_empty() => Ok(Some((line, bits))),
        Ok(_) => p.err(line, "ignored bits: no bits named"),
        Err(e) => p.err(line, format!("ignored bits: {e}")),
    }
}

/// `72..75,78` → those bits (inclusive ranges of bits 0–127, comma-separated).
fn parse_ranges(s: &str) -> Result<BitSet, String> {
    let mut out = BitSet::EMPTY;
    for part in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (a, b) = part.split_once("..").unwrap_or((part, part));
        let bit = |x: &str| x.trim().parse::<u8>().ok().filter(|&n| n < 128).ok_or_else(|| format!("'{part}' is not a bit or a range of bits 0..127"));
        let (a, b) = (bit(a)?, bit(b)?);
        if a > b {
            return Err(format!("'{part}' runs backwards"));
        }
        (a..=b).for_each(|i| out.insert(i));
    }
    Ok(out)
}

/// A variant's heading line (`IADD3` or `I2F.???0`).
struct Heading {
    line: usize,
    heading: String,
    mnemonic: String,
    heading_mods: Vec<String>,
}

fn read_heading(p: &mut Lines, instruction: &str) -> Result<Heading, PageError> {
    let (hl, heading) = p.expect("a variant heading")?;
    let heading = heading.trim().to_string();
    let mut hparts = heading.split('.');
    let mnemonic = hparts.next().unwrap_or_default().to_string();
    if mnemonic != instruction {
        return p.err(hl, format!("expected a variant heading starting with '{instruction}', found '{heading}'"));
    }
    let heading_mods: Vec<String> = hparts.map(str::to_string).collect();
    if !heading_mods.is_empty() {
        p.warn(hl, rules::HEADING_MODIFIER, format!("heading '{heading}' carries modifier(s) {:?}: printed always", heading_mods));
    }
    Ok(Heading { line: hl, heading, mnemonic, heading_mods })
}

/// The operand form line (`R,R,c[I][I]`) and its operand kinds.
fn read_form(p: &mut Lines) -> Result<(String, Vec<OperandKind>), PageError> {
    let (fl, form) = p.expect("an operand form such as 'R,R,R'")?;
    let form = form.trim().to_string();
    match parse_form(&form) {
        Ok(kinds) => Ok((form, kinds)),
        Err(e) => p.err(fl, format!("{e}: expected an operand form of {} separated by commas, found '{form}'", OperandKind::form_tokens())),
    }
}

/// The `distilled:` line: its line, text and the text parsed.
fn read_distilled(p: &mut Lines) -> Result<(usize, String, sass::Instruction), PageError> {
    let (dl, d) = p.expect("'distilled: <SASS text>'")?;
    let distilled = match d.trim_start().strip_prefix("distilled:") {
        Some(s) => s.trim().to_string(),
        None => return p.err(dl, format!("expected 'distilled: <SASS text>', found '{}'", d.trim())),
    };
    let dinst = sass::parse_instruction(&distilled).map_err(|e| PageError { file: p.file.into(), line: dl, message: format!("distilled text: {e}") })?;
    Ok((dl, distilled, dinst))
}

/// The optional `aliases:` line after the distilled one: modifiers nvdisasm prints for the
/// zero word's operand values only (`IMAD.MOV` for a zero multiplier), not printed always.
fn read_aliases(p: &mut Lines) -> Vec<String> {
    let Some(rest) = p.peek().and_then(|(_, l)| l.trim_start().strip_prefix("aliases:")) else { return vec![] };
    let tokens = rest.split_whitespace().map(str::to_string).collect();
    p.next();
    tokens
}

/// The optional `floats:` line after the distilled (and aliases) one: `BF16_V2=BF16
/// RSQ64H=F64`, the modifiers that choose the format of the form's `F` operands (see
/// [`Variant::float_by`]).
fn read_floats(p: &mut Lines) -> Result<Vec<(String, FloatFormat)>, PageError> {
    let Some((line, rest)) = p.peek().and_then(|(n, l)| l.trim_start().strip_prefix("floats:").map(|r| (n, r.to_string()))) else { return Ok(vec![]) };
    p.next();
    let pair = |t: &str| -> Result<(String, FloatFormat), String> {
        let (m, f) = t.split_once('=').filter(|(m, _)| !m.is_empty()).ok_or_else(|| format!("'{t}' is not MODIFIER=FORMAT"))?;
        Ok((m.to_string(), FloatFormat::parse(f)?))
    };
    let pairs: Result<Vec<_>, String> = rest.split_whitespace().map(pair).collect();
    match pairs {
        Ok(v) if !v.is_empty() => Ok(v),
        Ok(_) => p.err(line, "a 'floats:' line names no MODIFIER=FORMAT pair"),
        Err(e) => p.err(line, format!("floats: {e}")),
    }
}

/// The optional `derived:` line after the distilled (and aliases) line: page operands with
/// no bits of their own that print another's field plus a constant, comma-separated
/// (`derived: operand 1 = operand 0 + 0`; see [`Derived`]).
fn read_derived(p: &mut Lines) -> Result<Vec<Derived>, PageError> {
    let Some((line, rest)) = p.peek().and_then(|(l, t)| t.trim_start().strip_prefix("derived:").map(|r| (l, r.to_string()))) else { return Ok(vec![]) };
    p.next();
    let mut out: Vec<Derived> = vec![];
    for t in rest.split(',') {
        let d = Derived::parse(t.trim()).or_else(|e| p.err(line, e.to_string()))?;
        if out.iter().any(|x| x.page_operand == d.page_operand) {
            return p.err(line, format!("operand {} is derived twice", d.page_operand));
        }
        out.push(d);
    }
    Ok(out)
}

/// The optional `left out at zero:` line after the distilled (and derived) line: page
/// operands nvdisasm leaves out when their field is zero, comma-separated (`left out at
/// zero: operand 2 joined`; see [`LeftOutAtZero`]).
fn read_left_out(p: &mut Lines) -> Result<Option<(usize, Vec<LeftOutAtZero>)>, PageError> {
    read_operand_list(p, "left out at zero:", LeftOutAtZero::parse, |x| x.page_operand)
}

/// The optional `inverted:` line after the `left out at zero:` one: register or predicate
/// page operands whose field nvdisasm prints inverted, comma-separated (`inverted: operand
/// 6`; see [`Inverted`]).
fn read_inverted(p: &mut Lines) -> Result<Option<(usize, Vec<Inverted>)>, PageError> {
    read_operand_list(p, "inverted:", Inverted::parse, |x| x.page_operand)
}

/// The optional `illegal at all ones:` line after the `inverted:` one: page operands
/// whose field nvdisasm rejects at the all-ones value (`illegal at all ones: operand 3`,
/// a register that may not be RZ; see [`Field::illegal_at_all_ones`]), comma-separated.
fn read_illegal_all_ones(p: &mut Lines) -> Result<Option<(usize, Vec<usize>)>, PageError> {
    read_operand_list(p, "illegal at all ones:", |t| page_operand_token(t, "illegal-at-all-ones"), |&po| po)
}

/// A line `prefix` followed by comma-separated entries (read by `parse`), each naming a
/// page operand (`page_operand`) in increasing order: its line and entries, or `None`
/// when the next line is another.
fn read_operand_list<T>(
    p: &mut Lines,
    prefix: &str,
    parse: impl Fn(&str) -> Result<T, TokenError>,
    page_operand: impl Fn(&T) -> usize,
) -> Result<Option<(usize, Vec<T>)>, PageError> {
    let Some((line, rest)) = p.peek().and_then(|(l, t)| t.trim_start().strip_prefix(prefix).map(|r| (l, r.to_string()))) else { return Ok(None) };
    p.next();
    let mut out: Vec<T> = vec![];
    for t in rest.split(',') {
        let x = parse(t).or_else(|e| p.err(line, e.to_string()))?;
        let po = page_operand(&x);
        if out.iter().any(|y| page_operand(y) >= po) {
            return p.err(line, format!("{prefix} operand {po} is named twice or out of order"));
        }
        out.push(x);
    }
    Ok(Some((line, out)))
}

/// The form operand (index, kind) whose first page operand is `po`, if any.
fn form_operand(kinds: &[OperandKind], po: usize) -> Option<(usize, OperandKind)> {
    let mut first = 0;
    for (i, k) in kinds.iter().enumerate() {
        if first == po {
            return Some((i, *k));
        }
        first += k.page_slots();
    }
    None
}

/// Each inverted operand must be a register or predicate of the form (one field).
fn check_inverted(kinds: &[OperandKind], inverted: &[Inverted]) -> Result<(), String> {
    for x in inverted {
        let kind = form_operand(kinds, x.page_operand).map(|(_, k)| k);
        if !matches!(kind, Some(OperandKind::Reg | OperandKind::UReg | OperandKind::Pred | OperandKind::UPred)) {
            return Err(format!("inverted: operand {} is not a register or predicate ('R', 'UR', 'P', 'UP') of the form", x.page_operand));
        }
    }
    Ok(())
}

/// The distilled line with the operands nvdisasm leaves out of the zero word put back, so
/// that its operand k is form operand k: those left out at zero as they print at zero
/// (`0x0`, `0x1` for `I*2+1`; each must be the one page operand of an immediate form
/// operand), and, when the line is still short, each inverted predicate as `PT`/`UPT` (its
/// field 0 prints all ones, which nvdisasm leaves out).
fn put_back_left_out(dinst: &mut sass::Instruction, kinds: &[OperandKind], left_out: &[LeftOutAtZero], inverted: &[Inverted]) -> Result<(), String> {
    let mut back: Vec<(usize, sass::Operand)> = vec![];
    for x in left_out {
        let Some((i, OperandKind::Imm(m))) = form_operand(kinds, x.page_operand) else {
            return Err(format!("left out at zero: operand {} is not an immediate ('I') of the form", x.page_operand));
        };
        if x.joined && i == 0 {
            return Err(format!("left out at zero: operand {} cannot be put back into the distilled line", x.page_operand));
        }
        back.push((i, sass::Operand { joined: x.joined, ..sass::Operand::new(sass::Body::Imm { value: m.apply(0) }) }));
    }
    if dinst.operands.len() + back.len() < kinds.len() {
        for x in inverted {
            match form_operand(kinds, x.page_operand) {
                Some((i, OperandKind::Pred)) => back.push((i, sass::Operand::new(sass::Body::Pred { n: 7 }))),
                Some((i, OperandKind::UPred)) => back.push((i, sass::Operand::new(sass::Body::UPred { n: 7 }))),
                _ => {}
            }
        }
    }
    // A name whose zero row is `(default)` prints nothing, and nvdisasm leaves it out
    // (`DEPBAR {5,4,3,2,1,0}`, `DEPBAR` at 0): the first such operands, as many as are
    // missing, put back nameless (the table's check is `check_nameless`).
    let missing = kinds.len().saturating_sub(dinst.operands.len() + back.len());
    let names: Vec<usize> = (0..kinds.len()).filter(|&i| kinds[i] == OperandKind::Name && back.iter().all(|(j, _)| *j != i)).take(missing).collect();
    back.extend(names.into_iter().map(|i| (i, sass::Operand::new(sass::Body::Other { text: String::new() }))));
    back.sort_by_key(|(i, _)| *i);
    for (i, op) in back {
        if i > dinst.operands.len() {
            return Err(format!("operand {i} cannot be put back into the distilled line (left out at zero, inverted or a name that prints nothing)"));
        }
        dinst.operands.insert(i, op);
    }
    Ok(())
}

/// The optional `suffixes after bars:` line after the distilled (and aliases) line: the
/// page operands whose suffixes nvdisasm prints after their `|…|` bars (`-|R0|.H0_H0`),
/// every other one keeping them inside (`|UR6.H1_H1|`); `none` when no operand does.
/// Discovery writes it for every form with an operand that has both bars and suffixes.
fn read_after_bars(p: &mut Lines) -> Result<Option<(usize, Vec<usize>)>, PageError> {
    let Some((line, rest)) = p.peek().and_then(|(l, t)| t.trim_start().strip_prefix("suffixes after bars:").map(|r| (l, r.trim().to_string()))) else {
        return Ok(None);
    };
    p.next();
    if rest == "none" {
        return Ok(Some((line, vec![])));
    }
    let ops: Option<Vec<usize>> = rest.split_whitespace().map(|t| t.parse().ok()).collect();
    match ops {
        Some(ops) if !ops.is_empty() => Ok(Some((line, ops))),
        _ => p.err(line, format!("expected 'suffixes after bars: <page operand numbers>' or '... none', found '{rest}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_lines_with_memory_operands() {
        let k = parse_form("P,R,desc[UR][R.64+I],R").unwrap();
        assert_eq!(k.len(), 4);
        assert_eq!(k[2], OperandKind::Mem(MemShape::parse("desc[UR][R.64+I]").unwrap()));
        // The constant kinds keep their tokens; a memory shape of that space has its own.
        assert_eq!(parse_form("R,c[I][I],c[I][sI],c[I][R+I]").unwrap()[1], OperandKind::Const);
        assert!(matches!(parse_form("R,c[I][sI]").unwrap()[1], OperandKind::Mem(_)));
        let e = parse_form("R,[R+R]").unwrap_err();
        assert!(e.contains("memory operand '[R+R]'") && e.contains("out of order or repeated"), "{e}");
        assert_eq!(parse_form("R,Q").unwrap_err(), "unknown operand token 'Q'");
    }

    #[test]
    fn a_malformed_memory_token_fails_the_page_with_its_line() {
        let page = "LDS\n\n1 variant on SM90 (H100)\n\nLDS\n\nR,[R+UR+UR]\n\ndistilled: LDS R0, [R0] ;\n\nkey: LDS_X\n";
        let e = parse_page("t.txt", page.as_bytes()).unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.contains("memory operand '[R+UR+UR]'"), "{e}");
    }
}
