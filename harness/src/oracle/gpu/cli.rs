//! `sass-harness exec` and its hidden worker: argument types and the run itself.

use super::dryrun::{dry_run, Options, PlanEntry};
use super::worker::{serve, ChildExecutor, Request, EXIT_NO_GPU, EXIT_TRAP};
use super::{barrier, cuda, inputs};
use crate::codec::Codec;
use crate::oracle::exec::{check_entry, finding, Batch, ExecClass, ExecFinding, Executor, ModelExecutor, Trap};
use crate::oracle::nvdisasm::Nvdisasm;
use crate::oracle::tools::{self, Tool};
use crate::spec::{self, Spec};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug, Clone)]
pub struct ExecArgs {
    /// ISA pages (files or folders).
    pub paths: Vec<PathBuf>,
    /// Build and check every patched cubin with nvdisasm; run nothing (no GPU needed).
    #[arg(long)]
    pub dry_run: bool,
    /// Folder for the plan, the patched cubins and exec-findings.jsonl (created if missing).
    #[arg(long, default_value = "reports/exec")]
    pub out: PathBuf,
    /// Placeholders per template cubin.
    #[arg(long, default_value_t = 64)]
    pub slots: u32,
    /// Random words per variant on top of the structured ones.
    #[arg(long, default_value_t = 4)]
    pub random: usize,
    /// Inputs (threads) per word, rounded up to a multiple of 256.
    #[arg(long, default_value_t = 10_240)]
    pub inputs: u32,
    /// Seconds one batch (one child process) may take.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Run a plan built earlier (`exec --dry-run --out DIR`, its cubins next to it)
    /// instead of building one: no ptxas or nvdisasm needed.
    #[arg(long)]
    pub plan: Option<PathBuf>,
    /// Also run the write-barrier experiment (see `gpu::barrier`).
    #[arg(long)]
    pub barrier_experiment: bool,
    /// Seed of the random words and of the inputs.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// (testing) a fake device instead of CUDA: model, wrong, wrong-hidden, trap, hang,
    /// crash, silent.
    #[arg(long, hide = true)]
    pub fake: Option<String>,
}

#[derive(clap::Args, Debug, Clone)]
pub struct WorkerArgs {
    /// Run the batch this request file (JSON) describes (see `gpu::worker`).
    #[arg(long)]
    pub request: Option<PathBuf>,
    /// Print the device as JSON `{"tool":…}`, or exit 3 when there is no GPU.
    #[arg(long)]
    pub probe: bool,
    /// (testing) a fake device instead of CUDA: model, wrong, wrong-hidden, trap, hang,
    /// crash, silent.
    #[arg(long)]
    pub fake: Option<String>,
    /// Page files or folders, for the model, wrong and wrong-hidden fakes (repeatable).
    #[arg(long = "spec")]
    pub spec: Vec<PathBuf>,
}

fn load(paths: &[PathBuf]) -> Result<Spec, String> {
    if paths.is_empty() {
        return Err("no pages given (try: corpus/isa)".into());
    }
    spec::load(paths).map_err(|e| e.to_string())
}

pub fn exec_main(a: &ExecArgs) -> ExitCode {
    match exec(a) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn child(a: &ExecArgs, entries: Vec<PlanEntry>) -> Result<ChildExecutor, String> {
    Ok(ChildExecutor {
        exe: std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?,
        timeout: Duration::from_secs(a.timeout),
        fake: a.fake.clone(),
        spec: a.paths.iter().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())).collect(),
        dir: a.out.join("batches"),
        tool: String::new(),
        entries,
        seq: 0,
    })
}

/// The whole command; Ok(exit status).
fn exec(a: &ExecArgs) -> Result<u8, String> {
    let s = load(&a.paths)?;
    let codec = Codec::new(&s);
    let mut dev = child(a, vec![])?;
    if !a.dry_run {
        // Before any work: no driver or no device is exit 3, never a silent pass.
        if a.fake.is_none() && !cuda::driver_present() {
            println!("exec: {}: nothing was run; `exec --dry-run` checks the patches without a GPU", cuda::NO_DRIVER);
            return Ok(EXIT_NO_GPU as u8);
        }
        match dev.probe() {
            Ok(tool) => dev.tool = tool,
            Err(why) => {
                println!("exec: no usable GPU: {why}; nothing was run");
                return Ok(EXIT_NO_GPU as u8);
            }
        }
    }
    let plan_dir = match &a.plan {
        Some(p) => p.clone(),
        None => {
            if let Some(code) = build_plan(&codec, a)? {
                return Ok(code);
            }
            a.out.clone()
        }
    };
    if a.dry_run {
        return Ok(0);
    }
    let entries = read_plan(&plan_dir.join("plan.jsonl"))?;
    dev.entries = entries.clone();
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let n = run_plan(&codec, &mut dev, &entries, &plan_dir, a)?;
    println!("exec: {n} finding(s) in {}", a.out.join("exec-findings.jsonl").display());
    if a.barrier_experiment {
        barrier::run(&mut dev, &plan_dir, &a.out, a.inputs.div_ceil(256) * 256, a.seed)?;
    }
    Ok(0)
}

/// The dry run into `a.out` (and the barrier cubins when asked); `Some(1)` on a patch
/// failure.
fn build_plan(codec: &Codec, a: &ExecArgs) -> Result<Option<u8>, String> {
    let nv = Nvdisasm::locate().map_err(|e| e.to_string())?;
    let ptxas = tools::locate(Tool::Ptxas).map_err(|e| e.to_string())?;
    let opts = Options { out: a.out.clone(), slots: a.slots, random: a.random, seed: a.seed };
    let t0 = Instant::now();
    let rep = dry_run(codec, &nv, &ptxas, &opts)?;
    println!(
        "dry run: {} patched words ({} hidden fixed bits) in {} cubins, {} words dropped (illegal alone), {:.1} s; plan: {}",
        rep.entries,
        rep.hidden_bits,
        rep.cubins,
        rep.illegal_alone,
        t0.elapsed().as_secs_f64(),
        a.out.join("plan.jsonl").display()
    );
    if !rep.failures.is_empty() {
        for f in &rep.failures {
            println!("PATCH FAILURE: {f}");
        }
        println!("dry run: {} patch failure(s)", rep.failures.len());
        return Ok(Some(1));
    }
    if a.barrier_experiment {
        barrier::build(codec, &nv, &ptxas, &a.out, a.slots)?;
    }
    Ok(None)
}

pub fn read_plan(path: &Path) -> Result<Vec<PlanEntry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines().enumerate().map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))).collect()
}

/// The device's `sm_XY` from a tool string (`…, sm_90`), if it names one.
fn device_sm(tool: &str) -> Option<u32> {
    tool.rsplit("sm_").next().and_then(|d| d.parse().ok())
}

/// Run every executable cubin of the plan twice (two output sentinels); stream findings.
pub fn run_plan(codec: &Codec, dev: &mut dyn Executor, entries: &[PlanEntry], plan_dir: &Path, a: &ExecArgs) -> Result<usize, String> {
    let path = a.out.join("exec-findings.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?);
    let mut by_cubin: BTreeMap<&str, Vec<&PlanEntry>> = BTreeMap::new();
    for e in entries {
        by_cubin.entry(e.cubin.as_str()).or_default().push(e);
    }
    let tool = dev.tool();
    let sm = device_sm(&tool);
    let (mut found, mut skipped_arch, mut skipped_ur) = (0, 0, 0);
    let mut unmodelled = vec![];
    let mut base_ok: std::collections::HashMap<String, bool> = Default::default();
    for (cubin, es) in &by_cubin {
        if es.iter().any(|e| !e.executable) {
            skipped_ur += es.len();
            continue;
        }
        if sm.is_some_and(|sm| sm != es[0].arch) {
            skipped_arch += es.len();
            continue;
        }
        let mut r = run_cubin(codec, dev, &tool, &plan_dir.join(cubin), es, a);
        attribute_hidden(&mut r, es, &mut base_ok);
        for f in &r.findings {
            writeln!(out, "{}", serde_json::to_string(f).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            out.flush().map_err(|e| e.to_string())?;
            found += 1;
        }
        unmodelled.extend(r.unmodelled);
    }
    println!(
        "exec: {} words run, {skipped_ur} not runnable (cx[UR][…] sources), {skipped_arch} for another architecture than the device's",
        entries.len() - skipped_ur - skipped_arch
    );
    let upath = a.out.join("exec-unmodelled.txt");
    std::fs::write(&upath, unmodelled.join("\n")).map_err(|e| format!("{}: {e}", upath.display()))?;
    println!("exec: {} words ran without a model to compare with (listed in {})", unmodelled.len(), upath.display());
    Ok(found)
}

/// What one cubin produced: findings, and the words without a model.
#[derive(Default)]
struct CubinOutcome {
    findings: Vec<ExecFinding>,
    unmodelled: Vec<String>,
}

/// One cubin: inputs, two runs with different sentinels, comparison with the models.
fn run_cubin(codec: &Codec, dev: &mut dyn Executor, tool: &str, cubin: &Path, es: &[&PlanEntry], a: &ExecArgs) -> CubinOutcome {
    let kind = es[0].template;
    let (in_stride, out_stride) = crate::oracle::exec::strides(kind, a.slots);
    let threads = a.inputs.div_ceil(256) * 256;
    let seed = a.seed ^ es[0].cubin.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    let input = inputs::generate(kind, a.slots, threads, seed);
    let mut b =
        Batch { cubin: cubin.to_path_buf(), function: "slots".into(), threads, in_stride, out_stride, k: inputs::constant(kind, seed), sentinel: 0xa5a5_a5a5 };
    let first = dev.run(&b, &input);
    b.sentinel = 0x5a5a_5a5a;
    let second = dev.run(&b, &input);
    let mut out = CubinOutcome::default();
    let (o1, o2) = match (first, second) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(Trap { message }), _) | (_, Err(Trap { message })) => {
            // Which words trap: rerun subsets (the rest restored to the template).
            let mut traps = match std::fs::read(trap_base(cubin, es[0])) {
                Ok(base) => isolate_traps(dev, &base, es, &b, &input, &a.out.join("bisect")),
                Err(e) => es.iter().map(|x| (*x, format!("{message} (not isolated: {e})"))).collect(),
            };
            if traps.is_empty() {
                traps = es.iter().map(|x| (*x, format!("{message} (did not happen again on a rerun)"))).collect();
            }
            out.findings = traps.into_iter().map(|(e, m)| finding(tool, e, ExecClass::Trap, "", format!("{}: {m}", e.cubin))).collect();
            return out;
        }
    };
    for e in es {
        let bytes = (e.template.reg_bits() / 8) as usize;
        let sentinel_visible = (0..threads as usize).any(|t| {
            let at = t * out_stride as usize + e.out_offset as usize;
            o1.get(at..at + bytes) != o2.get(at..at + bytes)
        });
        let note = " (and the result depends on the output sentinel: no store, or a stale read)";
        match check_entry(codec, tool, e, &b, &input, &o1) {
            Err(why) => out.unmodelled.push(format!("{} {}: {why}", e.variant, e.word)),
            Ok(Some(mut f)) => {
                if sentinel_visible {
                    f.message.push_str(note);
                }
                out.findings.push(f);
            }
            Ok(None) if sentinel_visible => out.findings.push(finding(tool, e, ExecClass::Semantics, "", format!("run 1 matches the model{note}"))),
            Ok(None) => {}
        }
    }
    out
}

/// A flipped bit is blamed (`hidden_semantics`) only when its base page word ran and
/// matched the model; otherwise the difference is the word's own (`semantics`). Page
/// words run before the hidden-bit words of their template (plan order).
fn attribute_hidden(r: &mut CubinOutcome, es: &[&PlanEntry], base_ok: &mut std::collections::HashMap<String, bool>) {
    let bad: std::collections::HashSet<&str> = r.findings.iter().map(|f| f.word.as_str()).collect();
    for e in es.iter().filter(|e| e.kind == "page") {
        base_ok.entry(e.values_id.clone()).or_insert(!bad.contains(e.word.as_str()) && !r.unmodelled.iter().any(|u| u.contains(&e.word)));
    }
    for f in r.findings.iter_mut().filter(|f| f.class == ExecClass::HiddenSemantics) {
        let id = es.iter().find(|e| e.word == f.word).map(|e| e.values_id.as_str()).unwrap_or("");
        if base_ok.get(id) != Some(&true) {
            f.class = ExecClass::Semantics;
            f.message.push_str(" (its base word, without the flip, also differs or did not run: not attributed to the bit)");
        }
    }
}

/// The unpatched template (reuse bits cleared) next to a plan's cubins.
fn trap_base(cubin: &Path, e: &PlanEntry) -> PathBuf {
    let plan_dir = cubin.parent().and_then(Path::parent).unwrap_or(Path::new("."));
    plan_dir.join("templates").join(format!("{}.sm_{}.baseline.cubin", e.template.name(), e.arch))
}

/// The words of a trapping cubin that trap: halves rerun with the other words restored
/// to the template's placeholders, down to single words. Words that trap only together
/// are all reported, saying so.
pub fn isolate_traps<'e>(dev: &mut dyn Executor, base: &[u8], es: &[&'e PlanEntry], b: &Batch, input: &[u8], dir: &Path) -> Vec<(&'e PlanEntry, String)> {
    let run = |dev: &mut dyn Executor, subset: &[&PlanEntry]| -> Result<(), String> {
        let mut bytes = base.to_vec();
        for e in subset {
            let w = crate::word::Word::parse_hex(&e.word).ok_or("bad plan word")?;
            bytes = crate::cubin::patch_word(&bytes, &e.section, e.offset, w).map_err(|e| e.to_string())?;
        }
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let path = dir.join(format!("{}-{:x}.cubin", subset.len(), subset[0].offset));
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        dev.run(&Batch { cubin: path, ..b.clone() }, input).map(|_| ()).map_err(|t| t.message)
    };
    match run(dev, es) {
        Ok(()) => vec![],
        Err(m) if es.len() == 1 => vec![(es[0], m)],
        Err(m) => {
            let (l, r) = es.split_at(es.len() / 2);
            let mut found = isolate_traps(dev, base, l, b, input, dir);
            found.extend(isolate_traps(dev, base, r, b, input, dir));
            if found.is_empty() {
                return es.iter().map(|e| (*e, format!("{m} (only when these {} words run together)", es.len()))).collect();
            }
            found
        }
    }
}

pub fn worker_main(a: &WorkerArgs) -> ExitCode {
    ExitCode::from(worker(a) as u8)
}

struct Scripted(String);

impl Executor for Scripted {
    fn tool(&self) -> String {
        format!("fake:{}", self.0)
    }
    fn run(&mut self, b: &Batch, _: &[u8]) -> Result<Vec<u8>, Trap> {
        match self.0.as_str() {
            "trap" => Err(Trap { message: "CUDA_ERROR_ILLEGAL_INSTRUCTION (fake)".into() }),
            "hang" => loop {
                std::thread::sleep(Duration::from_secs(1));
            },
            "crash" => std::process::abort(),
            _ => Ok(b.sentinel.to_le_bytes().iter().copied().cycle().take((b.threads * b.out_stride) as usize).collect()),
        }
    }
}

fn worker(a: &WorkerArgs) -> i32 {
    if a.probe {
        return probe(a);
    }
    let Some(req_path) = &a.request else {
        eprintln!("exec-worker: give --request FILE or --probe");
        return 2;
    };
    match a.fake.as_deref() {
        Some(m @ ("model" | "wrong" | "wrong-hidden")) => {
            let run = || -> Result<i32, String> {
                let s = load(&a.spec)?;
                let codec = Codec::new(&s);
                let req: Request = serde_json::from_slice(&std::fs::read(req_path).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
                let mut dev = ModelExecutor { codec: &codec, entries: req.entries, flip_results: m != "model", hidden_only: m == "wrong-hidden" };
                Ok(serve(&mut dev, req_path))
            };
            run().unwrap_or_else(|e| {
                eprintln!("exec-worker: {e}");
                EXIT_TRAP
            })
        }
        Some(m) => serve(&mut Scripted(m.to_string()), req_path),
        None => match cuda::CudaExecutor::new() {
            Ok(mut dev) => serve(&mut dev, req_path),
            Err(e) => {
                println!("{}", serde_json::json!({ "tool": "", "trap": e }));
                EXIT_TRAP
            }
        },
    }
}

fn probe(a: &WorkerArgs) -> i32 {
    if let Some(f) = &a.fake {
        println!("{}", serde_json::json!({ "tool": format!("fake:{f}") }));
        return 0;
    }
    if !cuda::driver_present() {
        println!("{}", cuda::NO_DRIVER);
        return EXIT_NO_GPU;
    }
    match cuda::CudaExecutor::new() {
        Ok(d) => {
            println!("{}", serde_json::json!({ "tool": d.tool() }));
            0
        }
        Err(e) => {
            println!("{e}");
            EXIT_NO_GPU
        }
    }
}
