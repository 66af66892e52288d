use super::*;

#[test]
fn spaced_constants_read_and_print_as_nvdisasm_spells_them() {
    for t in ["@P0 HADD2 R0, R0, c[0x0] [0x4];", "@P0 F2FP.F16.F32.MERGE_C R0, R0, cx[UR0] [0x0];"] {
        let i = parse_instruction(t).unwrap();
        assert!(i.const_spaced);
        assert_eq!(i.to_string(), t);
    }
    let i = parse_instruction("@P0 FFMA R0, R0, R0, c[0x0][0x4] ;").unwrap();
    assert!(!i.const_spaced);
    assert_eq!(i.operands[3].body, Body::Const { bank: 0, offset: 4 });
}

fn rt(s: &str) {
    let i = parse_instruction(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    assert_eq!(i.to_string(), s, "{i:?}");
}

/// A 64-bit field prints unsigned (MOV.64 on SM120): numbers up to 2^64 - 1 are
/// immediates, read and printed back; offsets stay 64-bit signed.
#[test]
fn sixty_four_bit_immediates_read_and_print() {
    for (t, v) in [("0xfff8000000000000", 0xfff8_0000_0000_0000i128), ("0xffffffffffffffff", u64::MAX.into()), ("-0x8000000000000000", i64::MIN.into())] {
        let i = parse_instruction(&format!("MOV.64 R22, {t} ;")).unwrap();
        assert_eq!(i.operands[1].body, Body::Imm { value: v });
        assert_eq!(i.to_string(), format!("MOV.64 R22, {t} ;"));
    }
    assert_eq!(parse_imm("0x10000000000000000"), None);
    assert_eq!(parse_int("0x8000000000000000"), None);
    assert!(matches!(parse_operand("c[0x0][0x8000000000000000]").map(|o| o.body), Ok(Body::Other { .. }) | Err(_)));
}

#[test]
fn roundtrips_nvdisasm_lines() {
    for s in [
        "@P0 DFMA R0, R0, R0, R0 ;",
        "DFMA RZ, R0, R0, R0 ;",
        "DEPBAR {5,4,3,2,1,0} ;",
        "DEPBAR.LE SB0, 0x1, {2,0} ;",
        "@!PT DFMA R0, -R5, |R0|, -|R2| ;",
        "@P0 QADD4.E5M2x4.E5M2x4 R0, R0.B3210, R0.B3210;",
        "@P0 I2F.???0.U8 R0, R0 ;",
        "@P0 DFMA R0, R0, R0, c[0x0][-0x8000] ;",
        "BSSY B1, 0x4e0 ;",
        "@P0 S2R R0, SR_TID.X ;",
        "@P0 DFMA R0, R0, R0, -c[0x10][0x4] ;",
        "@P0 DFMA R0, R0, cx[UR0][0x0], R0 ;",
        "@P0 DFMA R0, R0, R0, -1.5 ;",
        "@P0 DFMA R0, R0, R0, +INF  ;",
        "@P0 FFMA R0, R1, R3, +INF ;",
        "@P0 DFMA R0, R0, -SNAN , R0 ;",
        "@P0 DFMA R0, R0, R0, -0.0  ;",
        "@P0 DFMA R0, R0, R0, 2.1219957909652723151e-314 ;",
        "@P0 DFMA R0, R0.reuse, URZ, R0 ;",
        "@P0 I2F.???0.U32 R0, 0x0 ;",
        "@P0 DFMA R0, R0, R0, 100 ;",
        "@P0 QADD4.E5M2x4.E5M2x4 R0, R0.B3210, |UR0.B3210|;",
        "@P0 FHFMA R0, -|R1.H1|.reuse, R0, R0 ;",
        "@P0 HADD2.F32 R0, -R0, -|R0|.H0_H0;",
        "@P0 HADD2 R155, -|R180|.H0_H0, -|c[0xb] [-0x2494].H1_H1|;",
        "@P0 HADD2.F32 R43, -R219.H0_H0, |UR22.H1_H1|;",
        "FHFMA.SAT R8, R7, R7.reuse.H1, R2 ;",
        "FHADD.BF16 R4, -|R6|.reuse.H1, -R11 ;",
        "FHFMA.BF16 R243, |R162|.H1, |UR77.H1|, |R109| ;",
    ] {
        rt(s);
    }
}

#[test]
fn structure() {
    let i = parse_instruction("@!P3 FHFMA.RZ.SAT R1, -|R2|.H1, UR4, R255 ;").unwrap();
    assert_eq!(i.pred, Some(Predicate { negated: true, index: 3, uniform: false }));
    let u = parse_instruction("@!UP1 UIADD3 UR4, UR4, 0x1, URZ ;").unwrap();
    assert_eq!(u.pred, Some(Predicate { negated: true, index: 1, uniform: true }));
    assert_eq!(u.to_string(), "@!UP1 UIADD3 UR4, UR4, 0x1, URZ ;");
    assert_eq!(i.modifiers, vec!["RZ", "SAT"]);
    let o = &i.operands[1];
    assert!(o.neg && o.abs);
    assert_eq!(o.body, Body::Reg { n: 2 });
    assert_eq!(o.suffixes, vec!["H1"]);
    // Where the suffixes stood is kept: the same text prints back.
    assert!(o.after_bars);
    let inside = parse_instruction("FHFMA R1, -|R2.H1|.reuse, |UR4|, R255 ;").unwrap();
    assert!(!inside.operands[1].after_bars && inside.operands[1].reuse && !inside.operands[2].after_bars);
    assert_eq!(i.operands[3].body, Body::Reg { n: 255 });
    assert_eq!(i.operands[3].to_string(), "RZ");
    let f = parse_instruction("DFMA R0, R0, R0, -0.0  ;").unwrap();
    assert!(matches!(f.operands[3].body, Body::Float { value, .. } if value == 0.0 && value.is_sign_negative()));
    let d = parse_instruction("DFMA R0, R0, R0, -902600192 ;").unwrap();
    assert!(matches!(d.operands[3].body, Body::Float { value, .. } if value == -902600192.0));
}

/// nvdisasm 13.5's memory operands (SM90 words of LDS, LDL, LDG, ATOMG, ATOMS, LDC, ULDC,
/// ALD, LDGSTS), each read and printed back byte for byte.
#[test]
fn memory_operands_roundtrip_as_nvdisasm_prints_them() {
    for s in [
        "@P0 LDS.U8 R0, [R0] ;",
        "@P0 LDS.U8 R0, [R0+-0x800000] ;",
        "LDS.U8 RZ, [RZ] ;",
        "LDS.U8 RZ, [0x800000] ;",
        "LDS R6, [UR5+0x20] ;",
        "LDS R6, [R254+UR5+0x20] ;",
        "LDS R6, [URZ] ;",
        "@P0 LDL.EF.U8 R0, [R0+URZ] ;",
        "LDG.E.128 R12, desc[UR4][R12.64] ;",
        "ATOMG.E.ADD.STRONG.GPU PT, R20, [RZ.U32+UR4], R12 ;",
        "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R19, [R38.64+UR4+0x10], R13 ;",
        "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R19, desc[UR4][RZ.64+0x10], R13 ;",
        "ATOMS.CAST.SPIN.INVALID7 R0, [R0.X16], R0, R0 ;",
        "@!P0 ATOMS.ARRIVE.???4 R237, [R235.X4+UR45+-0x2f686f] ;",
        "@P0 LDC.U8 R0, c[0x0][R0+-0x8000] ;",
        "LDC.U8 RZ, c[0x0][RZ] ;",
        "LDC.U8 RZ, c[0x1][0x4] ;",
        "@P3 LDC.S8 R176, cx[UR24][R25+0x1ea9] ;",
        "@UP0 ULDC.U8 UR0, c[0x0][URZ];",
        "ULDC.INVALID6 UR4, [UR5+-0x1fb8d89], !UPT;",
        "@!UP2 ULDC.U8 UR6, [0x290807] ;",
        "@P1 ALD.O.128 R51, a[UR21+-0x2c7], R214 ;",
        "ALD RZ, a[0x0], R0 ;",
        "LDGSTS.E.BYPASS.128 [R18+UR8], desc[UR9][R2.64+0x10] ;",
        // Stores and reductions, from ptxas's SM90 code (their words need control bits).
        "STS [R24], RZ ;",
        "@!P1 STS [R0+0x100], R11 ;",
        "REDG.E.ADD.64.STRONG.GPU desc[UR4][R38.64+0x8], R8 ;",
    ] {
        rt(s);
    }
}

/// nvdisasm 13.5's descriptor operands and targets joined to their register (SM90 and
/// SM100 census texts), read and printed back byte for byte.
#[test]
fn descriptors_and_joined_targets_roundtrip() {
    for s in [
        "@UP4 UTMALDG.1D [UR57], [UR46], desc[UR39];",
        "UTMASTG.1D [UR12], [URZ], desc[UR0];",
        "LDTM.16dp256bit.x4 R0, tmem[UR12+-0x1f000000];",
        "UTCQMMA tmem[UR38].A_KEEP, gdesc[UR12].B_KEEP.BUFFER1, tmem[UR4], tmem[UR0], idesc[UR1], UR0, !UP0;",
        "@P0 HGMMA.64x8x16.F16 R0, gdesc[UR0], R0, gsb0;",
        "@P0 CALL.REL P0, R0 0x3440;",
        "RET.ABS.NODEC !PT, UR0 -0x1000000000000 ;",
        "LDG.E.128 R12, desc[UR4][R12.64] ;",
    ] {
        rt(s);
    }
    let d = parse_instruction("UTMALDG.1D [UR57], [UR46], desc[UR39];").unwrap();
    let named = |name| MemSpace::Named { name };
    assert_eq!(d.operands[2].body, Body::Mem { space: named(Descriptor::Desc), reg: None, ureg: Some(39), imm: None });
    let t = parse_instruction("UTCQMMA tmem[UR38+0x10].A_KEEP, gdesc[UR12];").unwrap();
    assert_eq!(t.operands[0].body, Body::Mem { space: named(Descriptor::Tmem), reg: None, ureg: Some(38), imm: Some(0x10) });
    assert_eq!(t.operands[0].suffixes, ["A_KEEP"]);
    // Suffixes after the brackets belong to descriptors only.
    assert_eq!(parse_instruction("LDS R0, [R0].X;").unwrap().operands[1].body, Body::Other { text: "[R0]".into() });
    let c = parse_instruction("@P0 CALL.REL P0, R0 0x3440;").unwrap();
    assert_eq!(c.operands.iter().map(|o| o.joined).collect::<Vec<_>>(), [false, false, true]);
    assert_eq!((&c.operands[1].body, &c.operands[2].body), (&Body::Reg { n: 0 }, &Body::Imm { value: 0x3440 }));
    // Two things that are not both operands stay an error.
    assert!(parse_instruction("CALL.REL P0, R0 |x;").is_err());
}

/// F2FP's `UNPACK_B` from an immediate (SM100, SM120): nvdisasm prints the 32-bit
/// immediate as a float with the half it reads, after a special's own space too; read as
/// one float operand with that suffix and printed back byte for byte. A decimal float's own
/// dots and a hex number's stay theirs.
#[test]
fn floats_carry_the_selector_nvdisasm_prints_after_them() {
    for (s, text, value) in [
        ("F2FP.SATFINITE.BF16.E2M1.UNPACK_B R23, R10, 4.5736980577097704378e-41.H0 ;", "4.5736980577097704378e-41", f64::from(f32::from_bits(0x7f7f))),
        ("@P0 F2FP.BF16.E4M3.UNPACK_B R0, R0, 0.H1 ;", "0", 0.0),
        ("@P0 F2FP.???0.E2M1.???0 R0, R0, -QNAN .H0 ;", "-QNAN ", f64::NAN),
        ("@P6 F2FP.SATFINITE.RELU R64, RZ, +INF .INVALID7 ;", "+INF ", f64::INFINITY),
    ] {
        rt(s);
        let o = &parse_instruction(s).unwrap().operands[2];
        let Body::Float { value: v, text: t } = &o.body else { panic!("{s}: {o:?}") };
        assert_eq!((t.as_str(), o.suffixes.len()), (text, 1), "{s}");
        assert!(*v == value || v.is_nan() && value.is_nan(), "{s}: {v}");
    }
    for (t, core) in [("1.5", "1.5"), ("-2.5e+10", "-2.5e+10"), ("0x1.H", "0x1.H"), ("1.5.H0.reuse", "1.5")] {
        assert_eq!(split_suffixes(t).0, core, "{t}");
    }
    // Before anything but suffixes, a special's space still joins two operands.
    let j = parse_instruction("@P0 DFMA R0, R0, -QNAN R1 ;").unwrap();
    assert_eq!((j.operands.len(), j.operands[2].suffixes.len(), j.operands[3].joined), (4, 0, true));
}

#[test]
fn memory_operand_structure() {
    let i = parse_instruction("ATOMG.E.ADD.STRONG.GPU PT, R19, desc[UR4][R38.64+UR5+-0x10], R13 ;").unwrap();
    let o = &i.operands[2];
    assert_eq!(o.body, Body::Mem { space: MemSpace::Desc { ureg: 4 }, reg: Some(38), ureg: Some(5), imm: Some(-0x10) });
    assert_eq!(o.suffixes, ["64"]);
    let l = parse_instruction("LDS R6, [URZ+0x20] ;").unwrap();
    assert_eq!(l.operands[1].body, Body::Mem { space: MemSpace::Plain, reg: None, ureg: Some(URZ), imm: Some(0x20) });
    // A constant bank with a lone offset is the constant kind, whichever form printed it.
    let c = parse_instruction("LDC.U8 RZ, c[0x1][0x4] ;").unwrap();
    assert_eq!(c.operands[1].body, Body::Const { bank: 1, offset: 4 });
    assert_eq!(c.operands[1].body.as_mem(), Some((MemSpace::Const { bank: 1 }, None, None, Some(4))));
    let r = parse_instruction("@P0 LDC.U8 R0, c[0x2][RZ] ;").unwrap();
    assert_eq!(r.operands[1].body, Body::Mem { space: MemSpace::Const { bank: 2 }, reg: Some(RZ), ureg: None, imm: None });
    assert_eq!(parse_instruction("ALD RZ, a[0x0], R0 ;").unwrap().operands[1].body, Body::Mem { space: MemSpace::Attr, reg: None, ureg: None, imm: Some(0) });
}

#[test]
fn malformed_memory_operands_say_why_and_stay_verbatim() {
    for (t, why) in [
        ("[R0+R1]", "'R1' is not a register, uniform register or immediate in that order"),
        ("[UR1+R0]", "'R0' is not"),
        ("[0x4+UR1]", "'UR1' follows the immediate"),
        ("[]", "empty brackets"),
        ("[R0.]", "empty suffix"),
        ("desc[R4][R0]", "expected a uniform register in 'desc[R4]'"),
        ("c[UR0][R0]", "expected a bank number"),
        ("[R0", "expected '[…]' after the space"),
        ("x[R0]", "does not start with"),
        // A closing bracket first is an error, not a panic.
        ("cx]UR6][UR1]", "unclosed 'cx['"),
        ("c]0x0][R1]", "unclosed 'c['"),
    ] {
        let e = parse_mem(t).unwrap_err().to_string();
        assert!(e.contains(why), "{t}: {e}");
    }
    // In an instruction such a text is kept verbatim, as before memory operands were read.
    let i = parse_instruction("LDS R0, [R0+R1] ;").unwrap();
    assert_eq!(i.operands[1].body, Body::Other { text: "[R0+R1]".into() });
}

#[test]
fn errors_name_the_column() {
    assert!(parse_instruction("").is_err());
    assert_eq!(parse_instruction("@Q1 DFMA R0 ;").unwrap_err().column, 1);
    let e = parse_instruction("DFMA R0, , R1 ;").unwrap_err();
    assert!(e.message.contains("nothing"), "{e}");
    assert!(parse_instruction("DFMA R0, |R1 ;").is_err());
}
