//! A group's first nvdisasm batch: the learning words (see [`crate::oracle::learn`]) with
//! the structured probes, which need no conventions, so that the two share their runs.

use super::stored::{self, Seen, Shown};
use super::*;
use crate::oracle::learn::Lesson;

/// What the first batch gives: the learned conventions, the words that check the
/// stored ones ([`stored::to_show`]), what nvdisasm printed for those of them it was
/// sent (the rest of the learning outcomes are dropped here), and the outcomes of the
/// kept random words that rode with the batch's second round (else the random batch
/// sends them).
pub(super) struct Learned {
    pub(super) conv: Conventions,
    pub(super) shown: Vec<Shown>,
    pub(super) seen: Seen,
    pub(super) random: Option<Sent>,
}

/// What nvdisasm printed for the kept random words, by random probe (in probe order;
/// `None`: not sent yet, see [`Group::random_batch`]), and the address the next word
/// goes at.
#[derive(Default)]
pub(super) struct Sent {
    pub(super) outs: Vec<Option<Outcome>>,
    pub(super) next_at: u64,
}

/// Probes by (page run, probe index).
type At = Vec<(usize, usize)>;

/// The structured probes of `st` that nvdisasm may reject, and the others, by (run,
/// probe), in probe order (random probes left out).
fn doubtful_and_legal(codec: &Codec, st: &GroupState) -> (At, At) {
    let (mut doubtful, mut legal) = (vec![], vec![]);
    for (ri, run) in st.runs.iter().enumerate() {
        for (pi, p) in run.probes.iter().enumerate().filter(|(_, p)| p.kind != Kind::Random) {
            if may_be_rejected(codec, p) { &mut doubtful } else { &mut legal }.push((ri, pi));
        }
    }
    (doubtful, legal)
}

/// The words and variants of the probes at `at`.
fn words_at(st: &GroupState, at: &[(usize, usize)]) -> (Vec<Word>, Vec<usize>) {
    at.iter().map(|&(ri, pi)| (st.runs[ri].probes[pi].word, st.runs[ri].probes[pi].vi)).unzip()
}

/// Sends the learning words of `vis` (one architecture, `arch`) and the structured
/// probes of `st` (outcomes into `st.outs`, each variant's base word's parsed into its
/// run's `base_actual`), and adds the kept random words to `st` ([`add_random`]). The
/// learning words go first, at address 0 on, as [`crate::oracle::learn::learn`] sends
/// them. From [`APART_FROM`] words on, the probes nvdisasm should accept go to runs of
/// their own: a run with one illegal word in it runs twice (the first run only names the
/// illegal words), and the learning words' opex sweep has illegal words, as have the
/// probes nvdisasm may reject. That second run carries the random words: their control
/// bits come from the opex and barrier sweeps' legality, which the first run tells
/// ([`Lesson::guess`]); should the texts read otherwise, they are made again and the
/// random batch sends them. `hold_back`: the last of each variant's random words do not
/// ride it (see [`second_round`]).
pub(super) fn first_batch(
    codec: &Codec,
    nv: &Nvdisasm,
    arch: &str,
    vis: &[usize],
    st: &mut GroupState,
    opts: &Options,
    hold_back: bool,
) -> Result<Learned, NvdisasmError> {
    let lesson = vis.first().map(|&vi| Lesson::new(codec, vis, codec.variant(vi).arch));
    let learn_words = lesson.as_ref().map(Lesson::words).unwrap_or_default();
    let (doubtful, legal) = doubtful_and_legal(codec, st);
    let (legal_words, legal_vis) = words_at(st, &legal);
    let (doubtful_words, doubtful_vis) = words_at(st, &doubtful);
    let parts =
        [(learn_words.as_slice(), None), (doubtful_words.as_slice(), Some(doubtful_vis.as_slice())), (legal_words.as_slice(), Some(legal_vis.as_slice()))];
    let apart = legal_words.len() >= APART_FROM;
    let first = if apart { &parts[..2] } else { &parts[..] };
    let (screened, legal_outs) = std::thread::scope(|s| {
        let legal_outs = apart.then(|| s.spawn(|| send(codec, nv, arch, 16 * (learn_words.len() + doubtful_words.len()) as u64, &parts[2..])));
        let screened = nv.screen(arch, 0, &first.iter().flat_map(|(w, _)| w.iter().copied()).collect::<Vec<_>>());
        (screened, legal_outs.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).transpose())
    });
    let (screened, legal_outs) = (screened?, legal_outs?);
    // Guessed conventions while some words are still to print; the learned ones otherwise.
    let guess = match (&lesson, screened.iter().any(Option::is_none)) {
        (Some(l), true) => Some(l.guess(codec, |i| screened.get(i).and_then(Option::as_ref).is_none_or(|o| printed(o).is_some()))),
        _ => None,
    };
    if let Some(g) = &guess {
        add_random(&mut st.runs, &mut st.outs, codec, g, opts);
    }
    let (outs, random) = second_round(codec, nv, arch, st, first, screened, hold_back)?;
    let mut outs = outs.into_iter().chain(legal_outs.into_iter().flatten());
    let learned = outs.next().unwrap_or_default();
    let (doubtful, legal) = doubtful_and_legal(codec, st);
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
    let random = match guess {
        Some(g) if guessed_alike(codec, st, &g, &conv) => random,
        Some(_) => {
            // The guess made other words than the conventions make: these go.
            strip_random(st);
            add_random(&mut st.runs, &mut st.outs, codec, &conv, opts);
            None
        }
        None => {
            add_random(&mut st.runs, &mut st.outs, codec, &conv, opts);
            None
        }
    };
    let shown = stored::to_show(codec, vis, &conv);
    let wanted: std::collections::HashSet<Word> = shown.iter().map(Shown::word).collect();
    let seen = (0u64..).zip(learn_words).zip(learned).filter(|((_, w), _)| wanted.contains(w)).map(|((i, w), o)| (w, (16 * i, o))).collect();
    Ok(Learned { conv, shown, seen, random })
}

/// The outcomes of the first batch's parts, and of the random words sent.
type Second = (Vec<Vec<Outcome>>, Option<Sent>);

/// The first run's words again, then the kept random words of `st`: one batch, with no
/// word the first run named illegal. The places of the words the first run settled go to
/// random words (NOPs once those run out): the first run's other words keep their
/// addresses, and nvdisasm is sent no word for nothing (a word's outcome depends on the
/// word and its address alone; random words' targets are rewritten as at address 0).
/// The outcomes of `first`'s parts (as [`split`] gives them) and the random words' (in
/// probe order, targets rewritten), or none where the first run settled every word.
/// `hold_back`: the last of each variant's random words do not ride ([`ridden`]); they
/// wait for the random batch's second run, which carries the minimization's first round
/// (see [`Group::random_batch`]).
fn second_round(
    codec: &Codec,
    nv: &Nvdisasm,
    arch: &str,
    st: &GroupState,
    first: &[(&[Word], Option<&[usize]>)],
    screened: Vec<Option<Outcome>>,
    hold_back: bool,
) -> Result<Second, NvdisasmError> {
    if screened.iter().all(Option::is_some) {
        return Ok((split(codec, 0, first, screened.into_iter().flatten().collect()), None));
    }
    let probes: Vec<&Probe> = st.runs.iter().flat_map(|r| &r.probes).filter(|p| p.kind == Kind::Random).collect();
    let ride: Vec<usize> = match hold_back {
        true => ridden(&probes).iter().enumerate().filter(|(_, &f)| f).map(|(k, _)| k).collect(),
        false => (0..probes.len()).collect(),
    };
    let random: Vec<Word> = ride.iter().map(|&k| probes[k].word).collect();
    let words: Vec<Word> = first.iter().flat_map(|(w, _)| w.iter().copied()).collect();
    let (all, at) = fill_settled(&words, &screened, &random, crate::oracle::nvdisasm::nop(arch));
    let mut outs = nv.disassemble_at(arch, 0, &all)?;
    outs.resize_with(all.len(), missing_outcome);
    let mut random_outs = vec![None; probes.len()];
    for (&i, &k) in at.iter().zip(&ride) {
        // A placeholder that allocates nothing: a random word's place is one the first
        // run settled or lies past the first run's words, so it is never read again.
        let mut o = std::mem::replace(&mut outs[i], Outcome::Silent);
        target_at_zero(codec, 16 * i as u64, &mut o, probes[k].vi);
        random_outs[k] = Some(o);
    }
    outs.truncate(words.len());
    let firsts = screened.into_iter().zip(outs).map(|(s, o)| s.unwrap_or(o)).collect();
    let sent = Sent { outs: random_outs, next_at: 16 * all.len() as u64 };
    Ok((split(codec, 0, first, firsts), (!probes.is_empty()).then_some(sent)))
}

/// Which of the kept random probes (in probe order) a group sends first when it sends
/// them in two runs: all but the last [`HELD_BACK`]th of each variant's (of each stretch
/// of one variant's; all of a stretch shorter than that). Both runs sample every
/// variant, a disagreement's first word (the one minimized) is most often in the first,
/// and the second stays small: an illegal word among its minimization words makes
/// nvdisasm run all of it again, and each variant's words are one stretch in the first
/// run, so a variant whose random words are often illegal (discovered pages have such)
/// reruns few of the first run's chunks.
pub(super) fn ridden(random: &[&Probe]) -> Vec<bool> {
    let mut first = Vec::with_capacity(random.len());
    for stretch in random.chunk_by(|a, b| a.vi == b.vi) {
        let now = stretch.len() - stretch.len() / HELD_BACK;
        first.extend((0..stretch.len()).map(|k| k < now));
    }
    first
}

/// The second round's batch: `words` with each place `screened` settled given to the next
/// of `random` (a `nop` once they run out), then the random words left; and each random
/// word's place in it.
fn fill_settled(words: &[Word], screened: &[Option<Outcome>], random: &[Word], nop: Word) -> (Vec<Word>, Vec<usize>) {
    let mut all = Vec::with_capacity(words.len().max(screened.len()) + random.len());
    let mut at = Vec::with_capacity(random.len());
    let mut next = random.iter();
    for (&w, s) in words.iter().zip(screened) {
        if s.is_none() {
            all.push(w);
        } else if let Some(&r) = next.next() {
            at.push(all.len());
            all.push(r);
        } else {
            all.push(nop);
        }
    }
    for &r in next {
        at.push(all.len());
        all.push(r);
    }
    (all, at)
}

/// Did the guessed conventions give every variant of `st` the random words the learned
/// ones give (the same control values to draw from)?
fn guessed_alike(codec: &Codec, st: &GroupState, guess: &Conventions, learned: &Conventions) -> bool {
    st.runs.iter().flat_map(|r| &r.vis).all(|&vi| {
        let v = codec.variant(vi);
        RandomWords::new(codec, vi, guess.get(v.arch, &v.key)) == RandomWords::new(codec, vi, learned.get(v.arch, &v.key))
    })
}

/// `st` without its random probes (and their outcomes).
fn strip_random(st: &mut GroupState) {
    for (run, outs) in st.runs.iter_mut().zip(&mut st.outs) {
        let keep: Vec<bool> = run.probes.iter().map(|p| p.kind != Kind::Random).collect();
        let mut k = keep.iter();
        run.probes.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        outs.retain(|_| *k.next().unwrap_or(&true));
    }
}

/// Sends `parts` (words, and their variants: `None` for learning words, whose outcomes
/// stay as printed) as one nvdisasm batch from address `base`; the outcomes per part
/// ([`split`]).
fn send(codec: &Codec, nv: &Nvdisasm, arch: &str, base: u64, parts: &[(&[Word], Option<&[usize]>)]) -> Result<Vec<Vec<Outcome>>, NvdisasmError> {
    let all: Vec<Word> = parts.iter().flat_map(|(w, _)| w.iter().copied()).collect();
    Ok(split(codec, base, parts, nv.disassemble_at(arch, base, &all)?))
}

/// `outs`, the outcomes of `parts` sent as one batch from address `base`, per part,
/// branch targets of the parts with variants rewritten as at address 0 ([`targets_at_zero`]).
fn split(codec: &Codec, base: u64, parts: &[(&[Word], Option<&[usize]>)], mut outs: Vec<Outcome>) -> Vec<Vec<Outcome>> {
    outs.resize_with(parts.iter().map(|(w, _)| w.len()).sum(), missing_outcome);
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
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_places_go_to_random_words_then_nops() {
        let w = |x: u128| Word(x);
        let settled = || Some(Outcome::Silent);
        // Words 1 and 3 were settled by the first run: random words take their places,
        // the third random word follows; with one random word the second place is a NOP.
        let (words, screened) = ([w(10), w(11), w(12), w(13)], [None, settled(), None, settled()]);
        let (all, at) = fill_settled(&words, &screened, &[w(90), w(91), w(92)], w(0));
        assert_eq!(all, [w(10), w(90), w(12), w(91), w(92)]);
        assert_eq!(at, [1, 3, 4]);
        let (all, at) = fill_settled(&words, &screened, &[w(90)], w(0));
        assert_eq!(all, [w(10), w(90), w(12), w(0)]);
        assert_eq!(at, [1]);
    }

    #[test]
    fn the_first_run_takes_all_but_the_last_32nd_of_each_variants_random_words() {
        assert_eq!(HELD_BACK, 32);
        // Per stretch of one variant's words: how many ride, how many are held back.
        let counts = |vis: &[usize]| {
            let probes: Vec<Probe> = vis.iter().map(|&vi| Probe { vi, word: Word(0), kind: Kind::Random }).collect();
            let ridden = ridden(&probes.iter().collect::<Vec<_>>());
            let stretches = vis.chunk_by(|a, b| a == b).scan(0, |at, s| {
                *at += s.len();
                Some(&ridden[*at - s.len()..*at])
            });
            stretches.map(|r| (r.iter().filter(|&&x| x).count(), r.iter().rev().take_while(|&&x| !x).count())).collect::<Vec<_>>()
        };
        assert_eq!(counts(&[[0; 64].as_slice(), &[1; 31], &[2; 100], &[0; 32]].concat()), [(62, 2), (31, 0), (97, 3), (31, 1)]);
        assert_eq!(counts(&[]), []);
    }
}
