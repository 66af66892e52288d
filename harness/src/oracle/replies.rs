//! nvdisasm's replies to whole requests, kept so that a request asked again is answered
//! without a process: the test suite's discoveries rediscover words that other tests
//! asked about already (the same seeds, the same census), and each
//! nvdisasm process costs about 0.25 s of CPU before its first word, as much as some
//! 20 000 words. A word's outcome depends on the word, the architecture and the address
//! it is printed at alone, which the harness relies on elsewhere too (the minimization's
//! outcomes are kept by word, `validate::Group::minimize`).
//!
//! Only whole requests are answered: one word not kept and the request goes to nvdisasm
//! as it is, so the batches it sends, and their illegal-word rounds, stay as they were.

use super::nvdisasm::Outcome;
use crate::word::Word;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Words kept at most, over all requests: past it, new replies are not kept (about 100
/// bytes a word: some 200 MB).
pub const MAX_WORDS: usize = 2_000_000;

/// One reply: the address the request's first word was printed at (word `i` at that plus
/// `16 i`) and the outcomes, in word order.
pub type Reply = (u64, Vec<Outcome>);

/// Replies by (architecture as `nvdisasm -b` takes it, the request's words).
#[derive(Debug, Default)]
pub struct Replies {
    kept: Mutex<HashMap<(String, Vec<Word>), Reply>>,
    words: AtomicUsize,
    hits: AtomicUsize,
}

impl Replies {
    /// The reply kept for exactly these words on `arch`, if any.
    pub fn get(&self, arch: &str, words: &[Word]) -> Option<Reply> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let found = kept.get(&(arch.to_string(), words.to_vec())).cloned();
        if found.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Keeps `reply` to `words` on `arch`, unless [`MAX_WORDS`] are kept already.
    pub fn put(&self, arch: &str, words: &[Word], reply: Reply) {
        if self.words.fetch_add(words.len(), Ordering::Relaxed) + words.len() > MAX_WORDS {
            return;
        }
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).insert((arch.to_string(), words.to_vec()), reply);
    }

    /// Requests answered from what was kept.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_words_on_the_same_architecture_are_answered() {
        let r = Replies::default();
        let (a, b) = (Word(1), Word(2));
        r.put("SM90", &[a, b], (32, vec![Outcome::Silent, Outcome::Printed { text: "NOP ;".into() }]));
        assert_eq!(r.get("SM90", &[a, b]), Some((32, vec![Outcome::Silent, Outcome::Printed { text: "NOP ;".into() }])));
        assert_eq!(r.get("SM100", &[a, b]), None);
        assert_eq!(r.get("SM90", &[a]), None);
        assert_eq!(r.get("SM90", &[b, a]), None);
        assert_eq!(r.hits(), 1);
    }

    #[test]
    fn past_the_limit_nothing_more_is_kept() {
        let r = Replies::default();
        r.words.store(MAX_WORDS - 1, Ordering::Relaxed);
        r.put("SM90", &[Word(1), Word(2)], (0, vec![Outcome::Silent, Outcome::Silent]));
        assert_eq!(r.get("SM90", &[Word(1), Word(2)]), None);
    }
}
