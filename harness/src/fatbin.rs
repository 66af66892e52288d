//! The cubins a file holds for `disasm`: the file itself when it is a cubin; each ELF
//! entry of a fatbin (`nvcc -fatbin`); each ELF entry of the fatbins a host program or
//! object embeds (its `.nv_fatbin` section, `nvcc -c`). PTX entries hold no machine code
//! and are counted, not read; compressed cubins (`nvcc -Xfatbin -compress-all`: zstd, or
//! LZ4 with `-Xfatbin -compress-mode=speed`) are inflated.
//!
//! A fatbin is a 16-byte header (magic `0xBA55ED50`, version, header size, size of what
//! follows) and entries, each a header (kind, header size, payload size, architecture,
//! flags) and its payload. The layout is NVIDIA's, undocumented; what is read here is
//! checked against `cuobjdump -xelf all` in the tests.

use crate::cubin::u32_at;
use object::elf;
use object::read::elf::{FileHeader, SectionHeader};
use object::Endianness;
use std::borrow::Cow;

/// A fatbin's first four bytes, little-endian.
pub const MAGIC: u32 = 0xBA55_ED50;
/// An entry's kind: PTX text, or an ELF cubin.
const KIND_PTX: u16 = 1;
const KIND_ELF: u16 = 2;
/// Entry flags: the payload is LZ4-compressed (a raw LZ4 block: nvcc 13.5's
/// `-Xfatbin -compress-mode=speed`) or zstd-compressed (a zstd frame: its default mode).
const LZ4: u64 = 0x2000;
const ZSTD: u64 = 0x8000;
/// Bytes of an entry header this reader needs (to the flags, at 40); a compressed entry's
/// also holds its inflated size (at 56).
const ENTRY_HEADER_MIN: usize = 48;
const COMPRESSED_HEADER_MIN: usize = 64;
/// The most bytes one file's compressed cubins may inflate to, all together: as much as
/// `disasm` reads of a plain cubin ([`crate::disasm::MAX_CUBIN_BYTES`]).
pub const MAX_INFLATED: u64 = 1 << 30;
/// A cubin's ELF `e_machine` (`EM_CUDA`).
const EM_CUDA: u16 = 190;

/// What a file holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Contents<'b> {
    /// The file is a cubin.
    Cubin,
    /// The file is a fatbin, or a host ELF with fatbins: their entries, in file order.
    Fat(Vec<Entry<'b>>),
}

/// One fatbin entry.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry<'b> {
    /// Where its header starts in the file (what `disasm` names it by).
    pub offset: usize,
    /// Where its payload starts in the file: a plain cubin lies there whole, so it can be
    /// patched in place (`asm --patch`).
    pub payload_at: usize,
    /// The architecture its header names (`90` for SM90).
    pub arch: u32,
    pub payload: Payload<'b>,
}

impl Entry<'_> {
    /// The cubin's bytes (inflated, if compressed), if the entry is a cubin.
    pub fn cubin(&self) -> Option<&[u8]> {
        match &self.payload {
            Payload::Cubin(b) => Some(b),
            Payload::Ptx => None,
        }
    }
}

/// An entry's payload as this reader takes it.
#[derive(Debug, PartialEq, Eq)]
pub enum Payload<'b> {
    /// An ELF cubin's bytes: borrowed from the file, or inflated where the entry was
    /// compressed.
    Cubin(Cow<'b, [u8]>),
    /// PTX: no machine code.
    Ptx,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FatbinError {
    #[error("not a cubin, a fatbin or a program with embedded fatbins (no ELF or fatbin magic)")]
    Unknown,
    #[error("an ELF file for machine {machine} (not a cubin) without a .nv_fatbin or __nv_relfatbin section")]
    NoFatbin { machine: u16 },
    #[error("an ELF file whose section table cannot be read: {0}")]
    Elf(String),
    #[error("fatbin at byte {at:#x}: {what}")]
    Malformed { at: usize, what: String },
}

/// What `bytes` holds (see [`Contents`]).
pub fn contents(bytes: &[u8]) -> Result<Contents<'_>, FatbinError> {
    if bytes.starts_with(&elf::ELFMAG) {
        let machine = elf_machine(bytes);
        if machine == Some(EM_CUDA) {
            return Ok(Contents::Cubin);
        }
        let section = embedded(bytes)?.ok_or(FatbinError::NoFatbin { machine: machine.unwrap_or(0) })?;
        let base = section.as_ptr() as usize - bytes.as_ptr() as usize;
        return entries(section, base).map(Contents::Fat);
    }
    if u32_at(bytes, 0) == Some(MAGIC) {
        return entries(bytes, 0).map(Contents::Fat);
    }
    Err(FatbinError::Unknown)
}

/// The ELF header's `e_machine` (little-endian, 32- or 64-bit alike: it is at 18).
fn elf_machine(bytes: &[u8]) -> Option<u16> {
    bytes.get(18..20).map(|b| u16::from_le_bytes([b[0], b[1]]))
}

/// The section of a host ELF file (64-bit little-endian, as nvcc makes them) that holds
/// its fatbins: `.nv_fatbin`, or `__nv_relfatbin` in an object built with `-rdc=true`
/// (relocatable cubins, for the device link).
fn embedded(bytes: &[u8]) -> Result<Option<&[u8]>, FatbinError> {
    let bad = |e: object::Error| FatbinError::Elf(e.to_string());
    let header = elf::FileHeader64::<Endianness>::parse(bytes).map_err(bad)?;
    let endian = header.endian().map_err(bad)?;
    let sections = header.sections(endian, bytes).map_err(bad)?;
    for s in sections.iter() {
        if [&b".nv_fatbin"[..], b"__nv_relfatbin"].contains(&sections.section_name(endian, s).map_err(bad)?) {
            return s.data(endian, bytes).map(Some).map_err(bad);
        }
    }
    Ok(None)
}

/// The entries of the fatbins laid one after another in `b` (`base`: where `b` starts in
/// the file, for the offsets); padding between them is skipped up to the next magic.
fn entries(b: &[u8], base: usize) -> Result<Vec<Entry<'_>>, FatbinError> {
    let (mut out, mut at, mut budget) = (vec![], 0, MAX_INFLATED);
    while at < b.len() {
        if u32_at(b, at) != Some(MAGIC) {
            // Zero padding aligns the next fatbin; anything else is no fatbin.
            if b[at] == 0 {
                at += 1;
                continue;
            }
            return Err(FatbinError::Malformed { at: base + at, what: "no fatbin magic here".into() });
        }
        at = fatbin(b, at, base, &mut budget, &mut out)?;
    }
    if out.is_empty() {
        return Err(FatbinError::Malformed { at: base, what: "no fatbin in it".into() });
    }
    Ok(out)
}

/// Reads the fatbin at `at` into `out` (`budget`: the bytes compressed cubins may still
/// inflate to); where it ends.
fn fatbin<'b>(b: &'b [u8], at: usize, base: usize, budget: &mut u64, out: &mut Vec<Entry<'b>>) -> Result<usize, FatbinError> {
    let bad = |at: usize, what: &str| FatbinError::Malformed { at: base + at, what: what.to_string() };
    let header = usize::from(u16::from_le_bytes(le(b, at + 6).ok_or_else(|| bad(at, "cut short in its header"))?));
    let size = u64::from_le_bytes(le(b, at + 8).ok_or_else(|| bad(at, "cut short in its header"))?);
    let start = at.checked_add(header).filter(|&s| header >= 16 && s <= b.len()).ok_or_else(|| bad(at, "a header size past the end"))?;
    let end = usize::try_from(size).ok().and_then(|n| start.checked_add(n)).filter(|&e| e <= b.len()).ok_or_else(|| bad(at, "a size past the end"))?;
    let mut e = start;
    while e < end {
        let (entry, next) = entry(b, e, end, budget).map_err(|what| bad(e, &what))?;
        out.push(Entry { offset: base + e, payload_at: base + entry.payload_at, ..entry });
        e = next;
    }
    Ok(end)
}

/// The entry whose header is at `at` (its `offset` left 0, its `payload_at` within `b`),
/// and where the next begins; `end`: where its fatbin ends; `budget`: the bytes compressed
/// cubins may still inflate to.
fn entry<'b>(b: &'b [u8], at: usize, end: usize, budget: &mut u64) -> Result<(Entry<'b>, usize), String> {
    // Header fields are read within the fatbin (`b[..end]`).
    let cut = || "an entry cut short in its header".to_string();
    let fatbin = &b[..end];
    let kind = u16::from_le_bytes(le(fatbin, at).ok_or_else(cut)?);
    let header = u32_at(fatbin, at + 4).ok_or_else(cut)? as usize;
    let size = u64::from_le_bytes(le(fatbin, at + 8).ok_or_else(cut)?);
    let arch = u32_at(fatbin, at + 28).ok_or_else(cut)?;
    let flags = u64::from_le_bytes(le(fatbin, at + 40).ok_or_else(cut)?);
    if header < ENTRY_HEADER_MIN {
        return Err(format!("an entry header of {header} bytes (at least {ENTRY_HEADER_MIN})"));
    }
    let start = at.checked_add(header).filter(|&s| s <= end).ok_or("an entry header past its fatbin's end")?;
    let next = usize::try_from(size).ok().and_then(|n| start.checked_add(n)).filter(|&n| n <= end).ok_or("an entry past its fatbin's end")?;
    let payload = match kind {
        KIND_PTX => Payload::Ptx,
        KIND_ELF if flags & (LZ4 | ZSTD) != 0 => {
            let packed = u32_at(fatbin, at + 16).ok_or_else(cut)? as usize;
            let size = u64::from_le_bytes(le(fatbin, at + 56).ok_or_else(cut)?);
            if header < COMPRESSED_HEADER_MIN || packed > next - start {
                return Err(format!("a compressed entry of {packed} bytes in a payload of {} with a header of {header}", next - start));
            }
            if size > *budget {
                return Err(format!("a cubin of {size} bytes inflated, past the {MAX_INFLATED} bytes a file's compressed cubins may take"));
            }
            let packed = &b[start..start + packed];
            let cubin = if flags & ZSTD != 0 { unzstd(packed, size)? } else { unlz4(packed, size)? };
            *budget -= size;
            Payload::Cubin(Cow::Owned(cubin))
        }
        KIND_ELF => Payload::Cubin(Cow::Borrowed(&b[start..next])),
        k => return Err(format!("an entry of kind {k} (1 is PTX, 2 a cubin)")),
    };
    Ok((Entry { offset: 0, payload_at: start, arch, payload }, next))
}

/// A zstd frame's `size` bytes.
fn unzstd(packed: &[u8], size: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut d = ruzstd::decoding::StreamingDecoder::new(packed).map_err(|e| format!("its zstd data: {e}"))?;
    // Not the header's size up front: a hostile one would take it all at once.
    let mut out = Vec::with_capacity(size.min(1 << 20) as usize);
    d.by_ref().take(size + 1).read_to_end(&mut out).map_err(|e| format!("its zstd data: {e}"))?;
    if out.len() as u64 != size {
        return Err(format!("its zstd data inflates to {} bytes, its header says {size}", out.len()));
    }
    Ok(out)
}

/// An LZ4 block's `size` bytes: sequences of a token (literal and match lengths, 4 bits
/// each, 15 continued in bytes while they are 255), literals, a 2-byte offset back into
/// what is inflated and a match copied from there (it may overlap what it writes); the
/// last sequence has literals only. Every length and offset is checked: hostile data is
/// an error, never more than `size` bytes.
fn unlz4(packed: &[u8], size: u64) -> Result<Vec<u8>, String> {
    let bad = |what: &str| format!("its LZ4 data: {what}");
    let size = usize::try_from(size).map_err(|_| bad("too large"))?;
    let mut out: Vec<u8> = Vec::with_capacity(size.min(1 << 20));
    let mut i = 0;
    while i < packed.len() {
        let token = packed[i];
        i += 1;
        let literals = lz4_length(packed, &mut i, usize::from(token >> 4)).ok_or_else(|| bad("a length cut short"))?;
        let lit = i.checked_add(literals).and_then(|end| packed.get(i..end)).ok_or_else(|| bad("literals past its end"))?;
        if out.len() + lit.len() > size {
            return Err(bad(&format!("more than the {size} bytes its header says")));
        }
        out.extend_from_slice(lit);
        i += literals;
        if i == packed.len() {
            break;
        }
        let offset = usize::from(u16::from_le_bytes(le(packed, i).ok_or_else(|| bad("an offset cut short"))?));
        i += 2;
        let len = lz4_length(packed, &mut i, usize::from(token & 15)).ok_or_else(|| bad("a length cut short"))?.saturating_add(4);
        if offset == 0 || offset > out.len() || out.len() + len > size {
            return Err(bad(&format!("a match of {len} bytes {offset} back, at {} of {size} bytes", out.len())));
        }
        let from = out.len() - offset;
        for k in from..from + len {
            out.push(out[k]);
        }
    }
    if out.len() != size {
        return Err(bad(&format!("inflates to {} bytes, its header says {size}", out.len())));
    }
    Ok(out)
}

/// A 4-bit LZ4 length `first`, continued (at 15) by the bytes at `i` while they are 255.
fn lz4_length(packed: &[u8], i: &mut usize, first: usize) -> Option<usize> {
    let mut n = first;
    if first == 15 {
        loop {
            let b = *packed.get(*i)?;
            *i += 1;
            n = n.checked_add(usize::from(b))?;
            if b != 255 {
                break;
            }
        }
    }
    Some(n)
}

/// The `N` bytes at `at`, if `b` holds them.
fn le<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::tools::{locate, repo_root, Tool};

    fn read(name: &str) -> Vec<u8> {
        std::fs::read(repo_root().join("corpus/fatbin").join(name)).unwrap()
    }

    /// Each entry's architecture and what its payload is (`c` cubin, `z` an inflated
    /// cubin, `p` PTX).
    fn kinds(bytes: &[u8]) -> Vec<(u32, char)> {
        let Ok(Contents::Fat(entries)) = contents(bytes) else { panic!("no fatbin entries") };
        let kind = |p: &Payload| match p {
            Payload::Cubin(Cow::Borrowed(_)) => 'c',
            Payload::Cubin(Cow::Owned(_)) => 'z',
            Payload::Ptx => 'p',
        };
        entries.iter().map(|e| (e.arch, kind(&e.payload))).collect()
    }

    #[test]
    fn the_committed_fatbins_hold_what_nvcc_put_in() {
        assert_eq!(kinds(&read("atomics_global.fatbin")), [(90, 'c'), (100, 'c'), (120, 'c'), (120, 'p')]);
        assert_eq!(kinds(&read("atomics_global.compressed.fatbin")), [(90, 'z'), (100, 'z')]);
        assert_eq!(kinds(&read("atomics_global.lz4.fatbin")), [(90, 'z'), (100, 'z')]);
        assert_eq!(kinds(&read("host.o")), [(90, 'c'), (100, 'c'), (120, 'c'), (120, 'p')]);
        // -rdc=true: the fatbin is in `__nv_relfatbin`, its cubin relocatable.
        let rdc = read("rdc_host.o");
        assert_eq!(kinds(&rdc), [(90, 'z'), (90, 'p')]);
        let Ok(Contents::Fat(entries)) = contents(&rdc) else { panic!("no fatbin entries") };
        assert!(crate::cubin::is_relocatable(entries[0].cubin().unwrap()).unwrap());
        let cubin = std::fs::read(repo_root().join("corpus/fuzz/cubin/saxpy_sm90.cubin")).unwrap();
        assert_eq!(contents(&cubin), Ok(Contents::Cubin));
        assert_eq!(contents(b"not a binary at all"), Err(FatbinError::Unknown));
    }

    /// A plain cubin lies whole at its `payload_at` in the file (where `asm --patch`
    /// patches it in place), a host object's too.
    #[test]
    fn plain_cubins_lie_at_their_payload_offset() {
        for name in ["atomics_global.fatbin", "host.o"] {
            let bytes = read(name);
            let Ok(Contents::Fat(entries)) = contents(&bytes) else { panic!("{name}") };
            for e in &entries {
                let Payload::Cubin(Cow::Borrowed(c)) = e.payload else { continue };
                assert_eq!(bytes.get(e.payload_at..e.payload_at + c.len()), Some(c), "{name}: SM{}", e.arch);
                assert!(e.payload_at >= e.offset + ENTRY_HEADER_MIN, "{name}: SM{}", e.arch);
            }
        }
    }

    /// The cubins read here are byte for byte those `cuobjdump -xelf all` extracts, in its
    /// order, from the fatbin and from the host object.
    #[test]
    fn the_cubins_are_those_cuobjdump_extracts() {
        let cuobjdump = locate(Tool::Cuobjdump).unwrap_or_else(|e| panic!("cuobjdump is required (bash ci/install-cuda-tools.sh): {e}"));
        for name in ["atomics_global.fatbin", "atomics_global.compressed.fatbin", "atomics_global.lz4.fatbin", "host.o"] {
            let dir = std::env::temp_dir().join(format!("sass-harness-fatbin-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let o = std::process::Command::new(&cuobjdump)
                .current_dir(&dir)
                .args(["-xelf", "all"])
                .arg(repo_root().join("corpus/fatbin").join(name))
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            // `NAME.K.sm_NN.cubin` (NAME may hold dots), K counting from 1.
            let mut theirs: Vec<(usize, Vec<u8>)> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .map(|p| (p.file_name().unwrap().to_string_lossy().rsplit('.').nth(2).unwrap().parse().unwrap(), std::fs::read(&p).unwrap()))
                .collect();
            theirs.sort();
            let bytes = read(name);
            let Ok(Contents::Fat(entries)) = contents(&bytes) else { panic!("{name}: no entries") };
            let ours: Vec<&[u8]> = entries.iter().filter_map(Entry::cubin).collect();
            assert_eq!(ours.len(), theirs.len(), "{name}");
            for (k, (ours, (_, theirs))) in ours.iter().zip(&theirs).enumerate() {
                assert!(*ours == theirs.as_slice(), "{name}: cubin {} differs from cuobjdump's", k + 1);
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    /// Cut short anywhere, or with bytes changed, a fatbin or host object is entries or an
    /// error, never a panic, and every payload lies inside the input.
    #[test]
    fn hostile_fatbins_are_errors_not_panics() {
        for name in ["atomics_global.fatbin", "atomics_global.compressed.fatbin", "atomics_global.lz4.fatbin", "host.o"] {
            let bytes = read(name);
            for n in (0..bytes.len()).step_by(7) {
                let _ = contents(&bytes[..n]);
            }
            let mut rng = crate::gen::Rng::new(7);
            for _ in 0..3000 {
                let mut b = bytes.clone();
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(b.len() as u64) as usize;
                    b[at] = rng.below(256) as u8;
                }
                if let Ok(Contents::Fat(entries)) = contents(&b) {
                    let range = b.as_ptr_range();
                    for e in &entries {
                        if let Payload::Cubin(Cow::Borrowed(p)) = e.payload {
                            assert!(range.start <= p.as_ptr() && p.as_ptr_range().end <= range.end);
                        }
                    }
                }
            }
        }
        // A compressed cubin whose header understates or overstates what it inflates to.
        let packed = read("atomics_global.compressed.fatbin");
        for (size, says) in [(10u64, "inflates to 11 bytes, its header says 10"), (1 << 40, "past the 1073741824 bytes")] {
            let mut b = packed.clone();
            b[16 + 56..16 + 64].copy_from_slice(&size.to_le_bytes());
            let e = contents(&b).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
        }
        let packed = read("atomics_global.lz4.fatbin");
        let size = u64::from_le_bytes(le(&packed, 16 + 56).unwrap());
        // (Understated, it fails at the first sequence past its size: here a match.)
        for (size, says) in [
            (10, "its LZ4 data: a match of 6 bytes 1 back, at 10 of 10 bytes".to_string()),
            (size + 1, format!("inflates to {size} bytes, its header says {}", size + 1)),
        ] {
            let mut b = packed.clone();
            b[16 + 56..16 + 64].copy_from_slice(&size.to_le_bytes());
            let e = contents(&b).unwrap_err();
            assert!(e.to_string().contains(&says), "{e}");
        }
        let header = |size: u64| [MAGIC.to_le_bytes().as_slice(), &[1, 0, 16, 0], &size.to_le_bytes()].concat();
        assert!(matches!(contents(&header(1 << 40)), Err(FatbinError::Malformed { at: 0, .. })));
        assert!(matches!(contents(&header(u64::MAX)), Err(FatbinError::Malformed { at: 0, .. })));
        let e = contents(&[header(8), vec![2, 0, 1, 1, 8, 0, 0, 0]].concat()).unwrap_err();
        assert!(e.to_string().contains("cut short"), "{e}");
    }

    /// LZ4 blocks as the format defines them: literals, a match that overlaps what it
    /// writes (offset 1: a run), lengths continued past 15 and 255; each malformed block
    /// an error naming what is wrong.
    #[test]
    fn lz4_blocks_inflate_as_the_format_says() {
        // "ab", then 20 bytes from 2 back ("abab…"), then "!!": token 0x2f (2 literals,
        // match 15 + 1 more + 4 = 20), offset 2; the last sequence literals only.
        let run = [0x2f, b'a', b'b', 2, 0, 1, 0x20, b'!', b'!'];
        assert_eq!(unlz4(&run, 24).unwrap(), [b"ab".repeat(11), b"!!".to_vec()].concat());
        // 300 literals: 15 + 255 + 30.
        let long: Vec<u8> = [&[0xf0, 255, 30][..], &[7u8; 300]].concat();
        assert_eq!(unlz4(&long, 300).unwrap(), vec![7u8; 300]);
        for (block, size, says) in [
            (&[0x10, b'a', 0, 0, 0x00][..], 5, "a match of 4 bytes 0 back"),
            (&[0x10, b'a', 2, 0, 0x00][..], 5, "a match of 4 bytes 2 back"),
            (&[0x30, b'a'][..], 3, "literals past its end"),
            (&[0xf0, 255][..], 300, "a length cut short"),
            (&[0x10, b'a', 1][..], 5, "an offset cut short"),
            (&[0x10, b'a', 1, 0, 0x00][..], 3, "a match of 4 bytes 1 back, at 1 of 3 bytes"),
            (&[0x30, b'a', b'b', b'c'][..], 2, "more than the 2 bytes its header says"),
            (&run[..], 25, "inflates to 24 bytes, its header says 25"),
        ] {
            let e = unlz4(block, size).unwrap_err();
            assert!(e.contains(says), "{block:?}: {e}");
        }
    }
}
