//! Minimizing a random disagreement: the fewest fields whose values still give it, found
//! by batched nvdisasm rounds.

use super::*;

/// A minimization try: candidate, values, and the field it drops when it is an "all but one".
pub(super) type Try = (usize, Values, Option<usize>);

/// Minimization outcomes by (variant, word).
pub(super) type Known = std::collections::HashMap<(usize, Word), Outcome>;

/// Most fields a candidate may have for every triple of them to be tried in one batch.
pub(super) const TRIPLES_UP_TO: usize = 12;

/// Shrinks each candidate to a smallest set of its non-zero non-control fields that still
/// shows the same disagreement. The first batch tries, for every candidate at once, each
/// field alone (most disagreements are one field's: then that field is the answer). The
/// next tries, for the others, each pair, each triple (up to [`TRIPLES_UP_TO`] fields)
/// and each "all but one"; a reproducing set no larger than the largest subsets tried is
/// then minimal. Larger ones go on for up to `rounds` batches after the singles, each
/// trying "without every field whose removal alone kept the disagreement" before "all but
/// one" again. Batches are few and large because every nvdisasm start costs some 0.25 s
/// of CPU: one batch per round for all candidates of a group of pages. (Trying pairs and
/// triples with the singles sent some 160 words per candidate, most of a big run's
/// minimization words, where the singles, some 10, usually settle it.)
pub(super) struct Minimizer<'c> {
    pub(super) cx: &'c Group<'c>,
    pub(super) cands: Vec<Candidate>,
    pub(super) rounds: usize,
    pub(super) round: usize,
    /// The singles' batch is the one being absorbed.
    pub(super) singles: bool,
}

impl Minimizer<'_> {
    pub(super) fn disagrees(&self, vi: usize, vals: &Values, out: &Outcome, want: &[Element]) -> bool {
        match printed(out) {
            None => want == [Element::Legality],
            Some(a) => {
                let w = self.cx.codec.encode_unchecked(vi, vals);
                let exp = self.cx.predict(vi, vals, w);
                compare(&exp, &a) == Verdict::Differ && changed(&exp, &a) == want
            }
        }
    }

    pub(super) fn fields_of(&self, vi: usize, vals: &Values) -> Vec<usize> {
        let v = self.cx.codec.variant(vi);
        (0..v.fields.len()).filter(|&fi| vals.get(fi) != 0 && !v.fields[fi].is_control()).collect()
    }

    /// The candidate's values with only the fields in `keep` (controls always kept).
    pub(super) fn only(&self, c: &Candidate, keep: &[usize]) -> Values {
        let v = self.cx.codec.variant(c.vi);
        let mut t = c.values;
        for fi in 0..v.fields.len() {
            if !v.fields[fi].is_control() && !keep.contains(&fi) {
                t.set(fi, 0);
            }
        }
        t
    }

    pub(super) fn words(&self, tries: &[Try]) -> Vec<Word> {
        tries.iter().map(|(ci, t, _)| self.cx.codec.encode_unchecked(self.cands[*ci].vi, t)).collect()
    }

    /// The variant of each try's word.
    pub(super) fn vis(&self, tries: &[Try]) -> Vec<usize> {
        tries.iter().map(|(ci, _, _)| self.cands[*ci].vi).collect()
    }

    /// Each field alone, of every candidate with several.
    pub(super) fn first_tries(&self) -> Vec<Try> {
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

    /// The wider tries of every candidate with several fields: what [`Self::absorb_singles`]
    /// asks for those no single field explains, known before the singles' outcomes.
    pub(super) fn wider_all(&self) -> Vec<Try> {
        if self.rounds == 0 {
            return vec![];
        }
        (0..self.cands.len()).filter(|&ci| self.fields_of(self.cands[ci].vi, &self.cands[ci].values).len() > 1).flat_map(|ci| self.wider_tries(ci)).collect()
    }

    /// [`Self::wider_all`] where it is at most [`AHEAD_UP_TO`] words: sent with the
    /// singles (else each candidate's wider tries wait for its singles' outcomes).
    pub(super) fn ahead(&self) -> Vec<Try> {
        let ahead = self.wider_all();
        if ahead.len() <= AHEAD_UP_TO {
            ahead
        } else {
            vec![]
        }
    }

    /// The first batch [`Group::minimize`] sends: the singles and [`Self::ahead`].
    pub(super) fn first_round(&self) -> Vec<Try> {
        let mut tries = self.first_tries();
        tries.extend(self.ahead());
        tries
    }

    /// Each pair, triple and "all but one" of candidate `ci`'s fields, smallest subsets
    /// first, so the first try that reproduces is a smallest one.
    pub(super) fn wider_tries(&self, ci: usize) -> Vec<Try> {
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
    pub(super) fn absorb_singles(&mut self, tries: &[Try], outs: Vec<Outcome>) -> Vec<Try> {
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
    pub(super) fn absorb(&mut self, tries: &[Try], outs: Vec<Outcome>) -> Vec<Try> {
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

pub(super) fn without(fs: &[usize], drop: &[usize]) -> Vec<usize> {
    fs.iter().copied().filter(|f| !drop.contains(f)).collect()
}
