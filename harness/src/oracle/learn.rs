//! Learning nvdisasm's per-form printing conventions (see `codec::conventions`): one batch
//! per architecture, about 580 words per variant and one per bit its page marks as ignored
//! (up to some 550 more for a form with an integer immediate and four RZ-able registers:
//! its alias probes), asked once per run.

use super::nvdisasm::{Nvdisasm, NvdisasmError, Outcome};
use crate::codec::conventions::{self as conv, Conventions, ConventionsFile, FormConventions, SlotId, StoredControl, StoredError, StoredForm};
use crate::codec::print::{row_tokens, slot_id};
use crate::codec::{Codec, Values};
use crate::sass::{self, Instruction, Terminator};
use crate::spec::{MemSlot, ModSlot, OperandKind, RowKind, Variant};
use crate::word::Word;

/// The probe words of one variant, in the order [`FormConventions`] reads them back.
struct Plan {
    vi: usize,
    words: Vec<Word>,
    /// Each ordered slot and the first token it prints in the order probe.
    order_slots: Vec<(SlotId, String)>,
    has_imm: bool,
    /// After the immediate's word: one per (group field's first bit, value), immediate at max.
    imm_by_group: Vec<(u8, u64)>,
    /// Then one word per bit the page marks as ignored, set in the opex sweep's first word
    /// (does nvdisasm then end the line with ` ;`?).
    space_probes: Vec<u8>,
    /// Then one word per operand of one value field, that field all ones (does nvdisasm
    /// print it?), and per memory operand with a register, that register all ones (does it
    /// print `???255`?).
    single_operands: Vec<usize>,
    /// Then one word per memory operand with a register and an offset, both all ones (how
    /// does the offset print beside RZ?).
    rz_offsets: Vec<usize>,
    /// Last: the alias probes, the first of them the base the others are compared with.
    aliases: Vec<AliasProbe>,
    alias_regs: Vec<usize>,
}

/// One alias probe word: these register operands RZ, the immediate of this class.
struct AliasProbe {
    rz: Vec<usize>,
    imm: Option<(usize, conv::ImmClass)>,
}

const WAIT_AT: usize = conv::OPEX_VALUES + conv::BARRIER_VALUES;
const ORDER_AT: usize = WAIT_AT + conv::WAIT_VALUES;

/// The words [`learn`] asks nvdisasm about for variant `vi`: where stored conventions are
/// checked (`validate::stored`).
pub fn probe_words(codec: &Codec, vi: usize) -> Vec<Word> {
    plan(codec, vi).words
}

fn plan(codec: &Codec, vi: usize) -> Plan {
    let v = codec.variant(vi);
    // The terminator sweeps' base has the bits the page marks as ignored clear: some of
    // them print ` ;` when set (see `FormConventions::space_bits`).
    let base = Word(codec.encode_unchecked(vi, &shown_values(v)).0 & !v.ignored.0);
    // The opex sweep with both barriers 7, the barrier sweep with opex 0: the terminator
    // is `;` only where both allow it (see FormConventions::terminator).
    let quiet = conv::with_barriers(base, conv::BARRIER_VALUES - 1);
    let mut words: Vec<Word> = (0..conv::OPEX_VALUES).map(|i| conv::with_opex(quiet, i)).collect();
    words.extend((0..conv::BARRIER_VALUES).map(|i| conv::with_barriers(base, i)));
    words.extend((0..conv::WAIT_VALUES).map(|i| conv::with_wait(quiet, i)));
    let (order_values, order_slots) = order_probe(v);
    words.push(codec.encode_unchecked(vi, &order_values));
    let imm = v.operands.iter().find(|o| o.kind.is_imm()).and_then(|o| o.value_fields[0]);
    let mut imm_by_group = vec![];
    if let Some(f) = imm {
        let mut vals = shown_values(v);
        vals.set(f, v.fields[f].max());
        words.push(codec.encode_unchecked(vi, &vals));
        for (g, field) in v.fields.iter().enumerate().filter(|(_, x)| matches!(x.kind, crate::spec::FieldKind::Group { .. })) {
            for x in 1..=field.max().min(255) {
                let mut with = vals;
                with.set(g, x);
                words.push(codec.encode_unchecked(vi, &with));
                imm_by_group.push((field.bits[0], x));
            }
        }
    }
    let space_probes: Vec<u8> = v.ignored.iter().collect();
    let set: Vec<Word> = space_probes.iter().map(|&b| words[0].flip(b)).collect();
    words.extend(set);
    let single_operands = single_operands(v);
    for &k in &single_operands {
        let mut vals = shown_values(v);
        if let Some(f) = probed_field(v, k) {
            vals.set(f, v.fields[f].max());
        }
        words.push(codec.encode_unchecked(vi, &vals));
    }
    let rz_offsets: Vec<usize> = (0..v.operands.len()).filter(|&k| rz_offset_values(v, k).is_some()).collect();
    words.extend(rz_offsets.iter().filter_map(|&k| rz_offset_values(v, k)).map(|vals| codec.encode_unchecked(vi, &vals)));
    let (alias_regs, aliases) = alias_probes(v);
    for a in &aliases {
        words.push(codec.encode_unchecked(vi, &alias_values(v, a)));
    }
    Plan { vi, words, order_slots, has_imm: imm.is_some(), imm_by_group, space_probes, single_operands, rz_offsets, aliases, alias_regs }
}

/// The harness's base values with every operand the page leaves out at zero set to 1
/// ([`crate::spec::LeftOutAtZero`]) and every inverted one to 0 (its base value is all
/// ones: `PT`, left out; see [`crate::spec::Inverted`]): the probes print every operand,
/// so that printed operand k is page operand k (its `.reuse`; an operand left out at all
/// ones is then one operand short).
fn shown_values(v: &Variant) -> Values {
    let mut vals = crate::gen::base_values(v);
    for o in &v.operands {
        match o.value_fields.as_slice() {
            [Some(f)] if o.zero_omitted => vals.set(*f, 1),
            [Some(f)] if v.fields[*f].inverted => vals.set(*f, 0),
            _ => {}
        }
    }
    vals
}

/// The page's register operands with 8-bit fields (255 is RZ) and the alias probes: every
/// set of them RZ (sets of at most two when there are more than four) times each class of
/// the first integer immediate (see `ImmClass::all`); the first probe (none RZ, an ordinary
/// immediate) is the base.
fn alias_probes(v: &Variant) -> (Vec<usize>, Vec<AliasProbe>) {
    let regs: Vec<usize> = (0..v.operands.len())
        .filter(|&k| v.operands[k].kind == OperandKind::Reg && v.operands[k].value_fields[0].is_some_and(|f| v.fields[f].width() == 8))
        .collect();
    let imm = (0..v.operands.len()).find_map(|k| {
        let f = v.operands[k].value_fields[0].filter(|_| v.operands[k].kind == OperandKind::Imm(crate::spec::ImmMap::PLAIN))?;
        Some((k, conv::ImmClass::all(v.fields[f].width())))
    });
    let sets: Vec<Vec<usize>> = (0u32..1 << regs.len())
        .filter(|m| regs.len() <= 4 || m.count_ones() <= 2)
        .map(|m| (0..regs.len()).filter(|&i| m >> i & 1 == 1).map(|i| regs[i]).collect())
        .collect();
    let classes: Vec<Option<(usize, conv::ImmClass)>> = match imm {
        Some((k, all)) if !all.is_empty() => all.into_iter().map(|c| Some((k, c))).collect(),
        _ => vec![None],
    };
    let probes = classes.iter().flat_map(|&imm| sets.iter().map(move |rz| AliasProbe { rz: rz.clone(), imm })).collect();
    (regs, probes)
}

fn alias_values(v: &Variant, a: &AliasProbe) -> Values {
    let mut vals = crate::gen::base_values(v);
    for &k in &a.rz {
        if let Some(f) = v.operands[k].value_fields[0] {
            vals.set(f, u64::from(crate::sass::RZ));
        }
    }
    if let Some((k, class)) = a.imm {
        if let Some(f) = v.operands[k].value_fields[0] {
            vals.set(f, class.example());
        }
    }
    vals
}

/// The modifier a word adds to the base word's, and where: an alias (see `conv::Alias`).
fn alias_of(base: &Instruction, probe: &Instruction) -> Option<(String, usize)> {
    if probe.modifiers.len() != base.modifiers.len() + 1 || probe.mnemonic != base.mnemonic {
        return None;
    }
    let at = (0..probe.modifiers.len()).find(|&i| probe.modifiers[..i] == base.modifiers[..i] && probe.modifiers[i + 1..] == base.modifiers[i..])?;
    Some((probe.modifiers[at].clone(), at))
}

/// The page's operands printed from one value field of at most 32 bits (`P`, `UP`, `R`,
/// `UR`, `I`): the candidates for [`FormConventions::omitted`]; then the memory operands
/// with a register of their own, candidates for [`FormConventions::unnamed`] only.
fn single_operands(v: &Variant) -> Vec<usize> {
    let kinds = [OperandKind::Pred, OperandKind::UPred, OperandKind::Reg, OperandKind::UReg, OperandKind::Imm(crate::spec::ImmMap::PLAIN)];
    (0..v.operands.len())
        .filter(|&k| {
            let o = &v.operands[k];
            let single = kinds.contains(&o.kind) && matches!(o.value_fields.as_slice(), [Some(f)] if v.fields[*f].width() <= 32);
            single || matches!(o.kind, OperandKind::Mem(_)) && o.register_field().is_some()
        })
        .collect()
}

/// The field a [`single_operands`] probe sets to all ones.
fn probed_field(v: &Variant, k: usize) -> Option<usize> {
    let o = &v.operands[k];
    if matches!(o.kind, OperandKind::Mem(_)) {
        o.register_field()
    } else {
        o.value_fields[0]
    }
}

/// The field of memory operand `k`'s slot of role `role`, if it has one.
fn mem_field(v: &Variant, k: usize, role: MemSlot) -> Option<usize> {
    let o = &v.operands[k];
    let OperandKind::Mem(m) = o.kind else { return None };
    o.value_fields.get(m.slot_roles().iter().position(|r| *r == role)?).copied().flatten()
}

/// The values of the probe that shows how memory operand `k`'s offset prints beside RZ
/// ([`FormConventions::rz_offsets`]): its register and offset all ones, the rest shown;
/// `None` for an operand without both.
fn rz_offset_values(v: &Variant, k: usize) -> Option<Values> {
    // A memory operand's register field (`register_field` gives a plain register's too).
    let (reg, imm) = (v.operands[k].register_field()?, mem_field(v, k, MemSlot::Imm)?);
    let mut vals = shown_values(v);
    vals.set(reg, v.fields[reg].max());
    vals.set(imm, v.fields[imm].max());
    Some(vals)
}

/// The spellings the [`rz_offset_values`] probes show where they differ from the page's
/// printing (the fixed rules): each printed operand's offset, read as
/// [`conv::OffsetSpelling::of_all_ones`].
fn rz_offset_reads(v: &Variant, operands: &[usize], outs: &[Outcome]) -> Vec<(usize, conv::OffsetSpelling)> {
    let offset = |i: &Instruction, k: usize| -> Option<i64> {
        let (_, _, _, imm) = i.operands.get(k).filter(|_| i.operands.len() == v.operands.len())?.body.as_mem()?;
        imm
    };
    let mut out = vec![];
    for (&k, o) in operands.iter().zip(outs) {
        let (Some(i), Some(vals), Some(f)) = (printed(o), rz_offset_values(v, k), mem_field(v, k, MemSlot::Imm)) else { continue };
        let (Some(p), OperandKind::Mem(m)) = (offset(&i, k), v.operands[k].kind) else { continue };
        if i.mnemonic != v.mnemonic || offset(&crate::codec::print(v, &vals), k) == Some(p) {
            continue;
        }
        if let Some(s) = conv::OffsetSpelling::of_all_ones(p, v.fields[f].width(), m.imm_shift) {
            out.push((k, s));
        }
    }
    out
}

/// Does printed operand `k` of `i` (a [`single_operands`] probe's text, every operand
/// printed) name its all-ones register `???N` rather than the zero register?
fn prints_unnamed(v: &Variant, k: usize, i: &Instruction) -> bool {
    let Some(f) = v.operands[k].register_field() else { return false };
    let token = format!("???{}", v.fields[f].max());
    i.operands.len() == v.operands.len() && matches!(&i.operands[k].body, sass::Body::Other { text } if text.contains(&token))
}

/// Values that make every modifier slot print tokens no other slot prints, and the slots
/// that do (in page order). A slot without such a value is left out: its place is not
/// learned, and the printer then keeps the page's order.
fn order_probe(v: &Variant) -> (Values, Vec<(SlotId, String)>) {
    let mut vals = crate::gen::base_values(v);
    let mut taken: Vec<String> = v.modifiers.iter().filter_map(|s| if let ModSlot::Fixed { text } = s { Some(text.clone()) } else { None }).collect();
    let mut slots = vec![];
    for slot in &v.modifiers {
        match slot {
            ModSlot::Fixed { text } => slots.push((slot_id(v, slot), text.clone())),
            ModSlot::Flag { field } => {
                vals.set(*field, 1);
                taken.push(v.fields[*field].name.clone());
                slots.push((slot_id(v, slot), v.fields[*field].name.clone()));
            }
            ModSlot::Group { field, .. } => {
                let Some(t) = v.field_table(*field) else { continue };
                // A group whose rows are all placeholders (`???1`, F2FP's third group) still
                // prints one: without it the other slots' order would not be learned either.
                let free = |r: &&crate::spec::Row| r.kind != RowKind::Default && row_tokens(Some(t), r.value).iter().all(|x| !taken.contains(x));
                let pick = t.rows.iter().filter(free).find(|r| r.kind == RowKind::Named).or_else(|| t.rows.iter().find(free));
                if let Some(r) = pick {
                    let toks = row_tokens(Some(t), r.value);
                    vals.set(*field, r.value);
                    slots.push((slot_id(v, slot), toks[0].clone()));
                    taken.extend(toks);
                }
            }
        }
    }
    (vals, slots)
}

fn printed(o: &Outcome) -> Option<Instruction> {
    match o {
        Outcome::Printed { text } => sass::parse_instruction(text).ok(),
        _ => None,
    }
}

/// Reads one variant's outcomes back into its conventions.
fn read(v: &Variant, p: &Plan, outs: &[Outcome]) -> FormConventions {
    let sweep: Vec<Option<Instruction>> = outs[..conv::OPEX_VALUES].iter().map(printed).collect();
    let opex = sweep.iter().map(|i| i.as_ref().map(|i| i.operands.iter().enumerate().fold(0u8, |m, (k, op)| m | u8::from(op.reuse) << k))).collect();
    let opex_semicolon = sweep.iter().map(|i| i.as_ref().is_some_and(|i| i.terminator == Terminator::Semicolon)).collect();
    let wait_semicolon = outs[WAIT_AT..ORDER_AT].iter().map(|o| printed(o).is_some_and(|i| i.terminator == Terminator::Semicolon)).collect();
    let barrier_legal = outs[conv::OPEX_VALUES..WAIT_AT].iter().map(|o| printed(o).is_some()).collect();
    let terminator: Vec<Terminator> = outs[conv::OPEX_VALUES..WAIT_AT].iter().map(|o| printed(o).map(|i| i.terminator).unwrap_or(v.terminator)).collect();
    let modifier_order = printed(&outs[ORDER_AT]).map(|i| order_of(v, &p.order_slots, &i)).unwrap_or_default();
    let negative = |o: &Outcome| printed(o).map(|i| i.operands.iter().any(|o| matches!(o.body, sass::Body::Imm { value } if value < 0)));
    let signed_imm = p.has_imm && negative(&outs[ORDER_AT + 1]).unwrap_or(false);
    let signed_imm_by =
        p.imm_by_group.iter().zip(&outs[(ORDER_AT + 2).min(outs.len())..]).filter_map(|(&(bit, x), o)| negative(o).map(|s| (bit, x, s))).collect();
    let alias_at = outs.len().saturating_sub(p.aliases.len());
    let probes = &outs[alias_at..];
    let base = probes.first().and_then(printed);
    let aliases = p
        .aliases
        .iter()
        .zip(probes)
        .skip(1)
        .filter_map(|(a, o)| {
            let (token, at) = alias_of(base.as_ref()?, &printed(o)?)?;
            Some(conv::Alias { regs: p.alias_regs.clone(), rz: a.rz.clone(), imm: a.imm, token, at })
        })
        .collect();
    let rz_at = alias_at.saturating_sub(p.rz_offsets.len());
    let rz_offsets = rz_offset_reads(v, &p.rz_offsets, &outs[rz_at..alias_at]);
    let single_at = rz_at.saturating_sub(p.single_operands.len());
    let (omitted, unnamed) = all_ones_reads(v, &p.single_operands, &outs[single_at..rz_at]);
    let space_at = single_at.saturating_sub(p.space_probes.len());
    let semicolon = |o: &Outcome| printed(o).is_some_and(|i| i.terminator == Terminator::Semicolon);
    let space_bits = if semicolon(&outs[0]) {
        p.space_probes.iter().zip(&outs[space_at..single_at]).filter(|(_, o)| printed(o).is_some() && !semicolon(o)).map(|(&x, _)| x).collect()
    } else {
        vec![]
    };
    FormConventions {
        opex,
        opex_semicolon,
        terminator,
        barrier_legal,
        wait_semicolon,
        modifier_order,
        signed_imm,
        signed_imm_by,
        omitted,
        unnamed,
        rz_offsets,
        aliases,
        space_bits,
    }
}

/// What the [`single_operands`] probes show: the operands nvdisasm leaves out at all ones
/// ([`FormConventions::omitted`]; never a memory operand) and those whose all-ones register
/// it names `???N` ([`FormConventions::unnamed`]).
fn all_ones_reads(v: &Variant, operands: &[usize], outs: &[Outcome]) -> (Vec<usize>, Vec<usize>) {
    let (mut omitted, mut unnamed) = (vec![], vec![]);
    for (&k, i) in operands.iter().zip(outs).filter_map(|(k, o)| Some((k, printed(o)?))) {
        if !matches!(v.operands[k].kind, OperandKind::Mem(_)) && i.operands.len() + 1 == v.operands.len() && i.mnemonic == v.mnemonic {
            omitted.push(k);
        }
        if prints_unnamed(v, k, &i) {
            unnamed.push(k);
        }
    }
    (omitted, unnamed)
}

/// The slots in the order nvdisasm printed their first tokens; empty unless every slot of
/// the variant was found.
fn order_of(v: &Variant, slots: &[(SlotId, String)], printed: &Instruction) -> Vec<SlotId> {
    if slots.len() != v.modifiers.len() {
        return vec![];
    }
    let mut at: Vec<(usize, SlotId)> = vec![];
    for (id, first) in slots {
        match printed.modifiers.iter().position(|m| m == first) {
            Some(pos) => at.push((pos, id.clone())),
            None => return vec![],
        }
    }
    at.sort_by_key(|(p, _)| *p);
    at.into_iter().map(|(_, id)| id).collect()
}

/// What a variant's printing depends on: everything but its key and where its page is.
fn signature(v: &Variant) -> String {
    let fields: Vec<(&str, &[u8])> = v.fields.iter().map(|f| (f.name.as_str(), f.bits.as_slice())).collect();
    let tables: Vec<(&str, Vec<(u64, &str)>)> =
        v.tables.iter().map(|t| (t.title.as_str(), t.rows.iter().map(|r| (r.value, r.name.as_str())).collect())).collect();
    format!("{}|{:x}|{:x}|{}|{}|{fields:?}|{tables:?}", v.arch, v.fixed_mask.0, v.fixed_value.0, v.heading, v.distilled)
}

/// Learns the conventions of the given variants (all of one architecture or several),
/// one nvdisasm batch per architecture.
pub fn learn(nv: &Nvdisasm, codec: &Codec, vis: &[usize]) -> Result<Conventions, NvdisasmError> {
    let mut out = Conventions::default();
    for lesson in lessons(codec, vis) {
        let outs = nv.disassemble(&lesson.arch.nvdisasm_name(), &lesson.words())?;
        lesson.read(codec, &outs, &mut out);
    }
    Ok(out)
}

/// One architecture's learning batch: the words to ask nvdisasm about (at addresses
/// 0, 16, …) and how to read its answers back. Validation sends them with words of its own.
pub struct Lesson {
    pub arch: crate::spec::Arch,
    plans: Vec<Plan>,
    /// Variants that print as another does (same layout, tables, heading and distilled
    /// line): (variant, the one asked about).
    same_as: Vec<(usize, usize)>,
}

/// The learning batches of `vis`, one per architecture in architecture order.
pub fn lessons(codec: &Codec, vis: &[usize]) -> Vec<Lesson> {
    let mut archs: Vec<crate::spec::Arch> = vis.iter().map(|&vi| codec.variant(vi).arch).collect();
    archs.sort();
    archs.dedup();
    archs.into_iter().map(|arch| Lesson::new(codec, vis, arch)).collect()
}

impl Lesson {
    /// The batch of the variants of `vis` on `arch`.
    pub fn new(codec: &Codec, vis: &[usize], arch: crate::spec::Arch) -> Lesson {
        // Variants that read alike print alike: ask nvdisasm about one of them.
        let mut first: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let (mut same_as, mut asked) = (vec![], vec![]);
        for &vi in vis.iter().filter(|&&vi| codec.variant(vi).arch == arch) {
            match first.entry(signature(codec.variant(vi))) {
                std::collections::hash_map::Entry::Occupied(e) => same_as.push((vi, *e.get())),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(vi);
                    asked.push(vi);
                }
            }
        }
        Lesson { arch, plans: asked.iter().map(|&vi| plan(codec, vi)).collect(), same_as }
    }

    /// The words to send, word `i` at address `16 i`.
    pub fn words(&self) -> Vec<Word> {
        self.plans.iter().flat_map(|p| p.words.iter().copied()).collect()
    }

    /// What [`Lesson::read`] will make of the opex and barrier sweeps when word `i` of
    /// [`Lesson::words`] prints where `legal(i)`, known before the texts are: conventions
    /// holding only those (every other convention empty), for generating words early
    /// (the validator's random words; it checks the guess against what it reads).
    pub fn guess(&self, codec: &Codec, legal: impl Fn(usize) -> bool) -> Conventions {
        let mut out = Conventions::default();
        let mut at = 0;
        for p in &self.plans {
            let v = codec.variant(p.vi);
            let opex = (0..conv::OPEX_VALUES).map(|i| legal(at + i).then_some(0)).collect();
            let barrier_legal = (conv::OPEX_VALUES..WAIT_AT).map(|i| legal(at + i)).collect();
            let c = FormConventions::controls_only(opex, vec![], vec![], barrier_legal, vec![]);
            out.insert(v.arch, &v.key, c);
            at += p.words.len();
        }
        for &(vi, model) in &self.same_as {
            let (v, m) = (codec.variant(vi), codec.variant(model));
            if let Some(c) = out.get(m.arch, &m.key).cloned() {
                out.insert(v.arch, &v.key, c);
            }
        }
        out
    }

    /// Reads nvdisasm's outcomes of [`Lesson::words`] into `out`.
    pub fn read(&self, codec: &Codec, outs: &[Outcome], out: &mut Conventions) {
        let mut at = 0;
        for p in &self.plans {
            let v = codec.variant(p.vi);
            let n = p.words.len();
            if outs.len() >= at + n {
                out.insert(v.arch, &v.key, read(v, p, &outs[at..at + n]));
            }
            at += n;
        }
        for &(vi, model) in &self.same_as {
            let (v, m) = (codec.variant(vi), codec.variant(model));
            if let Some(c) = out.get(m.arch, &m.key).cloned() {
                out.insert(v.arch, &v.key, c);
            }
        }
    }
}

/// The conventions `conv` holds for the variants of `codec`, as one
/// [`ConventionsFile`] per page folder (the file each folder's pages read theirs from).
pub fn files(codec: &Codec, conv: &Conventions, tool: &str) -> Result<std::collections::BTreeMap<std::path::PathBuf, ConventionsFile>, StoredError> {
    let mut out: std::collections::BTreeMap<std::path::PathBuf, ConventionsFile> = Default::default();
    for v in codec.variants() {
        let Some(c) = conv.get(v.arch, &v.key) else { continue };
        let dir = std::path::Path::new(&v.file).parent().unwrap_or(std::path::Path::new(".")).to_path_buf();
        let f = out.entry(dir).or_insert_with(|| ConventionsFile::new(tool));
        f.insert(v.arch, &v.key, c)?;
    }
    Ok(out)
}

/// Where the conventions stored with the pages differ from what nvdisasm shows now: one
/// line per form (`SM90 KEY: order: stored [..], nvdisasm [..]`).
pub fn differences(codec: &Codec, conv: &Conventions) -> Vec<String> {
    let mut out = vec![];
    for v in codec.variants() {
        let Some(learned) = conv.get(v.arch, &v.key) else { continue };
        let key = crate::spec::conventions::form_key(v.arch, &v.key);
        let Some(stored) = v.conventions.as_deref() else {
            out.push(format!("{key}: no stored conventions"));
            continue;
        };
        let (Ok(a), Ok(b)) = (StoredControl::of(stored), StoredControl::of(learned)) else { continue };
        if a != b {
            out.push(format!("{key}: control table: stored {}, nvdisasm {}", a.id(), b.id()));
        }
        let (a, b) = (StoredForm::of(stored, String::new()), StoredForm::of(learned, String::new()));
        if a != b {
            out.push(format!("{key}: stored {}, nvdisasm {}", serde_json::to_string(&a).unwrap_or_default(), serde_json::to_string(&b).unwrap_or_default()));
        }
    }
    out
}
