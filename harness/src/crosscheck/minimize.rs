//! Shrinks a disagreeing word: fewest fields away from their distilled value (the zero
//! word's, [`crate::gen::distilled_values`]) while the same disagreement (class and
//! field blamed, see [`Disagreement::signature`]) persists and the word stays its
//! form's. Control fields are kept: they decide legality.
//!
//! Each round sends every candidate's "this field back to default" tries in one nvdisasm
//! batch per architecture, then, where several fields could go, one more batch with all
//! of them gone at once and with all but one gone; a process start costs some 0.3 s, so
//! tries are never sent one by one.

use super::judge::{expect, form_of, judge, Disagreement};
use crate::codec::{Codec, Values};
use crate::gen::distilled_values;
use crate::oracle::nvdisasm::{Nvdisasm, NvdisasmError};
use crate::spec::Arch;
use crate::word::Word;
use std::collections::BTreeMap;

/// A disagreeing word of form `vi` and what it showed.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub arch: Arch,
    pub vi: usize,
    pub word: Word,
    pub disagreement: Disagreement,
}

/// What minimization did, for the summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub batches: usize,
    pub words: usize,
}

/// The non-control fields of `c`'s word that are away from their default.
fn movable(codec: &Codec, c: &Candidate, defaults: &Values) -> Vec<usize> {
    let v = codec.variant(c.vi);
    let vals = codec.extract(c.vi, c.word);
    (0..v.fields.len()).filter(|&fi| !v.fields[fi].is_control() && vals.get(fi) != defaults.get(fi)).collect()
}

/// `c`'s word with fields `reset` at their default.
fn reset(codec: &Codec, c: &Candidate, defaults: &Values, fields: &[usize]) -> Word {
    let mut vals = codec.extract(c.vi, c.word);
    for &fi in fields {
        vals.set(fi, defaults.get(fi));
    }
    codec.encode_unchecked(c.vi, &vals)
}

/// Minimizes every candidate in place, in at most `rounds` rounds.
pub fn minimize(nv: &Nvdisasm, codec: &Codec, cands: &mut [Candidate], rounds: usize) -> Result<Stats, NvdisasmError> {
    let defaults: Vec<Values> = cands.iter().map(|c| distilled_values(codec.variant(c.vi))).collect();
    let mut active: Vec<usize> = (0..cands.len()).collect();
    let mut stats = Stats::default();
    for _ in 0..rounds {
        // Singles: each movable field back to its default.
        let mut tries: Vec<(usize, usize, Word)> = vec![];
        for &ci in &active {
            for f in movable(codec, &cands[ci], &defaults[ci]) {
                tries.push((ci, f, reset(codec, &cands[ci], &defaults[ci], &[f])));
            }
        }
        if tries.is_empty() {
            break;
        }
        let keeps = run(nv, codec, cands, &tries.iter().map(|&(ci, _, w)| (ci, w)).collect::<Vec<_>>(), &mut stats)?;
        let mut removable: BTreeMap<usize, Vec<(usize, Word)>> = BTreeMap::new();
        for (&(ci, f, w), keep) in tries.iter().zip(keeps) {
            if keep {
                removable.entry(ci).or_default().push((f, w));
            }
        }
        // Where several could go: all of them at once, else all but one (the first of
        // those that keeps the disagreement wins), else the first alone.
        let mut wider: Vec<(usize, Word)> = vec![];
        for (&ci, fs) in removable.iter().filter(|(_, fs)| fs.len() > 1) {
            let all: Vec<usize> = fs.iter().map(|x| x.0).collect();
            wider.push((ci, reset(codec, &cands[ci], &defaults[ci], &all)));
            for &(keep, _) in fs {
                let but: Vec<usize> = all.iter().copied().filter(|&f| f != keep).collect();
                wider.push((ci, reset(codec, &cands[ci], &defaults[ci], &but)));
            }
        }
        let wider_keeps = run(nv, codec, cands, &wider, &mut stats)?;
        let mut best: BTreeMap<usize, Word> = BTreeMap::new();
        for (&(ci, w), keep) in wider.iter().zip(wider_keeps) {
            if keep {
                best.entry(ci).or_insert(w);
            }
        }
        active.retain(|ci| removable.contains_key(ci));
        for (ci, fs) in removable {
            cands[ci].word = best.get(&ci).copied().unwrap_or(fs[0].1);
        }
        if active.is_empty() {
            break;
        }
    }
    // The final words' texts, judged again (a reset may have changed the text shown).
    let all: Vec<(usize, Word)> = cands.iter().enumerate().map(|(ci, c)| (ci, c.word)).collect();
    let finals = judge_all(nv, codec, cands, &all, &mut stats)?;
    for ((ci, _), d) in all.into_iter().zip(finals) {
        if let Some(d) = d {
            cands[ci].disagreement = d;
        }
    }
    Ok(stats)
}

/// Does each try (candidate, word) show its candidate's disagreement, as its form?
fn run(nv: &Nvdisasm, codec: &Codec, cands: &[Candidate], tries: &[(usize, Word)], stats: &mut Stats) -> Result<Vec<bool>, NvdisasmError> {
    let judged = judge_all(nv, codec, cands, tries, stats)?;
    Ok(tries
        .iter()
        .zip(judged)
        .map(|(&(ci, w), d)| {
            let c = &cands[ci];
            form_of(codec, c.arch, w, Some(c.vi)) == Some(c.vi) && d.is_some_and(|d| d.signature() == c.disagreement.signature())
        })
        .collect())
}

/// Each try judged as its candidate's form; one nvdisasm call per architecture.
fn judge_all(
    nv: &Nvdisasm,
    codec: &Codec,
    cands: &[Candidate],
    tries: &[(usize, Word)],
    stats: &mut Stats,
) -> Result<Vec<Option<Disagreement>>, NvdisasmError> {
    let mut by_arch: BTreeMap<Arch, Vec<usize>> = BTreeMap::new();
    for (i, &(ci, _)) in tries.iter().enumerate() {
        by_arch.entry(cands[ci].arch).or_default().push(i);
    }
    let mut out = vec![None; tries.len()];
    for (arch, idx) in by_arch {
        let words: Vec<Word> = idx.iter().map(|&i| tries[i].1).collect();
        let outs = nv.disassemble(&arch.nvdisasm_name(), &words)?;
        stats.batches += 1;
        stats.words += words.len();
        for (k, (&i, o)) in idx.iter().zip(&outs).enumerate() {
            let (ci, w) = tries[i];
            let vi = cands[ci].vi;
            out[i] = judge(codec, Some(vi), w, 16 * k as u64, Some(&expect(codec, vi, w)), o);
        }
    }
    Ok(out)
}
