//! `disasm` (cubin → listing) and `asm --patch` (edited listing → cubin), offline.
//!
//! The listing has nvdisasm's layout for code sections: a `.section` line, the section's
//! label, then one instruction per line, `/*0010*/` and the text right-aligned after its
//! predicate as nvdisasm prints it. Branch targets inside the section print as nvdisasm's
//! labels, `` `(.L_x_N)``, numbered in order of first reference over the file's code, then
//! as nvdisasm numbers the places its `.nv.info` attributes and function ends name.
//! Targets outside the section print as absolute addresses. With
//! [`Style::hex`], each word follows its instruction as `nvdisasm -hex` prints it. A word no
//! variant decodes prints as `UNDECODED 0x<word> ;`, which `asm` reads back. In a
//! relocatable cubin, relocated operands print as nvdisasm prints them (`32@lo(garr)`,
//! `` `(f)``: see [`crate::reloc`]), and the labels they define are numbered first.

use crate::codec::{self, Codec};
use crate::cubin::{self, CodeSectionWords, CubinError, Relocation};
use crate::listing::{self, InputError, Listing, RAW_MNEMONIC};
use crate::sass::{Body, Instruction};
use crate::spec::Arch;
use crate::word::Word;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The largest cubin read (ptxas's largest real ones are tens of MB).
pub const MAX_CUBIN_BYTES: u64 = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum DisasmError {
    #[error("{file}: cannot read: {source}")]
    Read { file: String, source: io::Error },
    #[error("{file}: {size} bytes; a cubin may have at most {MAX_CUBIN_BYTES}")]
    TooLarge { file: String, size: u64 },
    #[error("{file}: {source}")]
    Cubin { file: String, source: CubinError },
    #[error("{file}: no instructions ({sections} code section(s), all empty)")]
    NoCode { file: String, sections: usize },
    #[error("{file}: built for SM{found}, but --arch says SM{asked}")]
    ArchMismatch { file: String, found: u32, asked: u32 },
    #[error("cannot write the listing: {0}")]
    Write(#[from] io::Error),
}

/// What a disassembly found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DisasmStats {
    pub sections: usize,
    pub words: usize,
    /// Words no variant decodes (printed as `UNDECODED`).
    pub undecoded: usize,
}

/// A cubin's bytes, bounded; errors name the file.
pub fn read_cubin(path: &Path) -> Result<Vec<u8>, DisasmError> {
    use std::io::Read;
    let file = path.display().to_string();
    // Checked before opening: opening a FIFO would block.
    let meta = std::fs::metadata(path).map_err(|source| DisasmError::Read { file: file.clone(), source })?;
    if !meta.is_file() {
        let source = io::Error::new(io::ErrorKind::InvalidInput, "not a regular file");
        return Err(DisasmError::Read { file, source });
    }
    let f = std::fs::File::open(path).map_err(|source| DisasmError::Read { file: file.clone(), source })?;
    let mut bytes = vec![];
    f.take(MAX_CUBIN_BYTES + 1).read_to_end(&mut bytes).map_err(|source| DisasmError::Read { file: file.clone(), source })?;
    if bytes.len() as u64 > MAX_CUBIN_BYTES {
        return Err(DisasmError::TooLarge { file, size: bytes.len() as u64 });
    }
    Ok(bytes)
}

/// The cubin's architecture (from its ELF header), checked against `asked` when given.
pub fn arch_of(file: &str, cubin: &[u8], asked: Option<u32>) -> Result<Arch, DisasmError> {
    let found = cubin::cubin_arch(cubin).map_err(|source| DisasmError::Cubin { file: file.to_string(), source })?;
    match asked {
        Some(a) if a != found => Err(DisasmError::ArchMismatch { file: file.to_string(), found, asked: a }),
        _ => Ok(Arch(found)),
    }
}

/// The code sections of a cubin, errors naming `file`; a cubin without a single
/// instruction (no `.text.*` section, or only zero-length ones) is an error, since a
/// kernel has at least an EXIT.
pub fn sections_of(file: &str, cubin: &[u8]) -> Result<Vec<CodeSectionWords>, DisasmError> {
    let sections = cubin::code_section_words(cubin).map_err(|source| DisasmError::Cubin { file: file.to_string(), source })?;
    if sections.iter().all(|s| s.words.is_empty()) {
        return Err(DisasmError::NoCode { file: file.to_string(), sections: sections.len() });
    }
    Ok(sections)
}

/// Reads, checks and disassembles a cubin into `out`: the whole path the fuzz target
/// takes (`fuzz/fuzz_targets/cubin.rs`).
pub fn disassemble_bytes(codec: &Codec, file: &str, cubin: &[u8], asked: Option<u32>, style: Style, out: &mut impl Write) -> Result<DisasmStats, DisasmError> {
    let arch = arch_of(file, cubin, asked)?;
    let sections = sections_of(file, cubin)?;
    let infos = infos_of(file, cubin, &sections)?;
    Ok(disassemble(codec, arch, &sections, &infos, style, out)?)
}

/// Each code section's `.nv.info` offsets (see [`cubin::info_offsets`]).
pub fn infos_of(file: &str, cubin: &[u8], sections: &[CodeSectionWords]) -> Result<Vec<cubin::InfoOffsets>, DisasmError> {
    sections
        .iter()
        .map(|s| {
            cubin::info_offsets(cubin, s.name.strip_prefix(".text.").unwrap_or(&s.name)).map_err(|source| DisasmError::Cubin { file: file.to_string(), source })
        })
        .collect()
}

/// One word decoded: its text with targets as absolute addresses, and those targets.
struct Decoded {
    inst: Option<Printed>,
    /// (index into `inst.operands`, absolute target).
    targets: Vec<(usize, i128)>,
    /// Its targets print as offsets from the next instruction, `` `(((T - .) - 0x10))``:
    /// BRX's in a relocatable cubin (see [`brx_target`]).
    from_next: bool,
}

/// A decoded word's text: an instruction whose branch targets labels may replace, or, for a
/// form without targets, the text a [`codec::Printer`] wrote (the same text, without
/// building the instruction).
enum Printed {
    Inst(Instruction),
    Text(String),
}

/// How [`disassemble`] lays a listing out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    /// Each instruction's word after it as `nvdisasm -hex` prints it: `/* 0x<bits 0–63> */`
    /// at one column for the whole file, and a second line with `/* 0x<bits 64–127> */`
    /// at that column.
    pub hex: bool,
    /// Each instruction line led by its word's scheduling bits
    /// (`[----:B------:R-:W-:Y:S04]`, [`crate::codec::Schedule`]), which `asm` reads back.
    pub controls: bool,
}

/// Prints every code section's instructions to `out`; `infos` (one per section, or none)
/// give the labels nvdisasm numbers from `.nv.info` and its annotations (BRX's branch
/// targets, spill code).
pub fn disassemble(
    codec: &Codec,
    arch: Arch,
    sections: &[CodeSectionWords],
    infos: &[cubin::InfoOffsets],
    style: Style,
    out: &mut impl Write,
) -> io::Result<DisasmStats> {
    let printer = codec::Printer::new(codec);
    let relocated = relocation_labels(sections);
    let target = |r: &Relocation| r.target(label_place(sections, r).and_then(|at| relocated.get(&at).copied()));
    let decoded: Vec<Vec<Decoded>> = sections.iter().map(|s| decode_section(&printer, codec, arch, s, &target)).collect();
    let brx: Vec<bool> = decoded.iter().map(|ds| ds.iter().any(|d| d.from_next)).collect();
    let labels = info_labels(sections, infos, &brx, number_labels(sections, &decoded, relocated.clone()));
    let symbols: Vec<HashMap<u64, &str>> = sections.iter().map(|s| s.symbols.iter().map(|(a, n)| (*a, n.as_str())).collect()).collect();
    // One section's instruction lines at a time (a cubin may hold millions of words); with
    // `hex`, a first pass finds the file's widest line, which sets the word column.
    let section_lines = |si: usize| lines_of(&sections[si], &decoded[si], si, infos.get(si), &labels, &symbols[si], style.controls);
    let column = style.hex.then(|| (0..sections.len()).map(|si| hex_column(section_lines(si).0.iter())).max().unwrap_or(0));
    let mut stats = DisasmStats { sections: sections.len(), ..Default::default() };
    for (si, s) in sections.iter().enumerate() {
        let (lines, undecoded) = section_lines(si);
        (stats.words, stats.undecoded) = (stats.words + lines.len(), stats.undecoded + undecoded);
        writeln!(out, "\t.section\t{},\"ax\",@progbits", s.name)?;
        writeln!(out, "{}:", s.name)?;
        for (i, (l, w)) in lines.iter().zip(&s.words).enumerate() {
            write_labels(out, s, si, 16 * i as u64, &labels)?;
            match column {
                Some(c) => writeln!(out, "{l:c$}/* 0x{:016x} */\n{:c$}/* 0x{:016x} */", w.0 as u64, "", (w.0 >> 64) as u64)?,
                None => writeln!(out, "{l}")?,
            }
        }
        write_labels(out, s, si, 16 * s.words.len() as u64, &labels)?;
    }
    Ok(stats)
}

/// Section `s`'s instruction lines (number `si`, its words `ds` decoded, `info` its
/// `.nv.info` offsets), annotations included, each led by its scheduling bits where
/// `controls`, and how many of its words decode as nothing.
fn lines_of(
    s: &CodeSectionWords,
    ds: &[Decoded],
    si: usize,
    info: Option<&cubin::InfoOffsets>,
    labels: &HashMap<(usize, u64), usize>,
    symbols: &HashMap<u64, &str>,
    controls: bool,
) -> (Vec<String>, usize) {
    let texts: Vec<String> = ds.iter().map(|d| labelled(d, s, si, labels, symbols)).collect();
    let annotations = annotations(info, si, labels, &texts);
    let mut undecoded = 0;
    let lines = s
        .words
        .iter()
        .zip(ds)
        .enumerate()
        .map(|(i, (w, d))| {
            let addr = 16 * i as u64;
            let text = match (&d.inst, annotations.get(&addr)) {
                (Some(_), Some(a)) => format!("{}{a}", texts[i].strip_suffix(';').unwrap_or(&texts[i]).trim_end()),
                (Some(_), None) => texts[i].clone(),
                (None, _) => {
                    undecoded += 1;
                    format!("{RAW_MNEMONIC} 0x{} ;", w.hex())
                }
            };
            match controls {
                true => format!("{}{}", codec::Schedule::of(*w), line(addr, &text)),
                false => line(addr, &text),
            }
        })
        .collect();
    (lines, undecoded)
}

/// The column of `nvdisasm -hex`'s word comments: two past the widest instruction line,
/// an annotated line (`… (*"BRANCH_TARGETS .L_x_7"*);`) counted without its `;` (as
/// nvdisasm 13.5 places it on 118 of the 121 cubins the tests compile; on the other three,
/// relocatable ones, it is 4 columns further, for a reason not known).
fn hex_column<'l>(lines: impl Iterator<Item = &'l String>) -> usize {
    lines.map(|l| if l.ends_with("*);") { l.len() - 1 } else { l.len() }).max().unwrap_or(0) + 2
}

/// `labels` (those of relocations and branch targets) with the ones nvdisasm numbers after
/// them, as it lists the other sections in file order: each offset of each
/// `.nv.info.<function>` attribute (attributes and offsets in their order) and each place
/// in code another section's word points at and no symbol names (by the word's offset);
/// then each function symbol's end (symbols in table order). Each takes the next number,
/// even where its place has a label already (that label is kept, and the number is not
/// used), except in debug information, where a place with a label keeps it and takes none.
/// `brx`: per section, whether it has a BRX that relocatable code's jump table serves.
/// (Rules read off nvdisasm 13.5's listings of the corpus cubins: `tools/disasm-listings.sh`.)
fn info_labels(
    sections: &[CodeSectionWords],
    infos: &[cubin::InfoOffsets],
    brx: &[bool],
    mut labels: HashMap<(usize, u64), usize>,
) -> HashMap<(usize, u64), usize> {
    // (listed section, order there, code section, place, debug)
    let mut listed: Vec<(usize, u64, usize, u64, bool)> = vec![];
    for (si, info) in infos.iter().enumerate() {
        let Some(section) = info.section else { continue };
        listed.extend(info.offsets.iter().enumerate().map(|(k, &o)| (section, k as u64, si, o, false)));
    }
    for (si, s) in sections.iter().enumerate() {
        // A place a symbol names prints as the symbol (`.dword kernel`), and takes no number.
        // A jump table counts only for code whose BRX reads it as section offsets
        // (`` BRX R6 `(((.text.k - .) - 0x10))``; `BRXU UR6 -0xb0`'s is listed as bytes).
        let counted = |r: &&cubin::Reference| s.symbols.binary_search_by_key(&r.place, |(a, _)| *a).is_err() && (!r.jump_table || brx[si]);
        let unnamed = s.referenced.iter().filter(counted);
        listed.extend(unnamed.map(|r| (r.section, r.offset, si, r.place, r.debug)));
    }
    listed.sort_unstable_by_key(|&(section, order, ..)| (section, order));
    let mut next = labels.len();
    for (_, _, si, place, debug) in listed {
        if !(debug && labels.contains_key(&(si, place))) {
            labels.entry((si, place)).or_insert(next);
            next += 1;
        }
    }
    let mut ends: Vec<(usize, usize, u64)> = sections.iter().enumerate().flat_map(|(si, s)| s.ends.iter().map(move |&(k, end)| (k, si, end))).collect();
    ends.sort_unstable();
    for (_, si, end) in ends {
        labels.entry((si, end)).or_insert(next);
        next += 1;
    }
    labels
}

/// The symbols and the label defined at `addr`, one line each.
fn write_labels(out: &mut impl Write, s: &CodeSectionWords, si: usize, addr: u64, labels: &HashMap<(usize, u64), usize>) -> io::Result<()> {
    let mut named = false;
    // The symbols are sorted by address (a binary search: a section may hold many).
    let from = s.symbols.partition_point(|(a, _)| *a < addr);
    for (_, name) in s.symbols[from..].iter().take_while(|(a, _)| *a == addr) {
        writeln!(out, "{name}:")?;
        named = true;
    }
    // A symbol's place takes no label line even where a number was spent on it (BRX's
    // target in a relocatable cubin, as nvdisasm lists it).
    if let Some(n) = labels.get(&(si, addr)).filter(|_| !named) {
        writeln!(out, ".L_x_{n}:")?;
    }
    Ok(())
}

/// nvdisasm's annotations, by address: each indirect branch's targets' labels,
/// `(*"BRANCH_TARGETS .L_x_7,.L_x_8"*);`, and `(*"SpillRefill"*);` on spill code (the
/// annotation kinds nvdisasm 13.5 was seen to print; others are left out), padded to the
/// column where the section's longest instruction would end if its predicate were not
/// right-aligned but printed after the 19 columns (the column nvdisasm 13.5 uses on every
/// corpus kernel).
fn annotations(info: Option<&cubin::InfoOffsets>, si: usize, labels: &HashMap<(usize, u64), usize>, texts: &[String]) -> HashMap<u64, String> {
    let Some(info) = info else { return HashMap::new() };
    let width = texts.iter().map(|t| line(0, "").len() + t.len()).max().unwrap_or(0);
    let spills = info.annotations.iter().filter(|(_, kind)| *kind == SPILL_REFILL).map(|&(at, _)| (at, "SpillRefill".to_string()));
    let branches = info.indirect.iter().map(|b| {
        let names: Vec<String> = b.targets.iter().filter_map(|t| labels.get(&(si, *t))).map(|n| format!(".L_x_{n}")).collect();
        (b.at, format!("BRANCH_TARGETS {}", names.join(",")))
    });
    let mut out = HashMap::new();
    for (at, what) in branches.chain(spills) {
        let Some(text) = texts.get((at / 16) as usize).filter(|_| at % 16 == 0) else { continue };
        let body = text.strip_suffix(';').unwrap_or(text).trim_end();
        let pad = width.saturating_sub(line(at, body).len());
        out.entry(at).or_insert_with(|| format!("{:pad$}(*\"{what}\"*);", ""));
    }
    out
}

/// The `EIATTR_ANNOTATIONS` kind nvdisasm prints as `SpillRefill`.
const SPILL_REFILL: u32 = 1;

/// nvdisasm's instruction line: 8 spaces, `/*addr*/`, a predicate register right-aligned
/// so that the mnemonic starts 19 columns after the address; a uniform predicate
/// (`@!UP0`, `@!UPT`) is not aligned, it starts there itself.
fn line(addr: u64, text: &str) -> String {
    let uniform = text.starts_with("@UP") || text.starts_with("@!UP");
    let (pred, rest) = match text.strip_prefix('@').filter(|_| !uniform) {
        Some(_) => match text.split_once(' ') {
            Some((p, r)) => (format!("{p} "), r),
            None => (String::new(), text),
        },
        None => (String::new(), text),
    };
    format!("        /*{addr:04x}*/{pred:>19}{rest}")
}

/// Decodes a section's words; `target` gives a relocation's target as nvdisasm prints it.
fn decode_section(printer: &codec::Printer, codec: &Codec, arch: Arch, s: &CodeSectionWords, target: &dyn Fn(&Relocation) -> String) -> Vec<Decoded> {
    let mut relocations = s.relocations.iter().peekable();
    let mut out = Vec::with_capacity(s.words.len());
    for (i, &w) in s.words.iter().enumerate() {
        let addr = 16 * i as u64;
        let mut mine = vec![];
        while let Some(r) = relocations.next_if(|r| r.offset < addr + 16) {
            mine.extend((r.offset >= addr).then_some(r));
        }
        let plain = || decode_word(printer, codec, arch, w, addr, s.relocatable);
        out.push(match mine.is_empty() {
            true => plain(),
            false => decode_relocated(printer, codec, arch, w, &mine, target).unwrap_or_else(plain),
        });
    }
    out
}

/// Decodes and prints a word at `addr`, its branch targets made absolute (BRX's too in a
/// `relocatable` cubin: see [`brx_target`]).
fn decode_word(printer: &codec::Printer, codec: &Codec, arch: Arch, w: Word, addr: u64, relocatable: bool) -> Decoded {
    let Ok((vi, vals)) = codec.decode(arch, w) else { return Decoded { inst: None, targets: vec![], from_next: false } };
    let v = codec.variant(vi);
    if relocatable && v.mnemonic == "BRX" {
        return brx_target(printer.print_word(vi, &vals, w), addr);
    }
    let form_targets = v.target_operands();
    if form_targets.is_empty() {
        let mut text = String::new();
        printer.print_word_into(vi, &vals, w, &mut text);
        return Decoded { inst: Some(Printed::Text(text)), targets: vec![], from_next: false };
    }
    let mut inst = printer.print_word(vi, &vals, w);
    if codec::conventions::target_is_absolute(&inst.to_string()) {
        return Decoded { inst: Some(Printed::Inst(inst)), targets: vec![], from_next: false };
    }
    // The codec prints targets as if the word sat at 0; nvdisasm adds the address. Targets
    // count from the end: predicates before them may be left out (`BRA` for `BRA PT, …`).
    let shown = inst.operands.len();
    let mut targets = vec![];
    for k in form_targets {
        let Some(k) = (shown + k).checked_sub(v.operands.len()) else { continue };
        if let Some(Body::Imm { value }) = inst.operands.get_mut(k).map(|o| &mut o.body) {
            *value += i128::from(addr);
            targets.push((k, *value));
        }
    }
    Decoded { inst: Some(Printed::Inst(inst)), targets, from_next: false }
}

/// BRX's target in a relocatable cubin: nvdisasm 13.5 prints its offset (from the next
/// instruction to the start of its jump table's code, the section's start in ptxas's
/// code) as `` `(((.text.k - .) - 0x10))``, and numbers a label for it among the branch
/// targets, where an executable cubin's listing prints the number (`BRX R6 -0x120`).
fn brx_target(inst: Instruction, addr: u64) -> Decoded {
    let targets = match inst.operands.last().map(|o| &o.body) {
        Some(&Body::Imm { value }) => vec![(inst.operands.len() - 1, value + i128::from(addr) + 16)],
        _ => vec![],
    };
    let from_next = !targets.is_empty();
    Decoded { inst: Some(Printed::Inst(inst)), targets, from_next }
}

/// A word with relocations, its relocated operands printed as nvdisasm prints them
/// (`32@lo(garr)`, `` `(f)``, `` c[R0+`(X)]``); `None` where the word does not decode or
/// a relocation's operand is not found (the word then prints as it is).
///
/// The operand a relocation patches is the one that prints the field at its first bit:
/// the word is printed with that field at 1 and at 2, and the operand whose text differs
/// is it (an operand nvdisasm leaves out at zero, `CALL.ABS.NOINC R6`'s target, then
/// shows, as it does relocated: `` CALL.ABS.NOINC R6 `(__UFT_OFFSET)``).
fn decode_relocated(
    printer: &codec::Printer,
    codec: &Codec,
    arch: Arch,
    w: Word,
    relocations: &[&Relocation],
    target: &dyn Fn(&Relocation) -> String,
) -> Option<Decoded> {
    let (vi, mut vals) = codec.decode(arch, w).ok()?;
    let v = codec.variant(vi);
    let mut replaced = vec![];
    for r in relocations {
        let bit = r.bit()?;
        // The field starting there, else the one holding it (CALL.ABS's target: its
        // lowest bits are not in the word, `R_CUDA_ABS55_16_34` starts at its bit 34).
        let at = |f: &crate::spec::Field| f.bits.first() == Some(&(bit as u8));
        let f = v.fields.iter().position(at).or_else(|| v.fields.iter().position(|f| f.bits.contains(&(bit as u8))))?;
        let print_at = |x: u64| {
            let mut probe = vals;
            probe.set(f, x);
            printer.print_word(vi, &probe, w)
        };
        let (one, two) = (print_at(1), print_at(2));
        let k = (0..one.operands.len()).find(|&k| one.operands.get(k) != two.operands.get(k))?;
        vals.set(f, 1);
        replaced.push((k, *r));
    }
    let mut inst = printer.print_word(vi, &vals, w);
    for (k, r) in replaced {
        let x = target(r);
        let text = match r.immediate(&x) {
            Some(t) => t,
            None => const_text(&inst.operands.get(k)?.to_string(), &x)?,
        };
        let joined = inst.operands.get(k)?.joined;
        inst.operands[k] = crate::sass::Operand { joined, ..crate::sass::Operand::new(Body::Other { text }) };
    }
    Some(Decoded { inst: Some(Printed::Inst(inst)), targets: vec![], from_next: false })
}

/// A relocated constant operand: `c[0x2][R0+0x4]` with the relocation's target `x`
/// (`(ctab + 0x8)`) is `` c[R0+`((ctab + 0x8))]``: the bank and offset are the linker's,
/// the registers other than RZ and URZ stay (SM100's `LDCU UR6, c[0x3][URZ]` is
/// `` LDCU UR6, c[`((ctab + 0x8))]``).
fn const_text(printed: &str, x: &str) -> Option<String> {
    let inner = printed.strip_prefix("c[")?.split_once("][")?.1.strip_suffix(']')?;
    let kept = |p: &&str| !p.trim_start_matches('-').starts_with("0x") && !matches!(*p, "RZ" | "URZ");
    let mut parts: Vec<&str> = inner.split('+').filter(kept).collect();
    let x = format!("`({x})");
    parts.push(&x);
    Some(format!("c[{}]", parts.join("+")))
}

/// The labels relocations define, (section index, address) → N: a function's address
/// plus an offset into its code (a return address, `32@lo((k + .L_x_0@srel))`), numbered
/// before any branch target, in order of the relocations' places over the sections.
fn relocation_labels(sections: &[CodeSectionWords]) -> HashMap<(usize, u64), usize> {
    let mut labels = HashMap::new();
    for s in sections {
        for r in &s.relocations {
            if let Some(at) = label_place(sections, r) {
                let n = labels.len();
                labels.entry(at).or_insert(n);
            }
        }
    }
    labels
}

/// Where a relocation points inside a code section, if it needs a label there: a
/// function symbol plus a nonzero offset that no symbol names.
fn label_place(sections: &[CodeSectionWords], r: &Relocation) -> Option<(usize, u64)> {
    if !r.function || r.addend == 0 {
        return None;
    }
    let si = sections.iter().position(|s| s.index == r.symbol_section)?;
    let at = r.symbol_value.checked_add_signed(r.addend)?;
    let named = sections[si].symbols.iter().any(|(a, _)| *a == at);
    (!named && at <= 16 * sections[si].words.len() as u64).then_some((si, at))
}

/// Label numbers of in-section targets, (section index, address) → N, in order of first
/// reference over all sections' instructions, as nvdisasm numbers them, after those
/// relocations define (`labels`).
fn number_labels(sections: &[CodeSectionWords], decoded: &[Vec<Decoded>], mut labels: HashMap<(usize, u64), usize>) -> HashMap<(usize, u64), usize> {
    for (si, (s, ds)) in sections.iter().zip(decoded).enumerate() {
        let size = 16 * s.words.len() as i128;
        for d in ds {
            for &(_, t) in &d.targets {
                // A function symbol names its address itself and takes no number (BRX's
                // target in a relocatable cubin takes one all the same).
                let named = s.symbols.iter().any(|(a, _)| i128::from(*a) == t) && !d.from_next;
                if (0..=size).contains(&t) && !named {
                    let n = labels.len();
                    labels.entry((si, t as u64)).or_insert(n);
                }
            }
        }
    }
    labels
}

/// A word's text, its in-section targets as `` `(SYMBOL)`` or `` `(.L_x_N)``.
/// (`d` a word of section `s`, number `si`; empty for a word that does not decode.)
fn labelled(d: &Decoded, s: &CodeSectionWords, si: usize, labels: &HashMap<(usize, u64), usize>, symbols: &HashMap<u64, &str>) -> String {
    let inst = match &d.inst {
        None => return String::new(),
        Some(Printed::Text(t)) => return t.clone(),
        Some(Printed::Inst(i)) => i,
    };
    let mut out = inst.clone();
    for &(k, t) in &d.targets {
        let Ok(t) = u64::try_from(t) else { continue };
        let name = match (symbols.get(&t), labels.get(&(si, t))) {
            _ if d.from_next && t == 0 => s.name.clone(),
            (Some(s), _) => s.to_string(),
            (None, Some(n)) => format!(".L_x_{n}"),
            (None, None) => continue,
        };
        let text = if d.from_next { format!("`((({name} - .) - 0x10))") } else { format!("`({name})") };
        out.operands[k].body = Body::Other { text };
    }
    out.to_string()
}

// ---------------------------------------------------------------------------------------
// asm --patch
// ---------------------------------------------------------------------------------------

#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error(transparent)]
    Cubin(#[from] DisasmError),
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Listing(Vec<InputError>),
    #[error("{file}: cannot write: {source}")]
    Write { file: String, source: io::Error },
    /// No spec for the cubin's architecture (a fatbin's cubins each need their own).
    #[error("{cubin}: {message}")]
    Spec { cubin: String, message: String },
}

/// Each instruction's text as `disasm` lists the cubin's `sections`, by (section, address).
fn own_texts<'s>(codec: &Codec, arch: Arch, sections: &'s [CodeSectionWords]) -> HashMap<(&'s str, u64), String> {
    let mut out = vec![];
    // Labels and annotations need not be known here: only instruction texts are compared.
    if disassemble(codec, arch, sections, &[], Style::default(), &mut out).is_err() {
        return HashMap::new();
    }
    let Ok(own) = listing::read_listing("disasm", out.as_slice()) else { return HashMap::new() };
    let name = |it: &listing::Item| sections.iter().find(|s| Some(s.name.as_str()) == it.section.as_deref()).map(|s| s.name.as_str());
    own.items.iter().filter_map(|it| Some(((name(it)?, it.addr), it.text.clone()))).collect()
}

/// What a patch changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatchStats {
    pub instructions: usize,
    pub changed: usize,
}

/// The cubin with every instruction of `listing` assembled in at its section and address,
/// each word's control bits kept from the original word where the text does not say them.
pub fn patch(codec: &Codec, cubin_name: &str, cubin: &[u8], listing_name: &str, listing: &Listing) -> Result<(Vec<u8>, PatchStats), PatchError> {
    let arch = arch_of(cubin_name, cubin, None)?;
    let sections = sections_of(cubin_name, cubin)?;
    let by_name: HashMap<&str, &CodeSectionWords> = sections.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut errors = vec![];
    let err = |line: usize, message: String| InputError { file: listing_name.to_string(), line, message };
    // Each item's original word: it supplies the control bits.
    let mut originals = Vec::with_capacity(listing.items.len());
    for it in &listing.items {
        let orig = match it.section.as_deref().map(|s| (s, by_name.get(s))) {
            None => Err(err(it.line, "an instruction before any '.section' line: a patch needs to know its code section".into())),
            Some((s, None)) => Err(err(it.line, format!("{cubin_name} has no code section {s}"))),
            Some((s, Some(sec))) => sec
                .words
                .get((it.addr / 16) as usize)
                .filter(|_| it.addr % 16 == 0)
                .copied()
                .ok_or_else(|| err(it.line, format!("address {:#x} lies outside {s} ({:#x} bytes) of {cubin_name}", it.addr, 16 * sec.words.len()))),
        };
        match orig {
            Ok(w) => originals.push(w),
            Err(e) => {
                errors.push(e);
                originals.push(Word::ZERO);
            }
        }
    }
    let index: HashMap<(usize, u64), Word> = listing.items.iter().zip(&originals).map(|(it, w)| ((it.line, it.addr), *w)).collect();
    let assembled = listing::assemble_items(codec, arch, listing_name, listing, &|it| index.get(&(it.line, it.addr)).copied().unwrap_or(Word::ZERO));
    // Worked out only when a line fails: a whole disassembly of the cubin.
    let unedited = if assembled.iter().any(Result::is_err) { own_texts(codec, arch, &sections) } else { HashMap::new() };
    let mut words = Vec::with_capacity(assembled.len());
    for ((it, w), orig) in listing.items.iter().zip(assembled).zip(&originals) {
        match w {
            Ok(w) => words.push(w),
            // A line no word reads as (a relocated operand, `32@lo(g)`, whose value the
            // linker writes) stays the word it is where it reads as `disasm` lists it.
            Err(_) if unedited.get(&(it.section.as_deref().unwrap_or_default(), it.addr)) == Some(&it.text) => words.push(*orig),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        errors.sort_by_key(|e| e.line);
        return Err(PatchError::Listing(errors));
    }
    let mut patches = vec![];
    for ((it, w), orig) in listing.items.iter().zip(words).zip(&originals) {
        if w != *orig {
            patches.push((it.section.clone().unwrap_or_default(), it.addr, w));
        }
    }
    let out = cubin::patch_words(cubin, &patches).map_err(|source| DisasmError::Cubin { file: cubin_name.to_string(), source })?;
    Ok((out, PatchStats { instructions: listing.items.len(), changed: patches.len() }))
}

/// Writes `bytes` to `path` whole or not at all: a temporary file beside it, synced, then
/// renamed over it (a reader never sees a partial cubin; a failure leaves no temporary).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), PatchError> {
    let file = path.display().to_string();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp: PathBuf = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        PatchError::Write { file, source }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_align_the_mnemonic_as_nvdisasm_does() {
        assert_eq!(line(0, "LDC R1, c[0x0][0x28] ;"), "        /*0000*/                   LDC R1, c[0x0][0x28] ;");
        assert_eq!(line(0x70, "@!P0 EXIT ;"), "        /*0070*/              @!P0 EXIT ;");
        assert_eq!(line(0x1e0, "@P0 VIADD R2, R2, 0xfffffc18 ;"), "        /*01e0*/               @P0 VIADD R2, R2, 0xfffffc18 ;");
        assert_eq!(line(0x120, "@!UP0 UIADD3 UR4 ;"), "        /*0120*/                   @!UP0 UIADD3 UR4 ;");
    }
}
