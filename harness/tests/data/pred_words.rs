/// Words of the predicate pages (tests/data/preds) and nvdisasm 13.5.37's text for each:
/// tests/suite/codec.rs prints and assembles them, tests/suite/discover.rs asks nvdisasm.
pub const PRED_WORDS: &[(&str, &str)] = &[
    ("@P0 ISETP.F.U32.AND P0, P0, R0, R0, P0;", "0000000000000000000000000000020c"),
    ("@!P3 ISETP.GE.AND P1, PT, R5, RZ, !PT;", "0000000007f26200000000ff0500b20c"),
    ("ISETP.NE.U32.OR P6, P2, RZ, R17, !P4;", "00000000062c540000000011ff00720c"),
    ("@P0 PLOP3.LUT P0, P0, P0, P0, UP0, 0x0, 0x0;", "000000000000000800000000ff00081c"),
    ("PLOP3.LUT P2, PT, !P1, !PT, !UPT, 0x80, 0x8;", "0000000004f5f0f800000000ff08781c"),
    ("PLOP3.LUT PT, P5, PT, P3, !UP6, 0xff, 0x0;", "0000000003de7fef00000000ff00781c"),
    ("@P2 POPC R3, ~R7 ;", "00000000000000008000000700032309"),
    ("POPC R3, ~RZ ;", "0000000000000000800000ff00037309"),
];
