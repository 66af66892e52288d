//! Page edits applied to page text: what `fix` writes and what validation checks a
//! correction with (the edited text is parsed again, so an edit means what the parser
//! reads, nothing else). Lines nothing touches stay byte-identical: banner, description,
//! order, spacing, CRLF, a missing final newline.

use super::model::{Page, Variant};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One machine-applicable edit of a page (JSON-tagged by `edit`). Every edit names the
/// variant by its key; `fix` applies them to the page text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "snake_case")]
// `Conventions` carries a whole stored form; edits are few per finding (a handful of
// values, never bulk data), so the size matters less than plain matching on `form`.
#[allow(clippy::large_enum_variant)]
pub enum Edit {
    /// The field named `field` (as the page writes it) occupies exactly `bits` (value bits
    /// in increasing bit order); bits it gives up become fixed 0, bits it takes stop being
    /// fixed or another field's.
    FieldBits {
        /// The key of the variant it edits.
        variant: String,
        /// The field's name as the page writes it (`operand 2`).
        field: String,
        /// The bits it occupies, value bits in increasing bit order.
        bits: Vec<u8>,
    },
    /// A bit the page calls fixed is a one-bit field named `name` (`cABS`, `cNEG`, …).
    FixedToFlag {
        /// The key of the variant it edits.
        variant: String,
        /// The bit (0–127).
        bit: u8,
        /// The new field's name.
        name: String,
    },
    /// The fixed bit `bit` has the value `value` (an opcode bit the page gets wrong).
    FixedBit {
        /// The key of the variant it edits.
        variant: String,
        /// The bit (0–127).
        bit: u8,
        /// Its value (`true`: 1).
        value: bool,
    },
    /// The one-bit field at `bit` is named `to`, not `from` (e.g. `cABS` ↔ `cNEG`).
    RenameFlag {
        /// The key of the variant it edits.
        variant: String,
        /// The bit (0–127).
        bit: u8,
        /// The name the page gives it.
        from: String,
        /// The right name.
        to: String,
    },
    /// Row `value` of the table titled `table` is named `name` (added when the page omits it).
    RowName {
        /// The key of the variant it edits.
        variant: String,
        /// The table's title (`Modifier Group 1`).
        table: String,
        /// The row's field value.
        value: u64,
        /// The table's row width in bits: how many binary digits the row is written with.
        width: u32,
        /// The name the page gives the row; `None` when the page leaves the row out.
        from: Option<String>,
        /// The right name.
        name: String,
    },
    /// The table titled `table` is rewritten with rows of `width` bits (value, name): what
    /// a field that takes over another's bits needs.
    Table {
        /// The key of the variant it edits.
        variant: String,
        /// The table's title (`Modifier Group 1`), kept.
        table: String,
        /// The new rows' width in bits.
        width: u32,
        /// The new rows, (value, name) each, in the order written.
        rows: Vec<(u64, String)>,
    },
    /// The table titled `table` goes (its field's bits went to another field).
    RemoveTable {
        /// The key of the variant it edits.
        variant: String,
        /// The table's title.
        table: String,
    },
    /// The variant heading is `to`, not `from` (e.g. `I2F.???0` → `I2F`).
    Heading {
        /// The key of the variant it edits.
        variant: String,
        /// The heading the page has.
        from: String,
        /// The right heading.
        to: String,
    },
    /// The `distilled:` line is `to`, not `from`.
    Distilled {
        /// The key of the variant it edits.
        variant: String,
        /// The text after `distilled:` on the page.
        from: String,
        /// The right text.
        to: String,
    },
    /// The form's printing conventions are these (stored in the page folder's
    /// `conventions.json`, not in the page text: see [`super::conventions`]).
    Conventions {
        /// The key of the variant it edits.
        variant: String,
        /// The form's entry in the file's `forms`.
        form: super::conventions::StoredForm,
        /// Its control table, stored under the id `form.control` names.
        control: super::conventions::StoredControl,
    },
}

impl Edit {
    /// The edit in words, for reports (plain text: callers escape it).
    pub fn describe(&self) -> String {
        let q = |s: &str| format!("\u{201c}{s}\u{201d}");
        match self {
            Edit::FieldBits { field, bits, .. } => format!("field {} occupies bits {}", q(field), crate::word::format_ranges(bits)),
            Edit::FixedToFlag { bit, name, .. } => format!("fixed bit {bit} is the one-bit field {}", q(name)),
            Edit::FixedBit { bit, value, .. } => format!("bit {bit} is fixed {}, not {}", u8::from(*value), u8::from(!*value)),
            Edit::RenameFlag { bit, from, to, .. } => format!("the one-bit field at bit {bit} is {}, not {}", q(to), q(from)),
            Edit::RowName { table, value, width, from, name, .. } => {
                let row = format!("row {value} (0b{value:0w$b})", w = *width as usize);
                match from {
                    Some(from) => format!("{row} of table {} is {}, not {}", q(table), q(name), q(from)),
                    None => format!("{row} of table {} is missing: it is {}", q(table), q(name)),
                }
            }
            Edit::Table { table, width, rows, .. } => {
                let list: Vec<String> = rows.iter().map(|(x, n)| format!("{x:0w$b} {n}", w = *width as usize)).collect();
                format!("table {} has {width}-bit rows: {}", q(table), list.join(", "))
            }
            Edit::RemoveTable { table, .. } => format!("table {} goes", q(table)),
            Edit::Heading { from, to, .. } => format!("the heading is {}, not {}", q(to), q(from)),
            Edit::Distilled { from, to, .. } => format!("the distilled line is {}, not {}", q(to), q(from)),
            Edit::Conventions { form, .. } => format!("the stored conventions are {}", serde_json::to_string(form).unwrap_or_default()),
        }
    }
}

/// One layout cell as the page writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Owner {
    Fixed(bool),
    /// Index into the layout's field names (a field per index; names may repeat).
    Field(usize),
}

/// A variant's 128 cells, editable.
struct Layout {
    owners: Vec<Owner>,
    names: Vec<String>,
}

impl Layout {
    fn of(v: &Variant) -> Layout {
        let mut owners: Vec<Owner> = (0..128u8).map(|b| Owner::Fixed(v.fixed_value.bit(b))).collect();
        for (i, f) in v.fields.iter().enumerate() {
            for &b in &f.bits {
                owners[b as usize] = Owner::Field(i);
            }
        }
        Layout { owners, names: v.fields.iter().map(|f| f.name.clone()).collect() }
    }

    fn apply(&mut self, e: &Edit) -> Result<(), LayoutClash> {
        match e {
            Edit::FieldBits { field, bits, .. } => {
                let id = self.names.iter().position(|n| n == field).ok_or_else(|| LayoutClash::NoField(field.clone()))?;
                for o in self.owners.iter_mut().filter(|o| **o == Owner::Field(id)) {
                    *o = Owner::Fixed(false);
                }
                for &b in bits {
                    self.owners[b as usize] = Owner::Field(id);
                }
            }
            Edit::FixedToFlag { bit, name, .. } => {
                if !matches!(self.owners[*bit as usize], Owner::Fixed(_)) {
                    return Err(LayoutClash::NotFixed(*bit));
                }
                self.names.push(name.clone());
                self.owners[*bit as usize] = Owner::Field(self.names.len() - 1);
            }
            Edit::FixedBit { bit, value, .. } => match self.owners[*bit as usize] {
                Owner::Fixed(_) => self.owners[*bit as usize] = Owner::Fixed(*value),
                Owner::Field(_) => return Err(LayoutClash::NotFixed(*bit)),
            },
            Edit::RenameFlag { bit, to, .. } => match self.owners[*bit as usize] {
                Owner::Field(id) => self.names[id] = to.clone(),
                Owner::Fixed(_) => return Err(LayoutClash::NotAFlag(*bit)),
            },
            _ => {}
        }
        Ok(())
    }

    /// The content row of one half: a name where a field's span starts, empty cells after.
    fn row(&self, half: usize) -> String {
        (half * 64..half * 64 + 64)
            .map(|b| match &self.owners[b] {
                Owner::Fixed(x) => u8::from(*x).to_string(),
                // Each half's row names the field at its first cell: the parser does not
                // continue a field from the bits 0..63 row into the 64..127 row.
                Owner::Field(id) if b % 64 > 0 && self.owners[b - 1] == Owner::Field(*id) => String::new(),
                Owner::Field(id) => self.names[*id].clone(),
            })
            .collect::<Vec<_>>()
            .join("\t")
    }
}

fn index_row() -> String {
    (0..64).map(|i| (i % 8).to_string()).collect::<Vec<_>>().join("\t")
}

fn variant_of<'p>(page: &'p Page, key: &str) -> Result<&'p Variant, EditError> {
    page.variants.iter().find(|v| v.key == key).ok_or_else(|| EditError::NoVariant { file: page.file.clone(), variant: key.to_string() })
}

fn edit_variant(e: &Edit) -> &str {
    match e {
        Edit::FieldBits { variant, .. }
        | Edit::FixedToFlag { variant, .. }
        | Edit::FixedBit { variant, .. }
        | Edit::RenameFlag { variant, .. }
        | Edit::RowName { variant, .. }
        | Edit::Table { variant, .. }
        | Edit::RemoveTable { variant, .. }
        | Edit::Heading { variant, .. }
        | Edit::Distilled { variant, .. }
        | Edit::Conventions { variant, .. } => variant,
    }
}

/// Replacement lines by 1-based line number (one line may become several).
type Lines = BTreeMap<usize, Vec<String>>;

/// Edits that do not fit the page they are for (a correction proposed for another page).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The page has no variant with the edit's key.
    #[error("{file}: no variant '{variant}'")]
    NoVariant {
        /// The page's file name.
        file: String,
        /// The key the edit names.
        variant: String,
    },
    /// The variant has no table with the edit's title.
    #[error("{variant}: no table '{table}'")]
    NoTable {
        /// The variant's key.
        variant: String,
        /// The title the edit names.
        table: String,
    },
    /// A layout edit the variant's layout contradicts.
    #[error("{variant}: {clash}")]
    Layout {
        /// The variant's key.
        variant: String,
        /// How it contradicts it.
        clash: LayoutClash,
    },
}

/// A layout edit that the variant's bit layout contradicts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutClash {
    /// No field has the name an [`Edit::FieldBits`] gives (that name).
    #[error("no field '{0}'")]
    NoField(String),
    /// The bit an [`Edit::FixedToFlag`] or [`Edit::FixedBit`] names is a field's (that
    /// bit).
    #[error("bit {0} is a field's, not fixed")]
    NotFixed(u8),
    /// The bit an [`Edit::RenameFlag`] names is fixed (that bit).
    #[error("bit {0} is fixed, not a flag")]
    NotAFlag(u8),
}

fn table_edit(v: &Variant, e: &Edit, out: &mut Lines) -> Result<(), EditError> {
    let Edit::RowName { table, value, width, name, .. } = e else { return Ok(()) };
    let t = v.tables.iter().find(|t| &t.title == table).ok_or_else(|| EditError::NoTable { variant: v.key.clone(), table: table.clone() })?;
    let line = format!("{:0w$b}\t{name}", value, w = *width as usize);
    match t.rows.iter().find(|r| r.value == *value) {
        Some(r) => {
            out.insert(r.line, vec![line]);
        }
        None => {
            // After the last listed row below the value, or else after the header line: the
            // line before the first row (a blank line may stand between title and header).
            let header = t.rows.iter().map(|r| r.line).min().map_or(t.line + 1, |first| first - 1);
            let after = t.rows.iter().filter(|r| r.value < *value).map(|r| r.line).max().unwrap_or(header);
            out.entry(after).or_insert_with(|| vec![String::new()]).push(line);
        }
    }
    Ok(())
}

/// Rewrites or removes a whole table: its title line through its last row (and, when it
/// goes, the blank line before it).
fn table_rewrite(v: &Variant, e: &Edit, out: &mut Lines) -> Result<(), EditError> {
    let (Edit::Table { table, .. } | Edit::RemoveTable { table, .. }) = e else { return Ok(()) };
    let t = v.tables.iter().find(|t| &t.title == table).ok_or_else(|| EditError::NoTable { variant: v.key.clone(), table: table.clone() })?;
    let last = t.rows.iter().map(|r| r.line).max().unwrap_or(t.line);
    for l in t.line..=last {
        out.insert(l, vec![]);
    }
    match e {
        Edit::Table { width, rows, .. } => {
            let mut block = vec![t.title.clone(), String::new(), "Binary\tValue".to_string()];
            block.extend(rows.iter().map(|(x, n)| format!("{x:0w$b}\t{n}", w = *width as usize)));
            out.insert(t.line, block);
        }
        _ => {
            if t.line > 1 {
                out.entry(t.line - 1).or_default();
            }
        }
    }
    Ok(())
}

fn variant_edits(v: &Variant, edits: &[&Edit], out: &mut Lines) -> Result<(), EditError> {
    let mut layout = Layout::of(v);
    let mut layout_changed = false;
    for e in edits {
        match e {
            Edit::FieldBits { .. } | Edit::FixedToFlag { .. } | Edit::FixedBit { .. } | Edit::RenameFlag { .. } => {
                layout.apply(e).map_err(|clash| EditError::Layout { variant: v.key.clone(), clash })?;
                layout_changed = true;
            }
            Edit::RowName { .. } => table_edit(v, e, out)?,
            Edit::Table { .. } | Edit::RemoveTable { .. } => table_rewrite(v, e, out)?,
            Edit::Heading { to, .. } => {
                out.insert(v.line, vec![to.clone()]);
            }
            Edit::Distilled { to, .. } => {
                out.insert(v.distilled_line, vec![format!("distilled: {to}")]);
            }
            // Stored beside the page, not in it: see `apply_conventions`.
            Edit::Conventions { .. } => {}
        }
    }
    if layout_changed {
        let [i0, c0, i1, c1] = v.layout_lines;
        out.insert(i0, vec![index_row()]);
        out.insert(c0, vec![layout.row(0)]);
        out.insert(i1, vec![index_row()]);
        out.insert(c1, vec![layout.row(1)]);
    }
    Ok(())
}

/// `text` (the page `page` was parsed from) with `edits` applied.
pub fn apply(text: &str, page: &Page, edits: &[Edit]) -> Result<String, EditError> {
    let mut by_variant: BTreeMap<&str, Vec<&Edit>> = BTreeMap::new();
    for e in edits {
        by_variant.entry(edit_variant(e)).or_default().push(e);
    }
    let mut out: Lines = BTreeMap::new();
    for (key, es) in by_variant {
        variant_edits(variant_of(page, key)?, &es, &mut out)?;
    }
    let mut result: Vec<String> = vec![];
    for (i, line) in text.split('\n').enumerate() {
        let cr = if line.ends_with('\r') { "\r" } else { "" };
        match out.get(&(i + 1)) {
            Some(new) => {
                for (k, l) in new.iter().enumerate() {
                    // An insertion keeps the original line first (marked by an empty entry).
                    if k == 0 && l.is_empty() && new.len() > 1 {
                        result.push(line.to_string());
                    } else {
                        result.push(format!("{l}{cr}"));
                    }
                }
            }
            None => result.push(line.to_string()),
        }
    }
    Ok(result.join("\n"))
}

/// The conventions file `file` (of the folder of the pages the edits are for) with every
/// [`Edit::Conventions`] of `edits` applied (forms of architecture `arch`).
pub fn apply_conventions(file: &mut super::conventions::ConventionsFile, arch: super::model::Arch, edits: &[Edit]) {
    for e in edits {
        if let Edit::Conventions { variant, form, control } = e {
            file.controls.insert(form.control.clone(), control.clone());
            file.forms.insert(super::conventions::form_key(arch, variant), form.clone());
        }
    }
    file.prune();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row missing below every listed one goes after the table's header, not before it
    /// (the title is followed by a blank line, then the header).
    #[test]
    fn a_field_over_bits_63_and_64_is_named_again_at_bit_64() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/isa/sm90/003_ab0fe5b2f4c60028.txt");
        let page = crate::spec::parse_page("dfma.txt", &std::fs::read(path).unwrap()).unwrap();
        let mut layout = Layout::of(&page.variants[0]);
        let id = layout.names.iter().position(|n| n == "operand 3").unwrap();
        layout.owners[63] = Owner::Field(id);
        let (low, high) = (layout.row(0), layout.row(1));
        assert_eq!(low.split('\t').nth(63), Some("operand 3"));
        assert_eq!(high.split('\t').next(), Some("operand 3"), "{high}");
        assert_eq!(high.split('\t').nth(1), Some(""));
    }

    #[test]
    fn a_missing_lowest_row_is_added_after_the_header() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/isa/sm90/003_ab0fe5b2f4c60028.txt");
        let original = std::fs::read_to_string(path).unwrap();
        let row = "00\t(default)\n";
        let at = original.find(&format!("Binary\tValue\n{row}")).expect("DFMA's first group table") + "Binary\tValue\n".len();
        let without = format!("{}{}", &original[..at], &original[at + row.len()..]);
        let page = crate::spec::parse_page("dfma.txt", without.as_bytes()).unwrap();
        let v = &page.variants[0];
        let table = v.tables[0].title.clone();
        let e = Edit::RowName { variant: v.key.clone(), table, value: 0, width: 2, from: None, name: "(default)".into() };
        let text = apply(&without, &page, &[e]).unwrap();
        assert!(text == original, "{}", &text[at - 40..at + 40]);
    }
}
