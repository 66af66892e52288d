//! insta snapshots of every corpus page, stored in `<repo>/snapshots/`:
//! - `spec_<INSTRUCTION>_<ARCH>`: the canonical spec of the page as JSON;
//! - `print_<INSTRUCTION>_<ARCH>`: per variant, the printed text of the zero word and of 20
//!   seeded random words (`<32-hex word>  <text>` lines).
//!
//! Update with `INSTA_UPDATE=always cargo test --release --test suite -- snapshots::` (or `cargo insta test`),
//! review the diff, commit. `CI=true` makes a missing or changed snapshot fail.

use sass_harness::codec::{self, Codec, Values};
use sass_harness::gen::{random_values, Rng};
use sass_harness::oracle::tools::repo_root;
use sass_harness::spec::{self, Page, Spec};
use std::path::PathBuf;

/// Random words per variant in the print snapshots.
const SAMPLES: usize = 20;

fn snapshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../snapshots")
}

/// Every corpus page, parsed under its repo-relative path (`corpus/isa/sm90/…txt`, with `/`
/// on every platform) so that `file` fields do not depend on where the checkout lives.
fn pages() -> Vec<Page> {
    let root = repo_root();
    let files = spec::collect_pages(&[root.join("corpus/isa")]).expect("corpus folder lists");
    assert!(!files.is_empty(), "no corpus pages");
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&root).expect("page under the repo root");
            let name = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/");
            let bytes = std::fs::read(f).unwrap_or_else(|e| panic!("{name}: {e}"));
            spec::parse_page(&name, &bytes).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

/// `DFMA_SM90`: unique per page (checked).
fn page_name(p: &Page) -> String {
    format!("{}_{}", p.instruction, p.arch)
}

/// FNV-1a of the key: each variant's sample depends on its key only, not on its position.
fn seed_of(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

fn printed(page: &Page) -> String {
    let spec = Spec { pages: vec![page.clone()] };
    let c = Codec::new(&spec);
    let mut out = String::new();
    for vi in 0..c.variants().len() {
        let v = c.variant(vi);
        out.push_str(&format!("# {}  ({}, line {})\n", v.key, v.form, v.line));
        let mut rng = Rng::new(seed_of(&v.key));
        let zero = Values::zero(v.fields.len());
        let samples = std::iter::once(zero).chain((0..SAMPLES).map(|_| random_values(v, &mut rng)));
        for vals in samples {
            let w = c.encode(vi, &vals).unwrap_or_else(|e| panic!("{e}"));
            out.push_str(&format!("{}  {}\n", w.hex(), codec::print(v, &vals)));
        }
    }
    out
}

fn check_names_unique(pages: &[Page]) {
    let mut names: Vec<String> = pages.iter().map(page_name).collect();
    names.sort();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "two pages share an instruction and arch: snapshot names would collide");
}

#[test]
fn spec_snapshots() {
    let pages = pages();
    check_names_unique(&pages);
    for page in &pages {
        let value = serde_json::to_value(page).expect("page serializes");
        insta::with_settings!({
            snapshot_path => snapshot_dir(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => page.file.clone(),
        }, {
            insta::assert_json_snapshot!(format!("spec_{}", page_name(page)), value);
        });
    }
}

#[test]
fn print_snapshots() {
    let pages = pages();
    check_names_unique(&pages);
    for page in &pages {
        let text = printed(page);
        // The zero word prints the page's distilled line: the snapshot starts from the page.
        for v in &page.variants {
            assert!(text.contains(&format!("{}  {}\n", v.fixed_value.hex(), v.distilled)), "{}: zero word", v.key);
        }
        insta::with_settings!({
            snapshot_path => snapshot_dir(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("{}: zero word, then {SAMPLES} random words per variant", page.file),
        }, {
            insta::assert_snapshot!(format!("print_{}", page_name(page)), text);
        });
    }
}

/// One line per variant of a discovered architecture: key, heading, fields with their bits,
/// fixed bits, the bits nvdisasm ignores and table sizes. A new nvdisasm that changes
/// discovery shows here as a diff.
fn discovered_summary(s: &Spec) -> String {
    let mut lines = vec![];
    for v in s.variants() {
        let fields: Vec<String> = v
            .fields
            .iter()
            .filter(|f| !f.is_control())
            .map(|f| format!("{}@{}", f.name.replace(' ', ""), sass_harness::word::format_ranges(&f.bits)))
            .collect();
        let rows: usize = v.tables.iter().map(|t| t.rows.len()).sum();
        let ignored: Vec<u8> = v.ignored.iter().collect();
        let ignored = if ignored.is_empty() { String::new() } else { format!("  ignored {}", sass_harness::word::format_ranges(&ignored)) };
        lines.push(format!(
            "{}  {}  [{}]  fixed mask {:032x} value {}{ignored}  rows {rows}",
            v.key,
            v.heading,
            fields.join(" "),
            v.fixed_mask.0,
            v.fixed_value.hex()
        ));
    }
    lines.sort();
    lines.join("\n") + "\n"
}

/// One line per variant: the conventions it prints with, as its folder's conventions.json
/// stores them (control table rows in full, so a new nvdisasm that changes them shows here
/// as a diff of the forms that use them). A variant without stored conventions says so.
fn conventions_summary(s: &Spec) -> String {
    use sass_harness::spec::conventions::{StoredControl, StoredForm};
    let mut lines = vec![];
    for v in s.variants() {
        let Some(c) = v.conventions.as_deref() else {
            lines.push(format!("{}  none stored", v.key));
            continue;
        };
        let control = StoredControl::of(c).expect("stored tables write back");
        let form = StoredForm::of(c, control.id());
        lines.push(format!("{}  {}", v.key, serde_json::to_string(&form).unwrap()));
        lines.push(format!("{}  {}", control.id(), serde_json::to_string(&control).unwrap()));
    }
    lines.sort();
    lines.dedup();
    lines.join("\n") + "\n"
}

#[test]
fn discovered_spec_snapshots() {
    let root = repo_root().join("corpus/isa-discovered");
    let mut archs: Vec<PathBuf> = std::fs::read_dir(&root).expect("corpus/isa-discovered").map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    archs.sort();
    assert!(!archs.is_empty());
    for dir in archs {
        let s = spec::load(std::slice::from_ref(&dir)).unwrap_or_else(|e| panic!("{e}"));
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        insta::with_settings!({
            snapshot_path => snapshot_dir(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("corpus/isa-discovered/{name}: one line per variant"),
        }, {
            insta::assert_snapshot!(format!("discovered_{name}"), discovered_summary(&s));
        });
        insta::with_settings!({
            snapshot_path => snapshot_dir(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("corpus/isa-discovered/{name}: the printing conventions each variant reads from conventions.json"),
        }, {
            insta::assert_snapshot!(format!("conventions_{name}"), conventions_summary(&s));
        });
    }
}
