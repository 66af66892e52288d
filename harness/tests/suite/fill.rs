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
/// and two carry-outs (its seed's second carry-out was PT, so the page prints one). Then
/// a census word of `F2F.F16.F32` from a NaN (no solve starts from one: every payload
/// prints alike), whose form the next word, from a zero, adds: it ends counted to that
/// form, not unsolved.
const MISSING: [&str; 7] = [
    "000e6200004048000000000600207304", // F2F.F16.BF16.RM R32, R6 ;
    "000e62000040080000000006001f7304", // F2F.F16.BF16 R31, R6 ;
    "000fc000002020000000000000077304", // F2F.BF16.F32 R7, R0 ;
    "000fc0000030a00000000012001a7310", // F2F.BF16.F64.RP R26, R18 ;
    "000fc4000fc7e0ff8000000406007c10", // IADD3 R0, P3, P4, R6, -UR4, RZ ;
    "000fc00000204c00fffe795d00007904", // F2F.F16.F32.RM R0, -QNAN ;
    "000fc000002008000000000000000904", // F2F.F16.F32 R0, 0 ;
];

/// A census's IADD3 form with a uniform source (`iadd3_noimm__RUR_RUR`), as SM90's
/// whole-architecture discovery keeps it in `census.json`: its seed (from real code)
/// leaves both carry-outs out at PT, so the page solved from it prints one; its alternate,
/// the zero word, prints both, and so does the alternate `IADD3.X` one with carry-outs.
/// Then an LDSM word nvdisasm prints `LDSM.INVALID7.M832.INVALID3`: reserved, not filled.
const CENSUS: &str = r#"{"arch": 90, "tool": "nvdisasm 13.5.37", "words": 4, "forms": [
  {"opclass": "iadd3_noimm__RUR_RUR", "seed": "000fc0000fffe1ff000000071f257c10", "text": "IADD3 R37, -R31, UR7, RZ;",
   "alternates": ["000fc000080000000000000000000c10", "000fc00008000f000000000500037c10"]},
  {"opclass": "ldsm__", "seed": "000fc00007ffff00000000000000783b", "text": "LDSM.INVALID7.M832.INVALID3 R0, [R0];"}]}"#;

/// The census words no page decodes as discovery wrote it (`without_filled`), before
/// `--census` fills their forms.
const CENSUS_MISSING: [&str; 2] = ["000fc000080000000000000000000c10", "000fc00008000f000000000500037c10"];

/// The grown pages decode every word and print it as nvdisasm does (the added forms'
/// conventions learned and stored), and every variant the pages had still decodes its
/// own distilled word as itself: a new variant takes nothing the pages decoded. The words
/// come as `--word`s (real code's) and from a census file (`--census`).
#[test]
fn fill_adds_the_forms_real_code_uses_and_keeps_the_old_ones() {
    let src = common::scratch("fill-src");
    let dir = common::root().join("corpus/isa-discovered/sm90");
    std::fs::copy(dir.join("conventions.json"), src.join("conventions.json")).unwrap();
    // The pages as discovery wrote them, before `discover --fill` appended its forms.
    for page in ["f2f.txt", "iadd3.txt"] {
        std::fs::write(src.join(page), without_filled(&dir, page)).unwrap();
    }
    let census = src.join("census.json");
    std::fs::write(&census, CENSUS).unwrap();
    let out = common::scratch("fill-out");
    let tools = common::nvdisasm_path();
    let path = format!("{}:{}", tools.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = common::bin();
    cmd.args(["discover", "--arch", "90", "--ptx", "none", "--fill"]).arg(&src).arg("--census").arg(&census).arg("--out").arg(&out).env("PATH", &path);
    for w in MISSING {
        cmd.args(["--word", w]);
    }
    let run = cmd.output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report = std::fs::read_to_string(out.join("fill.md")).unwrap();
    assert!(report.contains("0 unsolved"), "{report}");
    assert!(report.contains("`IADD3_R_P_P_R_UR_R_P_P`"), "the census's IADD3.X word gives its form: {report}");
    assert!(report.contains(", 1 printed with a value nvdisasm names") && !report.contains("LDSM"), "the reserved LDSM word is counted, not filled: {report}");

    let words: Vec<Word> = MISSING.iter().chain(&CENSUS_MISSING).map(|w| Word::parse_hex(w).unwrap()).collect();
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

/// SM100's UTCHMMA with tcgen05.mma's scale immediate (`corpus/ptx/tcgen05_scale.ptx`):
/// ptxas's word (URZ, scale 3) does not solve, as the form it gives shares its base word
/// (scale 0) with the page's form without the scale; a census word of the same
/// instruction (UR0, scale 1) solves the form with the scale, which then decodes ptxas's
/// word and takes ptxas's values of the bits nvdisasm ignores, not the census word's (its
/// bit 18 made `asm` of ptxas's text another word).
#[test]
fn a_form_real_code_overlaps_is_solved_from_another_word_with_real_codes_ignored_bits() {
    const PTXAS: &str = "0011d8000800180600ff040e0c0075ea"; // UTCHMMA gdesc[UR12], …, idesc[UR5], UP0, 0x3 ;
    const CENSUS_WORD: &str = "000fc0000802080000000006000475ea"; // UTCHMMA gdesc[UR0], gdesc[UR6].B_KEEP, …, UR0, UP0, 0x1;
    let src = common::scratch("fill-overlap-src");
    let dir = common::root().join("corpus/isa-discovered/sm100");
    std::fs::copy(dir.join("conventions.json"), src.join("conventions.json")).unwrap();
    std::fs::write(src.join("utchmma.txt"), without_filled(&dir, "utchmma.txt")).unwrap();
    let out = common::scratch("fill-overlap-out");
    let tools = common::nvdisasm_path();
    let path = format!("{}:{}", tools.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = common::bin();
    cmd.args(["discover", "--arch", "100", "--ptx", "none", "--fill"]).arg(&src).args(["--word", PTXAS, "--word", CENSUS_WORD]).arg("--out").arg(&out);
    let run = cmd.env("PATH", &path).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report = std::fs::read_to_string(out.join("fill.md")).unwrap();
    assert!(report.contains("0 unsolved") && report.contains(&format!("`{CENSUS_WORD}`")), "{report}");
    let (old, grown) = (spec::load(std::slice::from_ref(&src)).unwrap(), spec::load(std::slice::from_ref(&out)).unwrap());
    let w = Word::parse_hex(PTXAS).unwrap();
    assert!(Codec::new(&old).decode(Arch(100), w).is_err(), "the pages without the filled forms decode ptxas's word: pick another");
    let after = Codec::new(&grown);
    let (vi, vals) = after.decode(Arch(100), w).unwrap();
    let v = after.variant(vi);
    assert!(v.key.ends_with("_UR_UP_I"), "{}", v.key);
    let ignored = v.ignored.0 & !v.fields.iter().filter(|f| f.is_control()).flat_map(|f| &f.bits).fold(0u128, |m, &b| m | 1 << b);
    assert_eq!(v.fixed_value.0 & ignored, w.0 & ignored, "{}: the page's ignored bits are not ptxas's", v.key);
    assert_eq!(after.encode(vi, &vals).unwrap().0 & !(0x7fffffu128 << 105), w.0 & !(0x7fffffu128 << 105), "ptxas's word back from its values");
    let _ = std::fs::remove_dir_all(&src);
    let _ = std::fs::remove_dir_all(&out);
}

/// A census of another architecture is refused, naming the file, before any word is sent.
#[test]
fn a_census_of_another_architecture_is_refused() {
    let src = common::scratch("fill-census-arch");
    let census = src.join("census.json");
    std::fs::write(&census, CENSUS.replace("\"arch\": 90", "\"arch\": 100")).unwrap();
    let out = common::scratch("fill-census-arch-out");
    let run = common::bin()
        .args(["discover", "--arch", "90", "--ptx", "none", "--fill"])
        .arg(&src)
        .arg("--census")
        .arg(&census)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{err}");
    assert!(err.contains("census.json") && err.contains("holds SM100's census, not SM90's"), "{err}");
    assert!(!out.join("fill.md").exists());
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
