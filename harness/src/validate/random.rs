//! The random probe words: each variant's kept ones, added after its structured probes,
//! and the streamed ones past [`KEEP_RANDOM`], from seeded streams with listed values and
//! the control bits nvdisasm accepts.

use super::*;
use crate::gen::ListedValues;

/// Each variant's kept random words after its structured probes (from the page's seeded
/// stream, variant after variant: the words of one pass that built both), with `outs`
/// (the outcomes so far, by probe) moved along; a random word's outcome is still to come.
pub(super) fn add_random(runs: &mut [PageRun], outs: &mut [Vec<Outcome>], codec: &Codec, conv: &Conventions, opts: &Options) {
    for (run, outs) in runs.iter_mut().zip(outs) {
        let mut rng = Rng::new(opts.seed ^ (run.page.arch.0 as u64) << 32);
        let mut old = std::mem::take(&mut run.probes).into_iter().zip(std::mem::take(outs));
        for (&vi, &n) in run.vis.iter().zip(&run.structured) {
            for (p, o) in old.by_ref().take(n) {
                run.probes.push(p);
                outs.push(o);
            }
            let gen = RandomWords::new(codec, vi, conv.get(codec.variant(vi).arch, &codec.variant(vi).key));
            for _ in 0..opts.random_per_variant.min(KEEP_RANDOM) {
                run.probes.push(Probe { vi, word: gen.word(codec, &mut rng), kind: Kind::Random });
                outs.push(Outcome::Silent);
            }
        }
    }
}

/// Random words of one variant: listed values, and control bits nvdisasm accepts for
/// this form (learned), so that `.reuse`, barriers and the terminator are checked too,
/// when the page calls every bit 105–125 a control field. Two alike make the same words
/// from the same stream.
#[derive(PartialEq)]
pub(super) struct RandomWords {
    vi: usize,
    listed: ListedValues,
    legal: Vec<usize>,
    barriers: Vec<usize>,
}

impl RandomWords {
    pub(super) fn new(codec: &Codec, vi: usize, learned: Option<&FormConventions>) -> Self {
        let learned = learned.filter(|_| controls_cover_105_125(codec.variant(vi)));
        let legal = learned.map(|c| c.legal_opex()).unwrap_or_default();
        let barriers = learned.map(|c| c.legal_barriers()).unwrap_or_default();
        RandomWords { vi, listed: ListedValues::new(codec.variant(vi)), legal, barriers }
    }

    pub(super) fn word(&self, codec: &Codec, rng: &mut Rng) -> Word {
        let vals = self.listed.draw(codec.variant(self.vi), rng);
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
pub(super) struct RandomStream {
    /// (page run, generator, its stream, words still to make).
    todo: std::collections::VecDeque<(usize, RandomWords, Rng, usize)>,
}

impl RandomStream {
    pub(super) fn new(runs: &[PageRun], codec: &Codec, conv: &Conventions, opts: &Options) -> Self {
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
    pub(super) fn slice(&mut self, codec: &Codec, n: usize) -> Vec<(usize, Probe)> {
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

/// Does the page call every bit 105–125 part of a control field?
fn controls_cover_105_125(v: &Variant) -> bool {
    let m = v.fields.iter().filter(|f| f.is_control()).fold(crate::word::BitSet::EMPTY, |a, f| a.union(f.mask()));
    (105..=125).all(|b| m.contains(b))
}
