//! `discover --fill`: forms real code uses that the discovered pages lack, added to them.
//! Needs nvdisasm (installed by `bash ci/install-cuda-tools.sh`); fails without it.

use crate::common;

use sass_harness::codec::Codec;
use sass_harness::oracle::nvdisasm::Outcome;
use sass_harness::spec::{self, Arch};
use sass_harness::word::Word;

/// SM90 words ptxas writes that no committed page decodes (`realcode` on `corpus/ptx-cvt`
/// and `corpus/ptx-holdout2`): `F2F.F16.BF16`, `F2F.BF16.F32`, `F2F.BF16.F64` (whose
/// census seeds met other rows of the same opclasses) and `IADD3` with a uniform source
/// and two carry-outs (its seed's second carry-out was PT, so the page prints one).
const MISSING: [&str; 5] = [
    "000e6200004048000000000600207304", // F2F.F16.BF16.RM R32, R6 ;
    "000e62000040080000000006001f7304", // F2F.F16.BF16 R31, R6 ;
    "000fc000002020000000000000077304", // F2F.BF16.F32 R7, R0 ;
    "000fc0000030a00000000012001a7310", // F2F.BF16.F64.RP R26, R18 ;
    "000fc4000fc7e0ff8000000406007c10", // IADD3 R0, P3, P4, R6, -UR4, RZ ;
];

/// The grown pages decode every word and print it as nvdisasm does (the added forms'
/// conventions learned and stored), and every variant the pages had still decodes its
/// own distilled word as itself: a new variant takes nothing the pages decoded.
#[test]
fn fill_adds_the_forms_real_code_uses_and_keeps_the_old_ones() {
    let src = common::scratch("fill-src");
    let dir = common::root().join("corpus/isa-discovered/sm90");
    for f in ["iadd3.txt", "conventions.json"] {
        std::fs::copy(dir.join(f), src.join(f)).unwrap();
    }
    // F2F's page as discovery wrote it, before `discover --fill` appended its forms.
    std::fs::write(src.join("f2f.txt"), without_filled(&dir, "f2f.txt")).unwrap();
    let out = common::scratch("fill-out");
    let tools = common::nvdisasm_path();
    let path = format!("{}:{}", tools.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = common::bin();
    cmd.args(["discover", "--arch", "90", "--ptx", "none", "--fill"]).arg(&src).arg("--out").arg(&out).env("PATH", &path);
    for w in MISSING {
        cmd.args(["--word", w]);
    }
    let run = cmd.output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report = std::fs::read_to_string(out.join("fill.md")).unwrap();
    assert!(report.contains("0 unsolved"), "{report}");

    let words: Vec<Word> = MISSING.iter().map(|w| Word::parse_hex(w).unwrap()).collect();
    let (old, grown) = (spec::load(std::slice::from_ref(&src)).unwrap(), spec::load(std::slice::from_ref(&out)).unwrap());
    let (before, after) = (Codec::new(&old), Codec::new(&grown));
    assert!(words.iter().all(|&w| before.decode(Arch(90), w).is_err()), "the committed pages decode one of the words: pick others");
    let texts = common::nvdisasm().disassemble("SM90", &words).unwrap();
    for (w, o) in words.iter().zip(&texts) {
        let Outcome::Printed { text } = o else { panic!("{w}: nvdisasm printed {o:?}") };
        let (vi, vals) = after.decode(Arch(90), *w).unwrap_or_else(|e| panic!("{w} ({text}): {e}"));
        let v = after.variant(vi);
        assert_eq!(&sass_harness::print_word(v, &vals, *w).to_string(), text, "{w} as {}", v.key);
        assert!(v.conventions.is_some(), "{}: no stored conventions", v.key);
    }
    assert!(grown.pages.iter().map(|p| p.variants.len()).sum::<usize>() >= old.pages.iter().map(|p| p.variants.len()).sum::<usize>() + 4);
    for (vi, v) in before.variants().iter().enumerate() {
        let w = before.encode(vi, &sass_harness::gen::distilled_values(v)).unwrap();
        let k = after.decode(Arch(90), w).map(|(j, _)| after.variant(j).key.clone());
        assert_eq!(k.as_deref().ok(), Some(v.key.as_str()), "{}'s distilled word {w} decodes otherwise in the grown pages", v.key);
    }
    let _ = std::fs::remove_dir_all(&src);
    let _ = std::fs::remove_dir_all(&out);
}

/// A committed page of `dir` without the variants `discover --fill` appended to it (the
/// last ones, which `FILL.md` lists), its variant count line counted again.
fn without_filled(dir: &std::path::Path, name: &str) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let fill = std::fs::read_to_string(dir.join("FILL.md")).unwrap();
    let added: Vec<&str> = fill.lines().filter(|l| l.contains(&format!("| {name} |"))).filter_map(|l| l.split('`').nth(1)).collect();
    let page = spec::parse_page(name, text.as_bytes()).unwrap();
    let first = page.variants.iter().filter(|v| added.contains(&v.key.as_str())).map(|v| v.line).min().expect("FILL.md lists forms added to the page");
    let n = page.variants.len();
    let kept: Vec<&str> = text.lines().take(first - 1).collect();
    let kept = kept.join("\n").trim_end().to_string() + "\n";
    kept.replacen(&format!("{n} variants on"), &format!("{} variants on", n - added.len()), 1)
}
