//! Requests of several threads sent to nvdisasm as one run, in the manner of a group
//! commit: while a merged run is under way, new requests wait; when it ends, the next run
//! takes every request that waits. A request that finds no run under way goes at once,
//! so nobody waits for a quorum. An nvdisasm process costs about 0.25 s of CPU before its
//! first word (as much as some 20 000 words), and threads that each ask a few hundred
//! words step by step (the test suite's discoveries, side by side) then share process
//! starts.
//!
//! A request's words sit wherever the merge puts them: only callers that accept any
//! address use it ([`super::nvdisasm::Nvdisasm::disassemble_anywhere`]). A word's outcome
//! depends on the word, the architecture and its address alone, so merging changes
//! nothing else.

use super::nvdisasm::{NvdisasmError, Outcome};
use crate::word::Word;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The address of a request's first word and its outcomes, or the merged run's error
/// (shared by every request of that run).
pub type Reply = Result<(u64, Vec<Outcome>), Arc<NvdisasmError>>;

/// One waiting request: (ticket, architecture as `nvdisasm -b` takes it, words).
type Request = (u64, String, Vec<Word>);
/// Requests by architecture: (ticket, words) each.
type ByArch = Vec<(String, Vec<(u64, Vec<Word>)>)>;

#[derive(Default)]
struct State {
    pending: Vec<Request>,
    done: HashMap<u64, Reply>,
    next: u64,
    /// Merged runs under way.
    running: usize,
    runs: usize,
    requests: usize,
}

/// The waiting requests and the runs under way, shared by the clones of an
/// [`super::nvdisasm::Nvdisasm`] that holds it.
pub struct Merger {
    state: Mutex<State>,
    wake: Condvar,
    runs_at_once: usize,
}

impl std::fmt::Debug for Merger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (runs, requests) = self.totals();
        write!(f, "Merger {{ runs_at_once: {}, runs: {runs}, requests: {requests} }}", self.runs_at_once)
    }
}

impl Merger {
    /// At most `runs_at_once` merged runs under way (at least one). One keeps the most
    /// requests per run; each run may still use several processes for a large batch.
    pub fn new(runs_at_once: usize) -> Self {
        Merger { state: Mutex::default(), wake: Condvar::new(), runs_at_once: runs_at_once.max(1) }
    }

    /// (merged runs, requests answered by them): how many process starts merging saved.
    pub fn totals(&self) -> (usize, usize) {
        let s = self.lock();
        (s.runs, s.requests)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `words` on `arch`, run by `run` (word 0 of its input at address 0) together with
    /// the requests of other threads that wait meanwhile.
    pub fn ask(&self, arch: &str, words: &[Word], run: impl Fn(&str, &[Word]) -> Result<Vec<Outcome>, NvdisasmError>) -> Reply {
        let mut s = self.lock();
        let ticket = s.next;
        s.next += 1;
        s.pending.push((ticket, arch.to_string(), words.to_vec()));
        loop {
            if let Some(r) = s.done.remove(&ticket) {
                return r;
            }
            if s.running < self.runs_at_once && !s.pending.is_empty() {
                let requests = std::mem::take(&mut s.pending);
                s.running += 1;
                s.runs += 1;
                s.requests += requests.len();
                let mut flight = InFlight { m: self, tickets: requests.iter().map(|r| r.0).collect(), replies: None };
                drop(s);
                flight.replies = Some(run_merged(requests, &run));
                drop(flight);
                s = self.lock();
                continue;
            }
            s = self.wake.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A merged run under way. Dropped, it files the run's replies and wakes the waiting
/// threads; should the run have panicked, each of its requests gets an error instead, so
/// that no thread waits for ever on a reply that will not come.
struct InFlight<'m> {
    m: &'m Merger,
    tickets: Vec<u64>,
    replies: Option<Vec<(u64, Reply)>>,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let replies = self.replies.take().unwrap_or_else(|| {
            let e = Arc::new(NvdisasmError::Internal("a merged nvdisasm run panicked".into()));
            self.tickets.iter().map(|&t| (t, Err(e.clone()))).collect()
        });
        let mut s = self.m.lock();
        s.running -= 1;
        s.done.extend(replies);
        drop(s);
        self.m.wake.notify_all();
    }
}

/// One run per architecture over the requests' words end to end; each request gets its
/// part and the address of its first word.
fn run_merged(requests: Vec<Request>, run: &impl Fn(&str, &[Word]) -> Result<Vec<Outcome>, NvdisasmError>) -> Vec<(u64, Reply)> {
    let mut by_arch: ByArch = vec![];
    for (t, arch, words) in requests {
        match by_arch.iter_mut().find(|(a, _)| *a == arch) {
            Some((_, v)) => v.push((t, words)),
            None => by_arch.push((arch, vec![(t, words)])),
        }
    }
    let mut replies = vec![];
    for (arch, reqs) in by_arch {
        let all: Vec<Word> = reqs.iter().flat_map(|(_, w)| w.iter().copied()).collect();
        match run(&arch, &all) {
            Ok(out) if out.len() == all.len() => {
                let mut it = out.into_iter();
                let mut at = 0u64;
                for (t, w) in reqs {
                    replies.push((t, Ok((at, it.by_ref().take(w.len()).collect()))));
                    at += 16 * w.len() as u64;
                }
            }
            // The runner's outcomes always match its words; a mismatch is its bug, not a
            // reason to hand a request some other word's outcome.
            Ok(out) => {
                let e = Arc::new(NvdisasmError::Internal(format!("a merged nvdisasm run gave {} outcomes for {} words", out.len(), all.len())));
                replies.extend(reqs.into_iter().map(|(t, _)| (t, Err(e.clone()))));
            }
            Err(e) => {
                let e = Arc::new(e);
                replies.extend(reqs.into_iter().map(|(t, _)| (t, Err(e.clone()))));
            }
        }
    }
    replies
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Each word's low bits and its address as text.
    fn echo(words: &[Word]) -> Vec<Outcome> {
        words.iter().enumerate().map(|(i, w)| Outcome::Printed { text: format!("{} at {:#x}", w.0, 16 * i) }).collect()
    }

    #[test]
    fn waiting_requests_share_runs_and_get_their_own_words_and_addresses() {
        let m = Merger::new(1);
        let runs = AtomicUsize::new(0);
        let slow_echo = |_: &str, w: &[Word]| {
            runs.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            Ok(echo(w))
        };
        std::thread::scope(|s| {
            for t in 0..8u128 {
                let (m, slow_echo) = (&m, &slow_echo);
                s.spawn(move || {
                    for step in 0..5u128 {
                        let words: Vec<Word> = (0..=t).map(|k| Word(t * 1000 + step * 10 + k)).collect();
                        let (at, out) = m.ask("SM90", &words, slow_echo).unwrap();
                        let want: Vec<Outcome> =
                            words.iter().enumerate().map(|(i, w)| Outcome::Printed { text: format!("{} at {:#x}", w.0, at + 16 * i as u64) }).collect();
                        assert_eq!(out, want);
                    }
                });
            }
        });
        let (merged, requests) = m.totals();
        assert_eq!(requests, 40);
        assert_eq!(merged, runs.load(Ordering::SeqCst));
        // Eight threads asking while a 20 ms run is under way: far fewer runs than requests.
        assert!(merged < 30, "{merged} runs for 40 requests");
    }

    #[test]
    fn architectures_run_apart_and_an_error_reaches_every_request_of_its_run() {
        let replies = run_merged(
            vec![(0, "SM90".into(), vec![Word(1)]), (1, "SM100".into(), vec![Word(2), Word(3)]), (2, "SM90".into(), vec![Word(4)])],
            &|arch: &str, w: &[Word]| {
                if arch == "SM100" {
                    Err(NvdisasmError::TempDir { dir: "/nowhere".into(), err: "test".into() })
                } else {
                    Ok(echo(w))
                }
            },
        );
        let by: HashMap<u64, Reply> = replies.into_iter().collect();
        assert_eq!(by[&0].as_ref().unwrap(), &(0, vec![Outcome::Printed { text: "1 at 0x0".into() }]));
        assert_eq!(by[&2].as_ref().unwrap(), &(16, vec![Outcome::Printed { text: "4 at 0x10".into() }]));
        assert!(by[&1].as_ref().unwrap_err().to_string().contains("/nowhere"));
    }

    #[test]
    fn a_run_that_panics_gives_its_requests_an_error_and_the_next_run_goes() {
        let m = Merger::new(1);
        let failed = std::thread::scope(|s| s.spawn(|| m.ask("SM90", &[Word(1)], |_, _| panic!("boom"))).join());
        assert!(failed.is_err(), "the asking thread panics with its runner");
        // Without the guard the next request would wait for ever: a failure, not a hang.
        let m = Arc::new(m);
        let (tx, rx) = std::sync::mpsc::channel();
        let m2 = Arc::clone(&m);
        std::thread::spawn(move || tx.send(m2.ask("SM90", &[Word(2)], |_, w| Ok(echo(w))).map_err(|e| e.to_string())));
        let next = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the run after a panic never went");
        assert_eq!(next.unwrap(), (0, echo(&[Word(2)])));
        let r = run_merged(vec![(0, "SM90".into(), vec![Word(1), Word(2)])], &|_: &str, _: &[Word]| Ok(vec![]));
        assert!(r[0].1.as_ref().unwrap_err().to_string().contains("0 outcomes for 2 words"), "{r:?}");
    }

    #[test]
    fn a_lone_request_runs_at_once() {
        let m = Merger::new(1);
        assert_eq!(m.ask("SM90", &[Word(7)], |_, w| Ok(echo(w))).unwrap(), (0, echo(&[Word(7)])));
        assert_eq!(m.totals(), (1, 1));
    }
}
