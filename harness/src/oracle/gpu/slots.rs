//! Finding the placeholders in a compiled template and what feeds and receives them.
//!
//! Read off nvdisasm's listing of the cubin: a placeholder's registers, the `LDG` that
//! loaded each register source (its offset in the thread's input record) and the `STG`
//! that stores the destination (its offset in the output record). A source that does not
//! come straight from a load, or a destination overwritten before its store, makes the
//! template unusable: an error, never a guess.

use super::error::SlotError;
use crate::word::Word;

/// One register source of a placeholder and the input-record offset it is loaded from.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Source {
    pub reg: u16,
    pub in_offset: u32,
}

/// A placeholder instruction in a template's text section.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Slot {
    /// Byte offset in the code section.
    pub offset: u64,
    #[serde(with = "word_hex")]
    pub word: Word,
    pub text: String,
    pub dest: u16,
    /// Register sources in printed operand order (operand 1, 2, …).
    pub sources: Vec<Source>,
    pub out_offset: u32,
    /// Byte offset of the store that reads the destination.
    pub store_at: u64,
}

/// A word as its 32 hex digits (what `Word` serializes to), both ways.
mod word_hex {
    use crate::word::Word;
    pub fn serialize<S: serde::Serializer>(w: &Word, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&w.hex())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Word, D::Error> {
        let t: String = serde::Deserialize::deserialize(d)?;
        Word::parse_hex(&t).ok_or_else(|| serde::de::Error::custom(format!("'{t}' is not a word")))
    }
}

/// An instruction line, split: mnemonic with modifiers, operands.
struct Line<'a> {
    addr: u64,
    op: &'a str,
    operands: Vec<&'a str>,
}

fn split(addr: u64, text: &str) -> Line<'_> {
    let t = text.trim().trim_end_matches(';').trim();
    let t = if t.starts_with('@') { t.split_once(' ').map(|x| x.1).unwrap_or("") } else { t };
    let (op, rest) = t.split_once(' ').unwrap_or((t, ""));
    let operands = rest.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    Line { addr, op, operands }
}

/// `R7`, `-|R8|.H1`, `R9.reuse` → 7, 8, 9; `RZ` → 255; anything else (UR, c[…]) → None.
pub fn reg_of(operand: &str) -> Option<u16> {
    let t = operand.trim_start_matches(['-', '|', '!', '~']);
    let rest = t.strip_prefix('R')?;
    if rest.starts_with('Z') {
        return Some(255);
    }
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

fn is_pair(op: &str) -> bool {
    op.contains(".64") || op.contains(".WIDE") || op.starts_with('D') || (op.starts_with("I2F") && op.contains(".F64"))
}

/// Registers an instruction writes (none for stores and branches).
fn writes(l: &Line) -> Vec<u16> {
    if l.op.starts_with("ST") || l.op.starts_with("BRA") || l.op.starts_with("EXIT") {
        return vec![];
    }
    match l.operands.first().and_then(|o| reg_of(o)) {
        Some(255) | None => vec![],
        Some(r) if is_pair(l.op) => vec![r, r + 1],
        Some(r) => vec![r],
    }
}

/// `desc[UR4][R2.64+0x18]` → 0x18.
fn mem_offset(operand: &str) -> Option<u32> {
    let inner = operand.rsplit_once('[')?.1.trim_end_matches(']');
    match inner.split_once('+') {
        Some((_, off)) => u32::from_str_radix(off.trim().trim_start_matches("0x"), 16).ok(),
        None => Some(0),
    }
}

/// Every placeholder (`mnemonic` with any modifiers) in a listing of one code section.
/// `dst_pair`, `src_pair`: the destination, the register sources are 64-bit pairs.
pub fn find_slots(listing: &[(u64, String, Option<Word>)], mnemonic: &str, dst_pair: bool, src_pair: bool) -> Result<Vec<Slot>, SlotError> {
    let lines: Vec<Line> = listing.iter().map(|(a, t, _)| split(*a, t)).collect();
    let mut slots = vec![];
    for (i, l) in lines.iter().enumerate() {
        if l.op.split('.').next() != Some(mnemonic) {
            continue;
        }
        let (_, text, word) = &listing[i];
        let word = word.ok_or_else(|| SlotError::NoEncoding { text: text.clone() })?;
        let dest = l.operands.first().and_then(|o| reg_of(o)).ok_or_else(|| SlotError::NoDestination { text: text.clone() })?;
        let mut sources = vec![];
        for o in &l.operands[1..] {
            if let Some(r) = reg_of(o) {
                sources.push(Source { reg: r, in_offset: trace_load(&lines[..i], r, src_pair, text)? });
            }
        }
        let (out_offset, store_at) = trace_store(&lines[i + 1..], dest, dst_pair, text)?;
        slots.push(Slot { offset: l.addr, word, text: text.clone(), dest, sources, out_offset, store_at });
    }
    Ok(slots)
}

fn trace_load(before: &[Line], r: u16, pair: bool, what: &str) -> Result<u32, SlotError> {
    let l = before.iter().rev().find(|l| writes(l).contains(&r)).ok_or_else(|| SlotError::NotWritten { text: what.into(), reg: r })?;
    let full = if pair {
        l.op.contains(".64")
    } else {
        !l.op.contains(".64") && !l.op.contains(".U16") && !l.op.contains(".U8") && !l.op.contains(".S16") && !l.op.contains(".S8")
    };
    if !l.op.starts_with("LDG") || !full || reg_of(l.operands[0]) != Some(r) {
        return Err(SlotError::NotLoaded { text: what.into(), reg: r, from: format!("{} {}", l.op, l.operands.join(", ")), addr: l.addr });
    }
    mem_offset(l.operands[1]).ok_or_else(|| SlotError::NoOffset { text: what.into(), operand: l.operands[1].into() })
}

fn trace_store(after: &[Line], d: u16, pair: bool, what: &str) -> Result<(u32, u64), SlotError> {
    for l in after {
        if l.op.starts_with("STG") && l.operands.last().and_then(|o| reg_of(o)) == Some(d) {
            if l.op.contains(".64") != pair {
                return Err(SlotError::StoreWidth { text: what.into(), reg: d, store: l.op.into() });
            }
            let off = mem_offset(l.operands[0]).ok_or_else(|| SlotError::NoOffset { text: what.into(), operand: l.operands[0].into() })?;
            return Ok((off, l.addr));
        }
        if writes(l).contains(&d) || l.op.starts_with("EXIT") || l.op.starts_with("BRA") {
            return Err(SlotError::Overwritten { text: what.into(), reg: d });
        }
    }
    Err(SlotError::NeverStored { text: what.into(), reg: d })
}

/// Register count of the (only) kernel: `EIATTR_REGCOUNT` (0x2f) in `.nv.info`.
/// (ptxas 13.5 leaves the text section's `sh_info` high byte zero.)
pub fn register_count(cubin: &[u8]) -> Option<u32> {
    let rd = |o: usize, n: usize| -> Option<u64> {
        let b = cubin.get(o..o + n)?;
        Some(b.iter().rev().fold(0u64, |a, &x| a << 8 | x as u64))
    };
    let (shoff, shentsize, shnum, shstrndx) = (rd(0x28, 8)? as usize, rd(0x3a, 2)? as usize, rd(0x3c, 2)? as usize, rd(0x3e, 2)? as usize);
    let hdr = |i: usize| shoff + i * shentsize;
    let strtab = rd(hdr(shstrndx) + 0x18, 8)? as usize;
    let info = (0..shnum).find(|&i| {
        let n = rd(hdr(i), 4).map(|n| strtab + n as usize);
        n.and_then(|n| cubin.get(n..n + 9)) == Some(b".nv.info\0")
    })?;
    let (mut at, size) = (rd(hdr(info) + 0x18, 8)? as usize, rd(hdr(info) + 0x20, 8)? as usize);
    let end = at + size;
    while at + 2 <= end {
        let (fmt, attr) = (cubin[at], cubin[at + 1]);
        let len = match fmt {
            0x04 => 2 + rd(at + 2, 2)? as usize,
            0x03 => 2,
            0x02 => 1,
            _ => 0,
        };
        if fmt == 0x04 && attr == 0x2f {
            return rd(at + 8, 4).map(|v| v as u32);
        }
        at += 2 + len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    fn l(a: u64, t: &str) -> (u64, String, Option<Word>) {
        (a, t.to_string(), Some(Word(a as u128)))
    }
    #[test]
    fn traces_loads_and_store() {
        let listing = vec![
            l(0x90, "LDG.E.64.STRONG.SYS R4, desc[UR4][R2.64] ;"),
            l(0xa0, "LDG.E.64.STRONG.SYS R6, desc[UR4][R2.64+0x8] ;"),
            l(0xb0, "LDG.E.64.STRONG.SYS R8, desc[UR4][R2.64+0x10] ;"),
            l(0xc0, "DFMA R6, R4, R6, R8 ;"),
            l(0xd0, "IMAD.WIDE.U32 R4, R13, 0x20, R10 ;"),
            l(0xe0, "STG.E.64 desc[UR4][R4.64+0x18], R6 ;"),
        ];
        let s = find_slots(&listing, "DFMA", true, true).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].dest, s[0].out_offset, s[0].offset), (6, 0x18, 0xc0));
        assert_eq!(s[0].sources.iter().map(|x| (x.reg, x.in_offset)).collect::<Vec<_>>(), vec![(4, 0), (6, 8), (8, 0x10)]);
    }
    #[test]
    fn refuses_sources_not_loaded_and_clobbered_destinations() {
        let listing = vec![l(0x10, "MOV R4, R2 ;"), l(0x20, "HADD2 R7, R4, R4 ;"), l(0x30, "STG.E desc[UR4][R4.64], R7 ;")];
        let e = find_slots(&listing, "HADD2", false, false).unwrap_err();
        assert!(matches!(e, SlotError::NotLoaded { reg: 4, addr: 0x10, .. }) && e.to_string().contains("not a full-width load"), "{e}");
        let listing =
            vec![l(0x10, "LDG.E R4, desc[UR4][R2.64] ;"), l(0x20, "HADD2 R7, R4, R4 ;"), l(0x30, "MOV R7, R2 ;"), l(0x40, "STG.E desc[UR4][R4.64], R7 ;")];
        let e = find_slots(&listing, "HADD2", false, false).unwrap_err();
        assert!(matches!(e, SlotError::Overwritten { reg: 7, .. }) && e.to_string().contains("overwritten"), "{e}");
        assert_eq!(reg_of("-|R8|.H1"), Some(8));
        assert_eq!(reg_of("UR4"), None);
    }
}
