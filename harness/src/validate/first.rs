//! A group's first nvdisasm batch: the learning words (see [`crate::oracle::learn`]) with
//! the structured probes, which need no conventions, so that the two share their runs.

use super::stored::{self, Seen, Shown};
use super::*;
use crate::oracle::learn::Lesson;

/// What the first batch gives: the learned conventions, the words that check the
/// stored ones ([`stored::to_show`]) and what nvdisasm printed for those of them it was
/// sent (the rest of the learning outcomes are dropped here).
pub(super) type Learned = (Conventions, Vec<Shown>, Seen);

/// Sends the learning words of `vis` (one architecture, `arch`) and the structured
/// probes of `st` (outcomes into `st.outs`, each variant's base word's parsed into its
/// run's `base_actual`). The learning words go first, at address 0 on, as
/// [`crate::oracle::learn::learn`] sends them. From [`APART_FROM`] words on, the probes
/// nvdisasm should accept go to runs of their own: a run with one illegal word in it runs
/// twice (the first run only names the illegal words), and the learning words' opex
/// sweep has illegal words, as have the probes nvdisasm may reject.
pub(super) fn first_batch(codec: &Codec, nv: &Nvdisasm, arch: &str, vis: &[usize], st: &mut GroupState) -> Result<Learned, NvdisasmError> {
    let lesson = vis.first().map(|&vi| Lesson::new(codec, vis, codec.variant(vi).arch));
    let learn_words = lesson.as_ref().map(Lesson::words).unwrap_or_default();
    let (mut legal, mut doubtful) = (vec![], vec![]);
    for (ri, run) in st.runs.iter().enumerate() {
        for (pi, p) in run.probes.iter().enumerate() {
            if may_be_rejected(codec, p) { &mut doubtful } else { &mut legal }.push((ri, pi));
        }
    }
    let words =
        |at: &[(usize, usize)]| -> (Vec<Word>, Vec<usize>) { at.iter().map(|&(ri, pi)| (st.runs[ri].probes[pi].word, st.runs[ri].probes[pi].vi)).unzip() };
    let (legal_words, legal_vis) = words(&legal);
    let (doubtful_words, doubtful_vis) = words(&doubtful);
    let parts =
        [(learn_words.as_slice(), None), (doubtful_words.as_slice(), Some(doubtful_vis.as_slice())), (legal_words.as_slice(), Some(legal_vis.as_slice()))];
    let mut outs = if legal_words.len() >= APART_FROM {
        let base = 16 * (learn_words.len() + doubtful_words.len()) as u64;
        let (first, legal_outs) = std::thread::scope(|s| {
            let legal_outs = s.spawn(|| send(codec, nv, arch, base, &parts[2..]));
            let first = send(codec, nv, arch, 0, &parts[..2]);
            (first, legal_outs.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        });
        let mut outs = first?;
        outs.extend(legal_outs?);
        outs
    } else {
        send(codec, nv, arch, 0, &parts)?
    }
    .into_iter();
    let learned = outs.next().unwrap_or_default();
    for (&(ri, pi), o) in doubtful.iter().chain(&legal).zip(outs.flatten()) {
        st.outs[ri][pi] = o;
    }
    for (ri, run) in st.runs.iter_mut().enumerate() {
        for (pi, p) in run.probes.iter().enumerate().filter(|(_, p)| p.kind == Kind::Base) {
            run.base_actual.insert(p.vi, printed(&st.outs[ri][pi]));
        }
    }
    let mut conv = Conventions::default();
    if let Some(l) = &lesson {
        l.read(codec, &learned, &mut conv);
    }
    let shown = stored::to_show(codec, vis, &conv);
    let wanted: std::collections::HashSet<Word> = shown.iter().map(Shown::word).collect();
    let seen = (0u64..).zip(learn_words).zip(learned).filter(|((_, w), _)| wanted.contains(w)).map(|((i, w), o)| (w, (16 * i, o))).collect();
    Ok((conv, shown, seen))
}

/// Sends `parts` (words, and their variants: `None` for learning words, whose outcomes
/// stay as printed) as one nvdisasm batch from address `base`; the outcomes per part,
/// branch targets of the others rewritten as at address 0 ([`targets_at_zero`]).
fn send(codec: &Codec, nv: &Nvdisasm, arch: &str, base: u64, parts: &[(&[Word], Option<&[usize]>)]) -> Result<Vec<Vec<Outcome>>, NvdisasmError> {
    let all: Vec<Word> = parts.iter().flat_map(|(w, _)| w.iter().copied()).collect();
    let mut outs = nv.disassemble_at(arch, base, &all)?;
    outs.resize_with(all.len(), missing_outcome);
    let mut at = base;
    let mut rest = outs.into_iter();
    let mut out = vec![];
    for (words, vis) in parts {
        let mut part: Vec<Outcome> = rest.by_ref().take(words.len()).collect();
        if let Some(vis) = vis {
            targets_at_zero(codec, at, &mut part, vis);
        }
        at = at.wrapping_add(16 * words.len() as u64);
        out.push(part);
    }
    Ok(out)
}

/// Could nvdisasm reject this structured probe? Fixed-bit flips, pairs of groups,
/// control values, and table values the page omits or calls INVALID.
fn may_be_rejected(codec: &Codec, p: &Probe) -> bool {
    let v = codec.variant(p.vi);
    match p.kind {
        Kind::Fixed { .. } | Kind::Pair { .. } => true,
        Kind::Field { field, value } => {
            v.fields[field].is_control() || v.field_table(field).is_some_and(|t| t.row(value).is_none_or(|r| r.kind == RowKind::Invalid))
        }
        Kind::Base | Kind::Random => false,
    }
}
