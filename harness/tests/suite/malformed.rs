//! Malformed pages: each one is rejected with a `PageError` that names the line and what
//! was expected. Pages are built by corrupting one spot of a real seed page (line numbers
//! below are those of `corpus/isa/sm90/003_ab0fe5b2f4c60028.txt`, the DFMA page), or are
//! tiny hand-made texts. A seeded mutation run checks that no input makes the parser (or
//! the codec built from an accepted page) panic.

use sass_harness::codec::{self, Codec, Values};
use sass_harness::gen::Rng;
use sass_harness::oracle::tools::repo_root;
use sass_harness::spec::{parse::rules, parse_page, Page, PageError, Spec};
use sass_harness::word::Word;

const DFMA: &str = "corpus/isa/sm90/003_ab0fe5b2f4c60028.txt";
const SEEDS: [&str; 4] =
    ["corpus/isa/sm100/000_dd4eba16d4788e68.txt", "corpus/isa/sm100/001_5878eccde2420d5f.txt", "corpus/isa/sm100/002_0a5fb5177dae0430.txt", DFMA];

// DFMA page landmarks (1-based line numbers).
// Header.
const L_NAME: usize = 1;
const L_COUNT: usize = 5;
// Variant 1: DFMA_R_R_R_R (index rows of 63 cells: one dropped cell, repaired).
const V1_HEADING: usize = 7;
const V1_FORM: usize = 9;
const V1_DISTILLED: usize = 11;
const V1_KEY: usize = 13;
const V1_IDX0: usize = 15;
const V1_CONTENT0: usize = 16;
const V1_TABLE: usize = 20;
const V1_ROWS: [usize; 4] = [23, 24, 25, 26];
// Variant 2: DFMA_R_R_R_F (clean 64-cell index rows; first content row cut short at 33).
const V2_HEADING: usize = 28;
const V2_KEY: usize = 34;
const V2_IDX0: usize = 36;
const V2_CONTENT0: usize = 37;
const V2_CONTENT1: usize = 39;
const V2_TABLE: usize = 41;
const V2_HEADER: usize = 43;
const V2_ROWS: [usize; 4] = [44, 45, 46, 47];

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo_root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn dfma() -> String {
    read(DFMA)
}

fn lines(text: &str) -> Vec<String> {
    text.split('\n').map(str::to_string).collect()
}

/// Replaces line `n` (1-based).
fn set_line(text: &str, n: usize, new: &str) -> String {
    let mut ls = lines(text);
    assert!(n >= 1 && n <= ls.len(), "line {n} out of range");
    ls[n - 1] = new.to_string();
    ls.join("\n")
}

/// Edits line `n` with `f`.
fn edit_line(text: &str, n: usize, f: impl FnOnce(&str) -> String) -> String {
    let old = lines(text)[n - 1].clone();
    let new = f(&old);
    assert_ne!(old, new, "edit of line {n} changed nothing");
    set_line(text, n, &new)
}

/// Replaces `from` with `to` in line `n`, once; the line must contain `from`.
fn replace_in_line(text: &str, n: usize, from: &str, to: &str) -> String {
    edit_line(text, n, |l| {
        assert!(l.contains(from), "line {n} lacks '{from}': {l}");
        l.replacen(from, to, 1)
    })
}

/// The first `n` lines, joined with newlines (no final newline).
fn first_lines(text: &str, n: usize) -> String {
    lines(text)[..n].join("\n")
}

fn cells(line: &str) -> Vec<String> {
    line.split('\t').map(str::to_string).collect()
}

fn parse(text: &str) -> Result<Page, PageError> {
    parse_page("bad.txt", text.as_bytes())
}

/// The page must be rejected at `line` with a message containing every piece of `want`.
#[track_caller]
fn rejects_bytes(bytes: &[u8], line: usize, want: &[&str]) -> PageError {
    let e = match parse_page("bad.txt", bytes) {
        Ok(p) => panic!("accepted a malformed page ({} variants, warnings {:#?})", p.variants.len(), p.warnings),
        Err(e) => e,
    };
    assert_eq!(e.file, "bad.txt");
    assert_eq!(e.line, line, "wrong line for: {e}");
    for w in want {
        assert!(e.message.contains(w), "message lacks '{w}': {e}");
    }
    // Display: file:line: message.
    assert_eq!(e.to_string(), format!("bad.txt:{line}: {}", e.message));
    e
}

#[track_caller]
fn rejects(text: &str, line: usize, want: &[&str]) -> PageError {
    rejects_bytes(text.as_bytes(), line, want)
}

#[test]
fn the_base_page_parses() {
    // The edits below start from a page that parses; otherwise they prove nothing.
    let p = parse(&dfma()).expect("DFMA page parses");
    assert_eq!(p.variants.len(), 9);
    assert_eq!(p.variants[0].key, "DFMA_R_R_R_R");
    assert_eq!(p.variants[0].line, V1_HEADING);
    assert_eq!(p.variants[1].key, "DFMA_R_R_R_F");
    assert_eq!(p.variants[1].line, V2_HEADING);
    assert_eq!(p.variants[0].tables[0].line, V1_TABLE);
    assert_eq!(p.variants[1].tables[0].line, V2_TABLE);
    assert_eq!(p.variants[1].tables[0].rows[0].line, V2_ROWS[0]);
    let t = dfma();
    let ls = lines(&t);
    assert_eq!(ls[L_NAME - 1], "DFMA");
    assert_eq!(ls[L_COUNT - 1], "9 variants on SM90 (H100)");
    assert_eq!(cells(&ls[V1_IDX0 - 1]).len(), 63);
    assert_eq!(cells(&ls[V2_IDX0 - 1]).len(), 64);
    assert_eq!(cells(&ls[V2_CONTENT0 - 1]).len(), 33);
    assert_eq!(cells(&ls[V2_CONTENT1 - 1]).len(), 64);
}

// ---- Whole-file problems -------------------------------------------------------------

#[test]
fn empty_file() {
    rejects("", 1, &["unexpected end of page", "instruction name"]);
}

#[test]
fn blank_lines_only() {
    rejects("\n\n   \n\t\n", 5, &["unexpected end of page", "instruction name"]);
}

#[test]
fn invalid_utf8() {
    let mut bytes = b"NVIDIA ISA Viewer\n\nDFMA\n\nFP64 \xff\xfe Add\n".to_vec();
    rejects_bytes(&bytes, 5, &["not valid UTF-8"]);
    // A lone continuation byte on the first line.
    bytes = vec![0x80, b'\n'];
    rejects_bytes(&bytes, 1, &["not valid UTF-8"]);
}

#[test]
fn binary_garbage() {
    // Valid UTF-8, but nothing like a page.
    rejects_bytes(b"\x00\x01\x02\x7fELF\x02\x01\x01\x00\n", 1, &["expected an instruction name"]);
}

#[test]
fn only_a_banner() {
    rejects("NVIDIA ISA Viewer\n", 2, &["unexpected end of page", "instruction name after the banner"]);
    rejects("NVIDIA ISA Viewer", 1, &["unexpected end of page", "instruction name after the banner"]);
}

#[test]
fn bad_instruction_name() {
    let t = set_line(&dfma(), L_NAME, "dfma: fused multiply add");
    rejects(&t, L_NAME, &["expected an instruction name", "'dfma: fused multiply add'"]);
}

#[test]
fn header_without_variants() {
    let t = first_lines(&dfma(), L_COUNT);
    rejects(&t, L_COUNT, &["page has no variants"]);
}

#[test]
fn missing_variant_count_line() {
    // The description is taken as the optional description, then the heading is not a count.
    let t = set_line(&dfma(), L_COUNT, "");
    rejects(&t, V1_HEADING, &["expected 'N variants on SMxx (GPU)'", "found 'DFMA'"]);
}

#[test]
fn variant_count_with_bad_arch() {
    for bad in ["9 variants on GH100 (H100)", "9 variants on SM (H100)", "9 variants on SMx90 (H100)", "nine variants on SM90 (H100)"] {
        let t = set_line(&dfma(), L_COUNT, bad);
        rejects(&t, L_COUNT, &["expected 'N variants on SMxx (GPU)'", &format!("found '{bad}'")]);
    }
}

// ---- Variant header --------------------------------------------------------------------

#[test]
fn heading_with_a_different_mnemonic() {
    let t = set_line(&dfma(), V1_HEADING, "DFMB");
    rejects(&t, V1_HEADING, &["expected a variant heading starting with 'DFMA'", "found 'DFMB'"]);
    // A later variant: the page stays atomic (no partial parse).
    let t = set_line(&dfma(), V2_HEADING, "DADD");
    rejects(&t, V2_HEADING, &["starting with 'DFMA'", "found 'DADD'"]);
}

#[test]
fn unknown_operand_form_token() {
    let t = set_line(&dfma(), V1_FORM, "R,R,Q,R");
    let want = format!("expected an operand form of {}", sass_harness::spec::OperandKind::form_tokens());
    rejects(&t, V1_FORM, &["unknown operand token 'Q'", want.as_str(), "found 'R,R,Q,R'"]);
    // A memory shape says what is wrong with it.
    let t = set_line(&dfma(), V1_FORM, "R,R,[UR+R],R");
    rejects(&t, V1_FORM, &["memory operand '[UR+R]': component 'R' out of order or repeated", "found 'R,R,[UR+R],R'"]);
    let t = set_line(&dfma(), V1_FORM, "R,R,,R");
    rejects(&t, V1_FORM, &["expected an operand form", "found 'R,R,,R'"]);
}

#[test]
fn missing_distilled_line() {
    let t = set_line(&dfma(), V1_DISTILLED, "");
    rejects(&t, V1_KEY, &["expected 'distilled: <SASS text>'", "found 'key: DFMA_R_R_R_R'"]);
}

#[test]
fn distilled_text_unparseable() {
    let t = set_line(&dfma(), V1_DISTILLED, "distilled: @Q9 DFMA R0, R0, R0, R0 ;");
    rejects(&t, V1_DISTILLED, &["distilled text", "expected a predicate P0..P6, PT, UP0..UP6 or UPT after '@'", "'Q9'"]);
    let t = set_line(&dfma(), V1_DISTILLED, "distilled: @P0 DFMA R0, , R0, R0 ;");
    rejects(&t, V1_DISTILLED, &["distilled text", "expected an operand"]);
    let t = set_line(&dfma(), V1_DISTILLED, "distilled:");
    rejects(&t, V1_DISTILLED, &["distilled text", "expected an instruction, found nothing"]);
}

#[test]
fn distilled_text_disagrees_with_the_heading_or_form() {
    let t = set_line(&dfma(), V1_DISTILLED, "distilled: @P0 DADD R0, R0, R0, R0 ;");
    rejects(&t, V1_DISTILLED, &["DFMA_R_R_R_R", "distilled mnemonic 'DADD'", "heading 'DFMA'"]);
    let t = set_line(&dfma(), V1_DISTILLED, "distilled: @P0 DFMA R0, R0, R0 ;");
    rejects(&t, V1_DISTILLED, &["DFMA_R_R_R_R", "distilled line has 3 operands", "form 'R,R,R,R' has 4"]);
}

#[test]
fn aliases_line_names_modifiers_of_the_distilled_line() {
    // `aliases:` (between the distilled and key lines) takes a value alias off the heading;
    // it must be a modifier the distilled line prints.
    let with = |d: &str, a: &str| edit_line(&set_line(&dfma(), V1_DISTILLED, d), V1_KEY - 1, |_| a.to_string());
    let p = parse(&with("distilled: @P0 DFMA.MOV R0, R0, R0, R0 ;", "aliases: MOV")).expect("an alias the distilled line prints");
    assert_eq!(p.variants[0].key, "DFMA_R_R_R_R");
    let t = with("distilled: @P0 DFMA R0, R0, R0, R0 ;", "aliases: MOV");
    rejects(&t, V1_DISTILLED, &["alias 'MOV' is not a modifier of the distilled line"]);
}

#[test]
fn derived_line_names_a_register_without_bits_and_its_source() {
    // `derived:` (between the distilled and key lines): `operand N = operand M + K`, M < N.
    let with = |d: &str| edit_line(&dfma(), V1_KEY - 1, |_| d.to_string());
    let at = V1_KEY - 1;
    rejects(&with("derived: operand 0 = operand 1 + 0"), at, &["is not 'operand N = operand M + K'"]);
    rejects(&with("derived: operand 1 = operand 0 + 256"), at, &["is not 'operand N = operand M + K'"]);
    rejects(&with("derived: operand 1 = operand 0"), at, &["is not 'operand N = operand M + K'"]);
    rejects(&with("derived: operand 2 = operand 0 + 1, operand 2 = operand 1 + 0"), at, &["operand 2 is derived twice"]);
    // Every DFMA register has its own field; operand 9 is no register of the form.
    rejects(&with("derived: operand 1 = operand 0 + 0"), V1_HEADING, &["derived 'operand 1 = operand 0 + 0'", "has a field of its own"]);
    rejects(&with("derived: operand 9 = operand 0 + 1"), V1_HEADING, &["both must be registers"]);
}

#[test]
fn left_out_at_zero_line_names_immediates_in_order() {
    // `left out at zero:` (between the distilled and key lines): `operand N [joined]`, each
    // the one page operand of an `I` form operand, in increasing order.
    let with = |d: &str| edit_line(&dfma(), V1_KEY - 1, |_| d.to_string());
    let at = V1_KEY - 1;
    rejects(&with("left out at zero: 2"), at, &["is not 'operand N' or 'operand N joined'"]);
    rejects(&with("left out at zero: operand two"), at, &["is not 'operand N' or 'operand N joined'"]);
    rejects(&with("left out at zero: operand 2, operand 1"), at, &["operand 1 is named twice or out of order"]);
    // DFMA_R_R_R_R has no immediate.
    rejects(&with("left out at zero: operand 1"), at, &["DFMA_R_R_R_R", "operand 1 is not an immediate"]);
}

#[test]
fn ignored_bits_line_names_fixed_bits_as_ranges() {
    // `ignored bits:` (between the distilled and key lines): inclusive ranges of fixed bits.
    let with = |d: &str| edit_line(&dfma(), V1_KEY - 1, |_| d.to_string());
    let at = V1_KEY - 1;
    let p = parse(&with("ignored bits: 40..45,50")).expect("fixed bits");
    assert_eq!(p.variants[0].ignored.iter().collect::<Vec<_>>(), [40, 41, 42, 43, 44, 45, 50]);
    assert!(p.variants[1].ignored.is_empty(), "the line is the first variant's");
    rejects(&with("ignored bits: 12..15"), at, &["DFMA_R_R_R_R", "bit 12 is not a fixed bit of the layout"]);
    rejects(&with("ignored bits: 45..40"), at, &["'45..40' runs backwards"]);
    rejects(&with("ignored bits: 40,128"), at, &["'128' is not a bit or a range of bits 0..127"]);
    rejects(&with("ignored bits: "), at, &["ignored bits: no bits named"]);
}

#[test]
fn inverted_line_names_registers_and_predicates_in_order() {
    // `inverted:` (between the distilled and key lines): `operand N`, each the one page
    // operand of an `R`, `UR`, `P` or `UP` form operand, in increasing order.
    let with = |d: &str| edit_line(&dfma(), V1_KEY - 1, |_| d.to_string());
    let at = V1_KEY - 1;
    rejects(&with("inverted: 2"), at, &["inverted operand '2' is not 'operand N'"]);
    rejects(&with("inverted: operand two"), at, &["is not 'operand N'"]);
    rejects(&with("inverted: operand 2, operand 1"), at, &["operand 1 is named twice or out of order"]);
    rejects(&with("inverted: operand 9"), at, &["DFMA_R_R_R_R", "operand 9 is not a register or predicate"]);
    // A register of the form: its field is the complement of the printed number.
    let p = parse(&with("inverted: operand 1")).expect("an inverted register");
    let v = &p.variants[0];
    assert_eq!(v.fields.iter().filter(|f| f.inverted).map(|f| f.name.as_str()).collect::<Vec<_>>(), ["operand 1"]);
}

#[test]
fn illegal_at_all_ones_line_names_fields_in_order() {
    // `illegal at all ones:` (between the distilled and key lines): `operand N`, each a page
    // operand with a field of its own, in increasing order.
    let with = |d: &str| edit_line(&dfma(), V1_KEY - 1, |_| d.to_string());
    let at = V1_KEY - 1;
    rejects(&with("illegal at all ones: 2"), at, &["illegal-at-all-ones operand '2' is not 'operand N'"]);
    rejects(&with("illegal at all ones: operand 2, operand 2"), at, &["operand 2 is named twice or out of order"]);
    rejects(&with("illegal at all ones: operand 9"), at, &["DFMA_R_R_R_R", "operand 9 has no field of its own"]);
    let p = parse(&with("illegal at all ones: operand 2")).expect("a register that may not be RZ");
    let v = &p.variants[0];
    let f = v.field_by_name("operand 2").unwrap();
    assert!(v.fields[f].illegal_at_all_ones && v.value_illegal(f, 0xff) && !v.value_illegal(f, 0xfe));
    assert_eq!(v.fields.iter().filter(|f| f.illegal_at_all_ones).count(), 1);
}

#[test]
fn optional_lines_come_in_any_order_once_each() {
    // Pages write the optional lines in a fixed order; a hand-written page may not.
    let with = |d: &str| edit_line(&dfma(), V1_KEY - 1, |_| d.to_string());
    let p = parse(&with("ignored bits: 40..45\ninverted: operand 1")).expect("optional lines out of the written order");
    let v = &p.variants[0];
    assert_eq!(v.ignored.iter().count(), 6);
    assert_eq!(v.fields.iter().filter(|f| f.inverted).map(|f| f.name.as_str()).collect::<Vec<_>>(), ["operand 1"]);
    rejects(&with("inverted: operand 1\ninverted: operand 2"), V1_KEY, &["a second 'inverted:' line"]);
}

#[test]
fn missing_key_line() {
    let t = set_line(&dfma(), V1_KEY, "");
    rejects(&t, V1_IDX0, &["expected 'key: <KEY>'", "found '0\t1\t2"]);
}

#[test]
fn empty_key() {
    let t = set_line(&dfma(), V1_KEY, "key:   ");
    rejects(&t, V1_KEY, &["expected 'key: <KEY>'", "found 'key:'"]);
}

#[test]
fn duplicate_key() {
    let t = set_line(&dfma(), V2_KEY, "key: DFMA_R_R_R_R");
    rejects(&t, V2_HEADING, &["duplicate key 'DFMA_R_R_R_R'", &format!("first at line {V1_HEADING}")]);
}

// ---- Layout ----------------------------------------------------------------------------

#[test]
fn index_row_with_a_non_digit() {
    let t = edit_line(&dfma(), V1_IDX0, |l| l.replacen('0', "x", 1));
    rejects(&t, V1_IDX0, &["expected a layout index row of digits 0..7", "found cell 'x'"]);
    let t = edit_line(&dfma(), V2_IDX0, |l| l.replacen("7", "8", 1));
    rejects(&t, V2_IDX0, &["digits 0..7", "found cell '8'"]);
}

#[test]
fn index_row_breaking_its_pattern() {
    // 0 1 2 3 4 5 6 7 0 1 3 ...: a jump of two is not one dropped cell.
    let t = edit_line(&dfma(), V2_IDX0, |l| {
        let mut c = cells(l);
        c.remove(10);
        c.remove(10);
        c.join("\t")
    });
    rejects(&t, V2_IDX0, &["breaks its 0..7 pattern at cell 11", "found 4, expected 2"]);
}

#[test]
fn index_row_with_two_dropped_cells() {
    let t = edit_line(&dfma(), V2_IDX0, |l| {
        let mut c = cells(l);
        c.remove(40);
        c.remove(10);
        c.join("\t")
    });
    rejects(&t, V2_IDX0, &["2 dropped cells", "at most one is repaired"]);
}

#[test]
fn index_row_too_long_or_too_short() {
    let t = edit_line(&dfma(), V2_IDX0, |l| format!("{l}\t0"));
    rejects(&t, V2_IDX0, &["expected a layout index row of 64 cells (bits 0..63)", "found 65 cells"]);
    let t = edit_line(&dfma(), V2_IDX0 + 2, |l| cells(l)[..56].join("\t"));
    rejects(&t, V2_IDX0 + 2, &["64 cells (bits 64..127)", "found 56 cells"]);
}

#[test]
fn content_row_with_65_cells() {
    let t = edit_line(&dfma(), V2_CONTENT1, |l| format!("{l}\t0"));
    rejects(&t, V2_CONTENT1, &["expected at most 64 layout cells", "found 65"]);
    let t = edit_line(&dfma(), V2_CONTENT1, |l| format!("{l}\t0\t1\t0"));
    rejects(&t, V2_CONTENT1, &["at most 64 layout cells", "found 67"]);
}

#[test]
fn dropped_index_cell_but_full_content_row() {
    // The index row says a cell was dropped, the content row has all 64: the two rows
    // disagree about which bit each cell is, so no alignment is safe.
    let t = edit_line(&dfma(), V2_IDX0 + 2, |l| {
        let mut c = cells(l);
        c.remove(20);
        c.join("\t")
    });
    rejects(&t, V2_CONTENT1, &["index row drops the cell for bit 84", "content row has 64 cells"]);
}

#[test]
fn content_row_too_short_ending_in_a_fixed_bit() {
    let t = edit_line(&dfma(), V2_CONTENT1, |l| cells(l)[..17].join("\t"));
    rejects(&t, V2_CONTENT1, &["layout content row has 17 cells and ends in a fixed bit", "expected 64 cells"]);
}

#[test]
fn empty_cell_at_bit_0() {
    let t = edit_line(&dfma(), V2_CONTENT0, |l| {
        let mut c = cells(l);
        c[0] = String::new();
        c.join("\t")
    });
    rejects(&t, V2_CONTENT0, &["empty layout cell at bit 0 follows no field name"]);
}

#[test]
fn empty_cell_after_a_fixed_bit() {
    // Bit 64 + 13 (after two fixed zeros) left empty.
    let t = edit_line(&dfma(), V2_CONTENT1, |l| {
        let mut c = cells(l);
        assert_eq!(c[13], "0");
        c[13] = String::new();
        c.join("\t")
    });
    rejects(&t, V2_CONTENT1, &["empty layout cell at bit 77 follows no field name"]);
}

#[test]
fn operand_beyond_the_form() {
    let t = replace_in_line(&dfma(), V2_CONTENT0, "operand 3", "operand 7");
    rejects(&t, V2_CONTENT0, &["DFMA_R_R_R_F", "'operand 7' but the form 'R,R,R,F' has page operands 0..3"]);
}

#[test]
fn operand_name_without_a_number() {
    let t = replace_in_line(&dfma(), V2_CONTENT0, "operand 3", "operand three");
    rejects(&t, V2_CONTENT0, &["expected 'operand N', found 'operand three'"]);
}

#[test]
fn unknown_layout_cell() {
    let t = replace_in_line(&dfma(), V2_CONTENT1, "r-bar", "r+bar");
    rejects(&t, V2_CONTENT1, &["unknown layout cell 'r+bar' at bit 110"]);
}

#[test]
fn multi_bit_modifier_flag() {
    // `cNEG cABS cABS cNEG 0 0` at bits 72..77: turn bits 76..77 into a 2-bit flag SAT.
    let t = replace_in_line(&dfma(), V2_CONTENT1, "cNEG\t0\t0\tmodi 1", "cNEG\tSAT\t\tmodi 1");
    rejects(&t, V2_CONTENT1, &["flag 'SAT' spans 2 bits; flags are one bit"]);
}

#[test]
fn field_wider_than_64_bits() {
    // `operand 3` (bits 32..63, the last cell of the short first row) again at bits
    // 64..103: the two spans of one numbered name are one field of 72 bits.
    let mut c = vec!["operand 3"];
    c.extend(vec![""; 39]);
    c.extend(vec!["0"; 24]);
    let t = set_line(&dfma(), V2_CONTENT1, &c.join("\t"));
    rejects(&t, V2_CONTENT0, &["field 'operand 3' spans 72 bits"]);
    // A content row of empty cells only is a blank line to the reader: the next line (the
    // table title) is taken as the content row.
    let t = set_line(&dfma(), V2_CONTENT1, &vec![""; 64].join("\t"));
    rejects(&t, V2_TABLE, &["unknown layout cell 'Modifier Group 1' at bit 64"]);
}

#[test]
fn too_many_fields() {
    // 64 one-bit flags in the second half.
    let flags: Vec<String> = (0..64).map(|i| format!("F{i}")).collect();
    let t = set_line(&dfma(), V2_CONTENT1, &flags.join("\t"));
    rejects(&t, V2_HEADING, &["DFMA_R_R_R_F", "fields; at most 40 are supported"]);
}

#[test]
fn modi_group_without_its_table() {
    let t = replace_in_line(&dfma(), V2_CONTENT1, "modi 1", "modi 3");
    rejects(&t, V2_CONTENT1, &["DFMA_R_R_R_F", "'modi 3' has no 'Modifier Group 3' table"]);
}

#[test]
fn plain_modi_without_operand_modifiers_table() {
    let t = replace_in_line(&dfma(), V2_CONTENT1, "modi 1", "modi");
    rejects(&t, V2_CONTENT1, &["plain 'modi' span #1 at bit 78 has no 'Operand K Modifiers' table"]);
}

#[test]
fn operand_modifiers_table_without_plain_modi() {
    let t = set_line(&dfma(), V2_HEADING - 1, "\nOperand 1 Modifiers\n\nBinary\tValue\n0\t(default)\n1\tX\n");
    rejects(&t, V1_HEADING, &["DFMA_R_R_R_R", "1 'Operand K Modifiers' tables but 0 plain 'modi' spans"]);
}

#[test]
fn form_operand_without_a_field() {
    // Variant 1's `operand 2` span (8 cells) becomes fixed zeros.
    let t = replace_in_line(&dfma(), V1_CONTENT0, "operand 2\t\t\t\t\t\t\t\t", "0\t0\t0\t0\t0\t0\t0\t0\t");
    rejects(&t, V1_HEADING, &["DFMA_R_R_R_R", "form operand 2 ('R') has no 'operand 2' field in the layout"]);
}

/// A register without a field is its zero register where the distilled line prints `RZ`
/// there (as nvdisasm prints SM100's UMEMSETS, `UMEMSETS.64 [UR6], URZ, UR7`): the page
/// parses, every word prints `RZ` there, the text assembles back, and another register
/// there is an error that says the form has no bits for it. Printing another name in the
/// distilled line leaves the operand without a field, as before.
#[test]
fn a_register_without_a_field_is_the_zero_register() {
    let zeros = replace_in_line(&dfma(), V1_CONTENT0, "operand 2\t\t\t\t\t\t\t\t", "0\t0\t0\t0\t0\t0\t0\t0\t");
    let t = replace_in_line(&zeros, V1_DISTILLED, "R0, R0, R0, R0", "R0, R0, RZ, R0");
    let p = parse(&t).unwrap_or_else(|e| panic!("{e}"));
    let v = &p.variants[0];
    assert_eq!(v.operands[2].value_fields, [None], "{}", v.key);
    let spec = Spec { pages: vec![p.clone()] };
    let c = Codec::new(&spec);
    let mut values = Values::zero(v.fields.len());
    values.set(v.fields.iter().position(|f| f.name == "operand 1").unwrap(), 5);
    values.set(v.fields.iter().position(|f| f.name == "pred").unwrap(), 7);
    let text = codec::print(c.variant(0), &values).to_string();
    assert_eq!(text, "DFMA R0, R5, RZ, R0 ;");
    let w = c.encode(0, &values).unwrap();
    assert_eq!(codec::assemble(&c, c.variant(0).arch, &text, w), Ok((0, w)));
    let e = codec::assemble(&c, c.variant(0).arch, "DFMA R0, R5, R7, R0 ;", w).unwrap_err().to_string();
    assert!(e.contains("the form has no bits for this register: it is always RZ"), "{e}");
    let named = replace_in_line(&zeros, V1_DISTILLED, "R0, R0, R0, R0", "R0, R0, R3, R0");
    rejects(&named, V1_HEADING, &["DFMA_R_R_R_R", "form operand 2 ('R') has no 'operand 2' field in the layout"]);
}

/// An immediate without a field is a constant zero only where the distilled line prints
/// `0x0` for it (SM100's TXQ with a uniform register, `corpus/isa-discovered/sm100/txq.txt`):
/// the page as committed parses; with another value there, the operand has no field.
#[test]
fn an_immediate_without_a_field_prints_zero_or_is_rejected() {
    let path = repo_root().join("corpus/isa-discovered/sm100/txq.txt");
    let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let p = parse(&page).expect("the committed page parses");
    let v = p.variants.iter().find(|v| v.key == "TXQ_R_R_R_N_UR_I_I").expect("the TXQ form with a uniform register");
    assert_eq!(v.operands[5].value_fields, [None]);
    let distilled = "distilled: @P0 TXQ R0, R0, R0, TEX_HEADER_DIMENSION, UR0, 0x0, 0x0;";
    assert_eq!(page.matches(distilled).count(), 1, "one variant of the page has this distilled line");
    let heading = lines(&page).iter().take_while(|l| *l != distilled).count() - 3;
    assert_eq!(lines(&page)[heading - 1], "TXQ", "the heading, 4 lines above the distilled line");
    let t = page.replace(distilled, &distilled.replace("0x0, 0x0", "0x4, 0x0"));
    rejects(&t, heading, &["TXQ_R_R_R_N_UR_I_I", "form operand 5 ('I') has no 'operand 5' field in the layout"]);
}

#[test]
fn fields_overlapping() {
    // One layout cell is one bit, so two fields cannot share a bit through the layout
    // grammar; what comes closest is two layout cells claiming the same bit, which is a
    // misaligned dropped-cell repair (tested above) or a split field that merges spans,
    // which never overlap. The overlap and coverage checks in `check_coverage` are
    // invariants. Here: a flag name repeated next to itself is two fields, not one wide
    // one, and the page still covers each bit once.
    let t = replace_in_line(&dfma(), V2_CONTENT1, "cNEG\t0\t0\tmodi 1", "cNEG\tSAT\tSAT\tmodi 1");
    let p = parse(&t).expect("repeated one-bit flags are two fields");
    let v = &p.variants[1];
    let sats: Vec<_> = v.fields.iter().filter(|f| f.name == "SAT").collect();
    assert_eq!(sats.len(), 2);
    assert_eq!((sats[0].bits.clone(), sats[1].bits.clone()), (vec![76], vec![77]));
    assert!(p.warnings.iter().any(|w| w.rule == rules::REPEATED_NAME && w.message.contains("'SAT' names 2 separate fields")));
    let mut seen = v.fixed_mask;
    for f in &v.fields {
        assert!(seen.intersect(f.mask()).is_empty(), "{} overlaps", f.name);
        seen = seen.union(f.mask());
    }
}

// ---- Tables ----------------------------------------------------------------------------

#[test]
fn table_without_header() {
    let t = set_line(&dfma(), V2_HEADER, "Binary Value");
    rejects(&t, V2_HEADER, &["expected a table header 'Binary<TAB>Value'", "found 'Binary Value'"]);
    let t = set_line(&dfma(), V2_HEADER, "");
    rejects(&t, V2_ROWS[0], &["expected a table header 'Binary<TAB>Value'", "found '00\t(default)'"]);
}

#[test]
fn table_row_with_inconsistent_width() {
    let t = set_line(&dfma(), V2_ROWS[1], "001\tRM");
    rejects(&t, V2_ROWS[1], &["row '001' has 3 bits; the table's rows have 2"]);
}

#[test]
fn table_row_without_a_name() {
    let t = set_line(&dfma(), V2_ROWS[1], "01\t");
    rejects(&t, V2_ROWS[1], &["expected a modifier name after '01'", "found ''"]);
    let t = set_line(&dfma(), V2_ROWS[1], "01\tR M");
    rejects(&t, V2_ROWS[1], &["expected a modifier name after '01'", "found 'R M'"]);
}

#[test]
fn table_value_listed_twice() {
    let t = set_line(&dfma(), V2_ROWS[1], "00\tRM");
    rejects(&t, V2_ROWS[1], &["value 00 listed twice", &format!("first at line {}", V2_ROWS[0])]);
}

#[test]
fn table_with_no_rows() {
    let mut t = dfma();
    for n in V2_ROWS {
        t = set_line(&t, n, "");
    }
    rejects(&t, V2_TABLE, &["table 'Modifier Group 1' has no rows"]);
}

#[test]
fn table_too_wide() {
    // 32-bit rows would make the omitted-values list 2^32 long.
    let mut t = dfma();
    for (i, n) in V2_ROWS.iter().enumerate() {
        t = set_line(&t, *n, &format!("{:032b}\tX{i}", i));
    }
    rejects(&t, V2_ROWS[0], &["table rows wider than 16 bits are not supported"]);
}

#[test]
fn table_used_by_no_field() {
    let t = set_line(&dfma(), V2_HEADING - 1, "\nModifier Group 2\n\nBinary\tValue\n0\tX\n1\tY\n");
    rejects(&t, V2_HEADING, &["DFMA_R_R_R_R", "table 'Modifier Group 2' is used by no layout field"]);
}

#[test]
fn table_listed_twice() {
    let t = set_line(&dfma(), V2_HEADING - 1, "\nModifier Group 1\n\nBinary\tValue\n00\tX\n");
    rejects(&t, V2_HEADING, &["table 'Modifier Group 1' appears twice"]);
}

#[test]
fn table_width_differs_from_field_width() {
    let mut t = dfma();
    for (i, n) in V1_ROWS.iter().enumerate() {
        let name = ["(default)", "RM", "RP", "RZ"][i];
        t = set_line(&t, *n, &format!("{:03b}\t{name}", i));
    }
    rejects(&t, V1_TABLE, &["table 'Modifier Group 1' has 3-bit rows but its field spans 2 bits"]);
}

#[test]
fn operand_table_for_an_operand_the_form_lacks() {
    // Plain `modi` + an `Operand 9 Modifiers` table on a 4-operand form.
    let t = replace_in_line(&dfma(), V2_CONTENT1, "modi 1", "modi");
    let t = set_line(&t, V2_TABLE, "Operand 9 Modifiers");
    rejects(&t, V2_TABLE, &["table 'Operand 9 Modifiers' names an operand the form 'R,R,R,F' does not have"]);
}

// ---- Modifiers -------------------------------------------------------------------------

#[test]
fn distilled_modifier_no_group_produces() {
    let t = set_line(&dfma(), V1_DISTILLED, "distilled: @P0 DFMA.RN R0, R0, R0, R0 ;");
    rejects(&t, V1_HEADING, &["DFMA_R_R_R_R", "distilled modifier 'RN' matches no heading modifier and no group's zero row"]);
}

#[test]
fn heading_modifier_missing_from_distilled() {
    let t = set_line(&dfma(), V1_HEADING, "DFMA.RZ");
    rejects(&t, V1_HEADING, &["DFMA_R_R_R_R", "heading modifier 'RZ' is not in the distilled line"]);
}

// ---- Truncation ------------------------------------------------------------------------

#[test]
fn truncated_mid_layout() {
    let t = first_lines(&dfma(), V1_CONTENT0);
    rejects(&t, V1_CONTENT0, &["unexpected end of page", "expected a layout index row"]);
    let t = first_lines(&dfma(), V1_CONTENT0 + 1) + "\n";
    rejects(&t, V1_CONTENT0 + 2, &["unexpected end of page", "expected a layout content row"]);
}

#[test]
fn truncated_mid_variant_header() {
    let t = first_lines(&dfma(), V1_DISTILLED);
    rejects(&t, V1_DISTILLED, &["unexpected end of page", "expected 'key: <KEY>'"]);
    let t = first_lines(&dfma(), V1_HEADING);
    rejects(&t, V1_HEADING, &["unexpected end of page", "operand form"]);
}

#[test]
fn truncated_mid_table() {
    let t = first_lines(&dfma(), V1_TABLE);
    rejects(&t, V1_TABLE, &["unexpected end of page", "table header 'Binary<TAB>Value'"]);
    let t = first_lines(&dfma(), V1_TABLE + 2);
    rejects(&t, V1_TABLE, &["table 'Modifier Group 1' has no rows"]);
}

#[test]
fn truncated_mid_content_row_keeps_the_short_row_rule_honest() {
    // Cut inside the second content row, after `modi 1`: the short-row rule reads the rest
    // as part of `modi 1`, which then spans bits 78..127 and disagrees with its table.
    let t = edit_line(&first_lines(&dfma(), V2_CONTENT1), V2_CONTENT1, |l| cells(l)[..15].join("\t"));
    let e = rejects(&t, V2_CONTENT1, &["'modi 1' has no 'Modifier Group 1' table"]);
    assert!(e.message.starts_with("DFMA_R_R_R_F: "), "{e}");
}

// ---- Line endings and byte-order marks ----------------------------------------------------

#[test]
fn crlf_and_bom_parse_to_the_same_spec() {
    for seed in SEEDS {
        let text = read(seed);
        let base = parse_page("p.txt", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert!(base.warnings.iter().all(|w| w.rule != rules::CRLF && w.rule != rules::BOM));
        let crlf = text.replace('\n', "\r\n");
        let bom = format!("\u{feff}{text}");
        let both = format!("\u{feff}{crlf}");
        for (what, t, want) in [("crlf", &crlf, &[rules::CRLF][..]), ("bom", &bom, &[rules::BOM][..]), ("bom+crlf", &both, &[rules::BOM, rules::CRLF][..])] {
            let p = parse_page("p.txt", t.as_bytes()).unwrap_or_else(|e| panic!("{seed} {what}: {e}"));
            assert_eq!(p.variants, base.variants, "{seed} {what}");
            assert_eq!((&p.instruction, &p.description, p.arch, &p.gpu), (&base.instruction, &base.description, base.arch, &base.gpu));
            for r in want {
                let w = p.warnings.iter().find(|w| w.rule == *r).unwrap_or_else(|| panic!("{seed} {what}: no {r} warning"));
                assert_eq!(w.line, 1);
            }
            // Apart from the new warnings, the same warnings at the same lines.
            let rest: Vec<_> = p.warnings.iter().filter(|w| !want.contains(&w.rule)).collect();
            let base_w: Vec<_> = base.warnings.iter().collect();
            assert_eq!(rest, base_w, "{seed} {what}");
        }
    }
}

// ---- Never panics ----------------------------------------------------------------------

/// Bytes a mutation may write: layout and table syntax, digits, names, odd characters.
const PALETTE: &[&[u8]] = &[
    b"\t",
    b"\n",
    b"\r",
    b" ",
    b"0",
    b"1",
    b"7",
    b"8",
    b".",
    b",",
    b";",
    b"@",
    b"!",
    b"|",
    b"-",
    b"[",
    b"]",
    b"c",
    b"x",
    b"R",
    b"U",
    b"I",
    b"F",
    b"operand ",
    b"modi ",
    b"modi",
    b"cABS",
    b"Modifier Group ",
    b"Operand 1 Modifiers",
    b"Binary\tValue",
    b"\xc3\xa9",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\x00",
    b"99999999999999999999",
    b"(default)",
    b"???0",
    b"INVALID1",
];

fn mutate(rng: &mut Rng, page: &[u8]) -> (Vec<u8>, Vec<String>) {
    let mut b = page.to_vec();
    let mut log = vec![];
    let n = 1 + rng.below(3);
    for _ in 0..n {
        let len = b.len().max(1) as u64;
        let at = rng.below(len) as usize;
        match rng.below(10) {
            0 => {
                if at < b.len() {
                    b.remove(at);
                }
                log.push(format!("delete byte {at}"));
            }
            1 => {
                if at < b.len() {
                    let c = b[at];
                    b.insert(at, c);
                }
                log.push(format!("duplicate byte {at}"));
            }
            2 | 3 => {
                let p = PALETTE[rng.below(PALETTE.len() as u64) as usize];
                let end = (at + 1).min(b.len());
                b.splice(at.min(b.len())..end, p.iter().copied());
                log.push(format!("replace byte {at} with {:?}", String::from_utf8_lossy(p)));
            }
            4 => {
                let p = PALETTE[rng.below(PALETTE.len() as u64) as usize];
                b.splice(at.min(b.len())..at.min(b.len()), p.iter().copied());
                log.push(format!("insert {:?} at {at}", String::from_utf8_lossy(p)));
            }
            5..=7 => {
                // Line-level edits.
                let mut ls: Vec<Vec<u8>> = b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let i = rng.below(ls.len() as u64) as usize;
                match rng.below(5) {
                    0 => {
                        ls.remove(i);
                        log.push(format!("delete line {}", i + 1));
                    }
                    1 => {
                        let l = ls[i].clone();
                        ls.insert(i, l);
                        log.push(format!("duplicate line {}", i + 1));
                    }
                    2 => {
                        let j = rng.below(ls.len() as u64) as usize;
                        ls.swap(i, j);
                        log.push(format!("swap lines {} and {}", i + 1, j + 1));
                    }
                    3 => {
                        // Replace one tab-separated cell of the line.
                        let mut cs: Vec<Vec<u8>> = ls[i].split(|&c| c == b'\t').map(<[u8]>::to_vec).collect();
                        let k = rng.below(cs.len() as u64) as usize;
                        let p = PALETTE[rng.below(PALETTE.len() as u64) as usize];
                        cs[k] = p.to_vec();
                        ls[i] = cs.join(&b'\t');
                        log.push(format!("line {} cell {} := {:?}", i + 1, k + 1, String::from_utf8_lossy(p)));
                    }
                    _ => {
                        // Delete or duplicate one cell (shifts the rest of the row).
                        let mut cs: Vec<Vec<u8>> = ls[i].split(|&c| c == b'\t').map(<[u8]>::to_vec).collect();
                        let k = rng.below(cs.len() as u64) as usize;
                        if rng.below(2) == 0 {
                            cs.remove(k);
                            log.push(format!("line {} delete cell {}", i + 1, k + 1));
                        } else {
                            let c = cs[k].clone();
                            cs.insert(k, c);
                            log.push(format!("line {} duplicate cell {}", i + 1, k + 1));
                        }
                        ls[i] = cs.join(&b'\t');
                    }
                }
                b = ls.join(&b'\n');
            }
            8 => {
                b.truncate(at);
                log.push(format!("truncate at {at}"));
            }
            _ => {
                // Flip one layout or table cell between 0 and 1 / a name and empty.
                let pos: Vec<usize> = b.iter().enumerate().filter(|(_, &c)| c == b'0' || c == b'1').map(|(i, _)| i).collect();
                if !pos.is_empty() {
                    let i = pos[rng.below(pos.len() as u64) as usize];
                    b[i] ^= 1;
                    log.push(format!("flip digit at byte {i}"));
                }
            }
        }
    }
    (b, log)
}

/// An accepted page must also give a working codec: zero word encodes to the fixed bits,
/// decodes back, and prints.
fn exercise(page: Page) {
    let spec = Spec { pages: vec![page] };
    let c = Codec::new(&spec);
    for vi in 0..c.variants().len() {
        let v = c.variant(vi);
        let zero = Values::zero(v.fields.len());
        let w = c.encode(vi, &zero).expect("zero values encode");
        assert_eq!(c.extract(vi, w), zero);
        let _ = codec::print(v, &zero).to_string();
        let mut rng = Rng::new(vi as u64);
        let vals = sass_harness::gen::random_values(v, &mut rng);
        let w = c.encode(vi, &vals).expect("random values encode");
        assert_eq!(c.extract(vi, w), vals);
        let _ = codec::print(v, &vals).to_string();
    }
}

#[test]
fn mutated_pages_never_panic() {
    let seeds: Vec<Vec<u8>> = SEEDS.iter().map(|s| read(s).into_bytes()).collect();
    let mut rng = Rng::new(0x6d75_7461_7465);
    let (mut ok, mut err) = (0, 0);
    let mut panics = vec![];
    for case in 0..2000 {
        let si = case % seeds.len();
        let (bytes, log) = mutate(&mut rng, &seeds[si]);
        let r = std::panic::catch_unwind(|| match parse_page("m.txt", &bytes) {
            Ok(p) => {
                exercise(p);
                true
            }
            Err(e) => {
                assert!(!e.message.is_empty());
                assert!(e.line >= 1, "line 0 for {e}");
                false
            }
        });
        match r {
            Ok(true) => ok += 1,
            Ok(false) => err += 1,
            Err(p) => {
                let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                panics.push(format!("case {case} ({}): {log:?}: {msg}", SEEDS[si]));
            }
        }
    }
    assert!(panics.is_empty(), "{} of 2000 mutations panicked:\n{}", panics.len(), panics.join("\n"));
    // Both outcomes occur: the mutations are neither all harmless nor all fatal.
    assert!(ok > 50 && err > 50, "ok {ok}, err {err}");
    eprintln!("mutations: {ok} accepted, {err} rejected, 0 panics");
}

/// A page of `n` copies of the DFMA page's first variant, keys numbered.
fn many_variants(n: usize) -> String {
    let text = dfma();
    let ls = lines(&text);
    let block = ls[V1_HEADING - 1..V1_ROWS[3]].join("\n");
    let mut out = ls[..L_COUNT - 1].join("\n");
    out.push_str(&format!("\n{n} variants on SM90 (H100)\n"));
    for i in 0..n {
        out.push('\n');
        out.push_str(&block.replace("key: DFMA_R_R_R_R", &format!("key: DFMA_R_R_R_R_{i}")));
        out.push('\n');
    }
    out
}

/// Parsing is linear in the variants of a page: one page of 32 000 variants takes about
/// the time of 32 pages of 1 000, not 32× that (it took 0.4 s for 10 000 variants and 7.9 s
/// for 40 000 when each variant's key was compared with every earlier one). Both sides
/// parse as many variants, so the machine's speed cancels out; each is timed in this
/// thread's CPU time, which leaves out the time other tests' threads and nvdisasm runs hold
/// the core (a clean clone's `cargo test` once measured 39× for 16× the variants in wall
/// time). Measured, debug and release builds: 1.1–1.4× (the larger page misses more
/// caches); with a scan of the earlier keys for each variant (a plain `find` over short
/// strings, the cheapest quadratic there is) 3.1–4.6×.
#[test]
fn parsing_is_linear_in_variants() {
    let time = |n: usize, pages: usize| {
        let text = many_variants(n);
        let t = thread_cpu_seconds();
        for _ in 0..pages {
            let page = parse(&text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(page.variants.len(), n);
        }
        thread_cpu_seconds() - t
    };
    let (small, large) = (time(1_000, 32), time(32_000, 1));
    eprintln!("32 pages of 1 000 variants: {small:.3} s, one of 32 000: {large:.3} s of CPU ({:.2}×)", large / small);
    assert!(large < 2.0 * small, "32 pages of 1 000 variants: {small:.3} s, one of 32 000: {large:.3} s of CPU");
}

/// The CPU time this thread has used, in seconds.
fn thread_cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) }, 0);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Issue 7 item 6: a cell that is neither 0, 1 nor a name used to become a field named `2`.
#[test]
fn a_digit_other_than_0_or_1_is_no_field_name() {
    for bad in ["2", "-", "01"] {
        let t = edit_line(&dfma(), V2_CONTENT1, |l| {
            let mut c = cells(l);
            assert_eq!(c[13], "0");
            c[13] = bad.to_string();
            c.join("\t")
        });
        rejects(&t, V2_CONTENT1, &[&format!("layout cell 14 (bit 77 if no cell was dropped) is '{bad}'"), "expected 0, 1, empty or a field name"]);
    }
}

/// Issue 7 item 6: an empty first cell of the 64–127 row used to extend the last field of
/// the 0–63 row (here `operand 3`, cut short at 33 cells) across the row boundary.
#[test]
fn a_field_does_not_continue_across_the_row_boundary() {
    let t = edit_line(&dfma(), V2_CONTENT1, |l| {
        let mut c = cells(l);
        c[0] = String::new();
        c.join("\t")
    });
    rejects(&t, V2_CONTENT1, &["bits 64..127 content row starts with an empty cell", "expected 0, 1 or a field name at bit 64"]);
}

/// A header announcing more variants than the page has stays a warning (`--strict`, in
/// the CLI, makes every warning an error).
#[test]
fn a_wrong_variant_count_is_a_warning() {
    let t = set_line(&dfma(), L_COUNT, "12 variants on SM90 (H100)");
    let page = parse(&t).unwrap();
    let w: Vec<_> = page.warnings.iter().filter(|w| w.rule == rules::VARIANT_COUNT).collect();
    assert_eq!(w.len(), 1, "{:?}", page.warnings);
    assert_eq!(w[0].line, L_COUNT);
    assert!(w[0].message.contains("announces 12 variants but has 9"), "{}", w[0].message);
}

/// A name whose zero row is `(default)` prints nothing there, and nvdisasm leaves it out:
/// DEPBAR with a set of scoreboards (`DEPBAR {5,4,3,2,1,0}`, what ptxas writes for
/// `fence.proxy.tensormap::generic.acquire`) is `DEPBAR` at 0, so its distilled line lacks
/// the operand. The committed SM90 page parses, prints (its own terminator: no stored
/// conventions here) and assembles the set; without the
/// `(default)` row the missing operand is an error at the distilled line.
#[test]
fn a_name_that_prints_nothing_at_zero_is_missing_from_the_distilled_line() {
    let path = repo_root().join("corpus/isa-discovered/sm90/depbar.txt");
    let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let p = parse(&page).expect("the committed page parses");
    let spec = Spec { pages: vec![p.clone()] };
    let c = Codec::new(&spec);
    let arch = p.variants[0].arch;
    for (hex, text, key) in [
        ("000fc800000000000000003f0000791a", "DEPBAR {5,4,3,2,1,0};", "DEPBAR_N"),
        ("000fc80000000000000000050000791a", "DEPBAR {2,0};", "DEPBAR_N"),
        ("000fc80000000000000000000000791a", "DEPBAR;", "DEPBAR_"),
    ] {
        let w = Word::parse_hex(hex).unwrap();
        let (vi, values) = c.decode(arch, w).unwrap_or_else(|e| panic!("{hex}: {e}"));
        assert_eq!((c.variant(vi).key.as_str(), codec::print(c.variant(vi), &values).to_string().as_str()), (key, text));
        assert_eq!(codec::assemble(&c, arch, text, w), Ok((vi, w)), "{text}");
    }
    // DEPBAR_ has the same distilled line: DEPBAR_N's is 4 lines above its key (1-based `at`).
    let key = lines(&page).iter().position(|l| l == "key: DEPBAR_N").expect("DEPBAR_N's key");
    let at = key - 3;
    assert_eq!(lines(&page)[at - 1], "distilled: @P0 DEPBAR;");
    let table = lines(&page).iter().skip(at).position(|l| l == "000000\t(default)").expect("its table's (default) row") + at + 1;
    let without = set_line(&page, table, "000000\tSB0");
    rejects(&without, at, &["DEPBAR_N", "the distilled line lacks operand 0, a name whose table has no (default) row at 0"]);
}
