//! Differential validation of pages against nvdisasm.
//!
//! Per page (one architecture): build probe words for every variant (table rows, field bit
//! walks and boundaries, flags, fixed-bit flips, seeded random combinations), disassemble
//! them in batches, compare structurally with what the page predicts, attribute each
//! disagreement to a field and bits, minimize random ones, merge duplicates, and hand the
//! findings to the caller as soon as a page is done.

pub mod correct;
pub mod finding;
pub mod reproduce;
pub mod resume;
pub mod stored;

use crate::codec::conventions::{self as conv_rules, Conventions, FormConventions};
use crate::codec::{self, Codec, Values};
use crate::compare::{changed, compare, element_value, Verdict};
use crate::gen::{random_listed_values, Rng};
use crate::oracle::nvdisasm::{Nvdisasm, NvdisasmError, Outcome};
use crate::sass::{self, Instruction};
use crate::spec::{FieldKind, FlagRole, Page, RowKind, Variant};
use crate::word::{format_ranges, Word};
pub use finding::{outcome_text, BitStatus, Class, Correction, Edit, Finding, Severity, VariantSummary};
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
    validate_group(&[page], codec, nv, opts, |_, s, f| out = (s, f))?;
    Ok(out)
}

/// Per page state between judging and reporting.
struct PageRun<'p> {
    page: &'p Page,
    vis: Vec<usize>,
    probes: Vec<Probe>,
    /// Per variant of the page (as in `vis`): words, agreeing, bits confirmed / disputed.
    tallies: Vec<Tally>,
    raw: Vec<Finding>,
    /// What nvdisasm printed for each variant's base word, parsed once.
    base_actual: BTreeMap<usize, Option<Instruction>>,
    /// Syntax findings of streamed random words (past [`KEEP_RANDOM`]): per variant and
    /// difference, the first word's finding with every such word's occurrence.
    streamed_syntax: Vec<(usize, &'static str, Finding)>,
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
    let index = variant_index(codec);
    pages
        .iter()
        .map(|&page| {
            let vis: Vec<usize> = page.variants.iter().map(|v| index[&(v.arch, v.key.as_str())]).collect();
            let mut rng = Rng::new(opts.seed ^ (page.arch.0 as u64) << 32);
            let mut probes = vec![];
            for &vi in &vis {
                probes.extend(probes_for(codec, vi, conv.get(codec.variant(vi).arch, &codec.variant(vi).key), opts, &mut rng));
            }
            let tallies = vec![Tally::default(); vis.len()];
            PageRun { page, vis, probes, tallies, raw: vec![], base_actual: BTreeMap::new(), streamed_syntax: vec![] }
        })
        .collect()
}

/// Codec indices by architecture and key, built once ([`Codec::index_of`] scans every
/// variant, which made a slice's set-up quadratic in the pages).
fn variant_index<'c>(codec: &Codec<'c>) -> std::collections::HashMap<(crate::spec::Arch, &'c str), usize> {
    codec.variants().iter().enumerate().map(|(i, v)| ((v.arch, v.key.as_str()), i)).collect()
}

/// nvdisasm alone on `batches` (from [`probe_words`]), sent as [`validate_pages`] sends
/// them (architectures at once; in each, the random batch, then the structured one): the
/// benchmark's baseline. Returns the number of words disassembled.
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
/// A process start costs nvdisasm about 0.3 s of CPU (as much as some 20 000 words), and
/// one illegal word makes it print nothing, so that its batch runs again with NOPs in
/// the illegal words' places. Hence: first the random probes (listed values, nearly always
/// legal: one run), judged at once; then the structured probes nvdisasm should accept,
/// with each minimization candidate's fields alone; then those it may reject (where the
/// illegal words gather: rejected control values, INVALID and omitted rows, fixed-bit
/// flips, group pairs) with the next minimization tries. The minimization so rides on
/// runs that happen anyway, and only a candidate that needs four fields or more asks for
/// runs of its own.
fn validate_group(
    pages: &[&Page],
    codec: &Codec,
    nv: &Nvdisasm,
    opts: &Options,
    mut done: impl FnMut(&Page, Vec<VariantSummary>, Vec<Finding>),
) -> Result<(), NvdisasmError> {
    let Some(first) = pages.first() else { return Ok(()) };
    // Phases count from the group's start, learning included (the benchmark's breakdown).
    let started = std::time::Instant::now();
    let index = variant_index(codec);
    let vis: Vec<usize> = pages.iter().flat_map(|p| &p.variants).filter_map(|v| index.get(&(v.arch, v.key.as_str())).copied()).collect();
    let conv = crate::oracle::learn::learn(nv, codec, &vis)?;
    let stored = stored::check(nv, codec, &vis, &conv)?;
    let cx = Group {
        stored,
        codec,
        nv,
        opts,
        arch: first.arch.nvdisasm_name(),
        started,
        // Each variant's learned conventions, looked up once (not once per probe).
        learned: codec.variants().iter().map(|v| conv.get(v.arch, &v.key)).collect(),
        fixed: FixedIndex::new(codec),
    };
    cx.phase(&format!("conventions of {} forms learned and checked", conv.len()));
    let mut st = GroupState::new(pages, codec, &conv, opts);
    cx.phase(&format!("{} probes built", st.runs.iter().map(|r| r.probes.len()).sum::<usize>()));
    let cands = cx.random_batch(&mut st, &conv)?;
    let mut shrink = Minimizer { cx: &cx, cands, rounds: opts.minimize_rounds, round: 0, singles: true };
    let (tries, try_outs) = cx.structured_batch(&mut st, &mut shrink)?;
    cx.judge_all(&mut st);
    cx.phase("structured probes judged");
    cx.minimize(&mut shrink, tries, try_outs)?;
    cx.phase("minimized");
    cx.add_minimized(&mut st, shrink.cands);
    cx.phase("minimization findings built");
    cx.finish(st, &mut done);
    cx.phase("merged and reported");
    Ok(())
}

/// What a group's validation reads: the tools, the options and what was learned.
struct Group<'a> {
    codec: &'a Codec<'a>,
    nv: &'a Nvdisasm,
    opts: &'a Options,
    arch: String,
    started: std::time::Instant,
    learned: Vec<Option<&'a FormConventions>>,
    fixed: FixedIndex,
    /// Findings about the stored conventions, by page file ([`stored::check`]).
    stored: BTreeMap<String, Vec<Finding>>,
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
/// probes (judged in batch one) by probe index.
struct GroupState<'p> {
    runs: Vec<PageRun<'p>>,
    outs: Vec<Vec<Outcome>>,
    verdicts: Vec<BTreeMap<usize, Judged>>,
}

impl<'p> GroupState<'p> {
    fn new(pages: &[&'p Page], codec: &Codec, conv: &Conventions, opts: &Options) -> Self {
        let runs = build_runs(pages, codec, conv, opts);
        let outs = runs.iter().map(|r| vec![Outcome::Silent; r.probes.len()]).collect();
        let verdicts = runs.iter().map(|_| BTreeMap::new()).collect();
        GroupState { runs, outs, verdicts }
    }
}

impl<'a> Group<'a> {
    fn phase(&self, what: &str) {
        if self.opts.timings {
            eprintln!("  {:>6} {:>7.3} s  {what}", self.arch, self.started.elapsed().as_secs_f64());
        }
    }

    fn analysis(&self, vi: usize) -> Analysis<'_> {
        Analysis { nv_tool: &self.nv.version, v: self.codec.variant(vi), learned: self.learned[vi], fixed: &self.fixed }
    }

    /// What the page predicts for `word` of variant `vi` (values read off the word).
    fn predict(&self, vi: usize, vals: &Values, word: Word) -> Instruction {
        codec::print_with(self.codec.variant(vi), vals, self.learned[vi].map(|c| (c, word)))
    }

    /// nvdisasm's outcomes for `words`, word `i` at address `base + 16 i` and of variant
    /// `vis[i]`, with branch targets rewritten as at address 0 (how the codec prints them),
    /// unless the text's target is absolute (a flip that turns `RET.REL` into `RET.ABS`).
    fn disassemble(&self, base: u64, words: &[Word], vis: &[usize]) -> Result<Vec<Outcome>, NvdisasmError> {
        let mut outs = self.nv.disassemble_at(&self.arch, base, words)?;
        for (i, (o, &vi)) in outs.iter_mut().zip(vis).enumerate() {
            let v = self.codec.variant(vi);
            let targets = v.target_operands();
            if let (Outcome::Printed { text }, false) = (o, targets.is_empty()) {
                if conv_rules::target_is_absolute(text) {
                    continue;
                }
                *text = conv_rules::target_at_zero(text, &targets, v.operands.len(), base.wrapping_add(16 * i as u64));
            }
        }
        Ok(outs)
    }

    /// Batch one: the random probes, judged; their disagreements become candidates, one
    /// per (variant, changed elements), in page, variant and disagreement order.
    fn random_batch(&self, st: &mut GroupState, conv: &Conventions) -> Result<Vec<Candidate>, NvdisasmError> {
        let random: Vec<&Probe> = st.runs.iter().flat_map(|r| &r.probes).filter(|p| p.kind == Kind::Random).collect();
        let (words, vis): (Vec<Word>, Vec<usize>) = random.iter().map(|p| (p.word, p.vi)).unzip();
        let mut random_outs = self.disassemble(0, &words, &vis)?.into_iter();
        self.phase(&format!("{} random probes disassembled", random.len()));
        let mut cands = Candidates::default();
        for (ri, run) in st.runs.iter().enumerate() {
            for (pi, p) in run.probes.iter().enumerate().filter(|(_, p)| p.kind == Kind::Random) {
                let o = random_outs.next().unwrap_or_else(missing_outcome);
                let values = self.codec.extract(p.vi, p.word);
                let j = self.analysis(p.vi).judge(p, &values, &o, None);
                if let Judged::Minimize(elems) = &j {
                    cands.add(ri, p.vi, values, elems, &o);
                }
                st.verdicts[ri].insert(pi, j);
                st.outs[ri][pi] = o;
            }
        }
        self.random_stream(st, conv, &mut cands, 16 * random.len() as u64)?;
        let mut cands = cands.all;
        cands.sort_by(|a, b| (a.run, a.vi, &a.want).cmp(&(b.run, b.vi, &b.want)));
        self.phase(&format!("random probes judged; {} disagreements to minimize", cands.len()));
        Ok(cands)
    }

    /// The random words past [`KEEP_RANDOM`] per variant, [`RANDOM_SLICE`] at a time
    /// (at the addresses after the kept ones): each slice made, disassembled and judged,
    /// then dropped; what stays is each variant's tally, the disagreements to minimize
    /// (one candidate per variant and changed elements) and the syntax findings.
    fn random_stream(&self, st: &mut GroupState, conv: &Conventions, cands: &mut Candidates, mut base: u64) -> Result<(), NvdisasmError> {
        let mut stream = RandomStream::new(&st.runs, self.codec, conv, self.opts);
        let mut sent = 0;
        loop {
            let slice = stream.slice(self.codec, RANDOM_SLICE);
            if slice.is_empty() {
                return Ok(());
            }
            let (words, vis): (Vec<Word>, Vec<usize>) = slice.iter().map(|(_, p)| (p.word, p.vi)).unzip();
            let outs = self.disassemble(base, &words, &vis)?;
            base = base.wrapping_add(16 * words.len() as u64);
            for ((ri, p), o) in slice.into_iter().zip(outs.into_iter().chain(std::iter::repeat_with(missing_outcome))) {
                self.judge_streamed(&mut st.runs[ri], ri, p, o, cands);
            }
            sent += words.len();
            self.phase(&format!("{sent} streamed random probes judged"));
        }
    }

    /// One streamed random word's verdict, counted as [`Group::judge_all`] counts a kept one's.
    fn judge_streamed(&self, run: &mut PageRun, ri: usize, p: Probe, o: Outcome, cands: &mut Candidates) {
        let values = self.codec.extract(p.vi, p.word);
        let a = self.analysis(p.vi);
        let t = run.tally(p.vi);
        t.words += 1;
        match a.judge(&p, &values, &o, None) {
            Judged::Agree(bits) => {
                t.agreeing += 1;
                t.verified |= bits;
            }
            Judged::Minimize(elems) => cands.add(ri, p.vi, values, &elems, &o),
            Judged::Syntax { what, bits } => {
                t.dispute(&bits);
                match run.streamed_syntax.iter_mut().find(|(vi, w, _)| *vi == p.vi && *w == what) {
                    Some((.., f)) => f.add_occurrence(bits),
                    None => run.streamed_syntax.push((p.vi, what, a.syntax_finding(&values, p.word, &o, what, bits))),
                }
            }
            // Random words are never judged a finding of their own: they are minimized.
            Judged::Found(f) => run.raw.push(*f),
        }
    }

    /// Batch two: the structured probes, with the first minimization batch or two riding
    /// along; returns the minimization tries still to absorb and their outcomes. Records
    /// each variant's zero word as nvdisasm printed it.
    ///
    /// From [`APART_FROM`] words on, probes nvdisasm may reject are sent apart (after the
    /// others, at the addresses they would have in one batch): an nvdisasm run with one
    /// illegal word in it runs twice (the first run only names the illegal words), so the
    /// words that are nearly always legal (field values, table rows, the tries) go to runs
    /// that run once. About a third of a big run's nvdisasm time was such first runs. The
    /// singles ride with the legal words, the next tries (see [`Minimizer`]) with the
    /// others. Fewer words go in one batch, as the singles alone do.
    fn structured_batch(&self, st: &mut GroupState, shrink: &mut Minimizer) -> Result<(Vec<Try>, Vec<Outcome>), NvdisasmError> {
        let (mut legal, mut doubtful) = (vec![], vec![]);
        for (ri, run) in st.runs.iter().enumerate() {
            for (pi, p) in run.probes.iter().enumerate().filter(|(_, p)| p.kind != Kind::Random) {
                if self.may_be_rejected(p) { &mut doubtful } else { &mut legal }.push((ri, pi));
            }
        }
        let word = |&(ri, pi): &(usize, usize)| st.runs[ri].probes[pi].word;
        let vi = |&(ri, pi): &(usize, usize)| st.runs[ri].probes[pi].vi;
        let singles = shrink.first_tries();
        let words: Vec<Word> = legal.iter().map(word).chain(shrink.words(&singles)).collect();
        let vis: Vec<usize> = legal.iter().map(vi).chain(shrink.vis(&singles)).collect();
        let mut doubtful_words: Vec<Word> = doubtful.iter().map(word).collect();
        let mut doubtful_vis: Vec<usize> = doubtful.iter().map(vi).collect();
        let (outs, doubtful_outs, next, next_outs) = if words.len() >= APART_FROM {
            let mut outs = self.disassemble(0, &words, &vis)?;
            outs.resize_with(words.len(), missing_outcome);
            let next = shrink.absorb(&singles, outs.split_off(legal.len()));
            doubtful_words.extend(shrink.words(&next));
            doubtful_vis.extend(shrink.vis(&next));
            let mut doubtful_outs = self.disassemble(16 * words.len() as u64, &doubtful_words, &doubtful_vis)?;
            doubtful_outs.resize_with(doubtful_words.len(), missing_outcome);
            let next_outs = doubtful_outs.split_off(doubtful.len());
            (outs, doubtful_outs, next, next_outs)
        } else {
            // One batch: the same words at the same addresses.
            let mut outs = self.disassemble(0, &[words.as_slice(), &doubtful_words].concat(), &[vis.as_slice(), &doubtful_vis].concat())?;
            outs.resize_with(words.len() + doubtful_words.len(), missing_outcome);
            let doubtful_outs = outs.split_off(words.len());
            let singles_outs = outs.split_off(legal.len());
            (outs, doubtful_outs, singles, singles_outs)
        };
        let tried = next.len() + words.len() - legal.len();
        self.phase(&format!("{} structured probes and {} minimization tries disassembled", legal.len() + doubtful.len(), tried));
        for (&(ri, pi), o) in legal.iter().chain(&doubtful).zip(outs.into_iter().chain(doubtful_outs)) {
            st.outs[ri][pi] = o;
        }
        for (ri, run) in st.runs.iter_mut().enumerate() {
            for (pi, p) in run.probes.iter().enumerate().filter(|(_, p)| p.kind == Kind::Base) {
                run.base_actual.insert(p.vi, printed(&st.outs[ri][pi]));
            }
        }
        Ok((next, next_outs))
    }

    /// Could nvdisasm reject this structured probe? Fixed-bit flips, pairs of groups,
    /// control values, and table values the page omits or calls INVALID.
    fn may_be_rejected(&self, p: &Probe) -> bool {
        let v = self.codec.variant(p.vi);
        match p.kind {
            Kind::Fixed { .. } | Kind::Pair { .. } => true,
            Kind::Field { field, value } => {
                v.fields[field].is_control() || v.field_table(field).is_some_and(|t| t.row(value).is_none_or(|r| r.kind == RowKind::Invalid))
            }
            Kind::Base | Kind::Random => false,
        }
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
                let values = self.codec.extract(p.vi, p.word);
                let a = self.analysis(p.vi);
                let j = match st.verdicts[ri].remove(&pi) {
                    Some(j) => j,
                    None => a.judge(p, &values, o, run.base_actual.get(&p.vi).and_then(Option::as_ref)),
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
                                run.raw.push(a.syntax_finding(&values, p.word, o, what, bits));
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

    /// Further minimization batches, for disagreements that need four fields or more.
    fn minimize(&self, shrink: &mut Minimizer, mut tries: Vec<Try>, mut try_outs: Vec<Outcome>) -> Result<(), NvdisasmError> {
        while !tries.is_empty() {
            tries = shrink.absorb(&tries, try_outs);
            if tries.is_empty() {
                break;
            }
            try_outs = self.disassemble(0, &shrink.words(&tries), &shrink.vis(&tries))?;
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

    /// Per page: merged findings, their severities and corrections, and the summaries.
    fn finish(&self, st: GroupState, done: &mut impl FnMut(&Page, Vec<VariantSummary>, Vec<Finding>)) {
        for (ri, run) in st.runs.into_iter().enumerate() {
            let mut findings = merge(run.raw.clone());
            for &vi in &run.vis {
                let obs: Vec<(Word, &Outcome)> = run.probes.iter().zip(&st.outs[ri]).filter(|(p, _)| p.vi == vi).map(|(p, o)| (p.word, o)).collect();
                correct::triage(run.page, self.codec.variant(vi), &obs, self.learned[vi], &mut findings);
            }
            findings.extend(self.stored.get(&run.page.file).cloned().unwrap_or_default());
            let summaries = run.vis.iter().map(|&vi| run.summary(self.codec.variant(vi), vi, &findings)).collect();
            done(run.page, summaries, findings);
        }
    }
}

/// The random words' disagreements, one candidate per (page run, variant, changed
/// elements): the first word that showed it, and how many did.
#[derive(Default)]
struct Candidates {
    all: Vec<Candidate>,
    by_key: std::collections::HashMap<(usize, usize, Vec<String>), usize>,
}

impl Candidates {
    fn add(&mut self, run: usize, vi: usize, values: Values, want: &[String], o: &Outcome) {
        match self.by_key.get(&(run, vi, want.to_vec())) {
            Some(&ci) => self.all[ci].count += 1,
            None => {
                self.by_key.insert((run, vi, want.to_vec()), self.all.len());
                self.all.push(Candidate { run, vi, values, want: want.to_vec(), count: 1, outcome: o.clone() });
            }
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

/// A random word that disagrees, being shrunk; `outcome` is nvdisasm's for `values`.
struct Candidate {
    run: usize,
    vi: usize,
    values: Values,
    /// The disagreement to keep: the changed elements, or `<legality>`.
    want: Vec<String>,
    count: usize,
    outcome: Outcome,
}

fn probes_for(codec: &Codec, vi: usize, learned: Option<&FormConventions>, opts: &Options, rng: &mut Rng) -> Vec<Probe> {
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
    // The first KEEP_RANDOM random words are kept with the page's probes; the rest are
    // streamed (see `Group::random_stream`).
    let gen = RandomWords::new(codec, vi, learned);
    for _ in 0..opts.random_per_variant.min(KEEP_RANDOM) {
        out.push(Probe { vi, word: gen.word(codec, rng), kind: Kind::Random });
    }
    out
}

/// Random words of one variant: listed values, and control bits nvdisasm accepts for
/// this form (learned), so that `.reuse`, barriers and the terminator are checked too,
/// when the page calls every bit 105–125 a control field.
struct RandomWords {
    vi: usize,
    legal: Vec<usize>,
    barriers: Vec<usize>,
}

impl RandomWords {
    fn new(codec: &Codec, vi: usize, learned: Option<&FormConventions>) -> Self {
        let learned = learned.filter(|_| controls_cover_105_125(codec.variant(vi)));
        let legal = learned.map(|c| c.legal_opex()).unwrap_or_default();
        let barriers = learned.map(|c| c.legal_barriers()).unwrap_or_default();
        RandomWords { vi, legal, barriers }
    }

    fn word(&self, codec: &Codec, rng: &mut Rng) -> Word {
        let vals = random_listed_values(codec.variant(self.vi), rng);
        let mut word = codec.encode_unchecked(self.vi, &vals);
        if !self.legal.is_empty() && !self.barriers.is_empty() {
            word = conv_rules::with_opex(word, self.legal[rng.below(self.legal.len() as u64) as usize]);
            word = conv_rules::with_barriers(word, self.barriers[rng.below(self.barriers.len() as u64) as usize]);
        }
        word
    }
}

/// The random words past [`KEEP_RANDOM`] of each variant of a group of pages, made a
/// slice at a time: variant after variant in page order, each from its own seeded
/// stream (the page's stream gives the kept words, as it did before words were
/// streamed, so a run with `--random` up to `KEEP_RANDOM` sends the same words).
struct RandomStream {
    /// (page run, generator, its stream, words still to make).
    todo: std::collections::VecDeque<(usize, RandomWords, Rng, usize)>,
}

impl RandomStream {
    fn new(runs: &[PageRun], codec: &Codec, conv: &Conventions, opts: &Options) -> Self {
        let extra = opts.random_per_variant.saturating_sub(KEEP_RANDOM);
        let mut todo = std::collections::VecDeque::new();
        for (ri, run) in runs.iter().enumerate().filter(|_| extra > 0) {
            for (k, &vi) in run.vis.iter().enumerate() {
                let v = codec.variant(vi);
                let seed = opts.seed ^ (run.page.arch.0 as u64) << 32 ^ STREAM_SALT ^ (k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                todo.push_back((ri, RandomWords::new(codec, vi, conv.get(v.arch, &v.key)), Rng::new(seed), extra));
            }
        }
        RandomStream { todo }
    }

    /// Up to `n` more words, with their page run; empty when every word was made.
    fn slice(&mut self, codec: &Codec, n: usize) -> Vec<(usize, Probe)> {
        let mut out = Vec::with_capacity(n.min(RANDOM_SLICE));
        while out.len() < n {
            let Some((ri, gen, rng, left)) = self.todo.front_mut() else { break };
            let take = (*left).min(n - out.len());
            out.extend((0..take).map(|_| (*ri, Probe { vi: gen.vi, word: gen.word(codec, rng), kind: Kind::Random })));
            *left -= take;
            if *left == 0 {
                self.todo.pop_front();
            }
        }
        out
    }
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

/// Does the page call every bit 105–125 part of a control field?
fn controls_cover_105_125(v: &Variant) -> bool {
    let m = v.fields.iter().filter(|f| f.is_control()).fold(crate::word::BitSet::EMPTY, |a, f| a.union(f.mask()));
    (105..=125).all(|b| m.contains(b))
}

/// A probe's verdict. Random probes' verdicts are kept from batch one to the judging of
/// all (hundreds of thousands in a slice by default): the finding is boxed to keep them
/// small.
enum Judged {
    /// Agreement; the bits it confirms.
    Agree(u128),
    Found(Box<Finding>),
    /// Same meaning, other text; the finding is built by [`Analysis::syntax_finding`].
    Syntax {
        what: &'static str,
        bits: Vec<u8>,
    },
    /// A random word that disagrees on these elements: minimize before reporting.
    Minimize(Vec<String>),
}

/// What a single-field probe showed: the page's text, nvdisasm's, the zero word's, and
/// the elements that changed from the zero word.
struct Seen<'s> {
    expected: &'s Instruction,
    actual: &'s Instruction,
    base: Option<&'s Instruction>,
    changes: Vec<String>,
}

struct Analysis<'a> {
    nv_tool: &'a str,
    v: &'a Variant,
    /// nvdisasm's conventions for this form, learned at the start of the run.
    learned: Option<&'a FormConventions>,
    fixed: &'a FixedIndex,
}

/// Which printed element does page operand `po` show as?
fn element_of_page_operand(v: &Variant, po: usize) -> Option<String> {
    v.operands.iter().enumerate().find_map(|(k, o)| {
        let i = o.page_operands.iter().position(|&x| x == po)?;
        Some(match (o.kind, i) {
            (crate::spec::OperandKind::Const | crate::spec::OperandKind::ConstX, 0) => format!("op{k}.bank"),
            (crate::spec::OperandKind::Const | crate::spec::OperandKind::ConstX, _) => format!("op{k}.offset"),
            _ => format!("op{k}.body"),
        })
    })
}

/// Describes an element for a proposal (`op3.offset` → `operand 4 (offset)`).
fn describe_element(v: &Variant, el: &str) -> String {
    let Some((op, part)) = el.split_once('.') else { return el.to_string() };
    let Some(k) = op.strip_prefix("op").and_then(|k| k.parse::<usize>().ok()) else { return el.to_string() };
    let Some(o) = v.operands.get(k) else { return el.to_string() };
    let po = match part {
        "offset" => o.page_operands.last().copied(),
        _ => o.page_operands.first().copied(),
    }
    .unwrap_or(k);
    match part {
        "body" | "bank" | "offset" => format!("operand {po}{}", if part == "body" { String::new() } else { format!(" ({part})") }),
        "neg" => format!("cNEG of operand {po}"),
        "abs" => format!("cABS of operand {po}"),
        "sfx" => format!("a suffix of operand {po}"),
        other => format!("operand {po} {other}"),
    }
}

impl<'a> Analysis<'a> {
    #[allow(clippy::too_many_arguments)]
    fn finding(&self, class: Class, field: Option<usize>, bits: Vec<u8>, word: Word, expected: String, actual: String, proposal: Option<String>) -> Finding {
        Finding {
            arch: self.v.arch,
            variant: self.v.key.clone(),
            class,
            severity: Severity::Warning,
            page: self.v.file.clone(),
            line: field.map(|f| self.v.fields[f].line).unwrap_or(self.v.line),
            correction: None,
            field: field.map(|f| self.v.fields[f].name.clone()),
            bits,
            word: word.hex(),
            expected,
            actual,
            proposal,
            occurrences: 1,
            tool: self.nv_tool.to_string(),
        }
    }

    /// Word bits that carry value bits set in `x` of field `fi`.
    fn bits_of(&self, fi: usize, x: u64) -> Vec<u8> {
        let raw = self.v.fields[fi].raw(x);
        self.v.fields[fi].bits.iter().enumerate().filter(|(k, _)| raw >> k & 1 == 1).map(|(_, &b)| b).collect()
    }

    /// What the page predicts nvdisasm prints for `word`.
    fn predict(&self, values: &Values, word: Word) -> Instruction {
        codec::print_with(self.v, values, self.learned.map(|c| (c, word)))
    }

    fn judge(&self, p: &Probe, values: &Values, o: &Outcome, base_actual: Option<&Instruction>) -> Judged {
        let expected = self.predict(values, p.word);
        let exp_text = expected.to_string();
        let word_bits: u128 = match &p.kind {
            Kind::Field { field, value } => self.bits_of(*field, *value).iter().fold(0u128, |a, &b| a | 1u128 << b),
            Kind::Fixed { bit } => 1u128 << bit,
            _ => 0,
        };
        // Fast path: nvdisasm printed exactly the predicted text (no parse needed).
        if let (Outcome::Printed { text }, false) = (o, matches!(p.kind, Kind::Fixed { .. })) {
            if *text == exp_text {
                return Judged::Agree(word_bits);
            }
        }
        if self.another_form(p, values) {
            return Judged::Agree(word_bits);
        }
        // Fixed-bit flips: the page predicts "not this variant".
        if let Kind::Fixed { bit } = p.kind {
            return self.judge_fixed(p.word, bit, o, base_actual, word_bits);
        }
        let Some(actual) = printed(o) else { return self.judge_unprinted(p, o, exp_text, word_bits) };
        match compare(&expected, &actual) {
            Verdict::Agree => Judged::Agree(word_bits),
            Verdict::Syntax(what) => {
                let bits = match &p.kind {
                    Kind::Field { field, value } => self.bits_of(*field, *value),
                    _ => vec![],
                };
                Judged::Syntax { what, bits }
            }
            Verdict::Differ => self.judge_differ(p, values, o, &expected, &actual, base_actual),
        }
    }

    /// Does the probe set a table value the table leaves out, in a word that a more
    /// specific variant claims (I2F's one-hot `11` is the F64 form)? The page then gives
    /// the word to that variant, whose own probes check it.
    fn another_form(&self, p: &Probe, values: &Values) -> bool {
        let unlisted = |f: usize| self.v.field_table(f).is_some_and(|t| t.row(values.get(f)).is_none());
        let set = match p.kind {
            Kind::Field { field, .. } => unlisted(field),
            Kind::Pair { a, b } => unlisted(a) || unlisted(b),
            _ => false,
        };
        set && self.fixed.more_specific(self.v.arch, p.word, self.v.fixed_mask.0)
    }

    /// A flipped fixed bit: opcode (another form or instruction, as the page says), a bit
    /// nvdisasm ignores, or a meaning the page cannot express.
    fn judge_fixed(&self, word: Word, bit: u8, o: &Outcome, base_actual: Option<&Instruction>, word_bits: u128) -> Judged {
        let v = self.v;
        let note = if v.inferred.contains(bit) { " (the page dropped this cell; it was inferred as 0)" } else { "" };
        let Some(actual) = printed(o) else { return Judged::Agree(word_bits) };
        let Some(base) = base_actual else { return Judged::Agree(0) };
        let kinds = |i: &Instruction| i.operands.iter().map(|o| std::mem::discriminant(&o.body)).collect::<Vec<_>>();
        if actual.mnemonic != base.mnemonic || kinds(&actual) != kinds(base) || self.fixed.unique(v.arch, word) {
            return Judged::Agree(word_bits);
        }
        let ch: Vec<String> = changed(base, &actual);
        let expected = format!("not {} (bit {bit} is fixed {})", v.key, v.fixed_value.bit(bit) as u8);
        // A bit the page marks as ignored (`ignored bits:`) agrees when nvdisasm ignores it.
        if ch.is_empty() && v.ignored.contains(bit) {
            return Judged::Agree(word_bits);
        }
        let (class, proposal) = if ch.is_empty() {
            (Class::FixedIgnored, ignored_proposal(v, &[bit]))
        } else {
            let what: Vec<String> = ch.iter().map(|c| describe_element(v, c)).collect();
            (Class::Unexpressible, format!("bit {bit} is not fixed: it changes {}{note}", what.join(", ")))
        };
        Judged::Found(Box::new(self.finding(class, None, vec![bit], word, expected, outcome_text(o), Some(proposal))))
    }

    /// nvdisasm rejected the word or printed nothing for it.
    fn judge_unprinted(&self, p: &Probe, o: &Outcome, exp_text: String, word_bits: u128) -> Judged {
        let v = self.v;
        let Kind::Field { field, value } = p.kind else {
            if p.kind == Kind::Random {
                return Judged::Minimize(vec!["<legality>".into()]);
            }
            return Judged::Found(Box::new(self.finding(Class::Legality, None, vec![], p.word, exp_text, outcome_text(o), None)));
        };
        if let Some(t) = v.field_table(field) {
            return match t.row(value) {
                // An INVALID row, or a value the table omits: the page claims nothing.
                Some(r) if r.kind == RowKind::Invalid => Judged::Agree(word_bits),
                None => Judged::Agree(word_bits),
                Some(r) => {
                    let why = format!("{}: value {:0w$b} is not '{}' but illegal: mark it INVALID{}", t.title, value, r.name, value, w = t.width as usize);
                    let bits = v.fields[field].bits.clone();
                    Judged::Found(Box::new(self.finding(Class::TableRow, Some(field), bits, p.word, exp_text, outcome_text(o), Some(why))))
                }
            };
        }
        // The page says so: a derived register would pass the zero register, or the field
        // may not print all ones.
        if v.value_illegal(field, value) {
            return Judged::Agree(word_bits);
        }
        let f = &v.fields[field];
        let what = if f.is_control() { "control field" } else { "field" };
        let why = format!("{what} '{}' = {value:#x} is rejected by nvdisasm", f.name);
        Judged::Found(Box::new(self.finding(Class::Legality, Some(field), self.bits_of(field, value), p.word, exp_text, outcome_text(o), Some(why))))
    }

    /// nvdisasm printed another meaning than the page predicts.
    fn judge_differ(&self, p: &Probe, values: &Values, o: &Outcome, expected: &Instruction, actual: &Instruction, base_actual: Option<&Instruction>) -> Judged {
        let v = self.v;
        let exp_text = expected.to_string();
        match p.kind {
            Kind::Field { field, value } => Judged::Found(Box::new(self.field_finding(field, value, p.word, expected, actual, base_actual, o))),
            Kind::Pair { a, b } => {
                let mut bits = self.bits_of(a, values.get(a));
                bits.extend(self.bits_of(b, values.get(b)));
                bits.sort_unstable();
                let (na, nb) = (&v.fields[a].name, &v.fields[b].name);
                let why = format!("fields interact: '{na}' and '{nb}' together print what the page does not predict");
                let mut f = self.finding(Class::Interaction, Some(a), bits, p.word, exp_text, outcome_text(o), Some(why));
                f.field = Some(format!("{na} + {nb}"));
                Judged::Found(Box::new(f))
            }
            Kind::Base => {
                let why = "the distilled line does not match nvdisasm for the zero word".to_string();
                Judged::Found(Box::new(self.finding(Class::FieldBits, None, vec![], p.word, exp_text, outcome_text(o), Some(why))))
            }
            Kind::Random => Judged::Minimize(changed(expected, actual)),
            Kind::Fixed { .. } => unreachable!("fixed-bit probes are judged by judge_fixed"),
        }
    }

    /// Same meaning, other text (built once per variant and kind of difference: a page
    /// whose selector syntax differs shows it on nearly every word).
    fn syntax_finding(&self, values: &Values, word: Word, o: &Outcome, what: &'static str, bits: Vec<u8>) -> Finding {
        let exp_text = self.predict(values, word).to_string();
        let mut f = self.finding(Class::Syntax, None, bits, word, exp_text, outcome_text(o), Some(format!("syntax only: {what}")));
        f.field = Some(what.to_string());
        f
    }

    /// A single field set to `value` printed something other than predicted.
    #[allow(clippy::too_many_arguments)]
    fn field_finding(
        &self,
        fi: usize,
        value: u64,
        word: Word,
        expected: &Instruction,
        actual: &Instruction,
        base: Option<&Instruction>,
        o: &Outcome,
    ) -> Finding {
        let v = self.v;
        let bits = self.bits_of(fi, value);
        let seen = Seen { expected, actual, base, changes: base.map(|b| changed(b, actual)).unwrap_or_default() };
        let (class, proposal) = match &v.fields[fi].kind {
            FieldKind::Group { .. } | FieldKind::OperandModifier { .. } => (Class::TableRow, Some(self.table_proposal(fi, value, &seen))),
            FieldKind::Flag { role, .. } if value.is_power_of_two() => {
                let class = if *role == FlagRole::Modifier { Class::FieldBits } else { Class::FlagOperand };
                (class, Some(self.flag_proposal(fi, bits[0], &seen)))
            }
            _ => (Class::FieldBits, self.value_proposal(fi, value, bits.first().copied(), &seen)),
        };
        self.finding(class, Some(fi), bits, word, expected.to_string(), outcome_text(o), proposal)
    }

    /// A table field's value printed another row: which name it printed, or what else changed.
    fn table_proposal(&self, fi: usize, value: u64, seen: &Seen) -> String {
        let v = self.v;
        let t = v.field_table(fi).expect("table field");
        let (new_tokens, where_) = match &v.fields[fi].kind {
            FieldKind::Group { .. } => {
                (token_diff(seen.base.map(|b| b.modifiers.clone()).unwrap_or_default(), seen.actual.modifiers.clone()), "modifiers".to_string())
            }
            _ => {
                let el = seen.changes.iter().find(|c| c.ends_with(".sfx")).cloned();
                let toks = el
                    .as_ref()
                    .and_then(|e| element_value(seen.actual, e))
                    .map(|s| s.split('.').filter(|x| !x.is_empty()).map(str::to_string).collect())
                    .unwrap_or_default();
                (toks, el.unwrap_or_default())
            }
        };
        let name = if new_tokens.is_empty() { "(default)".to_string() } else { new_tokens.join(".") };
        let others: Vec<String> = seen.changes.iter().filter(|c| *c != "mods" && !c.ends_with(".sfx")).map(|c| describe_element(v, c)).collect();
        let w = t.width as usize;
        if others.is_empty() {
            let missing = if t.row(value).is_none() { " (row missing from the page)" } else { "" };
            format!("{}: {value:0w$b} → {name}{missing}", t.title)
        } else {
            format!("{}: {value:0w$b} also changes {} ({where_})", t.title, others.join(", "))
        }
    }

    /// A one-bit flag printed something else: nothing, another modifier, or another operand's flag.
    fn flag_proposal(&self, fi: usize, bit: u8, seen: &Seen) -> String {
        let v = self.v;
        let FieldKind::Flag { role, name, .. } = &v.fields[fi].kind else { unreachable!("flag field") };
        let act_desc: Vec<String> = seen.changes.iter().map(|c| describe_element(v, c)).collect();
        if seen.changes.is_empty() {
            format!("'{name}' at bit {bit}: nvdisasm prints no change")
        } else if *role == FlagRole::Modifier {
            let toks = token_diff(seen.base.map(|b| b.modifiers.clone()).unwrap_or_default(), seen.actual.modifiers.clone());
            format!("bit {bit} prints {} (page: .{name})", if toks.is_empty() { act_desc.join(", ") } else { format!(".{}", toks.join(".")) })
        } else {
            let base_pred = codec::print(v, &crate::gen::base_values(v));
            let page: Vec<String> = changed(&base_pred, seen.expected).iter().map(|c| describe_element(v, c)).collect();
            format!("bit {bit} is {} (page: '{name}' of {})", act_desc.join(" and "), page.join(", "))
        }
    }

    /// Operand values, predicate, wider flags: where did a single bit land?
    fn value_proposal(&self, fi: usize, value: u64, bit: Option<u8>, seen: &Seen) -> Option<String> {
        let v = self.v;
        let f = &v.fields[fi];
        let bit = bit.filter(|_| value.is_power_of_two())?;
        let own = match &f.kind {
            FieldKind::Operand { page_operand } => element_of_page_operand(v, *page_operand),
            FieldKind::Pred => Some("pred".to_string()),
            _ => None,
        };
        let act_desc: Vec<String> = seen.changes.iter().map(|c| describe_element(v, c)).collect();
        Some(match own {
            _ if seen.changes.is_empty() => format!("bit {bit}: nvdisasm ignores it; '{}' does not include it", f.name),
            Some(el) if seen.changes == [el.clone()] => {
                let got = element_value(seen.actual, &el).unwrap_or_default();
                format!("bit {bit} of '{}' prints {got} where the page predicts {}", f.name, element_value(seen.expected, &el).unwrap_or_default())
            }
            _ => format!("bit {bit} belongs to {} (page: '{}')", act_desc.join(" and "), f.name),
        })
    }

    /// A minimized random word that still disagrees.
    fn random_finding(&self, vals: &Values, w: Word, o: &Outcome, base: Option<&Instruction>) -> Option<Finding> {
        let v = self.v;
        let nonzero: Vec<usize> = (0..v.fields.len()).filter(|&i| vals.get(i) != 0 && !v.fields[i].is_control()).collect();
        let expected = self.predict(vals, w);
        let p = Probe { vi: 0, word: w, kind: Kind::Random };
        if nonzero.len() == 1 {
            // One field alone: judge it as a field probe.
            let fi = nonzero[0];
            let q = Probe { kind: Kind::Field { field: fi, value: vals.get(fi) }, ..p };
            return match self.judge(&q, vals, o, base) {
                Judged::Found(f) => Some(*f),
                Judged::Syntax { what, bits } => Some(self.syntax_finding(vals, w, o, what, bits)),
                _ => None,
            };
        }
        let actual = printed(o);
        if let Some(a) = &actual {
            if compare(&expected, a) != Verdict::Differ {
                return None;
            }
        }
        let bits: Vec<u8> = {
            let mut b: Vec<u8> = nonzero.iter().flat_map(|&i| self.bits_of(i, vals.get(i))).collect();
            b.sort_unstable();
            b
        };
        let names: Vec<String> = nonzero.iter().map(|&i| format!("'{}' = {:#x}", v.fields[i].name, vals.get(i))).collect();
        let class = if actual.is_none() { Class::Legality } else { Class::Interaction };
        let what = match &actual {
            None => "together they are rejected though each alone is accepted".to_string(),
            Some(a) => {
                let ch = base.map(|b| changed(b, a)).unwrap_or_default();
                format!("together they print {}", ch.iter().map(|c| describe_element(v, c)).collect::<Vec<_>>().join(", "))
            }
        };
        let mut f = self.finding(
            class,
            nonzero.first().copied(),
            bits,
            w,
            expected.to_string(),
            outcome_text(o),
            Some(format!("fields interact: {}: {what}", names.join(", "))),
        );
        f.field = Some(nonzero.iter().map(|&i| v.fields[i].name.clone()).collect::<Vec<_>>().join(" + "));
        Some(f)
    }
}

/// What a fixed_ignored note proposes for `bits` (each flipped alone printed the zero
/// word's text), naming those whose cell the page dropped.
fn ignored_proposal(v: &Variant, bits: &[u8]) -> String {
    let inferred: Vec<u8> = bits.iter().copied().filter(|&b| v.inferred.contains(b)).collect();
    match bits {
        [bit] => {
            let note = if inferred.is_empty() { "" } else { " (the page dropped this cell; it was inferred as 0)" };
            format!("bit {bit}: nvdisasm ignores it; mark it don't-care{note}")
        }
        _ => {
            let note = match inferred.as_slice() {
                [] => String::new(),
                [b] => format!(" (the page dropped the cell of bit {b}; it was inferred as 0)"),
                more => format!(" (the page dropped the cells of bits {}; they were inferred as 0)", format_ranges(more)),
            };
            format!("bits {}: nvdisasm ignores each alone; mark them don't-care{note}", format_ranges(bits))
        }
    }
}

/// Tokens in `after` that `before` lacks (multiset difference, order kept).
fn token_diff(before: Vec<String>, after: Vec<String>) -> Vec<String> {
    let mut b = before;
    let mut out = vec![];
    for t in after {
        if let Some(i) = b.iter().position(|x| *x == t) {
            b.remove(i);
        } else {
            out.push(t);
        }
    }
    out
}

/// A minimization try: candidate, values, and the field it drops when it is an "all but one".
type Try = (usize, Values, Option<usize>);

/// Most fields a candidate may have for every triple of them to be tried in one batch.
const TRIPLES_UP_TO: usize = 12;

/// Shrinks each candidate to a smallest set of its non-zero non-control fields that still
/// shows the same disagreement. The first batch tries, for every candidate at once, each
/// field alone (most disagreements are one field's: then that field is the answer). The
/// next tries, for the others, each pair, each triple (up to [`TRIPLES_UP_TO`] fields)
/// and each "all but one"; a reproducing set no larger than the largest subsets tried is
/// then minimal. Larger ones go on for up to `rounds` batches after the singles, each
/// trying "without every field whose removal alone kept the disagreement" before "all but
/// one" again. Batches are few and large because every nvdisasm start costs some 0.3 s:
/// the singles and the next tries ride with the structured probes. (Trying pairs and
/// triples with the singles
/// sent some 160 words per candidate, most of a big run's minimization words, where the
/// singles, some 10, usually settle it.)
struct Minimizer<'c> {
    cx: &'c Group<'c>,
    cands: Vec<Candidate>,
    rounds: usize,
    round: usize,
    /// The singles' batch is the one being absorbed.
    singles: bool,
}

impl Minimizer<'_> {
    fn disagrees(&self, vi: usize, vals: &Values, out: &Outcome, want: &[String]) -> bool {
        match printed(out) {
            None => want == ["<legality>".to_string()],
            Some(a) => {
                let w = self.cx.codec.encode_unchecked(vi, vals);
                let exp = self.cx.predict(vi, vals, w);
                compare(&exp, &a) == Verdict::Differ && changed(&exp, &a) == want
            }
        }
    }

    fn fields_of(&self, vi: usize, vals: &Values) -> Vec<usize> {
        let v = self.cx.codec.variant(vi);
        (0..v.fields.len()).filter(|&fi| vals.get(fi) != 0 && !v.fields[fi].is_control()).collect()
    }

    /// The candidate's values with only the fields in `keep` (controls always kept).
    fn only(&self, c: &Candidate, keep: &[usize]) -> Values {
        let v = self.cx.codec.variant(c.vi);
        let mut t = c.values;
        for fi in 0..v.fields.len() {
            if !v.fields[fi].is_control() && !keep.contains(&fi) {
                t.set(fi, 0);
            }
        }
        t
    }

    fn words(&self, tries: &[Try]) -> Vec<Word> {
        tries.iter().map(|(ci, t, _)| self.cx.codec.encode_unchecked(self.cands[*ci].vi, t)).collect()
    }

    /// The variant of each try's word.
    fn vis(&self, tries: &[Try]) -> Vec<usize> {
        tries.iter().map(|(ci, _, _)| self.cands[*ci].vi).collect()
    }

    /// Each field alone, of every candidate with several.
    fn first_tries(&self) -> Vec<Try> {
        let mut tries = vec![];
        if self.rounds == 0 {
            return tries;
        }
        for (ci, c) in self.cands.iter().enumerate() {
            let fs = self.fields_of(c.vi, &c.values);
            if fs.len() > 1 {
                tries.extend(fs.iter().map(|&f| (ci, self.only(c, &[f]), None)));
            }
        }
        tries
    }

    /// Each pair, triple and "all but one" of candidate `ci`'s fields, smallest subsets
    /// first, so the first try that reproduces is a smallest one.
    fn wider_tries(&self, ci: usize) -> Vec<Try> {
        let mut tries = vec![];
        let c = &self.cands[ci];
        let fs = self.fields_of(c.vi, &c.values);
        for (i, &f) in fs.iter().enumerate() {
            for &g in &fs[i + 1..] {
                tries.push((ci, self.only(c, &[f, g]), None));
            }
        }
        if fs.len() > 3 && fs.len() <= TRIPLES_UP_TO {
            for (i, &f) in fs.iter().enumerate() {
                for (j, &g) in fs.iter().enumerate().skip(i + 1) {
                    for &h in &fs[j + 1..] {
                        tries.push((ci, self.only(c, &[f, g, h]), None));
                    }
                }
            }
        }
        if fs.len() > 3 {
            for &f in &fs {
                tries.push((ci, self.only(c, &without(&fs, &[f])), Some(f)));
            }
        }
        tries
    }

    /// Takes the singles' outcomes: a candidate one of whose fields alone reproduces is
    /// that field; the others get their wider tries (the next batch).
    fn absorb_singles(&mut self, tries: &[Try], outs: Vec<Outcome>) -> Vec<Try> {
        self.singles = false;
        let (mut tried, mut settled) = (vec![false; self.cands.len()], vec![false; self.cands.len()]);
        for ((ci, t, _), o) in tries.iter().zip(outs) {
            tried[*ci] = true;
            let c = &self.cands[*ci];
            if !settled[*ci] && self.disagrees(c.vi, t, &o, &c.want) {
                settled[*ci] = true;
                let c = &mut self.cands[*ci];
                c.values = *t;
                c.outcome = o;
            }
        }
        (0..self.cands.len()).filter(|&ci| tried[ci] && !settled[ci]).flat_map(|ci| self.wider_tries(ci)).collect()
    }

    /// Takes a batch's outcomes; returns the next batch (empty when done).
    fn absorb(&mut self, tries: &[Try], outs: Vec<Outcome>) -> Vec<Try> {
        if self.singles {
            return self.absorb_singles(tries, outs);
        }
        let n = self.cands.len();
        // Per candidate: the first reproducing try and the fields whose removal alone
        // kept the disagreement.
        let mut best: Vec<Option<(Values, Outcome)>> = vec![None; n];
        let mut removable: Vec<Vec<usize>> = vec![vec![]; n];
        for ((ci, t, dropped), o) in tries.iter().zip(outs) {
            let c = &self.cands[*ci];
            if !self.disagrees(c.vi, t, &o, &c.want) {
                continue;
            }
            if let Some(f) = dropped {
                removable[*ci].push(*f);
            }
            if best[*ci].is_none() {
                best[*ci] = Some((*t, o));
            }
        }
        self.round += 1;
        let mut next = vec![];
        for (ci, b) in best.into_iter().enumerate() {
            let Some((vals, o)) = b else { continue };
            let fs = self.fields_of(self.cands[ci].vi, &vals);
            let c = &mut self.cands[ci];
            c.values = vals;
            c.outcome = o;
            // Every subset of one or two fields was tried first: three is minimal.
            if fs.len() <= 3 || self.round >= self.rounds {
                continue;
            }
            let c = &self.cands[ci];
            let rest: Vec<usize> = removable[ci].iter().copied().filter(|f| fs.contains(f)).collect();
            if rest.len() >= 2 {
                next.push((ci, self.only(c, &without(&fs, &rest)), None));
            }
            for &f in &fs {
                next.push((ci, self.only(c, &without(&fs, &[f])), Some(f)));
            }
        }
        next
    }
}

fn without(fs: &[usize], drop: &[usize]) -> Vec<usize> {
    fs.iter().copied().filter(|f| !drop.contains(f)).collect()
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

/// About how many probe words one validation batch holds (see [`validate_pages`]).
const GROUP_WORDS: usize = 400_000;

/// Fewest legal structured words (with the singles) sent apart from those nvdisasm may
/// reject: apart, they save a run that costs ~8 µs a word, and cost a second call's
/// process starts (~0.3 s each).
const APART_FROM: usize = 50_000;

/// Slices validated at once: one's judging (one core) overlaps another's nvdisasm runs.
const SLICES_AT_ONCE: usize = 2;

/// Random words per variant kept with the page's probes until the page is done (the
/// evidence corrections are weighed on, see [`correct::triage`]). Words past these are
/// generated, disassembled and judged [`RANDOM_SLICE`] at a time, and only their counts,
/// disagreements and syntax findings kept: memory does not grow with `--random`.
pub const KEEP_RANDOM: usize = 10_000;

/// Random words past [`KEEP_RANDOM`] in flight at once, per slice of pages (40 MB at
/// [`BYTES_PER_PROBE`]; two nvdisasm starts per 100 000 words cost about 2 %).
pub const RANDOM_SLICE: usize = 100_000;

/// Salt of the streams of random words past [`KEEP_RANDOM`].
const STREAM_SALT: u64 = 0x5712_ea3d_0000_0000;

/// The words [`probes_for`] builds for a variant, counted without building them.
fn probe_count(v: &Variant, opts: &Options) -> usize {
    let fields: usize = (0..v.fields.len()).map(|fi| v.fields[fi].width() as usize + 2 + v.field_table(fi).map_or(0, |t| t.rows.len() + t.omitted.len())).sum();
    // Only the kept random words stay; the others stream (see KEEP_RANDOM).
    1 + fields + group_pairs(v).len() + v.fixed_mask.len() as usize + opts.random_per_variant.min(KEEP_RANDOM)
}

/// The probe words of `pages`' variants, counted without building them.
fn page_words(pages: &[&Page], opts: &Options) -> usize {
    pages.iter().flat_map(|p| &p.variants).map(|v| probe_count(v, opts)).fold(0, usize::saturating_add)
}

/// Consecutive runs of `pages` of about [`GROUP_WORDS`] probe words each (a page is never split).
fn slices<'p>(pages: &[&'p Page], opts: &Options) -> Vec<Vec<&'p Page>> {
    let mut out: Vec<Vec<&Page>> = vec![];
    let mut words = GROUP_WORDS;
    for &p in pages {
        let n = page_words(&[p], opts);
        if words.saturating_add(n) > GROUP_WORDS {
            out.push(vec![]);
            words = 0;
        }
        words += n;
        out.last_mut().expect("pushed above").push(p);
    }
    out
}

/// The slices [`validate_pages`] validates: every page but `opts.skip_pages`, by architecture.
fn all_slices<'p>(spec: &'p crate::spec::Spec, opts: &Options) -> Vec<Vec<&'p Page>> {
    arch_groups(spec).into_iter().flat_map(|g| slices(&g.into_iter().filter(|p| !opts.skip_pages.contains(&p.file)).collect::<Vec<_>>(), opts)).collect()
}

/// Peak bytes per probe word in flight (the probe, its outcome and text, nvdisasm's
/// listing of it, its verdict), rounded up from 376 B measured: an SM90 page with
/// `--random 200000` (1.8 M words) peaked at 734 MB resident, 677 MB above `--random 0`.
pub const BYTES_PER_PROBE: u64 = 400;

/// What a validation holds besides its probes: pages, codec, tool output being read.
const BASE_BYTES: u64 = 128 << 20;

/// About the most memory [`validate_pages`] holds at once: its `SLICES_AT_ONCE`
/// largest slices' probes (a page is never split; its random words count up to
/// [`KEEP_RANDOM`] per variant) and, past those, a [`RANDOM_SLICE`] of streamed random
/// words each. It does not grow with `--random` past `KEEP_RANDOM`.
pub fn peak_bytes(spec: &crate::spec::Spec, opts: &Options) -> u64 {
    let mut sizes: Vec<usize> = all_slices(spec, opts).iter().map(|s| page_words(s, opts)).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let streamed = if opts.random_per_variant > KEEP_RANDOM { RANDOM_SLICE } else { 0 };
    let words: u64 = sizes.iter().take(SLICES_AT_ONCE).map(|&n| (n + streamed) as u64).sum();
    BASE_BYTES + words * BYTES_PER_PROBE
}

/// Refuses, before any work, a validation whose [`peak_bytes`] is above the memory
/// budget (see [`crate::budget`]), naming the largest `--random` that fits.
pub fn check_budget(spec: &crate::spec::Spec, opts: &Options) -> Result<(), String> {
    let budget = crate::budget::Budget::from_env()?;
    let need = peak_bytes(spec, opts);
    if need <= budget.bytes {
        return Ok(());
    }
    let fits = |r: usize| peak_bytes(spec, &Options { random_per_variant: r, ..opts.clone() }) <= budget.bytes;
    // Peak grows with --random: the largest that fits, by bisection.
    let hint = if !fits(0) {
        "raise the budget (even --random 0 does not fit)".to_string()
    } else {
        let (mut lo, mut hi) = (0usize, opts.random_per_variant);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid
            } else {
                hi = mid
            }
        }
        format!("lower --random to {lo} or less, or raise the budget")
    };
    Ok(budget.check(&format!("--random {}", opts.random_per_variant), need, &hint)?)
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
    let (next, failed) = (std::sync::atomic::AtomicUsize::new(0), std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..SLICES_AT_ONCE.min(all.len()))
            .map(|_| {
                let (tx, all, next, failed) = (tx.clone(), &all, &next, &failed);
                s.spawn(move || -> Result<(), NvdisasmError> {
                    use std::sync::atomic::Ordering::Relaxed;
                    while let Some(slice) = all.get(next.fetch_add(1, Relaxed)).filter(|_| !failed.load(Relaxed)) {
                        let r = validate_group(slice, codec, nv, opts, |p, sums, finds| {
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
