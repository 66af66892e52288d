use crate::common;

use common::{corpus, root};
use sass_harness::check::roundtrip;
use sass_harness::codec::{self, Codec, Values};
use sass_harness::gen::{random_values, Rng};
use sass_harness::spec;
use sass_harness::word::Word;

#[test]
fn all_18_variants_parse() {
    let s = corpus();
    let keys: Vec<&str> = s.variants().map(|v| v.key.as_str()).collect();
    assert_eq!(keys.len(), 18, "{keys:?}");
}

#[test]
fn zero_word_prints_the_distilled_line() {
    let s = corpus();
    let c = Codec::new(&s);
    for (vi, v) in c.variants().iter().enumerate() {
        let zero = Values::zero(v.fields.len());
        let w = c.encode(vi, &zero).unwrap();
        assert_eq!(w, v.fixed_value);
        assert_eq!(codec::print(v, &zero).to_string(), v.distilled, "{}", v.key);
    }
}

#[test]
fn random_roundtrips_fixed_seed() {
    let s = corpus();
    let c = Codec::new(&s);
    let mut rng = Rng::new(0x5a55);
    for vi in 0..c.variants().len() {
        for _ in 0..3000 {
            let vals = random_values(c.variant(vi), &mut rng);
            if let Err(e) = roundtrip(&c, vi, &vals) {
                panic!("{}: {e}", c.variant(vi).key);
            }
        }
    }
}

/// Regression (`cargo fuzz run roundtrip`, seed `corpus/fuzz/roundtrip/regress_negative_qnan.bin`):
/// a negative NaN immediate printed `-QNAN` but read back as `+QNAN`, losing the sign bit.
#[test]
fn negative_qnan_keeps_its_sign() {
    let s = corpus();
    let c = Codec::new(&s);
    let arch = spec::Arch(90);
    // nvdisasm's spelling: a float special carries a space after it.
    let text = "@!P0 DFMA R53, RZ, -QNAN , R0 ;";
    let (vi, w) = codec::assemble(&c, arch, text, Word::ZERO).expect("assembles");
    assert_eq!(c.variant(vi).key, "DFMA_R_R_F_R");
    assert_eq!(w.hex(), "0000000000000000fff80000ff35882b", "sign bit 63 set");
    let (_, plus) = codec::assemble(&c, arch, "@!P0 DFMA R53, RZ, +QNAN, R0 ;", Word::ZERO).expect("assembles");
    assert_eq!(plus.hex(), "00000000000000007ff80000ff35882b", "sign bit 63 clear");
    // And back: the word prints the same text, which assembles to the same word.
    let (dvi, vals) = c.decode(arch, w).expect("decodes");
    assert_eq!(codec::print(c.variant(dvi), &vals).to_string(), text);
    assert!(roundtrip(&c, dvi, &vals).is_ok());
}

/// Every operand value is checked against its field and the register file: out of range
/// is an error naming the value, never a silently different word.
#[test]
fn assembler_rejects_out_of_range_values() {
    let s = corpus();
    let c = Codec::new(&s);
    let asm = |t: &str| codec::assemble(&c, spec::Arch(90), t, Word::ZERO).map(|(vi, w)| (c.variant(vi).key.clone(), w));
    for (text, want) in [
        ("@P9 DFMA R0, R0, R0, R0 ;", "P9 does not exist"),
        ("@!P8 DFMA R0, R0, R0, R0 ;", "P8 does not exist"),
        ("DFMA R256, R0, R0, R0 ;", "R256 does not fit"),
        // The page gives uniform registers 7 bits (nvdisasm reads 6: a finding of its own);
        // the assembler follows the page.
        ("DFMA R0, R0, UR128, R0 ;", "UR128 does not fit"),
        ("DFMA R0, R0, cx[UR128][0x0], R0 ;", "UR128 does not fit"),
        ("DFMA R0, R0, c[0x20][0x0], R0 ;", "bank 0x20 does not fit"),
        ("DFMA R0, R0, c[0x0][0x10000], R0 ;", "offset 0x10000 does not fit"),
        ("DFMA R0, R0, R0, 1e400 ;", "1e400 is out of range"),
        ("DFMA R0, R0, R0, -1e400 ;", "-1e400 is out of range"),
    ] {
        let e = asm(text).expect_err(text).to_string();
        assert!(e.contains(want), "{text}: {want:?} not in {e}");
    }
    // The largest values that exist still assemble, and read back.
    for text in [
        "@!P6 DFMA R254, RZ, R0, R0 ;",
        "@PT DFMA R0, R0, URZ, R0 ;",
        "DFMA R0, R0, UR127, R0 ;",
        // Constant offsets are signed (nvdisasm prints c[0x0][-0x8000]).
        "DFMA R0, R0, c[0x1f][0x7ffc], R0 ;",
        "DFMA R0, R0, c[0x1f][-0x8000], R0 ;",
        "DFMA R0, R0, cx[URZ][0xfffc], R0 ;",
        "DFMA R0, R0, R0, +INF  ;",
        "DFMA R0, R0, R0, -INF  ;",
    ] {
        let (key, w) = asm(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let (vi, vals) = c.decode(spec::Arch(90), w).unwrap();
        assert_eq!(c.variant(vi).key, key, "{text}");
        let back = codec::print(c.variant(vi), &vals).to_string();
        let norm = |t: &str| t.replace("@PT ", "").replace(" ;", ";");
        assert_eq!(norm(&back), norm(text), "{text}");
    }
}

/// Three forms discovered on SM90 (`harness/tests/data/preds`): ISETP and PLOP3 with `P`/`UP`
/// operands and `cNOT` bits right above predicates, POPC with `~R` (cNOT at 63).
fn preds() -> spec::Spec {
    spec::load(&[root().join("harness/tests/data/preds")]).expect("predicate pages parse")
}

/// The page reads `P`/`UP` forms and `cNOT`, gives each cNOT to its operand, and the words
/// print as nvdisasm 13.5 prints them (`PT`, `!PT`, `!UPT`, `~R7`) and assemble back.
#[test]
fn predicate_operands_and_cnot_print_and_assemble() {
    use spec::OperandKind::{Imm, Pred, Reg, UPred};
    let s = preds();
    let c = Codec::new(&s);
    let not_bits = |key: &str| -> Vec<Option<Vec<u8>>> {
        let v = s.variant(key).unwrap();
        v.operands.iter().map(|o| o.not_field.map(|f| v.fields[f].bits.clone())).collect()
    };
    let kinds = |key: &str| s.variant(key).unwrap().operands.iter().map(|o| o.kind).collect::<Vec<_>>();
    assert_eq!(kinds("ISETP_P_P_R_R_P"), [Pred, Pred, Reg, Reg, Pred]);
    assert_eq!(not_bits("ISETP_P_P_R_R_P"), [None, None, None, None, Some(vec![90])]);
    let imm = Imm(spec::ImmMap::PLAIN);
    assert_eq!(kinds("PLOP3_P_P_P_P_UP_I_I"), [Pred, Pred, Pred, Pred, UPred, imm, imm]);
    assert_eq!(not_bits("PLOP3_P_P_P_P_UP_I_I"), [None, None, Some(vec![90]), Some(vec![80]), Some(vec![71]), None, None]);
    assert_eq!(not_bits("POPC_R_R"), [None, Some(vec![63])]);
    // (text, word): nvdisasm 13.5.37 prints each word as this text (tests/discover.rs asks it).
    for (text, hex) in PRED_WORDS {
        let (vi, w) = codec::assemble(&c, spec::Arch(90), text, Word::ZERO).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(w.hex(), *hex, "{text}");
        let (dvi, vals) = c.decode(spec::Arch(90), w).unwrap();
        assert_eq!(dvi, vi);
        assert_eq!(codec::print(c.variant(vi), &vals).to_string(), *text);
    }
    for (text, want) in [
        ("ISETP.GE.AND P8, P0, R0, R0, P0;", "P8 does not exist (P0..P6, PT)"),
        ("PLOP3.LUT P0, P0, P0, P0, UP9, 0x0, 0x0;", "UP9 does not exist (UP0..UP6, UPT)"),
        ("ISETP.GE.AND !P1, P0, R0, R0, P0;", "operand 0: the page has no ! flag"),
        ("ISETP.GE.AND P1, P0, ~R0, R0, P0;", "operand 2: the page has no ~ flag"),
        ("ISETP.GE.AND P1, P0, R0, R0, UP0;", "operand 4: expected P, found 'UP0'"),
        ("PLOP3.LUT P0, P0, P0, P0, P0, 0x0, 0x0;", "operand 4: expected UP, found 'P0'"),
    ] {
        let e = codec::assemble(&c, spec::Arch(90), text, Word::ZERO).expect_err(text).to_string();
        assert!(e.contains(want), "{text}: {want:?} not in {e}");
    }
    let mut rng = Rng::new(0x9e7);
    for vi in 0..c.variants().len() {
        for _ in 0..3000 {
            let vals = random_values(c.variant(vi), &mut rng);
            if let Err(e) = roundtrip(&c, vi, &vals) {
                panic!("{}: {e}", c.variant(vi).key);
            }
        }
    }
}

include!("../data/pred_words.rs");

/// A page's `floats:` line: the modifier it names chooses its `F` operands' format. FMUL's
/// R,R,F variant (a discovered SM90 page) told that `.M2` takes a double's high half prints
/// 0x3ff00000 as 1 under `.M2` and as fp32 (1.875) without, and reads each text back to
/// its word; a `floats:` line that names no format, no modifier of the variant, or sits on a
/// form without an `F` operand fails the page with its line.
#[test]
fn a_floats_line_lets_a_modifier_choose_the_float_format() {
    let path = root().join("corpus/isa-discovered/sm90/fmul.txt");
    let text = std::fs::read_to_string(path).unwrap();
    // The line goes right before the variant's key (optional lines come in any order).
    let with = |line: &str, key: &str| text.replacen(&format!("key: {key}\n"), &format!("{line}\n\nkey: {key}\n"), 1);
    let page = spec::parse_page("fmul.txt", with("floats: M2=F64", "FMUL_R_R_F").as_bytes()).unwrap();
    let s = spec::Spec { pages: vec![page] };
    let c = Codec::new(&s);
    let vi = c.variants().iter().position(|v| v.key == "FMUL_R_R_F").unwrap();
    let v = c.variant(vi);
    assert_eq!(v.float_by, [("M2".to_string(), spec::FloatFormat::DoubleHigh)]);
    let imm = v.operands[2].value_fields[0].unwrap();
    let group = (0..v.fields.len()).find(|&f| v.field_table(f).is_some_and(|t| t.rows.iter().any(|r| r.name == "M2"))).unwrap();
    let m2 = v.field_table(group).unwrap().rows.iter().find(|r| r.name == "M2").unwrap().value;
    for (g, want) in [(m2, "FMUL.M2 R0, R0, 1"), (4, "FMUL R0, R0, 1.875")] {
        let mut vals = Values::zero(v.fields.len());
        vals.set(imm, 0x3ff0_0000);
        vals.set(group, g);
        let printed = codec::print(v, &vals).to_string();
        assert!(printed.contains(want), "{printed}");
        let w = c.encode(vi, &vals).unwrap();
        let (_, back) = codec::asm::assemble(&c, v.arch, &printed, w).unwrap_or_else(|e| panic!("{printed}: {e}"));
        assert_eq!(back, w, "{printed}");
    }
    for (line, key, says) in [
        ("floats: M2=E4M3", "FMUL_R_R_F", "float format 'E4M3'"),
        ("floats: M2", "FMUL_R_R_F", "is not MODIFIER=FORMAT"),
        ("floats: HI=F64", "FMUL_R_R_F", "'HI' is not a modifier this variant prints"),
        ("floats: M2=F64", "FMUL_R_R_R", "has no F operand"),
    ] {
        let e = spec::parse_page("fmul.txt", with(line, key).as_bytes()).unwrap_err();
        assert!(e.message.contains(says) && e.line > 0, "{line}: {e}");
    }
}

/// SM120's MOV.64 R,I (`harness/tests/data/imm64`, a discovered page): a 64-bit immediate
/// field prints unsigned up to `0xffffffffffffffff` as nvdisasm 13.5.37 does, and each text
/// assembles back to its word; the assembler refuses numbers past a field's width, not
/// silently truncating them, and takes a negative number as the field's two's complement.
#[test]
fn sixty_four_bit_immediates_print_and_assemble() {
    let path = root().join("harness/tests/data/imm64");
    let s = spec::load(&[path]).expect("the MOV.64 page parses");
    let c = Codec::new(&s);
    let arch = spec::Arch(120);
    let v = s.variant_on(arch, "MOV_R_I").unwrap();
    assert_eq!(v.fields[v.operands[1].value_fields[0].unwrap()].width(), 64);
    // (word, nvdisasm's text), the first from ptxas (float_math.ptx).
    for (hex, text) in [
        ("000fd80000fff8000000000000167402", "MOV.64 R22, 0xfff8000000000000 ;"),
        ("000fd800008000000000000000167402", "MOV.64 R22, 0x8000000000000000 ;"),
        ("000fd80000ffffffffffffffff167402", "MOV.64 R22, 0xffffffffffffffff ;"),
        ("000fd800007fffffffffffffff167402", "MOV.64 R22, 0x7fffffffffffffff ;"),
    ] {
        let w = Word::parse_hex(hex).unwrap();
        let (vi, vals) = c.decode(arch, w).unwrap_or_else(|e| panic!("{hex}: {e}"));
        let mut ours = codec::print(c.variant(vi), &vals);
        ours.pred = None; // @PT: nvdisasm leaves it out
        assert_eq!(ours.to_string().replace(';', " ;"), text);
        let (_, back) = codec::assemble(&c, arch, text, w).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(back, w, "{text}");
    }
    let (_, minus_one) = codec::assemble(&c, arch, "MOV.64 R22, -0x1 ;", Word::ZERO).unwrap();
    let (_, all_ones) = codec::assemble(&c, arch, "MOV.64 R22, 0xffffffffffffffff ;", Word::ZERO).unwrap();
    assert_eq!(minus_one, all_ones);
    let e = codec::assemble(&c, arch, "MOV.64 R22, -0x8000000000000001 ;", Word::ZERO).expect_err("past -2^63").to_string();
    assert!(e.contains("does not fit"), "{e}");
    let p = preds();
    let pc = Codec::new(&p);
    let e = codec::assemble(&pc, spec::Arch(90), "PLOP3.LUT P0, P0, P0, P0, UP0, 0xffffffffffffffff, 0x0;", Word::ZERO).expect_err("8 bits").to_string();
    assert!(e.contains("does not fit"), "{e}");
}

/// Pages with a `left out at zero:` line (discovered SM90 pages): BAR.SYNC's thread count
/// and BRX's offset (joined to its register, `I*4`) print nothing at zero and their value
/// otherwise, as nvdisasm does (`BAR.SYNC.DEFER_BLOCKING 0x1, 0x80`, `BRX R6 -0x120`); the
/// assembler reads both texts back to their words, and the JSON spec says it.
#[test]
fn operands_left_out_at_zero_print_and_assemble() {
    let s = spec::load(&[root().join("harness/tests/data/left_out")]).expect("left-out pages parse");
    let c = Codec::new(&s);
    let cases = [
        ("BAR_I_I__bar__SYNC_dfrBlk_II_optionalCount_II", [1, 0], "@P0 BAR.SYNC.DEFER_BLOCKING 0x1;"),
        ("BAR_I_I__bar__SYNC_dfrBlk_II_optionalCount_II", [1, 0x80], "@P0 BAR.SYNC.DEFER_BLOCKING 0x1, 0x80;"),
        ("BRX_P_R_I", [6, 0], "@P0 BRX P0, R6;"),
        ("BRX_P_R_I", [6, 0x48], "@P0 BRX P0, R6 0x120;"),
    ];
    for (key, [first, last], want) in cases {
        let vi = c.variants().iter().position(|v| v.key == key).unwrap_or_else(|| panic!("{key}"));
        let v = c.variant(vi);
        assert!(v.operands.last().unwrap().zero_omitted && v.operands.iter().filter(|o| o.zero_omitted).count() == 1, "{key}");
        let value_field = |k: usize| v.operands[k].value_fields[0].unwrap();
        let mut vals = Values::zero(v.fields.len());
        vals.set(value_field(v.operands.len() - 2), first);
        vals.set(value_field(v.operands.len() - 1), last);
        let printed = codec::print(v, &vals);
        assert_eq!(printed.to_string(), want, "{key}");
        let w = c.encode(vi, &vals).unwrap();
        let (back_vi, back) = codec::asm::assemble(&c, v.arch, want, w).unwrap_or_else(|e| panic!("{want}: {e}"));
        assert_eq!((back_vi, back), (vi, w), "{want}");
        let (dvi, dvals) = c.decode(v.arch, w).unwrap();
        assert_eq!(codec::print(c.variant(dvi), &dvals).to_string(), want);
    }
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(json.matches("\"zero_omitted\":true").count(), 2, "{json}");
}

/// A page's `ignored bits:` line: a word with any value in those bits decodes to the
/// variant (nvdisasm prints it the same), and encoding writes the layout's value there;
/// without the line, the word matches nothing.
#[test]
fn ignored_bits_decode_whatever_they_hold() {
    let page = std::fs::read_to_string(root().join("corpus/isa/sm90/003_ab0fe5b2f4c60028.txt")).unwrap();
    let marked = page.replacen("\n\nkey: DFMA_R_R_R_R\n", "\n\nignored bits: 40..45\n\nkey: DFMA_R_R_R_R\n", 1);
    assert_ne!(marked, page);
    let plain = spec::Spec { pages: vec![spec::parse_page("dfma.txt", page.as_bytes()).unwrap()] };
    let s = spec::Spec { pages: vec![spec::parse_page("dfma.txt", marked.as_bytes()).unwrap()] };
    let c = Codec::new(&s);
    let vi = c.index_of("DFMA_R_R_R_R", None).unwrap();
    let mut vals = Values::zero(c.variant(vi).fields.len());
    vals.set(1, 5);
    let w = c.encode(vi, &vals).unwrap();
    assert!(!w.bit(41), "encoding writes the layout's 0");
    let noisy = w.flip(41).flip(44);
    assert_eq!(c.decode(spec::Arch(90), noisy).map(|(v, x)| (v, x.get(1))), Ok((vi, 5)));
    assert!(Codec::new(&plain).decode(spec::Arch(90), noisy).is_err());
}

/// A page with an `inverted:` line (SM90 LDG's last predicate, bits 64–66, discovered):
/// the codec's value is the printed number and the word holds its complement (P6 is bits
/// `001`, PT bits `000`), the zero word prints the predicate as PT (left out by nvdisasm,
/// put back by the parser), the assembler reads both texts back to their words, and the
/// JSON spec says it.
#[test]
fn inverted_predicates_encode_decode_print_and_assemble() {
    let s = spec::load(&[root().join("harness/tests/data/inverted")]).expect("the inverted page parses");
    let c = Codec::new(&s);
    let vi = c.index_of("LDG_P_R_M_R_I_P", None).expect("LDG_P_R_M_R_I_P");
    let v = c.variant(vi);
    let f = v.operands.last().and_then(|o| o.value_fields[0]).unwrap();
    assert!(v.fields[f].inverted && v.fields[f].bits == [64, 65, 66], "{:?}", v.fields[f]);
    assert_eq!(v.fields.iter().filter(|f| f.inverted).count(), 1);
    let base = sass_harness::gen::distilled_values(v);
    assert_eq!(base.get(f), 7);
    assert_eq!(codec::print(v, &base).to_string(), "@P0 LDG.EF.U8 P0, R0, [R0], PT;");
    let zero = c.encode(vi, &base).unwrap();
    assert_eq!(zero.0 >> 64 & 7, 0);
    for x in 0..8u64 {
        let mut vals = base;
        vals.set(f, x);
        let w = c.encode(vi, &vals).unwrap();
        assert_eq!((w.0 >> 64 & 7) as u64, 7 - x, "P{x}");
        assert_eq!(c.decode(v.arch, w).unwrap(), (vi, vals), "P{x}");
        let want = if x == 7 { "PT".to_string() } else { format!("P{x}") };
        assert!(codec::print(v, &vals).to_string().ends_with(&format!("[R0], {want};")), "P{x}");
    }
    for (text, bits) in [("@P0 LDG.EF.U8 P0, R0, [R0], P6;", 1), ("@P0 LDG.EF.U8 P0, R0, [R0], !P0;", 0xf), ("@P0 LDG.EF.U8 P0, R0, [R0];", 0)] {
        let (back_vi, w) = codec::asm::assemble(&c, v.arch, text, zero).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!((back_vi, w.0 >> 64 & 0xf), (vi, bits), "{text}");
    }
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(json.matches("\"inverted\":true").count(), 1, "{json}");
}

/// `Codec::named` lists, for every architecture and mnemonic of the discovered pages, the
/// variants a scan of all of them finds, in the same order; an unknown name lists none.
#[test]
fn named_variants_are_the_scans() {
    let s = common::discovered();
    let c = Codec::new(&s);
    let mut pairs: Vec<(spec::Arch, &str)> = c.variants().iter().map(|v| (v.arch, v.mnemonic.as_str())).collect();
    pairs.sort();
    pairs.dedup();
    assert!(pairs.len() > 500, "{} names", pairs.len());
    for (arch, m) in pairs {
        let scan: Vec<usize> = (0..c.variants().len()).filter(|&vi| c.variant(vi).arch == arch && c.variant(vi).mnemonic == m).collect();
        assert_eq!(c.named(arch, m), scan.as_slice(), "{arch} {m}");
    }
    assert!(c.named(spec::Arch(90), "NOSUCHOP").is_empty() && c.named(spec::Arch(7), "DFMA").is_empty());
}
