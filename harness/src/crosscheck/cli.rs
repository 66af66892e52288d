//! `sass-harness crosscheck`: arguments, the spec, nvdisasm, the run and what it prints.

use super::{add_seeds, execute, run, Options, Summary};
use crate::fuzz::{self, Target};
use crate::oracle::gpu::worker::EXIT_NO_GPU;
use crate::oracle::nvdisasm::Nvdisasm;
use crate::oracle::process;
use crate::output::OutputDir;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Corpus folders or files: each input's target is its folder's name (`roundtrip`,
    /// `decode`, `asm`, `cubin`, `parse_page`) unless --target says it.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Folder for findings.jsonl, the reports and seeds/ (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// The target of every input, whatever its folder.
    #[arg(long)]
    pub target: Option<Target>,
    /// Page folders, in the order the fuzz targets load them (repeatable) [default:
    /// $SASS_HARNESS_FUZZ_SPEC, else corpus/isa-discovered then corpus/isa]. A roundtrip
    /// input names its variant by index: replay with the spec it was found with.
    #[arg(long = "spec")]
    pub spec: Vec<PathBuf>,
    /// Also time nvdisasm alone on each batch and print the throughput ratio.
    #[arg(long)]
    pub bench: bool,
    /// Copy the minimized seeds into the corpus folder (--corpus), under their target.
    #[arg(long)]
    pub add_seeds: bool,
    /// Where --add-seeds puts seeds.
    #[arg(long, default_value = "corpus/fuzz")]
    pub corpus: PathBuf,
    /// Minimization rounds per disagreeing word.
    #[arg(long, default_value_t = 8)]
    pub minimize_rounds: usize,
    /// Also run the replayed words on a GPU (exit 3 when there is none).
    #[arg(long)]
    pub exec: bool,
    /// With --exec: build the execution plan (patched cubins proven by nvdisasm), run
    /// nothing (no GPU needed).
    #[arg(long, requires = "exec")]
    pub dry_run: bool,
    /// With --exec: stop the GPU run after SECS seconds (exit status 5).
    #[arg(long, value_name = "SECS", requires = "exec")]
    pub time_limit: Option<u64>,
}

/// The command; its exit status: 0 done, 2 an error, 3 `--exec` without a GPU.
pub fn main(a: &Args) -> ExitCode {
    // Before any work: asking for a GPU run without one is exit 3, never a silent pass.
    if a.exec && !a.dry_run && !crate::oracle::gpu::cuda::driver_present() {
        println!("crosscheck: --exec: {}: nothing was run; `--exec --dry-run` writes the plan without a GPU", crate::oracle::gpu::cuda::NO_DRIVER);
        return ExitCode::from(EXIT_NO_GPU as u8);
    }
    match crosscheck(a) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn crosscheck(a: &Args) -> Result<u8, Box<dyn std::error::Error>> {
    let dirs = if a.spec.is_empty() { fuzz::spec_dirs(&crate::oracle::tools::repo_root()) } else { a.spec.clone() };
    let spec = fuzz::load_spec(&dirs)?;
    process::install_interrupt_handler();
    let nv = Nvdisasm::locate()?;
    // --bench times nvdisasm alone on the words, then again beside the spec's side: no
    // kept reply may answer either.
    let nv = Nvdisasm { cache: nv.cache.filter(|_| !a.bench), ..nv };
    if let Some(w) = nv.pin_warning() {
        eprintln!("warning: {w}");
    }
    let out = OutputDir::lock(&a.out)?;
    let opts =
        Options { inputs: a.inputs.clone(), target: a.target, minimize_rounds: a.minimize_rounds, bench: a.bench, keep_words: a.exec, ..Options::default() };
    let s = run(&spec, &nv, &out, &opts)?;
    print(&s, &nv);
    if a.add_seeds {
        for p in add_seeds(&s.seeds, &a.corpus)? {
            println!("added seed {}", p.display());
        }
    }
    if a.exec {
        let codec = crate::codec::Codec::new(&spec);
        let r = execute(&codec, &s.kept, out.path(), a.dry_run, a.time_limit)?;
        let left = s.unique - s.kept.len();
        let more = if left > 0 { format!(" ({left} more unique words not kept: the duplicate set's cap)") } else { String::new() };
        let p = &r.plan;
        println!(
            "exec: {} words given{more}; plan in {}: {} entries in {} cubins, {} words no template holds, {} undecodable, {} patch failures",
            s.kept.len(),
            out.path().join("exec").display(),
            p.entries,
            p.cubins,
            p.no_template,
            p.undecodable,
            p.failures.len()
        );
        for (sm, c) in &p.per_arch {
            println!("exec: SM{sm}: {} forms, {} words, {} runnable", c.forms, c.words, c.runnable);
        }
        if let Some(why) = &r.no_gpu {
            println!("crosscheck: --exec: {why}: nothing was run");
        }
        if let Some(run) = &r.run {
            println!(
                "exec: {} words run in {} cubins ({} left by the time limit), {} findings, relations checked {:?}",
                run.words_run, run.cubins_run, run.cubins_left, run.findings, run.relations_checked
            );
        }
        return Ok(r.exit_status());
    }
    Ok(0)
}

fn print(s: &Summary, nv: &Nvdisasm) {
    let (rate, ratio) = s.throughput();
    println!(
        "crosscheck: {} inputs, {} skipped or noted; {} words, {} unique ({} with no form), {} agreeing; {} findings ({} explained, {} unexplained, the rest notes) in {:.1} s (nvdisasm {})",
        s.inputs,
        s.skipped.len() + s.skipped_more,
        s.words,
        s.unique,
        s.no_form,
        s.agreeing,
        s.findings.len(),
        s.explained,
        s.unexplained(),
        s.seconds,
        nv.version
    );
    println!("replay: {:.2} s, {rate:.0} words/s on {} nvdisasm jobs", s.replay_seconds, nv.jobs);
    if let (Some(a), Some(r)) = (s.alone_seconds, ratio) {
        println!(
            "nvdisasm alone on the same batches: {a:.2} s ({:.0} words/s); ratio (crosscheck / nvdisasm throughput): {r:.2}",
            s.unique as f64 / a.max(1e-9)
        );
    }
    for k in &s.skipped {
        println!("  {}: {}: {}", if k.replayed { "noted" } else { "skipped" }, k.path, k.why);
    }
    if s.skipped_more > 0 {
        println!("  … and {} more skipped", s.skipped_more);
    }
    for f in s.findings.iter().filter(|f| f.severity != crate::validate::Severity::Note).take(10) {
        println!("  {} {} {}: word {} expected '{}' nvdisasm '{}'", f.arch, f.variant, f.class.name(), f.word, f.expected, f.actual);
    }
    println!("{} regression seed(s)", s.seeds.len());
    for p in &s.files {
        println!("wrote {}", p.display());
    }
}
