//! Differential validation of pages against nvdisasm.
//!
//! Per page (one architecture): build probe words for every variant (table rows, field bit
//! walks and boundaries, flags, fixed-bit flips, seeded random combinations), disassemble
//! them in batches, compare structurally with what the page predicts, attribute each
//! disagreement to a field and bits, minimize random ones, merge duplicates, and hand the
//! findings to the caller as soon as a page is done.

pub mod correct;
pub mod finding;
mod first;
mod judge;
mod kept;
mod limits;
mod minimize;
mod random;
pub mod reproduce;
pub mod resume;
pub mod stored;

use crate::codec::conventions::{self as conv_rules, Conventions, FormConventions};
use crate::codec::{self, Codec, Values};
use crate::compare::{changed, compare, compare_changed, element_value, Element, Verdict};
use crate::gen::Rng;
use crate::oracle::nvdisasm::{Nvdisasm, NvdisasmError, Outcome};
use crate::sass::{self, Instruction};
use crate::spec::{FieldKind, FlagRole, Page, RowKind, Variant};
use crate::word::{format_ranges, Word};
pub use finding::{outcome_text, BitStatus, Class, Correction, Edit, Finding, Severity, VariantSummary};
use judge::*;
use kept::*;
use limits::*;
pub use limits::{check_budget, peak_bytes, BYTES_PER_PROBE, KEEP_RANDOM, RANDOM_SLICE};
use minimize::*;
use random::{add_random, RandomStream, RandomWords};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct Options {
    pub random_per_variant: usize,
    pub seed: u64,
    pub minimize_rounds: usize,
    /// Print each phase's elapsed time to stderr (the benchmark's breakdown).
    pub timings: bool,
    /// Page files an earlier run finished (`--resume`): not validated again.
    pub skip_pages: std::collections::HashSet<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { random_per_variant: 10_000, seed: 0x5eed, minimize_rounds: 8, timings: false, skip_pages: Default::default() }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Base,
    /// Field `field` set to `value` from the base (bit walks, boundaries, table rows, flags).
    Field {
        field: usize,
        value: u64,
    },
    /// Fixed bit flipped.
    Fixed {
        bit: u8,
    },
    /// Two modifier-group fields set together (both non-zero): do they combine as the
    /// page says, or does one change what the other prints?
    Pair {
        a: usize,
        b: usize,
    },
    Random,
}

/// A word to send. Its field values are not stored (a `Values` is 320 bytes, and runs
/// hold hundreds of thousands of probes): the codec extracts them from the word again.
struct Probe {
    vi: usize,
    word: Word,
    kind: Kind,
}

/// Branch targets in `outs` (word `i` at address `base + 16 i`, of variant `vis[i]`)
/// rewritten as at address 0 (how the codec prints them), unless the text's target is
/// absolute (a flip that turns `RET.REL` into `RET.ABS`).
fn targets_at_zero(codec: &Codec, base: u64, outs: &mut [Outcome], vis: &[usize]) {
    for (i, (o, &vi)) in outs.iter_mut().zip(vis).enumerate() {
        target_at_zero(codec, base.wrapping_add(16 * i as u64), o, vi);
    }
}

/// [`targets_at_zero`] for one outcome, of a word of variant `vi` at address `addr`.
fn target_at_zero(codec: &Codec, addr: u64, o: &mut Outcome, vi: usize) {
    let v = codec.variant(vi);
    let targets = v.target_operands();
    if let (Outcome::Printed { text }, false) = (o, targets.is_empty()) {
        if !conv_rules::target_is_absolute(text) {
            *text = conv_rules::target_at_zero(text, &targets, v.operands.len(), addr);
        }
    }
}

/// The oracle returns one outcome per word (or an error); should it not, the probe says so.
fn missing_outcome() -> Outcome {
    Outcome::Illegal { message: "internal: no outcome for the probe".into() }
}

fn printed(o: &Outcome) -> Option<Instruction> {
    match o {
        Outcome::Printed { text } => sass::parse_instruction(text).ok(),
        _ => None,
    }
}

/// Validates one page (see [`validate_pages`]).
pub fn validate_page(page: &Page, codec: &Codec, nv: &Nvdisasm, opts: &Options) -> Result<(Vec<VariantSummary>, Vec<Finding>), NvdisasmError> {
    let mut out = (vec![], vec![]);
    validate_group(&[page], codec, nv, opts, false, |_, s, f| out = (s, f))?;
    Ok(out)
}

/// Per page state between judging and reporting.
struct PageRun<'p> {
    page: &'p Page,
    vis: Vec<usize>,
    probes: Vec<Probe>,
    /// Structured probes of each variant (as in `vis`): the random words go after them.
    structured: Vec<usize>,
    /// Per variant of the page (as in `vis`): words, agreeing, bits confirmed / disputed.
    tallies: Vec<Tally>,
    raw: Vec<Finding>,
    /// What nvdisasm printed for each variant's base word, parsed once.
    base_actual: BTreeMap<usize, Option<Instruction>>,
    /// Syntax findings of streamed random words (past [`KEEP_RANDOM`]): per variant and
    /// difference, the first word's finding with every such word's occurrence.
    streamed_syntax: Vec<(usize, &'static str, Finding)>,
    /// By probe index (none past the last one set), for the kept random words whose text
    /// differed from the predicted one: the verdict of comparing the two (triage reads
    /// it, see `correct::Observed`). A vector: one slot per probe, set once per word.
    compared: Vec<Option<Verdict>>,
}

/// A variant's words, agreeing words, and the bits probes confirmed and findings dispute.
#[derive(Clone, Copy, Default)]
struct Tally {
    words: usize,
    agreeing: usize,
    verified: u128,
    disputed: u128,
}

impl Tally {
    /// Marks bits a finding names as disputed.
    fn dispute(&mut self, bits: &[u8]) {
        for &b in bits {
            self.disputed |= 1u128 << b;
        }
    }
}

impl PageRun<'_> {
    /// Codec variant `vi`'s tally (one of the page's variants).
    fn tally(&mut self, vi: usize) -> &mut Tally {
        let i = self.vis.iter().position(|&x| x == vi).expect("a variant of the page");
        &mut self.tallies[i]
    }

    /// The variant's tallies: words, agreeing, findings by class, and each bit's status.
    fn summary(&self, v: &Variant, vi: usize, findings: &[Finding]) -> VariantSummary {
        let t = self.vis.iter().position(|&x| x == vi).map(|i| self.tallies[i]).unwrap_or_default();
        let (words, agreeing) = (t.words, t.agreeing);
        let mut by_class = BTreeMap::new();
        for f in findings.iter().filter(|f| f.variant == v.key) {
            *by_class.entry(f.class.name().to_string()).or_insert(0) += 1;
        }
        let (ver, dis) = (t.verified, t.disputed);
        let bit_status = (0..128u32)
            .map(|b| match (dis >> b & 1, ver >> b & 1) {
                (1, _) => BitStatus::Disputed,
                (_, 1) => BitStatus::Verified,
                _ => BitStatus::Unconfirmed,
            })
            .collect();
        VariantSummary { arch: v.arch, variant: v.key.clone(), page: self.page.file.clone(), words, agreeing, findings: by_class, bit_status }
    }
}

/// The probes of a group of pages (one architecture), page by page in probe order.
fn build_runs<'p>(pages: &[&'p Page], codec: &Codec, conv: &Conventions, opts: &Options) -> Vec<PageRun<'p>> {
    let mut runs = structured_runs(pages, codec);
    let mut outs: Vec<Vec<Outcome>> = runs.iter().map(|r| vec![Outcome::Silent; r.probes.len()]).collect();
    add_random(&mut runs, &mut outs, codec, conv, opts);
    runs
}

/// The structured probes of a group of pages, page by page: they need no conventions, so
/// they go to nvdisasm with the learning words ([`first_batch`]); the kept random words
/// follow once the conventions are known ([`add_random`]).
fn structured_runs<'p>(pages: &[&'p Page], codec: &Codec) -> Vec<PageRun<'p>> {
    let index = variant_index(codec);
    pages
        .iter()
        .map(|&page| {
            let vis: Vec<usize> = page.variants.iter().map(|v| index[&(v.arch, v.key.as_str())]).collect();
            let per: Vec<Vec<Probe>> = vis.iter().map(|&vi| structured_probes(codec, vi)).collect();
            let structured = per.iter().map(Vec::len).collect();
            let tallies = vec![Tally::default(); vis.len()];
            PageRun {
                page,
                vis,
                probes: per.into_iter().flatten().collect(),
                structured,
                tallies,
                raw: vec![],
                base_actual: BTreeMap::new(),
                streamed_syntax: vec![],
                compared: vec![],
            }
        })
        .collect()
}

/// Codec indices by architecture and key, built once ([`Codec::index_of`] scans every
/// variant, which made a slice's set-up quadratic in the pages).
fn variant_index<'c>(codec: &Codec<'c>) -> std::collections::HashMap<(crate::spec::Arch, &'c str), usize> {
    codec.variants().iter().enumerate().map(|(i, v)| ((v.arch, v.key.as_str()), i)).collect()
}

/// nvdisasm alone on `batches` (from [`probe_words`]): architectures at once, in each
/// the random batch, then the structured one (which validation sends with its learning
/// words, before the random one): the benchmark's baseline. Returns the number of words
/// disassembled. The random batch goes in `nv.jobs` runs; validation, with as many
/// architectures at once as cores, sends it in two, one after the other, the second
/// carrying the minimization's first round (see `Group::random_batch`).
pub fn disassemble_only(nv: &Nvdisasm, batches: &[(String, Vec<Word>, Vec<Word>)]) -> Result<usize, NvdisasmError> {
    std::thread::scope(|s| {
        let hs: Vec<_> = batches
            .iter()
            .map(|(arch, structured, random)| s.spawn(move || Ok(nv.disassemble(arch, random)?.len() + nv.disassemble(arch, structured)?.len())))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or(Ok(0))).sum()
    })
}

/// The probe words [`validate_pages`] disassembles, per architecture: (arch, structured,
/// random). What the benchmark times nvdisasm alone on.
pub fn probe_words(spec: &crate::spec::Spec, codec: &Codec, conv: &Conventions, opts: &Options) -> Vec<(String, Vec<Word>, Vec<Word>)> {
    arch_groups(spec)
        .into_iter()
        .map(|pages| {
            let runs = build_runs(&pages, codec, conv, opts);
            let (mut structured, mut random) = (vec![], vec![]);
            for p in runs.iter().flat_map(|r| &r.probes) {
                if p.kind == Kind::Random {
                    random.push(p.word)
                } else {
                    structured.push(p.word)
                }
            }
            // The streamed ones after the kept ones, as the validator sends them.
            let mut stream = RandomStream::new(&runs, codec, conv, opts);
            random.extend(std::iter::from_fn(|| Some(stream.slice(codec, RANDOM_SLICE)).filter(|s| !s.is_empty())).flatten().map(|(_, p)| p.word));
            (pages[0].arch.nvdisasm_name(), structured, random)
        })
        .collect()
}

/// Pages grouped by architecture, in first-appearance order.
fn arch_groups(spec: &crate::spec::Spec) -> Vec<Vec<&Page>> {
    let mut groups: Vec<Vec<&Page>> = vec![];
    for p in &spec.pages {
        match groups.iter_mut().find(|g| g[0].arch == p.arch) {
            Some(g) => g.push(p),
            None => groups.push(vec![p]),
        }
    }
    groups
}

/// Validates pages of one architecture together, so each nvdisasm batch is as large as
/// it can be; `done` gets each page's summaries and findings when its minimization is over.
///
/// A process start costs nvdisasm about 0.25 s of CPU (as much as some 20 000 words), and
/// one illegal word makes it print nothing, so that its batch runs again with NOPs in
/// the illegal words' places. Hence three steps, each waiting on the one before: first
/// the learning words with the structured probes (neither needs conventions; the
/// learning words' opex sweep has illegal words, as have fixed-bit flips, group pairs
/// and INVALID rows, so they share the two runs); then the random probes (their control
/// bits come from the conventions; nearly always legal: one run), which ride with the
/// second of those runs (the first run's illegal words tell the legal control values,
/// see [`first::first_batch`]), judged, while the stored conventions are checked on the
/// learning words' outcomes; then the minimization of the random disagreements, while
/// the structured probes are judged; last, triage on `nv.jobs` threads. `shared`: each
/// core runs a group already; the minimization's first batch then rides with a second
/// run of random words (see [`Group::random_batch`]).
fn validate_group(
    pages: &[&Page],
    codec: &Codec,
    nv: &Nvdisasm,
    opts: &Options,
    shared: bool,
    mut done: impl FnMut(&Page, Vec<VariantSummary>, Vec<Finding>),
) -> Result<(), NvdisasmError> {
    let Some(first) = pages.first() else { return Ok(()) };
    // Phases count from the group's start (the benchmark's breakdown).
    let clock = Clock { arch: first.arch.nvdisasm_name(), started: std::time::Instant::now(), on: opts.timings };
    let index = variant_index(codec);
    let vis: Vec<usize> = pages.iter().flat_map(|p| &p.variants).filter_map(|v| index.get(&(v.arch, v.key.as_str())).copied()).collect();
    let mut st = GroupState::new(structured_runs(pages, codec));
    clock.phase(&format!("{} structured probes built", st.runs.iter().map(|r| r.probes.len()).sum::<usize>()));
    // Each core runs a group already: this group's batches go in as few processes as
    // hold them, one core each, and the random words in two of them (see
    // `Group::random_batch`).
    let fewest = Nvdisasm { min_chunk: crate::oracle::nvdisasm::MAX_CHUNK, ..nv.clone() };
    let send = if shared { &fewest } else { nv };
    let first::Learned { conv, shown, seen, random } = first::first_batch(codec, send, &clock.arch, &vis, &mut st, opts, shared)?;
    let with = match &random {
        Some(r) if r.outs.iter().any(Option::is_none) => " and most kept random",
        Some(_) => " and kept random",
        None => "",
    };
    clock.phase(&format!("conventions of {} forms learned; structured{with} probes disassembled", conv.len()));
    let cx = Group {
        codec,
        nv,
        send,
        shared,
        opts,
        clock,
        // Each variant's learned conventions, looked up once (not once per probe).
        learned: codec.variants().iter().map(|v| conv.get(v.arch, &v.key)).collect(),
        fixed: FixedIndex::new(codec),
        // Predictions with the learned conventions, each form's plan built once.
        printer: codec::Printer::with(codec, codec.variants().iter().map(|v| conv.get(v.arch, &v.key)).collect()),
    };
    // Minimization outcomes sent ahead, by (variant, word).
    let mut known = Known::new();
    let (stored, cands) = std::thread::scope(|s| {
        let stored = s.spawn(|| stored::check(send, codec, &conv, &shown, &seen));
        let cands = cx.random_batch(&mut st, &conv, random, &mut known);
        (stored.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), cands)
    });
    let (stored, cands) = (stored?, cands?);
    let mut shrink = Minimizer { cx: &cx, cands, rounds: opts.minimize_rounds, round: 0, singles: true };
    // While the minimization waits on nvdisasm: the structured probes judged, then triage
    // of the variants their findings already warn about (see `Group::finish`).
    let early = std::thread::scope(|s| {
        let judged = s.spawn(|| {
            cx.judge_all(&mut st);
            cx.prepare_warned(&st)
        });
        let minimized = cx.minimize(&mut shrink, known);
        let early = judged.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        minimized.map(|()| early)
    })?;
    cx.clock.phase("structured probes judged; minimized");
    cx.add_minimized(&mut st, shrink.cands);
    cx.finish(st, &stored, early, &mut done);
    cx.clock.phase("merged and reported");
    Ok(())
}

/// The phases' clock: each phase's elapsed time printed to stderr when `on`.
struct Clock {
    arch: String,
    started: std::time::Instant,
    on: bool,
}

impl Clock {
    fn phase(&self, what: &str) {
        if self.on {
            eprintln!("  {:>6} {:>7.3} s  {what}", self.arch, self.started.elapsed().as_secs_f64());
        }
    }
}

/// What a group's validation reads: the tools, the options and what was learned.
struct Group<'a> {
    codec: &'a Codec<'a>,
    /// The tool as configured: its version, and `jobs`, the threads judging takes.
    nv: &'a Nvdisasm,
    /// The tool the group's runs go to: `nv`, or `nv` in as few processes as hold a
    /// batch (`shared`).
    send: &'a Nvdisasm,
    /// Every core runs a group already (see [`validate_pages`]): the kept random words go
    /// in two runs, one after the other, the second carrying the minimization's first
    /// round (see [`Group::random_batch`]).
    shared: bool,
    opts: &'a Options,
    clock: Clock,
    learned: Vec<Option<&'a FormConventions>>,
    fixed: FixedIndex,
    printer: codec::Printer<'a, 'a>,
}

/// Which variants' fixed bits a word matches, by architecture and fixed-bit mask: what
/// [`Codec::find`] answers without scanning every variant for each word (judging a
/// fixed-bit flip asks it, so the scan made judging quadratic in the pages).
struct FixedIndex {
    by_mask: Vec<(crate::spec::Arch, u128, std::collections::HashMap<u128, usize>)>,
}

impl FixedIndex {
    fn new(codec: &Codec) -> Self {
        let mut by: BTreeMap<(crate::spec::Arch, u128), std::collections::HashMap<u128, usize>> = BTreeMap::new();
        for v in codec.variants() {
            *by.entry((v.arch, v.fixed_mask.0)).or_default().entry(v.fixed_value.0).or_default() += 1;
        }
        FixedIndex { by_mask: by.into_iter().map(|((a, m), values)| (a, m, values)).collect() }
    }

    /// Does [`Codec::find`] give `word` to one variant of `arch`: exactly one matches, or
    /// one whose fixed bits include every other match's and more (the most specific)?
    fn unique(&self, arch: crate::spec::Arch, word: Word) -> bool {
        let mut matched: Vec<(u128, usize)> = vec![];
        for (_, m, values) in self.by_mask.iter().filter(|(a, ..)| *a == arch) {
            if let Some(&n) = values.get(&(word.0 & m)) {
                matched.push((*m, n));
            }
        }
        let covers = |a: u128, b: u128| a & b == b && a != b;
        match matched.as_slice() {
            [(_, 1)] => true,
            all => all.iter().any(|&(m, n)| n == 1 && all.iter().all(|&(o, _)| o == m || covers(m, o))),
        }
    }

    /// Does a variant of `arch` whose fixed bits include all of `mask` and more match
    /// `word`? [`Codec::find`] then gives the word to that variant.
    fn more_specific(&self, arch: crate::spec::Arch, word: Word, mask: u128) -> bool {
        self.by_mask.iter().any(|(a, m, values)| *a == arch && m & mask == mask && *m != mask && values.contains_key(&(word.0 & m)))
    }
}

/// What it writes: per page the probes, their outcomes, and the verdicts of the random
/// probes (judged in batch one) by probe index (`None` for the others).
struct GroupState<'p> {
    runs: Vec<PageRun<'p>>,
    outs: Vec<Vec<Outcome>>,
    verdicts: Vec<Vec<Option<Judged>>>,
}

impl<'p> GroupState<'p> {
    fn new(runs: Vec<PageRun<'p>>) -> Self {
        let outs = runs.iter().map(|r| vec![Outcome::Silent; r.probes.len()]).collect();
        let verdicts = runs.iter().map(|_| vec![]).collect();
        GroupState { runs, outs, verdicts }
    }
}

impl<'a> Group<'a> {
    fn phase(&self, what: &str) {
        self.clock.phase(what)
    }

    fn analysis(&self, vi: usize) -> Analysis<'_> {
        Analysis { nv_tool: &self.nv.version, v: self.codec.variant(vi), vi, printer: &self.printer, fixed: &self.fixed, codec: self.codec }
    }

    /// What the page predicts for `word` of variant `vi` (values read off the word).
    fn predict(&self, vi: usize, vals: &Values, word: Word) -> Instruction {
        self.printer.print_word(vi, vals, word)
    }

    /// nvdisasm's outcomes for `words`, word `i` at address `base + 16 i` and of variant
    /// `vis[i]`, with branch targets rewritten as at address 0 (how the codec prints them),
    /// unless the text's target is absolute (a flip that turns `RET.REL` into `RET.ABS`).
    fn disassemble(&self, base: u64, words: &[Word], vis: &[usize]) -> Result<Vec<Outcome>, NvdisasmError> {
        let mut outs = self.send.disassemble_at(&self.clock.arch, base, words)?;
        targets_at_zero(self.codec, base, &mut outs, vis);
        Ok(outs)
    }

    /// Every probe in probe order, so findings keep their order whatever the batches.
    fn judge_all(&self, st: &mut GroupState) {
        for (ri, run) in st.runs.iter_mut().enumerate() {
            let mut syntax_seen: BTreeMap<(usize, &'static str), usize> = BTreeMap::new();
            let mut ignored_seen: BTreeMap<usize, usize> = BTreeMap::new();
            let mut streamed = std::mem::take(&mut run.streamed_syntax);
            for (pi, p) in run.probes.iter().enumerate() {
                // A variant's streamed words came after its kept ones: their syntax
                // findings join here, as each word's would have.
                if pi > 0 && run.probes[pi - 1].vi != p.vi {
                    add_streamed(&mut run.raw, &mut syntax_seen, &mut streamed, run.probes[pi - 1].vi);
                }
                let o = &st.outs[ri][pi];
                // Extracted only where needed: most probes were judged in batch one.
                let values = || self.codec.extract(p.vi, p.word);
                let a = self.analysis(p.vi);
                let j = match st.verdicts[ri].get_mut(pi).and_then(Option::take) {
                    Some(j) => j,
                    None => a.judge(p, &values(), o, run.base_actual.get(&p.vi).and_then(Option::as_ref)),
                };
                let t = &mut run.tallies[run.vis.iter().position(|&x| x == p.vi).expect("a variant of the page")];
                t.words += 1;
                match j {
                    Judged::Agree(bits) => {
                        t.agreeing += 1;
                        t.verified |= bits;
                    }
                    Judged::Found(f) => {
                        let f = *f;
                        t.dispute(&f.bits);
                        // One fixed_ignored note per variant, listing its bits (a note per
                        // bit made most of a big run's findings); its word is the first
                        // bit's flip, each other bit's flip showed the same.
                        if f.class == Class::FixedIgnored {
                            if let Some(&i) = ignored_seen.get(&p.vi) {
                                run.raw[i].add_occurrence(f.bits);
                                continue;
                            }
                            ignored_seen.insert(p.vi, run.raw.len());
                        }
                        run.raw.push(f);
                    }
                    Judged::Syntax { what, bits } => {
                        t.dispute(&bits);
                        // One finding per variant and difference, in first-seen order (what
                        // `merge` would make of one finding per word).
                        match syntax_seen.get(&(p.vi, what)) {
                            Some(&i) => run.raw[i].add_occurrence(bits),
                            None => {
                                syntax_seen.insert((p.vi, what), run.raw.len());
                                run.raw.push(a.syntax_finding(&values(), p.word, o, what, bits));
                            }
                        }
                    }
                    // Counted as a candidate in batch one.
                    Judged::Minimize(_) => {}
                }
            }
            if let Some(last) = run.probes.last() {
                add_streamed(&mut run.raw, &mut syntax_seen, &mut streamed, last.vi);
            }
            for (vi, i) in ignored_seen {
                let f = &mut run.raw[i];
                f.proposal = Some(ignored_proposal(self.codec.variant(vi), &f.bits));
            }
        }
    }

    /// The minimization batches: every candidate's fields alone, then wider tries for
    /// those no single field explains (see [`Minimizer`]), until none is left.
    ///
    /// The wider tries of every candidate ride with the singles when they are fewer than
    /// [`AHEAD_UP_TO`] words: cheaper than the process starts of a batch of their own,
    /// which any candidate no single field explains would need.
    /// `known`: outcomes by (variant, word), some sent ahead (nvdisasm's answer does not
    /// depend on the batch); words not in it go in one run per round.
    fn minimize(&self, shrink: &mut Minimizer, mut known: Known) -> Result<(), NvdisasmError> {
        let mut tries = shrink.first_tries();
        let mut ahead = shrink.ahead();
        while !tries.is_empty() {
            let all: Vec<Try> = tries.iter().cloned().chain(std::mem::take(&mut ahead)).collect();
            let (words, vis) = (shrink.words(&all), shrink.vis(&all));
            let unknown: Vec<(Word, usize)> = words.iter().copied().zip(vis).filter(|k| !known.contains_key(&(k.1, k.0))).collect();
            let (uw, uv): (Vec<Word>, Vec<usize>) = unknown.iter().copied().unzip();
            let outs = self.disassemble(0, &uw, &uv)?;
            known.extend(unknown.into_iter().map(|(w, vi)| (vi, w)).zip(outs));
            let outs = words.iter().zip(shrink.vis(&tries)).map(|(&w, vi)| known.get(&(vi, w)).cloned().unwrap_or_else(missing_outcome)).collect();
            tries = shrink.absorb(&tries, outs);
        }
        Ok(())
    }

    fn add_minimized(&self, st: &mut GroupState, cands: Vec<Candidate>) {
        for c in cands {
            let run = &mut st.runs[c.run];
            let w = self.codec.encode_unchecked(c.vi, &c.values);
            let base = run.base_actual.get(&c.vi).and_then(Option::as_ref);
            if let Some(mut f) = self.analysis(c.vi).random_finding(&c.values, w, &c.outcome, base) {
                f.occurrences = c.count;
                run.tally(c.vi).dispute(&f.bits);
                run.raw.push(f);
            }
        }
    }

    /// Triage's verified edits of the variants of `run` that `wanted` names (as in
    /// `run.vis`; the others get none), worked out on `nv.jobs` threads, each taking the
    /// next variant left: each is judged on all its probe words (variants differ a lot in
    /// cost), and this is the group's last step, so a core would idle.
    fn prepare_triage(&self, run: &PageRun, outs: &[Outcome], wanted: &[bool]) -> Vec<Option<correct::Prepared>> {
        let prepare = |vi: usize| {
            let obs: Vec<correct::Observed> = (run.probes.iter().zip(outs).enumerate())
                .filter(|(_, (p, _))| p.vi == vi)
                .map(|(pi, (p, o))| correct::Observed { word: p.word, outcome: o, compared: run.compared.get(pi).copied().flatten() })
                .collect();
            correct::prepare(run.page, self.codec.variant(vi), &obs, self.learned[vi])
        };
        let todo: Vec<usize> = (0..run.vis.len()).filter(|&k| wanted[k]).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let done: Vec<(usize, correct::Prepared)> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..self.nv.jobs.clamp(1, todo.len().max(1)))
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = vec![];
                        while let Some(&k) = todo.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                            mine.push((k, prepare(run.vis[k])));
                        }
                        mine
                    })
                })
                .collect();
            workers.into_iter().flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        });
        let mut out: Vec<Option<correct::Prepared>> = run.vis.iter().map(|_| None).collect();
        for (k, p) in done {
            out[k] = Some(p);
        }
        out
    }

    /// Per page run, triage prepared for each variant its findings so far warn about
    /// (`None` for the others). [`correct::prepare`] reads the probes and outcomes alone,
    /// not the findings, so it gives the same whenever it runs.
    fn prepare_warned(&self, st: &GroupState) -> Vec<Vec<Option<correct::Prepared>>> {
        (st.runs.iter().enumerate())
            .map(|(ri, run)| {
                let findings = merge(run.raw.clone());
                let wanted: Vec<bool> = run.vis.iter().map(|&vi| correct::warned(self.codec.variant(vi), &findings)).collect();
                self.prepare_triage(run, &st.outs[ri], &wanted)
            })
            .collect()
    }

    /// Per page: merged findings, their severities and corrections, and the summaries.
    /// Corrections are worked out only for the variants with a warning (an edit can only
    /// turn a warning into an error); `early` holds those prepared while the minimization
    /// ran ([`Group::prepare_warned`]), the rest are prepared here.
    fn finish(
        &self,
        st: GroupState,
        stored: &BTreeMap<String, Vec<Finding>>,
        mut early: Vec<Vec<Option<correct::Prepared>>>,
        done: &mut impl FnMut(&Page, Vec<VariantSummary>, Vec<Finding>),
    ) {
        for (ri, run) in st.runs.iter().enumerate() {
            let mut findings = merge(run.raw.clone());
            let wanted: Vec<bool> = run.vis.iter().map(|&vi| correct::warned(self.codec.variant(vi), &findings)).collect();
            let mut early = early.get_mut(ri).map(std::mem::take).unwrap_or_default();
            early.resize_with(run.vis.len(), || None);
            let need: Vec<bool> = wanted.iter().zip(&early).map(|(&w, e)| w && e.is_none()).collect();
            let late = self.prepare_triage(run, &st.outs[ri], &need);
            for (k, (&vi, late)) in run.vis.iter().zip(late).enumerate() {
                let prepared = if wanted[k] { early[k].take().or(late) } else { None };
                correct::apply(prepared.as_ref(), self.codec.variant(vi), self.learned[vi], &mut findings);
            }
            findings.extend(stored.get(&run.page.file).cloned().unwrap_or_default());
            let summaries = run.vis.iter().map(|&vi| run.summary(self.codec.variant(vi), vi, &findings)).collect();
            done(run.page, summaries, findings);
        }
    }
}

/// Variant `vi`'s streamed syntax findings into `raw`: an occurrence of one seen
/// already (a kept word showed the same difference), else a finding of its own.
fn add_streamed(raw: &mut Vec<Finding>, seen: &mut BTreeMap<(usize, &'static str), usize>, streamed: &mut Vec<(usize, &'static str, Finding)>, vi: usize) {
    for (_, what, f) in streamed.extract_if(.., |(v, ..)| *v == vi) {
        match seen.get(&(vi, what)) {
            Some(&i) => {
                let g = &mut raw[i];
                g.occurrences += f.occurrences;
                g.bits.extend(f.bits);
                g.bits.sort_unstable();
                g.bits.dedup();
            }
            None => {
                seen.insert((vi, what), raw.len());
                raw.push(f);
            }
        }
    }
}

/// A variant's structured probes: its base word, each field's bit walk, boundaries and
/// table rows, group pairs and fixed-bit flips.
fn structured_probes(codec: &Codec, vi: usize) -> Vec<Probe> {
    let v = codec.variant(vi);
    let base = crate::gen::base_values(v);
    let mut out = vec![];
    let mut push = |values: Values, kind: Kind| {
        let word = codec.encode_unchecked(vi, &values);
        out.push(Probe { vi, word, kind });
    };
    push(base, Kind::Base);
    for (fi, f) in v.fields.iter().enumerate() {
        let max = f.max();
        let mut vals: Vec<u64> = (0..f.width()).map(|k| 1u64 << k).collect();
        vals.extend([max, max.saturating_sub(1)]);
        if let Some(t) = v.field_table(fi) {
            vals.extend(t.rows.iter().map(|r| r.value));
            vals.extend(t.omitted.iter().copied());
        }
        vals.sort_unstable();
        vals.dedup();
        for x in vals.into_iter().filter(|&x| x != 0) {
            let mut vv = base;
            vv.set(fi, x);
            push(vv, Kind::Field { field: fi, value: x });
        }
    }
    for (a, b, x, y) in group_pairs(v) {
        let mut vv = base;
        vv.set(a, x);
        vv.set(b, y);
        push(vv, Kind::Pair { a, b });
    }
    let base_word = codec.encode_unchecked(vi, &base);
    for bit in v.fixed_mask.iter() {
        let word = base_word.flip(bit);
        // Fixed bits are no field's, so the word's values stay the base's.
        out.push(Probe { vi, word, kind: Kind::Fixed { bit } });
    }
    out
}

/// Every pair of modifier-group fields with every pair of non-zero values (tables of up to
/// 256 value pairs): the evidence for groups that are one field in truth.
pub(crate) fn group_pairs(v: &Variant) -> Vec<(usize, usize, u64, u64)> {
    let groups: Vec<usize> = (0..v.fields.len()).filter(|&i| matches!(v.fields[i].kind, FieldKind::Group { .. })).collect();
    let mut out = vec![];
    for (i, &a) in groups.iter().enumerate() {
        for &b in &groups[i + 1..] {
            let (ma, mb) = (v.fields[a].max(), v.fields[b].max());
            if (ma + 1) * (mb + 1) > 256 {
                continue;
            }
            for x in 1..=ma {
                for y in 1..=mb {
                    out.push((a, b, x, y));
                }
            }
        }
    }
    out
}

/// Merges findings that say the same thing: same variant, class, field and proposal.
fn merge(raw: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = vec![];
    for f in raw {
        let key_match =
            |g: &Finding| g.variant == f.variant && g.class == f.class && g.field == f.field && (g.proposal == f.proposal || (f.class == Class::Syntax));
        if let Some(g) = out.iter_mut().find(|g| key_match(g)) {
            g.occurrences += f.occurrences;
            for b in f.bits {
                if !g.bits.contains(&b) {
                    g.bits.push(b);
                }
            }
            g.bits.sort_unstable();
            continue;
        }
        out.push(f);
    }
    out
}

/// Validates every page but `opts.skip_pages`: pages are grouped by architecture and
/// each group cut into slices of about `GROUP_WORDS` probe words (so what is in
/// flight, outcomes and verdicts, stays bounded however many pages there are); a slice is
/// validated as one (see `validate_group`), `SLICES_AT_ONCE` slices at a time.
/// `done` is called on this thread as each page finishes, pages in any order. The first
/// tool fault ends the run (slices not started are not).
pub fn validate_pages(
    spec: &crate::spec::Spec,
    codec: &Codec,
    nv: &Nvdisasm,
    opts: &Options,
    mut done: impl FnMut(&Page, Vec<VariantSummary>, Vec<Finding>),
) -> Result<(), NvdisasmError> {
    let all = all_slices(spec, opts);
    let at_once = SLICES_AT_ONCE.min(all.len());
    // As many slices at once as cores: each slice's runs go one at a time.
    let shared = at_once >= nv.jobs.max(1);
    let (next, failed) = (std::sync::atomic::AtomicUsize::new(0), std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..at_once)
            .map(|_| {
                let (tx, all, next, failed) = (tx.clone(), &all, &next, &failed);
                s.spawn(move || -> Result<(), NvdisasmError> {
                    use std::sync::atomic::Ordering::Relaxed;
                    while let Some(slice) = all.get(next.fetch_add(1, Relaxed)).filter(|_| !failed.load(Relaxed)) {
                        let r = validate_group(slice, codec, nv, opts, shared, |p, sums, finds| {
                            let i = spec.pages.iter().position(|q| std::ptr::eq(q, p));
                            let _ = tx.send((i, sums, finds));
                        });
                        if r.is_err() {
                            failed.store(true, Relaxed);
                            return r;
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        drop(tx);
        for (i, sums, finds) in rx {
            if let Some(p) = i.and_then(|i| spec.pages.get(i)) {
                done(p, sums, finds);
            }
        }
        // The first slice's tool fault, if any, ends the run.
        handles.into_iter().try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::{page, Discovered, Field, FieldKind as DField};
    use crate::spec::{Arch, OperandKind};

    /// A page of one `R,R` form at opcode 0x310; `pair`: bits 75–76 a group listing `01`
    /// and `10` only, else those bits fixed at 1.
    fn page_of(mnemonic: &str, pair: bool) -> Page {
        let f = |kind, bits: Vec<u8>| Field { kind, bits };
        let mut fields = vec![f(DField::Pred, (12..16).collect()), f(DField::Operand(0), (16..24).collect()), f(DField::Operand(1), (32..40).collect())];
        let (zero, distilled, tables) = if pair {
            fields.push(f(DField::Group(1), vec![75, 76]));
            (Word(0x310), format!("@P0 {mnemonic}.F16.F64 R0, R0 ;"), vec![vec![(1, "F16".to_string()), (2, "F32".to_string())]])
        } else {
            (Word(0x310 | 3 << 75), format!("@P0 {mnemonic}.F64 R0, R0 ;"), vec![])
        };
        let d = Discovered {
            arch: Arch(90),
            mnemonic: mnemonic.into(),
            kinds: vec![OperandKind::Reg; 2],
            zero,
            distilled,
            fields,
            tables,
            ..Discovered::empty(Arch(90))
        };
        let text = page::render(mnemonic, None, std::slice::from_ref(&d));
        crate::spec::parse_page(&format!("{mnemonic}.txt"), text.as_bytes()).unwrap()
    }

    /// A word two variants match goes to the one whose fixed bits hold the other's (as
    /// `Codec::find` decides); two alike are ambiguous. The pair's unlisted `11` is then
    /// another form's word.
    #[test]
    fn the_most_specific_match_decodes_and_claims_unlisted_values() {
        let spec = crate::spec::Spec { pages: vec![page_of("F2F", true), page_of("F2G", false)] };
        let codec = Codec::new(&spec);
        let idx = FixedIndex::new(&codec);
        let general = codec.variants().iter().find(|v| v.mnemonic == "F2F").unwrap().fixed_mask.0;
        let (w01, w11) = (Word(0x310 | 1 << 75), Word(0x310 | 3 << 75));
        assert!(idx.unique(Arch(90), w01) && idx.unique(Arch(90), w11));
        assert_eq!(codec.find(Arch(90), w11).map(|vi| codec.variant(vi).mnemonic.clone()).ok().as_deref(), Some("F2G"));
        assert!(idx.more_specific(Arch(90), w11, general) && !idx.more_specific(Arch(90), w01, general));
        let twice = crate::spec::Spec { pages: vec![page_of("F2F", true), page_of("F2H", true)] };
        let codec = Codec::new(&twice);
        assert!(!FixedIndex::new(&codec).unique(Arch(90), w01));
    }
}
