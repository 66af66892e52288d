//! What a solved form prints beyond its fields, learned from nvdisasm: operands inverted
//! or left out, elided zero registers, illegal all-ones values, operands after the bars.

use super::*;

/// The register and predicate page operands whose field the seed prints inverted (see
/// [`Discovered::inverted`]): the seed's printed number is the complement of the field's
/// bits in `seed`, not the bits themselves. The flips cannot tell: a complement changes by
/// the same power of two as the plain value.
pub fn inverted(s: &Seed, seed: Word, d: &Discovered) -> Vec<usize> {
    let sl = slots(s);
    let kinds = [OperandKind::Pred, OperandKind::UPred, OperandKind::Reg, OperandKind::UReg];
    let mut out = vec![];
    for (k, kind) in s.kinds.iter().enumerate() {
        let Some(f) = d.operand_field(sl[k][0]).filter(|f| kinds.contains(kind) && f.bits.len() < 64) else { continue };
        let field = value_of(seed, &f.bits);
        let complement = field ^ ones(f.bits.len());
        if printed_value(s, &s.text, sl[k][0]).is_some_and(|g| g != i128::from(field) && g == i128::from(complement)) {
            out.push(sl[k][0]);
        }
    }
    out
}

/// The form's operands that one value field prints (`P`, `UP`, `R`, `UR`, `I`, at most
/// 32 bits): (form operand, its bits), the candidates for [`Discovered::omitted`].
pub fn single_fields(s: &Seed, d: &Discovered) -> Vec<(usize, Vec<u8>)> {
    let sl = slots(s);
    let kinds = [OperandKind::Pred, OperandKind::UPred, OperandKind::Reg, OperandKind::UReg, OperandKind::Imm(crate::spec::ImmMap::PLAIN)];
    (0..s.kinds.len())
        .filter(|&k| kinds.contains(&s.kinds[k]))
        .filter_map(|k| d.operand_field(sl[k][0]).filter(|f| f.bits.len() <= 32).map(|f| (k, f.bits.clone())))
        .collect()
}

/// The form's immediates whose field nvdisasm leaves out at zero (see
/// [`Discovered::left_out`]): when the distilled line (the zero word's text) has fewer
/// operands than the form, each `I` operand whose field at 1 prints one operand more, and
/// the distilled operands are that text's without it. One nvdisasm batch.
pub fn learn_left_out(o: &mut Oracle, s: &Seed, d: &Discovered) -> Result<Vec<LeftOutAtZero>, DiscoverError> {
    let parse = |t: &str| sass::parse_instruction(t).ok().filter(|i| i.mnemonic == d.mnemonic);
    let Some(zero) = parse(&d.distilled).filter(|z| z.operands.len() < s.kinds.len()) else { return Ok(vec![]) };
    let sl = slots(s);
    let field = |k: usize| d.operand_field(sl[k][0]).map(|f| f.bits.clone());
    let cands: Vec<(usize, Vec<u8>)> =
        (0..s.kinds.len()).filter(|&k| matches!(s.kinds[k], OperandKind::Imm(_))).filter_map(|k| field(k).map(|b| (k, b))).collect();
    let texts = o.texts(&cands.iter().map(|(_, bits)| set(d.zero, &bits[..1], 1)).collect::<Vec<_>>())?;
    let shown: Vec<(usize, sass::Instruction)> = cands
        .iter()
        .zip(texts)
        .filter_map(|((k, _), t)| t.as_deref().and_then(parse).filter(|i| i.operands.len() == zero.operands.len() + 1).map(|i| (*k, i)))
        .collect();
    let mut out = vec![];
    for (k, inst) in &shown {
        // Where the text prints it: the others left out before it are missing.
        let at = k - shown.iter().filter(|(j, _)| j < k).count();
        // Other operands left out too (a PT, a name at its empty row): not this rule's case.
        if at >= inst.operands.len() {
            continue;
        }
        let mut rest = inst.operands.clone();
        let op = rest.remove(at);
        if rest == zero.operands && op.suffixes.is_empty() && !op.neg && !op.abs && !op.not {
            out.push(LeftOutAtZero { page_operand: sl[*k][0], joined: op.joined });
        }
    }
    Ok(out)
}

/// The memory operands whose uniform register nvdisasm may leave out, with two words each:
/// the zero word with that register at all ones (URZ) and the offset's lowest bit set, and
/// the same with offset 0. (Form operand, [URZ and offset 1, URZ alone].)
pub(super) fn urz_words(s: &Seed, d: &Discovered) -> Vec<(usize, [Word; 2])> {
    let mut out = vec![];
    for (k, _, [_, ur, imm]) in mem_fields(s, d) {
        let (Some(ur), Some(imm)) = (ur, imm) else { continue };
        let urz = set(d.base(), &ur, u64::MAX);
        out.push((k, [set(urz, &imm[..1], 1), urz]));
    }
    out
}

/// A memory operand: form operand, shape, and the bits of its register, uniform register
/// and offset fields (those it has).
pub(super) type MemFields = (usize, crate::spec::MemShape, [Option<Vec<u8>>; 3]);

/// Each memory operand's [`MemFields`].
pub(super) fn mem_fields(s: &Seed, d: &Discovered) -> Vec<MemFields> {
    let sl = slots(s);
    let mut out = vec![];
    for (k, kind) in s.kinds.iter().enumerate() {
        let OperandKind::Mem(m) = kind else { continue };
        let roles = m.slot_roles();
        let at = |r: MemSlot| roles.iter().position(|x| *x == r).and_then(|i| d.operand_field(sl[k][i])).map(|f| f.bits.clone());
        out.push((k, *m, [at(MemSlot::Reg), at(MemSlot::UReg), at(MemSlot::Imm)]));
    }
    out
}

/// Learns which memory operands leave URZ out when their offset prints (`c[0x0][0x358]`
/// for `c[0x0][URZ+0x358]`, LDCU; `[R2.64+URZ+0x10]` keeps it, LDG) and marks their
/// shapes so (`MemShape::ureg_elided`, `UR?` on the page).
pub fn learn_ureg_elided(o: &mut Oracle, s: &mut Seed, d: &mut Discovered) -> Result<(), DiscoverError> {
    let cases = urz_words(s, d);
    let words: Vec<Word> = cases.iter().map(|(_, w)| w[0]).collect();
    let texts = o.texts(&words)?;
    for ((k, _), t) in cases.iter().zip(texts) {
        let Some(inst) = t.as_deref().and_then(|t| sass::parse_instruction(t).ok()) else { continue };
        let shown = inst.operands.get(*k).and_then(|op| op.body.as_mem());
        if let (Some((_, _, None, _)), OperandKind::Mem(m)) = (shown, &mut s.kinds[*k]) {
            m.ureg_elided = true;
        }
    }
    d.kinds = page_kinds(s, &d.fields);
    Ok(())
}

/// The register page operands (`R`, `UR`, a memory operand's register, uniform register
/// or descriptor) whose field nvdisasm rejects at all ones (RZ, URZ) in the base word but
/// takes one below it: `desc[UR4][R2.64]` in SM100 `LDG.256` takes no RZ (see
/// [`Discovered::illegal_all_ones`]). One nvdisasm batch.
pub fn learn_illegal_all_ones(o: &mut Oracle, s: &Seed, d: &Discovered) -> Result<Vec<usize>, DiscoverError> {
    let sl = slots(s);
    let register = |k: usize, sub: usize| match s.kinds[k] {
        OperandKind::Reg | OperandKind::UReg => true,
        OperandKind::Mem(m) => {
            matches!(m.slot_roles().get(sub), Some(MemSlot::Reg | MemSlot::UReg)) || (m.space == crate::spec::MemSpaceKind::Desc && sub == 0)
        }
        _ => false,
    };
    let mut cases: Vec<(usize, Word, Word)> = vec![];
    for (k, pos) in sl.iter().enumerate() {
        for (sub, &po) in pos.iter().enumerate() {
            let Some(f) = d.operand_field(po).filter(|f| register(k, sub) && f.bits.len() < 64) else { continue };
            let max = ones(f.bits.len());
            let at = |x: u64| set(d.base(), &f.bits, d.printed(po, x, f.bits.len()));
            cases.push((po, at(max), at(max - 1)));
        }
    }
    let words: Vec<Word> = cases.iter().flat_map(|c| [c.1, c.2]).collect();
    let texts = o.texts(&words)?;
    Ok(cases.iter().zip(texts.chunks(2)).filter(|(_, t)| t[0].is_none() && t[1].as_deref().is_some_and(|t| !t.is_empty())).map(|(c, _)| c.0).collect())
}

/// The memory operands whose register the printer would keep at RZ (a fixed suffix, or
/// after a descriptor: see `conventions::mem_printed`) and another component (a uniform
/// register or an offset), with two words each: the zero word with the register at all ones (RZ) and the
/// offset's lowest bit set (if any), and the same with the uniform register at 1 (if any).
pub(super) fn rz_words(s: &Seed, d: &Discovered) -> Vec<(usize, [Word; 2])> {
    let mut out = vec![];
    for (k, m, [reg, ur, imm]) in mem_fields(s, d) {
        if m.reg_suffix.is_none() && m.space != crate::spec::MemSpaceKind::Desc {
            continue;
        }
        let Some(reg) = reg.filter(|_| ur.is_some() || imm.is_some()) else { continue };
        let rz = set(d.base(), &reg, u64::MAX);
        let with_imm = imm.map_or(rz, |b| set(rz, &b[..1], 1));
        out.push((k, [with_imm, ur.map_or(rz, |b| set(rz, &b[..1], 1))]));
    }
    out
}

/// Learns which memory operands leave RZ out, with its suffix, when another component
/// prints (`[UR2+0x20]` for `[RZ.64+UR2+0x20]`, LDG.256; `[RZ.64+0x10]` keeps it, LDGSTS)
/// and marks their shapes so (`MemShape::reg_elided`, `R?` on the page).
pub fn learn_reg_elided(o: &mut Oracle, s: &mut Seed, d: &mut Discovered) -> Result<(), DiscoverError> {
    let cases = rz_words(s, d);
    let texts = o.texts(&cases.iter().map(|(_, w)| w[0]).collect::<Vec<_>>())?;
    for ((k, _), t) in cases.iter().zip(texts) {
        // Operands left out come after memory operands here (PT, `0x0`): operand k is the form's.
        let Some(inst) = t.as_deref().and_then(|t| sass::parse_instruction(t).ok()).filter(|i| i.mnemonic == d.mnemonic) else { continue };
        let shown = inst.operands.get(*k).and_then(|op| op.body.as_mem());
        if let (Some((_, None, _, _)), OperandKind::Mem(m)) = (shown, &mut s.kinds[*k]) {
            m.reg_elided = true;
        }
    }
    d.kinds = page_kinds(s, &d.fields);
    Ok(())
}

/// The page's memory operands at URZ, with the offset 1 and 0, and those that leave RZ out
/// at RZ must print as nvdisasm prints them (random words seldom hold URZ or RZ). One note
/// per disagreement.
pub fn verify_urz(o: &mut Oracle, s: &Seed, d: &Discovered) -> Result<Vec<String>, DiscoverError> {
    let elided = |k: usize| matches!(d.kinds.get(k), Some(OperandKind::Mem(m)) if m.reg_elided);
    let cases: Vec<(usize, [Word; 2])> = urz_words(s, d).into_iter().chain(rz_words(s, d).into_iter().filter(|(k, _)| elided(*k))).collect();
    if cases.is_empty() {
        return Ok(vec![]);
    }
    let text = crate::discover::page::render(&d.mnemonic, None, std::slice::from_ref(d));
    let Ok(page) = crate::spec::parse_page("discovered", text.as_bytes()) else { return Ok(vec![]) }; // read_back notes it
    let spec = crate::spec::Spec { pages: vec![page] };
    let c = crate::codec::Codec::new(&spec);
    let words: Vec<(usize, Word)> = cases.iter().flat_map(|(k, w)| w.map(|w| (*k, w))).collect();
    let texts = o.texts(&words.iter().map(|x| x.1).collect::<Vec<_>>())?;
    let mut notes = vec![];
    for ((k, w), t) in words.iter().zip(texts) {
        let Some(t) = t.filter(|t| !t.is_empty()) else { continue }; // verify_random notes it
        let ours = match c.decode(d.arch, *w) {
            Ok((vi, vals)) => crate::codec::print(c.variant(vi), &vals),
            Err(e) => {
                notes.push(format!("the page does not decode {w}: {e}"));
                continue;
            }
        };
        // The memory operand alone: this checks its URZ convention, nothing else.
        let operand = |x: &str| crate::discover::probe::raw_operands(x).get(*k).cloned();
        if operand(&ours.to_string()) != operand(&with_pt(s, d, *w, &t)) {
            notes.push(format!("the page prints '{ours}' for {w} (URZ or RZ), nvdisasm '{t}'"));
        }
    }
    Ok(notes)
}

/// A field of `bits` bits at all ones (up to 64).
pub(super) fn ones(bits: usize) -> u64 {
    u64::MAX.checked_shr(64 - bits.min(64) as u32).unwrap_or(0)
}

/// How nvdisasm would print form operand `k` of kind `kind` at all ones (`bits` wide).
pub(super) fn all_ones_text(kind: OperandKind, bits: usize) -> Option<String> {
    Some(match kind {
        OperandKind::Pred => "PT".into(),
        OperandKind::UPred => "UPT".into(),
        OperandKind::Reg => "RZ".into(),
        OperandKind::UReg => "URZ".into(),
        OperandKind::Imm(crate::spec::ImmMap::PLAIN) => crate::sass::hex_signed(ones(bits)),
        _ => return None,
    })
}

/// `text`, nvdisasm's for `w`, with the operands it left out put back (see
/// [`Discovered::omitted`] and [`Discovered::left_out`]), so that the text's operand k is
/// form operand k. Texts it cannot rebuild stay as they are.
pub fn with_pt(s: &Seed, d: &Discovered, w: Word, text: &str) -> String {
    with_left_out(s, d, w, text, true)
}

/// [`with_pt`], the operands left out at zero put back only where `zeros` says: the page's
/// own print leaves them out too (its `left out at zero:` line), so a text compared with
/// it keeps them out (`zeros` false).
pub(super) fn with_left_out(s: &Seed, d: &Discovered, w: Word, text: &str, zeros: bool) -> String {
    let value = |bits: &[u8]| value_of(w, bits);
    let decorated =
        |k: usize| d.fields.iter().any(|f| matches!(f.kind, FieldKind::Not(j) | FieldKind::Abs(j) | FieldKind::Neg(j) if j == k) && value(&f.bits) != 0);
    let sl = slots(s);
    let all_ones = |k: usize, bits: &[u8]| d.printed(sl[k][0], value(bits), bits.len()) == ones(bits.len());
    let mut left_out: Vec<(usize, String, bool)> = single_fields(s, d)
        .into_iter()
        .filter(|(k, bits)| d.omitted.contains(k) && all_ones(*k, bits) && !decorated(*k))
        .filter_map(|(k, bits)| all_ones_text(s.kinds[k], bits.len()).map(|t| (k, t, false)))
        .collect();
    // Left out at zero: put back, or kept out where the text is compared with the page's
    // print (which leaves them out too), though PT operands beside them are put back.
    let zero = zero_left_out(s, d, w);
    let kept_out: Vec<usize> = if zeros { vec![] } else { zero.iter().map(|z| z.0).collect() };
    if zeros {
        left_out.extend(zero);
    }
    // Names at their `(default)` row are left out by nvdisasm and by the page alike: they
    // stay out (QGMMA `R0, gdesc[UR0], R0` leaves out both its UPT and its `gsb0`).
    let nameless = nameless_at(s, d, w);
    let raw = crate::discover::probe::raw_operands(text);
    if left_out.is_empty() || raw.len() + left_out.len() + nameless.len() + kept_out.len() != s.kinds.len() {
        return text.to_string();
    }
    let end = text.trim_end().trim_end_matches(';').trim_end().len();
    // Each operand with the separator before it: `, `, or a space for one joined to the
    // operand before it (`R0 0x10`).
    let joined: Vec<bool> = sass::parse_instruction(text).map(|i| i.operands.iter().map(|o| o.joined).collect()).unwrap_or_default();
    // The head ends at the first space after the mnemonic (and a guard); operands are
    // rebuilt from their raw texts (`-QNAN , R0` loses the space inside, as raw texts do).
    let start = if text.starts_with('@') { text.find(' ').map_or(0, |i| i + 1) } else { 0 };
    let head = format!("{} ", &text[..text[start..end].find(' ').map_or(end, |i| start + i)]);
    let mut given = raw.into_iter().zip(joined.into_iter().chain(std::iter::repeat(false)));
    let all = (0..s.kinds.len()).filter(|k| !nameless.contains(k) && !kept_out.contains(k)).map(|k| match left_out.iter().find(|(j, _, _)| *j == k) {
        Some((_, t, joined)) => (t.clone(), *joined),
        None => given.next().unwrap_or_default(),
    });
    format!("{head}{}{}", join_operands(all), &text[end..])
}

/// The form operands that are names whose table row for `w` is `(default)`: nvdisasm
/// prints nothing for them.
pub(super) fn nameless_at(s: &Seed, d: &Discovered, w: Word) -> Vec<usize> {
    let sl = slots(s);
    let value = |bits: &[u8]| value_of(w, bits);
    (0..s.kinds.len())
        .filter(|&k| s.kinds[k] == OperandKind::Name)
        .filter(|&k| {
            d.fields.iter().any(|f| match &f.kind {
                FieldKind::Suffix { operand, table } if sl[k].contains(operand) => {
                    let v = value(&f.bits);
                    table.iter().any(|(x, n)| *x == v && n == "(default)")
                }
                _ => false,
            })
        })
        .collect()
}

/// The form operands of [`Discovered::left_out`] whose field is zero in `w`: (form operand,
/// its text at zero, joined).
pub(super) fn zero_left_out(s: &Seed, d: &Discovered, w: Word) -> Vec<(usize, String, bool)> {
    let sl = slots(s);
    d.left_out
        .iter()
        .filter_map(|x| {
            let k = sl.iter().position(|p| p == &[x.page_operand])?;
            let OperandKind::Imm(m) = s.kinds[k] else { return None };
            let f = d.operand_field(x.page_operand)?;
            f.bits.iter().all(|&b| !w.bit(b)).then(|| (k, sass::hex_signed(m.apply(0)), x.joined))
        })
        .collect()
}

/// Operand texts joined as nvdisasm prints them: `, ` between them, a space before one
/// joined to the operand before it.
pub(super) fn join_operands(ops: impl Iterator<Item = (String, bool)>) -> String {
    let mut out = String::new();
    for (k, (t, joined)) in ops.enumerate() {
        if k > 0 {
            out.push_str(if joined { " " } else { ", " });
        }
        out.push_str(&t);
    }
    out
}

/// Does page operand `po` print the suffixes its table's row `v` names in `text`? A note
/// when not.
pub(super) fn suffix_mismatch(s: &Seed, text: &str, po: usize, table: &Table, v: u64) -> Option<String> {
    let i = slots(s).iter().position(|x| x.contains(&po))?;
    let op = sass::parse_instruction(text).ok().and_then(|x| x.operands.get(i).cloned());
    let got = op.as_ref().map(|o| crate::discover::probe::suffix_tokens(s.kinds[i], o)).unwrap_or_default();
    // A memory operand's register left out, or RZ standing in bare, carries no suffix
    // (`[0x67384f]` for `[RZ.X16+0x67384f]`, ATOMS): the page's printer says so, and
    // `verify_page` checks it.
    let unsuffixed = |o: &sass::Operand| o.suffixes.is_empty() && o.body.as_mem().is_some_and(|(_, r, _, _)| r.is_none_or(|r| r == sass::RZ));
    if matches!(s.kinds[i], OperandKind::Mem(_)) && op.as_ref().is_some_and(unsuffixed) {
        return None;
    }
    let want: Vec<String> = match table.iter().find(|(x, _)| *x == v) {
        Some((_, n)) if n == "(default)" => vec![],
        Some((_, n)) => n.split('.').map(str::to_string).collect(),
        None => return Some(format!("operand {po}'s suffix value {v} is not in its table, prints '{text}'")),
    };
    (got != want).then(|| format!("operand {po}'s suffix value {v} ('{}') prints '{text}'", want.join(".")))
}

/// The seed reading float immediates in the format `text`'s modifiers choose (see
/// [`Discovered::float_by`]).
pub(super) fn as_printed(s: &Seed, d: &Discovered, text: &str) -> Seed {
    let mods = sass::parse_instruction(text).map(|i| i.modifiers).unwrap_or_default();
    match d.float_by.iter().find(|(m, _)| mods.contains(m)) {
        Some((_, f)) => Seed { float: *f, ..s.clone() },
        None => s.clone(),
    }
}

/// Where nvdisasm prints each operand's suffixes when it has `|…|` bars (see
/// [`Discovered::after_bars`]): one word per form operand with a `cABS` and suffixes (a
/// suffix field or the distilled line's fixed suffixes), the zero word with the bars set
/// and each suffix field at its first row that prints a suffix. An operand whose word does
/// not show bars and suffixes counts as inside; the page checks (random words with bars
/// and suffixes set) catch any disagreement.
pub fn after_bars(o: &mut Oracle, s: &Seed, d: &Discovered) -> Result<Option<Vec<usize>>, DiscoverError> {
    let sl = slots(s);
    let fixed = sass::parse_instruction(&d.distilled).map(|i| i.operands.iter().map(|x| !x.suffixes.is_empty()).collect()).unwrap_or_else(|_| vec![]);
    let mut cases: Vec<(usize, Word)> = vec![];
    for f in &d.fields {
        let FieldKind::Abs(i) = f.kind else { continue };
        let Some(ops) = sl.get(i) else { continue };
        let suffixes = d.fields.iter().filter_map(|g| match &g.kind {
            FieldKind::Suffix { operand, table } if ops.contains(operand) => table.iter().find(|(_, n)| n != "(default)").map(|(v, _)| (g, *v)),
            _ => None,
        });
        let mut w = set(d.base(), &f.bits, 1);
        let mut any = fixed.get(i).copied().unwrap_or(false);
        for (g, v) in suffixes {
            w = set(w, &g.bits, v);
            any = true;
        }
        if any {
            cases.push((i, w));
        }
    }
    if cases.is_empty() {
        return Ok(None);
    }
    let texts = o.texts(&cases.iter().map(|c| c.1).collect::<Vec<_>>())?;
    let after = cases.iter().zip(texts).filter(|((i, _), t)| {
        let op = t.as_deref().and_then(|t| sass::parse_instruction(t).ok()).and_then(|x| x.operands.get(*i).cloned());
        op.is_some_and(|op| op.abs && op.after_bars)
    });
    let mut after: Vec<usize> = after.map(|((i, _), _)| sl[*i][0]).collect();
    after.sort_unstable();
    Ok(Some(after))
}
