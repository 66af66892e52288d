//! `exec --dry-run`: build every patched cubin and prove each patch on the CPU.
//!
//! Per architecture and template kind: compile the template, find its placeholders, fit
//! every test word into a slot (many slots per cubin), write the cubins and `plan.jsonl`.
//! Then nvdisasm reads each patched cubin back: a patched word must print in place exactly
//! as it prints alone (raw mode), and every other instruction exactly as in the unpatched
//! template. Any difference fails the run.

use super::patch::{clear_reuse, default_values, fit, fixed_bits, not_executable, page_jobs, Job};
use super::slots::{find_slots, register_count, Slot, Source};
use super::template::{ptx, Kind};
use crate::codec::Codec;
use crate::cubin;
use crate::gen::Rng;
use crate::oracle::listing::parse_listing;
use crate::oracle::nvdisasm::{Nvdisasm, Outcome};
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
}

/// A compiled template and what is known about it.
pub struct Template {
    pub kind: Kind,
    pub arch: Arch,
    pub bytes: Vec<u8>,
    pub slots: Vec<Slot>,
    pub listing: Vec<(u64, String, Option<Word>)>,
}

/// nvdisasm's listing of a cubin (`-hex -c`).
pub fn cubin_listing(nv: &Nvdisasm, path: &Path) -> Result<Vec<(u64, String, Option<Word>)>, String> {
    // Through the shared runner: a time limit that fires and capped output.
    let mut cmd = std::process::Command::new(&nv.path);
    cmd.args(["-hex", "-c"]).arg(path);
    let out = crate::oracle::process::run(&mut cmd, &crate::oracle::process::Limits::with_timeout(nv.timeout))
        .map_err(|e| format!("running {} on {}: {e}", nv.path.display(), path.display()))?;
    if !out.status.success() {
        return Err(format!("nvdisasm {}: {}", path.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(parse_listing(&String::from_utf8_lossy(&out.stdout)))
}

/// Compile `kind`'s template for `arch` into `dir` and find its placeholders.
pub fn build_template(nv: &Nvdisasm, ptxas_path: &Path, kind: Kind, arch: Arch, slots: u32, dir: &Path) -> Result<Template, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let src = dir.join(format!("{}.{}.ptx", kind.name(), arch.ptxas_name()));
    std::fs::write(&src, ptx(kind, arch, slots)).map_err(|e| format!("{}: {e}", src.display()))?;
    let cub = ptxas::compile(ptxas_path, &src, &arch.ptxas_name(), dir).map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&cub).map_err(|e| format!("{}: {e}", cub.display()))?;
    let listing = cubin_listing(nv, &cub)?;
    let found = find_slots(&listing, kind.placeholder(), kind.reg_bits() == 64)?;
    if found.is_empty() {
        return Err(format!("{}: ptxas emitted no {} placeholder", cub.display(), kind.placeholder()));
    }
    let regs = register_count(&bytes).ok_or_else(|| format!("{}: no EIATTR_REGCOUNT in .nv.info", cub.display()))?;
    let pair = (kind.reg_bits() / 32) as u16;
    if let Some(s) = found.iter().find(|s| s.sources.iter().map(|x| x.reg).chain([s.dest]).any(|r| (r + pair) as u32 > regs)) {
        return Err(format!("{}: placeholder '{}' uses registers beyond the kernel's {regs}", cub.display(), s.text));
    }
    Ok(Template { kind, arch, bytes, slots: found, listing })
}

/// The template with reuse bits cleared on every placeholder and the word before it.
fn baseline(t: &Template, v: &Variant) -> Result<Vec<u8>, String> {
    let words: HashMap<u64, Word> = t.listing.iter().filter_map(|(a, _, w)| w.map(|w| (*a, w))).collect();
    let mut bytes = t.bytes.clone();
    for s in &t.slots {
        for at in [s.offset.checked_sub(16), Some(s.offset)].into_iter().flatten() {
            let w = *words.get(&at).ok_or_else(|| format!("no word at {at:#x}"))?;
            bytes = cubin::patch_word(&bytes, SECTION, at, clear_reuse(v, w)).map_err(|e| e.to_string())?;
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

/// Test words for one template: page words nvdisasm prints alone, then every fixed bit
/// whose flip nvdisasm ignores (same text as the unflipped word).
fn jobs_for(codec: &Codec, nv: &Nvdisasm, t: &Template, variants: &[usize], opts: &Options, rep: &mut Report) -> Result<Vec<Job>, String> {
    let (arch, slot0) = (t.arch.nvdisasm_name(), &t.slots[0]);
    let mut rng = Rng::new(opts.seed ^ t.arch.0 as u64);
    let mut jobs: Vec<Job> = variants.iter().flat_map(|&vi| page_jobs(codec, vi, opts.random, &mut rng)).collect();
    let words: Vec<Word> = jobs.iter().map(|j| fit(codec, j, slot0, t.kind)).collect::<Result<_, _>>()?;
    let outs = nv.disassemble(&arch, &words).map_err(|e| e.to_string())?;
    let before = jobs.len();
    let mut keep = outs.iter().map(|o| text_of(o).is_some());
    jobs.retain(|_| keep.next().unwrap_or(false));
    rep.illegal_alone += before - jobs.len();
    let mut ws = vec![];
    let mut cands = vec![]; // (variant, bit, index of the flipped word, index of its base)
    for &vi in variants {
        let base = fit(codec, &Job { variant: vi, values: default_values(codec.variant(vi)), flip: None }, slot0, t.kind)?;
        let bi = ws.len();
        ws.push(base);
        for b in fixed_bits(codec.variant(vi)) {
            cands.push((vi, b, ws.len(), bi));
            ws.push(base.flip(b));
        }
    }
    let outs = nv.disassemble(&arch, &ws).map_err(|e| e.to_string())?;
    for (vi, b, i, bi) in cands {
        if text_of(&outs[i]).is_some() && text_of(&outs[i]) == text_of(&outs[bi]) {
            jobs.push(Job { variant: vi, values: default_values(codec.variant(vi)), flip: Some(b) });
            rep.hidden_bits += 1;
        }
    }
    Ok(jobs)
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

/// Fit `jobs` into the slots, `slots.len()` per cubin; write cubins and plan lines.
/// Executable words and the others go to separate cubins, so that a word that cannot run
/// (its UR or bank descriptor unknown) never shares a launch with one that can.
fn emit(codec: &Codec, t: &Template, base: &[u8], jobs: &[Job], out: &Path, plan: &mut impl Write) -> Result<Vec<Patched>, String> {
    let dir = out.join("cubins");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let runs = |j: &&Job| not_executable(codec.variant(j.variant)).is_none();
    let (yes, no): (Vec<&Job>, Vec<&Job>) = jobs.iter().partition(runs);
    let chunks = yes.chunks(t.slots.len()).chain(no.chunks(t.slots.len()));
    let mut cubins = vec![];
    for (ci, chunk) in chunks.enumerate() {
        let rel = format!("cubins/{}.{}.{ci:03}.cubin", t.kind.name(), t.arch.ptxas_name());
        let mut bytes = base.to_vec();
        let mut words = vec![];
        for (slot, job) in t.slots.iter().zip(chunk.iter().copied()) {
            let w = fit(codec, job, slot, t.kind)?;
            bytes = cubin::patch_word(&bytes, SECTION, slot.offset, w).map_err(|e| e.to_string())?;
            words.push((slot.offset, w));
            let v = codec.variant(job.variant);
            let why = not_executable(v);
            let e = PlanEntry {
                arch: t.arch.0,
                variant: v.key.clone(),
                word: w.hex(),
                cubin: rel.clone(),
                section: SECTION.into(),
                offset: slot.offset,
                kind: if job.flip.is_some() { "hidden_bit" } else { "page" }.into(),
                bit: job.flip,
                base_word: job.flip.map(|b| w.flip(b).hex()),
                values_id: values_id(job),
                template: t.kind,
                dest: slot.dest,
                out_offset: slot.out_offset,
                sources: slot.sources.iter().map(SourceEntry::from).collect(),
                executable: why.is_none(),
                why_not: why,
            };
            writeln!(plan, "{}", serde_json::to_string(&e).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        }
        let path = out.join(&rel);
        std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        cubins.push(Patched { path, words });
    }
    Ok(cubins)
}

/// Every patched cubin against the baseline listing and each word's raw text
/// (cubins read by `nv.jobs` nvdisasm processes at once).
pub fn verify(nv: &Nvdisasm, arch: Arch, base: &[(u64, String, Option<Word>)], cubins: &[Patched], rep: &mut Report) -> Result<(), String> {
    let all: Vec<Word> = cubins.iter().flat_map(|c| c.words.iter().map(|x| x.1)).collect();
    let alone: HashMap<Word, Outcome> = all.iter().copied().zip(nv.disassemble(&arch.nvdisasm_name(), &all).map_err(|e| e.to_string())?).collect();
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

/// The dry run over every variant `codec` knows; fails (Err) only when it cannot run.
/// Patch mismatches are `Report::failures`.
pub fn dry_run(codec: &Codec, nv: &Nvdisasm, ptxas_path: &Path, opts: &Options) -> Result<Report, String> {
    let mut groups: BTreeMap<(Arch, Kind), Vec<usize>> = BTreeMap::new();
    for (vi, v) in codec.variants().iter().enumerate() {
        let kind = Kind::for_mnemonic(&v.mnemonic).ok_or_else(|| format!("{}: no execution template for {}", v.key, v.mnemonic))?;
        groups.entry((v.arch, kind)).or_default().push(vi);
    }
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let plan_path = opts.out.join("plan.jsonl");
    let mut plan = std::io::BufWriter::new(std::fs::File::create(&plan_path).map_err(|e| format!("{}: {e}", plan_path.display()))?);
    let mut rep = Report::default();
    for ((arch, kind), variants) in &groups {
        let t = build_template(nv, ptxas_path, *kind, *arch, opts.slots, &opts.out.join("templates"))?;
        let base = baseline(&t, codec.variant(variants[0]))?;
        let base_path = opts.out.join("templates").join(format!("{}.{}.baseline.cubin", kind.name(), arch.ptxas_name()));
        std::fs::write(&base_path, &base).map_err(|e| format!("{}: {e}", base_path.display()))?;
        let base_listing = cubin_listing(nv, &base_path)?;
        let jobs = jobs_for(codec, nv, &t, variants, opts, &mut rep)?;
        let cubins = emit(codec, &t, &base, &jobs, &opts.out, &mut plan)?;
        rep.entries += jobs.len();
        rep.cubins += cubins.len();
        verify(nv, *arch, &base_listing, &cubins, &mut rep)?;
    }
    plan.flush().map_err(|e| e.to_string())?;
    Ok(rep)
}
