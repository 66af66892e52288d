//! Relations that need no CPU model: operand-form pairs derived from the spec, the pin
//! values that make a pair's inputs equal, ignored-bit and operand-form words proven in
//! place by nvdisasm, and `plan_words` (the seam `crosscheck` calls) with fake devices.

use crate::common;
use sass_harness::codec::Codec;
use sass_harness::oracle::exec::{plan_words, PlanOptions, RunSettings};
use sass_harness::oracle::gpu::cli::read_plan;
use sass_harness::oracle::gpu::dryrun::{cubin_listing, dry_run, Options};
use sass_harness::oracle::gpu::relations::{operand_form_pairs, pin_value, register_twin, RelKind};
use sass_harness::oracle::gpu::{cuda, template};
use sass_harness::oracle::nvdisasm::{Nvdisasm, Outcome};
use sass_harness::oracle::tools::{self, repo_root, Tool};
use sass_harness::spec::{self, Arch};
use sass_harness::word::Word;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("relations-{tag}"))
}

fn pages(names: &[&str]) -> spec::Spec {
    spec::load(&names.iter().map(|n| repo_root().join("corpus/isa-discovered").join(n)).collect::<Vec<_>>()).unwrap()
}

fn pair_keys(c: &Codec) -> BTreeMap<String, String> {
    operand_form_pairs(c).into_iter().map(|(a, b)| (c.variant(a).key.clone(), c.variant(b).key.clone())).collect()
}

#[test]
fn operand_form_pairs_come_from_the_spec() {
    let s = pages(&["sm90/fadd.txt", "sm90/iadd3.txt", "sm90/dfma.txt", "sm90/i2f.txt"]);
    let c = Codec::new(&s);
    let pairs = pair_keys(&c);
    // Register vs immediate vs constant bank vs uniform register: one register form.
    for (from, to) in [
        ("FADD_R_R_F", "FADD_R_R_R"),
        ("FADD_R_R_I_I", "FADD_R_R_R"),
        ("FADD_R_R_UR", "FADD_R_R_R"),
        ("FADD_R_R_UR_I", "FADD_R_R_R"),
        ("IADD3_R_P_P_R_I_R", "IADD3_R_P_P_R_R_R"),
        ("IADD3_R_P_P_R_I_I_R", "IADD3_R_P_P_R_R_R"),
        ("DFMA_R_R_R_F", "DFMA_R_R_R_R"),
        ("DFMA_R_R_I_I_R", "DFMA_R_R_R_R"),
        ("DFMA_R_R_UR_I_R", "DFMA_R_R_R_R"),
    ] {
        assert_eq!(pairs.get(from).map(String::as_str), Some(to), "{from}: {pairs:#?}");
    }
    // A register form has no twin; every twin keeps mnemonic and modifiers (the I2F
    // widths: U32 source immediate → U32 register form, never U16).
    assert!(!pairs.contains_key("FADD_R_R_R") && !pairs.contains_key("DFMA_R_R_R_R"));
    let i2f = |k: &str| pairs.get(k).cloned().unwrap_or_default();
    assert_eq!(i2f("I2F_R_I__i2f_Rd64__IU_32b"), "I2F_R_R__i2f_Rd64__Rb_32b");
    assert_eq!(i2f("I2F_R_UR_I__i2f_Rd64__CX_64b"), "I2F_R_R__i2f_Rd64__Rb_64b");
    for (a, b) in operand_form_pairs(&c) {
        let (va, vb) = (c.variant(a), c.variant(b));
        assert_eq!((va.mnemonic.as_str(), va.arch), (vb.mnemonic.as_str(), vb.arch));
        assert_eq!(va.operands.len(), vb.operands.len(), "{} {}", va.key, vb.key);
    }
    println!("operand_form pairs on these four SM90 pages: {}", pairs.len());
}

#[test]
fn pins_give_the_register_the_operand_value() {
    let s = pages(&["sm90/dfma.txt", "sm90/i2f.txt"]);
    let c = Codec::new(&s);
    let asm = |t: &str| sass_harness::codec::assemble(&c, Arch(90), t, Word::ZERO).unwrap().1;
    let k = 0x4000_0000_0000_0001u64;
    // An f64 immediate: the exact double; a constant: the template's k; URZ: 0.
    assert_eq!(pin_value(&c, Arch(90), asm("DFMA R2, R4, 1.5, R6 ;"), 2, 64, k).unwrap(), 1.5f64.to_bits());
    let off = template::const_input_offset(Arch(90));
    assert_eq!(pin_value(&c, Arch(90), asm(&format!("DFMA R2, R4, c[0x0][{off:#x}], R6 ;")), 2, 64, k).unwrap(), k);
    assert_eq!(pin_value(&c, Arch(90), asm(&format!("DFMA R2, R4, R6, cx[URZ][{off:#x}] ;")), 3, 64, k).unwrap(), k);
    assert_eq!(pin_value(&c, Arch(90), asm("DFMA R2, R4, URZ, R6 ;"), 2, 64, k).unwrap(), 0);
    assert_eq!(pin_value(&c, Arch(90), asm("I2F.F64.U32 R2, 0x1234 ;"), 1, 32, k).unwrap(), 0x1234);
    // The twin of a word is its register form with the same modifiers.
    let (vi, vals, ops) = register_twin(&c, Arch(90), asm("DFMA.RM R2, R4, -1.5, R6 ;")).unwrap();
    assert_eq!(ops, vec![2]);
    let text = sass_harness::codec::print(c.variant(vi), &vals).to_string();
    assert!(text.starts_with("DFMA.RM R2, R4, R4, R6"), "{text}");
}

/// nvdisasm's raw text of each word.
fn texts(nv: &Nvdisasm, arch: &str, words: &[Word]) -> Vec<Option<String>> {
    nv.disassemble(arch, words)
        .unwrap()
        .into_iter()
        .map(|o| match o {
            Outcome::Printed { text } => Some(text),
            _ => None,
        })
        .collect()
}

/// Mnemonic with modifiers of an instruction line.
fn opcode(text: &str) -> String {
    let t = text.trim();
    let t = if t.starts_with('@') { t.split_once(' ').map(|x| x.1).unwrap_or("") } else { t };
    t.split(' ').next().unwrap_or("").to_string()
}

#[test]
#[ignore = "slow: every relation word patched in place and proven by nvdisasm, 23 s at load 9 on 2 cores (bash ci/test.sh runs the slow set)"]
fn relation_words_are_proven_in_place_by_nvdisasm() {
    let s = pages(&["sm90/dfma.txt"]);
    let c = Codec::new(&s);
    let nv = common::nvdisasm();
    let ptxas = tools::locate(Tool::Ptxas).expect("ptxas is required (ci/install-cuda-tools.sh)");
    let out = scratch("dry");
    let rep = dry_run(&c, &nv, &ptxas, &Options { out: out.clone(), slots: 64, random: 0, seed: 3 }).unwrap();
    assert!(rep.failures.is_empty(), "{:#?}", rep.failures);
    let plan = read_plan(&out.join("plan.jsonl")).unwrap();
    let counts = &rep.per_arch[&90];
    assert_eq!((counts.forms, counts.runnable), (9, counts.words), "{counts:?}");
    assert_eq!(counts.forms_ignored_bit, 9, "{counts:?}");
    assert_eq!(counts.forms_operand_form, 9, "{counts:?}");
    let page: BTreeMap<&str, &_> = plan.iter().filter(|e| e.kind == "page").map(|e| (e.values_id.as_str(), e)).collect();
    let mut listings = BTreeMap::new();
    let mut in_place = |cubin: &str, offset: u64| -> String {
        let l = listings.entry(cubin.to_string()).or_insert_with(|| cubin_listing(&nv, &out.join(cubin)).unwrap());
        l.iter().find(|x| x.0 == offset).map(|x| x.1.clone()).unwrap()
    };
    // Every flipped word and its base alone, in one nvdisasm run (one run per pair took
    // most of this test's time).
    let pairs: Vec<Word> = plan
        .iter()
        .filter(|e| e.relation.as_ref().is_some_and(|r| r.kind == RelKind::IgnoredBit))
        .flat_map(|e| [Word::parse_hex(&e.word).unwrap(), Word::parse_hex(e.base_word.as_ref().unwrap()).unwrap()])
        .collect();
    let alone: BTreeMap<Word, Option<String>> = pairs.iter().copied().zip(texts(&nv, "SM90", &pairs)).collect();
    let (mut flips, mut forms) = (0, 0);
    for e in &plan {
        let Some(r) = &e.relation else { continue };
        let partner = page.get(r.with.as_str()).unwrap_or_else(|| panic!("{}: partner {} is not in the plan", e.word, r.with));
        let here = in_place(&e.cubin, e.offset);
        match r.kind {
            RelKind::IgnoredBit => {
                // The flipped word prints exactly as the word without the flip, alone and in place.
                let (w, base) = (Word::parse_hex(&e.word).unwrap(), Word::parse_hex(e.base_word.as_ref().unwrap()).unwrap());
                let t = [&alone[&w], &alone[&base]];
                assert!(t[0].is_some() && t[0] == t[1], "{}: {:?}", e.word, t);
                assert_eq!(Some(here), *t[0]);
                flips += 1;
            }
            RelKind::OperandForm => {
                // Same mnemonic and modifiers in place; the partner has a non-register source.
                let there = in_place(&partner.cubin, partner.offset);
                assert_eq!(opcode(&here), opcode(&there), "{here} / {there}");
                assert_ne!(e.variant, partner.variant);
                assert!(!r.operands.is_empty());
                forms += 1;
            }
        }
    }
    assert!(flips > 0 && forms > 0, "{flips} {forms}");
    println!("sm_90 DFMA: {flips} ignored-bit words and {forms} register-form words proven in place");
}

#[test]
fn plan_words_runs_arbitrary_words_with_the_relations() {
    let s = spec::load(&[repo_root().join("corpus/isa/sm100/002_0a5fb5177dae0430.txt"), repo_root().join("corpus/isa-discovered/sm90/fadd.txt")]).unwrap();
    let c = Codec::new(&s);
    let asm = |a: u32, t: &str| (Arch(a), sass_harness::codec::assemble(&c, Arch(a), t, Word::ZERO).unwrap().1);
    // I2F words (a template holds them; the uniform-register one has a register twin) and
    // one FADD (no template holds it: counted, not an error).
    let words = vec![asm(100, "I2F.RM.S8 R2, R4 ;"), asm(100, "I2F.S8 R2, UR4 ;"), asm(90, "FADD R2, R4, 1.5 ;")];
    let out = scratch("words");
    let run = |fake: &str| RunSettings {
        inputs: 256,
        timeout: std::time::Duration::from_secs(20),
        time_limit: None,
        fake: Some(fake.into()),
        spec: vec![repo_root().join("corpus/isa/sm100/002_0a5fb5177dae0430.txt"), repo_root().join("corpus/isa-discovered/sm90/fadd.txt")],
        exe: Some(PathBuf::from(env!("CARGO_BIN_EXE_sass-harness"))),
    };
    // The suite's nvdisasm, which keeps replies: the four plans prove the same cubins.
    let nv = common::nvdisasm();
    let opts = |r: Option<RunSettings>| PlanOptions { out: out.clone(), slots: 64, seed: 9, run: r, nvdisasm: Some(nv.clone()) };
    let dry = plan_words(&c, &words, &opts(None)).unwrap();
    assert!(dry.plan.failures.is_empty(), "{:?}", dry.plan.failures);
    assert_eq!(dry.plan.no_template, 1);
    assert!(dry.run.is_none() && dry.exit_status() == 0);
    let plan = read_plan(&out.join("plan.jsonl")).unwrap();
    for kind in [RelKind::IgnoredBit, RelKind::OperandForm] {
        assert!(plan.iter().any(|e| e.relation.as_ref().is_some_and(|r| r.kind == kind)), "no {kind:?} in the plan");
    }
    let ok = plan_words(&c, &words, &opts(Some(run("model")))).unwrap();
    let r = ok.run.as_ref().expect("a run");
    assert_eq!((r.findings, ok.exit_status()), (0, 0), "{r:?}");
    assert!(r.relations_checked["rerun"] == r.words_run && r.relations_checked["ignored_bit"] > 0 && r.relations_checked["operand_form"] > 0, "{r:?}");
    let bad = plan_words(&c, &words, &opts(Some(run("wrong")))).unwrap();
    assert_eq!(bad.run.as_ref().unwrap().findings, bad.run.as_ref().unwrap().words_run);
    assert_eq!(bad.exit_status(), 1);
    // Asked to run where there is no device: exit status 3, nothing planned.
    if !cuda::driver_present() {
        let none = plan_words(&c, &words, &opts(Some(RunSettings { fake: None, ..run("model") }))).unwrap();
        assert!(none.no_gpu.is_some() && none.exit_status() == 3, "{:?}", none.no_gpu);
    } else {
        println!("note: a CUDA driver is present: the no-GPU path of plan_words was not checked here");
    }
}
