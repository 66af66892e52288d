//! How much a validation holds at once: batch and slice sizes, the peak-memory estimate
//! and the budget check made before any work.

use super::*;

/// About how many probe words one validation batch holds (see [`validate_pages`]).
pub(super) const GROUP_WORDS: usize = 400_000;

/// Fewest legal structured words sent apart from the learning words and the probes
/// nvdisasm may reject: apart, they save a run that costs ~8 µs a word, and cost a
/// second call's process starts (~0.25 s of CPU each).
pub(super) const APART_FROM: usize = 50_000;

/// Most minimization words sent ahead, with the singles (see `Group::minimize`): at
/// ~10 µs a word, about a third of what the starts of a batch of their own cost.
pub(super) const AHEAD_UP_TO: usize = 8_192;

/// A group that sends its kept random words in two runs (see `Group::random_batch`) holds
/// back this share of each variant's for the second, which carries the minimization's
/// first round (see `first::ridden`).
pub(super) const HELD_BACK: usize = 32;

/// Slices validated at once: one's judging (one core) overlaps another's nvdisasm runs.
pub(super) const SLICES_AT_ONCE: usize = 2;

/// Random words per variant kept with the page's probes until the page is done (the
/// evidence corrections are weighed on, see [`correct::triage`]). Words past these are
/// generated, disassembled and judged [`RANDOM_SLICE`] at a time, and only their counts,
/// disagreements and syntax findings kept: memory does not grow with `--random`.
pub const KEEP_RANDOM: usize = 10_000;

/// Random words past [`KEEP_RANDOM`] in flight at once, per slice of pages (40 MB at
/// [`BYTES_PER_PROBE`]; two nvdisasm starts per 100 000 words cost about 2 %).
pub const RANDOM_SLICE: usize = 100_000;

/// Salt of the streams of random words past [`KEEP_RANDOM`].
pub(super) const STREAM_SALT: u64 = 0x5712_ea3d_0000_0000;

/// The words [`structured_probes`] and the kept random words of a variant, counted without building them.
pub(super) fn probe_count(v: &Variant, opts: &Options) -> usize {
    let fields: usize = (0..v.fields.len()).map(|fi| v.fields[fi].width() as usize + 2 + v.field_table(fi).map_or(0, |t| t.rows.len() + t.omitted.len())).sum();
    // Only the kept random words stay; the others stream (see KEEP_RANDOM).
    1 + fields + group_pairs(v).len() + v.fixed_mask.len() as usize + opts.random_per_variant.min(KEEP_RANDOM)
}

/// The probe words of `pages`' variants, counted without building them.
pub(super) fn page_words(pages: &[&Page], opts: &Options) -> usize {
    pages.iter().flat_map(|p| &p.variants).map(|v| probe_count(v, opts)).fold(0, usize::saturating_add)
}

/// Consecutive runs of `pages` of about [`GROUP_WORDS`] probe words each (a page is never split).
pub(super) fn slices<'p>(pages: &[&'p Page], opts: &Options) -> Vec<Vec<&'p Page>> {
    let mut out: Vec<Vec<&Page>> = vec![];
    let mut words = GROUP_WORDS;
    for &p in pages {
        let n = page_words(&[p], opts);
        if words.saturating_add(n) > GROUP_WORDS {
            out.push(vec![]);
            words = 0;
        }
        words += n;
        out.last_mut().expect("pushed above").push(p);
    }
    out
}

/// The slices [`validate_pages`] validates: every page but `opts.skip_pages`, by architecture.
pub(super) fn all_slices<'p>(spec: &'p crate::spec::Spec, opts: &Options) -> Vec<Vec<&'p Page>> {
    arch_groups(spec).into_iter().flat_map(|g| slices(&g.into_iter().filter(|p| !opts.skip_pages.contains(&p.file)).collect::<Vec<_>>(), opts)).collect()
}

/// Peak bytes per probe word in flight (the probe, its outcome and text, nvdisasm's
/// listing of it, its verdict), rounded up from 376 B measured: an SM90 page with
/// `--random 200000` (1.8 M words) peaked at 734 MB resident, 677 MB above `--random 0`.
pub const BYTES_PER_PROBE: u64 = 400;

/// What a validation holds besides its probes: pages, codec, tool output being read.
pub(super) const BASE_BYTES: u64 = 128 << 20;

/// About the most memory [`validate_pages`] holds at once: its `SLICES_AT_ONCE`
/// largest slices' probes (a page is never split; its random words count up to
/// [`KEEP_RANDOM`] per variant) and, past those, a [`RANDOM_SLICE`] of streamed random
/// words each. It does not grow with `--random` past `KEEP_RANDOM`.
pub fn peak_bytes(spec: &crate::spec::Spec, opts: &Options) -> u64 {
    let mut sizes: Vec<usize> = all_slices(spec, opts).iter().map(|s| page_words(s, opts)).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let streamed = if opts.random_per_variant > KEEP_RANDOM { RANDOM_SLICE } else { 0 };
    let words: u64 = sizes.iter().take(SLICES_AT_ONCE).map(|&n| (n + streamed) as u64).sum();
    BASE_BYTES + words * BYTES_PER_PROBE
}

/// Refuses, before any work, a validation whose [`peak_bytes`] is above the memory
/// budget (see [`crate::budget`]), naming the largest `--random` that fits.
pub fn check_budget(spec: &crate::spec::Spec, opts: &Options) -> Result<(), crate::budget::BudgetError> {
    let budget = crate::budget::Budget::from_env()?;
    let need = peak_bytes(spec, opts);
    if need <= budget.bytes {
        return Ok(());
    }
    let fits = |r: usize| peak_bytes(spec, &Options { random_per_variant: r, ..opts.clone() }) <= budget.bytes;
    // Peak grows with --random: the largest that fits, by bisection.
    let hint = if !fits(0) {
        "raise the budget (even --random 0 does not fit)".to_string()
    } else {
        let (mut lo, mut hi) = (0usize, opts.random_per_variant);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid
            } else {
                hi = mid
            }
        }
        format!("lower --random to {lo} or less, or raise the budget")
    };
    budget.check(&format!("--random {}", opts.random_per_variant), need, &hint)
}
