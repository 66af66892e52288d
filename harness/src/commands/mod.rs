//! The bodies of the command-line commands, callable from Rust: each takes plain
//! arguments (paths, numbers), prints what the command prints and returns a [`Failure`]
//! for the binary to report (`error: …`, exit status 2). The binary only parses arguments.
//! `exec` and `crosscheck` keep theirs in [`crate::oracle::gpu::cli`] and
//! [`crate::crosscheck::cli`] (exit statuses of their own).

pub mod discovery;
pub mod pages;
pub mod validation;
pub mod words;

use crate::oracle::nvdisasm::Nvdisasm;
use crate::oracle::process;
use crate::output::OutputDir;
use crate::spec::{self, Spec};
use std::path::{Path, PathBuf};

/// Why a command failed, in words for the person who ran it: the file, line or limit
/// involved, and what was expected. The binary prints it after `error:`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Failure(pub String);

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure(s)
    }
}

impl From<&str> for Failure {
    fn from(s: &str) -> Self {
        Failure(s.to_string())
    }
}

/// The library's typed errors reach the person as their message.
macro_rules! failure_from {
    ($($t:ty),* $(,)?) => {
        $(impl From<$t> for Failure {
            fn from(e: $t) -> Self {
                Failure(e.to_string())
            }
        })*
    };
}

failure_from!(
    crate::budget::BudgetError,
    crate::commands::validation::RunError,
    crate::validate::resume::ResumeError,
    crate::discover::sweep::SweepError,
    crate::fix::FixError,
    crate::oracle::gpu::GpuError,
    crate::realcode::RealCodeError,
    crate::semantics::ModelError,
    std::io::Error,
);

/// A command's result.
pub type Result<T = ()> = std::result::Result<T, Failure>;

/// Loads pages (files or folders); with `strict`, any page warning (an irregularity the
/// parser repairs) is an error, listed on stderr.
pub fn load(paths: &[PathBuf], strict: bool) -> Result<Spec> {
    if paths.is_empty() {
        return Err("no pages given (try: corpus/isa)".into());
    }
    let s = spec::load(paths).map_err(|e| e.to_string())?;
    let warnings: Vec<_> = s.warnings().collect();
    if strict && !warnings.is_empty() {
        for w in &warnings {
            eprintln!("warning: {w}");
        }
        return Err(format!("--strict: {} page warning(s), listed above", warnings.len()).into());
    }
    Ok(s)
}

/// Loads pages, repairs allowed.
pub fn load_spec(paths: &[PathBuf]) -> Result<Spec> {
    load(paths, false)
}

/// The output folder, created and locked for this run.
pub fn lock_out(out: &Path) -> Result<OutputDir> {
    Ok(OutputDir::lock(out).map_err(|e| e.to_string())?)
}

/// nvdisasm, located and identified; a warning when it is not the pinned version.
pub fn nvdisasm() -> Result<Nvdisasm> {
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

/// The pages given, else the built-in spec of `arch`.
pub fn spec_for(paths: &[PathBuf], arch: u32) -> Result<Spec> {
    if paths.is_empty() {
        // A whole-file problem (line 0) names the file alone.
        return Ok(spec::builtin::load_builtin(spec::Arch(arch)).map_err(|e| if e.line == 0 { format!("{}: {}", e.file, e.message) } else { e.to_string() })?);
    }
    load_spec(paths)
}

/// A named text input: a file, or stdin for `-`.
pub fn open_input(path: &Path) -> Result<(String, Box<dyn std::io::BufRead>)> {
    if path == Path::new("-") {
        return Ok(("<stdin>".into(), Box::new(std::io::stdin().lock())));
    }
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    if meta.is_dir() {
        return Err(format!("{name}: a folder, not a file").into());
    }
    let f = std::fs::File::open(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    Ok((name, Box::new(std::io::BufReader::with_capacity(1 << 16, f))))
}
