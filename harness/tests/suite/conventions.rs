//! The printing conventions stored beside the pages (`conventions.json`): checked by
//! validation against nvdisasm, corrected by `fix`. Needs nvdisasm (fails without it).

use crate::common;

use common::{nvdisasm, root as repo_root, scratch};
use sass_harness::codec::Codec;
use sass_harness::spec::conventions::{ConventionsFile, FILE_NAME};
use sass_harness::spec::{self, Arch};
use sass_harness::validate::{self, Edit, Severity};

/// One mutation per kind of convention, each on its own IMAD form (SM90 discovered page):
/// (form, what the mutation does).
#[rustfmt::skip]
const MUTATIONS: [(&str, &str); 7] = [
    ("IMAD_R_R_R_I",      "control table: another form's (only barrier 7/7 legal)"),
    ("IMAD_R_P_R_I_I_R",  "modifier order: reversed"),
    ("IMAD_R_P_R_I_R",    "immediate signedness: unsigned"),
    ("IMAD_R_P_R_R_R",    "operands left out: none"),
    ("IMAD_R_R_I_I_R",    "alias modifiers: none"),
    ("IMAD_R_P_R_R_UR",   "space bits: none"),
    ("IMAD_R_R_R_R",      "registers printed ???255: the destination (nvdisasm prints RZ)"),
];

fn mutate(file: &mut ConventionsFile, k: usize) {
    let other = file.forms["SM90 BRA_P_REL"].control.clone();
    let f = file.forms.get_mut(&format!("SM90 {}", MUTATIONS[k].0)).expect("form stored");
    match k {
        0 => f.control = other,
        1 => f.order.reverse(),
        2 => f.signed = !f.signed,
        3 => f.omitted.clear(),
        4 => f.aliases.clear(),
        5 => f.space_bits.clear(),
        _ => f.unnamed = vec![0],
    }
}

#[test]
fn each_mutated_convention_is_an_error_that_fix_undoes() {
    let src = repo_root().join("corpus/isa-discovered/sm90");
    let dir = scratch("conv-mut");
    std::fs::copy(src.join("imad.txt"), dir.join("imad.txt")).unwrap();
    let text = std::fs::read(src.join(FILE_NAME)).unwrap();
    let original = ConventionsFile::from_text("original", &text).unwrap();
    let mut mutated = original.clone();
    for (k, (_, what)) in MUTATIONS.iter().enumerate() {
        mutate(&mut mutated, k);
        assert_ne!(mutated.forms, original.forms, "{what}");
    }
    std::fs::write(dir.join(FILE_NAME), mutated.to_text()).unwrap();

    let s = spec::load(std::slice::from_ref(&dir)).unwrap();
    let c = Codec::new(&s);
    let nv = nvdisasm();
    let opts = validate::Options { random_per_variant: 50, ..Default::default() };
    let (_, findings) = validate::validate_page(&s.pages[0], &c, &nv, &opts).unwrap();
    for (key, what) in MUTATIONS {
        let stored = &original.forms[&format!("SM90 {key}")];
        let undoes = |e: &Edit| matches!(e, Edit::Conventions { variant, form, control } if variant == key && form == stored && *control == original.controls[&stored.control]);
        let found =
            findings.iter().find(|f| f.variant == key && f.severity == Severity::Error && f.correction.as_ref().is_some_and(|c| c.edits.iter().any(undoes)));
        assert!(found.is_some(), "{key} ({what}): no error whose correction undoes it");
    }
    // Only the mutated forms: the other IMAD forms' stored conventions hold.
    let keys: Vec<&str> = MUTATIONS.iter().map(|m| m.0).collect();
    let others: Vec<_> = findings
        .iter()
        .filter(|f| f.correction.as_ref().is_some_and(|c| matches!(c.edits[0], Edit::Conventions { .. })) && !keys.contains(&f.variant.as_str()))
        .collect();
    assert!(others.is_empty(), "{others:?}");
    // The words shown reproduce on a fresh nvdisasm run.
    let errors: Vec<_> = findings.iter().filter(|f| f.severity == Severity::Error).cloned().collect();
    assert!(validate::reproduce::reproduce(&nv, &errors).unwrap().is_empty());

    let fixed = sass_harness::fix::correct_conventions(&s, &findings).unwrap();
    let file = &fixed[&dir];
    for (key, _) in MUTATIONS {
        let k = format!("SM90 {key}");
        assert_eq!(file.forms[&k], original.forms[&k], "{key}");
        assert_eq!(file.controls[&file.forms[&k].control], original.controls[&original.forms[&k].control]);
    }
    assert_eq!(file.forms, original.forms, "fix restores every form");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The stored conventions print the words of the offline examples exactly as nvdisasm
/// 13.5.37 does (from the issue that asked for them: ptxas output that printed otherwise
/// before they were stored), with no nvdisasm at all.
#[test]
fn stored_conventions_print_like_nvdisasm_offline() {
    let s = spec::load(&[repo_root().join("corpus/isa-discovered/sm90")]).unwrap();
    let c = Codec::new(&s);
    #[rustfmt::skip]
    let cases = [
        ("000fe200000008000000df00ff017b82", "LDC R1, c[0x0][0x37c] ;"),
        ("000fe40000000f000000000c00087202", "MOV R8, R12 ;"),
        ("046fe400078ec0ff000000ff04087812", "LOP3.LUT R8, R4.reuse, 0xff, RZ, 0xc0, !PT ;"),
        ("010f24000804014700000005ff0075a7", "SYNCS.PHASECHK.TRANS64.TRYWAIT P2, [UR7], R5 ;"),
        ("000fc800078e00ff0000000400007824", "IMAD.SHL.U32 R0, R0, 0x4, RZ ;"),
        ("000fe200078e00fffff80000ff158424", "@!P0 IMAD.MOV.U32 R21, RZ, RZ, -0x80000 ;"),
        ("000fe200078e0004000000ffff008224", "@!P0 IMAD.MOV.U32 R0, RZ, RZ, R4 ;"),
        ("1c0fe200078e960a00000009084f7212", "LOP3.LUT R79, R8.reuse, R9.reuse, R10.reuse, 0x96, !PT ;"),
    ];
    for (hex, text) in cases {
        let w = sass_harness::word::Word::parse_hex(hex).unwrap();
        let (vi, vals) = c.decode(Arch(90), w).unwrap();
        assert_eq!(sass_harness::codec::print_word(c.variant(vi), &vals, w).to_string(), text);
        // And nvdisasm's text assembles back to the word (control bits from the word),
        // alias modifiers included.
        let (_, back) = sass_harness::codec::assemble(&c, Arch(90), text, w).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(back, w, "{text}");
    }
}

/// Registers nvdisasm names `???255` at all ones, not RZ/URZ (SM100 `unnamed at all ones`
/// in the stored conventions): printed as nvdisasm 13.5.37 prints these words (validation's
/// probes), a plain register, a uniform one and a memory operand's base, and assembled back.
#[test]
fn unnamed_registers_print_and_assemble_offline() {
    let s = spec::load(&[repo_root().join("corpus/isa-discovered/sm100")]).unwrap();
    let c = Codec::new(&s);
    #[rustfmt::skip]
    let cases = [
        ("000fc00000200000000000ff00000391", "@P0 CCTLT.IVTH ???255;"),
        ("000fc00008000000000000ff00000d91", "@P0 CCTLT.???0 ???255;"),
        ("000fc0000800000080000000ff0009a8", "@P0 ATOMG.???0.ADD.EF P0, R0, [???255.64+UR0], R0;"),
        ("000fc0000000000000000000ff00099e", "@P0 SUST.D.1D.EF.U8.IGN [???255], R0, R0;"),
        ("000fc00008000000000000ff00000d61", "@P0 TEX.B.EF P0, R0, R0, R0, ???255, 1D, 0x0;"),
    ];
    for (hex, text) in cases {
        let w = sass_harness::word::Word::parse_hex(hex).unwrap();
        let (vi, vals) = c.decode(Arch(100), w).unwrap();
        assert_eq!(sass_harness::codec::print_word(c.variant(vi), &vals, w).to_string(), text);
        let (_, back) = sass_harness::codec::assemble(&c, Arch(100), text, w).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(back, w, "{text}");
    }
}

/// Offsets beside an RZ base that nvdisasm spells against the fixed rules (`offset beside
/// RZ` in the stored conventions): printed as nvdisasm 13.5.37 prints these words
/// (validate's random words; SM90 ALD's from a crosscheck run), signed where a lone offset
/// is otherwise an unsigned address, unsigned where the page's offset is signed, and an
/// attribute offset's low 10 bits. A signed or unsigned spelling assembles back to the
/// word; the low bits to a word that prints the same text (the high bits clear).
#[test]
fn offsets_beside_rz_print_and_assemble_offline() {
    #[rustfmt::skip]
    let cases = [
        (100, "280a700008080000f9ba300000ff0fae", "@P0 LDGSTS.E.BYPASS.EF [-0x645d], [R0.64+UR0], P0 ;", true),
        (100, "080c2800000000008c592900ff00083b", "@P0 LDSM.16.M88 R0, [-0x73a6d7] ;", true),
        (100, "100fcc0000000000e6af4e00ff000844", "@P0 STSM.16.M88 [-0x1950b2], R0 ;", true),
        (90, "200f8800080000ff003896c000000582", "@P0 LDC.U8 R0, cx[UR0][0xe25b] ;", true),
        (90, "00000000000010000007ff00ff000321", "@P0 ALD.P R0, a[0x3ff], ???0 ;", false),
    ];
    for (arch, hex, text, exact) in cases {
        let s = spec::load(&[repo_root().join(format!("corpus/isa-discovered/sm{arch}"))]).unwrap();
        let (c, arch) = (Codec::new(&s), Arch(arch));
        let w = sass_harness::word::Word::parse_hex(hex).unwrap();
        let (vi, vals) = c.decode(arch, w).unwrap();
        assert_eq!(sass_harness::codec::print_word(c.variant(vi), &vals, w).to_string(), text);
        let (bi, back) = sass_harness::codec::assemble(&c, arch, text, w).unwrap_or_else(|e| panic!("{text}: {e}"));
        if exact {
            assert_eq!(back, w, "{text}");
        } else {
            assert_ne!(back, w, "{text}: the high bits are not in the text");
            assert_eq!(sass_harness::codec::print_word(c.variant(bi), &c.extract(bi, back), back).to_string(), text);
        }
        assert_eq!(sass_harness::codec::print::lossless(c.variant(vi), &vals), exact, "{text}");
    }
}

/// A wrong `offset beside RZ` (SM90 STSM's, which nvdisasm prints signed: `[-0x4ae48a]`)
/// is an error whose correction, the learned spelling, `fix` writes back.
#[test]
fn a_wrong_offset_beside_rz_is_an_error_that_fix_undoes() {
    let src = repo_root().join("corpus/isa-discovered/sm90");
    let dir = scratch("conv-rz");
    std::fs::copy(src.join("stsm.txt"), dir.join("stsm.txt")).unwrap();
    let original = ConventionsFile::from_text("original", &std::fs::read(src.join(FILE_NAME)).unwrap()).unwrap();
    let key = "STSM_M_R_I_R";
    let stored = original.forms[&format!("SM90 {key}")].clone();
    assert_eq!(stored.rz_offsets, vec![(0, "signed".to_string())], "the committed spelling");
    let mut mutated = original.clone();
    mutated.forms.get_mut(&format!("SM90 {key}")).unwrap().rz_offsets = vec![(0, "unsigned".into())];
    std::fs::write(dir.join(FILE_NAME), mutated.to_text()).unwrap();

    let s = spec::load(std::slice::from_ref(&dir)).unwrap();
    let c = Codec::new(&s);
    let nv = nvdisasm();
    let opts = validate::Options { random_per_variant: 20, ..Default::default() };
    let (_, findings) = validate::validate_page(&s.pages[0], &c, &nv, &opts).unwrap();
    let undoes = |e: &Edit| matches!(e, Edit::Conventions { variant, form, .. } if variant == key && *form == stored);
    let found =
        findings.iter().find(|f| f.variant == key && f.severity == Severity::Error && f.correction.as_ref().is_some_and(|c| c.edits.iter().any(undoes)));
    let errors: Vec<_> = findings.iter().filter(|f| f.severity == Severity::Error).map(|f| (&f.variant, &f.expected, &f.actual)).collect();
    assert!(found.is_some(), "no error whose correction undoes it; errors: {errors:?}");
    let fixed = sass_harness::fix::correct_conventions(&s, &findings).unwrap();
    assert_eq!(fixed[&dir].forms[&format!("SM90 {key}")], stored);
    let _ = std::fs::remove_dir_all(&dir);
}
