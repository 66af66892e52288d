//! The `sass-harness` command line.

use clap::{Parser, Subcommand};
use sass_harness::check::roundtrip_in;
use sass_harness::codec::{self, Codec};
use sass_harness::discover;
use sass_harness::gen::{random_values, Rng};
use sass_harness::oracle::nvdisasm::Nvdisasm;
use sass_harness::oracle::process;
use sass_harness::output::OutputDir;
use sass_harness::spec::{self, Spec};
use sass_harness::validate::{self, Finding, VariantSummary};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "sass-harness", version, about = "Differential fuzzing and validation of NVIDIA SASS encoding pages")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Seconds an external tool (nvdisasm, ptxas) may run before it is killed and the
    /// command fails [default: $SASS_HARNESS_TOOL_TIMEOUT, else 120].
    #[arg(long, global = true, value_name = "SECONDS", value_parser = process::parse_seconds)]
    tool_timeout: Option<Duration>,
    /// Most memory a command may hold at once (`2G`, `512M`, bytes); a request estimated
    /// above it (e.g. a huge --random) is refused before any work [default:
    /// $SASS_HARNESS_MEMORY_BUDGET, else 2G; at most half of `ulimit -v`].
    #[arg(long, global = true, value_name = "SIZE", value_parser = sass_harness::budget::parse_size)]
    memory_budget: Option<u64>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse pages and print a summary (or the canonical spec as JSON).
    Parse {
        #[command(flatten)]
        pages: Pages,
        /// Print the canonical spec as JSON instead of the summary.
        #[arg(long)]
        json: bool,
    },
    /// Roundtrip-check every variant with random words (pure, no external tool).
    Check {
        #[command(flatten)]
        pages: Pages,
        /// Random words per variant.
        #[arg(long, default_value_t = 100_000)]
        words: usize,
        /// Seed of the random words.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Validate pages against nvdisasm and write findings and reports.
    Validate {
        #[command(flatten)]
        pages: Pages,
        /// Folder for findings.jsonl and the reports (created if missing).
        #[arg(long, default_value = "reports")]
        out: PathBuf,
        /// Random probe words per variant (besides the structured probes).
        #[arg(long, default_value_t = 10_000)]
        random: usize,
        /// Seed of the random probes.
        #[arg(long, default_value_t = 0x5eed)]
        seed: u64,
        /// Continue an interrupted run in the same folder: keep the pages it finished
        /// (progress.jsonl) and their findings, validate the rest.
        #[arg(long)]
        resume: bool,
    },
    /// The main job: check, then validate, then compare real code; write reports.
    Run {
        #[command(flatten)]
        pages: Pages,
        /// Folder for findings, reports and compiled cubins (created if missing).
        #[arg(long, default_value = "reports")]
        out: PathBuf,
        /// Random words per variant for the roundtrip check.
        #[arg(long, default_value_t = 100_000)]
        words: usize,
        /// Random probe words per variant for validation.
        #[arg(long, default_value_t = 10_000)]
        random: usize,
        /// Folder of PTX kernels for the real-code comparison.
        #[arg(long, default_value = "corpus/ptx")]
        ptx: PathBuf,
    },
    /// Validate pages, apply every verified correction and write the corrected pages (same
    /// format, byte-identical where nothing changed) and a unified diff per changed page
    /// under DIR; repeats validation on the corrected pages until no error is left (at
    /// most three rounds). Each round's reports go to DIR/round-N.
    Fix {
        /// Page files or folders.
        paths: Vec<PathBuf>,
        /// Where corrected pages, diffs and reports go.
        #[arg(long)]
        out: PathBuf,
        /// Random probe words per variant.
        #[arg(long, default_value_t = 10_000)]
        random: usize,
    },
    /// Learn nvdisasm's printing conventions of every variant and store them beside the
    /// pages (`conventions.json` in each page folder); `--check` compares instead and
    /// fails on a difference.
    Conventions {
        #[command(flatten)]
        pages: Pages,
        /// Compare the stored conventions with nvdisasm's; write nothing.
        #[arg(long)]
        check: bool,
    },
    /// Compile PTX kernels with ptxas and compare every covered word with nvdisasm.
    Realcode {
        #[command(flatten)]
        pages: Pages,
        /// Folder of PTX kernels (*.ptx).
        #[arg(long, default_value = "corpus/ptx")]
        ptx: PathBuf,
        /// Folder for realcode.json and the compiled cubins (created if missing).
        #[arg(long, default_value = "reports")]
        out: PathBuf,
    },
    /// Decode 32-hex-digit words (bit 127 first) and print them; exits non-zero when a
    /// word matches no variant or a line is no word.
    Decode {
        /// `90`, `SM90` or `sm_90`.
        #[arg(long, value_parser = parse_arch)]
        arch: u32,
        /// Page files or folders (repeatable) [default: the built-in spec].
        #[arg(long = "spec")]
        spec: Vec<PathBuf>,
        /// Read words from this file, one per line (blank lines and `//` comments skipped).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Words as up to 32 hex digits, most significant first; `-` reads stdin as --file.
        words: Vec<String>,
    },
    /// Assemble SASS: one instruction given as an argument, or a whole listing (--file or
    /// `-` for stdin: one instruction per line, `//` comments, nvdisasm's `/*0010*/`
    /// addresses and `/* 0x… */` hex comments) printed as one word per line; with --patch,
    /// reassemble an edited `disasm` listing into a cubin.
    Asm {
        /// `90`, `SM90` or `sm_90` (with --patch: the cubin says).
        #[arg(long, value_parser = parse_arch, required_unless_present = "patch")]
        arch: Option<u32>,
        /// Page files or folders (repeatable) [default: the built-in spec].
        #[arg(long = "spec")]
        spec: Vec<PathBuf>,
        /// Read the listing from this file.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Patch this cubin: each listed instruction replaces the word at its section and
        /// address, keeping the original's control bits where the text does not say them.
        #[arg(long, requires = "out")]
        patch: Option<PathBuf>,
        /// Where the patched cubin goes (written whole or not at all).
        #[arg(long, requires = "patch")]
        out: Option<PathBuf>,
        /// The instruction in nvdisasm's syntax (e.g. `@P0 DFMA R0, R0, R0, R0 ;`), or with
        /// --patch the listing file; `-` reads the listing from stdin.
        text: Option<String>,
    },
    /// Disassemble every kernel of a cubin offline, in nvdisasm's syntax (words no variant
    /// decodes print as `UNDECODED 0x… ;`, are counted on stderr and make the exit non-zero).
    Disasm {
        /// The cubin.
        file: PathBuf,
        /// Page files or folders (repeatable) [default: the built-in spec].
        #[arg(long = "spec")]
        spec: Vec<PathBuf>,
        /// Expected architecture; the cubin's ELF header says it anyway.
        #[arg(long, value_parser = parse_arch)]
        arch: Option<u32>,
    },
    /// Solve variants' layouts from seed words with nvdisasm and write them as one page.
    Discover {
        /// `90`, `SM90` or `sm_90` (not with --from: the pages say).
        #[arg(long, value_parser = parse_arch, required_unless_present = "from")]
        arch: Option<u32>,
        /// Rediscover these hand-written pages from their variants' zero words: writes each
        /// page as nvdisasm shows it and `differences.md`, what the seed pages get wrong.
        #[arg(long, conflicts_with_all = ["words", "arch"])]
        from: Vec<PathBuf>,
        /// A seed word, 32 hex digits (bit 127 first), control bits as given (zero suits most forms; EXIT, branches, BAR and stores need both barriers 7: bits 110–115 set); repeat for more
        /// variants of one page. Without it (and --from), the whole architecture is discovered.
        #[arg(long = "word")]
        words: Vec<String>,
        /// Output folder: the page for --word; census.json, solved.jsonl, pages/ and
        /// summary.md for a whole architecture (a rerun continues an interrupted one).
        #[arg(long)]
        out: PathBuf,
        /// Page description line (with --word).
        #[arg(long)]
        description: Option<String>,
        /// Solve only this shard of the forms, `i/n` (join shard folders with `merge`).
        #[arg(long, value_parser = discover::sweep::Shard::parse, default_value = "0/1")]
        shard: discover::sweep::Shard,
        /// Only forms of these mnemonics (comma-separated), e.g. `DFMA,FFMA`.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Census only these opcodes: values of bits 0–8, comma-separated, e.g. `0x2b` (DFMA on
        /// SM90); every form of bits 9–11 is tried. Default: every opcode.
        #[arg(long = "opcode", value_delimiter = ',', value_parser = parse_opcode)]
        opcodes: Vec<u16>,
        /// PTX whose compiled words seed the census (every `*.ptx`, compiled with ptxas for
        /// --arch); `none` for the census alone.
        #[arg(long, default_value = "corpus/ptx")]
        ptx: PathBuf,
        /// Concurrent solvers sharing nvdisasm batches.
        #[arg(long, default_value_t = 256)]
        solvers: usize,
        /// nvdisasm processes at once (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Join the folders of `discover --shard i/n` runs into one discovery (pages and summary).
    Merge {
        /// Shard output folders.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Time validation of N words against nvdisasm alone on the same words.
    Bench {
        #[command(flatten)]
        pages: Pages,
        /// Words to validate (spread over the variants).
        #[arg(long, default_value_t = 50_000)]
        words: usize,
    },
    /// Predict what a word writes (CPU reference semantics): `model --arch 90 WORD R2=0x… …`
    /// or `--batch FILE` of JSON lines `{"word":…,"inputs":{…}}` (`-` for stdin).
    Model {
        /// `90`, `SM90` or `sm_90`.
        #[arg(long, value_parser = parse_arch)]
        arch: u32,
        /// Page files or folders (repeatable).
        #[arg(long = "spec", default_value = "corpus/isa")]
        spec: Vec<PathBuf>,
        /// Predict every JSON line `{"word":…,"inputs":{…}}` of this file instead (`-` for
        /// stdin): one line `{"outputs":…}` or `{"error":…}` for each.
        #[arg(long)]
        batch: Option<PathBuf>,
        /// The word, then REG=VALUE inputs (a 64-bit operand through its even register).
        args: Vec<String>,
    },
    /// Run every variant's words on the GPU against the models (`--dry-run`: build and
    /// check every patched cubin with nvdisasm, no GPU). Exit 3 when no GPU/driver.
    Exec(sass_harness::oracle::gpu::cli::ExecArgs),
    /// Replay fuzz corpora and crash artifacts against nvdisasm: findings, reports and
    /// minimized regression seeds in --out (exit 3 for --exec without a GPU).
    Crosscheck(sass_harness::crosscheck::cli::Args),
    /// (internal) One batch in a child process: `exec` starts these.
    #[command(hide = true)]
    ExecWorker(sass_harness::oracle::gpu::cli::WorkerArgs),
}

/// The pages a command reads.
#[derive(clap::Args)]
struct Pages {
    /// Page files (*.txt) or folders of them (e.g. corpus/isa).
    paths: Vec<PathBuf>,
    /// Treat every page warning (irregularities the parser repairs) as an error.
    #[arg(long)]
    strict: bool,
}

fn main() -> ExitCode {
    // Like other Unix tools, stop quietly when the reader goes away (`… | head`): Rust
    // ignores SIGPIPE, which turns every later println! into a panic.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // glibc gives each thread that allocates an arena of its own (up to 8 per core), and
    // memory freed in one is not reused by another: a 1 000-page validation, whose slices
    // and nvdisasm readers run on short-lived threads, held 500 MB resident for 240 MB of
    // live heap. Two arenas: 300 MB, no slower.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a malloc tuning call at start-up, before any thread; no preconditions.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
    let cli = Cli::parse();
    if let Some(t) = cli.tool_timeout {
        // One place the tool runners read it from, whoever starts them.
        std::env::set_var(process::TIMEOUT_VAR, t.as_secs_f64().to_string());
    }
    if let Some(b) = cli.memory_budget {
        // Likewise: the library reads the budget where it estimates a request.
        std::env::set_var(sass_harness::budget::VAR, b.to_string());
    }
    // exec has exit statuses of its own (3: no GPU), so it bypasses `run`.
    let cmd = match cli.cmd {
        Cmd::Exec(a) => return sass_harness::oracle::gpu::cli::exec_main(&a),
        Cmd::ExecWorker(a) => return sass_harness::oracle::gpu::cli::worker_main(&a),
        Cmd::Crosscheck(a) => return sass_harness::crosscheck::cli::main(&a),
        other => other,
    };
    match run(cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn load(pages: &Pages) -> Result<Spec, String> {
    if pages.paths.is_empty() {
        return Err("no pages given (try: corpus/isa)".into());
    }
    let s = spec::load(&pages.paths).map_err(|e| e.to_string())?;
    let warnings: Vec<_> = s.warnings().collect();
    if pages.strict && !warnings.is_empty() {
        for w in &warnings {
            eprintln!("warning: {w}");
        }
        return Err(format!("--strict: {} page warning(s), listed above", warnings.len()));
    }
    Ok(s)
}

fn load_spec(paths: &[PathBuf]) -> Result<Spec, String> {
    load(&Pages { paths: paths.to_vec(), strict: false })
}

/// The output folder, created and locked for this run.
fn lock_out(out: &Path) -> Result<OutputDir, String> {
    OutputDir::lock(out).map_err(|e| e.to_string())
}

/// nvdisasm, located and identified; a warning when it is not the pinned version.
fn nvdisasm() -> Result<Nvdisasm, String> {
    // From here on, Ctrl-C / SIGTERM kill the running tools and end the command through
    // its error path, so temporaries are removed (commands without tools keep the
    // default disposition).
    process::install_interrupt_handler();
    let nv = Nvdisasm::locate().map_err(|e| e.to_string())?;
    if let Some(w) = nv.pin_warning() {
        eprintln!("warning: {w}");
    }
    Ok(nv)
}

fn run(cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::Parse { pages, json } => {
            let s = load(&pages)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?);
            } else {
                print_summary(&s);
            }
            Ok(())
        }
        Cmd::Check { pages, words, seed } => {
            let s = load(&pages)?;
            check(&s, words, seed)
        }
        Cmd::Validate { pages, out, random, seed, resume } => {
            let s = load(&pages)?;
            let out = lock_out(&out)?;
            let previous = if resume { validate::resume::read(out.path())? } else { Default::default() };
            validate(&s, &out, random, seed, previous).map(|_| ())
        }
        Cmd::Run { pages, out, words, random, ptx } => {
            let s = load(&pages)?;
            check(&s, words, 1)?;
            let out = lock_out(&out)?;
            validate(&s, &out, random, 0x5eed, Default::default())?;
            realcode(&s, &ptx, &out)
        }
        Cmd::Fix { paths, out, random } => fix(&paths, &out, random),
        Cmd::Conventions { pages, check } => conventions(&load(&pages)?, check),
        Cmd::Realcode { pages, ptx, out } => {
            let s = load(&pages)?;
            realcode(&s, &ptx, &lock_out(&out)?)
        }
        Cmd::Decode { arch, spec: sp, file, words } => decode(&spec_for(&sp, arch)?, arch, file.as_deref(), &words),
        Cmd::Asm { arch, spec: sp, file, patch, out, text } => match (patch, out) {
            (Some(cubin), Some(out)) => asm_patch(&sp, &cubin, &out, file.as_deref(), text.as_deref()),
            _ => asm(&sp, arch.ok_or("asm needs --arch")?, file.as_deref(), text.as_deref()),
        },
        Cmd::Disasm { file, spec: sp, arch } => disasm(&sp, &file, arch),
        Cmd::Discover { arch, from, words, out, description, shard, only, opcodes, ptx, solvers, jobs } => match arch {
            _ if !from.is_empty() => discover_from(&from, &out),
            Some(arch) if words.is_empty() => {
                let scope = discover::census::Scope { opcodes };
                let opts = discover::sweep::Options { arch: spec::Arch(arch), out, shard, solvers, only, scope, seeds: vec![], tool: String::new() };
                discover_arch(opts, &ptx, jobs)
            }
            Some(arch) => discover(arch, &words, &out, description.as_deref()),
            None => Err("discover needs --arch or --from".into()),
        },
        Cmd::Merge { shards, out } => merge(&shards, &out),
        Cmd::Bench { pages, words } => {
            let s = load(&pages)?;
            bench(&s, words)
        }
        Cmd::Exec(_) | Cmd::ExecWorker(_) | Cmd::Crosscheck(_) => Err("exec and crosscheck are handled before run".into()),
        Cmd::Model { arch, spec: sp, batch, args } => model(&load_spec(&sp)?, spec::Arch(arch), batch.as_deref(), &args),
    }
}

/// The pages given, else the built-in spec of `arch`.
fn spec_for(paths: &[PathBuf], arch: u32) -> Result<Spec, String> {
    if paths.is_empty() {
        // A whole-file problem (line 0) names the file alone.
        return spec::builtin::load_builtin(spec::Arch(arch)).map_err(|e| if e.line == 0 { format!("{}: {}", e.file, e.message) } else { e.to_string() });
    }
    load_spec(paths)
}

/// A named text input: a file, or stdin for `-`.
fn open_input(path: &Path) -> Result<(String, Box<dyn std::io::BufRead>), String> {
    if path == Path::new("-") {
        return Ok(("<stdin>".into(), Box::new(std::io::stdin().lock())));
    }
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    if meta.is_dir() {
        return Err(format!("{name}: a folder, not a file"));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    Ok((name, Box::new(std::io::BufReader::with_capacity(1 << 16, f))))
}

/// Prints each word's variant and text (arguments, then --file or stdin, streamed); an
/// error when `arch` has no variant, a word matches none or a line is no word (after
/// printing every word).
fn decode(s: &Spec, arch: u32, file: Option<&Path>, words: &[String]) -> Result<(), String> {
    use sass_harness::listing;
    let c = Codec::new(s);
    let a = spec::Arch(arch);
    if !c.variants().iter().any(|v| v.arch == a) {
        return Err(format!("the pages have no variant for SM{arch}"));
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut stats = listing::DecodeStats::default();
    let mut report = |e: listing::InputError| eprintln!("error: {e}");
    let io = |e: std::io::Error| format!("cannot write: {e}");
    let mut inputs: Vec<&Path> = file.into_iter().collect();
    for (i, w) in words.iter().enumerate() {
        if w == "-" {
            inputs.push(Path::new("-"));
            continue;
        }
        match sass_harness::word::Word::parse_hex(w) {
            Some(word) => listing::decode_one(&c, a, word, &mut out, &mut stats).map_err(io)?,
            None => {
                stats.bad_lines += 1;
                report(listing::InputError { file: "argument".into(), line: i + 1, message: format!("'{w}' is not a word of up to 32 hex digits") });
            }
        }
    }
    for p in inputs {
        let (name, input) = open_input(p)?;
        let st = listing::decode_lines(&c, a, &name, input, &mut out, &mut report).map_err(|e| format!("{name}: cannot read: {e}"))?;
        stats.words += st.words;
        stats.unmatched += st.unmatched;
        stats.bad_lines += st.bad_lines;
    }
    out.flush().map_err(io)?;
    let mut problems = vec![];
    if stats.unmatched > 0 {
        problems.push(format!("{} of {} word(s) matched no variant", stats.unmatched, stats.words));
    }
    if stats.bad_lines > 0 {
        problems.push(format!("{} line(s) were no word (listed above)", stats.bad_lines));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Every listing error on stderr; the error that ends the command.
fn listing_errors(errors: Vec<sass_harness::listing::InputError>) -> String {
    for e in &errors {
        eprintln!("error: {e}");
    }
    format!("{} error(s), listed above", errors.len())
}

/// One instruction (an argument) or a listing (--file, `-`) to words on stdout.
fn asm(sp: &[PathBuf], arch: u32, file: Option<&Path>, text: Option<&str>) -> Result<(), String> {
    use sass_harness::listing;
    let s = spec_for(sp, arch)?;
    let c = Codec::new(&s);
    let a = spec::Arch(arch);
    let path = match (file, text) {
        (Some(f), None) => f,
        (None, Some("-")) => Path::new("-"),
        (None, Some(t)) => {
            // As in listings: nvdisasm's alias modifiers (`IMAD.MOV.U32`) are read too.
            let inst = sass_harness::sass::parse_instruction(t).map_err(|e| format!("'{t}': {e}"))?;
            let asm = codec::asm::Assembler::new(&c);
            let (vi, w) = listing::assemble_flex(&c, &asm, a, &inst, sass_harness::word::Word::ZERO).map_err(|e| e.to_string())?;
            println!("{}  {}", w, c.variant(vi).key);
            return Ok(());
        }
        (Some(_), Some(_)) => return Err("give the listing with --file or the instruction as an argument, not both".into()),
        (None, None) => return Err("asm needs an instruction, --file LISTING or - (stdin)".into()),
    };
    let (name, input) = open_input(path)?;
    let l = listing::read_listing(&name, input).map_err(listing_errors)?;
    // A `/* 0x… */` comment gives the word's control bits; otherwise they are zero.
    let words = listing::assemble_listing(&c, a, &name, &l, &|it| it.hex.unwrap_or(sass_harness::word::Word::ZERO)).map_err(listing_errors)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for w in words {
        writeln!(out, "{w}").map_err(|e| format!("cannot write: {e}"))?;
    }
    out.flush().map_err(|e| format!("cannot write: {e}"))
}

/// `asm --patch CUBIN --out NEW LISTING`.
fn asm_patch(sp: &[PathBuf], cubin: &Path, out: &Path, file: Option<&Path>, text: Option<&str>) -> Result<(), String> {
    use sass_harness::{disasm, listing};
    let path = match (file, text) {
        (Some(f), None) => f,
        (None, Some(t)) => Path::new(t),
        _ => return Err("asm --patch needs one listing: a file (or --file) or - (stdin)".into()),
    };
    let name = cubin.display().to_string();
    let bytes = disasm::read_cubin(cubin).map_err(|e| e.to_string())?;
    let arch = disasm::arch_of(&name, &bytes, None).map_err(|e| e.to_string())?;
    let s = spec_for(sp, arch.0)?;
    let c = Codec::new(&s);
    let (lname, input) = open_input(path)?;
    let l = listing::read_listing(&lname, input).map_err(listing_errors)?;
    let (patched, stats) = match disasm::patch(&c, &name, &bytes, &lname, &l) {
        Err(disasm::PatchError::Listing(errors)) => return Err(listing_errors(errors)),
        r => r.map_err(|e| e.to_string())?,
    };
    disasm::write_atomically(out, &patched).map_err(|e| e.to_string())?;
    eprintln!("{}: {} instruction(s) read, {} word(s) changed", out.display(), stats.instructions, stats.changed);
    Ok(())
}

/// `disasm CUBIN`: the listing on stdout; words no variant decodes make it an error.
fn disasm(sp: &[PathBuf], file: &Path, arch: Option<u32>) -> Result<(), String> {
    use sass_harness::disasm;
    let name = file.display().to_string();
    let bytes = disasm::read_cubin(file).map_err(|e| e.to_string())?;
    let a = disasm::arch_of(&name, &bytes, arch).map_err(|e| e.to_string())?;
    let sections = disasm::sections_of(&name, &bytes).map_err(|e| e.to_string())?;
    let s = spec_for(sp, a.0)?;
    let c = Codec::new(&s);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let infos = disasm::infos_of(&name, &bytes, &sections).map_err(|e| e.to_string())?;
    let stats = disasm::disassemble(&c, a, &sections, &infos, &mut out).map_err(|e| format!("cannot write: {e}"))?;
    out.flush().map_err(|e| format!("cannot write: {e}"))?;
    if stats.undecoded > 0 {
        return Err(format!("{name}: {} of {} word(s) decode as nothing (printed as UNDECODED)", stats.undecoded, stats.words));
    }
    Ok(())
}

fn model(s: &Spec, arch: spec::Arch, batch: Option<&Path>, args: &[String]) -> Result<(), String> {
    use sass_harness::semantics::batch;
    let c = Codec::new(s);
    if let Some(file) = batch {
        let stdout = std::io::stdout();
        let errors = if file == Path::new("-") {
            batch::model_batch(&c, arch, std::io::stdin().lock(), stdout.lock())?
        } else {
            let f = std::fs::File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
            batch::model_batch(&c, arch, std::io::BufReader::new(f), stdout.lock())?
        };
        return if errors == 0 { Ok(()) } else { Err(format!("{errors} batch line(s) had errors (see their \"error\")")) };
    }
    let (word, assignments) = args.split_first().ok_or("no word given: model --arch 90 WORD REG=VALUE…")?;
    let out = batch::model_one(&c, arch, word, assignments)?;
    if out.0.is_empty() {
        println!("(nothing written: guard false or destination RZ)");
    }
    for o in &out.0 {
        println!("{o}");
    }
    Ok(())
}

fn print_summary(s: &Spec) {
    for p in &s.pages {
        println!("{} ({}) — {} — {} variants", p.instruction, p.arch, p.file, p.variants.len());
        for v in &p.variants {
            println!("  {}  [{}]  distilled: {}", v.key, v.form, v.distilled);
            for f in &v.fields {
                println!("    {:<12} {:>3} bit(s)  {}", f.name, f.width(), sass_harness::word::format_ranges(&f.bits));
            }
            for t in &v.tables {
                let rows: Vec<String> = t.rows.iter().map(|r| format!("{:0w$b}={}", r.value, r.name, w = t.width as usize)).collect();
                println!("    table {}: {}", t.title, rows.join(" "));
            }
        }
    }
    let warnings: Vec<_> = s.warnings().collect();
    println!("{} warning(s)", warnings.len());
    for w in warnings {
        println!("  warning: {w}");
    }
}

fn check(s: &Spec, words: usize, seed: u64) -> Result<(), String> {
    let c = Codec::new(s);
    let a = sass_harness::Assembler::new(&c);
    let mut rng = Rng::new(seed);
    println!("{:<22} {:>6} {:>10} {:>9}", "variant", "arch", "words", "failures");
    let mut total_fail = 0;
    for vi in 0..c.variants().len() {
        let v = c.variant(vi);
        let mut fails = 0;
        let mut first = None;
        for _ in 0..words {
            let vals = random_values(v, &mut rng);
            if let Err(e) = roundtrip_in(&a, vi, &vals) {
                fails += 1;
                first.get_or_insert(e);
            }
        }
        println!("{:<22} {:>6} {:>10} {:>9}", v.key, v.arch.to_string(), words, fails);
        if let Some(e) = first {
            println!("    first failure: {e}");
        }
        total_fail += fails;
    }
    if total_fail > 0 {
        return Err(format!("{total_fail} roundtrip failure(s)"));
    }
    Ok(())
}

/// A validation into `out` (see [`validate::run::validate_into`]), keeping what
/// `previous` (an interrupted run) finished. SASS_HARNESS_TIMINGS=1 prints each phase's
/// time to stderr (for profiling big runs).
fn validate(s: &Spec, out: &OutputDir, random: usize, seed: u64, previous: validate::resume::Previous) -> Result<(Vec<VariantSummary>, Vec<Finding>), String> {
    let timings = std::env::var_os("SASS_HARNESS_TIMINGS").is_some_and(|v| v != "0");
    let opts = validate::Options { random_per_variant: random, seed, timings, ..Default::default() };
    validate::run::validate_into(s, out, &nvdisasm()?, &opts, previous)
}

/// Where a page found under one of `roots` goes under `out`: its path below that root
/// (a file given directly: its file name).
fn output_path(page: &Path, roots: &[PathBuf], out: &Path) -> PathBuf {
    for r in roots {
        if let Ok(rel) = page.strip_prefix(r) {
            if !rel.as_os_str().is_empty() {
                return out.join(rel);
            }
        }
    }
    out.join(page.file_name().unwrap_or(page.as_os_str()))
}

fn fix(paths: &[PathBuf], out: &Path, random: usize) -> Result<(), String> {
    let first = load_spec(paths)?;
    let originals: Vec<(PathBuf, String)> = first
        .pages
        .iter()
        .map(|p| std::fs::read_to_string(&p.file).map(|t| (output_path(Path::new(&p.file), paths, out), t)).map_err(|e| format!("{}: {e}", p.file)))
        .collect::<Result<_, _>>()?;
    let mut spec = first;
    let mut errors = 0;
    for round in 1..=3 {
        let (_, findings) = validate(&spec, &lock_out(&out.join(format!("round-{round}")))?, random, 0x5eed, Default::default())?;
        errors = findings.iter().filter(|f| f.severity == validate::Severity::Error).count();
        println!("fix round {round}: {errors} error(s)");
        if errors == 0 && round > 1 {
            break;
        }
        let corrected = sass_harness::fix::correct_pages(&spec, &findings)?;
        for (page, (dest, _)) in corrected.iter().zip(&originals) {
            if let Some(dir) = dest.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::write(dest, &page.text).map_err(|e| format!("{}: {e}", dest.display()))?;
        }
        write_conventions(&spec, &findings, &originals)?;
        if errors == 0 {
            break;
        }
        let next: Vec<PathBuf> = originals.iter().map(|(d, _)| d.clone()).collect();
        spec = load_spec(&next)?;
    }
    for (dest, original) in &originals {
        let now = std::fs::read_to_string(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        let diff_path = PathBuf::from(format!("{}.diff", dest.display()));
        if now != *original {
            let name = dest.display().to_string();
            std::fs::write(&diff_path, sass_harness::validate::correct::unified_diff(&name, original, &now))
                .map_err(|e| format!("{}: {e}", diff_path.display()))?;
            println!("corrected {} (diff: {})", dest.display(), diff_path.display());
        } else {
            let _ = std::fs::remove_file(&diff_path);
            println!("unchanged {}", dest.display());
        }
    }
    if errors > 0 {
        return Err(format!("{errors} error(s) left after three rounds of corrections"));
    }
    Ok(())
}

/// Writes each page folder's corrected conventions file beside its corrected pages
/// (`dests`: each page's output path, in the spec's page order).
fn write_conventions(spec: &Spec, findings: &[validate::Finding], dests: &[(PathBuf, String)]) -> Result<(), String> {
    for (dir, file) in sass_harness::fix::correct_conventions(spec, findings)? {
        let Some(i) = spec.pages.iter().position(|p| Path::new(&p.file).parent() == Some(dir.as_path())) else { continue };
        let Some(dest_dir) = dests[i].0.parent() else { continue };
        let path = dest_dir.join(spec::conventions::FILE_NAME);
        sass_harness::output::write_atomic(&path, file.to_text().as_bytes()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn realcode(s: &Spec, ptx: &Path, out: &OutputDir) -> Result<(), String> {
    let nv = nvdisasm()?;
    let ptxas = sass_harness::oracle::tools::locate(sass_harness::oracle::tools::Tool::Ptxas).map_err(|e| e.to_string())?;
    let c = Codec::new(s);
    let tmp = out.path().join("cubins");
    let r = sass_harness::realcode::run(&c, &nv, &ptxas, ptx, &tmp)?;
    println!(
        "real code: {} kernels, {} words, {} covered by the pages, {} agreeing with nvdisasm, {} printed differently",
        r.kernels,
        r.words,
        r.covered,
        r.agreeing,
        r.disagreeing.len()
    );
    println!("  byte-identical to nvdisasm: {} of {} covered words", r.identical, r.covered);
    for s in &r.skipped {
        println!("  {s}");
    }
    for (arch, (words, covered)) in &r.by_arch {
        println!("  {arch}: {covered} of {words} words covered ({:.1}%)", 100.0 * *covered as f64 / (*words).max(1) as f64);
        let mut missing: Vec<(&String, &usize)> = r.uncovered.get(arch).map(|m| m.iter().collect()).unwrap_or_default();
        missing.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        if !missing.is_empty() {
            let top: Vec<String> = missing.iter().take(12).map(|(m, n)| format!("{m} {n}")).collect();
            println!("    not covered, by mnemonic: {}{}", top.join(", "), if missing.len() > 12 { ", …" } else { "" });
        }
    }
    for e in r.not_identical.iter().take(8) {
        println!("  spelled differently: {}  ours '{}'  nvdisasm '{}'  [{}]", e.word, e.ours, e.nvdisasm, e.kernel);
    }
    println!(
        "  nvdisasm text → assembler: {} bit-exact, {} exact up to ignored bits{}, {} printed alike by several forms (this one among them), {} mismatches",
        r.asm_exact,
        r.asm_up_to_ignored,
        if r.ignored_bits.is_empty() { String::new() } else { format!(" ({:?})", r.ignored_bits) },
        r.asm_ambiguous,
        r.asm_mismatch
    );
    for (a, (with, page_only)) in &r.identical_by_arch {
        println!("  {a}: {with} byte-identical with the stored conventions ({page_only} from the pages alone)");
    }
    for (k, n) in &r.by_variant {
        println!("  {k:<22} {n:>5} words");
    }
    for e in r.disagreeing.iter().take(8) {
        println!("  differs: {}  ours '{}'  nvdisasm '{}'  [{}]", e.word, e.ours, e.nvdisasm, e.kernel);
    }
    let json = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
    let path = out.write("realcode.json", json.as_bytes()).map_err(|e| e.to_string())?;
    println!("wrote {}", path.display());
    if r.asm_mismatch > 0 {
        return Err(format!("{} agreeing words did not assemble back", r.asm_mismatch));
    }
    Ok(())
}

/// Learns every variant's conventions; writes them beside the pages, or compares.
fn conventions(s: &Spec, check: bool) -> Result<(), String> {
    let nv = nvdisasm()?;
    let c = Codec::new(s);
    let vis: Vec<usize> = (0..c.variants().len()).collect();
    let conv = sass_harness::oracle::learn::learn(&nv, &c, &vis).map_err(|e| e.to_string())?;
    if check {
        let diffs = sass_harness::oracle::learn::differences(&c, &conv);
        for d in &diffs {
            println!("{d}");
        }
        println!("{} of {} forms differ from nvdisasm {}", diffs.len(), vis.len(), nv.version);
        return if diffs.is_empty() { Ok(()) } else { Err(format!("{} form(s) whose stored conventions nvdisasm contradicts", diffs.len())) };
    }
    let tool = format!("nvdisasm {}", nv.version_number.clone().unwrap_or_else(|| nv.version.clone()));
    for (dir, f) in sass_harness::oracle::learn::files(&c, &conv, &tool).map_err(|e| e.to_string())? {
        let path = dir.join(spec::conventions::FILE_NAME);
        sass_harness::output::write_atomic(&path, f.to_text().as_bytes()).map_err(|e| e.to_string())?;
        println!("wrote {} ({} forms, {} control tables)", path.display(), f.forms.len(), f.controls.len());
    }
    Ok(())
}

/// `90`, `SM90`, `sm90` or `sm_90` → 90.
fn parse_arch(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let digits = t.strip_prefix("SM").or_else(|| t.strip_prefix("sm")).unwrap_or(t);
    let digits = digits.strip_prefix('_').unwrap_or(digits);
    digits.parse::<u32>().map_err(|_| format!("expected an architecture such as 90, SM90 or sm_90, not '{s}'"))
}

fn bench(s: &Spec, words: usize) -> Result<(), String> {
    let nv = nvdisasm()?;
    let c = Codec::new(s);
    // The same words both ways: the validator's probes (structured and seeded random).
    let per = (words / c.variants().len()).max(1);
    let opts = validate::Options { random_per_variant: per, seed: 99, timings: true, ..Default::default() };
    // The baseline holds every probe word at once, not a slice at a time.
    let need = (per as u64).saturating_mul(c.variants().len() as u64).saturating_mul(validate::BYTES_PER_PROBE);
    sass_harness::budget::Budget::from_env()?.check(&format!("bench --words {words}"), need, "lower --words or raise the budget")?;
    // nvdisasm alone first, on exactly the words and batches the validator sends first.
    let vis: Vec<usize> = (0..c.variants().len()).collect();
    let conv = sass_harness::oracle::learn::learn(&nv, &c, &vis).map_err(|e| e.to_string())?;
    let batches = validate::probe_words(s, &c, &conv, &opts);
    let t0 = Instant::now();
    let alone_words = validate::disassemble_only(&nv, &batches).map_err(|e| e.to_string())?;
    let alone = t0.elapsed().as_secs_f64();
    // The whole validation: the same nvdisasm work plus comparing, attributing,
    // minimizing (more nvdisasm runs) and merging.
    eprintln!("validation phases (per architecture, from its start):");
    let t1 = Instant::now();
    let mut checked = 0;
    validate::validate_pages(s, &c, &nv, &opts, |_, sums, _| checked += sums.iter().map(|x| x.words).sum::<usize>()).map_err(|e| e.to_string())?;
    let harness = t1.elapsed().as_secs_f64();
    if checked != alone_words {
        return Err(format!("internal: validation checked {checked} words, the baseline disassembled {alone_words}"));
    }
    println!("words: {checked} on {} cores (nvdisasm {})", nv.jobs, nv.version);
    println!("nvdisasm alone:   {alone:.2} s ({:.0} words/s)", checked as f64 / alone);
    println!("harness validate: {harness:.2} s ({:.0} words/s)", checked as f64 / harness);
    println!("ratio (harness throughput / nvdisasm throughput): {:.2}", alone / harness);
    Ok(())
}

/// An opcode: a value of bits 0–8, hex (`0x2b`) or decimal.
fn parse_opcode(s: &str) -> Result<u16, String> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u16::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.ok().filter(|&v| v < 0x200).ok_or_else(|| format!("'{s}' is not an opcode (a value of bits 0–8, 0x0 to 0x1ff)"))
}

/// A whole architecture (or a shard of it) into `opts.out`.
fn discover_arch(mut opts: discover::sweep::Options, ptx: &Path, jobs: Option<usize>) -> Result<(), String> {
    let mut nv = nvdisasm()?;
    // Locked before anything is read or written there (census.json, cubins/): a second
    // run into the folder is refused before it can touch the first one's files.
    let _lock = sass_harness::output::OutputDir::lock(&opts.out).map_err(|e| e.to_string())?;
    if ptx != Path::new("none") && !opts.out.join("census.json").exists() {
        let ptxas = sass_harness::oracle::tools::locate(sass_harness::oracle::tools::Tool::Ptxas).map_err(|e| e.to_string())?;
        let cubins = opts.out.join("cubins");
        std::fs::create_dir_all(&cubins).map_err(|e| format!("{}: {e}", cubins.display()))?;
        let (seeds, skipped) = sass_harness::realcode::corpus_words(&ptxas, ptx, opts.arch, &cubins)?;
        for s in skipped {
            eprintln!("discover {}: {s}", opts.arch);
        }
        opts.seeds = seeds;
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

/// Rediscovers hand-written pages; lists where they differ from nvdisasm.
fn discover_from(pages: &[PathBuf], out: &Path) -> Result<(), String> {
    let s = load_spec(pages)?;
    let nv = nvdisasm()?;
    let _lock = OutputDir::lock(out).map_err(|e| e.to_string())?;
    let mut md = String::from("# Seed pages against discovery\n\n");
    let mut total = 0;
    for seed in &s.pages {
        let (text, _) = discover::seeded::rediscover(&nv, seed).map_err(|e| format!("{}: {e}", seed.file))?;
        let name = Path::new(&seed.file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = out.join(&name);
        sass_harness::output::write_atomic(&path, text.as_bytes()).map_err(|e| e.to_string())?;
        let found = spec::parse::parse_page(&path.display().to_string(), text.as_bytes()).map_err(|e| e.to_string())?;
        let diffs = discover::seeded::differences(seed, &found);
        total += diffs.len();
        md.push_str(&format!("## {} ({} {})\n\n", seed.file, seed.instruction, seed.arch));
        md.push_str(&if diffs.is_empty() { "agrees with nvdisasm\n".to_string() } else { diffs.iter().map(|d| format!("- {d}\n")).collect() });
        md.push('\n');
        println!("{}: {} difference(s); wrote {}", seed.file, diffs.len(), path.display());
    }
    let path = out.join("differences.md");
    sass_harness::output::write_atomic(&path, md.as_bytes()).map_err(|e| e.to_string())?;
    println!("{total} difference(s) in all; see {}", path.display());
    Ok(())
}

/// Joins shard folders: the census of the first, every shard's records, pages rendered again.
fn merge(shards: &[PathBuf], out: &Path) -> Result<(), String> {
    let s = discover::sweep::merge(shards, out)?;
    println!("merged {} shard(s): {} forms, {} solved onto {} pages into {}", shards.len(), s.forms, s.solved, s.pages, out.display());
    Ok(())
}

fn discover(arch: u32, words: &[String], out: &Path, description: Option<&str>) -> Result<(), String> {
    use sass_harness::word::Word;
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
        return Err(format!("seeds decode to {name} and {}: one page holds one instruction", d.mnemonic));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let path = out.join(format!("{}_sm{arch}.txt", name.to_lowercase()));
    // Whole or not at all: a kill mid-write leaves the previous page, not half of one.
    sass_harness::output::write_atomic(&path, discover::page::render(&name, description, &found).as_bytes()).map_err(|e| e.to_string())?;
    println!("wrote {}", path.display());
    Ok(())
}
