//! The kept random words' batch: sent (with the first batch, or on their own; in one run,
//! or in two with the minimization's first round riding on the second), judged, and their
//! disagreements gathered as candidates to minimize; then the streamed words past the
//! kept ones, judged as they come.

use super::*;

/// A random probe's verdict and its comparison's, once it has an outcome.
type Judgement = Option<(Judged, Option<Verdict>)>;

impl Group<'_> {
    /// Batch one: the kept random probes, judged; their disagreements become candidates,
    /// one per (variant, changed elements), in page, variant and disagreement order.
    /// `sent`: the outcomes of those that rode with the first batch ([`first::first_batch`]).
    /// A `shared` group sends the kept ones in two runs (or more where they exceed
    /// [`MAX_CHUNK`](crate::oracle::nvdisasm::MAX_CHUNK) words), one after the other: all
    /// but the last [`HELD_BACK`]th of each variant's ([`first::ridden`], or those that
    /// rode with the first batch), judged, then the others with the minimization's first
    /// round for the candidates seen so far, its outcomes into `known`. Two runs of random
    /// words, as nvdisasm alone sends them on two cores, and none for the minimization's
    /// first round (a process start is some 0.25 s of CPU) unless a disagreement first
    /// shows among the words held back. The second run is small because an illegal word
    /// in it (a minimization try, a random word) makes nvdisasm run all of it again.
    pub(super) fn random_batch(
        &self,
        st: &mut GroupState,
        conv: &Conventions,
        sent: Option<first::Sent>,
        known: &mut Known,
    ) -> Result<Vec<Candidate>, NvdisasmError> {
        let random: Vec<&Probe> = st.runs.iter().flat_map(|r| &r.probes).filter(|p| p.kind == Kind::Random).collect();
        let first::Sent { outs: mut random_outs, mut next_at } = sent.unwrap_or_default();
        random_outs.resize_with(random.len(), || None);
        if random_outs.iter().all(Option::is_none) {
            let now = if self.shared { first::ridden(&random) } else { vec![true; random.len()] };
            let now: Vec<usize> = (0..random.len()).filter(|&k| now[k]).collect();
            self.send_random(&random, &now, &mut random_outs, 0, &[])?;
            next_at = 16 * now.len() as u64;
            self.phase(&format!("{} random probes disassembled", now.len()));
        }
        let mut judged = self.judge_sent(&random, &random_outs, vec![]);
        let later: Vec<usize> = (0..random.len()).filter(|&k| random_outs[k].is_none()).collect();
        if !later.is_empty() {
            let tries = if self.shared { self.tries_ahead(st, &judged, &random_outs) } else { vec![] };
            let tried = self.send_random(&random, &later, &mut random_outs, next_at, &tries)?;
            self.phase(&format!("{} random probes and {} minimization words disassembled", later.len(), tries.len()));
            known.extend(tries.into_iter().zip(tried));
            judged = self.judge_sent(&random, &random_outs, judged);
        }
        // Every probe has its outcome and verdict now (a missing outcome says so).
        random_outs.iter_mut().filter(|o| o.is_none()).for_each(|o| *o = Some(missing_outcome()));
        let judged = self.judge_sent(&random, &random_outs, judged);
        let mut cands = self.candidates_among(st, &judged, &random_outs);
        let kept = random.len();
        let mut judged = judged.into_iter().flatten().zip(random_outs.into_iter().flatten());
        for (ri, run) in st.runs.iter_mut().enumerate() {
            let verdicts = &mut st.verdicts[ri];
            verdicts.resize_with(run.probes.len(), || None);
            run.compared.resize(run.probes.len(), None);
            for (pi, _) in run.probes.iter().enumerate().filter(|(_, p)| p.kind == Kind::Random) {
                let Some(((j, compared), o)) = judged.next() else { break };
                run.compared[pi] = compared;
                verdicts[pi] = Some(j);
                st.outs[ri][pi] = o;
            }
        }
        self.random_stream(st, conv, &mut cands, 16 * kept as u64)?;
        let mut cands = cands.all;
        cands.sort_by(|a, b| (a.run, a.vi, &a.want).cmp(&(b.run, b.vi, &b.want)));
        self.phase(&format!("random probes judged; {} disagreements to minimize", cands.len()));
        Ok(cands)
    }

    /// Sends the random probes `which` (indices into `random`), then the words `extra`
    /// (variant, word), from address `base`: their outcomes into `outs`, and `extra`'s
    /// returned.
    fn send_random(
        &self,
        random: &[&Probe],
        which: &[usize],
        outs: &mut [Option<Outcome>],
        base: u64,
        extra: &[(usize, Word)],
    ) -> Result<Vec<Outcome>, NvdisasmError> {
        let (words, vis): (Vec<Word>, Vec<usize>) = which.iter().map(|&k| (random[k].word, random[k].vi)).chain(extra.iter().map(|&(vi, w)| (w, vi))).unzip();
        let mut got = self.disassemble(base, &words, &vis)?;
        got.resize_with(words.len(), missing_outcome);
        let tried = got.split_off(which.len());
        for (&k, o) in which.iter().zip(got) {
            outs[k] = Some(o);
        }
        Ok(tried)
    }

    /// `judged` (by random probe) with a verdict for each probe of `random` that has an
    /// outcome and none yet.
    fn judge_sent(&self, random: &[&Probe], outs: &[Option<Outcome>], mut judged: Vec<Judgement>) -> Vec<Judgement> {
        judged.resize_with(random.len(), || None);
        let todo: Vec<usize> = (0..random.len()).filter(|&k| judged[k].is_none() && outs[k].is_some()).collect();
        let pairs: Vec<(&Probe, &Outcome)> = todo.iter().filter_map(|&k| Some((random[k], outs[k].as_ref()?))).collect();
        for (&k, j) in todo.iter().zip(self.judge_random(&pairs)) {
            judged[k] = Some(j);
        }
        judged
    }

    /// The disagreements among the judged kept random probes (by random probe, in probe
    /// order; `outs` their outcomes), one candidate per (page run, variant, changed
    /// elements): the first word that showed it, and how many did.
    fn candidates_among(&self, st: &GroupState, judged: &[Judgement], outs: &[Option<Outcome>]) -> Candidates {
        let mut cands = Candidates::default();
        let random = st.runs.iter().enumerate().flat_map(|(ri, r)| r.probes.iter().filter(|p| p.kind == Kind::Random).map(move |p| (ri, p)));
        for (((ri, p), j), o) in random.zip(judged).zip(outs) {
            if let (Some((Judged::Minimize(elems), _)), Some(o)) = (j, o) {
                cands.add(ri, p.vi, || self.codec.extract(p.vi, p.word), elems, o);
            }
        }
        cands
    }

    /// The minimization's first round ([`Minimizer::first_round`]) for the candidates
    /// among the judged kept random probes (`outs` their outcomes): (variant, word) of
    /// each try. `minimize` asks the same of them whatever the other probes show, as long
    /// as none of those comes first in probe order.
    fn tries_ahead(&self, st: &GroupState, judged: &[Judgement], outs: &[Option<Outcome>]) -> Vec<(usize, Word)> {
        let cands = self.candidates_among(st, judged, outs);
        let shrink = Minimizer { cx: self, cands: cands.all, rounds: self.opts.minimize_rounds, round: 0, singles: true };
        let tries = shrink.first_round();
        shrink.vis(&tries).into_iter().zip(shrink.words(&tries)).collect()
    }

    /// Each random probe's verdict and its comparison's ([`judge::Analysis::judge_compared`]),
    /// judged on `nv.jobs` threads, each a contiguous share: in probe order, as one thread
    /// would give them.
    fn judge_random(&self, random: &[(&Probe, &Outcome)]) -> Vec<(Judged, Option<Verdict>)> {
        let share = random.len().div_ceil(self.nv.jobs.max(1)).max(1);
        let judge = |p: &Probe, o: &Outcome| self.analysis(p.vi).judge_compared(p, &self.codec.extract(p.vi, p.word), o, None);
        std::thread::scope(|s| {
            let shares: Vec<_> = random.chunks(share).map(|ps| s.spawn(move || ps.iter().map(|(p, o)| judge(p, o)).collect::<Vec<_>>())).collect();
            shares.into_iter().flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        })
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
            Judged::Minimize(elems) => cands.add(ri, p.vi, || values, &elems, &o),
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
}

/// The random words' disagreements, one candidate per (page run, variant, changed
/// elements): the first word that showed it, and how many did.
#[derive(Default)]
pub(super) struct Candidates {
    pub(super) all: Vec<Candidate>,
    /// Per (page run, variant), its candidates in `all` (a few: one per set of changed
    /// elements), so that a word that adds to one allocates nothing.
    by_variant: std::collections::HashMap<(usize, usize), Vec<usize>>,
}

impl Candidates {
    /// A disagreement of variant `vi` on `want`; `values` (extracted again: most words
    /// add to a candidate already there, and half a seed run's words disagree) only for
    /// a new candidate.
    fn add(&mut self, run: usize, vi: usize, values: impl FnOnce() -> Values, want: &[Element], o: &Outcome) {
        let mine = self.by_variant.entry((run, vi)).or_default();
        match mine.iter().find(|&&ci| self.all[ci].want == want) {
            Some(&ci) => self.all[ci].count += 1,
            None => {
                mine.push(self.all.len());
                self.all.push(Candidate { run, vi, values: values(), want: want.to_vec(), count: 1, outcome: o.clone() });
            }
        }
    }
}

/// A random word that disagrees, being shrunk; `outcome` is nvdisasm's for `values`.
pub(super) struct Candidate {
    pub(super) run: usize,
    pub(super) vi: usize,
    pub(super) values: Values,
    /// The disagreement to keep: the changed elements, or `<legality>`.
    pub(super) want: Vec<Element>,
    pub(super) count: usize,
    pub(super) outcome: Outcome,
}
