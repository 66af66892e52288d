//! `asm --patch` on a fatbin, or on a program or object that embeds fatbins: each part of
//! the listing `disasm` printed of it (one per cubin, under the `//` line naming the
//! cubin, [`CubinAt`]) patched into that cubin, in place.
//!
//! A patched cubin keeps its size (instructions are 16 bytes each, only their words
//! change), so the fatbin, and the program around it, keep their layout: nothing else in
//! the file moves or changes. A compressed cubin (zstd or LZ4) would compress to another
//! size, so it is only checked: its part may list it unchanged, not edit it.

use crate::disasm::{PatchError, PatchStats};
use crate::fatbin::{Entry, Payload};
use crate::listing::{CubinAt, InputError, Listing, Part};
use std::borrow::Cow;

/// Patches one cubin (its name, bytes) with one part's listing: [`crate::disasm::patch`]
/// with the codec of the cubin's architecture, which the caller loads.
pub type PatchOne<'a> = dyn FnMut(&str, &[u8], &Listing) -> Result<(Vec<u8>, PatchStats), PatchError> + 'a;

/// The patched file, and each cubin patched with what changed in it.
pub type Patched = (Vec<u8>, Vec<(CubinAt, PatchStats)>);

/// `bytes` (the file `file`, whose fatbin entries are `entries`) with each part of
/// `parts` (read from `listing_name`) patched into the cubin its heading names; a part
/// without a heading patches the file's only cubin; the cubins in the listing's order.
/// Every part's problem is an error naming its line.
pub fn patch_fat(file: &str, bytes: &[u8], entries: &[Entry], listing_name: &str, parts: &[Part], patch_one: &mut PatchOne) -> Result<Patched, PatchError> {
    let targets = targets(file, entries, listing_name, parts)?;
    let (mut out, mut done, mut errors) = (bytes.to_vec(), vec![], vec![]);
    for (e, cubin, part, line) in targets {
        let at = CubinAt { arch: e.arch, offset: e.offset };
        let (new, stats) = match patch_one(&at.name(file), cubin, &part.listing) {
            Ok(x) => x,
            Err(PatchError::Listing(mut more)) => {
                errors.append(&mut more);
                continue;
            }
            Err(other) => return Err(other),
        };
        match cubin {
            Cow::Borrowed(_) if new.len() == cubin.len() => out[e.payload_at..e.payload_at + new.len()].copy_from_slice(&new),
            // `disasm::patch` keeps the size (`cubin::patch_words`); another `patch_one` may not.
            Cow::Borrowed(_) => {
                let message = format!("patched, the SM{} cubin at byte {:#x} would change size ({} → {} bytes)", e.arch, e.offset, cubin.len(), new.len());
                errors.push(InputError { file: listing_name.to_string(), line, message });
                continue;
            }
            Cow::Owned(_) if stats.changed == 0 => {}
            Cow::Owned(_) => {
                let message = format!(
                    "the SM{} cubin at byte {:#x} of {file} is compressed: patched, it would compress to another size, so it is not patched in place \
                     ({} word(s) would change); patch the cubin `cuobjdump -xelf all` extracts, or build without `-Xfatbin -compress-all`",
                    e.arch, e.offset, stats.changed
                );
                errors.push(InputError { file: listing_name.to_string(), line, message });
                continue;
            }
        }
        done.push((at, stats));
    }
    if errors.is_empty() {
        Ok((out, done))
    } else {
        errors.sort_by_key(|e| e.line);
        Err(PatchError::Listing(errors))
    }
}

/// What one part patches: the cubin's entry and bytes, the part, and the line that names
/// the cubin (its heading, else its first instruction's).
type Target<'e, 'b, 'p> = (&'e Entry<'b>, &'e Cow<'b, [u8]>, &'p Part, usize);

/// The cubin each part patches; every part that names none, or one named before, is an
/// error.
fn targets<'e, 'b, 'p>(file: &str, entries: &'e [Entry<'b>], listing_name: &str, parts: &'p [Part]) -> Result<Vec<Target<'e, 'b, 'p>>, PatchError> {
    let cubins: Vec<(&Entry, &Cow<[u8]>)> = entries
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Cubin(c) => Some((e, c)),
            Payload::Ptx => None,
        })
        .collect();
    let list = cubins.iter().map(|(e, _)| format!("SM{} at byte {:#x}", e.arch, e.offset)).collect::<Vec<_>>().join(", ");
    let (mut found, mut errors): (Vec<Target>, Vec<InputError>) = (vec![], vec![]);
    for p in parts {
        let line = p.cubin.map(|(_, l)| l).or_else(|| p.listing.items.first().map(|i| i.line)).unwrap_or(0);
        let cubin = match p.cubin {
            Some((at, _)) => cubins
                .iter()
                .find(|(e, _)| e.offset == at.offset && e.arch == at.arch)
                .ok_or_else(|| format!("{file} has no SM{} cubin at byte {:#x} (its cubins: {list}): is the listing of another file?", at.arch, at.offset)),
            None if cubins.len() == 1 => Ok(&cubins[0]),
            None => Err(format!(
                "instructions under no line naming their cubin, and {file} holds {} cubins ({list}): keep the `// {file} (SM.. cubin at byte 0x..)` line `disasm` prints before each cubin's listing",
                cubins.len()
            )),
        };
        let cubin = cubin.and_then(|&(e, c)| match found.iter().find(|(f, ..)| std::ptr::eq(*f, e)) {
            Some((.., first)) => Err(format!("a second listing of the SM{} cubin at byte {:#x} (the first at line {first})", e.arch, e.offset)),
            None => Ok((e, c)),
        });
        match cubin {
            Ok((e, c)) => found.push((e, c, p, line)),
            Err(message) => errors.push(InputError { file: listing_name.to_string(), line, message }),
        }
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(PatchError::Listing(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fatbin::{contents, Contents};
    use crate::listing::read_parts;
    use crate::oracle::tools::repo_root;

    fn read(name: &str) -> Vec<u8> {
        std::fs::read(repo_root().join("corpus/fatbin").join(name)).unwrap()
    }

    /// A stand-in for `disasm::patch`: flips a bit of byte 0x100 of each cubin a part
    /// lists an instruction of (`changed` 1), else gives it back.
    fn flip(_: &str, cubin: &[u8], l: &Listing) -> Result<(Vec<u8>, PatchStats), PatchError> {
        let mut out = cubin.to_vec();
        let changed = usize::from(!l.items.is_empty());
        out[0x100] ^= changed as u8;
        Ok((out, PatchStats { instructions: l.items.len(), changed }))
    }

    fn entries_of(bytes: &[u8]) -> Vec<Entry<'_>> {
        let Ok(Contents::Fat(entries)) = contents(bytes) else { panic!("no entries") };
        entries
    }

    fn parts(text: &str) -> Vec<Part> {
        read_parts("l.sass", text.as_bytes()).unwrap()
    }

    /// Each part goes into the cubin its heading names, in place, within the file (a
    /// host object's `.nv_fatbin` too); the rest of the file stays as it was.
    #[test]
    fn parts_patch_the_cubins_they_name_in_place() {
        for name in ["atomics_global.fatbin", "host.o"] {
            let bytes = read(name);
            let Ok(Contents::Fat(entries)) = contents(&bytes) else { panic!("{name}") };
            let (sm90, sm120) = (&entries[0], &entries[2]);
            let text =
                format!("// {}\n// {}\nNOP ;\n", CubinAt { arch: 90, offset: sm90.offset }.name(name), CubinAt { arch: 120, offset: sm120.offset }.name(name));
            let (out, done) = patch_fat(name, &bytes, &entries, "l.sass", &parts(&text), &mut flip).unwrap();
            assert_eq!(done.iter().map(|(at, st)| (at.arch, st.changed)).collect::<Vec<_>>(), [(90, 0), (120, 1)]);
            let changed: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] != out[i]).collect();
            assert_eq!((out.len(), changed), (bytes.len(), vec![sm120.payload_at + 0x100]), "{name}");
        }
    }

    /// A part that names no cubin of the file, one named twice, and a part without a
    /// heading in a file of several cubins are errors at their lines; a compressed cubin
    /// may be listed, not changed.
    #[test]
    fn parts_that_name_no_cubin_once_are_errors_at_their_lines() {
        let bytes = read("atomics_global.fatbin");
        let Ok(Contents::Fat(entries)) = contents(&bytes) else { panic!() };
        let at = |arch, offset| CubinAt { arch, offset }.name("f");
        let sm100 = at(100, entries[1].offset);
        let bad = format!("NOP ;\n// {}\n// {sm100}\n// {sm100}\n", at(100, entries[1].offset + 1));
        let Err(PatchError::Listing(errors)) = patch_fat("f", &bytes, &entries, "l.sass", &parts(&bad), &mut flip) else { panic!() };
        let lines: Vec<(usize, &str)> = errors.iter().map(|e| (e.line, &e.message[..25])).collect();
        assert_eq!(lines, [(1, "instructions under no lin"), (2, "f has no SM100 cubin at b"), (4, "a second listing of the S")]);
        let packed = read("atomics_global.compressed.fatbin");
        let Ok(Contents::Fat(entries)) = contents(&packed) else { panic!() };
        let listed = format!("// {}\n", at(90, entries[0].offset));
        assert_eq!(patch_fat("f", &packed, &entries, "l.sass", &parts(&listed), &mut flip).unwrap().0, packed);
        let Err(PatchError::Listing(errors)) = patch_fat("f", &packed, &entries, "l.sass", &parts(&format!("{listed}NOP ;\n")), &mut flip) else { panic!() };
        assert!(errors.len() == 1 && errors[0].line == 1 && errors[0].message.contains("is compressed"), "{errors:?}");
        // A patch that would change a plain cubin's size is an error too, nothing spliced.
        let mut longer = |_: &str, c: &[u8], _: &Listing| Ok(([c, &[0]].concat(), PatchStats::default()));
        let Err(PatchError::Listing(errors)) = patch_fat("f", &bytes, &entries_of(&bytes), "l.sass", &parts(&format!("// {sm100}\n")), &mut longer) else {
            panic!()
        };
        assert!(errors.len() == 1 && errors[0].line == 1 && errors[0].message.contains("would change size"), "{errors:?}");
    }
}
