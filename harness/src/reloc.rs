//! Relocations in a relocatable cubin's code (`ptxas -c`, `-rdc=true` builds): which
//! `R_CUDA_*` types patch which bits of a word, and how nvdisasm prints the operand they
//! patch. Read off nvdisasm 13.5's listings of `ptxas -c` cubins (`corpus/ptx-rdc`):
//!
//! - `32@lo(garr)`, `32@hi(garr)`: the low and high halves of an address;
//! - `32@lo((kern + .L_x_0@srel))`: a function's own address plus an offset in its code,
//!   which nvdisasm labels (a return address), numbered before the branch targets;
//! - `32@lo(fun@unified(f))`: a function's unified address (a function pointer);
//! - `` `($__sbuf__24)``, `` `(ext_fn)``: a whole address (shared memory, a call target);
//! - `` c[R22+`((k.const_opt.0.16 + -0x8000))]``, `` c[`((ctab + 0x8))]``: a constant
//!   operand whose bank and offset the linker fills in.

/// One relocation of a code section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relocation {
    /// The byte offset in the section of the word it patches (the low 8 bytes of a
    /// 16-byte word come first, so this is 16-aligned, or 8 past for a high-half field).
    pub offset: u64,
    /// Its `R_CUDA_*` type number (`ELF64_R_TYPE`).
    pub kind: u32,
    /// The symbol's name, and whether it is a function (`STT_FUNC`).
    pub symbol: String,
    pub function: bool,
    /// The symbol's section (its index in the section table) and value.
    pub symbol_section: usize,
    pub symbol_value: u64,
    /// The addend (`RELA`; 0 for `REL`).
    pub addend: i64,
}

/// How nvdisasm prints a relocated operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `32@lo(X)`.
    Lo,
    /// `32@hi(X)`.
    Hi,
    /// `` `(X)``.
    Whole,
    /// A constant operand, `` c[R22+`(X)]``.
    Const,
}

/// A relocation type nvdisasm's listings show in code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    pub code: u32,
    pub name: &'static str,
    /// The first bit of the word it patches: the number ending its name.
    pub at: u32,
    pub style: Style,
    /// What wraps the symbol: `fun@unified` for the unified address of a function.
    pub wrap: Option<&'static str>,
}

/// The types seen in ptxas 13.5's code for SM90, SM100 and SM120 and checked against
/// nvdisasm (`corpus/ptx-rdc`), and kin of the same name shape at other
/// bit positions, printed alike but not seen.
/// Another type leaves the operand as the word holds it.
#[rustfmt::skip]
pub const KINDS: [Kind; 15] = [
    // Seen.
    Kind { code: 0x37, name: "R_CUDA_ABS32_32", at: 32, style: Style::Whole, wrap: None },
    Kind { code: 0x38, name: "R_CUDA_ABS32_LO_32", at: 32, style: Style::Lo, wrap: None },
    Kind { code: 0x39, name: "R_CUDA_ABS32_HI_32", at: 32, style: Style::Hi, wrap: None },
    Kind { code: 0x3b, name: "R_CUDA_ABS16_32", at: 32, style: Style::Whole, wrap: None },
    Kind { code: 0x42, name: "R_CUDA_CONST_FIELD21_38", at: 38, style: Style::Const, wrap: None },
    Kind { code: 0x4b, name: "R_CUDA_ABS55_16_34", at: 34, style: Style::Whole, wrap: None },
    Kind { code: 0x70, name: "R_CUDA_UNIFIED32_LO_32", at: 32, style: Style::Lo, wrap: Some("fun@unified") },
    Kind { code: 0x71, name: "R_CUDA_UNIFIED32_HI_32", at: 32, style: Style::Hi, wrap: Some("fun@unified") },
    Kind { code: 0x72, name: "R_CUDA_ABS56_16_34", at: 34, style: Style::Whole, wrap: None },
    Kind { code: 0x73, name: "R_CUDA_CONST_FIELD22_37", at: 37, style: Style::Const, wrap: None },
    // Kin, not seen.
    Kind { code: 0x3a, name: "R_CUDA_ABS47_34", at: 34, style: Style::Whole, wrap: None },
    Kind { code: 0x3c, name: "R_CUDA_ABS24_32", at: 32, style: Style::Whole, wrap: None },
    Kind { code: 0x40, name: "R_CUDA_CONST_FIELD19_40", at: 40, style: Style::Const, wrap: None },
    Kind { code: 0x4a, name: "R_CUDA_ABS24_40", at: 40, style: Style::Whole, wrap: None },
    Kind { code: 0x64, name: "R_CUDA_ABS20_44", at: 44, style: Style::Whole, wrap: None },
];

/// The type numbered `code`, if nvdisasm's printing of it is known.
pub fn kind(code: u32) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.code == code)
}

impl Relocation {
    /// The bit of its 128-bit word where the patched field starts, if its type is known.
    pub fn bit(&self) -> Option<u32> {
        kind(self.kind).map(|k| k.at + 8 * (self.offset % 16) as u32)
    }

    /// What it points at, as nvdisasm prints it inside `32@lo(…)` or `` `(…)``: the
    /// symbol, wrapped (`fun@unified(f)`), or with its addend, `(ctab + 0x8)`, or with
    /// `label` (the label numbered at the addend in the symbol's code), `(k + .L_x_0@srel)`.
    pub fn target(&self, label: Option<usize>) -> String {
        let sym = match kind(self.kind).and_then(|k| k.wrap) {
            Some(w) => format!("{w}({})", self.symbol),
            None => self.symbol.clone(),
        };
        match (label, self.addend) {
            (Some(n), _) => format!("({sym} + .L_x_{n}@srel)"),
            (None, 0) => sym,
            (None, a) if a < 0 => format!("({sym} + -{:#x})", a.unsigned_abs()),
            (None, a) => format!("({sym} + {a:#x})"),
        }
    }

    /// The operand text for a relocated immediate whose target prints as `x` (see
    /// [`Relocation::target`]): `32@lo(x)`, `` `(x)``; `None` for a constant operand's
    /// relocation or an unknown type.
    pub fn immediate(&self, x: &str) -> Option<String> {
        match kind(self.kind)?.style {
            Style::Lo => Some(format!("32@lo({x})")),
            Style::Hi => Some(format!("32@hi({x})")),
            Style::Whole => Some(format!("`({x})")),
            Style::Const => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(kind: u32, symbol: &str, addend: i64) -> Relocation {
        Relocation { offset: 0x10, kind, symbol: symbol.into(), function: false, symbol_section: 0, symbol_value: 0, addend }
    }

    /// Each as nvdisasm 13.5 printed it (`corpus/ptx-rdc/relocations.ptx`, branchy.ptx).
    #[test]
    fn relocated_operands_print_as_nvdisasm_does() {
        let printed = |r: Relocation, label| r.immediate(&r.target(label));
        assert_eq!(printed(r(0x38, "garr", 0), None).unwrap(), "32@lo(garr)");
        assert_eq!(printed(r(0x39, "kern2", 0x1a0), Some(0)).unwrap(), "32@hi((kern2 + .L_x_0@srel))");
        assert_eq!(printed(r(0x70, "local_fn", 0), None).unwrap(), "32@lo(fun@unified(local_fn))");
        assert_eq!(printed(r(0x37, "$__sbuf__24", 0), None).unwrap(), "`($__sbuf__24)");
        assert_eq!(r(0x42, "ctab", 8).target(None), "(ctab + 0x8)");
        assert_eq!(r(0x42, "k.const_opt.0.16", -0x8000).target(None), "(k.const_opt.0.16 + -0x8000)");
        assert_eq!(printed(r(0x42, "ctab", 8), None), None);
        assert_eq!(printed(r(0x99, "x", 0), None), None);
        assert_eq!(r(0x4b, "f", 0).bit(), Some(34));
        assert_eq!(Relocation { offset: 0x18, ..r(0x38, "g", 0) }.bit(), Some(96));
    }

    #[test]
    fn every_kind_starts_at_the_bit_its_name_ends_with() {
        for k in KINDS {
            assert!(k.name.ends_with(&format!("_{}", k.at)), "{k:?}");
        }
    }
}
