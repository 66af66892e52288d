//! Reading nvdisasm's output: the instruction lines of a listing and the stderr lines
//! that name illegal words.
//!
//! Instruction lines look like
//! `        /*0010*/               @P0 DFMA R0, R0, R0, R1 ;      /* 0x000000000000022b */`
//! followed by a line holding only `/* 0x0000000000000001 */` (the high 64 bits).
//! Addresses grow past four digits (`/*4e200*/`) in large files.

use std::collections::BTreeMap;

use crate::word::Word;

/// An stderr line without what depends on the batch: the `nvdisasm error   : ` prefix
/// and the ` at address 0x…` suffix (addresses are relative to the chunk's file, so they
/// would change with `jobs`). `nvdisasm error   : Opclass 'nop_', undefined value 0x3b
/// for table 'TABLES_opex_1' at address 0x00000a50` → `Opclass 'nop_', undefined value
/// 0x3b for table 'TABLES_opex_1'`.
pub fn error_message(line: &str) -> String {
    let mut m = line.trim();
    if let Some(rest) = m.strip_prefix("nvdisasm") {
        if let Some(colon) = rest.find(':') {
            if rest[..colon].trim().chars().all(|c| c.is_ascii_alphabetic()) {
                m = rest[colon + 1..].trim_start();
            }
        }
    }
    if let Some(pos) = m.rfind(" at address ") {
        m = m[..pos].trim_end();
    }
    m.to_string()
}

/// stderr lines that name an address, grouped by address (in order of appearance), as
/// [`error_message`]s.
pub fn parse_errors(stderr: &str) -> BTreeMap<u64, Vec<String>> {
    let mut out: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in stderr.lines() {
        let Some(pos) = line.find("at address ") else {
            continue;
        };
        let rest = line[pos + "at address ".len()..].trim_start();
        let rest = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")).unwrap_or(rest);
        let digits: String = rest.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
        if let Ok(a) = u64::from_str_radix(&digits, 16) {
            out.entry(a).or_default().push(error_message(line));
        }
    }
    out
}

/// Instruction lines of an nvdisasm listing (raw `-b` output or a cubin's): the address,
/// the text (trimmed, spacing before `;` kept) and, with `-hex`, the word from the two
/// hex comments. Labels, directives (`.byte …` even when addressed), section banners and
/// the orphan hex comments of silent words are skipped.
pub fn parse_listing(stdout: &str) -> Vec<(u64, String, Option<Word>)> {
    let mut out: Vec<(u64, String, Option<Word>)> = vec![];
    // Index into `out` of an instruction whose low half came on its own line and whose
    // high half is expected on the very next line.
    let mut awaiting_high: Option<(usize, u64)> = None;
    // ASCII trims: nvdisasm pads its lines with blanks to align the hex comments (some
    // 100 in a big batch), and `str::trim` decodes each as a char.
    for line in stdout.lines() {
        let t = line.trim_ascii();
        if let Some(v) = comment_only(t) {
            if let Some((k, low)) = awaiting_high.take() {
                out[k].2 = Some(Word(((v as u128) << 64) | low as u128));
            }
            continue;
        }
        awaiting_high = None;
        let Some((addr, rest)) = address_prefix(t) else {
            continue;
        };
        let (body, low) = split_hex_comment(rest);
        let text = body.trim_ascii();
        if text.is_empty() || text.starts_with('.') {
            continue;
        }
        out.push((addr, normalise_text(text), None));
        if let Some(low) = low {
            awaiting_high = Some((out.len() - 1, low));
        }
    }
    out
}

/// nvdisasm pads an unnamed enum value (`???1`) with spaces that depend on the widest
/// line in the whole listing, so the same word prints differently in different batches
/// (`[R195],     ???1` alone, ~100 spaces in a 30000-word batch). Collapse the blanks
/// before `???` to one space; all other spacing (`+INF  ;`, `+INF ,`) is stable and kept.
fn normalise_text(text: &str) -> String {
    if !text.contains("???") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("???") {
        let before = &rest[..pos];
        let trimmed = before.trim_end_matches([' ', '\t']);
        out.push_str(trimmed);
        if trimmed.len() < before.len() {
            out.push(' ');
        }
        out.push_str("???");
        rest = &rest[pos + 3..];
    }
    out.push_str(rest);
    out
}

/// `/*0010*/ rest` → (0x10, rest).
fn address_prefix(t: &str) -> Option<(u64, &str)> {
    let inner = t.strip_prefix("/*")?;
    let end = inner.find("*/")?;
    let a = inner[..end].trim_ascii();
    if a.is_empty() || !a.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some((u64::from_str_radix(a, 16).ok()?, &inner[end + 2..]))
}

/// A trimmed line that is only `/* 0x0123… */`.
fn comment_only(t: &str) -> Option<u64> {
    let inner = t.strip_prefix("/*")?.strip_suffix("*/")?.trim_ascii();
    let h = inner.strip_prefix("0x")?;
    if h.is_empty() || h.len() > 16 || !h.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(h, 16).ok()
}

/// `text ;      /* 0x… */` → (`text ;      `, Some(low)); without a trailing hex comment,
/// (rest, None).
fn split_hex_comment(rest: &str) -> (&str, Option<u64>) {
    let r = rest.trim_ascii_end();
    if let Some(pos) = r.rfind("/*") {
        if let Some(v) = comment_only(&r[pos..]) {
            return (&r[..pos], Some(v));
        }
    }
    (rest, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::nvdisasm::nop;

    fn w(low: u64, high: u64) -> Word {
        Word(((high as u128) << 64) | low as u128)
    }

    #[test]
    fn parse_listing_handles_raw_and_cubin_forms() {
        let listing = "\t.headerflags\t@\"EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90\"
//--------------------- .text.k                   --------------------------
\t.section\t.text.k,\"ax\",@progbits
        .global         k
k:
.text.k:
        /*0000*/ \t.byte\t0xff, 0xff, 0xff, 0xff
        /*0000*/               @P0 DFMA R0, R0, R0, +INF  ;      /* 0x000000000000022b */
                                                              /* 0x0000000000000001 */
                                                              /* 0xa02ac240ae41bc78 */
                                                              /* 0x000001b8fc286e97 */
.L_x_0:
        /*0020*/                   BRA `(.L_x_0);                          /* 0xfffffffc00fc7947 */
                                                                           /* 0x000fc0000383ffff */
        /*4e200*/                   NOP;                       /* 0x0000000000007918 */
                                                              /* 0x000fc00000000000 */
        /*4e210*/                   EXIT ;
";
        let got = parse_listing(listing);
        assert_eq!(
            got,
            vec![
                (0x0, "@P0 DFMA R0, R0, R0, +INF  ;".to_string(), Some(w(0x22b, 1))),
                (0x20, "BRA `(.L_x_0);".to_string(), Some(w(0xfffffffc00fc7947, 0x000fc0000383ffff))),
                (0x4e200, "NOP;".to_string(), Some(nop("SM90"))),
                (0x4e210, "EXIT ;".to_string(), None),
            ]
        );
        assert!(parse_listing("garbage /*zz*/\n/* 0xnothex */\n").is_empty());
        // Batch-dependent padding before `???` is collapsed.
        let wide = "        /*0000*/               @P3 SUQUERY.BA.1D P0, R31, [R195],                    ???1, UR24, 0x77 ; /* 0x191dd843c31f3fb3 */
                                                                                         /* 0x000001be2b907d09 */";
        assert_eq!(
            parse_listing(wide),
            vec![(0, "@P3 SUQUERY.BA.1D P0, R31, [R195], ???1, UR24, 0x77 ;".to_string(), Some(Word(0x000001be2b907d09191dd843c31f3fb3)))]
        );
    }

    #[test]
    fn parse_errors_groups_by_address() {
        let e = "nvdisasm error   : Unrecognized operation for functional unit 'uC' at address 0x00000010\n\
                 nvdisasm error   : Illegal instruction found\n\
                 nvdisasm error   : Opclass 'nop_', undefined value 0x3b for table 'TABLES_opex_1' at address 0x00000a50\n";
        let m = parse_errors(e);
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![0x10, 0xa50]);
        assert_eq!(m[&0x10], vec!["Unrecognized operation for functional unit 'uC'".to_string()]);
        assert_eq!(m[&0xa50], vec!["Opclass 'nop_', undefined value 0x3b for table 'TABLES_opex_1'".to_string()]);
    }
}
