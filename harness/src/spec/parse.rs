//! The ISA-viewer page parser.
//!
//! Real pages are copy-pasted and carry irregularities. Each one has an explicit rule here,
//! named in [`rules`], and each occurrence becomes a warning with file and line. Anything
//! the rules do not cover is an error naming file, line and what was expected: a page is
//! never parsed partially.

use super::model::*;
use crate::sass;
use crate::word::{BitSet, Word};

/// The names of the irregularity rules, as they appear in warnings.
pub mod rules {
    pub const MISSING_BANNER: &str = "missing-banner";
    pub const MISSING_DESCRIPTION: &str = "missing-description";
    pub const NO_FINAL_NEWLINE: &str = "no-final-newline";
    pub const CRLF: &str = "crlf-line-endings";
    pub const BOM: &str = "byte-order-mark";
    pub const DROPPED_CELL: &str = "dropped-cell";
    pub const SHORT_ROW: &str = "short-row";
    pub const SPLIT_FIELD: &str = "split-field";
    pub const REPEATED_NAME: &str = "repeated-name";
    pub const HEADING_MODIFIER: &str = "heading-modifier";
    pub const PLACEHOLDER_ROW: &str = "placeholder-row";
    pub const OMITTED_VALUES: &str = "omitted-values";
    pub const DUPLICATE_NAMES: &str = "duplicate-names";
    pub const HIDDEN_AT_ZERO: &str = "hidden-at-zero";
    pub const FLAG_OPERAND: &str = "flag-operand-assumed";
    pub const VARIANT_COUNT: &str = "variant-count";
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PageError {
    pub file: String,
    pub line: usize,
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
            t if t.contains('[') => MemShape::parse(t).map(OperandKind::Mem),
            t if t.starts_with('I') => ImmMap::parse(&t[1..]).map(OperandKind::Imm),
            t if t.starts_with("F.") => FloatFormat::parse(&t[2..]).map(|f| OperandKind::Float(Some(f))),
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
        let d = Derived::parse(t.trim()).or_else(|e| p.err(line, e))?;
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
    parse: impl Fn(&str) -> Result<T, String>,
    page_operand: impl Fn(&T) -> usize,
) -> Result<Option<(usize, Vec<T>)>, PageError> {
    let Some((line, rest)) = p.peek().and_then(|(l, t)| t.trim_start().strip_prefix(prefix).map(|r| (l, r.to_string()))) else { return Ok(None) };
    p.next();
    let mut out: Vec<T> = vec![];
    for t in rest.split(',') {
        let x = parse(t).or_else(|e| p.err(line, e))?;
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
    back.sort_by_key(|(i, _)| *i);
    for (i, op) in back {
        if i > dinst.operands.len() {
            return Err(format!("operand {i} cannot be put back into the distilled line (left out at zero or inverted)"));
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

/// 128 layout cells, each with its line, and the four layout rows' lines.
type Layout = (Vec<(Cell, usize)>, [usize; 4]);

/// The layout: two pairs of index/content rows.
fn read_layout(p: &mut Lines) -> Result<Layout, PageError> {
    let mut cells: Vec<(Cell, usize)> = Vec::with_capacity(128);
    let mut layout_lines = [0usize; 4];
    for half in 0..2 {
        let (il, idx) = p.expect("a layout index row (0..7 repeated)")?;
        let (cl, content) = p.expect("a layout content row")?;
        let row = layout_half(p, il, idx, cl, content, half)?;
        cells.extend(row);
        layout_lines[2 * half] = il;
        layout_lines[2 * half + 1] = cl;
    }
    Ok((cells, layout_lines))
}

/// The modifier tables after the layout, up to the next variant's heading.
fn read_tables(p: &mut Lines) -> Result<Vec<Table>, PageError> {
    let mut tables = vec![];
    while let Some((tl, t)) = p.peek() {
        let t = t.trim();
        if let Some(id) = table_title(t) {
            p.next();
            tables.push(parse_table(p, tl, t, id)?);
        } else {
            break;
        }
    }
    Ok(tables)
}

#[derive(Clone, Debug, PartialEq)]
enum Cell {
    Fixed(bool),
    Name(String),
    Empty,
    /// A cell the copy dropped (rule dropped-cell): assumed fixed 0, marked inferred.
    Dropped,
}

fn layout_half(p: &mut Lines, il: usize, idx: &str, cl: usize, content: &str, half: usize) -> Result<Vec<(Cell, usize)>, PageError> {
    let idx_cells: Vec<&str> = idx.split('\t').collect();
    let mut idx_vals = vec![];
    for c in &idx_cells {
        match c.trim().parse::<u8>() {
            Ok(v) if v < 8 => idx_vals.push(v),
            _ => return p.err(il, format!("expected a layout index row of digits 0..7 separated by tabs, found cell '{c}'")),
        }
    }
    let base = half * 64;
    let mut content_cells = content_row(p, cl, content, base)?;
    // Where does the index row break the 0..7 pattern? Each break is one dropped cell.
    let mut dropped = vec![];
    let mut expect_i = 0usize;
    for (pos, &v) in idx_vals.iter().enumerate() {
        if v as usize != (expect_i % 8) {
            if v as usize == (expect_i + 1) % 8 {
                dropped.push(expect_i);
                expect_i += 1;
            } else {
                return p.err(il, format!("layout index row breaks its 0..7 pattern at cell {} (found {v}, expected {})", pos + 1, expect_i % 8));
            }
        }
        expect_i += 1;
    }
    let total = idx_vals.len() + dropped.len();
    if total != 64 {
        return p.err(il, format!("expected a layout index row of 64 cells (bits {}..{}), found {} cells", base, base + 63, idx_vals.len()));
    }
    if dropped.len() > 1 {
        return p.err(il, format!("layout index row has {} dropped cells; at most one is repaired", dropped.len()));
    }
    for &d in &dropped {
        if content_cells.len() + dropped.len() < 64 && content_cells.len() <= d {
            return p.err(cl, format!("content row ends before the dropped cell at bit {}", base + d));
        }
        if content_cells.len() >= 64 {
            return p.err(cl, format!("index row drops the cell for bit {} but the content row has {} cells", base + d, content_cells.len()));
        }
        p.warn(il, rules::DROPPED_CELL, format!("index row lacks the cell for bit {}; a cell assumed fixed 0 is inserted there in both rows", base + d));
        content_cells.insert(d, Cell::Dropped);
    }
    if content_cells.len() > 64 {
        return p.err(cl, format!("expected at most 64 layout cells, found {}", content_cells.len()));
    }
    if content_cells.len() < 64 {
        let n = content_cells.len();
        if !matches!(content_cells.last(), Some(Cell::Name(_)) | Some(Cell::Empty)) {
            return p.err(cl, format!("layout content row has {n} cells and ends in a fixed bit; expected 64 cells"));
        }
        p.warn(cl, rules::SHORT_ROW, format!("content row cut short at {n} cells: bits {}..{} continue the last field", base + n, base + 63));
        content_cells.resize(64, Cell::Empty);
    }
    Ok(content_cells.into_iter().map(|c| (c, cl)).collect())
}

/// A content row's cells: `0`, `1`, empty, or a field name (which starts with a letter:
/// `pred`, `operand 3`, `modi 1`, `cABS`, …). Anything else (`2`, `-`, `*`) is an error,
/// not a field of that name.
fn content_row(p: &Lines, cl: usize, content: &str, base: usize) -> Result<Vec<Cell>, PageError> {
    let mut out = Vec::with_capacity(64);
    for (i, c) in content.split('\t').enumerate() {
        out.push(match c.trim() {
            "0" => Cell::Fixed(false),
            "1" => Cell::Fixed(true),
            "" => Cell::Empty,
            // Names start with a letter, or are modifier flags like `16x2`: digits then a
            // letter. A bare number other than 0/1 is a typo, not a field.
            s if s.chars().any(|c| c.is_ascii_alphabetic()) && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) => Cell::Name(s.to_string()),
            s => {
                let at = format!("cell {} (bit {} if no cell was dropped)", i + 1, base + i);
                return p.err(cl, format!("layout {at} is '{s}'; expected 0, 1, empty or a field name"));
            }
        });
    }
    Ok(out)
}

struct RawField {
    name: String,
    spans: Vec<Vec<u8>>,
    line: usize,
}

type Spans = (Vec<RawField>, BitSet, Word, BitSet);

/// Groups cells into spans: a name starts a span, empty cells continue it.
fn spans(p: &mut Lines, cells: &[(Cell, usize)]) -> Result<Spans, PageError> {
    let mut out: Vec<RawField> = vec![];
    let mut mask = BitSet::EMPTY;
    let mut value = Word::ZERO;
    let mut inferred = BitSet::EMPTY;
    let mut current: Option<usize> = None;
    for (bit, (cell, line)) in cells.iter().enumerate() {
        let bit = bit as u8;
        if bit == 64 && *cell == Cell::Empty {
            return p.err(*line, "the bits 64..127 content row starts with an empty cell; expected 0, 1 or a field name at bit 64 (a field does not continue from the bits 0..63 row)");
        }
        match cell {
            Cell::Fixed(b) => {
                mask.insert(bit);
                value = value.with_bit(bit, *b);
                current = None;
            }
            Cell::Dropped => {
                mask.insert(bit);
                inferred.insert(bit);
                current = None;
            }
            Cell::Name(n) => {
                out.push(RawField { name: n.clone(), spans: vec![vec![bit]], line: *line });
                current = Some(out.len() - 1);
            }
            Cell::Empty => match current {
                Some(i) => out[i].spans[0].push(bit),
                None => return p.err(*line, format!("empty layout cell at bit {bit} follows no field name")),
            },
        }
    }
    // Merge numbered names (`operand N`, `modi N`, `operand N modi`) split over several spans.
    let mut merged: Vec<RawField> = vec![];
    for f in out {
        let numbered = f.name.split(' ').skip(1).any(|n| n.parse::<u32>().is_ok());
        if numbered {
            if let Some(m) = merged.iter_mut().find(|m| m.name == f.name) {
                m.spans.extend(f.spans);
                continue;
            }
        }
        merged.push(f);
    }
    for f in &merged {
        if f.spans.len() > 1 {
            let desc: Vec<String> = f.spans.iter().map(|s| crate::word::format_ranges(s)).collect();
            let line = f.line;
            let msg = format!(
                "'{}' appears in {} separate spans ({}): read as one field, value bits in increasing bit order",
                f.name,
                f.spans.len(),
                desc.join(" and ")
            );
            p.warn(line, rules::SPLIT_FIELD, msg);
        }
    }
    Ok((merged, mask, value, inferred))
}

fn table_title(t: &str) -> Option<TableId> {
    if let Some(n) = t.strip_prefix("Modifier Group ") {
        return n.trim().parse().ok().map(|group| TableId::Group { group });
    }
    if let Some(r) = t.strip_prefix("Operand ") {
        if let Some(n) = r.strip_suffix(" Modifiers") {
            return n.trim().parse().ok().map(|page_operand| TableId::Operand { page_operand });
        }
    }
    None
}

fn parse_table(p: &mut Lines, tl: usize, title: &str, id: TableId) -> Result<Table, PageError> {
    let (hl, h) = p.expect("a table header 'Binary<TAB>Value'")?;
    let cols: Vec<&str> = h.split('\t').map(str::trim).collect();
    if cols != ["Binary", "Value"] {
        return p.err(hl, format!("expected a table header 'Binary<TAB>Value', found '{}'", h.trim()));
    }
    let (rows, width) = read_rows(p, title)?;
    let Some(width) = width else {
        return p.err(tl, format!("table '{title}' has no rows"));
    };
    let listed: std::collections::HashSet<u64> = rows.iter().map(|r| r.value).collect();
    let omitted: Vec<u64> = (0..(1u64 << width)).filter(|v| !listed.contains(v)).collect();
    if !omitted.is_empty() {
        let list: Vec<String> = omitted.iter().map(|v| format!("{:0w$b}", v, w = width)).collect();
        p.warn(tl, rules::OMITTED_VALUES, format!("{title}: values {} not listed", list.join(", ")));
    }
    warn_duplicate_names(p, title, &rows, width);
    Ok(Table { id, title: title.to_string(), width: width as u32, rows, omitted, line: tl })
}

/// A table's rows (`<binary><TAB><name>`) up to the first line that is not one, and
/// their width in bits (None when there is no row).
fn read_rows(p: &mut Lines, title: &str) -> Result<(Vec<Row>, Option<usize>), PageError> {
    let mut rows: Vec<Row> = vec![];
    let mut lines_by_value: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut width: Option<usize> = None;
    while let Some((rl, r)) = p.peek() {
        let Some((bin, name)) = r.split_once('\t') else { break };
        let bin = bin.trim();
        if bin.is_empty() || !bin.chars().all(|c| c == '0' || c == '1') {
            break;
        }
        p.next();
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return p.err(rl, format!("expected a modifier name after '{bin}', found '{name}'"));
        }
        match width {
            None => width = Some(bin.len()),
            Some(w) if w != bin.len() => return p.err(rl, format!("row '{bin}' has {} bits; the table's rows have {w}", bin.len())),
            _ => {}
        }
        // Wider rows are no modifier table; and the omitted-values list grows as 2^width.
        if bin.len() > 16 {
            return p.err(rl, format!("table rows wider than 16 bits are not supported (row '{bin}' has {})", bin.len()));
        }
        let value = u64::from_str_radix(bin, 2).unwrap_or(0);
        if let Some(first) = lines_by_value.insert(value, rl) {
            return p.err(rl, format!("value {bin} listed twice (first at line {first})"));
        }
        let kind = row_kind(name);
        if matches!(kind, RowKind::Invalid | RowKind::Unknown) {
            p.warn(rl, rules::PLACEHOLDER_ROW, format!("{title}: value {bin} is '{name}', kept as written"));
        }
        rows.push(Row { value, name: name.to_string(), kind, line: rl });
    }
    Ok((rows, width))
}

fn row_kind(name: &str) -> RowKind {
    if name == "(default)" {
        RowKind::Default
    } else if name.starts_with("INVALID") {
        RowKind::Invalid
    } else if name.starts_with("???") {
        RowKind::Unknown
    } else {
        RowKind::Named
    }
}

/// Rule duplicate-names: one warning per row whose name an earlier row already has.
fn warn_duplicate_names(p: &mut Lines, title: &str, rows: &[Row], width: usize) {
    let mut seen: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for r in rows {
        if let Some(v) = seen.get(r.name.as_str()) {
            p.warn(
                r.line,
                rules::DUPLICATE_NAMES,
                format!("{title}: '{}' names both {:0w$b} and {:0w$b}; the assembler picks {:0w$b}", r.name, v, r.value, v, w = width),
            );
        } else {
            seen.insert(&r.name, r.value);
        }
    }
}

/// A variant as read from the page, before its fields are interpreted and checked: its
/// head lines and its layout and tables.
struct VariantDraft {
    file: String,
    arch: Arch,
    head: VariantHead,
    raw: Vec<RawField>,
    fixed_mask: BitSet,
    fixed_value: Word,
    inferred: BitSet,
    tables: Vec<Table>,
}

/// Fields classified so far, and what later checks need from the classification.
#[derive(Default)]
struct FieldScan {
    fields: Vec<Field>,
    /// Plain `modi` spans met, matched in order to the `Operand K Modifiers` tables.
    plain_modi: usize,
    /// Flag name → (spans, line of the first), for the repeated-name warning.
    name_counts: Vec<(String, usize, usize)>,
}

impl VariantDraft {
    fn err(&self, line: usize, m: impl std::fmt::Display) -> PageError {
        PageError { file: self.file.clone(), line, message: format!("{}: {m}", self.head.key) }
    }

    /// Page operand numbers per form operand: c[I][I] and cx[UR][I] take two numbers.
    fn page_ops(&self) -> Vec<Vec<usize>> {
        let mut next = 0;
        self.head
            .kinds
            .iter()
            .map(|k| {
                let ops = (next..next + k.page_slots()).collect();
                next += k.page_slots();
                ops
            })
            .collect()
    }

    /// The page operands of the `Operand K Modifiers` tables, in page order.
    fn operand_tables(&self) -> Vec<usize> {
        self.tables
            .iter()
            .filter_map(|t| match t.id {
                TableId::Operand { page_operand } => Some(page_operand),
                _ => None,
            })
            .collect()
    }

    /// Classifies every layout span as a field; warns about repeated flag names.
    fn fields(&self, p: &mut Lines, n_page: usize) -> Result<Vec<Field>, PageError> {
        // Tables that an `operand K modi` field names are not matched to plain spans.
        let named: Vec<usize> = self.raw.iter().filter_map(|f| split_modi_operand(&f.name)).collect();
        let operand_tables: Vec<usize> = self.operand_tables().into_iter().filter(|o| !named.contains(o)).collect();
        let mut scan = FieldScan::default();
        for f in &self.raw {
            let mut bits: Vec<u8> = f.spans.iter().flatten().copied().collect();
            bits.sort_unstable();
            let kind = self.field_kind(f, &bits, n_page, &operand_tables, &mut scan)?;
            if let FieldKind::Flag { role: FlagRole::Modifier, .. } = &kind {
                if bits.len() != 1 {
                    return Err(self.err(f.line, format!("flag '{}' spans {} bits; flags are one bit", f.name, bits.len())));
                }
            }
            if bits.len() > 64 {
                return Err(self.err(f.line, format!("field '{}' spans {} bits", f.name, bits.len())));
            }
            scan.fields.push(Field { name: f.name.clone(), kind, bits, line: f.line, inverted: false, illegal_at_all_ones: false });
        }
        if scan.fields.len() > crate::codec::MAX_FIELDS {
            let m = format!("{} fields; at most {} are supported", scan.fields.len(), crate::codec::MAX_FIELDS);
            return Err(self.err(self.head.line, m));
        }
        for (n, c, l) in &scan.name_counts {
            if *c > 1 {
                let m = format!("{}: '{n}' names {c} separate fields; they are told apart by operand", self.head.key);
                p.warn(*l, rules::REPEATED_NAME, m);
            }
        }
        if scan.plain_modi < operand_tables.len() {
            let m = format!("{} 'Operand K Modifiers' tables but {} plain 'modi' spans", operand_tables.len(), scan.plain_modi);
            return Err(self.err(self.head.line, m));
        }
        Ok(scan.fields)
    }

    /// What one layout span is, from its name.
    fn field_kind(&self, f: &RawField, bits: &[u8], n_page: usize, operand_tables: &[usize], scan: &mut FieldScan) -> Result<FieldKind, PageError> {
        Ok(match f.name.as_str() {
            "pred" => FieldKind::Pred,
            "stall" => FieldKind::Control { control: Control::Stall },
            "y" => FieldKind::Control { control: Control::Yield },
            "r-bar" => FieldKind::Control { control: Control::ReadBarrier },
            "w-bar" => FieldKind::Control { control: Control::WriteBarrier },
            "b-mask" => FieldKind::Control { control: Control::WaitMask },
            "reuse" => FieldKind::Control { control: Control::Reuse },
            "modi" => {
                let Some(&op) = operand_tables.get(scan.plain_modi) else {
                    let m = format!("plain 'modi' span #{} at bit {} has no 'Operand K Modifiers' table", scan.plain_modi + 1, bits[0]);
                    return Err(self.err(f.line, m));
                };
                scan.plain_modi += 1;
                FieldKind::OperandModifier { page_operand: op }
            }
            n => match split_modi_operand(n) {
                Some(op) if self.tables.iter().any(|t| t.id == TableId::Operand { page_operand: op }) => FieldKind::OperandModifier { page_operand: op },
                Some(op) => return Err(self.err(f.line, format!("'{n}' has no 'Operand {op} Modifiers' table"))),
                None => self.named_kind(f, n, bits, n_page, scan)?,
            },
        })
    }

    /// `operand N`, `modi N`, or a flag (`cABS`, `SAT`, `H1`, …).
    fn named_kind(&self, f: &RawField, n: &str, bits: &[u8], n_page: usize, scan: &mut FieldScan) -> Result<FieldKind, PageError> {
        if let Some(num) = n.strip_prefix("operand ") {
            let page_operand: usize = num.parse().map_err(|_| self.err(f.line, format!("expected 'operand N', found '{n}'")))?;
            if page_operand >= n_page {
                let m = format!("'{n}' but the form '{}' has page operands 0..{}", self.head.form, n_page.saturating_sub(1));
                return Err(self.err(f.line, m));
            }
            return Ok(FieldKind::Operand { page_operand });
        }
        if let Some(num) = n.strip_prefix("modi ") {
            let group: u32 = num.parse().map_err(|_| self.err(f.line, format!("expected 'modi N', found '{n}'")))?;
            if !self.tables.iter().any(|t| t.id == TableId::Group { group }) {
                return Err(self.err(f.line, format!("'{n}' has no 'Modifier Group {group}' table")));
            }
            return Ok(FieldKind::Group { group });
        }
        if !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(self.err(f.line, format!("unknown layout cell '{n}' at bit {}", bits[0])));
        }
        let role = match n {
            "cABS" => FlagRole::Abs,
            "cNEG" => FlagRole::Neg,
            "cNOT" => FlagRole::Not,
            s if is_selector(s) => FlagRole::Selector,
            _ => FlagRole::Modifier,
        };
        match scan.name_counts.iter_mut().find(|(x, _, _)| x == n) {
            Some(e) => e.1 += 1,
            None => scan.name_counts.push((n.to_string(), 1, f.line)),
        }
        Ok(FieldKind::Flag { name: n.to_string(), role, page_operand: None })
    }

    /// Each table appears once, names an operand of the form, and is used by exactly the
    /// field of its width.
    fn check_tables(&self, fields: &[Field], n_page: usize) -> Result<(), PageError> {
        for (i, t) in self.tables.iter().enumerate() {
            if self.tables[..i].iter().any(|u| u.id == t.id) {
                return Err(self.err(t.line, format!("table '{}' appears twice", t.title)));
            }
            if let TableId::Operand { page_operand } = t.id {
                if page_operand >= n_page {
                    return Err(self.err(t.line, format!("table '{}' names an operand the form '{}' does not have", t.title, self.head.form)));
                }
            }
            let users: Vec<&Field> = fields
                .iter()
                .filter(|f| match (&f.kind, &t.id) {
                    (FieldKind::Group { group }, TableId::Group { group: g }) => group == g,
                    (FieldKind::OperandModifier { page_operand }, TableId::Operand { page_operand: o }) => page_operand == o,
                    _ => false,
                })
                .collect();
            match users.as_slice() {
                [] => return Err(self.err(t.line, format!("table '{}' is used by no layout field", t.title))),
                [f] if f.width() != t.width => {
                    let m = format!("table '{}' has {}-bit rows but its field spans {} bits", t.title, t.width, f.width());
                    return Err(self.err(t.line, m));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Every page operand has an `operand N` field, or is derived from one that has.
    fn check_operand_fields(&self, fields: &[Field], page_ops: &[Vec<usize>]) -> Result<(), PageError> {
        self.check_derived(fields, page_ops)?;
        for (i, ops) in page_ops.iter().enumerate() {
            for &po in ops.iter().filter(|po| !self.head.derived.iter().any(|d| d.page_operand == **po)) {
                // A name's bits are its table's (an operand-modifier field), or it has none
                // and prints the distilled line's name.
                let named = self.head.kinds[i].is_named();
                if !named && !fields.iter().any(|f| f.kind == FieldKind::Operand { page_operand: po }) {
                    let m = format!("form operand {i} ('{}') has no 'operand {po}' field in the layout", self.head.kinds[i].form_token());
                    return Err(self.err(self.head.line, m));
                }
            }
        }
        Ok(())
    }

    /// A derived page operand is a register (of a register, uniform register or memory
    /// operand) without a field of its own; its source one with a field, not derived itself.
    fn check_derived(&self, fields: &[Field], page_ops: &[Vec<usize>]) -> Result<(), PageError> {
        let has_field = |po: usize| fields.iter().any(|f| f.kind == FieldKind::Operand { page_operand: po });
        let register = |po: usize| {
            let Some(i) = page_ops.iter().position(|ops| ops.contains(&po)) else { return false };
            match self.head.kinds[i] {
                OperandKind::Reg | OperandKind::UReg => true,
                OperandKind::Mem(m) => {
                    let slot = page_ops[i].iter().position(|&x| x == po).unwrap_or(0);
                    let role = m.slot_roles()[slot];
                    role == MemSlot::Reg || role == MemSlot::UReg || role == MemSlot::Space && m.space == MemSpaceKind::Desc
                }
                _ => false,
            }
        };
        for d in &self.head.derived {
            let why = if !register(d.page_operand) || !register(d.source) {
                "both must be registers (R, UR, or one inside a memory operand)"
            } else if has_field(d.page_operand) {
                "the derived operand has a field of its own"
            } else if !has_field(d.source) || self.head.derived.iter().any(|e| e.page_operand == d.source) {
                "the source has no field of its own"
            } else {
                continue;
            };
            return Err(self.err(self.head.line, format!("derived '{}': {why}", d.token())));
        }
        Ok(())
    }

    /// Fields do not overlap each other or fixed bits, and together cover all 128 bits.
    fn check_coverage(&self, fields: &[Field]) -> Result<(), PageError> {
        let mut seen = self.fixed_mask;
        for f in fields {
            let m = f.mask();
            if !seen.intersect(m).is_empty() {
                return Err(self.err(self.head.line, format!("field '{}' overlaps other bits", f.name)));
            }
            seen = seen.union(m);
        }
        if seen != BitSet::ALL {
            return Err(self.err(self.head.line, "layout does not cover all 128 bits"));
        }
        Ok(())
    }

    /// Sets the operand of every `cABS`/`cNEG`/selector flag by the rules of [`FlagOwners`],
    /// in bit order, warning about each assumption.
    fn assign_flag_operands(&self, p: &mut Lines, fields: &mut [Field], page_ops: &[Vec<usize>]) {
        let mut order: Vec<usize> = (0..fields.len()).collect();
        order.sort_by_key(|&i| fields[i].bits[0]);
        let mut owners = FlagOwners::new(page_ops, &self.head.kinds);
        for i in order {
            let FieldKind::Flag { name, role, .. } = fields[i].kind.clone() else { continue };
            if role == FlagRole::Modifier {
                continue;
            }
            let bit = fields[i].bits[0];
            let (op, how) = owners.owner(fields, &name, role, bit);
            let key = &self.head.key;
            if op.is_none() {
                p.warn(self.head.line, rules::FLAG_OPERAND, format!("{key}: '{name}' at bit {bit} has no source operand to apply to; it is not printed"));
            }
            if let FieldKind::Flag { page_operand, .. } = &mut fields[i].kind {
                *page_operand = op;
            }
            if let Some(o) = op {
                p.warn(self.head.line, rules::FLAG_OPERAND, format!("{key}: '{name}' at bit {bit} applies to operand {o} ({how})"));
            }
        }
    }

    /// Which operands print their suffixes after the `|…|` bars: those the page's
    /// `suffixes after bars:` line names (each must have a `cABS`). A page without the
    /// line (the committed pages before discovery learned it, hand-written seeds) keeps
    /// the rule the printer used to key on the mnemonic: the fp16x2 ALU instructions
    /// (`HADD2`, `HFMA2`, `HMNMX2`, … on SM90 and SM100) print a general register's
    /// suffixes after the bars (`-|R0|.H0_H0`), everything else inside.
    fn suffix_placement(&self, operands: &mut [OperandSpec]) -> Result<(), PageError> {
        let Some((line, after)) = &self.head.after_bars else {
            let h2 = self.head.mnemonic.starts_with('H') && self.head.mnemonic.ends_with('2');
            for o in operands.iter_mut() {
                o.suffixes_after_bars = h2 && o.kind == OperandKind::Reg;
            }
            return Ok(());
        };
        for &po in after {
            match operands.iter_mut().find(|o| o.page_operands.first() == Some(&po)) {
                Some(o) if o.abs_field.is_some() => o.suffixes_after_bars = true,
                Some(_) => return Err(self.err(*line, format!("suffixes after bars: operand {po} has no cABS flag"))),
                None => return Err(self.err(*line, format!("suffixes after bars: no operand {po} (the first page operand of a form operand)"))),
            }
        }
        Ok(())
    }

    /// Marks the value field of each operand of the `inverted:` line (a register or
    /// predicate of the form: `check_inverted`); one without a field is an error.
    fn mark_inverted(&self, operands: &[OperandSpec], fields: &mut [Field]) -> Result<(), PageError> {
        for x in self.head.inverted.iter().flat_map(|(_, xs)| xs) {
            match operands.iter().find(|o| o.page_operands == [x.page_operand]).map(|o| o.value_fields.as_slice()) {
                Some([Some(f)]) => fields[*f].inverted = true,
                _ => return Err(self.err(self.head.line, format!("inverted: operand {} has no field of its own", x.page_operand))),
            }
        }
        let Some((line, illegal)) = &self.head.illegal_all_ones else { return Ok(()) };
        for &po in illegal {
            let field = operands.iter().find_map(|o| o.page_operands.iter().position(|&x| x == po).map(|i| o.value_fields[i]));
            match field.flatten() {
                Some(f) if operands.iter().all(|o| o.derived.is_empty() || !o.value_fields.contains(&Some(f))) => fields[f].illegal_at_all_ones = true,
                _ => return Err(self.err(*line, format!("illegal at all ones: operand {po} has no field of its own"))),
            }
        }
        Ok(())
    }

    /// Interprets and checks the draft: the variant, or the first error.
    /// The `ignored bits:` line's bits, each a fixed bit of the layout.
    fn ignored_bits(&self) -> Result<BitSet, PageError> {
        let Some((line, bits)) = self.head.ignored else { return Ok(BitSet::EMPTY) };
        match bits.minus(self.fixed_mask).iter().next() {
            Some(b) => Err(self.err(line, format!("ignored bits: bit {b} is not a fixed bit of the layout"))),
            None => Ok(bits),
        }
    }

    fn build(mut self, p: &mut Lines) -> Result<Variant, PageError> {
        let page_ops = self.page_ops();
        let n_page = page_ops.iter().map(Vec::len).sum();
        let mut fields = self.fields(p, n_page)?;
        self.check_tables(&fields, n_page)?;
        self.check_operand_fields(&fields, &page_ops)?;
        self.assign_flag_operands(p, &mut fields, &page_ops);
        let mut operands = build_operands(&fields, &page_ops, &self.head.kinds, &self.head.dinst, &self.head.derived);
        for x in &self.head.left_out {
            // `put_back_left_out` checked that it is a form operand's one page operand.
            operands.iter_mut().filter(|o| o.page_operands == [x.page_operand]).for_each(|o| o.zero_omitted = true);
        }
        self.mark_inverted(&operands, &mut fields)?;
        fixed_suffixes(&mut operands, &self.head.dinst);
        self.suffix_placement(&mut operands)?;
        self.check_coverage(&fields)?;
        let ignored = self.ignored_bits()?;
        let mut v = Variant {
            key: self.head.key.clone(),
            arch: self.arch,
            heading: std::mem::take(&mut self.head.heading),
            mnemonic: std::mem::take(&mut self.head.mnemonic),
            form: std::mem::take(&mut self.head.form),
            operands,
            distilled: std::mem::take(&mut self.head.distilled),
            terminator: self.head.dinst.terminator,
            fixed_mask: self.fixed_mask,
            fixed_value: self.fixed_value,
            inferred: self.inferred,
            ignored,
            fields,
            tables: std::mem::take(&mut self.tables),
            modifiers: vec![],
            float_by: std::mem::take(&mut self.head.float_by),
            file: self.file.clone(),
            line: self.head.line,
            distilled_line: self.head.distilled_line,
            layout_lines: [0; 4],
            conventions: None,
        };
        v.modifiers = modifier_order(p, &v, &self.head.heading_mods, &self.head.dinst).map_err(|m| self.err(self.head.line, m))?;
        if let Some((m, _)) = v.float_by.iter().find(|(m, _)| !printable_modifiers(&v).contains(m)) {
            return Err(self.err(self.head.line, format!("floats: '{m}' is not a modifier this variant prints")));
        }
        Ok(v)
    }
}

/// Every modifier token the variant can print: fixed ones, flags' names, group rows' tokens.
fn printable_modifiers(v: &Variant) -> Vec<String> {
    let mut out = vec![];
    for slot in &v.modifiers {
        match slot {
            ModSlot::Fixed { text } => out.push(text.clone()),
            ModSlot::Flag { field } => out.push(v.fields[*field].name.clone()),
            ModSlot::Group { field, .. } => {
                let rows = v.field_table(*field).map(|t| t.rows.as_slice()).unwrap_or_default();
                out.extend(rows.iter().flat_map(|r| r.name.split('.').map(str::to_string)));
            }
        }
    }
    out
}

/// The page operand of an operand-modifier field named `operand K modi`: how a page
/// writes one whose bits are not one span (HFMA2's `[60, 61, 86]`), each span so named and
/// read as one field; a plain `modi` span cannot continue elsewhere.
fn split_modi_operand(name: &str) -> Option<usize> {
    name.strip_prefix("operand ")?.strip_suffix(" modi")?.parse().ok()
}

/// Operand selectors print after an operand (`R0.H1`), not after the mnemonic.
fn is_selector(s: &str) -> bool {
    matches!(s, "H0" | "H1" | "B0" | "B1" | "B2" | "B3")
}

/// Which operand does each `cABS`/`cNEG`/`cNOT`/selector flag belong to? The page does not
/// say. Rules, in order (each assumption is a warning, and validation checks it):
/// 0. a `cNOT` directly above a `P`/`UP` operand's field negates that predicate;
/// 1. flags directly before a plain `modi` belong to that operand-modifier table's operand;
/// 2. the SM70+ ALU slots (as Mesa NAK encodes them): 72/73 → the operand whose value
///    starts in bits 24–31, 62/63 → in bits 32–61 (a register, uniform register or
///    constant in the second source slot, wherever the form prints it), 74/75 and (fp16
///    ops such as HFMA2, checked with nvdisasm) a `cABS`/`cNEG` at 83/84 → in 64–71;
/// 3. otherwise, the k-th occurrence of a name → the k-th source operand.
struct FlagOwners<'a> {
    page_ops: &'a [Vec<usize>],
    kinds: &'a [OperandKind],
    /// The head page operand of each form operand that can take flags (not immediates).
    sources: Vec<usize>,
    /// Occurrences so far of each flag name (rule 3).
    counts: Vec<(String, usize)>,
}

impl<'a> FlagOwners<'a> {
    fn new(page_ops: &'a [Vec<usize>], kinds: &'a [OperandKind]) -> Self {
        let sources: Vec<usize> = page_ops
            .iter()
            .zip(kinds)
            .skip(1)
            .filter(|(_, k)| !matches!(k, OperandKind::Imm(_) | OperandKind::Float(_) | OperandKind::Target(_)))
            .map(|(o, _)| o[0])
            .collect();
        FlagOwners { page_ops, kinds, sources, counts: vec![] }
    }

    /// The operand of flag `name` (of `role`) at `bit`, and the rule that chose it.
    fn owner(&mut self, fields: &[Field], name: &str, role: FlagRole, bit: u8) -> (Option<usize>, &'static str) {
        if let Some(o) = self.predicate_below(fields, bit).filter(|_| role == FlagRole::Not) {
            (Some(o), "directly above that predicate")
        } else if let Some(o) = before_modi(fields, bit) {
            (Some(self.base(o)), "precedes that operand's modifier table")
        } else if let Some(o) = alu_slot(fields, bit, role).filter(|&o| self.sources.contains(&self.base(o))) {
            (Some(self.base(o)), "SM70+ ALU flag slot")
        } else {
            let c = self.occurrence(name);
            (self.sources.get(c - 1).copied(), "k-th occurrence → k-th source operand")
        }
    }

    /// Rule 0: the P/UP operand whose field ends right below `bit`.
    fn predicate_below(&self, fields: &[Field], bit: u8) -> Option<usize> {
        let is_pred = |o: usize| self.page_ops.iter().zip(self.kinds).any(|(ops, k)| ops.contains(&o) && matches!(k, OperandKind::Pred | OperandKind::UPred));
        fields.iter().find_map(|f| match f.kind {
            FieldKind::Operand { page_operand } if f.bits.last().map(|&b| b + 1) == Some(bit) && is_pred(page_operand) => Some(page_operand),
            _ => None,
        })
    }

    /// The head page operand of the form operand that page operand `o` belongs to.
    fn base(&self, o: usize) -> usize {
        self.page_ops.iter().find(|ops| ops.contains(&o)).map(|ops| ops[0]).unwrap_or(o)
    }

    /// Counts one more occurrence of `name`: 1 for the first.
    fn occurrence(&mut self, name: &str) -> usize {
        match self.counts.iter_mut().find(|(n, _)| n == name) {
            Some(e) => {
                e.1 += 1;
                e.1
            }
            None => {
                self.counts.push((name.to_string(), 1));
                1
            }
        }
    }
}

/// Rule 1: scan forward from `bit` over adjacent abs/neg flags to a plain `modi`; its
/// table's page operand.
fn before_modi(fields: &[Field], bit: u8) -> Option<usize> {
    let mut b = bit + 1;
    while let Some(f) = fields.iter().find(|f| f.bits.first() == Some(&b)) {
        match &f.kind {
            FieldKind::Flag { role: FlagRole::Abs | FlagRole::Neg | FlagRole::Not, .. } => b = *f.bits.last().unwrap() + 1,
            FieldKind::OperandModifier { page_operand } => return Some(*page_operand),
            _ => return None,
        }
    }
    None
}

/// Rule 2: the page operand in the SM70+ ALU source slot that a flag at `bit` belongs to.
fn alu_slot(fields: &[Field], bit: u8, role: FlagRole) -> Option<usize> {
    match bit {
        72 | 73 => start_in(fields, 24..32),
        62 | 63 => start_in(fields, 32..62),
        74 | 75 => start_in(fields, 64..72),
        // The fp16 ALU ops (HFMA2) keep their third slot's `|…|`/`-` here (74/75 select
        // halves); an `H1` selector here is FHFMA's (SM100) and follows rule 3.
        83 | 84 if matches!(role, FlagRole::Abs | FlagRole::Neg) => start_in(fields, 64..72),
        _ => None,
    }
}

/// The operand whose value starts inside a source slot's bits (a register at 32, or a
/// constant's bank and offset anywhere in 32..62).
fn start_in(fields: &[Field], slot: std::ops::Range<u8>) -> Option<usize> {
    fields.iter().find_map(|f| match f.kind {
        FieldKind::Operand { page_operand } if f.bits.first().is_some_and(|b| slot.contains(b)) => Some(page_operand),
        _ => None,
    })
}

fn build_operands(fields: &[Field], page_ops: &[Vec<usize>], kinds: &[OperandKind], distilled: &sass::Instruction, derived: &[Derived]) -> Vec<OperandSpec> {
    page_ops
        .iter()
        .zip(kinds)
        .enumerate()
        .map(|(i, (ops, &kind))| {
            // A derived page operand reads its source's field.
            let of = |po: usize| derived.iter().find(|d| d.page_operand == po);
            let source = |po: usize| of(po).map(|d| d.source).unwrap_or(po);
            let value_fields = ops.iter().map(|&po| fields.iter().position(|f| f.kind == FieldKind::Operand { page_operand: source(po) })).collect();
            let pluses: Vec<Option<u8>> = ops.iter().map(|&po| of(po).map(|d| d.plus)).collect();
            let derived = if pluses.iter().any(Option::is_some) { pluses } else { vec![] };
            let head = ops[0];
            let flag = |want: FlagRole| {
                fields.iter().position(|f| matches!(&f.kind, FieldKind::Flag { role, page_operand: Some(o), .. } if *role == want && *o == head))
            };
            let suffix_fields: Vec<usize> = fields
                .iter()
                .enumerate()
                .filter(|(_, f)| matches!(f.kind, FieldKind::OperandModifier { page_operand } if ops.contains(&page_operand)))
                .map(|(i, _)| i)
                .collect();
            // A name without a table is the distilled line's (the form has as many operands).
            let fixed_name = (kind.is_named() && suffix_fields.is_empty())
                .then(|| distilled.operands.get(i).map(|o| sass::Operand { reuse: false, ..o.clone() }.to_string()))
                .flatten();
            let selector_fields = fields
                .iter()
                .enumerate()
                .filter(|(_, f)| matches!(&f.kind, FieldKind::Flag { role: FlagRole::Selector, page_operand: Some(o), .. } if *o == head))
                .map(|(i, _)| i)
                .collect();
            OperandSpec {
                kind,
                page_operands: ops.clone(),
                value_fields,
                derived,
                suffix_fields,
                abs_field: flag(FlagRole::Abs),
                neg_field: flag(FlagRole::Neg),
                not_field: flag(FlagRole::Not),
                selector_fields,
                fixed_suffixes: vec![],
                fixed_name,
                joined: distilled.operands.get(i).is_some_and(|o| o.joined),
                suffixes_after_bars: false,
                zero_omitted: false,
            }
        })
        .collect()
}

/// Suffixes the distilled line shows on an operand that has no suffix or selector field
/// (`PLOP3.LUT P0, P0, P0, R0.SIGN, …`) print whatever the bits: the operand's fixed
/// suffixes. Memory operands (their register suffix is in the form) and special registers
/// (the name is a table row) are left alone, as is a distilled line of another length.
fn fixed_suffixes(operands: &mut [OperandSpec], dinst: &sass::Instruction) {
    if dinst.operands.len() != operands.len() {
        return;
    }
    for (o, d) in operands.iter_mut().zip(&dinst.operands) {
        let plain = !matches!(o.kind, OperandKind::Mem(_) | OperandKind::Special);
        if plain && o.suffix_fields.is_empty() && o.selector_fields.is_empty() {
            o.fixed_suffixes = d.suffixes.clone();
        }
    }
}

/// The modifier print order, read off the distilled line (nvdisasm's text for the zero
/// word, or for a table that leaves 0 out its base row: [`crate::gen::distilled_values`]):
/// each distilled modifier is matched to the heading's fixed modifiers or to the group
/// whose zero (base) row prints it. Groups whose zero row prints nothing visible
/// (`(default)`, or a name the distilled line does not show separately) are placed by
/// group number; modifier flags go last, in bit order.
fn modifier_order(p: &mut Lines, v: &Variant, heading_mods: &[String], d: &sass::Instruction) -> Result<Vec<ModSlot>, String> {
    let mut order = ModOrder::new(v);
    order.place_distilled(heading_mods, &d.modifiers)?;
    order.place_rest(p);
    let mut flags: Vec<usize> =
        v.fields.iter().enumerate().filter(|(_, f)| matches!(&f.kind, FieldKind::Flag { role: FlagRole::Modifier, .. })).map(|(i, _)| i).collect();
    flags.sort_by_key(|&i| v.fields[i].bits[0]);
    order.placed.extend(flags.into_iter().map(|field| ModSlot::Flag { field }));
    Ok(order.placed)
}

/// The modifier slots placed so far (see [`modifier_order`]).
struct ModOrder<'a> {
    v: &'a Variant,
    /// The variant's `modi N` fields, by group number.
    groups: Vec<usize>,
    placed: Vec<ModSlot>,
    /// Groups placed so far.
    used: Vec<usize>,
}

impl<'a> ModOrder<'a> {
    fn new(v: &'a Variant) -> Self {
        let mut groups: Vec<usize> = v.fields.iter().enumerate().filter(|(_, f)| matches!(f.kind, FieldKind::Group { .. })).map(|(i, _)| i).collect();
        groups.sort_by_key(|&i| group_number(v, i));
        ModOrder { v, groups, placed: vec![], used: vec![] }
    }

    /// Places the distilled modifiers `toks`, in order: the heading's, and groups whose zero
    /// row prints the next tokens.
    fn place_distilled(&mut self, heading_mods: &[String], toks: &[String]) -> Result<(), String> {
        let mut hmods = heading_mods.iter().peekable();
        let mut i = 0;
        while i < toks.len() {
            if hmods.peek().map(|h| *h == &toks[i]).unwrap_or(false) {
                self.placed.push(ModSlot::Fixed { text: toks[i].clone() });
                hmods.next();
                i += 1;
                continue;
            }
            let Some((g, n)) = self.zero_row_at(&toks[i..]) else {
                return Err(format!("distilled modifier '{}' matches no heading modifier and no group's zero row", toks[i]));
            };
            self.placed.push(ModSlot::Group { field: g, hidden_zero: false });
            self.used.push(g);
            i += n;
        }
        if let Some(h) = hmods.next() {
            return Err(format!("heading modifier '{h}' is not in the distilled line"));
        }
        Ok(())
    }

    /// The first unplaced group whose zero row prints the tokens `toks` starts with, and how
    /// many tokens that is.
    fn zero_row_at(&self, toks: &[String]) -> Option<(usize, usize)> {
        self.groups.iter().filter(|g| !self.used.contains(g)).find_map(|&g| {
            let rt = self.v.field_table(g).and_then(|t| t.base_row())?.tokens();
            let prints = !rt.is_empty() && toks.len() >= rt.len() && toks[..rt.len()].iter().zip(&rt).all(|(a, b)| a == b);
            prints.then_some((g, rt.len()))
        })
    }

    /// Places the groups the distilled line does not show by group number: after the last
    /// placed group with a smaller number. A named zero row is hidden at zero (a warning).
    fn place_rest(&mut self, p: &mut Lines) {
        let v = self.v;
        for g in self.groups.clone() {
            if self.used.contains(&g) {
                continue;
            }
            let row0 = v.field_table(g).and_then(|t| t.row(0));
            let mut hidden_zero = false;
            if let Some(r) = row0 {
                if r.kind != RowKind::Default {
                    hidden_zero = true;
                    let n = group_number(v, g);
                    let m = format!(
                        "{}: group {n} prints '{}' at zero but the distilled line does not show it separately; at zero it prints nothing",
                        v.key, r.name
                    );
                    p.warn(v.line, rules::HIDDEN_AT_ZERO, m);
                }
            }
            let pos = self
                .placed
                .iter()
                .rposition(|s| matches!(s, ModSlot::Group { field, .. } if group_number(v, *field) < group_number(v, g)))
                .map(|x| x + 1)
                .unwrap_or_else(|| self.placed.iter().take_while(|s| matches!(s, ModSlot::Fixed { .. })).count());
            self.placed.insert(pos, ModSlot::Group { field: g, hidden_zero });
            self.used.push(g);
        }
    }
}

/// The group number of field `f` (0 unless a `modi N` field).
fn group_number(v: &Variant, f: usize) -> u32 {
    match v.fields[f].kind {
        FieldKind::Group { group } => group,
        _ => 0,
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
