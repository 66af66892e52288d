//! PTX templates: per thread, load inputs, run a placeholder instruction, store its result.
//!
//! Each template holds `slots` independent copies of one placeholder. ptxas picks the
//! registers; [`super::slots`] reads them back from the cubin and traces which input
//! offset feeds each source and which output offset receives the destination.

use crate::spec::Arch;

/// Placeholder kinds: which PTX op ptxas turns into which SASS instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `fma.rn.f64` → `DFMA R, R, R, R` (64-bit pairs).
    Dfma,
    /// `fma.rn.f32.f16` → `FHFMA R, R, R.H1, R`.
    Fhfma,
    /// `cvt.rn.f32.s16` → `I2F.S16 R, R`.
    I2f,
    /// `cvt.rn.f64.s32` → `I2F.F64 R, R`: a 64-bit destination pair.
    I2fF64,
    /// `cvt.rn.f32.s64` → `I2F.S64 R, R`: a 64-bit source pair.
    I2fS64,
    /// `cvt.rn.f64.s64` → `I2F.F64.S64 R, R`: both pairs.
    I2fF64S64,
    /// `add.rn.f16x2` → `HADD2 R, R, R`: a stand-in for QADD4, which no PTX op emits;
    /// same operand shape (three 32-bit registers), fixed latency (stall raised to 15).
    Hadd2,
}

impl Kind {
    /// The template that can host a page mnemonic (I2F: the 32-bit one).
    pub fn for_mnemonic(m: &str) -> Option<Kind> {
        match m {
            "DFMA" => Some(Kind::Dfma),
            "FHFMA" => Some(Kind::Fhfma),
            "I2F" => Some(Kind::I2f),
            "QADD4" => Some(Kind::Hadd2),
            _ => None,
        }
    }
    /// The template for one printed instruction: the mnemonic's, with I2F's register
    /// widths read off its modifiers (`F64` result pair, `S64`/`U64` source pair), so
    /// that a pair never lands on a template's 32-bit registers.
    pub fn for_instruction(mnemonic: &str, modifiers: &[String]) -> Option<Kind> {
        let kind = Kind::for_mnemonic(mnemonic)?;
        if kind != Kind::I2f {
            return Some(kind);
        }
        let has = |m: &str| modifiers.iter().any(|x| x == m);
        Some(match (has("F64"), has("S64") || has("U64")) {
            (false, false) => Kind::I2f,
            (true, false) => Kind::I2fF64,
            (false, true) => Kind::I2fS64,
            (true, true) => Kind::I2fF64S64,
        })
    }
    /// The SASS mnemonic ptxas emits for the placeholder.
    pub fn placeholder(self) -> &'static str {
        match self {
            Kind::Dfma => "DFMA",
            Kind::Fhfma => "FHFMA",
            Kind::I2f | Kind::I2fF64 | Kind::I2fS64 | Kind::I2fF64S64 => "I2F",
            Kind::Hadd2 => "HADD2",
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Dfma => "dfma",
            Kind::Fhfma => "fhfma",
            Kind::I2f => "i2f",
            Kind::I2fF64 => "i2f_f64",
            Kind::I2fS64 => "i2f_s64",
            Kind::I2fF64S64 => "i2f_f64_s64",
            Kind::Hadd2 => "hadd2",
        }
    }
    /// Bytes of input and of output per slot and thread.
    pub fn slot_bytes(self) -> (u32, u32) {
        match self {
            Kind::Dfma => (24, 8),
            Kind::Fhfma => (12, 12),
            Kind::I2f => (4, 4),
            Kind::I2fF64 => (4, 8),
            Kind::I2fS64 => (8, 4),
            Kind::I2fF64S64 => (8, 8),
            Kind::Hadd2 => (8, 4),
        }
    }
    /// Register width of the destination.
    pub fn dst_bits(self) -> u32 {
        match self {
            Kind::Dfma | Kind::I2fF64 | Kind::I2fF64S64 => 64,
            _ => 32,
        }
    }
    /// Register width of each register source.
    pub fn src_bits(self) -> u32 {
        match self {
            Kind::Dfma | Kind::I2fS64 | Kind::I2fF64S64 => 64,
            _ => 32,
        }
    }
    /// Every kind (the dry run's summary lists them).
    pub const ALL: [Kind; 7] = [Kind::Dfma, Kind::Fhfma, Kind::I2f, Kind::I2fF64, Kind::I2fS64, Kind::I2fF64S64, Kind::Hadd2];
    /// ptxas may not emit SM100-only PTX (f32.f16 fma) for older targets.
    pub fn min_arch(self) -> u32 {
        if self == Kind::Fhfma {
            100
        } else {
            80
        }
    }
}

/// First kernel parameter's offset in constant bank 0 (ptxas's ABI per generation).
pub fn param_base(arch: Arch) -> u32 {
    if arch.0 >= 100 {
        0x380
    } else {
        0x210
    }
}

/// Offset in bank 0 of the `k` parameter (after the `out` and `in` pointers): the
/// constant the harness points `c[0x0][…]` sources at.
pub fn const_input_offset(arch: Arch) -> u32 {
    param_base(arch) + 16
}

fn slot_code(kind: Kind, i: u32) -> String {
    let (si, so) = kind.slot_bytes();
    let (a, o) = (i * si, i * so);
    match kind {
        Kind::Dfma => format!(
            " ld.volatile.global.f64 %fd{x},[%rd6+{a}]; ld.volatile.global.f64 %fd{y},[%rd6+{b}]; ld.volatile.global.f64 %fd{z},[%rd6+{c}];\n fma.rn.f64 %fd{d},%fd{x},%fd{y},%fd{z}; st.global.f64 [%rd8+{o}],%fd{d};\n",
            x = 4 * i, y = 4 * i + 1, z = 4 * i + 2, d = 4 * i + 3, b = a + 8, c = a + 16
        ),
        Kind::Fhfma => format!(
            // The raw sources are stored too (canaries), which also keeps ptxas from
            // narrowing the loads to the one half the placeholder reads.
            " ld.volatile.global.b32 %r{x},[%rd6+{a}]; ld.volatile.global.b32 %r{y},[%rd6+{b}]; ld.volatile.global.f32 %f{i},[%rd6+{c}];\n mov.b32 {{%h{p},%h{q}}},%r{x}; mov.b32 {{%h{s},%h{t}}},%r{y};\n fma.rn.f32.f16 %f{d},%h{p},%h{t},%f{i}; st.global.f32 [%rd8+{o}],%f{d};\n st.global.b32 [%rd8+{o4}],%r{x}; st.global.b32 [%rd8+{o8}],%r{y};\n",
            x = 2 * i + 10, y = 2 * i + 11, b = a + 4, c = a + 8, p = 4 * i, q = 4 * i + 1, s = 4 * i + 2, t = 4 * i + 3, d = i + 500, o4 = o + 4, o8 = o + 8
        ),
        Kind::I2f => format!(
            " ld.volatile.global.b32 %r{x},[%rd6+{a}]; cvt.u16.u32 %rs{i},%r{x};\n cvt.rn.f32.s16 %f{i},%rs{i}; st.global.f32 [%rd8+{o}],%f{i};\n",
            x = i + 10
        ),
        Kind::I2fF64 => format!(" ld.volatile.global.b32 %r{x},[%rd6+{a}];\n cvt.rn.f64.s32 %fd{i},%r{x}; st.global.f64 [%rd8+{o}],%fd{i};\n", x = i + 10),
        Kind::I2fS64 => format!(" ld.volatile.global.b64 %rx{i},[%rd6+{a}];\n cvt.rn.f32.s64 %f{i},%rx{i}; st.global.f32 [%rd8+{o}],%f{i};\n"),
        Kind::I2fF64S64 => format!(" ld.volatile.global.b64 %rx{i},[%rd6+{a}];\n cvt.rn.f64.s64 %fd{i},%rx{i}; st.global.f64 [%rd8+{o}],%fd{i};\n"),
        Kind::Hadd2 => format!(
            " ld.volatile.global.b32 %r{x},[%rd6+{a}]; ld.volatile.global.b32 %r{y},[%rd6+{b}];\n add.rn.f16x2 %r{d},%r{x},%r{y}; st.global.b32 [%rd8+{o}],%r{d};\n",
            x = 3 * i + 10, y = 3 * i + 11, d = 3 * i + 12, b = a + 4
        ),
    }
}

/// The PTX of a template with `slots` placeholders for `arch`.
pub fn ptx(kind: Kind, arch: Arch, slots: u32) -> String {
    let (si, so) = kind.slot_bytes();
    let mut s = format!(
        "// sass-harness exec template: {} x{slots}\n.version 8.8\n.target {}\n.address_size 64\n\n\
         .visible .entry slots(.param .u64 out, .param .u64 in, .param .b64 k)\n{{\n\
         .reg .f64 %fd<{n4}>; .reg .f32 %f<{n1}>; .reg .b32 %r<{n3}>; .reg .b16 %h<{n4}>; .reg .b16 %rs<{n1}>; .reg .b64 %rd<10>; .reg .b64 %rx<{n1}>;\n\
         ld.param.u64 %rd1,[out]; ld.param.u64 %rd2,[in];\n\
         cvta.to.global.u64 %rd3,%rd1; cvta.to.global.u64 %rd4,%rd2;\n\
         mov.u32 %r1,%tid.x; mov.u32 %r2,%ctaid.x; mov.u32 %r3,%ntid.x; mad.lo.s32 %r1,%r2,%r3,%r1;\n\
         mul.wide.u32 %rd5,%r1,{ins}; add.s64 %rd6,%rd4,%rd5;\n\
         mul.wide.u32 %rd7,%r1,{outs}; add.s64 %rd8,%rd3,%rd7;\n",
        kind.name(),
        arch.ptxas_name(),
        n4 = 4 * slots + 8,
        n1 = slots + 600,
        n3 = 3 * slots + 20,
        ins = si * slots,
        outs = so * slots,
    );
    for i in 0..slots {
        s.push_str(&slot_code(kind, i));
    }
    s.push_str(" ret;\n}\n");
    s
}
