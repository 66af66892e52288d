//! `sass-harness exec` and its hidden worker: argument types and the run itself.

use super::dryrun::{dry_run, Options, PlanEntry, Report};
use super::error::GpuError;
use super::relations::{self, RelKind};
use super::template::Kind;
use super::worker::{serve, ChildExecutor, Request, EXIT_NO_GPU, EXIT_TRAP};
use super::{barrier, cuda, inputs};
use crate::codec::Codec;
use crate::oracle::exec::{check_entry, finding, Batch, ExecClass, ExecFinding, Executor, ModelExecutor, Trap};
use crate::oracle::nvdisasm::Nvdisasm;
use crate::oracle::tools::{self, Tool};
use crate::spec::{self, Arch, Spec};
use crate::word::Word;
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
    /// Stop the whole run after SECS seconds (checked between cubins): the findings of
    /// what ran are written, `--resume` continues; exit status 5 when it stopped early.
    #[arg(long, value_name = "SECS")]
    pub time_limit: Option<u64>,
    /// Continue a run in OUT that stopped early: cubins listed in OUT/exec-progress.txt
    /// are skipped and findings are appended.
    #[arg(long)]
    pub resume: bool,
    /// (testing) a fake device instead of CUDA: model, wrong, wrong-hidden, trap,
    /// trap-words (every patched cubin traps, templates run), hang, crash, silent.
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
    /// (testing) a fake device instead of CUDA: model, wrong, wrong-hidden, trap,
    /// trap-words, hang, crash, silent.
    #[arg(long)]
    pub fake: Option<String>,
    /// Page files or folders, for the model, wrong and wrong-hidden fakes (repeatable).
    #[arg(long = "spec")]
    pub spec: Vec<PathBuf>,
}

fn load(paths: &[PathBuf]) -> Result<Spec, GpuError> {
    if paths.is_empty() {
        return Err(GpuError::NoPages);
    }
    Ok(spec::load(paths)?)
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

/// Exit status of a run stopped by `--time-limit` (what ran is written; `--resume`).
pub const EXIT_TIME_LIMIT: u8 = 5;

/// How to run a plan.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub out: PathBuf,
    /// Placeholders per template (the records' layout).
    pub slots: u32,
    /// Threads per launch, a multiple of 256.
    pub inputs: u32,
    pub seed: u64,
    pub time_limit: Option<Duration>,
    pub resume: bool,
}

impl RunOptions {
    pub fn from_args(a: &ExecArgs) -> RunOptions {
        RunOptions {
            out: a.out.clone(),
            slots: a.slots,
            inputs: a.inputs.div_ceil(256) * 256,
            seed: a.seed,
            time_limit: a.time_limit.map(Duration::from_secs),
            resume: a.resume,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub words_run: usize,
    pub cubins_run: usize,
    /// Cubins for the device not run: the time limit came first.
    pub cubins_left: usize,
    pub not_runnable: usize,
    pub other_arch: usize,
    pub findings: usize,
    pub unmodelled: usize,
    /// Relation checks made, by relation (`ignored_bit`, `operand_form`, `rerun`).
    pub relations_checked: BTreeMap<String, usize>,
    /// Relation checks not made: the partner did not run in this process (`--resume`,
    /// a trap, or a partner nvdisasm rejected).
    pub relations_unchecked: usize,
    pub stopped_early: bool,
}

pub fn child_executor(out: &Path, timeout: Duration, fake: Option<String>, spec: &[PathBuf]) -> Result<ChildExecutor, GpuError> {
    Ok(ChildExecutor {
        exe: std::env::current_exe().map_err(GpuError::CurrentExe)?,
        timeout,
        fake,
        spec: spec.iter().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())).collect(),
        dir: out.join("batches"),
        tool: String::new(),
        entries: vec![],
        seq: 0,
    })
}

/// Find the device through a child: `Ok(None)` when there is one (its name is in
/// `dev.tool`), `Ok(Some(line))` saying why nothing can run (exit status 3).
pub fn find_device(dev: &mut ChildExecutor) -> Option<String> {
    if dev.fake.is_none() && !cuda::driver_present() {
        return Some(format!("{}: nothing was run; `exec --dry-run` checks the patches without a GPU", cuda::NO_DRIVER));
    }
    match dev.probe() {
        Ok(tool) => {
            dev.tool = tool;
            None
        }
        Err(why) => Some(format!("no usable GPU: {why}; nothing was run")),
    }
}

/// The whole command; Ok(exit status).
fn exec(a: &ExecArgs) -> Result<u8, GpuError> {
    let s = load(&a.paths)?;
    let codec = Codec::new(&s);
    check_budget(&codec, a)?;
    let mut dev = child_executor(&a.out, Duration::from_secs(a.timeout), a.fake.clone(), &a.paths)?;
    if !a.dry_run {
        // Before any work: no driver or no device is exit 3, never a silent pass.
        if let Some(why) = find_device(&mut dev) {
            println!("exec: {why}");
            return Ok(EXIT_NO_GPU as u8);
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
    std::fs::create_dir_all(&a.out).map_err(GpuError::file(&a.out))?;
    let r = run_plan(&codec, &mut dev, &entries, &plan_dir, &RunOptions::from_args(a))?;
    println!("exec: {} finding(s) in {}", r.findings, a.out.join("exec-findings.jsonl").display());
    if r.stopped_early {
        return Ok(EXIT_TIME_LIMIT);
    }
    if a.barrier_experiment {
        barrier::run(&mut dev, &plan_dir, &a.out, a.inputs.div_ceil(256) * 256, a.seed)?;
    }
    Ok(0)
}

/// Input and output bytes of one placeholder for one thread, the most any template kind
/// takes ([`Kind::slot_bytes`]: DFMA's 24 + 8).
const MAX_SLOT_BYTES: u64 = 32;

/// Refuses, before any work, a request whose plan or launch would not fit the memory
/// budget ([`crate::budget`]): the plan holds every form's structured words (its named
/// table rows, flags, immediates' edge values, ignored-bit flips) and `--random` more,
/// each a job and a plan entry with its nvdisasm line; a launch holds `--inputs` threads'
/// records for `--slots` placeholders, in and out.
fn check_budget(codec: &Codec, a: &ExecArgs) -> Result<(), GpuError> {
    let per_word = (std::mem::size_of::<super::patch::Job>() + std::mem::size_of::<PlanEntry>() + 256) as u64;
    let structured: u64 = codec
        .variants()
        .iter()
        .map(|v| {
            let rows: usize = v.tables.iter().map(|t| t.rows.len()).sum();
            (1 + rows + v.fields.len() + 8 * v.operands.len() + 128) as u64
        })
        .sum();
    let words = structured.saturating_add((codec.variants().len() as u64).saturating_mul(a.random as u64));
    let launch = u64::from(a.inputs).div_ceil(256).saturating_mul(256).saturating_mul(u64::from(a.slots)).saturating_mul(MAX_SLOT_BYTES);
    let budget = crate::budget::Budget::from_env()?;
    Ok(budget.check("exec's plan and one launch's inputs", words.saturating_mul(per_word).saturating_add(launch), "lower --random, --inputs or --slots")?)
}

/// The dry run into `a.out` (and the barrier cubins when asked); `Some(1)` on a patch
/// failure.
fn build_plan(codec: &Codec, a: &ExecArgs) -> Result<Option<u8>, GpuError> {
    let nv = Nvdisasm::locate()?;
    let ptxas = tools::locate(Tool::Ptxas)?;
    let opts = Options { out: a.out.clone(), slots: a.slots, random: a.random, seed: a.seed };
    let t0 = Instant::now();
    let rep = dry_run(codec, &nv, &ptxas, &opts)?;
    print_report(&rep, &a.out, t0.elapsed());
    if !rep.failures.is_empty() {
        return Ok(Some(1));
    }
    if a.barrier_experiment {
        barrier::build(codec, &nv, &ptxas, &a.out, a.slots)?;
    }
    Ok(None)
}

/// The dry run's summary: words, runnable share and relation coverage per architecture,
/// the time estimate, and each patch failure.
pub fn print_report(rep: &Report, out: &Path, took: Duration) {
    println!(
        "dry run: {} patched words ({} hidden fixed bits) in {} cubins, {} words dropped (illegal alone), {} of another register width, {} forms no template holds, {:.1} s; plan: {}",
        rep.entries,
        rep.hidden_bits,
        rep.cubins,
        rep.illegal_alone,
        rep.other_width,
        rep.no_template,
        took.as_secs_f64(),
        out.join("plan.jsonl").display()
    );
    for (arch, c) in &rep.per_arch {
        let pct = 100.0 * c.runnable as f64 / c.words.max(1) as f64;
        println!("dry run sm_{arch}: {} forms, {} words, {} runnable ({pct:.1}%) in {} cubins", c.forms, c.words, c.runnable, c.runnable_cubins);
        println!(
            "dry run sm_{arch}: relations without a model: ignored_bit on {} forms, operand_form on {} forms ({} register-form words), rerun on {} forms; bit-exact model where one exists",
            c.forms_ignored_bit, c.forms_operand_form, c.operand_form_words, c.forms_rerun
        );
        let kinds = c.templates;
        let est = super::dryrun::estimate_seconds(c, kinds);
        println!(
            "dry run sm_{arch}: estimated run on one sm_{arch} device: {} child runs x {:.1} s = {est:.0} s ({:.3} s per runnable word; design estimate, unmeasured)",
            kinds + 2 * c.runnable_cubins,
            super::dryrun::CHILD_RUN_SECONDS,
            est / c.runnable.max(1) as f64
        );
    }
    for f in &rep.failures {
        println!("PATCH FAILURE: {f}");
    }
    if !rep.failures.is_empty() {
        println!("dry run: {} patch failure(s)", rep.failures.len());
    }
}

pub fn read_plan(path: &Path) -> Result<Vec<PlanEntry>, GpuError> {
    let text = std::fs::read_to_string(path).map_err(GpuError::file(path))?;
    text.lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).map_err(|source| GpuError::PlanLine { path: path.to_path_buf(), line: i + 1, source }))
        .collect()
}

/// The device's `sm_XY` from a tool string (`…, sm_90`), if it names one.
fn device_sm(tool: &str) -> Option<u32> {
    tool.rsplit("sm_").next().and_then(|d| d.parse().ok())
}

/// The unpatched template of each (architecture, kind) the run will use, run once: when it
/// fails, nothing else can work here (a driver too old for the cubins, a broken device),
/// and one error says so instead of a trap finding per word.
pub fn canary(dev: &mut dyn Executor, plan_dir: &Path, entries: &[&PlanEntry], o: &RunOptions) -> Result<(), GpuError> {
    let kinds: std::collections::BTreeSet<(u32, Kind)> = entries.iter().map(|e| (e.arch, e.template)).collect();
    for (arch, kind) in kinds {
        let cubin = plan_dir.join("templates").join(format!("{}.sm_{arch}.baseline.cubin", kind.name()));
        let (in_stride, out_stride) = crate::oracle::exec::strides(kind, o.slots);
        let threads = 256;
        let b = Batch { cubin: cubin.clone(), function: "slots".into(), threads, in_stride, out_stride, k: 0, sentinel: 0xa5a5_a5a5 };
        let out = match dev.run(&b, &inputs::generate(kind, o.slots, threads, o.seed)) {
            Ok(out) => out,
            Err(t) => return Err(GpuError::CanaryTrap { cubin, tool: dev.tool(), trap: t.message }),
        };
        if out.chunks(4).all(|c| c == 0xa5a5_a5a5u32.to_le_bytes()) {
            return Err(GpuError::CanaryStoredNothing { cubin, tool: dev.tool() });
        }
    }
    Ok(())
}

/// Run every runnable cubin of the plan for the device twice (two output sentinels),
/// after the canary; stream findings (and progress, for `--resume`).
pub fn run_plan(codec: &Codec, dev: &mut dyn Executor, entries: &[PlanEntry], plan_dir: &Path, o: &RunOptions) -> Result<RunSummary, GpuError> {
    let start = Instant::now();
    let tool = dev.tool();
    let sm = device_sm(&tool);
    let mut sum = RunSummary::default();
    let mut by_cubin: BTreeMap<&str, Vec<&PlanEntry>> = BTreeMap::new();
    for e in entries {
        by_cubin.entry(e.cubin.as_str()).or_default().push(e);
    }
    let here = |e: &&PlanEntry| e.executable && sm.is_none_or(|sm| sm == e.arch);
    let runnable: Vec<&PlanEntry> = entries.iter().filter(here).collect();
    if runnable.is_empty() {
        let archs: std::collections::BTreeSet<String> = entries.iter().filter(|e| e.executable).map(|e| format!("sm_{}", e.arch)).collect();
        return Err(GpuError::NothingRuns { tool, archs: archs.into_iter().collect() });
    }
    canary(dev, plan_dir, &runnable, o)?;
    let (path, progress_path) = (o.out.join("exec-findings.jsonl"), o.out.join("exec-progress.txt"));
    let done: std::collections::HashSet<String> =
        if o.resume { std::fs::read_to_string(&progress_path).unwrap_or_default().lines().map(str::to_string).collect() } else { Default::default() };
    let open = |p: &Path| std::fs::OpenOptions::new().create(true).append(o.resume).write(true).truncate(!o.resume).open(p).map_err(GpuError::file(p));
    let mut out = std::io::BufWriter::new(open(&path)?);
    let mut progress = open(&progress_path)?;
    let referenced: std::collections::HashSet<&str> = entries.iter().filter_map(|e| e.relation.as_ref().map(|r| r.with.as_str())).collect();
    let mut ctx =
        RelCtx { partners: Default::default(), pages: entries.iter().filter(|e| e.kind == "page").map(|e| (e.values_id.as_str(), e)).collect(), referenced };
    let mut unmodelled = vec![];
    let mut base_ok: std::collections::HashMap<String, bool> = Default::default();
    for (cubin, es) in &by_cubin {
        if es.iter().any(|e| !e.executable) {
            sum.not_runnable += es.len();
            continue;
        }
        if sm.is_some_and(|sm| sm != es[0].arch) {
            sum.other_arch += es.len();
            continue;
        }
        if done.contains(*cubin) {
            continue;
        }
        if o.time_limit.is_some_and(|l| start.elapsed() >= l) {
            sum.stopped_early = true;
            sum.cubins_left += 1;
            continue;
        }
        let mut r = run_cubin(codec, dev, &tool, &plan_dir.join(cubin), es, o, &mut ctx);
        attribute_hidden(&mut r, es, &mut base_ok);
        for f in &r.findings {
            writeln!(out, "{}", serde_json::to_string(f)?).map_err(GpuError::file(&path))?;
            sum.findings += 1;
        }
        out.flush().map_err(GpuError::file(&path))?;
        writeln!(progress, "{cubin}").map_err(GpuError::file(&progress_path))?;
        sum.words_run += es.len();
        sum.cubins_run += 1;
        for (k, n) in r.checked {
            *sum.relations_checked.entry(k).or_default() += n;
        }
        sum.relations_unchecked += r.unchecked;
        unmodelled.extend(r.unmodelled);
    }
    sum.unmodelled = unmodelled.len();
    println!(
        "exec: {} words run in {} cubins, {} not runnable (predicate operands), {} for another architecture than the device's",
        sum.words_run, sum.cubins_run, sum.not_runnable, sum.other_arch
    );
    let checked: Vec<String> = sum.relations_checked.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!("exec: relation checks: {} ({} not checked: the partner did not run in this process)", checked.join(", "), sum.relations_unchecked);
    let upath = o.out.join("exec-unmodelled.txt");
    std::fs::write(&upath, unmodelled.join("\n")).map_err(GpuError::file(&upath))?;
    println!("exec: {} words ran without a model (checked by relations only; listed in {})", sum.unmodelled, upath.display());
    if sum.stopped_early {
        println!(
            "exec: time limit ({} s) reached: {} cubins not run; what ran is in {}; continue with --resume",
            o.time_limit.map(|l| l.as_secs()).unwrap_or(0),
            sum.cubins_left,
            path.display()
        );
    }
    Ok(sum)
}

/// Relation state across cubins: the outputs of page entries some relation refers to.
pub struct RelCtx<'a> {
    partners: std::collections::HashMap<String, Vec<u64>>,
    pages: std::collections::HashMap<&'a str, &'a PlanEntry>,
    referenced: std::collections::HashSet<&'a str>,
}

/// What one cubin produced: findings, words without a model, relation checks.
#[derive(Default)]
struct CubinOutcome {
    findings: Vec<ExecFinding>,
    unmodelled: Vec<String>,
    checked: BTreeMap<String, usize>,
    unchecked: usize,
}

/// Seed of an entry's inputs: its key (entries that must be compared share one).
fn input_seed(seed: u64, e: &PlanEntry) -> u64 {
    let key = if e.input_key.is_empty() { &e.word } else { &e.input_key };
    key.bytes().fold(seed ^ 0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// The input records of one cubin: keyed per entry, `operand_form` sources pinned to
/// the partner's operand value.
fn cubin_input(codec: &Codec, es: &[&PlanEntry], o: &RunOptions, threads: u32, k: u64, ctx: &RelCtx) -> Vec<u8> {
    let kind = es[0].template;
    let keyed: Vec<(u64, Vec<u32>)> = es.iter().map(|e| (input_seed(o.seed, e), e.sources.iter().map(|s| s.in_offset).collect())).collect();
    let mut input = inputs::generate_for(kind, o.slots, threads, &keyed);
    let (stride, bytes) = (kind.slot_bytes().0 as usize * o.slots as usize, (kind.src_bits() / 8) as usize);
    for e in es {
        let Some(r) = e.relation.as_ref().filter(|r| r.kind == RelKind::OperandForm) else { continue };
        let Some(p) = ctx.pages.get(r.with.as_str()).and_then(|p| Word::parse_hex(&p.word)) else { continue };
        for &op in &r.operands {
            let (Some(src), Ok(v)) = (e.sources.get(op - 1), relations::pin_value(codec, Arch(e.arch), p, op, kind.src_bits(), k)) else { continue };
            for t in 0..threads as usize {
                let at = t * stride + src.in_offset as usize;
                input[at..at + bytes].copy_from_slice(&v.to_le_bytes()[..bytes]);
            }
        }
    }
    input
}

fn outputs_of(e: &PlanEntry, out: &[u8], b: &Batch) -> Vec<u64> {
    let bytes = (e.template.dst_bits() / 8) as usize;
    (0..b.threads as usize)
        .map(|t| {
            let at = t * b.out_stride as usize + e.out_offset as usize;
            out.get(at..at + bytes).map(|x| x.iter().rev().fold(0u64, |a, &y| a << 8 | y as u64)).unwrap_or(0)
        })
        .collect()
}

/// The relation check of one entry against its partner's outputs: a finding when some
/// thread differs; `None` when it holds or the partner did not run (`unchecked`).
fn check_relation(tool: &str, e: &PlanEntry, mine: &[u64], b: &Batch, input: &[u8], ctx: &RelCtx, r: &mut CubinOutcome) -> Option<ExecFinding> {
    let rel = e.relation.as_ref()?;
    let Some(theirs) = ctx.partners.get(&rel.with) else {
        r.unchecked += 1;
        return None;
    };
    let name = if rel.kind == RelKind::IgnoredBit { "ignored_bit" } else { "operand_form" };
    *r.checked.entry(name.into()).or_default() += 1;
    let class = if rel.kind == RelKind::IgnoredBit { ExecClass::HiddenSemantics } else { ExecClass::OperandForm };
    let partner = ctx.pages.get(rel.with.as_str()).map(|p| p.word.clone()).unwrap_or_default();
    let mut f = finding(tool, e, class, "", String::new());
    let hex = |v: u64| format!("{v:#0w$x}", w = (e.template.dst_bits() / 4 + 2) as usize);
    for (t, (m, p)) in mine.iter().zip(theirs).enumerate() {
        if m == p {
            continue;
        }
        f.mismatches += 1;
        if f.examples.len() < crate::oracle::exec::EXAMPLES {
            let inputs = crate::oracle::exec::thread_inputs(e, input, t, b.in_stride, b.k);
            f.examples.push(crate::oracle::exec::Example {
                inputs: inputs.0.iter().map(|(k, v)| (k.to_string(), format!("{v:#018x}"))).collect(),
                expected: [(format!("R{}", e.dest), hex(*p))].into(),
                actual: [(format!("R{}", e.dest), hex(*m))].into(),
            });
        }
    }
    f.inputs_run = mine.len();
    (f.mismatches > 0).then(|| {
        f.message = format!("{name}: {} of {} inputs differ from the partner word {partner} (same inputs)", f.mismatches, mine.len());
        f
    })
}

/// One cubin: inputs, two runs with different sentinels, comparison with the models and
/// the relations.
fn run_cubin(codec: &Codec, dev: &mut dyn Executor, tool: &str, cubin: &Path, es: &[&PlanEntry], o: &RunOptions, ctx: &mut RelCtx) -> CubinOutcome {
    let kind = es[0].template;
    let (in_stride, out_stride) = crate::oracle::exec::strides(kind, o.slots);
    let threads = o.inputs;
    let k = inputs::constant(kind, o.seed);
    let input = cubin_input(codec, es, o, threads, k, ctx);
    let mut b = Batch { cubin: cubin.to_path_buf(), function: "slots".into(), threads, in_stride, out_stride, k, sentinel: 0xa5a5_a5a5 };
    let first = dev.run(&b, &input);
    b.sentinel = 0x5a5a_5a5a;
    let second = dev.run(&b, &input);
    let mut out = CubinOutcome::default();
    let (o1, o2) = match (first, second) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(Trap { message }), _) | (_, Err(Trap { message })) => {
            // Which words trap: rerun subsets (the rest restored to the template).
            let mut traps = match std::fs::read(trap_base(cubin, es[0])) {
                Ok(base) => isolate_traps(dev, &base, es, &b, &input, &o.out.join("bisect")),
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
        let (mine, again) = (outputs_of(e, &o1, &b), outputs_of(e, &o2, &b));
        *out.checked.entry("rerun".into()).or_default() += 1;
        let rerun_differs = mine != again;
        let note = " (and the result depends on the output sentinel: no store, or a stale read)";
        let own = match check_entry(codec, tool, e, &b, &input, &o1) {
            Err(why) => {
                out.unmodelled.push(format!("{} {}: {why}", e.variant, e.word));
                None
            }
            Ok(f) => f,
        };
        let f = match own {
            Some(mut f) => {
                if rerun_differs {
                    f.message.push_str(note);
                }
                Some(f)
            }
            None => check_relation(tool, e, &mine, &b, &input, ctx, &mut out)
                .or_else(|| rerun_differs.then(|| finding(tool, e, ExecClass::Rerun, "", format!("two runs on the same inputs differ{note}")))),
        };
        out.findings.extend(f);
        if e.kind == "page" && ctx.referenced.contains(e.values_id.as_str()) {
            ctx.partners.insert(e.values_id.clone(), mine);
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
    // A relation finding compares the flip with its base directly: the bit's by definition.
    for f in r.findings.iter_mut().filter(|f| f.class == ExecClass::HiddenSemantics && !f.message.starts_with("ignored_bit:")) {
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
        // A template alone (the canary) stores zeros, unless every launch traps.
        let template = b.cubin.to_string_lossy().ends_with(".baseline.cubin");
        let size = (b.threads * b.out_stride) as usize;
        match self.0.as_str() {
            "trap" => Err(Trap { message: "CUDA_ERROR_ILLEGAL_INSTRUCTION (fake)".into() }),
            "trap-words" if !template => Err(Trap { message: "CUDA_ERROR_ILLEGAL_INSTRUCTION (fake)".into() }),
            "hang" => loop {
                std::thread::sleep(Duration::from_secs(1));
            },
            "crash" => std::process::abort(),
            _ if template => Ok(vec![0; size]),
            _ => Ok(b.sentinel.to_le_bytes().iter().copied().cycle().take(size).collect()),
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
    // `MODE@sm_XY`: the fake device says it is an sm_XY (the probe prints the whole name).
    match a.fake.as_deref().map(|f| f.split('@').next().unwrap_or(f)) {
        Some(m @ ("model" | "wrong" | "wrong-hidden")) => {
            let run = || -> Result<i32, GpuError> {
                let s = load(&a.spec)?;
                let codec = Codec::new(&s);
                let bytes = std::fs::read(req_path).map_err(GpuError::file(req_path))?;
                let req: Request = serde_json::from_slice(&bytes).map_err(|source| GpuError::Json { path: req_path.clone(), source })?;
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
                println!("{}", serde_json::json!({ "tool": "", "trap": e.to_string() }));
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
