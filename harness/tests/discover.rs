//! Discovery against the hold-out pages (corpus/isa-correct, written and checked bit by bit
//! against nvdisasm): solving a variant from its page's zero word must give the page's
//! layout, tables and distilled line back.

use sass_harness::discover::{self, page};
use sass_harness::oracle::nvdisasm::{Nvdisasm, Outcome};
use sass_harness::spec::{self, Variant};
use sass_harness::word::Word;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn nv() -> Nvdisasm {
    Nvdisasm::locate().expect("nvdisasm is required: bash ci/install-cuda-tools.sh")
}

/// What a page says about a variant, in comparable form.
#[derive(Debug, PartialEq)]
struct Layout {
    fields: Vec<(String, Vec<u8>)>,
    fixed: Vec<u8>,
    fixed_value: String,
    tables: Vec<Vec<(u64, String)>>,
    distilled: String,
}

fn layout(v: &Variant) -> Layout {
    let mut fields: Vec<(String, Vec<u8>)> = v.fields.iter().map(|f| (f.name.clone(), f.bits.clone())).collect();
    fields.sort();
    let tables = v.tables.iter().map(|t| t.rows.iter().map(|r| (r.value, r.name.clone())).collect()).collect();
    Layout { fields, fixed: v.fixed_mask.iter().collect(), fixed_value: v.fixed_value.hex(), tables, distilled: v.distilled.clone() }
}

/// Discovers `key` from the zero word of its page and compares, field by field.
fn rediscover(nv: &Nvdisasm, file: &str, key: &str) {
    rediscover_in(nv, "corpus/isa-correct", file, key)
}

fn rediscover_in(nv: &Nvdisasm, dir: &str, file: &str, key: &str) {
    let path = root().join(dir).join(file);
    let p = spec::parse_page(file, &std::fs::read(&path).unwrap()).unwrap();
    let v = p.variants.iter().find(|v| v.key == key).unwrap_or_else(|| panic!("{key} not in {file}"));
    let d = discover::discover(nv, p.arch, v.fixed_value).unwrap();
    assert!(d.notes.iter().all(|n| n.contains("only the terminator changes")), "{key}: {:?}", d.notes);
    assert_eq!(page::key(&d), key);
    let text = page::render(&p.instruction, p.description.as_deref(), std::slice::from_ref(&d));
    let back = spec::parse_page("discovered", text.as_bytes()).unwrap_or_else(|e| panic!("{key}: the discovered page does not parse: {e}\n{text}"));
    assert_eq!(layout(&back.variants[0]), layout(v), "{key}: discovered page differs from {file}:\n{text}");
}

#[test]
fn discovers_a_holdout_variant_from_its_zero_word() {
    let nv = nv();
    rediscover(&nv, "sm100/dadd.txt", "DADD_R_R_R");
    // A split group (FMZ/FTZ at bits 76 and 80), a flag, a constant operand and uniform registers.
    rediscover(&nv, "sm90/ffma.txt", "FFMA_R_R_I_I_R");
}

include!("data/pred_words.rs");

/// `P`/`UP` operands and `cNOT` (`!P4`, `!UPT`, `~R7`): the pages in tests/data/preds come
/// back from their zero words, and nvdisasm prints the codec test's words as it expects.
#[test]
fn discovers_predicate_operands_and_cnot() {
    let nv = nv();
    for (file, key) in [("isetp.txt", "ISETP_P_P_R_R_P"), ("plop3.txt", "PLOP3_P_P_P_P_UP_I_I"), ("popc.txt", "POPC_R_R")] {
        rediscover_in(&nv, "harness/tests/data/preds", file, key);
    }
    let words: Vec<Word> = PRED_WORDS.iter().map(|(_, h)| Word::parse_hex(h).unwrap()).collect();
    let got = nv.disassemble("SM90", &words).unwrap();
    for ((text, hex), o) in PRED_WORDS.iter().zip(got) {
        assert_eq!(o, Outcome::Printed { text: text.to_string() }, "{hex}");
    }
}

/// What a written page would get wrong is a note (the form stays off the pages), and a
/// modifier shown when its bit is clear is a one-bit group, not a flag.
#[test]
fn discovery_notes_what_the_page_would_print_otherwise() {
    let nv = nv();
    let solve = |hex: &str| discover::discover(&nv, spec::Arch(90), Word::parse_hex(hex).unwrap()).unwrap();
    // PLOP3's R0.SIGN: a constant operand suffix no cell says.
    let d = solve("0000000000000000000000000000021d");
    assert!(d.notes.iter().any(|n| n.contains("for the zero word") && n.contains("R0.SIGN")), "{:?}", d.notes);
    // HFMA2.MMA's cABS at 83 decorates the third source; the parser's rule gives it to the first.
    let d = solve("00000000000000000000000000000635");
    assert!(
        d.notes.iter().any(|n| n.starts_with("'cABS' at bit 83: the page's positional rule gives it to operand 1, nvdisasm shows it on operand 2")),
        "{:?}",
        d.notes
    );
    // IMAD.X's seed has bit 73 set; clearing it prints U32.
    let d = solve("0000000007ffff000000000000007424");
    assert!(d.notes.is_empty(), "{:?}", d.notes);
    let u32_bit = d.fields.iter().find(|f| f.bits == [73]).unwrap();
    assert_eq!(u32_bit.kind, discover::FieldKind::Group(1));
    assert_eq!(d.tables[0], [(0, "U32".to_string()), (1, "(default)".to_string())]);
}

/// Every variant of every hold-out page (about two minutes on two cores).
#[test]
#[ignore]
fn discovers_every_holdout_variant() {
    let nv = nv();
    for arch in ["sm90", "sm100"] {
        let dir = root().join("corpus/isa-correct").join(arch);
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let file = format!("{arch}/{}", path.file_name().unwrap().to_string_lossy());
            let p = spec::parse_page(&file, &std::fs::read(&path).unwrap()).unwrap();
            for v in &p.variants {
                rediscover(&nv, &file, &v.key);
            }
        }
    }
}
