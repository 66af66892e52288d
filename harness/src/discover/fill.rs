//! Forms a folder of pages lacks, solved from words real code uses and added to its pages
//! (`discover --fill DIR`).
//!
//! A census solves one seed per nvdisasm opclass, and a seed can leave an operand out:
//! SM90's census met IADD3 with a uniform source and its second carry-out at PT, so its
//! page prints one carry-out and no variant decodes ptxas's `IADD3 R0, P3, P4, R6, -UR4,
//! RZ`. Here every word no variant decodes that nvdisasm prints is solved as `discover
//! --word` solves a seed; its bits nvdisasm ignores keep the word's values (what ptxas
//! writes there), and its variant block is appended to its instruction's page (a new page
//! where there is none). Words the grown pages decode are not solved again.

use super::{discover, neutral, page, Source};
use crate::spec::{self, Arch};
use crate::word::Word;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A variant added to a page.
#[derive(Clone, Debug)]
pub struct Added {
    /// Its key (the solved key, made unique in the folder where it was taken).
    pub key: String,
    /// The page's file name in the folder (`iadd3.txt`).
    pub page: String,
    /// The word it was solved from (control bits neutral), and nvdisasm's text of it.
    pub word: Word,
    pub text: String,
    /// The words given that it decodes, its seed among them.
    pub words: usize,
}

/// A word no page decodes and no variant could be added for.
#[derive(Clone, Debug)]
pub struct Unsolved {
    pub word: Word,
    pub text: String,
    pub why: String,
}

/// What [`fill`] did.
#[derive(Debug, Default)]
pub struct Filled {
    /// Distinct words given (control bits neutral).
    pub words: usize,
    /// Of them, words the folder's pages decoded already.
    pub decoded: usize,
    /// Words nvdisasm rejects or prints nothing for (not instructions to solve).
    pub illegal: usize,
    /// Words nvdisasm prints with a value it has no name for (`INVALID3`, `???0`): reserved
    /// encodings, which no compiler writes; no form is added for them.
    pub reserved: usize,
    pub added: Vec<Added>,
    pub unsolved: Vec<Unsolved>,
}

/// Why a fill stopped.
#[derive(Debug, thiserror::Error)]
pub enum FillError {
    #[error("{0}")]
    Page(#[from] spec::PageError),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    #[error(transparent)]
    Discover(#[from] super::DiscoverError),
}

/// Adds to the pages in `dir` (the `arch` pages of one folder, edited in place) a variant
/// for each form of `words` they do not decode. The words' control bits are replaced by
/// [`super::NEUTRAL_CONTROL`] first, as the census does. A word whose form cannot be
/// solved stands for the words that share its opcode bits and printed modifiers: they are
/// not tried again.
pub fn fill(src: &dyn Source, arch: Arch, dir: &Path, words: &[Word], progress: &dyn Fn(&str)) -> Result<Filled, FillError> {
    let mut folder = Folder::load(dir, arch)?;
    let mut seen = BTreeSet::new();
    let words: Vec<Word> = words.iter().map(|&w| neutral(w)).filter(|w| seen.insert(*w)).collect();
    let mut out = Filled { words: words.len(), ..Filled::default() };
    let missing: Vec<Word> = words.iter().copied().zip(folder.keys_of(&words)).filter(|(_, k)| k.is_none()).map(|(w, _)| w).collect();
    out.decoded = words.len() - missing.len();
    let mut pending = Vec::new();
    for (&w, o) in missing.iter().zip(&src.outcomes(arch, &missing)?) {
        match o {
            crate::oracle::nvdisasm::Outcome::Printed { text } if names_no_value(text) => out.reserved += 1,
            crate::oracle::nvdisasm::Outcome::Printed { text } => pending.push((w, text.clone())),
            _ => out.illegal += 1,
        }
    }
    let mut failed: BTreeMap<(u128, String), usize> = BTreeMap::new();
    // Per group, the first word whose own form a page already decodes at its base word
    // (see `Folder::narrow`): another word of the group may still solve, with this one's
    // values of the bits nvdisasm ignores, real code's where it comes first (SM100's
    // UTCHMMA with its scale immediate: ptxas's words with URZ overlap the form without
    // the scale; a census word with UR0 solves the form with it).
    let mut overlapping: BTreeMap<(u128, String), Word> = BTreeMap::new();
    while let Some((w, text)) = pending.first().cloned() {
        let group = (w.0 & 0xfff, head(&text));
        if let Some(&i) = failed.get(&group) {
            out.unsolved.push(Unsolved { word: w, text, why: out.unsolved[i].why.clone() });
            pending.remove(0);
            continue;
        }
        match folder.solve(src, w, overlapping.get(&group).copied().unwrap_or(w))? {
            Ok(added) => {
                pending.remove(0);
                progress(&format!("{arch}: added {} to {} ({text})", added.key, added.page));
                out.added.push(Added { text, ..added });
                // The words the grown pages decode now, counted to the variant that does.
                let keys = folder.keys_of(&pending.iter().map(|p| p.0).collect::<Vec<_>>());
                let mut kept = vec![];
                for (p, k) in pending.into_iter().zip(keys) {
                    match k.and_then(|k| out.added.iter().position(|a| a.key == k)) {
                        Some(i) => out.added[i].words += 1,
                        None => kept.push(p),
                    }
                }
                pending = kept;
            }
            Err(why) => {
                progress(&format!("{arch}: {w} ({text}) not solved: {}", reason_class(&why)));
                if why.starts_with(BASE_DECODES) {
                    overlapping.entry(group).or_insert(w);
                } else {
                    failed.insert(group, out.unsolved.len());
                }
                out.unsolved.push(Unsolved { word: w, text, why });
                pending.remove(0);
            }
        }
    }
    recount_unsolved(&folder, &mut out);
    Ok(out)
}

/// Counts the unsolved words a form added after them decodes to that form (SM90's
/// `F2F.F16.F32.RM R0, -QNAN`: no solve can start from a NaN, whose every payload prints
/// alike, and `F2F.F16.F32 R0, 0` adds its form); they stay unsolved only where no page
/// decodes them.
fn recount_unsolved(folder: &Folder, out: &mut Filled) {
    let keys = folder.keys_of(&out.unsolved.iter().map(|u| u.word).collect::<Vec<_>>());
    let mut left = vec![];
    for (u, k) in std::mem::take(&mut out.unsolved).into_iter().zip(keys) {
        match k.map(|k| out.added.iter().position(|a| a.key == k)) {
            Some(Some(i)) => out.added[i].words += 1,
            // A page it had decodes it (not met: the pages only grow).
            Some(None) => out.decoded += 1,
            None => left.push(u),
        }
    }
    out.unsolved = left;
}

/// Whether nvdisasm's text holds a value it has no name for: a modifier `INVALIDn` or an
/// operand `???n` (census words reach such reserved encodings; a form solved from one
/// prints them and adds warnings, not instructions).
fn names_no_value(text: &str) -> bool {
    let after_digit = |marker: &str| text.match_indices(marker).any(|(i, m)| text[i + m.len()..].starts_with(|c: char| c.is_ascii_digit()));
    after_digit("INVALID") || after_digit("???")
}

/// An instruction's mnemonic and modifiers as nvdisasm printed them (`F2F.F16.BF16`).
fn head(text: &str) -> String {
    match crate::sass::parse_instruction(text) {
        Ok(i) => std::iter::once(i.mnemonic).chain(i.modifiers).collect::<Vec<_>>().join("."),
        Err(_) => text.to_string(),
    }
}

/// Why a word's form was not solved: its failed checks, the first [`SHOWN_CHECKS`] of them
/// (one row of `fill.md` each: a form can fail dozens, each with its example words), and
/// the command that prints them all.
fn failed_checks(arch: Arch, w: Word, notes: &[String]) -> String {
    let shown = notes.iter().take(SHOWN_CHECKS).map(String::as_str).collect::<Vec<_>>().join("; ");
    match notes.len() {
        n if n > SHOWN_CHECKS => {
            format!("{n} check(s) failed: {shown}; {} more (`discover --arch {} --word {w} --out DIR` prints them all)", n - SHOWN_CHECKS, arch.0)
        }
        n => format!("{n} check(s) failed: {shown}"),
    }
}

/// How [`Folder::narrow`]'s refusal of a word whose base word a page decodes starts.
const BASE_DECODES: &str = "its base word decodes as ";

/// How many failed checks [`failed_checks`] shows.
const SHOWN_CHECKS: usize = 3;

/// A reason without the word and text it names, so that the reasons of many words count
/// together (`has an operand kind pages cannot name …`).
fn reason_class(why: &str) -> &str {
    let why = why.find("has an operand kind").map_or(why, |i| &why[i..]);
    why.split(" (only ").next().unwrap_or(why)
}

/// The pages of one folder, as the spec they make now.
struct Folder {
    dir: PathBuf,
    arch: Arch,
    spec: spec::Spec,
}

impl Folder {
    fn load(dir: &Path, arch: Arch) -> Result<Folder, FillError> {
        let spec = spec::load(&[dir.to_path_buf()])?;
        Ok(Folder { dir: dir.to_path_buf(), arch, spec })
    }

    /// The key of the variant each word decodes as, if any.
    fn keys_of(&self, words: &[Word]) -> Vec<Option<String>> {
        let c = crate::codec::Codec::new(&self.spec);
        words.iter().map(|&w| c.decode(self.arch, w).ok().map(|(vi, _)| c.variant(vi).key.clone())).collect()
    }

    /// Solves `w`'s form and adds it to its page (the words it decodes counted as 1, its
    /// text left empty), the bits nvdisasm ignores as `ignored_from` has them; why not,
    /// where it cannot.
    fn solve(&mut self, src: &dyn Source, w: Word, ignored_from: Word) -> Result<Result<Added, String>, FillError> {
        let mut d = match discover(src, self.arch, w) {
            Ok(d) => d,
            Err(e @ super::DiscoverError::Tool(_)) => return Err(e.into()),
            Err(e) => return Ok(Err(e.to_string())),
        };
        if !d.notes.is_empty() {
            return Ok(Err(failed_checks(self.arch, w, &d.notes)));
        }
        // A word's own values where nvdisasm ignores the bits: what ptxas writes there.
        d.zero = d.ignored.iter().fold(d.zero, |z, &b| z.with_bit(b, ignored_from.bit(b)));
        if let Err(why) = self.narrow(src, &mut d) {
            return Ok(Err(why));
        }
        if let Some(why) = self.shares_words(&d) {
            return Ok(Err(why));
        }
        let key = self.unique_key(&page::key(&d), &page::heading(&d));
        let block = page::variant_block(&d).replacen(&format!("\nkey: {}\n", page::key(&d)), &format!("\nkey: {key}\n"), 1);
        let name = format!("{}.txt", d.mnemonic.to_lowercase());
        let path = self.dir.join(&name);
        let before = read(&path)?;
        let text = match &before {
            Some(t) => with_block(t, &block),
            None => page::render_blocks(&d.mnemonic, Some(&format!("Added by sass-harness discover --fill on {}", self.arch)), self.arch, &[block]),
        };
        write(&path, &text)?;
        let why = match Folder::load(&self.dir, self.arch) {
            Err(e) => format!("the page format cannot say it: {e}"),
            Ok(f) if f.keys_of(&[w])[0].as_deref() != Some(key.as_str()) => "the page's new variant does not decode its own word".into(),
            Ok(f) => match self.overlap(&f, &d.mnemonic) {
                Some(why) => why,
                None => {
                    *self = f;
                    return Ok(Ok(Added { key, page: name, word: w, text: String::new(), words: 1 }));
                }
            },
        };
        match &before {
            Some(t) => write(&path, t)?,
            None => std::fs::remove_file(&path).map_err(|source| FillError::Io { path: path.clone(), source })?,
        }
        Ok(Err(why))
    }

    /// Drops from `d`'s modifier tables the rows whose words the pages decode already: a
    /// seed solves its field as nvdisasm prints it, and where a known variant lists some
    /// of its values (SM90 `F2F.F64`'s `F16` and `F32` at bits 75–76, the new form's
    /// `F16` and `BF16` at 75 and 77) the new variant keeps only what is new. The
    /// distilled line is asked again when the base row went.
    fn narrow(&self, src: &dyn Source, d: &mut super::Discovered) -> Result<(), String> {
        let base = d.base();
        let groups: Vec<(usize, Vec<u8>)> = d
            .fields
            .iter()
            .filter_map(|f| match f.kind {
                super::FieldKind::Group(n) => Some((n as usize - 1, f.bits.clone())),
                _ => None,
            })
            .collect();
        // Each table's rows tried on the base word as the other tables leave it, until
        // nothing changes: a table whose every row is known waits for the others to move.
        let mut changed = true;
        while changed {
            changed = false;
            for (ti, bits) in &groups {
                let Some(t) = d.tables.get(*ti) else { continue };
                let now = d.base();
                let known = self.keys_of(&t.iter().map(|(v, _)| super::layout::set(now, bits, *v)).collect::<Vec<_>>());
                let kept: super::Table = t.iter().zip(&known).filter(|(_, k)| k.is_none()).map(|(r, _)| r.clone()).collect();
                if !kept.is_empty() && kept.len() < t.len() {
                    d.tables[*ti] = kept;
                    changed = true;
                }
            }
        }
        if let Some(k) = self.keys_of(&[d.base()])[0].as_deref().filter(|k| !self.nests(d, k)) {
            return Err(format!("{BASE_DECODES}{k}"));
        }
        fix_single_rows(d);
        if d.base() != base {
            let text = super::Oracle::new(src, self.arch).texts(&[d.base()]).map_err(|e| e.to_string())?;
            d.distilled = text.into_iter().flatten().next().filter(|t| !t.is_empty()).ok_or("the narrowed base word does not print")?;
        }
        Ok(())
    }

    /// Whether old variant `key` is more specific than `d`: it fixes every bit `d` fixes,
    /// as `d` does, and more (less the bits either ignores). A base word it decodes stays
    /// its own (the codec gives a word two variants match to the one that fixes more), and
    /// `d` adds the words its fields reach beyond: DEPBAR with a set of scoreboards,
    /// `DEPBAR {5,4,3,2,1,0}`, whose zero row prints nothing, `DEPBAR`'s own word.
    fn nests(&self, d: &super::Discovered, key: &str) -> bool {
        let Some(v) = self.spec.pages.iter().flat_map(|p| &p.variants).find(|v| v.arch == self.arch && v.key == key) else { return false };
        let ignored = d.ignored.iter().fold(v.ignored.0, |m, &b| m | 1u128 << b);
        let (mask, value) = fixed_of(d);
        let (mask, old) = (mask & !ignored, v.fixed_mask.0 & !ignored);
        old & mask == mask && old != mask && (value ^ v.fixed_value.0) & mask == 0
    }

    /// An old variant of the folder that matches some words the new one matches, neither
    /// being the more specific: their fixed bits (less those either ignores) never
    /// disagree, and neither fixes every bit the other does. The codec decodes any value
    /// of a table's field, listed or not, and gives a word two variants match to the one
    /// that fixes more (SM90's IADD3 that prints one carry-out fixes the other's field at
    /// PT); otherwise the word would be ambiguous.
    fn shares_words(&self, d: &super::Discovered) -> Option<String> {
        let ignored = d.ignored.iter().fold(0u128, |m, &b| m | 1u128 << b);
        let (mask, value) = fixed_of(d);
        let (mask, value) = (mask & !ignored, value & !ignored);
        let v = self.spec.pages.iter().flat_map(|p| &p.variants).find(|v| {
            let old = v.fixed_mask.0 & !v.ignored.0;
            let nested = (old & mask == old || old & mask == mask) && old != mask;
            v.arch == self.arch && (value ^ v.fixed_value.0) & mask & old == 0 && !nested
        })?;
        Some(format!("its words can be {}'s: no fixed bit tells them apart", v.key))
    }

    /// Where the grown folder decodes words of `mnemonic`'s variants otherwise than this
    /// one (a word of an old variant decoded as another, or one that several variants now
    /// match alike): a new variant must not take or blur what the pages decoded. Each
    /// variant's distilled word and [`OVERLAP_PROBES`] words of random listed values and
    /// as many of any values.
    fn overlap(&self, grown: &Folder, mnemonic: &str) -> Option<String> {
        let g = crate::codec::Codec::new(&grown.spec);
        let mut rng = crate::gen::Rng::new(0xf111);
        let mut words = vec![];
        for (vi, v) in g.variants().iter().enumerate().filter(|(_, v)| v.arch == self.arch && v.mnemonic == mnemonic) {
            let listed: Vec<_> = (0..OVERLAP_PROBES).map(|_| crate::gen::random_listed_values(v, &mut rng)).collect();
            let any: Vec<_> = (0..OVERLAP_PROBES).map(|_| crate::gen::random_values(v, &mut rng)).collect();
            let values = std::iter::once(crate::gen::distilled_values(v)).chain(listed).chain(any);
            words.extend(values.filter_map(|x| g.encode(vi, &x).ok()).map(|w| (w, v.key.clone())));
        }
        let ws: Vec<Word> = words.iter().map(|p| p.0).collect();
        let (before, after) = (self.keys_of(&ws), grown.keys_of(&ws));
        let old: BTreeSet<&str> = self.spec.pages.iter().flat_map(|p| p.variants.iter().map(|v| v.key.as_str())).collect();
        words.iter().zip(before.iter().zip(&after)).find_map(|((w, key), (b, a))| {
            // An old variant's word decoded otherwise, or the new variant's word by none.
            let moved = if old.contains(key.as_str()) { b != a } else { a.is_none() };
            moved.then(|| format!("it overlaps {key}: {w} decodes as {} (was {})", a.as_deref().unwrap_or("several or none"), b.as_deref().unwrap_or("none")))
        })
    }

    /// `key`, or where the folder has it already, `key__` and the heading's modifiers
    /// (then a number).
    fn unique_key(&self, key: &str, heading: &str) -> String {
        let taken: BTreeSet<&str> = self.spec.pages.iter().flat_map(|p| p.variants.iter().map(|v| v.key.as_str())).collect();
        if !taken.contains(key) {
            return key.to_string();
        }
        let mods: Vec<String> = heading.split('.').skip(1).map(str::to_lowercase).collect();
        let base = if mods.is_empty() { format!("{key}__fill") } else { format!("{key}__{}", mods.join("_")) };
        (1..).map(|n| if n == 1 { base.clone() } else { format!("{base}_{n}") }).find(|k| !taken.contains(k.as_str())).unwrap_or(base)
    }
}

/// The page `text` with `block` appended and its variant count line counted again.
fn with_block(text: &str, block: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if let Some(l) = lines.iter_mut().find(|l| count_line(l).is_some()) {
        let (n, rest) = count_line(l).unwrap_or((0, ""));
        let noun = if n + 1 == 1 { "variant" } else { "variants" };
        *l = format!("{} {noun} {rest}", n + 1);
    }
    let mut out = lines.join("\n");
    out.push_str("\n\n");
    out.push_str(block);
    out
}

/// A modifier group left with one row is no field: its bits are fixed at that row and its
/// modifier is printed always (the heading says it), so the variant's fixed bits tell it
/// apart from the variant whose rows it gave up.
fn fix_single_rows(d: &mut super::Discovered) {
    use super::FieldKind;
    while let Some(n) = (0..d.tables.len()).find(|&i| d.tables[i].len() == 1) {
        let group = n as u32 + 1;
        let value = d.tables[n][0].0;
        if let Some(f) = d.fields.iter().find(|f| f.kind == FieldKind::Group(group)) {
            d.zero = super::layout::set(d.zero, &f.bits, value);
        }
        d.fields.retain(|f| f.kind != FieldKind::Group(group));
        d.tables.remove(n);
        for f in &mut d.fields {
            if let FieldKind::Group(g) = &mut f.kind {
                if *g > group {
                    *g -= 1;
                }
            }
        }
    }
}

/// The bits a solved variant's page fixes (every bit no field holds, control bits aside)
/// and their values.
fn fixed_of(d: &super::Discovered) -> (u128, u128) {
    let fields = d.fields.iter().flat_map(|f| &f.bits).fold(0u128, |m, &b| m | 1u128 << b);
    let control = super::CONTROL.fold(0u128, |m, b| m | 1u128 << b);
    let mask = !(fields | control);
    (mask, d.zero.0 & mask)
}

/// Random words per variant [`Folder::overlap`] decodes (with its distilled word).
const OVERLAP_PROBES: usize = 64;

/// `12 variants on SM90 (H100)` as (12, "on SM90 (H100)").
fn count_line(l: &str) -> Option<(usize, &str)> {
    let (n, rest) = l.split_once(' ')?;
    let rest = rest.strip_prefix("variants ").or_else(|| rest.strip_prefix("variant "))?;
    Some((n.parse().ok()?, rest.strip_prefix("on ").map(|_| rest)?))
}

fn read(path: &Path) -> Result<Option<String>, FillError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(FillError::Io { path: path.to_path_buf(), source }),
    }
}

fn write(path: &Path, text: &str) -> Result<(), FillError> {
    Ok(crate::output::write_atomic(path, text.as_bytes())?)
}

/// The report `discover --fill` writes beside the pages (`fill.md`).
pub fn report(dir: &Path, arch: Arch, f: &Filled) -> String {
    let covered: usize = f.added.iter().map(|a| a.words).sum();
    let mut md = format!(
        "# Forms added to {} ({arch})\n\n{} distinct words (control bits neutral): {} decoded already, {} illegal or silent in nvdisasm, {} printed with a value nvdisasm names `INVALIDn` or `???n` (reserved, not filled), {} forms added (decoding {covered} words), {} unsolved.\n",
        dir.display(),
        f.words,
        f.decoded,
        f.illegal,
        f.reserved,
        f.added.len(),
        f.unsolved.len()
    );
    if !f.added.is_empty() {
        md.push_str("\n## Added\n\n| variant | page | seed word | nvdisasm | words |\n|---|---|---|---|---:|\n");
        for a in &f.added {
            md.push_str(&format!("| `{}` | {} | `{}` | `{}` | {} |\n", a.key, a.page, a.word, a.text, a.words));
        }
    }
    if !f.unsolved.is_empty() {
        md.push_str("\n## Unsolved\n\n| instruction | why | words | e.g. word | nvdisasm |\n|---|---|---:|---|---|\n");
        let mut by_why: BTreeMap<(String, &str), Vec<&Unsolved>> = BTreeMap::new();
        for u in &f.unsolved {
            let name = head(&u.text).split('.').next().unwrap_or_default().to_string();
            by_why.entry((name, reason_class(&u.why))).or_default().push(u);
        }
        for ((name, why), us) in by_why {
            md.push_str(&format!("| {name} | {why} | {} | `{}` | `{}` |\n", us.len(), us[0].word, us[0].text));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::{failed_checks, names_no_value, Arch, Word, SHOWN_CHECKS};

    /// A form that fails many checks (SM120 AST.P with a register from R128 failed 51, each
    /// with example words: 5 KB in one row of `fill.md`) is told by its first few, the count
    /// of the rest and the command that prints them all; a few are told whole.
    #[test]
    fn many_failed_checks_are_told_by_the_first_few() {
        let notes: Vec<String> = (0..51).map(|i| format!("check {i}")).collect();
        let w = Word(0x000f_c000_0000_10ff_0000_0000_bf00_0322);
        let why = failed_checks(Arch(120), w, &notes);
        assert!(why.starts_with("51 check(s) failed: check 0; check 1; check 2; 48 more"), "{why}");
        assert!(why.ends_with(&format!("(`discover --arch 120 --word {w} --out DIR` prints them all)")) && !why.contains("check 3;"), "{why}");
        let few = failed_checks(Arch(120), w, &notes[..SHOWN_CHECKS]);
        assert_eq!(few, "3 check(s) failed: check 0; check 1; check 2");
    }

    #[test]
    fn reserved_values_are_told_by_their_unnamed_values() {
        for (text, reserved) in [
            ("LDSM.INVALID7.M832.INVALID3 R0, [R0];", true),
            ("BMOV.32 RZ, ???63;", true),
            ("@UP0 SYNCS.???0.64 UR0, [UR0], UR0, UR2;", true),
            ("IADD3 R0, P3, P4, R6, -UR4, RZ;", false),
            ("HGMMA.64x8x16.F16 R0, R0, gdesc[UR0], R0, gsb0;", false),
            // A name that only starts like one: no digit follows.
            ("FOO.INVALIDATE R0;", false),
        ] {
            assert_eq!(names_no_value(text), reserved, "{text}");
        }
    }
}
