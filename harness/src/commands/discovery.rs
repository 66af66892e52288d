//! The discovery commands: a whole architecture, single words, seed pages rediscovered,
//! shards merged.

use super::{load_spec, nvdisasm, Result};
use crate::discover;
use crate::output::OutputDir;
use crate::spec;
use std::path::{Path, PathBuf};

/// A whole architecture (or a shard of it) into `opts.out`.
pub fn discover_arch(mut opts: discover::sweep::Options, ptx: &[PathBuf], seed_pages: &[PathBuf], jobs: Option<usize>) -> Result {
    let mut nv = nvdisasm()?;
    // Locked before anything is read or written there (census.json, cubins/): a second
    // run into the folder is refused before it can touch the first one's files.
    let _lock = crate::output::OutputDir::lock(&opts.out).map_err(|e| e.to_string())?;
    // Seeds only start a census: a census.json already there (an interrupted run) holds them.
    if !ptx.iter().any(|p| p == Path::new("none")) && !opts.out.join("census.json").exists() {
        opts.seeds = ptx_seeds(opts.arch, &opts.out.join("cubins"), ptx)?;
    }
    if !seed_pages.is_empty() && !opts.out.join("census.json").exists() {
        opts.borrowed = base_words(&load_spec(seed_pages)?)?;
    }
    if let Some(j) = jobs {
        nv.jobs = j.max(1);
    }
    opts.tool = format!("nvdisasm {}", nv.version_number.clone().unwrap_or_else(|| nv.version.clone()));
    let s = discover::sweep::run(&nv, &opts, &|m| eprintln!("discover {}: {m}", opts.arch))?;
    println!(
        "{}: {} forms, {} solved onto {} pages ({} fields, {} table rows); {} batches, {} words, {:.1} s; see {}",
        opts.arch,
        s.forms,
        s.solved,
        s.pages,
        s.fields,
        s.rows,
        s.batches,
        s.words,
        s.seconds,
        opts.out.join("summary.md").display()
    );
    Ok(())
}

/// The words ptxas writes for every folder of `ptx`, in the order given (each folder's
/// files sorted), so the census's seeds, and the forms it finds first, are deterministic.
fn ptx_seeds(arch: spec::Arch, cubins: &Path, ptx: &[PathBuf]) -> Result<Vec<crate::word::Word>> {
    let ptxas = crate::oracle::tools::locate(crate::oracle::tools::Tool::Ptxas).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(cubins).map_err(|e| format!("{}: {e}", cubins.display()))?;
    let mut seeds = vec![];
    for dir in ptx {
        let (words, skipped) = crate::realcode::corpus_words(&ptxas, dir, arch, cubins)?;
        for s in skipped {
            eprintln!("discover {arch}: {s}");
        }
        seeds.extend(words);
    }
    Ok(seeds)
}

/// Every variant's base word (its distilled line's values), in page order.
fn base_words(s: &spec::Spec) -> Result<Vec<crate::word::Word>> {
    let c = crate::codec::Codec::new(s);
    (0..c.variants().len())
        .map(|vi| c.encode(vi, &crate::gen::distilled_values(c.variant(vi))).map_err(|e| format!("{}: {e}", c.variant(vi).key).into()))
        .collect()
}

/// Rediscovers hand-written pages; lists where they differ from nvdisasm.
pub fn discover_from(pages: &[PathBuf], out: &Path) -> Result {
    let s = load_spec(pages)?;
    let nv = nvdisasm()?;
    let _lock = OutputDir::lock(out).map_err(|e| e.to_string())?;
    let mut md = String::from("# Seed pages against discovery\n\n");
    let mut total = 0;
    for seed in &s.pages {
        let (text, _) = discover::seeded::rediscover(&nv, seed).map_err(|e| format!("{}: {e}", seed.file))?;
        let name = Path::new(&seed.file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = out.join(&name);
        crate::output::write_atomic(&path, text.as_bytes()).map_err(|e| e.to_string())?;
        let found = spec::parse::parse_page(&path.display().to_string(), text.as_bytes()).map_err(|e| e.to_string())?;
        let diffs = discover::seeded::differences(seed, &found);
        total += diffs.len();
        md.push_str(&format!("## {} ({} {})\n\n", seed.file, seed.instruction, seed.arch));
        md.push_str(&if diffs.is_empty() { "agrees with nvdisasm\n".to_string() } else { diffs.iter().map(|d| format!("- {d}\n")).collect() });
        md.push('\n');
        println!("{}: {} difference(s); wrote {}", seed.file, diffs.len(), path.display());
    }
    let path = out.join("differences.md");
    crate::output::write_atomic(&path, md.as_bytes()).map_err(|e| e.to_string())?;
    println!("{total} difference(s) in all; see {}", path.display());
    Ok(())
}

/// Joins shard folders: the census of the first, every shard's records, pages rendered again.
pub fn merge(shards: &[PathBuf], out: &Path) -> Result {
    let s = discover::sweep::merge(shards, out)?;
    println!("merged {} shard(s): {} forms, {} solved onto {} pages into {}", shards.len(), s.forms, s.solved, s.pages, out.display());
    if let Some(e) = &s.census_error {
        eprintln!("census words not counted: {e}");
    }
    Ok(())
}

pub fn discover(arch: u32, words: &[String], out: &Path, description: Option<&str>) -> Result {
    use crate::word::Word;
    let nv = nvdisasm()?;
    let mut found = vec![];
    for w in words {
        let word = Word::parse_hex(w).ok_or_else(|| format!("'{w}' is not a word of up to 32 hex digits"))?;
        let d = discover::discover(&nv, spec::Arch(arch), word).map_err(|e| e.to_string())?;
        eprintln!("{}: {} field(s), {} table(s): {}", discover::page::key(&d), d.fields.len(), d.tables.len(), d.distilled);
        for n in &d.notes {
            eprintln!("  note: {n}");
        }
        found.push(d);
    }
    let name = found[0].mnemonic.clone();
    if let Some(d) = found.iter().find(|d| d.mnemonic != name) {
        return Err(format!("seeds decode to {name} and {}: one page holds one instruction", d.mnemonic).into());
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let path = out.join(format!("{}_sm{arch}.txt", name.to_lowercase()));
    // Whole or not at all: a kill mid-write leaves the previous page, not half of one.
    crate::output::write_atomic(&path, discover::page::render(&name, description, &found).as_bytes()).map_err(|e| e.to_string())?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The words `discover --fill` tries.
pub struct FillWords<'a> {
    /// Folders of PTX, compiled for the architecture (`none`: no folder).
    pub ptx: &'a [PathBuf],
    /// Words as hex digits.
    pub words: &'a [String],
    /// `census.json` files of the architecture: every word they kept.
    pub census: &'a [PathBuf],
}

impl FillWords<'_> {
    /// The words: `words`, the PTX's, then the censuses' (a form is solved from the first
    /// of its words, and real code's values of the bits nvdisasm ignores are the ones to keep).
    fn collect(&self, arch: spec::Arch) -> Result<Vec<crate::word::Word>> {
        let mut seeds = vec![];
        for w in self.words {
            seeds.push(crate::word::Word::parse_hex(w).ok_or_else(|| format!("'{w}' is not a word of up to 32 hex digits"))?);
        }
        if !self.ptx.iter().any(|p| p == Path::new("none")) {
            let cubins = tempfile_dir("fill-cubins")?;
            let got = ptx_seeds(arch, &cubins, self.ptx);
            let _ = std::fs::remove_dir_all(&cubins);
            seeds.extend(got?);
        }
        for path in self.census {
            let c = discover::sweep::CensusFile::read(path, arch).map_err(|e| e.to_string())?;
            seeds.extend(c.words().map_err(|e| format!("{}: {e}", path.display()))?);
        }
        Ok(seeds)
    }
}

/// `discover --fill DIR`: copies the pages of `dir` (and its stored conventions) to `out`
/// and adds there a variant for each form the words of `from` use that no page decodes,
/// with the new forms' printing conventions learned from nvdisasm; writes `fill.md`, what
/// was added and what could not be.
pub fn fill(arch: u32, dir: &Path, from: FillWords, out: &Path) -> Result {
    let arch = spec::Arch(arch);
    let _lock = crate::output::OutputDir::lock(out).map_err(|e| e.to_string())?;
    copy_pages(dir, out)?;
    let seeds = from.collect(arch)?;
    let nv = nvdisasm()?;
    let filled = discover::fill::fill(&nv, arch, out, &seeds, &|m| eprintln!("discover --fill {m}")).map_err(|e| e.to_string())?;
    learn_added_conventions(&nv, out, &filled)?;
    let report = out.join("fill.md");
    crate::output::write_atomic(&report, discover::fill::report(dir, arch, &filled).as_bytes()).map_err(|e| e.to_string())?;
    let covered: usize = filled.added.iter().map(|a| a.words).sum();
    println!(
        "{arch}: {} words, {} decoded already, {} illegal, {} reserved; {} forms added (decoding {covered} words), {} words unsolved; pages in {}, see {}",
        filled.words,
        filled.decoded,
        filled.illegal,
        filled.reserved,
        filled.added.len(),
        filled.unsolved.len(),
        out.display(),
        report.display()
    );
    Ok(())
}

/// The pages (`*.txt`) and conventions file of `dir`, copied to `out` (nothing when they
/// are the same folder).
fn copy_pages(dir: &Path, out: &Path) -> Result {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let same = |a: &Path, b: &Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
    if same(dir, out) {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries {
        let path = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.ends_with(".txt") || name == spec::conventions::FILE_NAME {
            std::fs::copy(&path, out.join(&name)).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// A fresh folder under the system's temporary folder.
fn tempfile_dir(tag: &str) -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("sass-harness-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    Ok(d)
}

/// Learns the printing conventions of the variants `filled` added and stores them in the
/// conventions file beside the pages in `out`.
fn learn_added_conventions(nv: &crate::oracle::nvdisasm::Nvdisasm, out: &Path, filled: &discover::fill::Filled) -> Result {
    if filled.added.is_empty() {
        return Ok(());
    }
    let s = spec::load(&[out.to_path_buf()]).map_err(|e| e.to_string())?;
    let c = crate::codec::Codec::new(&s);
    let vis: Vec<usize> = (0..c.variants().len()).filter(|&i| filled.added.iter().any(|a| a.key == c.variant(i).key)).collect();
    let conv = crate::oracle::learn::learn(nv, &c, &vis).map_err(|e| e.to_string())?;
    let path = out.join(spec::conventions::FILE_NAME);
    let tool = format!("nvdisasm {}", nv.version_number.clone().unwrap_or_else(|| nv.version.clone()));
    let mut file = match std::fs::read(&path) {
        Ok(bytes) => spec::conventions::ConventionsFile::from_text(&path.display().to_string(), &bytes).map_err(|e| e.to_string())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => spec::conventions::ConventionsFile::new(&tool),
        Err(e) => return Err(format!("{}: {e}", path.display()).into()),
    };
    for &vi in &vis {
        let v = c.variant(vi);
        if let Some(fc) = conv.get(v.arch, &v.key) {
            file.insert(v.arch, &v.key, fc).map_err(|e| e.to_string())?;
        }
    }
    crate::output::write_atomic(&path, file.to_text().as_bytes()).map_err(|e| e.to_string())?;
    Ok(())
}
