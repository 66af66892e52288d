//! Many solvers, one nvdisasm batch: each solver thread asks for its few hundred words and
//! waits; when every active solver is waiting, the last one to arrive sends all requests
//! as one batch (which nvdisasm's wrapper splits over `--jobs` processes) and hands each
//! solver its part. A process start costs as much as ~20,000 words, so solving a thousand
//! forms step by step costs a few dozen batches instead of thousands of processes.

use super::{DiscoverError, Source};
use crate::oracle::nvdisasm::Outcome;
use crate::spec::Arch;
use crate::word::Word;
use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The outcomes, and the batch address of the request's first word.
type Reply = Result<(u64, Vec<Outcome>), DiscoverError>;
/// (ticket, words) requests of one architecture.
type Requests = Vec<(u64, Vec<Word>)>;

#[derive(Default)]
struct State {
    /// Solvers between [`Batcher::enter`] and [`Batcher::leave`].
    active: usize,
    pending: Vec<(u64, Arch, Vec<Word>)>,
    done: HashMap<u64, Reply>,
    next: u64,
    flushing: bool,
    batches: usize,
    words: usize,
}

pub struct Batcher<'a> {
    inner: &'a dyn Source,
    state: Mutex<State>,
    wake: Condvar,
}

/// Keeps a solver counted as active while it lives.
pub struct Active<'b, 'a>(&'b Batcher<'a>);

impl Drop for Active<'_, '_> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.active -= 1;
        drop(s);
        self.0.wake.notify_all();
    }
}

impl<'a> Batcher<'a> {
    pub fn new(inner: &'a dyn Source) -> Self {
        Batcher { inner, state: Mutex::new(State::default()), wake: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers the calling thread as a solver until the guard drops: batches wait for
    /// every active solver's request.
    pub fn enter(&self) -> Active<'_, 'a> {
        self.lock().active += 1;
        Active(self)
    }

    /// (batches sent, words sent).
    pub fn totals(&self) -> (usize, usize) {
        let s = self.lock();
        (s.batches, s.words)
    }

    /// Sends every pending request as one batch per architecture and files the replies;
    /// a request the inner source kept a reply to is answered with it, not sent.
    fn flush(&self, requests: Vec<(u64, Arch, Vec<Word>)>) -> Vec<(u64, Reply)> {
        let kept = self.inner.replies();
        let mut replies = vec![];
        let mut by_arch: Vec<(Arch, Requests)> = vec![];
        for (t, arch, words) in requests {
            if let Some(r) = kept.and_then(|k| k.get(&arch.nvdisasm_name(), &words)) {
                replies.push((t, Ok(r)));
                continue;
            }
            match by_arch.iter_mut().find(|(a, _)| *a == arch) {
                Some((_, v)) => v.push((t, words)),
                None => by_arch.push((arch, vec![(t, words)])),
            }
        }
        for (arch, reqs) in by_arch {
            let all: Vec<Word> = reqs.iter().flat_map(|(_, w)| w.iter().copied()).collect();
            match self.inner.outcomes_at(arch, &all) {
                Ok((base, out)) => {
                    let mut it = out.into_iter();
                    let mut at = base;
                    for (t, w) in reqs {
                        let part: Vec<Outcome> = it.by_ref().take(w.len()).collect();
                        if let Some(k) = kept {
                            k.put(&arch.nvdisasm_name(), &w, (at, part.clone()));
                        }
                        replies.push((t, Ok((at, part))));
                        at = at.wrapping_add(16 * w.len() as u64);
                    }
                }
                Err(e) => replies.extend(reqs.into_iter().map(|(t, _)| (t, Err(e.clone())))),
            }
        }
        replies
    }
}

impl Source for Batcher<'_> {
    fn outcomes(&self, arch: Arch, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
        Ok(self.outcomes_at(arch, words)?.1)
    }

    fn outcomes_at(&self, arch: Arch, words: &[Word]) -> Result<(u64, Vec<Outcome>), DiscoverError> {
        let mut s = self.lock();
        let ticket = s.next;
        s.next += 1;
        s.pending.push((ticket, arch, words.to_vec()));
        loop {
            if let Some(r) = s.done.remove(&ticket) {
                return r;
            }
            // Every active solver has asked (a thread outside enter/leave counts as one).
            if !s.flushing && !s.pending.is_empty() && s.pending.len() >= s.active.max(1) {
                let requests = std::mem::take(&mut s.pending);
                s.flushing = true;
                s.batches += 1;
                s.words += requests.iter().map(|r| r.2.len()).sum::<usize>();
                drop(s);
                let replies = self.flush(requests);
                s = self.lock();
                s.flushing = false;
                s.done.extend(replies);
                self.wake.notify_all();
                continue;
            }
            s = self.wake.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::replies::Replies;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Echoes each word's low bits as text and counts calls.
    struct Echo(AtomicUsize);

    impl Source for Echo {
        fn outcomes(&self, _: Arch, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(words.iter().map(|w| Outcome::Printed { text: format!("{}", w.0) }).collect())
        }
    }

    #[test]
    fn requests_of_all_solvers_share_batches_and_get_their_own_replies() {
        let echo = Echo(AtomicUsize::new(0));
        let b = Batcher::new(&echo);
        // Every solver enters before any asks (on a loaded machine a thread could otherwise
        // finish alone before the next one starts).
        let all_in = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for t in 0..8u128 {
                let (b, all_in) = (&b, &all_in);
                s.spawn(move || {
                    let _a = b.enter();
                    all_in.wait();
                    for step in 0..5u128 {
                        let words: Vec<Word> = (0..=t).map(|k| Word(t * 1000 + step * 10 + k)).collect();
                        let out = b.outcomes(Arch(90), &words).unwrap();
                        let want: Vec<Outcome> = words.iter().map(|w| Outcome::Printed { text: format!("{}", w.0) }).collect();
                        assert_eq!(out, want);
                    }
                });
            }
        });
        let calls = echo.0.load(Ordering::SeqCst);
        assert!(calls < 40, "{calls} calls for 40 requests: nothing was merged");
        assert_eq!(b.totals().1, (1..=8).sum::<usize>() * 5);
    }

    /// An echo that keeps its replies, as nvdisasm does in the test suite.
    struct Keeping(Echo, Replies);

    impl Source for Keeping {
        fn outcomes(&self, arch: Arch, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
            self.0.outcomes(arch, words)
        }

        fn outcomes_at(&self, arch: Arch, words: &[Word]) -> Result<(u64, Vec<Outcome>), DiscoverError> {
            Ok((0x100, self.outcomes(arch, words)?))
        }

        fn replies(&self) -> Option<&Replies> {
            Some(&self.1)
        }
    }

    /// A request asked again is answered from the kept reply, at the address it was
    /// printed at, without reaching the source; another architecture's is not.
    #[test]
    fn a_request_asked_again_is_answered_from_the_kept_reply() {
        let src = Keeping(Echo(AtomicUsize::new(0)), Replies::default());
        let b = Batcher::new(&src);
        let (one, two) = (vec![Word(1), Word(2)], vec![Word(3)]);
        let first = b.outcomes_at(Arch(90), &one).unwrap();
        assert_eq!(first.0, 0x100);
        assert_eq!(b.outcomes_at(Arch(90), &two).unwrap().0, 0x100);
        assert_eq!(b.outcomes_at(Arch(90), &one).unwrap(), first);
        assert_eq!(src.0 .0.load(Ordering::SeqCst), 2, "the repeated request reached the source");
        b.outcomes_at(Arch(100), &one).unwrap();
        assert_eq!(src.0 .0.load(Ordering::SeqCst), 3);
        assert_eq!(src.1.hits(), 1);
    }
}
