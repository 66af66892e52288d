//! Real code: compile our PTX kernels with ptxas, and check every word a page covers
//! against nvdisasm in both directions (decode → print, and nvdisasm's text → assemble).

use crate::codec::conventions::Conventions;
use crate::codec::{self, asm, Codec};
use crate::compare::{compare, Verdict};
use crate::cubin;
use crate::oracle::nvdisasm::{Nvdisasm, Outcome};
use crate::oracle::ptxas::{self, Target};
use crate::sass;
use crate::spec::Arch;
use crate::word::{BitSet, Word};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, Serialize)]
pub struct RealCodeReport {
    pub kernels: usize,
    /// Words in all compiled text sections.
    pub words: usize,
    /// Words the spec decodes (a page covers them).
    pub covered: usize,
    /// Covered words whose printed text means what nvdisasm printed.
    pub agreeing: usize,
    /// Covered words printed differently (page mistakes; see the findings).
    pub disagreeing: Vec<Example>,
    /// Covered words whose text is byte-identical to nvdisasm's (with the conventions
    /// stored beside the pages, else learned from nvdisasm at the start of the run:
    /// `.reuse`, terminator, modifier order, aliases).
    pub identical: usize,
    /// Byte-identical words by architecture: (with the conventions, from the page alone).
    /// The second is what decoding printed before conventions were stored.
    pub identical_by_arch: std::collections::BTreeMap<String, (usize, usize)>,
    /// Agreeing words whose text is not byte-identical (spelling only).
    pub not_identical: Vec<Example>,
    /// Agreeing words whose nvdisasm text assembles back bit-exactly.
    pub asm_exact: usize,
    /// Agreeing words that assemble back up to bits nvdisasm does not print (listed in
    /// `ignored_bits`): bits the page marks ignored, or another word nvdisasm prints as the
    /// same text (asked: a NaN's payload prints `-QNAN` whatever it is).
    pub asm_up_to_ignored: usize,
    pub ignored_bits: BitSet,
    /// Agreeing words whose text several variants encode, this word among them: the text
    /// cannot say which (two forms nvdisasm prints alike), not a codec fault.
    pub asm_ambiguous: usize,
    /// Of those, words that are the first reading: what `asm` gives for the text
    /// ([`crate::listing::assemble_one`]), ptxas's choice where they are all.
    pub asm_ambiguous_first: usize,
    /// Agreeing words whose text does not assemble, or assembles to a word nvdisasm prints
    /// otherwise: a codec bug if non-zero.
    pub asm_mismatch: usize,
    pub asm_failures: Vec<Example>,
    /// Covered words by variant key.
    pub by_variant: std::collections::BTreeMap<String, usize>,
    /// (words, covered) by architecture.
    pub by_arch: std::collections::BTreeMap<String, (usize, usize)>,
    /// Words no page covers, by architecture and the mnemonic nvdisasm printed: what pages
    /// the corpus still needs.
    pub uncovered: std::collections::BTreeMap<String, std::collections::BTreeMap<String, usize>>,
    /// The first few uncovered words of each architecture and mnemonic, as nvdisasm printed
    /// them: what a page for them must say.
    pub uncovered_examples: Vec<Example>,
    /// (file, architecture) pairs not compiled: ptxas refuses the file there (its
    /// `.target`, or instructions the architecture lacks).
    pub skipped: Vec<Skip>,
}

/// Uncovered words kept as examples per architecture and mnemonic.
const UNCOVERED_EXAMPLES: usize = 3;

#[derive(Clone, Debug, Serialize)]
pub struct Example {
    pub kernel: String,
    pub word: String,
    pub ours: String,
    pub nvdisasm: String,
    pub note: String,
}

/// A PTX file not compiled for an architecture: ptxas refuses it there.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Skip {
    pub file: String,
    pub arch: String,
    /// ptxas's refusal (`Program with .target 'sm_100f' cannot be compiled to different
    /// SM-family architecture`).
    pub reason: String,
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "skipped {} for {}: ptxas: {}", self.file, self.arch, self.reason)
    }
}

/// Which `-arch` each `.target` compiles for, learned by asking ptxas: a file is tried,
/// and ptxas's refusal of its target (see [`ptxas::refusal`]) is kept, so the next file
/// of that target is skipped for that architecture without a run. No family or
/// compatibility rule is written down here: ptxas's own rules decide. A refusal of the
/// file's instructions (wgmma on sm_100a) skips that file only.
/// Why a real-code run stopped (a tool, a file or a listing; never a word that disagrees,
/// which the report counts).
#[derive(Debug, thiserror::Error)]
pub enum RealCodeError {
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Ptxas(#[from] ptxas::PtxasError),
    #[error(transparent)]
    Cubin(#[from] cubin::CubinError),
    #[error(transparent)]
    Nvdisasm(#[from] crate::oracle::nvdisasm::NvdisasmError),
    #[error("nvdisasm text '{text}': {source}")]
    Text { text: String, source: sass::ParseError },
}

#[derive(Default)]
pub struct TargetRules {
    /// (target, -arch) → ptxas's refusal.
    refused: std::collections::HashMap<(String, String), String>,
}

impl TargetRules {
    /// The code words of `file` (text `ptx`) for `arch`, or why ptxas will not compile it
    /// for `arch`. Files without a `.target` count as `sm_90`. Other failures are errors.
    pub fn words(&mut self, ptxas_path: &Path, file: &Path, ptx: &str, arch: Arch, out_dir: &Path) -> Result<Result<Vec<Word>, Skip>, RealCodeError> {
        let target = Target::of(ptx).unwrap_or(Target { sm: 90, specific: false, family: false });
        let key = (target.name(), target.arch_for(arch.0));
        let skip =
            |reason: &str| Skip { file: file.file_name().unwrap_or_default().to_string_lossy().into_owned(), arch: arch.to_string(), reason: reason.into() };
        if let Some(reason) = self.refused.get(&key) {
            return Ok(Err(skip(reason)));
        }
        match ptxas::compile(ptxas_path, file, &key.1, out_dir) {
            Ok(cubin) => cubin_words(&cubin).map(Ok),
            Err(e) => match ptxas::refusal(&e) {
                Some(r) => {
                    let s = skip(&r.line);
                    if r.of_target {
                        self.refused.insert(key, r.line);
                    }
                    Ok(Err(s))
                }
                None => Err(e.into()),
            },
        }
    }
}

/// Compiles every `*.ptx` of `ptx_dir` with ptxas for each architecture of `codec`
/// (cubins into `out_dir`; files ptxas refuses for an architecture are skipped), has
/// nvdisasm disassemble the words, an architecture's kernels together, and checks each
/// word the spec covers both ways: printed as nvdisasm prints it, and nvdisasm's text
/// assembled back to it.
pub fn run(codec: &Codec, nv: &Nvdisasm, ptxas_path: &Path, ptx_dir: &Path, out_dir: &Path) -> Result<RealCodeReport, RealCodeError> {
    let files = ptx_files(ptx_dir)?;
    let mut archs: Vec<Arch> = codec.variants().iter().map(|v| v.arch).collect();
    archs.sort();
    archs.dedup();
    // Forms whose conventions are stored print with those alone (what `decode` does
    // offline); the others' are learned from nvdisasm for this run.
    let unstored: Vec<usize> = (0..codec.variants().len()).filter(|&vi| codec.variant(vi).conventions.is_none()).collect();
    let conv = if unstored.is_empty() { Conventions::default() } else { crate::oracle::learn::learn(nv, codec, &unstored)? };
    let mut tally = Tally { codec, conv, rep: RealCodeReport::default(), alike: vec![] };
    let mut rules = TargetRules::default();
    let mut pending = Pending::default();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|source| RealCodeError::File { path: f.clone(), source })?;
        for &arch in &archs {
            let words = match rules.words(ptxas_path, f, &text, arch, out_dir)? {
                Ok(ws) => ws,
                Err(skip) => {
                    tally.rep.skipped.push(skip);
                    continue;
                }
            };
            let name = format!("{} ({})", f.file_name().unwrap_or_default().to_string_lossy(), arch);
            pending.words += words.len();
            pending.kernels.push(Kernel { name, arch, words });
            if pending.words >= BATCH_WORDS {
                tally.kernels(nv, std::mem::take(&mut pending))?;
            }
        }
    }
    tally.kernels(nv, pending)?;
    Ok(tally.rep)
}

/// Words of compiled kernels an nvdisasm run takes at most (more only when one kernel
/// has more): a run costs about a quarter of a second of CPU before its first word, so
/// the kernels of an architecture go together (one run per file and architecture made
/// the corpus's 46 kernels 12 s of nvdisasm), in bounded memory.
const BATCH_WORDS: usize = 100_000;

/// One file's code for one architecture.
struct Kernel {
    /// `file.ptx (SM90)`, as the report names it.
    name: String,
    arch: Arch,
    words: Vec<Word>,
}

/// A word nvdisasm's text assembled back to another word of, which the page does not mark
/// as differing only in ignored bits: counted once nvdisasm says whether it prints that
/// word alike (a NaN's payload prints `-QNAN` whatever it is).
struct Alike {
    arch: Arch,
    /// The word assembled, its variant, and the bits it differs in from the original.
    word: Word,
    vi: usize,
    diff: BitSet,
    /// The failure it becomes when nvdisasm prints the word otherwise; its `nvdisasm`:
    /// the original's text, branch targets as at address 0.
    failure: Example,
}

/// An uncovered example's word, disassembled away from its place in its kernel.
struct Moved {
    /// Its place in [`RealCodeReport::uncovered_examples`].
    example: usize,
    arch: Arch,
    /// Its index in its kernel.
    index: usize,
    word: Word,
}

/// Kernels compiled and not yet disassembled, in compile order, and their words.
#[derive(Default)]
struct Pending {
    kernels: Vec<Kernel>,
    words: usize,
}

/// Every instruction word ptxas emits for the `*.ptx` files of `ptx_dir` on `arch`, and
/// the files ptxas refuses to compile for `arch` (their `.target`); cubins go to `out_dir`.
pub fn corpus_words(ptxas_path: &Path, ptx_dir: &Path, arch: Arch, out_dir: &Path) -> Result<(Vec<Word>, Vec<Skip>), RealCodeError> {
    let (mut out, mut skipped, mut rules) = (vec![], vec![], TargetRules::default());
    for f in ptx_files(ptx_dir)? {
        let text = std::fs::read_to_string(&f).map_err(|source| RealCodeError::File { path: f.clone(), source })?;
        match rules.words(ptxas_path, &f, &text, arch, out_dir)? {
            Ok(ws) => out.extend(ws),
            Err(s) => skipped.push(s),
        }
    }
    Ok((out, skipped))
}

/// The code words of a cubin ptxas wrote.
fn cubin_words(cubin_path: &Path) -> Result<Vec<Word>, RealCodeError> {
    let bytes = std::fs::read(cubin_path).map_err(|source| RealCodeError::File { path: cubin_path.to_path_buf(), source })?;
    Ok(cubin::text_words(&bytes)?.iter().map(|w| w.word).collect())
}

/// The `*.ptx` files of `dir`, sorted.
fn ptx_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, RealCodeError> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|source| RealCodeError::File { path: dir.to_path_buf(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().map(|x| x == "ptx").unwrap_or(false))
        .collect();
    files.sort();
    Ok(files)
}

/// The report so far, and what checking one more word needs.
/// A form's conventions: stored with its page, else learned for this run.
fn conventions_of<'v>(conv: &'v Conventions, v: &'v crate::spec::Variant) -> Option<&'v crate::codec::conventions::FormConventions> {
    v.conventions.as_deref().or_else(|| conv.get(v.arch, &v.key))
}

struct Tally<'a> {
    codec: &'a Codec<'a>,
    /// Conventions learned from nvdisasm at the start of the run, for forms without stored ones.
    conv: Conventions,
    rep: RealCodeReport,
    /// Reassembled words for nvdisasm to print (see [`Alike`]).
    alike: Vec<Alike>,
}

impl Tally<'_> {
    /// Checks `pending`'s kernels in their order, each architecture's words disassembled
    /// in one request, each kernel's word `i` at the address it has there (which only
    /// branch targets show: [`crate::codec::conventions::target_at_zero`] takes it out).
    fn kernels(&mut self, nv: &Nvdisasm, pending: Pending) -> Result<(), RealCodeError> {
        let mut words: std::collections::BTreeMap<Arch, Vec<Word>> = std::collections::BTreeMap::new();
        for k in &pending.kernels {
            words.entry(k.arch).or_default().extend(&k.words);
        }
        // Per architecture, nvdisasm's outcomes in kernel order; each kernel takes its own.
        let mut outcomes = std::collections::BTreeMap::new();
        for (arch, words) in words {
            outcomes.insert(arch, (0u64, nv.disassemble(&arch.nvdisasm_name(), &words)?.into_iter()));
        }
        let mut moved = vec![];
        for k in pending.kernels {
            self.rep.kernels += 1;
            self.rep.words += k.words.len();
            let (at, outs) = outcomes.get_mut(&k.arch).expect("every kernel's architecture was disassembled");
            let covered = self.rep.covered;
            for ((i, w), o) in k.words.iter().enumerate().zip(outs.by_ref()) {
                let examples = self.rep.uncovered_examples.len();
                self.word(&k.name, k.arch, *w, o, 16 * *at)?;
                if self.rep.uncovered_examples.len() > examples && i as u64 != *at {
                    moved.push(Moved { example: examples, arch: k.arch, index: i, word: *w });
                }
                *at += 1;
            }
            let a = self.rep.by_arch.entry(k.arch.to_string()).or_default();
            a.0 += k.words.len();
            a.1 += self.rep.covered - covered;
        }
        let past = 16 * outcomes.values().map(|(at, _)| *at).max().unwrap_or(0);
        self.reread_examples(nv, moved, past)?;
        self.check_alike(nv)
    }

    /// Counts each [`Alike`] word: exact up to bits nvdisasm does not print where it
    /// prints the word as the original's text, else a mismatch.
    fn check_alike(&mut self, nv: &Nvdisasm) -> Result<(), RealCodeError> {
        let mut by_arch: std::collections::BTreeMap<Arch, Vec<Alike>> = std::collections::BTreeMap::new();
        for a in std::mem::take(&mut self.alike) {
            by_arch.entry(a.arch).or_default().push(a);
        }
        for (arch, of_arch) in by_arch {
            let words: Vec<Word> = of_arch.iter().map(|a| a.word).collect();
            let outs = nv.disassemble(&arch.nvdisasm_name(), &words)?;
            for (i, (a, o)) in of_arch.into_iter().zip(outs).enumerate() {
                let v = self.codec.variant(a.vi);
                let printed = match &o {
                    Outcome::Printed { text } => Some(crate::codec::conventions::target_at_zero(text, &v.target_operands(), v.operands.len(), 16 * i as u64)),
                    _ => None,
                };
                if printed.as_deref() == Some(a.failure.nvdisasm.as_str()) {
                    self.rep.asm_up_to_ignored += 1;
                    self.rep.ignored_bits = self.rep.ignored_bits.union(a.diff);
                } else {
                    let note = format!("{}, which nvdisasm prints {}", a.failure.note, printed.map_or_else(|| format!("{o:?}"), |t| format!("'{t}'")));
                    self.rep.asm_mismatch += 1;
                    self.rep.asm_failures.push(Example { note, ..a.failure });
                }
            }
        }
        Ok(())
    }

    /// An uncovered word's example shows nvdisasm's text as a listing of its kernel does,
    /// branch targets included, but it was disassembled further into its architecture's
    /// request (whose words end before address `past`). The `moved` words are read once
    /// more at other addresses, past those: a text that stays the same does not depend on
    /// the address; the others (branches) are read again at their place in their kernel.
    fn reread_examples(&mut self, nv: &Nvdisasm, moved: Vec<Moved>, past: u64) -> Result<(), RealCodeError> {
        let mut by_arch: std::collections::BTreeMap<Arch, Vec<Moved>> = std::collections::BTreeMap::new();
        for m in moved {
            by_arch.entry(m.arch).or_default().push(m);
        }
        let mut placed = vec![];
        for (arch, of_arch) in by_arch {
            let words: Vec<Word> = of_arch.iter().map(|m| m.word).collect();
            let outs = nv.disassemble_at(&arch.nvdisasm_name(), past, &words)?;
            for (m, o) in of_arch.into_iter().zip(outs) {
                let same = matches!(o, Outcome::Printed { text } if text == self.rep.uncovered_examples[m.example].nvdisasm);
                if !same {
                    placed.push(m);
                }
            }
        }
        self.read_in_place(nv, placed)
    }

    /// Reads each `moved` word at its place in its kernel, among NOPs; a place holds one
    /// word a run, so words at the same place go in rounds.
    fn read_in_place(&mut self, nv: &Nvdisasm, mut left: Vec<Moved>) -> Result<(), RealCodeError> {
        while let Some(arch) = left.first().map(|m| m.arch) {
            let (mut round, mut rest): (Vec<Moved>, Vec<Moved>) = (vec![], vec![]);
            for m in left {
                let taken = round.iter().any(|r| r.index == m.index);
                if m.arch == arch && !taken {
                    round.push(m)
                } else {
                    rest.push(m)
                }
            }
            let name = arch.nvdisasm_name();
            let mut words = vec![crate::oracle::nvdisasm::nop(&name); round.iter().map(|m| m.index + 1).max().unwrap_or(0)];
            for m in &round {
                words[m.index] = m.word;
            }
            let outs = nv.disassemble(&name, &words)?;
            for m in round {
                if let Some(Outcome::Printed { text }) = outs.get(m.index) {
                    self.rep.uncovered_examples[m.example].nvdisasm = text.clone();
                }
            }
            left = rest;
        }
        Ok(())
    }

    /// Checks compiled word `w` of `kernel` at `addr`, which nvdisasm printed as `o`, if the
    /// spec covers it.
    fn word(&mut self, kernel: &str, arch: Arch, w: Word, o: Outcome, addr: u64) -> Result<(), RealCodeError> {
        let codec = self.codec;
        let Ok((vi, vals)) = codec.decode(arch, w) else {
            let (mnemonic, text) = match &o {
                Outcome::Printed { text } => (sass::parse_instruction(text).map(|i| i.mnemonic).unwrap_or_else(|_| "(unreadable)".into()), text.clone()),
                _ => ("(not printed)".to_string(), String::new()),
            };
            let seen = self.rep.uncovered.entry(arch.to_string()).or_default().entry(mnemonic).or_default();
            *seen += 1;
            if *seen <= UNCOVERED_EXAMPLES {
                let note = format!("{arch}: no variant decodes it");
                self.rep.uncovered_examples.push(Example { kernel: kernel.to_string(), word: w.hex(), ours: String::new(), nvdisasm: text, note });
            }
            return Ok(());
        };
        let v = codec.variant(vi);
        let rep = &mut self.rep;
        rep.covered += 1;
        *rep.by_variant.entry(v.key.clone()).or_default() += 1;
        let printed = codec::print_with(v, &vals, conventions_of(&self.conv, v).map(|c| (c, w)));
        let ours = printed.to_string();
        let example = |nvdisasm: String, note: String| Example { kernel: kernel.to_string(), word: w.hex(), ours: ours.clone(), nvdisasm, note };
        let Outcome::Printed { text: theirs } = o else {
            rep.disagreeing.push(example(format!("{o:?}"), "not printed".into()));
            return Ok(());
        };
        // Branch targets compare as at address 0 (how the codec prints them).
        let theirs = crate::codec::conventions::target_at_zero(&theirs, &v.target_operands(), v.operands.len(), addr);
        let parsed = sass::parse_instruction(&theirs).map_err(|source| RealCodeError::Text { text: theirs.clone(), source })?;
        if compare(&printed, &parsed) == Verdict::Differ {
            rep.disagreeing.push(example(theirs, String::new()));
            return Ok(());
        }
        rep.agreeing += 1;
        let page_only = codec::print(v, &vals).to_string() == theirs;
        let by = rep.identical_by_arch.entry(arch.to_string()).or_default();
        by.1 += usize::from(page_only);
        by.0 += usize::from(ours == theirs);
        if ours == theirs {
            rep.identical += 1;
        } else {
            rep.not_identical.push(example(theirs.clone(), "spelling".into()));
        }
        // nvdisasm's alias modifiers (`IMAD.MOV`) are a printing convention: the page reads
        // the text without them.
        let parsed = conventions_of(&self.conv, v).map(|c| c.unalias(&parsed)).unwrap_or(parsed);
        let failure = Example { kernel: kernel.to_string(), word: w.hex(), ours, nvdisasm: theirs, note: String::new() };
        if let Some(note) = self.reassemble(arch, w, &parsed, &failure) {
            self.rep.asm_mismatch += 1;
            self.rep.asm_failures.push(Example { note, ..failure });
        }
        Ok(())
    }

    /// Assembles nvdisasm's text `parsed` of word `w` and counts the result; what went
    /// wrong when it does not give `w` back (up to ignored bits). `failure`: the example
    /// a mismatch makes (nvdisasm's text in it, branch targets as at address 0). A word
    /// whose differing bits the page does not mark ignored waits for nvdisasm ([`Alike`]).
    fn reassemble(&mut self, arch: Arch, w: Word, parsed: &sass::Instruction, failure: &Example) -> Option<String> {
        let rep = &mut self.rep;
        match asm::assemble_inst(self.codec, arch, parsed, w) {
            Ok((_, w2)) if w2 == w => {
                rep.asm_exact += 1;
                None
            }
            Ok((vj, w2)) => {
                let diff = BitSet(w.0 ^ w2.0);
                // The page marks every differing bit as one nvdisasm ignores; else
                // nvdisasm is asked whether it prints the word alike.
                if diff.minus(self.codec.variant(vj).ignored).is_empty() {
                    rep.asm_up_to_ignored += 1;
                    rep.ignored_bits = rep.ignored_bits.union(diff);
                } else {
                    let note = format!("assembles to {w2} (bits {diff:?} differ)");
                    let failure = Example { note, ..failure.clone() };
                    self.alike.push(Alike { arch, word: w2, vi: vj, diff, failure });
                }
                None
            }
            Err(asm::AsmError::Ambiguous { words, .. }) if words.contains(&w) => {
                rep.asm_ambiguous += 1;
                rep.asm_ambiguous_first += usize::from(words[0] == w);
                None
            }
            Err(e) => Some(e.to_string()),
        }
    }
}
