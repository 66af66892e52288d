//! A discovered variant written as an ISA-viewer page (the seed format `spec::parse` reads).
//!
//! The layout is two pairs of tab-separated rows (index row `0..7` × 8, then 64 cells, least
//! significant bit first); a field's name fills its first cell and each span's first cell
//! (bit 64 starts a span), empty cells continue it; control fields carry the seeds' labels; bits 126–127 and every
//! other bit the discovery left to no field are fixed cells holding the zero word's bit.
//! Tables follow: "Modifier Group N" in group order, then "Operand K Modifiers" in the bit
//! order of their plain `modi` spans (an operand-suffix field in several spans names each
//! `operand K modi`: its table is found by number, not by order).

use super::{Discovered, FieldKind, Table};
use crate::spec::Arch;

const CONTROL_LABELS: [(&str, u8, u8); 6] = [("stall", 105, 4), ("y", 109, 1), ("r-bar", 110, 3), ("w-bar", 113, 3), ("b-mask", 116, 6), ("reuse", 122, 4)];

/// The variant key the seeds use: mnemonic and form tokens (`FFMA_R_R_I_I_R`).
pub fn key(d: &Discovered) -> String {
    let toks: Vec<String> = d.kinds.iter().map(|k| k.key_token()).collect();
    format!("{}_{}", d.mnemonic, toks.join("_"))
}

/// The 128 layout cells.
pub fn cells(d: &Discovered) -> Vec<String> {
    let mut cells: Vec<Option<String>> = vec![None; 128];
    for f in &d.fields {
        for (k, &b) in f.bits.iter().enumerate() {
            // The bits 64..127 row cannot continue a field from the row above: name it again
            // (the page reads a numbered name's spans as one field).
            let starts_span = k == 0 || f.bits[k - 1] + 1 != b || b == 64;
            cells[b as usize] = Some(if starts_span { f.name() } else { String::new() });
        }
    }
    for (name, lo, w) in CONTROL_LABELS {
        for b in lo..lo + w {
            cells[b as usize] = Some(if b == lo { name.to_string() } else { String::new() });
        }
    }
    cells.into_iter().enumerate().map(|(b, c)| c.unwrap_or_else(|| u8::from(d.zero.bit(b as u8)).to_string())).collect()
}

/// The variant heading: the mnemonic, then the distilled text's modifiers that no group's
/// base row (see [`super::base_value`]) explains (always printed, such as `B2R.WARP`). A row name may hold several
/// modifiers (`LO.U16.U8`); each explains one occurrence. Value aliases are not headings.
pub fn heading(d: &Discovered) -> String {
    let mut explained: Vec<&str> = d.tables.iter().filter_map(|t| t.iter().find(|(v, _)| *v == super::base_value(t))).flat_map(|(_, n)| n.split('.')).collect();
    explained.extend(d.value_aliases.iter().map(String::as_str));
    let mods = crate::sass::parse_instruction(&d.distilled).map(|i| i.modifiers).unwrap_or_default();
    let mut name = d.mnemonic.clone();
    for m in mods {
        match explained.iter().position(|e| *e == m) {
            Some(i) => {
                explained.remove(i);
            }
            None => name = format!("{name}.{m}"),
        }
    }
    name
}

/// One variant block: heading, form, distilled, key, layout, tables.
pub fn variant_block(d: &Discovered) -> String {
    let form: Vec<String> = d.kinds.iter().map(|k| k.form_token().into_owned()).collect();
    let index: Vec<String> = (0..64).map(|i| (i % 8).to_string()).collect();
    let index = index.join("\t");
    let c = cells(d);
    let layout = [index.clone(), c[..64].join("\t"), index, c[64..].join("\t")].join("\n");
    let form = if form.is_empty() { crate::spec::parse::NO_OPERANDS.to_string() } else { form.join(",") };
    let mut parts = vec![heading(d), form, format!("distilled: {}", d.distilled)];
    if !d.value_aliases.is_empty() {
        parts.push(format!("aliases: {}", d.value_aliases.join(" ")));
    }
    if !d.float_by.is_empty() {
        let pairs: Vec<String> = d.float_by.iter().map(|(m, f)| format!("{m}={}", f.token())).collect();
        parts.push(format!("floats: {}", pairs.join(" ")));
    }
    if !d.derived.is_empty() {
        let each: Vec<String> = d.derived.iter().map(|x| x.token()).collect();
        parts.push(format!("derived: {}", each.join(", ")));
    }
    if !d.left_out.is_empty() {
        let each: Vec<String> = d.left_out.iter().map(|x| x.token()).collect();
        parts.push(format!("left out at zero: {}", each.join(", ")));
    }
    if !d.inverted.is_empty() {
        let each: Vec<String> = d.inverted.iter().map(|&page_operand| crate::spec::Inverted { page_operand }.token()).collect();
        parts.push(format!("inverted: {}", each.join(", ")));
    }
    if !d.illegal_all_ones.is_empty() {
        let each: Vec<String> = d.illegal_all_ones.iter().map(|po| format!("operand {po}")).collect();
        parts.push(format!("illegal at all ones: {}", each.join(", ")));
    }
    if let Some(after) = &d.after_bars {
        let ops: Vec<String> = after.iter().map(usize::to_string).collect();
        parts.push(format!("suffixes after bars: {}", if ops.is_empty() { "none".to_string() } else { ops.join(" ") }));
    }
    if !d.ignored.is_empty() {
        let mut bits = d.ignored.clone();
        bits.sort_unstable();
        parts.push(format!("ignored bits: {}", crate::word::format_ranges(&bits)));
    }
    parts.extend([format!("key: {}", key(d)), layout]);
    for (n, t) in d.tables.iter().enumerate() {
        let width = d.fields.iter().find(|f| f.kind == FieldKind::Group(n as u32 + 1)).map(|f| f.bits.len()).unwrap_or(1);
        let rows: Vec<String> = t.iter().map(|(v, name)| format!("{v:0width$b}\t{name}")).collect();
        parts.push(format!("Modifier Group {}", n + 1));
        parts.push(format!("Binary\tValue\n{}", rows.join("\n")));
    }
    for (operand, width, t) in suffix_tables(d) {
        let rows: Vec<String> = t.iter().map(|(v, name)| format!("{v:0width$b}\t{name}")).collect();
        parts.push(format!("Operand {operand} Modifiers"));
        parts.push(format!("Binary\tValue\n{}", rows.join("\n")));
    }
    parts.join("\n\n") + "\n"
}

/// The operand-suffix tables (page operand, width, rows) in the order of their fields' bits:
/// the page gives the k-th plain `modi` span the k-th "Operand K Modifiers" table.
fn suffix_tables(d: &Discovered) -> Vec<(usize, usize, &Table)> {
    let mut out: Vec<(u8, usize, usize, &Table)> = d
        .fields
        .iter()
        .filter_map(|f| match &f.kind {
            FieldKind::Suffix { operand, table } => Some((f.bits[0], *operand, f.bits.len(), table)),
            _ => None,
        })
        .collect();
    out.sort_by_key(|x| x.0);
    out.into_iter().map(|(_, o, w, t)| (o, w, t)).collect()
}

/// Rows of every table the page writes (modifier groups and operand suffixes).
pub fn table_rows(d: &Discovered) -> usize {
    d.tables.iter().map(Vec::len).sum::<usize>() + suffix_tables(d).iter().map(|t| t.2.len()).sum::<usize>()
}

/// A whole page for variants of one instruction and architecture.
pub fn render(name: &str, description: Option<&str>, variants: &[Discovered]) -> String {
    let arch = variants.first().map(|d| d.arch).unwrap_or(Arch(90));
    let blocks: Vec<String> = variants.iter().map(variant_block).collect();
    render_blocks(name, description, arch, &blocks)
}

/// A whole page from variant blocks already rendered.
pub fn render_blocks(name: &str, description: Option<&str>, arch: Arch, blocks: &[String]) -> String {
    let gpu = match arch.0 {
        90 => "H100",
        100 => "B200",
        120 => "RTX 5090",
        _ => "GPU",
    };
    let mut head = vec!["NVIDIA ISA Viewer".to_string(), name.to_string()];
    head.extend(description.map(str::to_string));
    let noun = if blocks.len() == 1 { "variant" } else { "variants" };
    head.push(format!("{} {noun} on {arch} ({gpu})", blocks.len()));
    head.join("\n\n") + "\n\n" + &blocks.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::Field;
    use crate::spec::OperandKind;
    use crate::word::Word;

    /// An operand-suffix field in two spans reads back as one field with its table, while a
    /// plain `modi` span between them keeps the next table; a suffix the distilled line
    /// shows on an operand without suffix bits is the operand's fixed suffix.
    #[test]
    fn split_suffix_fields_and_fixed_suffixes_read_back() {
        let table = |n: u64| (0..n).map(|v| (v, if v == 0 { "(default)".to_string() } else { format!("S{v}") })).collect::<Table>();
        let f = |kind, bits: Vec<u8>| Field { kind, bits };
        let d = Discovered {
            arch: Arch(90),
            mnemonic: "FOO".into(),
            kinds: vec![OperandKind::Reg, OperandKind::Reg, OperandKind::Reg, OperandKind::Reg],
            zero: Word(0x100),
            distilled: "@P0 FOO R0, R0, R0, R0.SIGN ;".into(),
            fields: vec![
                f(FieldKind::Pred, (12..16).collect()),
                f(FieldKind::Operand(0), (16..24).collect()),
                f(FieldKind::Operand(1), (24..32).collect()),
                f(FieldKind::Operand(2), (32..40).collect()),
                f(FieldKind::Operand(3), (64..72).collect()),
                f(FieldKind::Suffix { operand: 1, table: table(8) }, vec![40, 41, 90]),
                f(FieldKind::Suffix { operand: 2, table: table(4) }, vec![50, 51]),
            ],
            ..Discovered::empty(Arch(90))
        };
        let text = render("FOO", None, std::slice::from_ref(&d));
        assert_eq!(text.matches("operand 1 modi").count(), 2, "{text}");
        let page = crate::spec::parse_page("foo.txt", text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let v = &page.variants[0];
        let bits = |k: usize| v.operands[k].suffix_fields.iter().map(|&i| v.fields[i].bits.clone()).collect::<Vec<_>>();
        assert_eq!((bits(1), bits(2)), (vec![vec![40, 41, 90]], vec![vec![50, 51]]));
        assert_eq!(v.field_table(v.operands[1].suffix_fields[0]).map(|t| t.rows.len()), Some(8));
        assert_eq!(v.operands[3].fixed_suffixes, ["SIGN"]);
        assert!(v.operands[..3].iter().all(|o| o.fixed_suffixes.is_empty()));
    }

    /// The `suffixes after bars:` line reads back into each operand's placement; a page
    /// without it keeps the fp16x2 mnemonic rule; a line naming an operand without `cABS`
    /// or a word that is not a number is an error with its line.
    #[test]
    fn suffix_placement_reads_back() {
        let table = (0..4).map(|v| (v, if v == 0 { "(default)".to_string() } else { format!("H{v}") })).collect::<Table>();
        let f = |kind, bits: Vec<u8>| Field { kind, bits };
        let d = |mnemonic: &str, after_bars: Option<Vec<usize>>| Discovered {
            arch: Arch(100),
            mnemonic: mnemonic.into(),
            kinds: vec![OperandKind::Reg, OperandKind::Reg, OperandKind::Reg],
            zero: Word(0x100),
            distilled: format!("@P0 {mnemonic} R0, R0, R0 ;"),
            fields: vec![
                f(FieldKind::Pred, (12..16).collect()),
                f(FieldKind::Operand(0), (16..24).collect()),
                f(FieldKind::Operand(1), (24..32).collect()),
                f(FieldKind::Operand(2), (32..40).collect()),
                f(FieldKind::Abs(1), vec![73]),
                f(FieldKind::Abs(2), vec![62]),
                f(FieldKind::Suffix { operand: 1, table: table.clone() }, vec![40, 41]),
                f(FieldKind::Suffix { operand: 2, table: table.clone() }, vec![50, 51]),
            ],
            after_bars,
            ..Discovered::empty(Arch(100))
        };
        let read = |d: &Discovered| {
            let text = render(&d.mnemonic, None, std::slice::from_ref(d));
            crate::spec::parse_page("foo.txt", text.as_bytes()).map(|p| p.variants[0].operands.iter().map(|o| o.suffixes_after_bars).collect::<Vec<_>>())
        };
        assert_eq!(read(&d("FOO", Some(vec![2]))).unwrap(), [false, false, true]);
        assert_eq!(read(&d("HFOO2", Some(vec![]))).unwrap(), [false, false, false]);
        // No line: the rule pages relied on before the placement was learned.
        assert_eq!(read(&d("HFOO2", None)).unwrap(), [true, true, true]);
        assert_eq!(read(&d("FOO", None)).unwrap(), [false, false, false]);
        let e = read(&d("FOO", Some(vec![0]))).unwrap_err();
        let line = render("FOO", None, &[d("FOO", Some(vec![0]))]).lines().position(|l| l.starts_with("suffixes after bars:")).map(|i| i + 1);
        assert!(e.message.contains("operand 0 has no cABS") && Some(e.line) == line, "{e}");
        let text = render("FOO", None, &[d("FOO", Some(vec![1]))]).replace("suffixes after bars: 1", "suffixes after bars: one");
        let e = crate::spec::parse_page("foo.txt", text.as_bytes()).unwrap_err();
        assert!(e.message.contains("expected 'suffixes after bars:"), "{e}");
        let printed = |vals: &[(usize, u64)]| {
            let p = crate::spec::parse_page("foo.txt", render("FOO", None, &[d("FOO", Some(vec![2]))]).as_bytes()).unwrap();
            let v = &p.variants[0];
            let mut values = crate::codec::Values::zero(v.fields.len());
            for &(bit, x) in vals {
                values.set(v.fields.iter().position(|f| f.bits[0] == bit as u8).unwrap(), x);
            }
            crate::codec::print(v, &values).to_string()
        };
        assert_eq!(printed(&[(73, 1), (40, 1), (62, 1), (50, 3)]), "@P0 FOO R0, |R0.H1|, |R0|.H3 ;");
        assert_eq!(printed(&[(62, 1)]), "@P0 FOO R0, R0, |R0| ;");
    }

    /// A group whose table leaves 0 out (a one-hot pair: `01` F16, `10` F32, `00` illegal):
    /// the base word takes the lowest row, the distilled line prints it, the heading keeps
    /// only the fixed modifier, and the page read back places the group before it, prints
    /// both rows and starts its base values at that row.
    #[test]
    fn a_group_without_a_zero_row_reads_back_from_its_base_row() {
        let f = |kind, bits: Vec<u8>| Field { kind, bits };
        let d = Discovered {
            arch: Arch(90),
            mnemonic: "F2F".into(),
            kinds: vec![OperandKind::Reg, OperandKind::Reg],
            zero: Word(0x310),
            distilled: "@P0 F2F.F16.F64 R0, R0 ;".into(),
            fields: vec![
                f(FieldKind::Pred, (12..16).collect()),
                f(FieldKind::Operand(0), (16..24).collect()),
                f(FieldKind::Operand(1), (32..40).collect()),
                f(FieldKind::Group(1), vec![75, 76]),
            ],
            tables: vec![vec![(1, "F16".into()), (2, "F32".into())]],
            ..Discovered::empty(Arch(90))
        };
        assert_eq!(d.base(), Word(0x310 | 1 << 75));
        assert_eq!(heading(&d), "F2F.F64");
        let text = render("F2F", None, std::slice::from_ref(&d));
        let page = crate::spec::parse_page("f2f.txt", text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let v = &page.variants[0];
        let g = v.fields.iter().position(|f| f.bits == [75, 76]).unwrap();
        let base = crate::gen::distilled_values(v);
        assert_eq!((base.get(g), crate::gen::base_values(v).get(g)), (1, 1));
        assert_eq!(crate::codec::print(v, &base).to_string(), d.distilled);
        let mut f32 = base;
        f32.set(g, 2);
        assert_eq!(crate::codec::print(v, &f32).to_string(), "@P0 F2F.F32.F64 R0, R0 ;");
        assert!(crate::discover::read_back(&crate::discover::probe::Seed::new(Arch(90), &d.distilled).unwrap(), &d).is_empty());
        let spec = crate::spec::Spec { pages: vec![page.clone()] };
        let c = crate::codec::Codec::new(&spec);
        let (_, w) = crate::codec::asm::assemble(&c, Arch(90), "@P0 F2F.F32.F64 R1, R2 ;", Word::ZERO).unwrap();
        assert_eq!((w.bit(75), w.bit(76), w.0 >> 16 & 0xff, w.0 >> 32 & 0xff), (false, true, 1, 2));
    }
}
