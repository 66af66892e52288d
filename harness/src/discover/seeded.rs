//! Discovery seeded by hand-written pages: each variant's zero word (its fixed bits, every
//! field zero) is solved from nvdisasm alone and written as a page next to the seed's name,
//! with the bit-by-bit differences between the seed page and what nvdisasm shows.

use super::batch::Batcher;
use super::{discover, page, DiscoverError, Discovered, Source};
use crate::spec::{FieldKind, Page, Variant};
use std::collections::BTreeMap;

/// What a bit is on a page, in words that compare across pages (`operand 2 bit 3`,
/// `fixed 1`, `cABS of operand 1`, `modi 1 bit 0`, `stall`).
fn bit_labels(v: &Variant) -> Vec<String> {
    let mut labels: Vec<String> =
        (0..128u8).map(|b| if v.fixed_mask.contains(b) { format!("fixed {}", u8::from(v.fixed_value.bit(b))) } else { "unlisted".into() }).collect();
    for f in &v.fields {
        for (k, &b) in f.bits.iter().enumerate() {
            labels[b as usize] = match &f.kind {
                FieldKind::Control { .. } => "control".to_string(),
                FieldKind::Flag { name, page_operand: Some(o), .. } => format!("{name} of operand {o}"),
                _ if f.bits.len() == 1 => f.name.clone(),
                _ => format!("{} bit {k}", f.name),
            };
        }
    }
    labels
}

/// Row names of each group table by value (`modi N` → value → name).
fn tables(v: &Variant) -> BTreeMap<String, BTreeMap<u64, String>> {
    let mut out = BTreeMap::new();
    for (fi, f) in v.fields.iter().enumerate() {
        if let (FieldKind::Group { .. }, Some(t)) = (&f.kind, v.field_table(fi)) {
            out.insert(f.name.clone(), t.rows.iter().map(|r| (r.value, r.name.clone())).collect());
        }
    }
    out
}

/// Differences between two pages of one instruction, variant by variant (matched by key):
/// bits whose role differs, table rows that differ, variants only one page has. Empty when
/// they agree.
pub fn differences(seed: &Page, found: &Page) -> Vec<String> {
    let mut out = vec![];
    for v in &seed.variants {
        let Some(w) = found.variants.iter().find(|w| w.key == v.key) else {
            out.push(format!("{}: not discovered (its zero word is not this form on nvdisasm)", v.key));
            continue;
        };
        let (a, b) = (bit_labels(v), bit_labels(w));
        for bit in 0..128 {
            if a[bit] != b[bit] {
                out.push(format!("{}: bit {bit} is {} on the page, {} by nvdisasm", v.key, a[bit], b[bit]));
            }
        }
        let (ta, tb) = (tables(v), tables(w));
        for (name, rows) in &tb {
            if ta.get(name) != Some(rows) {
                let show = |r: Option<&BTreeMap<u64, String>>| {
                    r.map(|r| r.iter().map(|(v, n)| format!("{v}={n}")).collect::<Vec<_>>().join(" ")).unwrap_or("none".into())
                };
                out.push(format!("{}: {name} rows are [{}] on the page, [{}] by nvdisasm", v.key, show(ta.get(name)), show(Some(rows))));
            }
        }
        if v.heading != w.heading {
            out.push(format!("{}: heading is {} on the page, {} by nvdisasm", v.key, v.heading, w.heading));
        }
    }
    for w in &found.variants {
        if !seed.variants.iter().any(|v| v.key == w.key) {
            out.push(format!("{}: discovered, not on the page", w.key));
        }
    }
    out
}

/// Solves every variant of `seed` from its zero word (one solver thread per variant, all
/// sharing nvdisasm batches); the page text in the seed format.
pub fn rediscover(src: &dyn Source, seed: &Page) -> Result<(String, Vec<Discovered>), DiscoverError> {
    let batcher = Batcher::new(src);
    let found: Vec<Result<Discovered, DiscoverError>> = std::thread::scope(|s| {
        let handles: Vec<_> = seed
            .variants
            .iter()
            .map(|v| {
                let active = batcher.enter();
                let b = &batcher;
                s.spawn(move || {
                    let _active = active;
                    discover(b, v.arch, v.fixed_value)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(DiscoverError::Tool("a solver thread panicked".into())))).collect()
    });
    let found = found.into_iter().collect::<Result<Vec<_>, _>>()?;
    let banner = format!("Discovered by sass-harness from nvdisasm, seeded by {}", seed.file);
    Ok((page::render(&seed.instruction, Some(&banner), &found), found))
}
