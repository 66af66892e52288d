//! The `sass-harness` command line.

// No function over 80 lines (clippy.toml), as in the library.
#![warn(clippy::too_many_lines)]

use clap::{Parser, Subcommand};
use sass_harness::commands::{self, discovery, load, load_spec, lock_out, pages, words, Result};
use sass_harness::discover;
use sass_harness::oracle::process;
use sass_harness::spec;
use sass_harness::validate;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
        /// Words as up to 32 hex digits, most significant first; `-` reads stdin as --file,
        /// and an argument that names a file reads that file.
        words: Vec<String>,
        /// Each text led by its word's scheduling bits, which nvdisasm does not print
        /// (`[----:B------:R-:W-:Y:S04] FFMA …`, as `asm` reads them back)
        #[arg(long)]
        controls: bool,
    },
    /// Assemble SASS: one instruction given as an argument, or a whole listing (a file, or
    /// `-` for stdin: one instruction per line, `//` comments, nvdisasm's `/*0010*/`
    /// addresses and `/* 0x… */` hex comments) printed as one word per line; with --patch,
    /// reassemble an edited `disasm` listing into its cubin, fatbin, program or object.
    Asm {
        /// `90`, `SM90` or `sm_90` (with --patch: each cubin says).
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
        /// A fatbin, program or object: the cubins its listing's `// FILE (SM90 cubin at
        /// byte 0x…)` lines name (as `disasm` prints them), each in place.
        #[arg(long, requires = "out")]
        patch: Option<PathBuf>,
        /// Where the patched file goes (written whole or not at all).
        #[arg(long, requires = "patch")]
        out: Option<PathBuf>,
        /// The instruction in nvdisasm's syntax (e.g. `@P0 DFMA R0, R0, R0, R0 ;`), or a
        /// listing file (what names a file is read as one; with --patch, always a listing);
        /// `-` reads the listing from stdin. An instruction or listing line may start with
        /// its scheduling bits, as `disasm --controls` prints them
        /// (`[B------:R-:W0:Y:S04] S2R R0, SR_TID.X ;`); otherwise they are zero, or a
        /// listing's `/* 0x… */` word's, or with --patch the original's.
        text: Option<String>,
    },
    /// Disassemble every kernel of a cubin offline, in nvdisasm's syntax (words no variant
    /// decodes print as `UNDECODED 0x… ;`, are counted on stderr and make the exit non-zero);
    /// of a fatbin, or a host program or object that embeds fatbins, each cubin in turn.
    Disasm {
        /// The cubin, fatbin, program or object.
        file: PathBuf,
        /// Page files or folders (repeatable) [default: the built-in spec].
        #[arg(long = "spec")]
        spec: Vec<PathBuf>,
        /// Expected architecture (the cubin's ELF header says it anyway); of a fatbin, the
        /// cubins of this architecture only.
        #[arg(long, value_parser = parse_arch)]
        arch: Option<u32>,
        /// Each instruction's word as `nvdisasm -hex` prints it: `/* 0x<bits 0-63> */` after
        /// the instruction and `/* 0x<bits 64-127> */` on a line of its own, at one column
        #[arg(long)]
        hex: bool,
        /// Each instruction line led by its word's scheduling bits, which nvdisasm does not
        /// print: `[----:B------:R-:W-:Y:S04]` (reuse flags, the scoreboards waited on, the
        /// read and write scoreboards set, yield, stall), as `asm` reads them back
        #[arg(long)]
        controls: bool,
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
        /// Folders of PTX whose compiled words seed the census (every `*.ptx`, compiled with
        /// ptxas for --arch), repeatable (`--ptx corpus/ptx --ptx corpus/ptx-cvt`); `none`
        /// for the census alone.
        #[arg(long, default_values = ["corpus/ptx"])]
        ptx: Vec<PathBuf>,
        /// A folder of one architecture's pages (`corpus/isa-discovered/sm90`) to grow: a
        /// variant is added for each form the words of --ptx and --word use that no page
        /// decodes, solved from one of them, with its printing conventions. The grown pages,
        /// the conventions file and `fill.md` (what was added, what could not be) go to --out.
        #[arg(long, requires = "arch", conflicts_with = "from")]
        fill: Option<PathBuf>,
        /// With --fill: a whole-architecture discovery's `census.json` (repeatable), whose
        /// words (each form's seed and the others it kept) are filled like --word's. A seed
        /// can leave an operand out (SM90 IADD3's second carry-out at PT) where another
        /// word of its form prints it; this adds the forms of such words.
        #[arg(long = "census", requires = "fill")]
        census: Vec<PathBuf>,
        /// Pages of other architectures (files or folders, repeatable: `--seed-pages
        /// corpus/isa-discovered/sm90`): each variant's base word is tried after the census's
        /// own rounds, for forms this architecture shares that its census never met.
        #[arg(long = "seed-pages")]
        seed_pages: Vec<PathBuf>,
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
        /// Pairs of runs (nvdisasm alone, then the validation) on the same words; with
        /// more than one, the ratios' medians and ranges follow.
        #[arg(long, default_value_t = 1)]
        repeat: usize,
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

fn run(cmd: Cmd) -> Result {
    match cmd {
        Cmd::Parse { pages, json } => {
            let s = load(&pages.paths, pages.strict)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?);
            } else {
                words::print_summary(&s);
            }
            Ok(())
        }
        Cmd::Check { pages: p, words, seed } => pages::check(&load(&p.paths, p.strict)?, words, seed),
        Cmd::Validate { pages: p, out, random, seed, resume } => {
            let s = load(&p.paths, p.strict)?;
            let out = lock_out(&out)?;
            let previous = if resume { validate::resume::read(out.path())? } else { Default::default() };
            pages::validate(&s, &out, random, seed, previous).map(|_| ())
        }
        Cmd::Run { pages: p, out, words, random, ptx } => {
            // The real-code step comes last: a wrong folder should not wait for the others.
            if !ptx.is_dir() {
                return Err(format!("--ptx {}: not a folder (of PTX kernels)", ptx.display()).into());
            }
            let s = load(&p.paths, p.strict)?;
            pages::check(&s, words, 1)?;
            let out = lock_out(&out)?;
            pages::validate(&s, &out, random, 0x5eed, Default::default())?;
            pages::realcode(&s, &ptx, &out)
        }
        Cmd::Fix { paths, out, random } => pages::fix(&paths, &out, random),
        Cmd::Conventions { pages: p, check } => pages::conventions(&load(&p.paths, p.strict)?, check),
        Cmd::Realcode { pages: p, ptx, out } => pages::realcode(&load(&p.paths, p.strict)?, &ptx, &lock_out(&out)?),
        Cmd::Decode { arch, spec: sp, file, words: w, controls } => words::decode(&commands::spec_for(&sp, arch)?, arch, file.as_deref(), &w, controls),
        Cmd::Asm { arch, spec: sp, file, patch, out, text } => match (patch, out) {
            (Some(cubin), Some(out)) => words::asm_patch(&sp, &cubin, &out, file.as_deref(), text.as_deref()),
            _ => words::asm(&sp, arch.ok_or("asm needs --arch")?, file.as_deref(), text.as_deref()),
        },
        Cmd::Disasm { file, spec: sp, arch, hex, controls } => words::disasm(&sp, &file, arch, sass_harness::disasm::Style { hex, controls }),
        Cmd::Discover { arch, from, words: w, out, description, shard, only, opcodes, ptx, fill, census, seed_pages, solvers, jobs } => match (arch, fill) {
            _ if !from.is_empty() => discovery::discover_from(&from, &out),
            (Some(arch), Some(dir)) => discovery::fill(arch, &dir, discovery::FillWords { ptx: &ptx, words: &w, census: &census }, &out),
            (Some(arch), None) if w.is_empty() => {
                let scope = discover::census::Scope { opcodes };
                let opts =
                    discover::sweep::Options { arch: spec::Arch(arch), out, shard, solvers, only, scope, seeds: vec![], borrowed: vec![], tool: String::new() };
                discovery::discover_arch(opts, &ptx, &seed_pages, jobs)
            }
            (Some(arch), None) => discovery::discover(arch, &w, &out, description.as_deref()),
            (None, _) => Err("discover needs --arch or --from".into()),
        },
        Cmd::Merge { shards, out } => discovery::merge(&shards, &out),
        Cmd::Bench { pages: p, words, repeat } => pages::bench(&load(&p.paths, p.strict)?, words, repeat),
        Cmd::Exec(_) | Cmd::ExecWorker(_) | Cmd::Crosscheck(_) => Err("exec and crosscheck are handled before run".into()),
        Cmd::Model { arch, spec: sp, batch, args } => words::model(&load_spec(&sp)?, spec::Arch(arch), batch.as_deref(), &args),
    }
}

/// `90`, `SM90`, `sm90` or `sm_90` → 90.
fn parse_arch(s: &str) -> std::result::Result<u32, String> {
    let t = s.trim();
    let digits = t.strip_prefix("SM").or_else(|| t.strip_prefix("sm")).unwrap_or(t);
    let digits = digits.strip_prefix('_').unwrap_or(digits);
    digits.parse::<u32>().map_err(|_| format!("expected an architecture such as 90, SM90 or sm_90, not '{s}'"))
}

/// An opcode: a value of bits 0–8, hex (`0x2b`) or decimal.
fn parse_opcode(s: &str) -> std::result::Result<u16, String> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u16::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.ok().filter(|&v| v < 0x200).ok_or_else(|| format!("'{s}' is not an opcode (a value of bits 0–8, 0x0 to 0x1ff)"))
}
