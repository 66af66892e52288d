//! Float immediates: which fields are floats, and the format (fp16, bf16, fp32, …) each
//! prints in, learned from probes.

use super::*;

/// A value of every width's float fields that reads differently in each format (fp16 3.14,
/// bf16 50; fp32 3.14, a double's high half 3.14 × 2^…): the format that reads it back is
/// the one nvdisasm printed.
pub(super) fn float_probe(width: usize) -> u64 {
    if width <= 16 {
        0x4248
    } else {
        0x4049_0fdb
    }
}

/// The form's `F` value fields: (form operand, bits).
pub(super) fn float_fields(s: &Seed, d: &Discovered) -> Vec<(usize, Vec<u8>)> {
    let sl = slots(s);
    (0..s.kinds.len()).filter(|&k| s.kinds[k].is_float()).filter_map(|k| d.operand_field(sl[k][0]).map(|f| (k, f.bits.clone()))).collect()
}

/// The format every `F` operand of `text` reads [`float_probe`] back in, if they agree on one.
pub(super) fn printed_format(text: &str, floats: &[(usize, Vec<u8>)]) -> Option<FloatFormat> {
    let inst = sass::parse_instruction(text).ok()?;
    let mut found = None;
    for (k, bits) in floats {
        let sass::Body::Float { value, .. } = inst.operands.get(*k)?.body else { return None };
        let want = float_probe(bits.len()) as i128;
        let f = FloatFormat::ALL.into_iter().find(|&f| crate::discover::probe::float_bits(value, f) == Some(want))?;
        if found.is_some_and(|g| g != f) {
            return None;
        }
        found = Some(f);
    }
    found
}

/// Probe words, each with one modifier group row or flag set and the float fields at
/// [`float_probe`], and the page's tokens for it. At most 2048 rows per group.
pub(super) fn format_probes(d: &Discovered, base: Word) -> Vec<(Word, Vec<String>)> {
    let mut out = vec![];
    for f in &d.fields {
        match &f.kind {
            FieldKind::Group(n) => {
                let rows = d.tables[*n as usize - 1].iter().filter(|(_, name)| name != "(default)").take(2048);
                out.extend(rows.map(|(v, name)| (set(base, &f.bits, *v), name.split('.').map(str::to_string).collect())));
            }
            FieldKind::Modifier(m) => out.push((set(base, &f.bits, 1), vec![m.clone()])),
            _ => {}
        }
    }
    out
}

/// Modifiers and the float format each chooses (see [`Discovered::float_by`]).
pub(super) type FloatBy = Vec<(String, FloatFormat)>;

/// Which modifiers choose another format for the `F` operands than the page's default
/// (`HFMA2.BF16_V2`: bf16 pairs, not fp16; `MUFU.RSQ64H`: a double's high half): each group
/// row and flag is printed with the float fields at `float_probe`'s value; a row read in another
/// format is chosen by a token of its own, one that no row read otherwise prints. Returns
/// the pairs for [`Discovered::float_by`] and a note for each row no token explains.
pub fn float_formats(o: &mut Oracle, s: &Seed, d: &Discovered) -> Result<(FloatBy, Vec<String>), DiscoverError> {
    let floats = float_fields(s, d);
    if floats.is_empty() {
        return Ok((vec![], vec![]));
    }
    let base = floats.iter().fold(d.base(), |w, (_, bits)| set(w, bits, float_probe(bits.len())));
    let probes = format_probes(d, base);
    let mut words = vec![base];
    words.extend(probes.iter().map(|p| p.0));
    let texts = o.texts(&words)?;
    let read = |t: &Option<String>| t.as_deref().and_then(|t| printed_format(t, &floats));
    let default = read(&texts[0]).unwrap_or(s.float);
    let mut notes = vec![];
    if default != s.float {
        notes.push(format!("the zero word's float immediates read as {}, the flips as {}", default.token(), s.float.token()));
    }
    let read_rows: Vec<(&Vec<String>, FloatFormat)> = probes.iter().zip(&texts[1..]).filter_map(|((_, toks), t)| read(t).map(|f| (toks, f))).collect();
    let mut by: FloatBy = vec![];
    for (toks, f) in read_rows.iter().filter(|(_, f)| *f != default) {
        let own = toks.iter().find(|m| read_rows.iter().all(|(other, g)| g == f || !other.contains(m)));
        match own {
            Some(m) if !by.iter().any(|(x, _)| x == m) => by.push((m.clone(), *f)),
            Some(_) => {}
            None => notes.push(format!("modifiers '{}' print {} immediates, but no token of theirs alone says so", toks.join("."), f.token())),
        }
    }
    Ok((by, notes))
}

/// `x`, or for the source of a derived operand whose sum would pass the zero register (an
/// illegal word: [`verify`] checks that nvdisasm rejects it) `x` less the constant, or
/// for a field illegal at all ones (see [`Discovered::illegal_all_ones`]) one less there.
pub(super) fn legal_source(d: &Discovered, f: &Field, x: u64) -> u64 {
    let FieldKind::Operand(po) = f.kind else { return x };
    let max = if f.bits.len() >= 64 { u64::MAX } else { (1u64 << f.bits.len()) - 1 };
    if d.illegal_all_ones.contains(&po) && d.printed(po, x, f.bits.len()) == max {
        return d.printed(po, max - 1, f.bits.len());
    }
    let plus = d.derived.iter().filter(|e| e.source == po).map(|e| u64::from(e.plus)).max().unwrap_or(0);
    if x != max && x.saturating_add(plus) > max {
        x - plus
    } else {
        x
    }
}

/// The printed sub-value of page operand `po`, in field units, if it reads back.
pub(super) fn printed_value(s: &Seed, text: &str, po: usize) -> Option<i128> {
    let sl = slots(s);
    let i = sl.iter().position(|x| x.contains(&po))?;
    let sub = sl[i].iter().position(|&x| x == po)?;
    let op = sass::parse_instruction(text).ok()?.operands.get(i)?.clone();
    let raw = crate::discover::probe::raw_operands(text);
    s.operand_values(i, &op, raw.get(i).map(String::as_str).unwrap_or("")).get(sub).copied().flatten()
}
