//! Checks of a solved form against nvdisasm: random words with every field set, the
//! page's own texts, modifier combinations, gaps.

use super::*;

/// How [`verify_random`]'s note on an ignored bit that changes a word's text begins.
pub const IGNORED_IN_CONTEXT: &str = "ignored bits matter in context";

/// `n` random words with every field set: each operand prints its fields' values, and the
/// bits called ignored change nothing in context (each word again with them random).
pub fn verify_random(o: &mut Oracle, s: &Seed, d: &Discovered, seed: u64, n: usize) -> Result<Vec<String>, DiscoverError> {
    let mut rng = Rng::new(seed ^ 0x7a2d);
    let words: Vec<Word> = (0..n).map(|_| random_word(d, &mut rng)).collect();
    let noisy: Vec<Word> = words.iter().map(|&w| d.ignored.iter().fold(w, |w, &b| w.with_bit(b, rng.next_u64() & 1 == 1))).collect();
    let texts = o.texts(&[words.clone(), noisy.clone()].concat())?;
    let all: Vec<Word> = words.iter().chain(&noisy).copied().collect();
    let texts: Vec<Option<String>> = texts.into_iter().zip(&all).map(|(t, &w)| t.map(|t| with_pt(s, d, w, &t))).collect();
    let mut notes = vec![];
    for (k, &w) in words.iter().enumerate() {
        let (Some(t), Some(u)) = (&texts[k], &texts[n + k]) else {
            notes.push(format!("random word {w} or {} is illegal", noisy[k]));
            continue;
        };
        // Texts, not parsed operands: a NaN immediate never equals itself. Spacing before
        // the terminator is syntax (bits 102/103 of FFMA change it alone).
        let body = |x: &str| x.trim_end().trim_end_matches(';').trim_end().to_string();
        if body(t) != body(u) {
            notes.push(format!("{IGNORED_IN_CONTEXT}: {w} prints '{t}', {} prints '{u}'", noisy[k]));
        }
        let printed = as_printed(s, d, t);
        for f in &d.fields {
            let v = f.bits.iter().enumerate().fold(0i128, |a, (q, &b)| a | (i128::from(w.bit(b)) << q));
            match &f.kind {
                FieldKind::Operand(po) => {
                    let want = i128::from(d.printed(*po, v as u64, f.bits.len()));
                    match printed_value(&printed, t, *po) {
                        Some(g) if g.rem_euclid(1i128 << f.bits.len()) != want => notes.push(format!("operand {po} = {v:#x} in {w} prints '{t}'")),
                        _ => {}
                    }
                    notes.extend(derived_mismatch(s, d, t, *po, want as u64, f.bits.len()));
                }
                FieldKind::Suffix { operand, table } => notes.extend(suffix_mismatch(s, t, *operand, table, v as u64).map(|m| format!("{m} in {w}"))),
                _ => {}
            }
        }
    }
    Ok(notes)
}

/// Whether every modifier group's row of several modifiers (`F32.RZ`) prints as one run
/// of nvdisasm's modifiers over `n` random words (every field set): a page prints a row
/// whole, so a row nvdisasm splits around another modifier (SM90 `F2F.F32.F64.RZ`, whose
/// `.F64` is the form's own) cannot be printed as nvdisasm does, whatever the stored order.
pub fn rows_print_whole(o: &mut Oracle, d: &Discovered, seed: u64, n: usize) -> Result<bool, DiscoverError> {
    let mut rng = Rng::new(seed ^ 0x40b5);
    let words: Vec<Word> = (0..n).map(|_| random_word(d, &mut rng)).collect();
    let texts = o.texts(&words)?;
    for (w, t) in words.iter().zip(&texts) {
        let Some(mods) = t.as_deref().and_then(|t| sass::parse_instruction(t).ok()).map(|i| i.modifiers) else { continue };
        for f in &d.fields {
            let FieldKind::Group(k) = f.kind else { continue };
            let v = value_of(*w, &f.bits);
            let Some((_, name)) = d.tables.get(k as usize - 1).and_then(|t| t.iter().find(|(x, _)| *x == v)) else { continue };
            let run: Vec<&str> = name.split('.').collect();
            if run.len() > 1 && !mods.windows(run.len()).any(|m| m.iter().map(String::as_str).eq(run.iter().copied())) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// What the page alone says for the new capabilities of a form with operand-suffix tables,
/// float immediates other than fp32, or scaled immediates: `n` random words (every field set, groups and suffixes to listed rows),
/// decoded and printed by the page as written, must print each operand's suffixes, each
/// float immediate and the modifiers (as a multiset: their order is learned by validation)
/// as nvdisasm does. Other forms are left to validation (signed immediates and aliases such
/// as `IMAD.MOV` are conventions it learns). One note per disagreement.
pub fn verify_page(o: &mut Oracle, s: &Seed, d: &Discovered, seed: u64, n: usize) -> Result<Vec<String>, DiscoverError> {
    let suffixes = d.fields.iter().any(|f| matches!(f.kind, FieldKind::Suffix { .. }));
    let scaled = d.kinds.iter().any(|k| match k {
        OperandKind::Imm(m) => *m != ImmMap::PLAIN,
        OperandKind::Mem(m) => m.imm_shift > 0,
        _ => false,
    });
    let float = s.kinds.iter().any(|k| k.is_float()) && (s.float != FloatFormat::Single || !d.float_by.is_empty());
    if !suffixes && !scaled && !float && d.derived.is_empty() {
        return Ok(vec![]);
    }
    let Some((spec, words, texts)) = page_and_texts(o, d, n, seed ^ 0x9a6e, random_word)? else { return Ok(vec![]) }; // read_back notes it
    let c = crate::codec::Codec::new(&spec);
    let mut notes = vec![];
    for (w, t) in words.iter().zip(texts) {
        // The page's print leaves out what it says nvdisasm leaves out at zero: so does the text.
        let Some(t) = t.filter(|t| !t.is_empty()).map(|t| with_left_out(s, d, *w, &t, false)) else { continue }; // verify_random notes it
        let (vi, ours) = match c.decode(d.arch, *w) {
            Ok((vi, vals)) => (vi, crate::codec::print(c.variant(vi), &vals)),
            Err(e) => {
                notes.push(format!("the page does not decode {w}: {e}"));
                continue;
            }
        };
        if !same_print(c.variant(vi), &ours, &t) {
            notes.push(format!("the page prints '{ours}' for {w}, nvdisasm '{t}'"));
        }
    }
    Ok(notes)
}

/// What the page checks read: the page as written, read back as a spec, `n` words drawn
/// by `draw` from a generator seeded with `seed`, and nvdisasm's texts for them (`None`
/// when the page does not parse).
pub(super) type PageTexts = Option<(crate::spec::Spec, Vec<Word>, Vec<Option<String>>)>;

pub(super) fn page_and_texts(o: &mut Oracle, d: &Discovered, n: usize, seed: u64, draw: fn(&Discovered, &mut Rng) -> Word) -> Result<PageTexts, DiscoverError> {
    let text = crate::discover::page::render(&d.mnemonic, None, std::slice::from_ref(d));
    let Ok(page) = crate::spec::parse_page("discovered", text.as_bytes()) else { return Ok(None) };
    let mut rng = Rng::new(seed);
    let words: Vec<Word> = (0..n).map(|_| draw(d, &mut rng)).collect();
    let texts = o.texts(&words)?;
    Ok(Some((crate::spec::Spec { pages: vec![page] }, words, texts)))
}

/// The zero word with every modifier group at a random row and every modifier flag random.
pub(super) fn random_modifiers(d: &Discovered, rng: &mut Rng) -> Word {
    d.fields.iter().fold(d.base(), |w, f| match f.kind {
        FieldKind::Group(n) => {
            let t = &d.tables[n as usize - 1];
            set(w, &f.bits, t[rng.below(t.len() as u64) as usize].0)
        }
        FieldKind::Modifier(_) => set(w, &f.bits, rng.next_u64() & 1),
        _ => w,
    })
}

/// What the page says of modifiers, on `n` words with every group and flag random (the
/// other fields the zero word's): decoded and printed by the page as written, each must
/// print nvdisasm's modifiers (as a multiset: their order is learned by validation). This
/// checks that the groups combine as the page says (each table alone is enumerated). One
/// note per disagreement.
pub fn verify_modifiers(o: &mut Oracle, d: &Discovered, seed: u64, n: usize) -> Result<Vec<String>, DiscoverError> {
    let groups = d.fields.iter().filter(|f| matches!(f.kind, FieldKind::Group(_) | FieldKind::Modifier(_))).count();
    if groups < 2 {
        return Ok(vec![]);
    }
    let Some((spec, words, texts)) = page_and_texts(o, d, n, seed ^ 0x3c11, random_modifiers)? else { return Ok(vec![]) }; // read_back notes it
    let c = crate::codec::Codec::new(&spec);
    let mut notes = vec![];
    for (w, t) in words.iter().zip(&texts) {
        let ours = c.decode(d.arch, *w).map(|(vi, vals)| crate::codec::print(c.variant(vi), &vals).modifiers);
        // The zero word's operands print its value aliases (`IMAD.MOV`), which validation learns.
        let theirs = printed_mods(t).map(|mut b| {
            for a in &d.value_aliases {
                if let Some(n) = b.get_mut(a) {
                    *n -= 1;
                }
            }
            b.retain(|_, n| *n > 0);
            b
        });
        match (ours, theirs) {
            (Ok(m), Some(theirs)) if bag(&m) == theirs => {}
            (Ok(m), _) => notes.push(format!("the page prints modifiers '{}' for {w}, nvdisasm '{}'", m.join("."), t.as_deref().unwrap_or("(illegal)"))),
            (Err(e), _) => notes.push(format!("the page does not decode {w}: {e}")),
        }
    }
    Ok(notes)
}

/// Same modifier multiset, and every operand with suffixes, a float immediate or a scaled
/// memory offset spelled alike (`|R0|.H0_H0`, `-6.671875`, `a[0x3fc]`); a scaled immediate
/// the same modulo its range (whether it prints signed is a convention validation learns).
pub(super) fn same_print(v: &crate::spec::Variant, ours: &sass::Instruction, text: &str) -> bool {
    let Ok(theirs) = sass::parse_instruction(text) else { return false };
    let sorted = |m: &[String]| {
        let mut m = m.to_vec();
        m.sort();
        m
    };
    let (a, b) = (crate::discover::probe::raw_operands(&ours.to_string()), crate::discover::probe::raw_operands(text));
    let scaled_mem = |i: usize| matches!(v.operands.get(i).map(|o| o.kind), Some(OperandKind::Mem(m)) if m.imm_shift > 0);
    // A derived register prints what the page says of its source: spelled alike too.
    let derived = |i: usize| v.operands.get(i).is_some_and(|o| !o.derived.is_empty());
    let plain = |i: usize, o: &sass::Operand| o.suffixes.is_empty() && !matches!(o.body, sass::Body::Float { .. }) && !scaled_mem(i) && !derived(i);
    let spelled = |i: usize, o: &sass::Operand| plain(i, o) || a.get(i) == b.get(i);
    sorted(&ours.modifiers) == sorted(&theirs.modifiers)
        && ours.operands.len() == theirs.operands.len()
        && ours.operands.iter().zip(&theirs.operands).enumerate().all(|(i, (x, y))| x.suffixes == y.suffixes && spelled(i, x) && same_scaled(v, i, x, y))
}

/// A scaled immediate (`I*4`) prints the same number modulo its range, `2^(shift + width)`.
pub(super) fn same_scaled(v: &crate::spec::Variant, i: usize, x: &sass::Operand, y: &sass::Operand) -> bool {
    let Some(o) = v.operands.get(i) else { return true };
    let (OperandKind::Imm(m), sass::Body::Imm { value: a }, sass::Body::Imm { value: b }) = (o.kind, &x.body, &y.body) else { return true };
    let width = o.value_fields[0].map(|f| v.fields[f].width()).unwrap_or(0) + u32::from(m.shift);
    m == ImmMap::PLAIN || (*a - *b).rem_euclid(1i128 << width.min(100)) == 0
}

/// Every operand field at all-ones and random values (other fields zero) must print that
/// value; returns one note per disagreement.
pub fn verify(o: &mut Oracle, s: &Seed, d: &Discovered, seed: u64) -> Result<Vec<String>, DiscoverError> {
    let sl = slots(s);
    let mut rng = Rng::new(seed);
    let mut cases = vec![];
    for f in &d.fields {
        let FieldKind::Operand(po) = f.kind else { continue };
        let Some(i) = sl.iter().position(|x| x.contains(&po)) else { continue };
        let sub = sl[i].iter().position(|&x| x == po).unwrap_or(0);
        let max = if f.bits.len() >= 64 { u64::MAX } else { (1u64 << f.bits.len()) - 1 };
        for v in [max, rng.next_u64() & max, rng.next_u64() & max, rng.next_u64() & max].map(|v| legal_source(d, f, v)) {
            cases.push((po, i, sub, f.bits.len() as u32, v, set(d.base(), &f.bits, v)));
        }
    }
    let texts = o.texts(&cases.iter().map(|c| c.5).collect::<Vec<_>>())?;
    let mut notes = verify_gaps(o, d)?;
    for ((po, i, sub, w, v, word), t) in cases.into_iter().zip(texts) {
        let Some(t) = t.filter(|t| !t.is_empty()).map(|t| with_pt(s, d, word, &t)) else {
            notes.push(format!("operand {po} = {v:#x}: word {word} does not print"));
            continue;
        };
        let raw = crate::discover::probe::raw_operands(&t);
        let op = sass::parse_instruction(&t).ok().and_then(|x| x.operands.get(i).cloned());
        let got = op.as_ref().and_then(|op| s.operand_values(i, op, raw.get(i).map(String::as_str).unwrap_or("")).get(sub).copied().flatten());
        let ok = match got {
            Some(g) => g.rem_euclid(1i128 << w) == i128::from(d.printed(po, v, w as usize)),
            None => op.is_some(), // a NaN immediate: its payload is not printed
        };
        if !ok {
            notes.push(format!("operand {po} = {v:#x}: word {word} prints '{t}'"));
        }
        notes.extend(derived_mismatch(s, d, &t, po, d.printed(po, v, w as usize), w as usize));
    }
    Ok(notes)
}

/// Source values whose derived register would pass the zero register must be illegal, as
/// the page says (see [`crate::spec::Derived`]), and so must random words with a field
/// illegal at all ones there; one note per word nvdisasm prints.
pub(super) fn verify_gaps(o: &mut Oracle, d: &Discovered) -> Result<Vec<String>, DiscoverError> {
    let mut rng = Rng::new(0x1a11);
    let mut words = vec![];
    for f in d.fields.iter().filter(|f| matches!(f.kind, FieldKind::Operand(po) if d.illegal_all_ones.contains(&po))) {
        let FieldKind::Operand(po) = f.kind else { continue };
        let all_ones = d.printed(po, ones(f.bits.len()), f.bits.len());
        words.extend((0..4).map(|_| set(random_word(d, &mut rng), &f.bits, all_ones)));
    }
    for e in &d.derived {
        let Some(f) = d.operand_field(e.source) else { continue };
        let max = if f.bits.len() >= 64 { u64::MAX } else { (1u64 << f.bits.len()) - 1 };
        words.extend((max.saturating_sub(u64::from(e.plus)) + 1..max).map(|v| set(d.base(), &f.bits, v)));
    }
    let texts = o.texts(&words)?;
    Ok(words.iter().zip(texts).filter_map(|(w, t)| t.filter(|t| !t.is_empty()).map(|t| format!("{w} passes the zero register but prints '{t}'"))).collect())
}

/// The operands derived from page operand `po` (at `value`, `width` bits) that `text` does
/// not print as its value plus their constant (saturating at all ones, the zero register).
pub(super) fn derived_mismatch(s: &Seed, d: &Discovered, text: &str, po: usize, value: u64, width: usize) -> Vec<String> {
    let max = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    d.derived
        .iter()
        .filter(|x| x.source == po)
        .filter(|x| printed_value(s, text, x.page_operand) != Derived::value(x.plus, value, max).map(i128::from))
        .map(|x| format!("operand {} (operand {po} + {}) with operand {po} = {value:#x} prints '{text}'", x.page_operand, x.plus))
        .collect()
}
