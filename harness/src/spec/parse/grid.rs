//! The bit grid: a layout's index and content rows read into 128 cells, the cells into
//! field spans, and the tables under it.

use super::*;

/// 128 layout cells, each with its line, and the four layout rows' lines.
pub(super) type Layout = (Vec<(Cell, usize)>, [usize; 4]);

/// The layout: two pairs of index/content rows.
pub(super) fn read_layout(p: &mut Lines) -> Result<Layout, PageError> {
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
pub(super) fn read_tables(p: &mut Lines) -> Result<Vec<Table>, PageError> {
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
pub(super) enum Cell {
    Fixed(bool),
    Name(String),
    Empty,
    /// A cell the copy dropped (rule dropped-cell): assumed fixed 0, marked inferred.
    Dropped,
}

pub(super) fn layout_half(p: &mut Lines, il: usize, idx: &str, cl: usize, content: &str, half: usize) -> Result<Vec<(Cell, usize)>, PageError> {
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
pub(super) fn content_row(p: &Lines, cl: usize, content: &str, base: usize) -> Result<Vec<Cell>, PageError> {
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

pub(super) struct RawField {
    pub(super) name: String,
    pub(super) spans: Vec<Vec<u8>>,
    pub(super) line: usize,
}

pub(super) type Spans = (Vec<RawField>, BitSet, Word, BitSet);

/// Groups cells into spans: a name starts a span, empty cells continue it.
pub(super) fn spans(p: &mut Lines, cells: &[(Cell, usize)]) -> Result<Spans, PageError> {
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

pub(super) fn table_title(t: &str) -> Option<TableId> {
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

pub(super) fn parse_table(p: &mut Lines, tl: usize, title: &str, id: TableId) -> Result<Table, PageError> {
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
pub(super) fn read_rows(p: &mut Lines, title: &str) -> Result<(Vec<Row>, Option<usize>), PageError> {
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

pub(super) fn row_kind(name: &str) -> RowKind {
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
pub(super) fn warn_duplicate_names(p: &mut Lines, title: &str, rows: &[Row], width: usize) {
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
