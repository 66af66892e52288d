//! ptxas: PTX → cubin, for real code (corpus/ptx) and for execution templates.
//!
//! `compile` runs `ptxas -arch=<arch> -o <out_dir>/<stem>.<arch>.cubin <ptx>` and reports
//! every way that can fail as a [`PtxasError`] that carries the file name and, where ptxas
//! ran, its stderr. The `-arch` flag decides the code: a `.target sm_90` file compiles for
//! `sm_100` too (ptxas accepts any target at or above the file's), while a `.target sm_100`
//! file fails for `sm_90`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::process::{self, describe_status, Limits, ProcessError};

#[derive(Debug, thiserror::Error)]
pub enum PtxasError {
    #[error("{file}: {arch:?} is not a ptxas GPU name (expected sm_<digits> with an optional a/f suffix, e.g. sm_90, sm_100)")]
    BadArch { file: String, arch: String },
    #[error("{file}: cannot read the PTX file: {err}")]
    Input { file: String, err: String },
    #[error("{file}: cannot create output folder {dir}: {err}")]
    OutDir { file: String, dir: String, err: String },
    #[error("{file}: could not run ptxas at {ptxas}: {err}")]
    Spawn { file: String, ptxas: String, err: String },
    #[error("{file}: {err}")]
    Process { file: String, err: ProcessError },
    #[error("{file}: {err}")]
    Timeout { file: String, err: process::TimeoutSettingError },
    #[error("{file}: ptxas -arch={arch} failed ({status}):\n{stderr}")]
    Failed { file: String, arch: String, status: String, stderr: String },
    #[error("{file}: ptxas -arch={arch} succeeded but wrote no cubin at {cubin}; stderr:\n{stderr}")]
    NoOutput { file: String, arch: String, cubin: String, stderr: String },
}

impl PtxasError {
    /// ptxas's stderr, where ptxas ran.
    pub fn stderr(&self) -> Option<&str> {
        match self {
            PtxasError::Failed { stderr, .. } | PtxasError::NoOutput { stderr, .. } => Some(stderr),
            _ => None,
        }
    }
}

/// `sm_90`, `sm_100`, `sm_100a`, `sm_120f`…: what `-arch` takes for real code.
pub fn is_valid_arch(arch: &str) -> bool {
    let Some(rest) = arch.strip_prefix("sm_") else { return false };
    let digits = rest.strip_suffix(['a', 'f']).unwrap_or(rest);
    !digits.is_empty() && digits.len() <= 4 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A PTX file's `.target`: the lowest architecture it compiles for and whether it uses
/// architecture-specific features (`sm_90a`: wgmma), which compile for that one
/// architecture only, with the `a` suffix, and not for later ones; or family features
/// (`sm_100f`), which compile within the target's family only. Which architectures a
/// family holds is ptxas's to say: see [`refusal`] and `realcode::TargetRules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub sm: u32,
    pub specific: bool,
    pub family: bool,
}

impl Target {
    /// The first `.target` line's (comments skipped); `None` without one.
    pub fn of(ptx: &str) -> Option<Target> {
        ptx.lines().find_map(|l| {
            let l = l.split("//").next()?.trim();
            let t = l.strip_prefix(".target")?.trim();
            let first = t.split([',', ' ', '\t']).next()?.strip_prefix("sm_")?;
            let digits: String = first.chars().take_while(|c| c.is_ascii_digit()).collect();
            let suffix = &first[digits.len()..];
            Some(Target { sm: digits.parse().ok()?, specific: suffix.starts_with('a'), family: suffix.starts_with('f') })
        })
    }

    /// `sm_90`, `sm_90a`, `sm_100f`: as the `.target` line spells it.
    pub fn name(self) -> String {
        format!(
            "sm_{}{}",
            self.sm,
            if self.specific {
                "a"
            } else if self.family {
                "f"
            } else {
                ""
            }
        )
    }

    /// The `-arch` to ask ptxas for when compiling a file of this target for `sm`: with
    /// the `a` suffix for an `a` target (ptxas refuses plain `sm_N` for it), else plain.
    /// Whether ptxas accepts it is ptxas's answer, not ours (see [`refusal`]).
    pub fn arch_for(self, sm: u32) -> String {
        format!("sm_{sm}{}", if self.specific { "a" } else { "" })
    }

    /// The `-arch` that compiles the file for architecture `sm`, if it compiles for it,
    /// by the static rule for plain and `a` targets (the tests' corpus has no family
    /// target); real runs ask ptxas instead (`realcode::TargetRules`).
    pub fn ptxas_arch(self, sm: u32) -> Option<String> {
        match self.specific {
            true if sm == self.sm => Some(format!("sm_{sm}a")),
            false if sm >= self.sm => Some(format!("sm_{sm}")),
            _ => None,
        }
    }
}

/// ptxas's messages that refuse a `.target` for an `-arch` (as ptxas 13.5 words them;
/// each line also names `.target`): a later family (`sm_100f` for `sm_120`), a later
/// architecture (`sm_90a` for `sm_100a`), the plain name of an `a` target's own
/// (`sm_100a` for `sm_100`), or an architecture below the target.
const REFUSALS: [&str; 4] = [
    "cannot be compiled to different SM-family architecture",
    "cannot be compiled to future architecture",
    "cannot be compiled for architecture",
    "SM version specified by .target is higher than",
];

/// ptxas's refusal to compile a file for the `-arch` asked: its line, and whether it is
/// about the file's `.target` (then it holds for every file of that target) or about an
/// instruction the file uses (`Instruction 'wgmma.fence' cannot be compiled for
/// architecture 'sm_100a'`: that file only; ptxas checks instructions first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub line: String,
    pub of_target: bool,
}

/// The refusal in a failed compile's stderr, if that is why it failed (not a fault of
/// the file's syntax or of the tool).
pub fn refusal(e: &PtxasError) -> Option<Refusal> {
    let PtxasError::Failed { stderr, .. } = e else { return None };
    let refuses = |l: &&str| REFUSALS.iter().any(|r| l.contains(r));
    let line = |l: &str| l.trim_start_matches("ptxas fatal").trim_start_matches([' ', ':']).trim().to_string();
    if let Some(l) = stderr.lines().filter(refuses).find(|l| l.contains(".target")) {
        return Some(Refusal { line: line(l), of_target: true });
    }
    // Every error line (`FILE, line N; error : …`) an instruction refusal, or it is a
    // fault of the file.
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("; error")).collect();
    (!errors.is_empty() && errors.iter().all(|l| refuses(l) && l.contains("Instruction '"))).then(|| Refusal { line: line(errors[0]), of_target: false })
}

/// The cubin path `compile` writes for this PTX file and arch.
pub fn cubin_path(ptx: &Path, arch: &str, out_dir: &Path) -> PathBuf {
    let stem = ptx.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "kernel".into());
    out_dir.join(format!("{stem}.{arch}.cubin"))
}

/// Compile one PTX file for `arch` ("sm_90", "sm_100", …) into `out_dir` (created if
/// missing). Returns the cubin's path. Never panics.
pub fn compile(ptxas: &Path, ptx: &Path, arch: &str, out_dir: &Path) -> Result<PathBuf, PtxasError> {
    let file = ptx.display().to_string();
    let timeout = process::timeout_from_env().map_err(|err| PtxasError::Timeout { file, err })?;
    compile_within(ptxas, ptx, arch, out_dir, timeout)
}

/// [`compile`], with ptxas killed after `timeout`.
pub fn compile_within(ptxas: &Path, ptx: &Path, arch: &str, out_dir: &Path, timeout: std::time::Duration) -> Result<PathBuf, PtxasError> {
    compile_as(ptxas, ptx, arch, out_dir, timeout, false)
}

/// [`compile`] into a relocatable cubin (`ptxas -c`, what `-rdc=true` builds hold), named
/// `<stem>.<arch>.rel.cubin`: its code keeps relocations where an executable cubin has
/// addresses.
pub fn compile_relocatable(ptxas: &Path, ptx: &Path, arch: &str, out_dir: &Path) -> Result<PathBuf, PtxasError> {
    let file = ptx.display().to_string();
    let timeout = process::timeout_from_env().map_err(|err| PtxasError::Timeout { file, err })?;
    compile_as(ptxas, ptx, arch, out_dir, timeout, true)
}

fn compile_as(ptxas: &Path, ptx: &Path, arch: &str, out_dir: &Path, timeout: std::time::Duration, relocatable: bool) -> Result<PathBuf, PtxasError> {
    let file = ptx.display().to_string();
    if !is_valid_arch(arch) {
        return Err(PtxasError::BadArch { file, arch: arch.to_string() });
    }
    // ptxas's own message for a missing input is terse; say it plainly.
    if let Err(e) =
        std::fs::metadata(ptx).and_then(|m| if m.is_file() { Ok(()) } else { Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file")) })
    {
        return Err(PtxasError::Input { file, err: e.to_string() });
    }
    std::fs::create_dir_all(out_dir).map_err(|e| PtxasError::OutDir { file: file.clone(), dir: out_dir.display().to_string(), err: e.to_string() })?;
    let cubin = match relocatable {
        true => cubin_path(ptx, arch, out_dir).with_extension("rel.cubin"),
        false => cubin_path(ptx, arch, out_dir),
    };
    // A stale cubin from an earlier run must not pass for this run's output.
    let _ = std::fs::remove_file(&cubin);
    let cached = cache::Entry::for_compile(ptxas, ptx, arch, timeout, relocatable);
    if cached.as_ref().is_some_and(|e| e.restore(&cubin)) {
        return Ok(cubin);
    }

    let mut cmd = Command::new(ptxas);
    cmd.arg(format!("-arch={arch}"));
    if relocatable {
        cmd.arg("-c");
    }
    cmd.arg("-o").arg(&cubin).arg(ptx);
    let out = process::run(&mut cmd, &Limits::with_timeout(timeout)).map_err(|e| match e {
        ProcessError::Spawn { err, .. } => PtxasError::Spawn { file: file.clone(), ptxas: ptxas.display().to_string(), err },
        err => PtxasError::Process { file: file.clone(), err },
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let status = describe_status(&out.status);
        let _ = std::fs::remove_file(&cubin);
        return Err(PtxasError::Failed { file, arch: arch.to_string(), status, stderr });
    }
    match std::fs::metadata(&cubin) {
        Ok(m) if m.is_file() && m.len() > 0 => {
            if let Some(e) = cached {
                e.store(&cubin);
            }
            Ok(cubin)
        }
        _ => Err(PtxasError::NoOutput { file, arch: arch.to_string(), cubin: cubin.display().to_string(), stderr }),
    }
}

/// Where [`compile`] keeps the cubins it made, for the next compile of the same PTX: set
/// by [`cache::set_dir`] or the variable [`cache::DIR_VAR`]; without either, nothing is
/// cached. A test suite compiles `corpus/ptx` in several tests; each pays ptxas once.
pub mod cache {
    use super::super::cache::{tool_stamp, Entry as Stored};
    use super::super::process::{self, Limits};
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::{Mutex, OnceLock};

    /// Environment variable: the cache folder, when [`set_dir`] was not called.
    pub const DIR_VAR: &str = "SASS_HARNESS_PTXAS_CACHE";

    static DIR: OnceLock<PathBuf> = OnceLock::new();

    /// Caches in `dir` from now on, in this process (the first call decides).
    pub fn set_dir(dir: impl Into<PathBuf>) {
        let _ = DIR.set(dir.into());
    }

    /// The cache folder in force, if any.
    pub fn dir() -> Option<PathBuf> {
        DIR.get().cloned().or_else(|| std::env::var_os(DIR_VAR).filter(|v| !v.is_empty()).map(PathBuf::from))
    }

    /// `ptxas --version`'s whole output (the build line too), once per ptxas path; `None`
    /// when it does not run: then nothing is cached and the compile reports the fault.
    fn version(ptxas: &Path, timeout: std::time::Duration) -> Option<String> {
        static SEEN: OnceLock<Mutex<HashMap<PathBuf, Option<String>>>> = OnceLock::new();
        let seen = SEEN.get_or_init(Default::default);
        if let Some(v) = seen.lock().unwrap_or_else(|e| e.into_inner()).get(ptxas) {
            return v.clone();
        }
        let out = process::run(Command::new(ptxas).arg("--version"), &Limits::with_timeout(timeout)).ok();
        let v = out.filter(|o| o.status.success() && !o.stdout.is_empty()).map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        seen.lock().unwrap_or_else(|e| e.into_inner()).insert(ptxas.to_path_buf(), v.clone());
        v
    }

    /// One compile's place in the cache: keyed by ptxas's binary and version, the `-arch`
    /// and the PTX bytes (see [`crate::oracle::cache`]).
    pub struct Entry(Stored);

    impl Entry {
        /// The entry for compiling `ptx` for `arch` with `ptxas` (with `-c` where
        /// `relocatable`), when a cache folder is set and the PTX and ptxas's version can
        /// be read.
        pub fn for_compile(ptxas: &Path, ptx: &Path, arch: &str, timeout: std::time::Duration, relocatable: bool) -> Option<Entry> {
            let dir = dir()?;
            let text = std::fs::read(ptx).ok()?;
            let version = version(ptxas, timeout)?;
            let c = if relocatable { "-c" } else { "" };
            let mut key = format!("ptxas {}\n", tool_stamp(ptxas)?).into_bytes();
            key.extend(format!("--version:\n{version}\n-arch={arch}\n{c}PTX ({} bytes):\n", text.len()).into_bytes());
            key.extend_from_slice(&text);
            Some(Entry(Stored::new(&dir, &format!("-{arch}{c}"), key)))
        }

        /// Writes the cached cubin to `out` on a hit (the key matches and the cubin is
        /// there); false on a miss.
        pub fn restore(&self, out: &Path) -> bool {
            self.0.read().is_some_and(|cubin| !cubin.is_empty() && std::fs::write(out, cubin).is_ok())
        }

        /// Keeps `cubin` (what ptxas just wrote).
        pub fn store(&self, cubin: &Path) {
            if let Ok(bytes) = std::fs::read(cubin) {
                self.0.write(&bytes);
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::super::compile;
        use super::super::test_support::scratch;
        use super::*;

        /// A ptxas stand-in that logs each compile and writes the PTX back as the cubin.
        fn fake_ptxas(dir: &Path) -> PathBuf {
            let fake = dir.join("ptxas");
            let log = dir.join("compiles.log");
            let script = format!(
                "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'ptxas: fake, V0.0.1'; exit 0; fi\necho \"$1\" >> '{}'\ncp \"$4\" \"$3\"\n",
                log.display()
            );
            std::fs::write(&fake, script).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
            fake
        }

        fn compiles(dir: &Path) -> usize {
            std::fs::read_to_string(dir.join("compiles.log")).map_or(0, |t| t.lines().count())
        }

        /// A second compile of the same PTX for the same `-arch` by the same ptxas copies
        /// the cached cubin; another PTX text, another `-arch`, or a key file that does not
        /// match runs ptxas again.
        #[test]
        fn a_cached_cubin_is_reused_only_for_the_same_ptx_arch_and_ptxas() {
            let dir = scratch("ptxas-cache");
            set_dir(dir.join("cache"));
            let fake = fake_ptxas(&dir);
            let ptx = dir.join("k.ptx");
            std::fs::write(&ptx, ".version 8.8\n.target sm_90\n// one\n").unwrap();
            let out = |tag: &str, arch: &str| compile(&fake, &ptx, arch, &dir.join(tag)).unwrap_or_else(|e| panic!("{e}"));
            let first = out("a", "sm_90");
            assert_eq!(compiles(&dir), 1);
            let again = out("b", "sm_90");
            assert_eq!((compiles(&dir), std::fs::read(&again).unwrap()), (1, std::fs::read(&first).unwrap()));
            out("c", "sm_100");
            assert_eq!(compiles(&dir), 2, "another -arch");
            std::fs::write(&ptx, ".version 8.8\n.target sm_90\n// two\n").unwrap();
            let changed = out("d", "sm_90");
            assert_eq!((compiles(&dir), std::fs::read_to_string(&changed).unwrap().contains("two")), (3, true), "another PTX text");
            // The entry's key no longer says what it was compiled from: a miss.
            let e = Entry::for_compile(&fake, &ptx, "sm_90", std::time::Duration::from_secs(10), false).unwrap();
            std::fs::write(&e.0.key_file, b"something else").unwrap();
            out("e", "sm_90");
            assert_eq!(compiles(&dir), 4, "a key that does not match");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Helpers shared by the tests of this module and of `crate::cubin`.
#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::oracle::tools::{self, Tool};
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub const ARCHES: [&str; 3] = ["sm_90", "sm_100", "sm_120"];

    pub fn ptxas() -> PathBuf {
        tools::locate(Tool::Ptxas).expect("ptxas required: bash ci/install-cuda-tools.sh")
    }
    pub fn nvdisasm() -> PathBuf {
        tools::locate(Tool::Nvdisasm).expect("nvdisasm required: bash ci/install-cuda-tools.sh")
    }

    /// A fresh, empty scratch folder under the system temp dir.
    pub fn scratch(tag: &str) -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!("sass-harness-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("create scratch dir");
        d
    }

    /// Every corpus/ptx file with the arches (of ARCHES) its `.target` allows.
    pub fn corpus() -> Vec<(PathBuf, Vec<String>)> {
        let dir = tools::repo_root().join("corpus/ptx");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no .ptx files in {}", dir.display());
        files
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(&p).unwrap();
                let t = Target::of(&text).unwrap_or_else(|| panic!("{}: no .target sm_NN line", p.display()));
                let arches = ARCHES.iter().filter_map(|a| t.ptxas_arch(a[3..].parse().unwrap())).collect();
                (p, arches)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    #[test]
    fn ptxas_compiles_every_corpus_file_for_each_arch_its_target_allows() {
        let ptxas = ptxas();
        let out = scratch("ptxas-corpus");
        let mut all = 0;
        for (ptx, arches) in corpus() {
            assert!(!arches.is_empty(), "{}: targets none of {ARCHES:?}", ptx.display());
            all += usize::from(arches.len() == ARCHES.len());
            for arch in &arches {
                let cubin = compile(&ptxas, &ptx, arch, &out).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(cubin, cubin_path(&ptx, arch, &out));
                let bytes = std::fs::read(&cubin).unwrap();
                assert_eq!(&bytes[..4], b"\x7fELF", "{}", cubin.display());
            }
        }
        assert!(all >= 6, "most corpus kernels should build for every one of {ARCHES:?} ({all} do)");
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn ptxas_rejects_an_sm100_target_for_sm90_with_its_stderr() {
        let ptxas = ptxas();
        let out = scratch("ptxas-target");
        // `.target sm_100` kernels build for sm_100 and sm_120, not sm_90.
        let sm100_only: Vec<_> = corpus().into_iter().filter(|(_, a)| a.iter().any(|x| x == "sm_100") && !a.iter().any(|x| x == "sm_90")).collect();
        assert!(!sm100_only.is_empty(), "corpus should hold an `.target sm_100` kernel (fhfma_mixed.ptx)");
        for (ptx, _) in sm100_only {
            let e = compile(&ptxas, &ptx, "sm_90", &out).expect_err("sm_100 PTX must not build for sm_90");
            let msg = e.to_string();
            assert!(matches!(e, PtxasError::Failed { .. }), "{msg}");
            assert!(msg.contains(&*ptx.file_name().unwrap().to_string_lossy()), "{msg}");
            assert!(!e.stderr().unwrap_or("").trim().is_empty(), "{msg}");
            assert!(!cubin_path(&ptx, "sm_90", &out).exists());
        }
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn ptxas_reports_syntax_errors_with_file_and_line() {
        let ptxas = ptxas();
        let dir = scratch("ptxas-bad");
        let ptx = dir.join("broken.ptx");
        std::fs::write(&ptx, ".version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n    frobnicate.f32 %f1;\n    ret;\n}\n").unwrap();
        let e = compile(&ptxas, &ptx, "sm_90", &dir).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, PtxasError::Failed { .. }), "{msg}");
        assert!(msg.contains("broken.ptx") && msg.contains("line 6"), "{msg}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ptxas_errors_without_running_for_bad_inputs() {
        let dir = scratch("ptxas-inputs");
        let ptx = tools_corpus_file();
        let e = compile(Path::new("/nonexistent/ptxas"), &ptx, "sm_90", &dir).unwrap_err();
        assert!(matches!(e, PtxasError::Spawn { .. }), "{e}");
        for arch in ["90", "sm90", "sm_", "sm_90x", "compute_90", "", "sm_9a0"] {
            let e = compile(Path::new("/nonexistent/ptxas"), &ptx, arch, &dir).unwrap_err();
            assert!(matches!(e, PtxasError::BadArch { .. }), "{arch:?}: {e}");
        }
        for arch in ["sm_90", "sm_100", "sm_100a", "sm_120f"] {
            assert!(is_valid_arch(arch), "{arch}");
        }
        let e = compile(Path::new("/nonexistent/ptxas"), &dir.join("missing.ptx"), "sm_90", &dir).unwrap_err();
        assert!(matches!(e, PtxasError::Input { .. }) && e.to_string().contains("missing.ptx"), "{e}");
        let e = compile(Path::new("/nonexistent/ptxas"), &dir, "sm_90", &dir).unwrap_err();
        assert!(matches!(e, PtxasError::Input { .. }), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_hung_ptxas_is_killed() {
        let dir = scratch("ptxas-hang");
        let fake = dir.join("ptxas");
        std::fs::write(&fake, "#!/bin/sh\nsleep 100000 & exec sleep 100000\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let t = std::time::Instant::now();
        let limit = std::time::Duration::from_millis(300);
        let e = compile_within(&fake, &tools_corpus_file(), "sm_90", &dir, limit).unwrap_err();
        assert!(matches!(e, PtxasError::Process { err: ProcessError::TimedOut { .. }, .. }), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(10));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tools_corpus_file() -> PathBuf {
        corpus().into_iter().next().unwrap().0
    }

    #[test]
    fn target_lines_are_read() {
        let t = |sm, specific, family| Some(Target { sm, specific, family });
        assert_eq!(Target::of(".version 8.8\n.target sm_90\n"), t(90, false, false));
        assert_eq!(Target::of("// .target sm_70\n.target sm_100a, texmode_independent\n"), t(100, true, false));
        assert_eq!(Target::of(".target sm_100f\n"), t(100, false, true));
        assert_eq!(Target::of(".version 8.8\n"), None);
        assert_eq!(["sm_90", "sm_90a", "sm_100f"].map(|n| Target::of(&format!(".target {n}")).unwrap().name()), ["sm_90", "sm_90a", "sm_100f"]);
        // A portable target compiles for itself and later; an `a` target for itself only.
        let plain = Target { sm: 90, specific: false, family: false };
        assert_eq!([80, 90, 100].map(|sm| plain.ptxas_arch(sm)), [None, Some("sm_90".into()), Some("sm_100".into())]);
        let specific = Target { sm: 90, specific: true, family: false };
        assert_eq!([80, 90, 100].map(|sm| specific.ptxas_arch(sm)), [None, Some("sm_90a".into()), None]);
        assert_eq!((specific.arch_for(100), plain.arch_for(120)), ("sm_100a".to_string(), "sm_120".to_string()));
    }

    /// ptxas's own refusals of a family target outside its family, of an `a` target for
    /// a later architecture and of any target below itself are told apart from a broken
    /// file, whose failure is not a refusal.
    #[test]
    fn ptxas_refusals_of_a_target_are_recognized() {
        let (ptxas, dir) = (ptxas(), scratch("ptxas-refusal"));
        let body = ".address_size 64\n.visible .entry k()\n{\n    ret;\n}\n";
        for (target, arch) in [("sm_100f", "sm_120"), ("sm_90a", "sm_100a"), ("sm_100", "sm_90")] {
            let ptx = dir.join(format!("{target}.ptx"));
            std::fs::write(&ptx, format!(".version 8.8\n.target {target}\n{body}")).unwrap();
            let e = compile(&ptxas, &ptx, arch, &dir).expect_err(arch);
            assert!(refusal(&e).is_some_and(|r| r.of_target), "{target} for {arch}: {e}");
        }
        // An sm_90a kernel using wgmma: ptxas refuses its instructions on sm_100a first.
        let wgmma = corpus().into_iter().find(|(p, _)| p.ends_with("wgmma_tensor.ptx")).expect("corpus/ptx/wgmma_tensor.ptx").0;
        let r = refusal(&compile(&ptxas, &wgmma, "sm_100a", &dir).unwrap_err()).expect("a refusal");
        assert!(!r.of_target && r.line.contains("Instruction 'wgmma"), "{r:?}");
        let broken = dir.join("broken.ptx");
        std::fs::write(&broken, ".version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n    frob;\n}\n").unwrap();
        assert_eq!(refusal(&compile(&ptxas, &broken, "sm_90", &dir).unwrap_err()), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
