//! `exec --dry-run`: build every patched cubin and prove each patch on the CPU.
//!
//! Per architecture and template kind: compile the template, find its placeholders, fit
//! every test word into a slot (many slots per cubin), write the cubins and `plan.jsonl`.
//! Then nvdisasm reads each patched cubin back: a patched word must print in place exactly
//! as it prints alone (raw mode), and every other instruction exactly as in the unpatched
//! template. Any difference fails the run.

use super::error::GpuError;
use super::patch::{clear_reuse, default_values, fit, fixed_bits, not_executable, page_jobs, Job};
use super::relations::{self, RelKind, Relation};
use super::slots::{find_slots, register_count, Slot, Source};
use super::template::{ptx, Kind};
use crate::codec::Codec;
use crate::cubin;
use crate::gen::Rng;
use crate::oracle::cache;
use crate::oracle::listing::parse_listing;
use crate::oracle::nvdisasm::{Nvdisasm, NvdisasmError, Outcome};
use crate::oracle::ptxas;
use crate::spec::{Arch, Variant};
use crate::word::Word;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const SECTION: &str = ".text.slots";

#[derive(Clone, Debug)]
pub struct Options {
    pub out: PathBuf,
    /// Placeholders per template (ptxas may turn some into other instructions).
    pub slots: u32,
    /// Random listed words per variant, on top of the structured ones.
    pub random: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { out: PathBuf::from("reports/exec"), slots: 64, random: 4, seed: 0x5eed }
    }
}

/// One line of `plan.jsonl`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PlanEntry {
    pub arch: u32,
    pub variant: String,
    /// The patched word (32 hex digits, bit 127 first).
    pub word: String,
    /// Relative to the output folder.
    pub cubin: String,
    pub section: String,
    /// Bytes into `section`.
    pub offset: u64,
    /// `page` (a word of the page's layout) or `hidden_bit` (a fixed bit nvdisasm ignores, flipped).
    pub kind: String,
    pub bit: Option<u8>,
    /// For `hidden_bit`: the same word without the flip (the result must not change).
    pub base_word: Option<String>,
    /// The field values before fitting (same for a hidden-bit word and its base page
    /// word): pairs a `hidden_bit` entry with the page entry it flips.
    #[serde(default)]
    pub values_id: String,
    pub template: Kind,
    pub dest: u16,
    pub out_offset: u32,
    pub sources: Vec<SourceEntry>,
    pub executable: bool,
    pub why_not: Option<String>,
    /// Entries with the same key get the same per-thread source values.
    #[serde(default)]
    pub input_key: String,
    /// What this entry's outputs must equal (no model needed).
    #[serde(default)]
    pub relation: Option<Relation>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct SourceEntry {
    pub reg: u16,
    pub in_offset: u32,
}

impl From<&Source> for SourceEntry {
    fn from(s: &Source) -> Self {
        SourceEntry { reg: s.reg, in_offset: s.in_offset }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub entries: usize,
    pub hidden_bits: usize,
    pub cubins: usize,
    /// Words dropped before patching because nvdisasm rejects them alone.
    pub illegal_alone: usize,
    pub failures: Vec<String>,
    /// Variants (or given words) no template holds: no PTX op emits their mnemonic.
    pub no_template: usize,
    /// Words whose register widths differ from their variant's template (I2F tables).
    pub other_width: usize,
    /// Given words (`plan_words`) that decode to no variant.
    pub undecodable: usize,
    pub per_arch: BTreeMap<u32, ArchCounts>,
}

/// One architecture's share of a plan.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ArchCounts {
    /// Forms (variants) with a word in the plan.
    pub forms: usize,
    pub words: usize,
    /// Words that run (a template holds every operand).
    pub runnable: usize,
    pub cubins: usize,
    pub runnable_cubins: usize,
    /// Forms checked by each relation.
    pub forms_ignored_bit: usize,
    pub forms_operand_form: usize,
    pub forms_rerun: usize,
    pub operand_form_words: usize,
    /// Template kinds (one canary run each).
    pub templates: usize,
}

/// A compiled template and what is known about it.
pub struct Template {
    pub kind: Kind,
    pub arch: Arch,
    pub bytes: Vec<u8>,
    pub slots: Vec<Slot>,
    pub listing: Vec<(u64, String, Option<Word>)>,
}

/// nvdisasm's listing of a cubin (`-hex -c`), or the one kept for the same bytes in
/// [`Nvdisasm::cache`].
pub fn cubin_listing(nv: &Nvdisasm, path: &Path) -> Result<Vec<(u64, String, Option<Word>)>, GpuError> {
    let kept = nv.cache.as_deref().and_then(|dir| kept_listing(dir, nv, path));
    if let Some(text) = kept.as_ref().and_then(cache::Entry::read) {
        return Ok(parse_listing(&String::from_utf8_lossy(&text)));
    }
    // Through the shared runner: a time limit that fires and capped output.
    let mut cmd = std::process::Command::new(&nv.path);
    cmd.args(["-hex", "-c"]).arg(path);
    let out = crate::oracle::process::run(&mut cmd, &crate::oracle::process::Limits::with_timeout(nv.timeout)).map_err(|source| GpuError::ListingRun {
        tool: nv.path.clone(),
        cubin: path.to_path_buf(),
        source,
    })?;
    if !out.status.success() {
        return Err(GpuError::Listing { cubin: path.to_path_buf(), stderr: String::from_utf8_lossy(&out.stderr).trim().into() });
    }
    if let Some(k) = &kept {
        k.write(&out.stdout);
    }
    Ok(parse_listing(&String::from_utf8_lossy(&out.stdout)))
}

/// The cache entry of `-hex -c` on the cubin at `path` (its bytes read now), when the
/// tool's binary can be named and the file read.
fn kept_listing(dir: &Path, nv: &Nvdisasm, path: &Path) -> Option<cache::Entry> {
    let key = nv.reply_key("-hex -c", &std::fs::read(path).ok()?)?;
    Some(cache::Entry::new(dir, ".cubin", key))
}

/// Compile `kind`'s template for `arch` into `dir` and find its placeholders.
pub fn build_template(nv: &Nvdisasm, ptxas_path: &Path, kind: Kind, arch: Arch, slots: u32, dir: &Path) -> Result<Template, GpuError> {
    std::fs::create_dir_all(dir).map_err(GpuError::file(dir))?;
    let src = dir.join(format!("{}.{}.ptx", kind.name(), arch.ptxas_name()));
    std::fs::write(&src, ptx(kind, arch, slots)).map_err(GpuError::file(&src))?;
    let cub = ptxas::compile(ptxas_path, &src, &arch.ptxas_name(), dir)?;
    let bytes = std::fs::read(&cub).map_err(GpuError::file(&cub))?;
    let listing = cubin_listing(nv, &cub)?;
    let found = find_slots(&listing, kind.placeholder(), kind.dst_bits() == 64, kind.src_bits() == 64)
        .map_err(|source| GpuError::Slots { cubin: cub.clone(), source })?;
    if found.is_empty() {
        return Err(GpuError::NoPlaceholder { cubin: cub, placeholder: kind.placeholder() });
    }
    let Some(regs) = register_count(&bytes) else {
        return Err(GpuError::NoRegisterCount { cubin: cub });
    };
    let (dp, sp) = ((kind.dst_bits() / 32) as u16, (kind.src_bits() / 32) as u16);
    if let Some(s) = found.iter().find(|s| s.sources.iter().map(|x| x.reg + sp).chain([s.dest + dp]).any(|r| r as u32 > regs)) {
        return Err(GpuError::RegistersBeyond { cubin: cub, text: s.text.clone(), regs });
    }
    Ok(Template { kind, arch, bytes, slots: found, listing })
}

/// The template with reuse bits cleared on every placeholder and the word before it.
fn baseline(t: &Template, v: &Variant) -> Result<Vec<u8>, GpuError> {
    let words: HashMap<u64, Word> = t.listing.iter().filter_map(|(a, _, w)| w.map(|w| (*a, w))).collect();
    let mut bytes = t.bytes.clone();
    for s in &t.slots {
        for at in [s.offset.checked_sub(16), Some(s.offset)].into_iter().flatten() {
            let w = *words.get(&at).ok_or(GpuError::NoWordAt { addr: at })?;
            bytes = cubin::patch_word(&bytes, SECTION, at, clear_reuse(v, w))?;
        }
    }
    Ok(bytes)
}

fn text_of(o: &Outcome) -> Option<&str> {
    match o {
        Outcome::Printed { text } => Some(text),
        _ => None,
    }
}

/// A word to plan: the job, its role, whose inputs it shares and what it must equal.
#[derive(Clone, Debug)]
pub struct Planned {
    pub job: Job,
    pub role: &'static str,
    pub input_key: String,
    pub relation: Option<Relation>,
}

impl Planned {
    fn page(job: Job) -> Planned {
        let key = values_id(&job);
        Planned { job, role: "page", input_key: key, relation: None }
    }
}

/// The template kind of a job's word (I2F's register widths from its printed modifiers).
pub fn job_kind(codec: &Codec, job: &Job) -> Option<Kind> {
    let insn = crate::codec::print(codec.variant(job.variant), &job.values);
    Kind::for_instruction(&insn.mnemonic, &insn.modifiers)
}

/// Every word of one template: the given page words that fit its register widths, their
/// register-form twins (`operand_form`), those nvdisasm prints alone; then every fixed
/// bit of their variants nvdisasm ignores, flipped (`ignored_bit`).
fn words_for(codec: &Codec, nv: &Nvdisasm, t: &Template, page: Vec<Job>, rep: &mut Report) -> Result<Vec<Planned>, GpuError> {
    let (arch, slot0) = (t.arch.nvdisasm_name(), &t.slots[0]);
    let before = page.len();
    let page: Vec<Job> = page.into_iter().filter(|j| job_kind(codec, j) == Some(t.kind)).collect();
    rep.other_width += before - page.len();
    let mut planned: Vec<Planned> = vec![];
    for j in page {
        let p = Planned::page(j);
        let w = codec.encode_unchecked(p.job.variant, &p.job.values);
        let twin = relations::register_twin(codec, t.arch, w).map(|(vi, values, operands)| Planned {
            job: Job { variant: vi, values, flip: None },
            role: "operand_form",
            input_key: p.input_key.clone(),
            relation: Some(Relation { kind: RelKind::OperandForm, with: p.input_key.clone(), operands }),
        });
        planned.push(p);
        planned.extend(twin.filter(|x| job_kind(codec, &x.job) == Some(t.kind)));
    }
    let words: Vec<Word> = planned.iter().map(|p| fit(codec, &p.job, slot0, t.kind)).collect::<Result<_, _>>()?;
    let outs = nv.disassemble(&arch, &words)?;
    let before = planned.len();
    let mut keep = outs.iter().map(|o| text_of(o).is_some());
    planned.retain(|_| keep.next().unwrap_or(false));
    rep.illegal_alone += before - planned.len();
    let mut seen = std::collections::HashSet::new();
    let variants: Vec<usize> = planned.iter().filter(|p| p.role == "page" && seen.insert(p.job.variant)).map(|p| p.job.variant).collect();
    let mut ws = vec![];
    let mut cands = vec![]; // (variant, bit, index of the flipped word, index of its base)
    for &vi in &variants {
        let base = fit(codec, &Job { variant: vi, values: default_values(codec.variant(vi)), flip: None }, slot0, t.kind)?;
        let bi = ws.len();
        ws.push(base);
        for b in fixed_bits(codec.variant(vi)) {
            cands.push((vi, b, ws.len(), bi));
            ws.push(base.flip(b));
        }
    }
    let outs = nv.disassemble(&arch, &ws)?;
    for (vi, b, i, bi) in cands {
        if text_of(&outs[i]).is_some() && text_of(&outs[i]) == text_of(&outs[bi]) {
            let job = Job { variant: vi, values: default_values(codec.variant(vi)), flip: Some(b) };
            let key = values_id(&job);
            planned.push(Planned {
                job,
                role: "hidden_bit",
                input_key: key.clone(),
                relation: Some(Relation { kind: RelKind::IgnoredBit, with: key, operands: vec![] }),
            });
            rep.hidden_bits += 1;
        }
    }
    Ok(planned)
}

/// `variant:hash` of a job's field values (SipHash with fixed keys: stable across runs).
fn values_id(job: &Job) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    job.values.as_slice().hash(&mut h);
    format!("{}:{:016x}", job.variant, h.finish())
}

/// A patched cubin: where it is and which word sits at which offset.
pub struct Patched {
    pub path: PathBuf,
    pub words: Vec<(u64, Word)>,
}

/// Fit the words into the slots, `slots.len()` per cubin; write cubins and plan lines.
/// Executable words and the others go to separate cubins, so that a word that cannot run
/// (a predicate operand) never shares a launch with one that can.
fn emit(
    codec: &Codec,
    t: &Template,
    base: &[u8],
    planned: &[Planned],
    out: &Path,
    (plan, plan_path): (&mut impl Write, &Path),
) -> Result<(Vec<Patched>, Vec<PlanEntry>), GpuError> {
    let dir = out.join("cubins");
    std::fs::create_dir_all(&dir).map_err(GpuError::file(&dir))?;
    let runs = |p: &&Planned| not_executable(codec.variant(p.job.variant)).is_none();
    let (yes, no): (Vec<&Planned>, Vec<&Planned>) = planned.iter().partition(runs);
    let chunks = yes.chunks(t.slots.len()).chain(no.chunks(t.slots.len()));
    let (mut cubins, mut entries) = (vec![], vec![]);
    for (ci, chunk) in chunks.enumerate() {
        let rel = format!("cubins/{}.{}.{ci:03}.cubin", t.kind.name(), t.arch.ptxas_name());
        let mut bytes = base.to_vec();
        let mut words = vec![];
        for (slot, p) in t.slots.iter().zip(chunk.iter().copied()) {
            let w = fit(codec, &p.job, slot, t.kind)?;
            bytes = cubin::patch_word(&bytes, SECTION, slot.offset, w)?;
            words.push((slot.offset, w));
            let v = codec.variant(p.job.variant);
            let why = not_executable(v);
            let e = PlanEntry {
                arch: t.arch.0,
                variant: v.key.clone(),
                word: w.hex(),
                cubin: rel.clone(),
                section: SECTION.into(),
                offset: slot.offset,
                kind: p.role.into(),
                bit: p.job.flip,
                base_word: p.job.flip.map(|b| w.flip(b).hex()),
                values_id: values_id(&p.job),
                template: t.kind,
                dest: slot.dest,
                out_offset: slot.out_offset,
                sources: slot.sources.iter().map(SourceEntry::from).collect(),
                executable: why.is_none(),
                why_not: why,
                input_key: p.input_key.clone(),
                relation: p.relation.clone(),
            };
            writeln!(plan, "{}", serde_json::to_string(&e)?).map_err(GpuError::file(plan_path))?;
            entries.push(e);
        }
        let path = out.join(&rel);
        std::fs::write(&path, &bytes).map_err(GpuError::file(&path))?;
        cubins.push(Patched { path, words });
    }
    Ok((cubins, entries))
}

/// Every patched cubin against the baseline listing and each word's raw text
/// (cubins read by `nv.jobs` nvdisasm processes at once).
pub fn verify(nv: &Nvdisasm, arch: Arch, base: &[(u64, String, Option<Word>)], cubins: &[Patched], rep: &mut Report) -> Result<(), NvdisasmError> {
    let all: Vec<Word> = cubins.iter().flat_map(|c| c.words.iter().map(|x| x.1)).collect();
    let alone: HashMap<Word, Outcome> = all.iter().copied().zip(nv.disassemble(&arch.nvdisasm_name(), &all)?).collect();
    let per = cubins.len().div_ceil(nv.jobs.max(1)).max(1);
    let found: Vec<Vec<String>> = std::thread::scope(|sc| {
        let hs: Vec<_> = cubins.chunks(per).map(|cs| sc.spawn(|| cs.iter().flat_map(|c| verify_one(nv, base, c, &alone)).collect::<Vec<_>>())).collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| vec!["verifier thread panicked".into()])).collect()
    });
    rep.failures.extend(found.into_iter().flatten());
    Ok(())
}

fn verify_one(nv: &Nvdisasm, base: &[(u64, String, Option<Word>)], c: &Patched, alone: &HashMap<Word, Outcome>) -> Vec<String> {
    let name = c.path.display();
    let listing = match cubin_listing(nv, &c.path) {
        Ok(l) => l,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    if listing.len() != base.len() {
        return vec![format!("{name}: {} instructions, the template has {}", listing.len(), base.len())];
    }
    let patched: BTreeMap<u64, Word> = c.words.iter().copied().collect();
    let mut failures = vec![];
    for ((addr, text, word), (baddr, btext, _)) in listing.iter().zip(base) {
        let why = match patched.get(addr) {
            _ if addr != baddr => Some(format!("address {addr:#x} where the template has {baddr:#x}")),
            Some(w) if *word != Some(*w) => Some(format!("holds {word:?}, not the patched {w}")),
            Some(w) => match alone.get(w).and_then(text_of) {
                Some(t) if t == text => None,
                t => Some(format!("prints '{text}' in place but {t:?} alone (word {w})")),
            },
            None if text != btext => Some(format!("changed: '{btext}' became '{text}'")),
            None => None,
        };
        if let Some(why) = why {
            failures.push(format!("{name} at {addr:#06x}: {why}"));
        }
    }
    failures
}

/// The dry run over every variant `codec` knows that a template can hold (the others are
/// counted in `Report::no_template`); fails (Err) only when it cannot run. Patch
/// mismatches are `Report::failures`.
pub fn dry_run(codec: &Codec, nv: &Nvdisasm, ptxas_path: &Path, opts: &Options) -> Result<Report, GpuError> {
    let mut groups: BTreeMap<(Arch, Kind), Vec<Job>> = BTreeMap::new();
    let mut rep = Report::default();
    let mut rng = Rng::new(opts.seed);
    for (vi, v) in codec.variants().iter().enumerate() {
        let base = Job { variant: vi, values: default_values(v), flip: None };
        let Some(kind) = job_kind(codec, &base) else {
            rep.no_template += 1;
            continue;
        };
        groups.entry((v.arch, kind)).or_default().extend(page_jobs(codec, vi, opts.random, &mut rng));
    }
    plan_groups(codec, nv, ptxas_path, groups, opts, rep)
}

/// The plan for arbitrary words (a fuzz corpus, say): each word that decodes and that a
/// template holds, with the plainest word of its variant (the `ignored_bit` partner),
/// register-form twins and ignored-bit flips, proven in place like the dry run's.
pub fn plan_words(codec: &Codec, nv: &Nvdisasm, ptxas_path: &Path, words: &[(Arch, Word)], opts: &Options) -> Result<Report, GpuError> {
    let mut groups: BTreeMap<(Arch, Kind), Vec<Job>> = BTreeMap::new();
    let mut rep = Report::default();
    let mut seen = std::collections::HashSet::new();
    for &(arch, w) in words {
        let Ok((vi, values)) = codec.decode(arch, w) else {
            rep.undecodable += 1;
            continue;
        };
        let job = Job { variant: vi, values, flip: None };
        let Some(kind) = job_kind(codec, &job) else {
            rep.no_template += 1;
            continue;
        };
        let g = groups.entry((arch, kind)).or_default();
        let base = Job { variant: vi, values: default_values(codec.variant(vi)), flip: None };
        for j in [base, job] {
            if seen.insert((j.variant, codec.encode_unchecked(j.variant, &j.values))) {
                g.push(j);
            }
        }
    }
    plan_groups(codec, nv, ptxas_path, groups, opts, rep)
}

/// Template, words, cubins and proof for each (architecture, template kind).
fn plan_groups(
    codec: &Codec,
    nv: &Nvdisasm,
    ptxas_path: &Path,
    groups: BTreeMap<(Arch, Kind), Vec<Job>>,
    opts: &Options,
    mut rep: Report,
) -> Result<Report, GpuError> {
    std::fs::create_dir_all(&opts.out).map_err(GpuError::file(&opts.out))?;
    let plan_path = opts.out.join("plan.jsonl");
    let mut plan = std::io::BufWriter::new(std::fs::File::create(&plan_path).map_err(GpuError::file(&plan_path))?);
    let mut all = vec![];
    for ((arch, kind), jobs) in groups {
        if kind.min_arch() > arch.0 {
            rep.no_template += jobs.len();
            continue;
        }
        let t = build_template(nv, ptxas_path, kind, arch, opts.slots, &opts.out.join("templates"))?;
        let base = baseline(&t, codec.variant(jobs[0].variant))?;
        let base_path = opts.out.join("templates").join(format!("{}.{}.baseline.cubin", kind.name(), arch.ptxas_name()));
        std::fs::write(&base_path, &base).map_err(GpuError::file(&base_path))?;
        let base_listing = cubin_listing(nv, &base_path)?;
        let planned = words_for(codec, nv, &t, jobs, &mut rep)?;
        let (cubins, entries) = emit(codec, &t, &base, &planned, &opts.out, (&mut plan, &plan_path))?;
        rep.entries += entries.len();
        rep.cubins += cubins.len();
        verify(nv, arch, &base_listing, &cubins, &mut rep)?;
        all.extend(entries);
    }
    plan.flush().map_err(GpuError::file(&plan_path))?;
    rep.per_arch = count(&all);
    Ok(rep)
}

/// Per architecture: forms, words, runnable words, and the forms each relation covers.
pub fn count(entries: &[PlanEntry]) -> BTreeMap<u32, ArchCounts> {
    let mut out: BTreeMap<u32, ArchCounts> = BTreeMap::new();
    let mut sets: BTreeMap<(u32, &str), std::collections::BTreeSet<&str>> = BTreeMap::new();
    let variant_of: HashMap<&str, &str> = entries.iter().filter(|e| e.kind == "page").map(|e| (e.values_id.as_str(), e.variant.as_str())).collect();
    let mut cubins: std::collections::BTreeSet<(&str, bool)> = Default::default();
    let kinds: std::collections::BTreeSet<(u32, Kind)> = entries.iter().filter(|e| e.executable).map(|e| (e.arch, e.template)).collect();
    for (arch, _) in kinds {
        out.entry(arch).or_default().templates += 1;
    }
    for e in entries {
        let c = out.entry(e.arch).or_default();
        c.words += 1;
        c.runnable += e.executable as usize;
        cubins.insert((e.cubin.as_str(), e.executable));
        sets.entry((e.arch, "forms")).or_default().insert(&e.variant);
        if e.executable {
            sets.entry((e.arch, "rerun")).or_default().insert(&e.variant);
        }
        match e.relation.as_ref().map(|r| r.kind) {
            Some(RelKind::IgnoredBit) => {
                sets.entry((e.arch, "ignored_bit")).or_default().insert(&e.variant);
            }
            Some(RelKind::OperandForm) => {
                let s = sets.entry((e.arch, "operand_form")).or_default();
                s.insert(&e.variant);
                if let Some(p) = e.relation.as_ref().and_then(|r| variant_of.get(r.with.as_str())) {
                    s.insert(p);
                }
                out.entry(e.arch).or_default().operand_form_words += 1;
            }
            None => {}
        }
    }
    for (cubin, runs) in cubins {
        let arch = entries.iter().find(|e| e.cubin == cubin).map(|e| e.arch).unwrap_or(0);
        let c = out.entry(arch).or_default();
        c.cubins += 1;
        c.runnable_cubins += runs as usize;
    }
    for ((arch, what), set) in sets {
        let c = out.entry(arch).or_default();
        let n = set.len();
        match what {
            "forms" => c.forms = n,
            "rerun" => c.forms_rerun = n,
            "ignored_bit" => c.forms_ignored_bit = n,
            _ => c.forms_operand_form = n,
        }
    }
    out
}

/// Seconds one child run takes, for the plan's time estimate: process start, `cuInit`
/// and context, module load, two 10 240-thread copies and a launch. A design estimate
/// (no GPU has measured it yet); the nightly's first run replaces it with a figure.
pub const CHILD_RUN_SECONDS: f64 = 0.6;

/// Estimated seconds to run every runnable cubin of one architecture: the canary per
/// template kind, then two runs (two sentinels) per cubin.
pub fn estimate_seconds(c: &ArchCounts, kinds: usize) -> f64 {
    (kinds + 2 * c.runnable_cubins) as f64 * CHILD_RUN_SECONDS
}
