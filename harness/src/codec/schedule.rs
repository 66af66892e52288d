//! A word's scheduling bits (stall, yield, scoreboards, wait mask, reuse) in the notation
//! SASS writers use, `[----:B------:R-:W-:Y:S04]`: what nvdisasm never prints, so that a
//! listing says it and `asm` reads it back.
//!
//! The bits lie at the same places on every architecture the pages cover (SM90, SM100,
//! SM120; bits 105–125, each page's control fields: `scheduling_bits_are_where_every_page_has_them`).
//! Which 3-bit scoreboard is which is taken from ptxas's code, not from the pages' labels:
//! ptxas puts the scoreboard that a result's consumers wait on in bits 110–112 (S2R, LDG,
//! LDS set it; no store does: `offline::ptxas_sets_the_write_scoreboard_in_bits_110_to_112`),
//! which the pages label `r-bar`. So `W` is bits 110–112 and `R` bits 113–115, as in
//! CuAssembler's listings, whose notation this is.

use crate::word::Word;
use std::fmt;
use std::str::FromStr;

/// Where the scheduling bits start (the stall count's lowest bit).
const AT: u32 = 105;
/// The 21 scheduling bits, 105–125.
pub const BITS: u128 = ((1u128 << 21) - 1) << AT;
/// A scoreboard field's value that names none.
const NONE: u8 = 7;

/// One word's scheduling bits, each field as the hardware holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    /// Cycles to stall before the next instruction issues (bits 105–108).
    pub stall: u8,
    /// The yield hint: the scheduler may switch warps (bit 109 clear; `Y` in the notation).
    pub yields: bool,
    /// The scoreboard released when the results are written (bits 110–112; `W`), if any.
    pub write_barrier: Option<u8>,
    /// The scoreboard released when the sources have been read (bits 113–115; `R`), if any.
    pub read_barrier: Option<u8>,
    /// The scoreboards waited on before issuing, bit k scoreboard k (bits 116–121; `B`).
    pub wait: u8,
    /// The operand reuse flags, bit k operand slot k (bits 122–125; `R` in the first part).
    pub reuse: u8,
}

/// Why a text is no scheduling annotation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' is no scheduling annotation: {why} (expected `[----:B------:R-:W-:Y:S04]`: reuse R/- ×4, then B and six of 0–5 or -, R and W a scoreboard 0–6 or -, Y or -, S and a stall of 00–15; the reuse part may be left out)")]
pub struct ScheduleError {
    /// The annotation as written.
    pub text: String,
    /// What is wrong with it.
    pub why: String,
}

impl Schedule {
    /// The scheduling bits of `w`.
    pub fn of(w: Word) -> Schedule {
        let c = (w.0 >> AT) as u32;
        let barrier = |x: u32| Some((x & 7) as u8).filter(|&b| b != NONE);
        Schedule {
            stall: (c & 0xf) as u8,
            yields: c >> 4 & 1 == 0,
            write_barrier: barrier(c >> 5),
            read_barrier: barrier(c >> 8),
            wait: (c >> 11 & 0x3f) as u8,
            reuse: (c >> 17 & 0xf) as u8,
        }
    }

    /// `w` with its scheduling bits replaced by these (every other bit kept).
    pub fn apply(self, w: Word) -> Word {
        let barrier = |b: Option<u8>| u128::from(b.unwrap_or(NONE) & 7);
        let c = u128::from(self.stall & 0xf)
            | u128::from(!self.yields) << 4
            | barrier(self.write_barrier) << 5
            | barrier(self.read_barrier) << 8
            | u128::from(self.wait & 0x3f) << 11
            | u128::from(self.reuse & 0xf) << 17;
        Word(w.0 & !BITS | c << AT)
    }

    /// A leading annotation of `text` (`[…] rest`), read, and the rest (trimmed); `text`
    /// itself where it starts with no `[`.
    pub fn split_off(text: &str) -> Result<(Option<Schedule>, &str), ScheduleError> {
        let t = text.trim_start();
        if !t.starts_with('[') {
            return Ok((None, text));
        }
        let end = t.find(']').ok_or_else(|| ScheduleError { text: t.to_string(), why: "no closing ']'".into() })?;
        Ok((Some(t[..=end].parse()?), t[end + 1..].trim_start()))
    }
}

/// The notation: `[RRRR:B012345:Rb:Wb:Y:Snn]`, each flag its letter or digit where set and
/// `-` where not.
impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flags = |mask: u8, n: u8, on: &dyn Fn(u8) -> char| (0..n).map(|k| if mask >> k & 1 == 1 { on(k) } else { '-' }).collect::<String>();
        let digit = |k: u8| char::from(b'0' + k);
        let barrier = |b: Option<u8>| b.map_or('-', digit);
        write!(
            f,
            "[{}:B{}:R{}:W{}:{}:S{:02}]",
            flags(self.reuse, 4, &|_| 'R'),
            flags(self.wait, 6, &digit),
            barrier(self.read_barrier),
            barrier(self.write_barrier),
            if self.yields { 'Y' } else { '-' },
            self.stall
        )
    }
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(s: &str) -> Result<Schedule, ScheduleError> {
        let err = |why: String| ScheduleError { text: s.to_string(), why };
        let inner = s.trim().strip_prefix('[').and_then(|r| r.strip_suffix(']')).ok_or_else(|| err("not in brackets".into()))?;
        let parts: Vec<&str> = inner.split(':').map(str::trim).collect();
        let (reuse, rest) = match parts.len() {
            6 => (Some(parts[0]), &parts[1..]),
            5 => (None, &parts[..]),
            n => return Err(err(format!("{n} parts, not 5 or 6"))),
        };
        let [wait, read, write, yields, stall] = rest else { unreachable!("five parts") };
        Ok(Schedule {
            stall: stall_of(stall).map_err(err)?,
            yields: match *yields {
                "Y" => true,
                "-" => false,
                y => return Err(err(format!("yield '{y}' is neither Y nor -"))),
            },
            write_barrier: barrier_of('W', write).map_err(err)?,
            read_barrier: barrier_of('R', read).map_err(err)?,
            wait: wait_of(wait).map_err(err)?,
            reuse: reuse.map_or(Ok(0), reuse_of).map_err(err)?,
        })
    }
}

/// `S00`–`S15`.
fn stall_of(t: &str) -> Result<u8, String> {
    let n = t.strip_prefix('S').filter(|d| d.len() == 2 && d.bytes().all(|b| b.is_ascii_digit())).and_then(|d| d.parse::<u8>().ok());
    n.filter(|&n| n <= 15).ok_or_else(|| format!("stall '{t}' is not S00–S15"))
}

/// `W-`, `W0`–`W6` (`R` alike): the scoreboard, none for `-`.
fn barrier_of(letter: char, t: &str) -> Result<Option<u8>, String> {
    match t.strip_prefix(letter).map(str::as_bytes) {
        Some(b"-") => Ok(None),
        Some(&[d]) if (b'0'..b'7').contains(&d) => Ok(Some(d - b'0')),
        _ => Err(format!("'{t}' is not {letter}- or {letter}0–{letter}6")),
    }
}

/// `B` and six places, place k `k` where scoreboard k is waited on, else `-`.
fn wait_of(t: &str) -> Result<u8, String> {
    let places = t.strip_prefix('B').filter(|p| p.len() == 6).ok_or_else(|| format!("wait mask '{t}' is not B and six places"))?;
    places.bytes().enumerate().try_fold(0u8, |mask, (k, c)| match c {
        b'-' => Ok(mask),
        c if c == b'0' + k as u8 => Ok(mask | 1 << k),
        c => Err(format!("wait mask '{t}': place {k} holds '{}', not {k} or -", char::from(c))),
    })
}

/// Four places, `R` where operand slot k is reused, else `-`.
fn reuse_of(t: &str) -> Result<u8, String> {
    if t.len() != 4 {
        return Err(format!("reuse '{t}' is not four places"));
    }
    t.bytes().enumerate().try_fold(0u8, |mask, (k, c)| match c {
        b'-' => Ok(mask),
        b'R' => Ok(mask | 1 << k),
        c => Err(format!("reuse '{t}': place {k} holds '{}', not R or -", char::from(c))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (high 64 bits of a word, its annotation): words of ptxas's SM90 code
    /// (`corpus/ptx/saxpy.ptx`, `nvdisasm -hex`) and edges.
    #[rustfmt::skip]
    const VECTORS: &[(u64, &str)] = &[
        (0x000e_2e00_0000_2100, "[----:B------:R-:W0:-:S07]"), // S2R R0, SR_TID.X
        (0x000e_a200_0c1e_1900, "[----:B------:R-:W2:-:S01]"), // LDG.E R2, desc[UR4][R2.64]
        (0x004f_ca00_0800_0007, "[----:B--2---:R-:W-:Y:S05]"), // FFMA R7, R2, UR6, R7
        (0x001f_e200_0f8e_0200, "[----:B0-----:R-:W-:-:S01]"), // IMAD R7, R7, UR4, R0
        (0x000f_c000_0000_0000, "[----:B------:R-:W-:Y:S00]"), // NOP padding
        (0x0000_0000_0000_0000, "[----:B------:R0:W0:Y:S00]"),
        (0x3fff_fe00_0000_0000, "[RRRR:B012345:R-:W-:-:S15]"),
        (0x2000_0000_0000_0000, "[---R:B------:R0:W0:Y:S00]"),
        (0x000d_8000_0000_0000, "[----:B------:R6:W6:Y:S00]"),
    ];

    #[test]
    fn words_print_and_read_as_their_annotations() {
        for &(high, text) in VECTORS {
            let w = Word(u128::from(high) << 64 | 0x1234);
            let s = Schedule::of(w);
            assert_eq!(s.to_string(), text, "{high:#018x}");
            assert_eq!(text.parse::<Schedule>(), Ok(s), "{text}");
            assert_eq!(s.apply(Word(0x1234)), Word(w.0 & (BITS | 0x1234)), "{text}");
        }
    }

    /// Every value of the 21 bits applies as itself, the word's other bits left alone, and
    /// every 13th (a stride that meets every value of each field) prints and reads back.
    #[test]
    fn every_value_roundtrips() {
        let other = Word(!BITS & 0xdead_beef_0123_4567_89ab_cdef_5555_aaaa);
        for c in 0..1u128 << 21 {
            let w = Word(other.0 | c << AT);
            let s = Schedule::of(w);
            assert_eq!(s.apply(other), w, "{c:#x}");
            if c % 13 == 0 {
                assert_eq!(s.to_string().parse::<Schedule>(), Ok(s), "{c:#x}");
            }
        }
    }

    #[test]
    fn a_five_part_annotation_has_no_reuse() {
        let s: Schedule = "[B0-2---:R1:W-:Y:S04]".parse().unwrap();
        assert_eq!(s, Schedule { stall: 4, yields: true, write_barrier: None, read_barrier: Some(1), wait: 0b101, reuse: 0 });
        assert_eq!(Schedule::split_off("  [B------:R-:W-:-:S02]  FFMA R0, R1, R2, R3 ;").unwrap().1, "FFMA R0, R1, R2, R3 ;");
        assert_eq!(Schedule::split_off("FFMA R0, R1, R2, R3 ;").unwrap(), (None, "FFMA R0, R1, R2, R3 ;"));
    }

    /// Every page's control fields lie where [`Schedule`] reads them, on the seed and the
    /// discovered pages of every architecture: stall 105–108, yield 109, the two
    /// scoreboards 110–112 and 113–115 (whichever label the page gives them), the wait
    /// mask 116–121, reuse 122–125.
    #[test]
    fn scheduling_bits_are_where_every_page_has_them() {
        use crate::spec::{Control, FieldKind};
        let root = crate::oracle::tools::repo_root();
        let mut n = 0;
        for pages in ["corpus/isa", "corpus/isa-discovered"] {
            let s = crate::spec::load(&[root.join(pages)]).unwrap();
            for v in s.pages.iter().flat_map(|p| &p.variants) {
                let mut at: Vec<(u8, usize)> = vec![];
                for f in &v.fields {
                    let FieldKind::Control { control } = f.kind else { continue };
                    let first = f.bits[0];
                    assert!(f.bits.iter().enumerate().all(|(k, &b)| usize::from(b) == usize::from(first) + k), "{}: {} not contiguous", v.key, f.name);
                    let want = match control {
                        Control::Stall => vec![105],
                        Control::Yield => vec![109],
                        Control::ReadBarrier | Control::WriteBarrier => vec![110, 113],
                        Control::WaitMask => vec![116],
                        Control::Reuse => vec![122],
                    };
                    assert!(want.contains(&first), "{}: {} starts at {first}", v.key, f.name);
                    at.push((first, f.bits.len()));
                }
                at.sort_unstable();
                assert_eq!(at, [(105, 4), (109, 1), (110, 3), (113, 3), (116, 6), (122, 4)], "{}", v.key);
                n += 1;
            }
        }
        assert!(n > 3000, "{n} variants");
    }

    /// (text, what the error says): each mistake is named.
    #[rustfmt::skip]
    const BAD: &[(&str, &str)] = &[
        ("B------:R-:W-:Y:S04", "not in brackets"),
        ("[B------:R-:W-:Y]", "4 parts"),
        ("[B------:R-:W-:Y:S16]", "stall 'S16'"),
        ("[B------:R-:W-:Y:S4]", "stall 'S4'"),
        ("[B------:R-:W7:Y:S04]", "'W7' is not W-"),
        ("[B------:W-:R-:Y:S04]", "'R-' is not W-"),
        ("[B--1---:R-:W-:Y:S04]", "place 2 holds '1'"),
        ("[B-----:R-:W-:Y:S04]", "six places"),
        ("[B------:R-:W-:y:S04]", "yield 'y'"),
        ("[--X-:B------:R-:W-:Y:S04]", "place 2 holds 'X'"),
        ("[R:B------:R-:W-:Y:S04]", "four places"),
    ];

    #[test]
    fn a_malformed_annotation_says_what_is_wrong() {
        for &(text, why) in BAD {
            let e = text.parse::<Schedule>().unwrap_err().to_string();
            assert!(e.contains(why) && e.contains(text), "{text}: {e}");
        }
        let e = Schedule::split_off("[B------:R-:W-:Y:S04 FFMA R0, R1, R2, R3 ;").unwrap_err();
        assert!(e.to_string().contains("no closing ']'"), "{e}");
    }
}
