//! Token ids: the names a form reads and a text's tokens as integers, looked up once.

use crate::codec::print::UNLISTED;
use crate::sass::InstRef;
use std::collections::HashMap;

/// Ids of modifier and suffix tokens, so that a text's tokens are looked up once and each
/// candidate checks them as integers.
pub(super) enum Vocabulary<'a> {
    /// Every token the variants read (an [`super::Assembler`]'s).
    All(StrMap<u32>),
    /// One text's tokens, whose ids are their positions: enough to check that text.
    Text(Vec<&'a str>),
}

/// Set in a token's id when it starts with `UNLISTED`, which any table slot may read.
pub(super) const UNLISTED_BIT: u32 = 1 << 31;
/// The id of a token no variant reads.
pub(super) const UNKNOWN: u32 = UNLISTED_BIT - 1;

impl<'a> Vocabulary<'a> {
    pub fn of_text(inst: &InstRef<'a>) -> Vocabulary<'a> {
        Vocabulary::Text(inst.tokens.to_vec())
    }

    /// A token's id; the text vocabulary gives those not in the text [`UNKNOWN`].
    pub fn intern(&mut self, t: &'a str) -> u32 {
        match self {
            Vocabulary::All(ids) => {
                let n = ids.len() as u32;
                *ids.get_or_insert_with(t, || n)
            }
            Vocabulary::Text(_) => self.plain_id(t),
        }
    }

    fn plain_id(&self, t: &str) -> u32 {
        let found = match self {
            Vocabulary::All(ids) => ids.get(t).copied(),
            Vocabulary::Text(toks) => toks.iter().position(|x| *x == t).map(|i| i as u32),
        };
        found.unwrap_or(UNKNOWN)
    }

    /// A text token's id, marked when it may read as an unlisted table value.
    fn id(&self, t: &str) -> u32 {
        let id = self.plain_id(t);
        if t.starts_with(UNLISTED) {
            id | UNLISTED_BIT
        } else {
            id
        }
    }

    /// The ids of `inst`'s modifiers, then of each operand's suffixes in turn.
    pub fn ids(&self, inst: &InstRef) -> TokenIds {
        let all = inst.tokens.iter().map(|t| self.id(t));
        let n = inst.tokens.len();
        let mut ids = TokenIds { inline: [0; INLINE_IDS], len: n, heap: vec![] };
        if n <= INLINE_IDS {
            ids.inline.iter_mut().zip(all).for_each(|(slot, id)| *slot = id);
        } else {
            ids.heap = all.collect();
        }
        ids
    }
}

/// Token ids a text keeps without allocating (texts have a handful).
const INLINE_IDS: usize = 16;

/// A text's token ids (see [`Vocabulary::ids`]): inline when few, else on the heap.
pub(super) struct TokenIds {
    inline: [u32; INLINE_IDS],
    len: usize,
    heap: Vec<u32>,
}

impl std::ops::Deref for TokenIds {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        if self.len <= INLINE_IDS {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}

/// FxHash (rustc's): the maps above are keyed by short names, for which SipHash costs
/// more than the lookup it serves.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FastHash = std::hash::BuildHasherDefault<Fx>;

/// A map keyed by names, most of them short: those of up to 15 bytes are keyed by their
/// bytes and length packed in an integer, hashed and compared without reading a string
/// (or memory of the spec's, mostly not in cache); longer ones by string.
pub(super) struct StrMap<V> {
    short: HashMap<u128, V, FastHash>,
    long: HashMap<Box<str>, V, FastHash>,
}

impl<V> Default for StrMap<V> {
    fn default() -> Self {
        StrMap { short: HashMap::default(), long: HashMap::default() }
    }
}

impl<V> StrMap<V> {
    /// `t`'s bytes, then zeros, its length in the last byte: one integer per string.
    fn packed(t: &str) -> Option<u128> {
        let b = t.as_bytes();
        (b.len() < 16).then(|| {
            let mut a = [0u8; 16];
            a[..b.len()].copy_from_slice(b);
            a[15] = b.len() as u8;
            u128::from_le_bytes(a)
        })
    }

    pub fn get(&self, t: &str) -> Option<&V> {
        match Self::packed(t) {
            Some(k) => self.short.get(&k),
            None => self.long.get(t),
        }
    }

    pub fn get_or_insert_with(&mut self, t: &str, f: impl FnOnce() -> V) -> &mut V {
        match Self::packed(t) {
            Some(k) => self.short.entry(k).or_insert_with(f),
            None => self.long.entry(t.into()).or_insert_with(f),
        }
    }

    fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }
}
