//! Cubins (CUDA ELF files): read the instruction words of their code sections and patch
//! single words in place, e.g. the placeholder instruction of an execution template.
//!
//! A code section is one named `.text.<function>` of type SHT_PROGBITS with SHF_EXECINSTR
//! set, as ptxas writes them. Offsets are relative to the section start, the same numbers
//! nvdisasm prints as `/*0010*/`. Nothing here panics on malformed input: every failure is
//! a [`CubinError`].

pub use crate::reloc::Relocation;
use crate::word::Word;
use object::read::elf::{FileHeader, Rel, Rela, SectionHeader, Sym};
use object::{elf, Endianness, FileKind};

/// Bytes per instruction word (Volta and later).
pub const WORD_BYTES: u64 = 16;

/// One instruction word of a code section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeWord {
    /// The section name, e.g. `.text.saxpy`.
    pub section: String,
    /// The section name minus `.text.`, e.g. `saxpy`.
    pub function: String,
    /// Byte offset of the word within its section.
    pub offset: u64,
    pub word: Word,
}

#[derive(Debug, thiserror::Error)]
pub enum CubinError {
    #[error("not an ELF file ({len} bytes)")]
    NotElf { len: usize },
    #[error("not a cubin: ELF e_machine is {machine}, expected EM_CUDA ({})", elf::EM_CUDA)]
    NotCuda { machine: u16 },
    #[error("malformed ELF: {0}")]
    Elf(#[from] object::read::Error),
    #[error("section {section}: file range {offset:#x}+{size:#x} lies outside the {len}-byte file")]
    SectionOutsideFile { section: String, offset: u64, size: u64, len: usize },
    #[error("section {section}: size {size:#x} is not a multiple of {WORD_BYTES} bytes")]
    RaggedSection { section: String, size: u64 },
    #[error("no code section named {section:?} (code sections: {available})")]
    NoSuchSection { section: String, available: String },
    #[error("code section {section:?} appears {count} times")]
    AmbiguousSection { section: String, count: usize },
    #[error("offset {offset:#x} in {section} is not a multiple of {WORD_BYTES}")]
    Misaligned { section: String, offset: u64 },
    #[error("offset {offset:#x} lies outside {section} ({size:#x} bytes)")]
    OutOfRange { section: String, offset: u64, size: u64 },
    #[error("ELF e_flags {flags:#x} (ABI version {abi}) name no SM architecture")]
    NoArch { flags: u32, abi: u8 },
}

/// A code section's place in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CodeSection {
    /// The section's index in the section table (symbols name it).
    index: usize,
    name: String,
    file_offset: u64,
    size: u64,
}

const TEXT_PREFIX: &str = ".text.";

fn code_sections(data: &[u8]) -> Result<Vec<CodeSection>, CubinError> {
    match FileKind::parse(data) {
        Ok(FileKind::Elf64) => code_sections_of::<elf::FileHeader64<Endianness>>(data),
        Ok(FileKind::Elf32) => code_sections_of::<elf::FileHeader32<Endianness>>(data),
        _ => Err(CubinError::NotElf { len: data.len() }),
    }
}

fn code_sections_of<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<Vec<CodeSection>, CubinError> {
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let machine = header.e_machine(endian);
    if machine != elf::EM_CUDA {
        return Err(CubinError::NotCuda { machine });
    }
    // A truncated file is refused as a whole, not only when the cut hits code: the
    // program headers (at the end of a ptxas cubin) and every section must be present.
    header.program_headers(endian, data)?;
    let table = header.sections(endian, data)?;
    let mut out = Vec::new();
    for (index, sh) in table.iter().enumerate() {
        let name = String::from_utf8_lossy(table.section_name(endian, sh)?).into_owned();
        let (file_offset, size) = if occupies_file(sh.sh_type(endian)) { sh.file_range(endian).unwrap_or((0, 0)) } else { (0, 0) };
        let inside = file_offset.checked_add(size).is_some_and(|end| end <= data.len() as u64);
        if !inside {
            return Err(CubinError::SectionOutsideFile { section: name, offset: file_offset, size, len: data.len() });
        }
        let flags: u64 = sh.sh_flags(endian).into();
        let code = sh.sh_type(endian) == elf::SHT_PROGBITS && flags & u64::from(elf::SHF_EXECINSTR) != 0 && name.starts_with(TEXT_PREFIX);
        if !code {
            continue;
        }
        if !size.is_multiple_of(WORD_BYTES) {
            return Err(CubinError::RaggedSection { section: name, size });
        }
        out.push(CodeSection { index, name, file_offset, size });
    }
    Ok(out)
}

/// `SHT_CUDA_SHARED` and `SHT_CUDA_RESERVED_SHARED` (nvdisasm's names): shared memory,
/// which a relocatable cubin (`ptxas -c`) lists with a size and no bytes in the file, as
/// `SHT_NOBITS` (an executable cubin's type for it).
const SHT_CUDA_SHARED: [u32; 2] = [0x7000_000a, 0x7000_0015];

/// Whether a section of type `sh_type` has bytes in the file.
fn occupies_file(sh_type: u32) -> bool {
    sh_type != elf::SHT_NOBITS && !SHT_CUDA_SHARED.contains(&sh_type)
}

/// The SM architecture a cubin is built for (90 for `sm_90`, `sm_90a`), from its ELF
/// header: ABI version 8 and later (CUDA 12.8 on) keep it in bits 8–15 of `e_flags`
/// (`0x6005a04` for sm_90, `0x6006402` for sm_100, read off ptxas 13.5), earlier ones in
/// bits 0–7 (`EF_CUDA_SM`).
pub fn cubin_arch(data: &[u8]) -> Result<u32, CubinError> {
    match FileKind::parse(data) {
        Ok(FileKind::Elf64) => arch_of::<elf::FileHeader64<Endianness>>(data),
        Ok(FileKind::Elf32) => arch_of::<elf::FileHeader32<Endianness>>(data),
        _ => Err(CubinError::NotElf { len: data.len() }),
    }
}

fn arch_of<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<u32, CubinError> {
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let machine = header.e_machine(endian);
    if machine != elf::EM_CUDA {
        return Err(CubinError::NotCuda { machine });
    }
    let flags = header.e_flags(endian);
    let abi = header.e_ident().abi_version;
    let sm = if abi >= 8 { (flags >> 8) & 0xff } else { flags & 0xff };
    if sm < 20 {
        return Err(CubinError::NoArch { flags, abi });
    }
    Ok(sm)
}

/// A code section: its name (`.text.<function>`), its words in address order, the
/// function symbols defined in it, (offset, name) sorted, and its relocations by offset
/// (a relocatable cubin's wherever the linker writes an address; an executable one's
/// that the driver resolves, `R_CUDA_UNIFIED32_LO_32` for a function pointer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeSectionWords {
    pub name: String,
    /// Its index in the section table (what a symbol's section names).
    pub index: usize,
    pub words: Vec<Word>,
    pub symbols: Vec<(u64, String)>,
    /// Where each function symbol of the section ends (its value plus its size), with the
    /// symbol's index in the symbol table: nvdisasm numbers a label for each end (its
    /// `.size` line), in symbol-table order, after every other label.
    pub ends: Vec<(usize, u64)>,
    pub relocations: Vec<Relocation>,
    /// The places in this section that other sections' words point at (a BRX jump table's,
    /// debug information's relocations), by that section and the word's offset there.
    pub referenced: Vec<Reference>,
    /// Whether the file is relocatable ([`is_relocatable`]).
    pub relocatable: bool,
}

/// A word of another section that points into a code section: nvdisasm lists it as a
/// label (`.word (.L_x_8 - .text.k)` in a jump table, `(k + .L_x_748@srel)` in debug
/// information), numbered as it lists the sections, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reference {
    /// The section holding the word (its index), and the word's offset there.
    pub section: usize,
    pub offset: u64,
    /// The code offset it points at.
    pub place: u64,
    /// Whether that section is debug information (`.debug_*`, `.nv_debug_*`), whose words
    /// take a new label number only for a place no label names yet.
    pub debug: bool,
    /// Whether the word is a BRX jump table's (a relocatable cubin's `.nv.constant2.<function>`
    /// of type `SHT_CUDA_CONSTANT_B2`), not a relocation's.
    pub jump_table: bool,
}

/// Every code section with its words and function symbols, in file order (a zero-length
/// one has no words).
pub fn code_section_words(cubin: &[u8]) -> Result<Vec<CodeSectionWords>, CubinError> {
    let (mut symbols, mut relocations) = match FileKind::parse(cubin) {
        Ok(FileKind::Elf64) => (function_symbols::<elf::FileHeader64<Endianness>>(cubin)?, relocations::<elf::FileHeader64<Endianness>>(cubin)?),
        Ok(FileKind::Elf32) => (function_symbols::<elf::FileHeader32<Endianness>>(cubin)?, relocations::<elf::FileHeader32<Endianness>>(cubin)?),
        _ => return Err(CubinError::NotElf { len: cubin.len() }),
    };
    let relocatable = is_relocatable(cubin)?;
    let code = code_sections(cubin)?;
    let (tables, names) = match FileKind::parse(cubin) {
        Ok(FileKind::Elf64) => (jump_tables::<elf::FileHeader64<Endianness>>(cubin, &code)?, section_names::<elf::FileHeader64<Endianness>>(cubin)?),
        _ => (jump_tables::<elf::FileHeader32<Endianness>>(cubin, &code)?, section_names::<elf::FileHeader32<Endianness>>(cubin)?),
    };
    let debug = |section: usize| names.get(section).is_some_and(|n| n.starts_with(b".debug") || n.starts_with(b".nv_debug"));
    // Looked up per relocation: a hostile file may hold millions of sections and relocations.
    let is_code: std::collections::HashSet<usize> = code.iter().map(|c| c.index).collect();
    let mut referenced: std::collections::HashMap<usize, Vec<Reference>> = std::collections::HashMap::new();
    for (&section, rs) in relocations.iter().filter(|(i, _)| !is_code.contains(i)) {
        for r in rs.iter().filter(|r| is_code.contains(&r.symbol_section)) {
            if let Some(place) = r.symbol_value.checked_add_signed(r.addend) {
                referenced.entry(r.symbol_section).or_default().push(Reference { section, offset: r.offset, place, debug: debug(section), jump_table: false });
            }
        }
    }
    for (code_section, section, offset, place) in tables {
        referenced.entry(code_section).or_default().push(Reference { section, offset, place, debug: false, jump_table: true });
    }
    let mut out = vec![];
    for s in code {
        // code_sections checked that the range lies inside the file, so these fit usize.
        let start = s.file_offset as usize;
        let bytes = &cubin[start..start + s.size as usize];
        let words = bytes.chunks_exact(WORD_BYTES as usize).map(|c| Word::from_le_bytes(c.try_into().expect("16 bytes"))).collect();
        let functions = symbols.remove(&s.index).unwrap_or_default();
        let ends = functions.iter().map(|f| (f.index, f.value.saturating_add(f.size))).collect();
        let mut mine: Vec<(u64, String)> = functions.into_iter().map(|f| (f.value, f.name)).collect();
        mine.sort();
        let mut relocations = relocations.remove(&s.index).unwrap_or_default();
        relocations.sort_by_key(|r| r.offset);
        let mut referenced = referenced.remove(&s.index).unwrap_or_default();
        referenced.sort_unstable();
        out.push(CodeSectionWords { name: s.name, index: s.index, words, symbols: mine, ends, relocations, referenced, relocatable });
    }
    Ok(out)
}

/// The entries of BRX jump tables: `.nv.constant2.<function>` sections of type
/// `SHT_CUDA_CONSTANT_B2` linked to a code section (`SHF_INFO_LINK`, its `sh_info`), whose
/// 32-bit words are offsets into that code (nvdisasm lists them as `.word (.L_x_8 -
/// .text.k)`; ptxas -c writes such tables, an executable cubin's are plain `PROGBITS`, which
/// nvdisasm lists as bytes): (code section index, table section index, the word's offset
/// there, the code offset it holds).
fn jump_tables<Elf: FileHeader<Endian = Endianness>>(data: &[u8], code: &[CodeSection]) -> Result<Vec<(usize, usize, u64, u64)>, CubinError> {
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let table = header.sections(endian, data)?;
    let code_sizes: std::collections::HashMap<usize, u64> = code.iter().map(|c| (c.index, c.size)).collect();
    let mut out = vec![];
    for (index, sh) in table.iter().enumerate() {
        let flags: u64 = sh.sh_flags(endian).into();
        let linked = flags & u64::from(elf::SHF_INFO_LINK) != 0;
        let to = sh.sh_info(endian) as usize;
        let constant_b2 = sh.sh_type(endian) == SHT_CUDA_CONSTANT_B2;
        let Some(&size) = code_sizes.get(&to) else { continue };
        if !linked || !constant_b2 || !table.section_name(endian, sh)?.starts_with(b".nv.constant2.") {
            continue;
        }
        let bytes = sh.data(endian, data).unwrap_or_default();
        // More entries than the code has instructions is no jump table of it (and would cost
        // memory out of proportion to the file): left out.
        if (bytes.len() / 4) as u64 > size / WORD_BYTES {
            continue;
        }
        out.extend((0..bytes.len() / 4).filter_map(|k| u32_at(bytes, 4 * k).map(|place| (to, index, 4 * k as u64, u64::from(place)))));
    }
    Ok(out)
}

/// The section type of a relocatable cubin's jump tables (`SHT_LOPROC + 0x66`, as
/// `readelf` shows it; nvdisasm's `@"SHT_CUDA_CONSTANT_B2"`).
const SHT_CUDA_CONSTANT_B2: u32 = 0x7000_0066;

/// Every section's name, by index.
fn section_names<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<Vec<Vec<u8>>, CubinError> {
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let table = header.sections(endian, data)?;
    table.iter().map(|sh| Ok(table.section_name(endian, sh)?.to_vec())).collect()
}

/// A function symbol: its index in the symbol table, value, size and name.
struct FunctionSymbol {
    index: usize,
    value: u64,
    size: u64,
    name: String,
}

/// Function symbols by section index, in symbol-table order. nvdisasm prints a branch or
/// call to one by its name (`` CALL.REL.NOINC `($__internal_7_…)``, `` RET.REL.NODEC R2 `(kernel)``).
fn function_symbols<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<std::collections::HashMap<usize, Vec<FunctionSymbol>>, CubinError> {
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let table = header.sections(endian, data)?;
    let syms = table.symbols(endian, data, elf::SHT_SYMTAB)?;
    let mut out: std::collections::HashMap<usize, Vec<FunctionSymbol>> = std::collections::HashMap::new();
    for (index, sym) in syms.iter().enumerate() {
        if sym.st_type() != elf::STT_FUNC {
            continue;
        }
        let name = String::from_utf8_lossy(syms.symbol_name(endian, sym)?).into_owned();
        let (value, size) = (sym.st_value(endian).into(), sym.st_size(endian).into());
        out.entry(usize::from(sym.st_shndx(endian))).or_default().push(FunctionSymbol { index, value, size, name });
    }
    Ok(out)
}

/// The relocations of each section (by its index) that `SHT_RELA` and `SHT_REL` sections
/// apply to (their `sh_info`), their symbols read from the symbol table. A relocation
/// naming no symbol of the table is an error. A relocatable cubin has them wherever the
/// linker writes an address; an executable one keeps those the driver resolves
/// (`R_CUDA_UNIFIED32_LO_32`: a function pointer).
fn relocations<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<std::collections::HashMap<usize, Vec<Relocation>>, CubinError> {
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let table = header.sections(endian, data)?;
    let syms = table.symbols(endian, data, elf::SHT_SYMTAB)?;
    let mut out: std::collections::HashMap<usize, Vec<Relocation>> = std::collections::HashMap::new();
    for sh in table.iter() {
        let mut entries: Vec<(u64, u32, u32, i64)> = vec![];
        if let Some((rela, _)) = sh.rela(endian, data)? {
            entries.extend(rela.iter().map(|r| (r.r_offset(endian).into(), r.r_sym(endian, false), r.r_type(endian, false), r.r_addend(endian).into())));
        } else if let Some((rel, _)) = sh.rel(endian, data)? {
            entries.extend(rel.iter().map(|r| (r.r_offset(endian).into(), r.r_sym(endian), r.r_type(endian), 0)));
        }
        for (offset, sym, kind, addend) in entries {
            let s = syms.symbol(object::SymbolIndex(sym as usize))?;
            let symbol = String::from_utf8_lossy(syms.symbol_name(endian, s)?).into_owned();
            let (function, symbol_section, symbol_value) = (s.st_type() == elf::STT_FUNC, usize::from(s.st_shndx(endian)), s.st_value(endian).into());
            let r = Relocation { offset, kind, symbol, function, symbol_section, symbol_value, addend };
            out.entry(sh.sh_info(endian) as usize).or_default().push(r);
        }
    }
    Ok(out)
}

/// Whether the cubin is relocatable (`ET_REL`: `ptxas -c`, `-rdc=true` builds), whose
/// relocated operands nvdisasm prints as symbols.
pub fn is_relocatable(cubin: &[u8]) -> Result<bool, CubinError> {
    fn of<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<bool, CubinError> {
        let header = Elf::parse(data)?;
        Ok(header.e_type(header.endian()?) == elf::ET_REL)
    }
    match FileKind::parse(cubin) {
        Ok(FileKind::Elf64) => of::<elf::FileHeader64<Endianness>>(cubin),
        Ok(FileKind::Elf32) => of::<elf::FileHeader32<Endianness>>(cubin),
        _ => Err(CubinError::NotElf { len: cubin.len() }),
    }
}

/// A copy of `cubin` with every `(section, offset, word)` patched in (see [`patch_word`]);
/// the first bad place is an error and nothing is patched.
pub fn patch_words(cubin: &[u8], patches: &[(String, u64, Word)]) -> Result<Vec<u8>, CubinError> {
    let sections = code_sections(cubin)?;
    let mut out = cubin.to_vec();
    for (section, offset, word) in patches {
        let at = word_place(&sections, section, *offset)?;
        out[at..at + WORD_BYTES as usize].copy_from_slice(&word.to_le_bytes());
    }
    Ok(out)
}

/// Where in the file the word at `offset` of `section` lies.
fn word_place(sections: &[CodeSection], section: &str, offset: u64) -> Result<usize, CubinError> {
    let matching: Vec<&CodeSection> = sections.iter().filter(|s| s.name == section).collect();
    let s = match matching.as_slice() {
        [s] => *s,
        [] => {
            let available = sections.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ");
            return Err(CubinError::NoSuchSection { section: section.to_string(), available });
        }
        many => return Err(CubinError::AmbiguousSection { section: section.to_string(), count: many.len() }),
    };
    if !offset.is_multiple_of(WORD_BYTES) {
        return Err(CubinError::Misaligned { section: section.to_string(), offset });
    }
    if offset.checked_add(WORD_BYTES).is_none_or(|end| end > s.size) {
        return Err(CubinError::OutOfRange { section: section.to_string(), offset, size: s.size });
    }
    Ok((s.file_offset + offset) as usize)
}

/// One indirect branch of `EIATTR_INDIRECT_BRANCH_TARGETS`: the BRX's offset and the
/// offsets it may jump to, in the attribute's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndirectBranch {
    pub at: u64,
    pub targets: Vec<u64>,
}

/// The instruction offsets a function's `.nv.info.<function>` attributes name, in the
/// order they appear (nvdisasm gives each a label, numbered in that order after the
/// labels of branch targets), and its indirect branches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InfoOffsets {
    pub offsets: Vec<u64>,
    pub indirect: Vec<IndirectBranch>,
    /// `EIATTR_ANNOTATIONS`: (instruction offset, kind), in the attribute's order; nvdisasm
    /// prints kind 1 as `(*"SpillRefill"*)` after the instruction.
    pub annotations: Vec<(u64, u32)>,
    /// The `.nv.info.<function>` section's index (nvdisasm numbers the labels of these
    /// sections' offsets in file order); none without that section.
    pub section: Option<usize>,
}

/// Attributes that are arrays of records whose first 32 bits are an instruction offset,
/// with each record's size (codes and layouts read off nvdisasm 13.5's `.nv.info`
/// listings, which print each such offset as a label): EXIT_INSTR_OFFSETS,
/// COOP_GROUP_INSTR_OFFSETS, INT_WARP_WIDE_INSTR_OFFSETS (4 bytes), UNUSED_LOAD_BYTE_OFFSET
/// (8: the offset, then a mask), MBARRIER_INSTR_OFFSETS (16: the offset, then three words).
/// (0x29, COOP_GROUP_MASK_REGIDS, holds register ids, not offsets.)
const OFFSET_ATTRIBUTES: [(u8, usize); 5] = [(0x1c, 4), (0x28, 4), (0x31, 4), (0x44, 8), (0x39, 16)];
/// EIATTR_ANNOTATIONS: 8-byte records {u32 kind, u32 instruction offset}.
const ANNOTATIONS: u8 = 0x55;
/// EIATTR_INDIRECT_BRANCH_TARGETS: entries of {u32 offset, u16, u16, u32 n, n × u32}.
const INDIRECT_BRANCH_TARGETS: u8 = 0x34;

/// The offsets `.nv.info.<function>` names (none without that section). Reads what it
/// can: a malformed attribute list ends the reading, it is no error (the listing then
/// lacks some labels, the instructions are unaffected).
pub fn info_offsets(cubin: &[u8], function: &str) -> Result<InfoOffsets, CubinError> {
    let bytes = match FileKind::parse(cubin) {
        Ok(FileKind::Elf64) => section_bytes::<elf::FileHeader64<Endianness>>(cubin, &format!(".nv.info.{function}"))?,
        Ok(FileKind::Elf32) => section_bytes::<elf::FileHeader32<Endianness>>(cubin, &format!(".nv.info.{function}"))?,
        _ => return Err(CubinError::NotElf { len: cubin.len() }),
    };
    Ok(bytes.map(|(section, b)| InfoOffsets { section: Some(section), ..parse_info(b) }).unwrap_or_default())
}

/// A section's index and bytes by name, if it has some inside the file.
fn section_bytes<'d, Elf: FileHeader<Endian = Endianness>>(data: &'d [u8], name: &str) -> Result<Option<(usize, &'d [u8])>, CubinError> {
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let table = header.sections(endian, data)?;
    for (index, sh) in table.iter().enumerate() {
        if table.section_name(endian, sh)? == name.as_bytes() {
            return Ok(sh.data(endian, data).ok().map(|b| (index, b)));
        }
    }
    Ok(None)
}

/// The little-endian `u32` at `at`, if `b` holds it (fatbin headers are read so too).
pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at.checked_add(4)?).map(|x| u32::from_le_bytes(x.try_into().expect("4 bytes")))
}

/// Attributes: a format byte and an attribute byte, then for format 4 a 16-bit size and
/// that many bytes, else a 16-bit value.
fn parse_info(b: &[u8]) -> InfoOffsets {
    let mut out = InfoOffsets::default();
    let mut at = 0usize;
    while at + 4 <= b.len() {
        let (format, attr) = (b[at], b[at + 1]);
        let value = u16::from_le_bytes([b[at + 2], b[at + 3]]) as usize;
        at += 4;
        if format != 4 {
            continue;
        }
        let Some(payload) = b.get(at..at + value) else { break };
        at += value;
        if let Some(&(_, size)) = OFFSET_ATTRIBUTES.iter().find(|(a, _)| *a == attr) {
            out.offsets.extend((0..payload.len() / size).filter_map(|i| u32_at(payload, size * i)).map(u64::from));
        } else if attr == ANNOTATIONS {
            for i in 0..payload.len() / 8 {
                let (Some(kind), Some(at)) = (u32_at(payload, 8 * i), u32_at(payload, 8 * i + 4)) else { break };
                out.offsets.push(u64::from(at));
                out.annotations.push((u64::from(at), kind));
            }
        } else if attr == INDIRECT_BRANCH_TARGETS {
            read_indirect(payload, &mut out);
        }
    }
    out
}

fn read_indirect(p: &[u8], out: &mut InfoOffsets) {
    let mut at = 0usize;
    while let (Some(brx), Some(n)) = (u32_at(p, at), u32_at(p, at + 8)) {
        at += 12;
        let targets: Option<Vec<u64>> = (0..n as usize).map(|i| u32_at(p, at + 4 * i).map(u64::from)).collect();
        let Some(targets) = targets else { return };
        at += 4 * n as usize;
        out.offsets.push(u64::from(brx));
        out.offsets.extend(&targets);
        out.indirect.push(IndirectBranch { at: u64::from(brx), targets });
    }
}

/// Every 16-byte word of every code section, sections in file order, words in address order.
pub fn text_words(cubin: &[u8]) -> Result<Vec<CodeWord>, CubinError> {
    let mut words = Vec::new();
    for s in code_sections(cubin)? {
        let function = s.name[TEXT_PREFIX.len()..].to_string();
        // code_sections checked that the range lies inside the file, so these fit usize.
        let start = s.file_offset as usize;
        let bytes = &cubin[start..start + s.size as usize];
        for (i, chunk) in bytes.chunks_exact(WORD_BYTES as usize).enumerate() {
            let mut b = [0u8; 16];
            b.copy_from_slice(chunk);
            words.push(CodeWord { section: s.name.clone(), function: function.clone(), offset: i as u64 * WORD_BYTES, word: Word::from_le_bytes(b) });
        }
    }
    Ok(words)
}

/// Names of the code sections (`.text.<function>`), in file order.
pub fn code_section_names(cubin: &[u8]) -> Result<Vec<String>, CubinError> {
    Ok(code_sections(cubin)?.into_iter().map(|s| s.name).collect())
}

/// A copy of `cubin` with the word at `offset` of code section `section` (the full name,
/// `.text.<function>`) replaced by `word`.
pub fn patch_word(cubin: &[u8], section: &str, offset: u64, word: Word) -> Result<Vec<u8>, CubinError> {
    patch_words(cubin, &[(section.to_string(), offset, word)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::ptxas::{self, test_support::*};
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// One instruction as `nvdisasm -hex` prints it.
    #[derive(Debug, Clone)]
    struct Listed {
        offset: u64,
        text: String,
        word: Word,
    }

    /// `/*0010*/ <instruction> ; /* 0x<low> */` then a line `/* 0x<high> */`, grouped
    /// by the `.section` they follow.
    fn parse_hex_listing(listing: &str) -> BTreeMap<String, Vec<Listed>> {
        fn trailing_hex(line: &str) -> Option<u64> {
            let t = line.trim_end();
            let t = t.strip_suffix("*/")?.trim_end();
            let i = t.rfind("/* 0x")?;
            u64::from_str_radix(&t[i + 5..], 16).ok()
        }
        let mut out: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
        let mut section = String::new();
        let mut pending: Option<(u64, String, u64)> = None;
        for line in listing.lines() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix(".section") {
                section = rest.trim().split(',').next().unwrap_or("").trim().to_string();
                continue;
            }
            if let Some(rest) = t.strip_prefix("/*") {
                if let Some(end) = rest.find("*/") {
                    let addr = &rest[..end];
                    if !addr.is_empty() && addr.bytes().all(|b| b.is_ascii_hexdigit()) {
                        let offset = u64::from_str_radix(addr, 16).unwrap();
                        let body = &rest[end + 2..];
                        let text = match body.rfind("/* 0x") {
                            Some(i) => body[..i].trim().to_string(),
                            None => body.trim().to_string(),
                        };
                        if let Some(low) = trailing_hex(body) {
                            pending = Some((offset, text, low));
                        }
                        continue;
                    }
                }
                if let (Some(high), Some((offset, text, low))) = (trailing_hex(t), pending.take()) {
                    let word = Word((high as u128) << 64 | low as u128);
                    out.entry(section.clone()).or_default().push(Listed { offset, text, word });
                }
            }
        }
        out
    }

    fn nvdisasm_listing(nvdisasm: &Path, cubin: &Path) -> String {
        let out = Command::new(nvdisasm).args(["-c", "-hex"]).arg(cubin).output().expect("run nvdisasm");
        assert!(out.status.success(), "nvdisasm {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("utf-8 listing")
    }

    /// Each architecture's every `every`-th kernel of the corpus (its first among them),
    /// compiled, in corpus order.
    fn compile_every(tag: &str, every: usize) -> (PathBuf, Vec<(PathBuf, String, PathBuf)>) {
        let ptxas = ptxas();
        let dir = scratch(tag);
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        let pairs = corpus().into_iter().flat_map(|(ptx, arches)| arches.into_iter().map(move |a| (ptx.clone(), a)));
        let picked = pairs.filter(|(_, a)| {
            let n = seen.entry(a.clone()).or_default();
            *n += 1;
            (*n - 1).is_multiple_of(every)
        });
        let mut out = vec![];
        for (ptx, arch) in picked {
            let cubin = ptxas::compile(&ptxas, &ptx, &arch, &dir).unwrap_or_else(|e| panic!("{e}"));
            out.push((ptx, arch, cubin));
        }
        (dir, out)
    }

    /// A relocatable cubin's code sections carry their relocations, by offset, with their
    /// symbols and addends (as `readelf -r` lists them); shared memory, which such a cubin
    /// lists with a size and no bytes in the file, is no error.
    #[test]
    fn a_relocatable_cubins_relocations_are_read() {
        let dir = scratch("relocatable");
        let ptx = crate::oracle::tools::repo_root().join("corpus/ptx-rdc/pointers_and_constants.ptx");
        let bytes = std::fs::read(ptxas::compile_relocatable(&ptxas(), &ptx, "sm_90", &dir).unwrap_or_else(|e| panic!("{e}"))).unwrap();
        assert!(is_relocatable(&bytes).unwrap());
        let sections = code_section_words(&bytes).unwrap();
        let kern = sections.iter().find(|s| s.name == ".text.kern2").unwrap();
        assert!(kern.relocatable && kern.relocations.windows(2).all(|w| w[0].offset <= w[1].offset));
        let seen: Vec<(u32, &str, i64)> = kern.relocations.iter().map(|r| (r.kind, r.symbol.as_str(), r.addend)).collect();
        for want in [(0x38, "garr", 0), (0x39, "garr", 0), (0x37, "$__sbuf__24", 0), (0x42, "ctab", 8), (0x70, "local_fn", 0), (0x72, "__UFT_OFFSET", 0)] {
            assert!(seen.contains(&want), "{want:?} not in {seen:?}");
        }
        let ret = kern.relocations.iter().find(|r| r.kind == 0x38 && r.symbol == "kern2").expect("the return address");
        assert!(ret.function && ret.symbol_section == kern.index && ret.addend > 0);
        let shared = crate::oracle::tools::repo_root().join("corpus/ptx/shared_tile.ptx");
        let bytes = std::fs::read(ptxas::compile_relocatable(&ptxas(), &shared, "sm_90", &dir).unwrap_or_else(|e| panic!("{e}"))).unwrap();
        assert!(code_section_words(&bytes).is_ok_and(|s| s.iter().all(|s| s.relocatable)));
        let (_, plain) = compile_one("relocatable-not", "saxpy.ptx", "sm_90");
        assert!(!is_relocatable(&plain).unwrap());
        assert!(code_section_words(&plain).unwrap().iter().all(|s| s.relocations.is_empty() && !s.relocatable));
        let _ = std::fs::remove_dir_all(dir);
    }

    fn compile_one(tag: &str, name: &str, arch: &str) -> (PathBuf, Vec<u8>) {
        let dir = scratch(tag);
        let ptx = crate::oracle::tools::repo_root().join("corpus/ptx").join(name);
        let cubin = ptxas::compile(&ptxas(), &ptx, arch, &dir).unwrap_or_else(|e| panic!("{e}"));
        let bytes = std::fs::read(cubin).unwrap();
        (dir, bytes)
    }

    /// A sample of the corpus kernels, all three architectures (the fast set).
    #[test]
    fn cubin_text_words_match_nvdisasm_hex_for_a_sample_of_corpus_kernels() {
        cubin_text_words_match_nvdisasm_hex("cubin-words-sample", 8);
    }

    #[test]
    #[ignore = "slow: every corpus kernel, an nvdisasm process each, 14 s on 2 cores (bash ci/test.sh runs the slow set)"]
    fn cubin_text_words_match_nvdisasm_hex_for_every_corpus_kernel() {
        cubin_text_words_match_nvdisasm_hex("cubin-words", 1);
    }

    /// Each `every`-th corpus kernel's code words as `text_words` reads them, against
    /// `nvdisasm -c -hex`'s listing of the cubin: the same sections, offsets and words.
    fn cubin_text_words_match_nvdisasm_hex(tag: &str, every: usize) {
        let nvdisasm = nvdisasm();
        let (dir, built) = compile_every(tag, every);
        let arches: std::collections::BTreeSet<String> = corpus().into_iter().flat_map(|(_, a)| a).collect();
        let sampled: std::collections::BTreeSet<&String> = built.iter().map(|(_, a, _)| a).collect();
        assert_eq!(sampled.len(), arches.len(), "kernels of every architecture: {sampled:?}");
        // nvdisasm costs ~0.5 s a process: list the cubins in parallel.
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(built.len());
        let listings: Vec<String> = std::thread::scope(|sc| {
            let jobs: Vec<_> = (0..threads)
                .map(|t| {
                    let (built, nvdisasm) = (&built, &nvdisasm);
                    sc.spawn(move || built.iter().skip(t).step_by(threads).map(|(_, _, c)| nvdisasm_listing(nvdisasm, c)).collect::<Vec<_>>())
                })
                .collect();
            let per: Vec<Vec<String>> = jobs.into_iter().map(|j| j.join().expect("nvdisasm thread")).collect();
            (0..built.len()).map(|i| per[i % threads][i / threads].clone()).collect()
        });
        for ((ptx, arch, cubin), listing) in built.iter().zip(&listings) {
            let what = format!("{} ({arch})", ptx.display());
            let bytes = std::fs::read(cubin).unwrap();
            let words = text_words(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(!words.is_empty(), "{what}: no code words");
            let stem = ptx.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(words.iter().all(|w| w.function == stem && w.section == format!(".text.{stem}")), "{what}");

            let listed = parse_hex_listing(listing);
            let mut ours: BTreeMap<String, Vec<(u64, Word)>> = BTreeMap::new();
            for w in &words {
                ours.entry(w.section.clone()).or_default().push((w.offset, w.word));
            }
            let theirs: BTreeMap<String, Vec<(u64, Word)>> = listed.iter().map(|(s, v)| (s.clone(), v.iter().map(|l| (l.offset, l.word)).collect())).collect();
            assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>(), "{what}: sections");
            for (s, v) in &ours {
                assert_eq!(v, &theirs[s], "{what}: words of {s}");
            }
            assert_eq!(code_section_names(&bytes).unwrap(), ours.keys().cloned().collect::<Vec<_>>());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Patch `word` in at `offset`, check exactly those 16 bytes changed, and return the
    /// nvdisasm listing of the patched section.
    fn patch_and_list(nvdisasm: &Path, dir: &Path, bytes: &[u8], section: &str, offset: u64, word: Word) -> Vec<Listed> {
        let patched = patch_word(bytes, section, offset, word).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(patched.len(), bytes.len());
        let changed: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] != patched[i]).collect();
        let (first, last) = (*changed.first().unwrap(), *changed.last().unwrap());
        assert!(last - first < 16, "bytes {first}..={last} changed");
        let after = text_words(&patched).unwrap();
        let before = text_words(bytes).unwrap();
        let diffs: Vec<_> = before.iter().zip(&after).filter(|(a, b)| a != b).collect();
        assert_eq!(diffs.len(), 1, "exactly one word changes");
        assert_eq!((diffs[0].1.section.as_str(), diffs[0].1.offset, diffs[0].1.word), (section, offset, word));
        let path = dir.join(format!("patched-{offset:x}.cubin"));
        std::fs::write(&path, &patched).unwrap();
        parse_hex_listing(&nvdisasm_listing(nvdisasm, &path)).remove(section).expect("patched section listed")
    }

    #[test]
    fn cubin_patch_word_changes_exactly_one_instruction_as_nvdisasm_sees_it() {
        let nvdisasm = nvdisasm();
        for arch in ARCHES {
            let (dir, bytes) = compile_one("cubin-patch", "dfma_rounding.ptx", arch);
            let path = dir.join("orig.cubin");
            std::fs::write(&path, &bytes).unwrap();
            let section = ".text.dfma_rounding";
            let orig = parse_hex_listing(&nvdisasm_listing(&nvdisasm, &path)).remove(section).unwrap();
            let dfma = orig.iter().find(|l| l.text.contains("DFMA")).expect("a DFMA in dfma_rounding").clone();
            let nop = orig.iter().rev().find(|l| l.text.starts_with("NOP")).expect("NOP padding").clone();

            // A DFMA becomes a NOP…
            let listed = patch_and_list(&nvdisasm, &dir, &bytes, section, dfma.offset, nop.word);
            assert_eq!(listed.len(), orig.len());
            for (a, b) in orig.iter().zip(&listed) {
                if a.offset == dfma.offset {
                    assert!(b.text.starts_with("NOP") && b.word == nop.word, "{arch}: {b:?}");
                } else {
                    assert_eq!((a.offset, &a.text, a.word), (b.offset, &b.text, b.word), "{arch}");
                }
            }
            // …and a padding NOP becomes that DFMA.
            let listed = patch_and_list(&nvdisasm, &dir, &bytes, section, nop.offset, dfma.word);
            let at = listed.iter().find(|l| l.offset == nop.offset).unwrap();
            assert_eq!((at.text.as_str(), at.word), (dfma.text.as_str(), dfma.word), "{arch}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn cubin_patch_word_rejects_bad_places() {
        let (dir, bytes) = compile_one("cubin-patch-errors", "saxpy.ptx", "sm_90");
        let size = text_words(&bytes).unwrap().len() as u64 * WORD_BYTES;
        let w = Word(0x1234);
        let e = patch_word(&bytes, ".text.nope", 0, w).unwrap_err();
        assert!(matches!(e, CubinError::NoSuchSection { .. }) && e.to_string().contains(".text.saxpy"), "{e}");
        assert!(matches!(patch_word(&bytes, "saxpy", 0, w), Err(CubinError::NoSuchSection { .. })));
        assert!(matches!(patch_word(&bytes, ".nv.info", 0, w), Err(CubinError::NoSuchSection { .. })));
        for off in [8, 1, 15, size + 8] {
            assert!(matches!(patch_word(&bytes, ".text.saxpy", off, w), Err(CubinError::Misaligned { .. })), "{off}");
        }
        for off in [size, size + 16, u64::MAX - 15, 1 << 62] {
            assert!(matches!(patch_word(&bytes, ".text.saxpy", off, w), Err(CubinError::OutOfRange { .. })), "{off}");
        }
        let last = patch_word(&bytes, ".text.saxpy", size - 16, w).unwrap();
        assert_eq!(text_words(&last).unwrap().last().unwrap().word, w);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// xorshift64*: deterministic bytes without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }

    fn poke(data: &[u8]) {
        let _ = text_words(data);
        let _ = code_section_names(data);
        let _ = patch_word(data, ".text.saxpy", 0, Word(1));
        let _ = patch_word(data, ".text.saxpy", 0x7ffffff0, Word(1));
    }

    #[test]
    fn cubin_garbage_and_truncated_input_is_an_error_not_a_panic() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for n in [0, 1, 3, 4, 15, 16, 52, 63, 64, 65, 200, 4096] {
            let data = rng.bytes(n);
            assert!(text_words(&data).is_err(), "{n} random bytes parsed");
            poke(&data);
            // Random bytes behind a valid-looking ELF64 CUDA identification.
            let mut elfish = data.clone();
            let id = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00";
            for (i, b) in id.iter().enumerate().take(elfish.len()) {
                elfish[i] = *b;
            }
            poke(&elfish);
        }

        let (dir, bytes) = compile_one("cubin-garbage", "saxpy.ptx", "sm_90");
        assert!(!text_words(&bytes).unwrap().is_empty());
        // Every truncation is an error (the section headers sit at the end) and never a panic.
        for len in (0..bytes.len()).step_by(7).chain([bytes.len() - 1]) {
            let cut = &bytes[..len];
            assert!(text_words(cut).is_err(), "truncated to {len} of {} bytes parsed", bytes.len());
            poke(cut);
        }
        // Corrupt the ELF and section headers byte by byte and at random.
        let shoff = u64::from_le_bytes(bytes[0x28..0x30].try_into().unwrap()) as usize;
        for i in (0..0x40).chain(shoff..bytes.len().min(shoff + 0x200)) {
            for v in [0x00, 0xff, 0x7f, 0x80] {
                let mut m = bytes.clone();
                m[i] = v;
                poke(&m);
            }
        }
        for _ in 0..2000 {
            let mut m = bytes.clone();
            for _ in 0..1 + rng.next() % 8 {
                let i = (rng.next() % m.len() as u64) as usize;
                m[i] = rng.next() as u8;
            }
            poke(&m);
        }
        // A non-CUDA machine is refused by name.
        let mut m = bytes.clone();
        m[0x12..0x14].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
        assert!(matches!(text_words(&m), Err(CubinError::NotCuda { machine: 62 })));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn hex_listing_parser_reads_word_pairs() {
        let listing = "\t.section\t.text.k,\"ax\",@progbits\n\
            \x20       /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */\n\
            \x20                                                                          /* 0x000fe20000000800 */\n\
            \x20       /*0010*/                   NOP;                                    /* 0x0000000000007918 */\n\
            \x20                                                                          /* 0x000fc00000000000 */\n";
        let m = parse_hex_listing(listing);
        let v = &m[".text.k"];
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].word, Word(0x000fe20000000800_u128 << 64 | 0x00000a00ff017b82));
        assert_eq!((v[1].offset, v[1].text.as_str()), (0x10, "NOP;"));
    }
}
