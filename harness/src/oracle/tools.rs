//! Finding NVIDIA's command-line tools: an explicit variable, then CUDA_HOME, then the
//! project's own install (.tools/cuda, from ci/install-cuda-tools.sh), then PATH.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::process::{self, Limits, ProcessError};

pub const INSTALL_HINT: &str = "bash ci/install-cuda-tools.sh";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Tool {
    Nvdisasm,
    Ptxas,
    Cuobjdump,
}

impl Tool {
    pub fn exe(self) -> &'static str {
        match self {
            Tool::Nvdisasm => "nvdisasm",
            Tool::Ptxas => "ptxas",
            Tool::Cuobjdump => "cuobjdump",
        }
    }
    pub fn env_var(self) -> &'static str {
        match self {
            Tool::Nvdisasm => "NVDISASM",
            Tool::Ptxas => "PTXAS",
            Tool::Cuobjdump => "CUOBJDUMP",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{tool} not found (looked in ${var}, $CUDA_HOME/bin, {project}, PATH); install it with: {hint}")]
    Missing { tool: &'static str, var: &'static str, project: String, hint: &'static str },
    #[error("{var}={path} does not name an executable file")]
    BadVariable { var: &'static str, path: String },
    #[error("could not run {path}: {err}")]
    Run { path: String, err: String },
    #[error("{0}")]
    Setting(#[from] super::process::TimeoutSettingError),
    #[error("{path} --version: {err}")]
    Version { path: String, err: ProcessError },
    #[error("{path} is not {tool}: its --version output does not name {tool} ({status}): {output}")]
    NotTheTool { tool: &'static str, path: String, status: String, output: String },
}

/// Where ci/install-cuda-tools.sh puts the tools, relative to the repository root.
pub fn project_tool_dir() -> PathBuf {
    repo_root().join(".tools/cuda/nvidia/cu13/bin")
}

/// The repository root: the workspace above this crate.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

fn is_exe(p: &Path) -> bool {
    p.is_file()
}

pub fn locate(tool: Tool) -> Result<PathBuf, ToolError> {
    if let Some(v) = std::env::var_os(tool.env_var()) {
        let p = PathBuf::from(&v);
        return if is_exe(&p) { Ok(p) } else { Err(ToolError::BadVariable { var: tool.env_var(), path: p.display().to_string() }) };
    }
    let mut candidates = vec![];
    if let Some(h) = std::env::var_os("CUDA_HOME") {
        candidates.push(PathBuf::from(h).join("bin").join(tool.exe()));
    }
    candidates.push(project_tool_dir().join(tool.exe()));
    candidates.push(PathBuf::from(".tools/cuda/nvidia/cu13/bin").join(tool.exe()));
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join(tool.exe())));
    }
    candidates.into_iter().find(|p| is_exe(p)).ok_or_else(|| ToolError::Missing {
        tool: tool.exe(),
        var: tool.env_var(),
        project: project_tool_dir().display().to_string(),
        hint: INSTALL_HINT,
    })
}

/// The CUDA tools version this project is pinned to: `CUDA_TOOLS_VERSION` in
/// ci/install-cuda-tools.sh (a test keeps the two equal). Findings are only comparable
/// across runs of the same nvdisasm.
pub const PINNED_VERSION: &str = "13.5.37";

/// What `--version` says about a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolVersion {
    /// The version line, e.g. `release 13.5, V13.5.37`.
    pub line: String,
    /// The full version, e.g. `13.5.37`, when the line names one.
    pub number: Option<String>,
}

impl ToolVersion {
    /// A warning when this is not [`PINNED_VERSION`].
    pub fn pin_warning(&self, tool: Tool, path: &Path) -> Option<String> {
        if self.number.as_deref() == Some(PINNED_VERSION) {
            return None;
        }
        Some(format!(
            "{} at {} is version {}, not the pinned {PINNED_VERSION}: findings may differ from the reference runs ({INSTALL_HINT} installs the pinned one)",
            tool.exe(),
            path.display(),
            self.number.as_deref().unwrap_or(&self.line)
        ))
    }
}

/// Runs `path --version` within `timeout` and checks that the output names `tool`
/// (NVIDIA's tools print e.g. `nvdisasm: NVIDIA (R) CUDA disassembler`).
pub fn version(tool: Tool, path: &Path, timeout: Duration) -> Result<ToolVersion, ToolError> {
    let p = path.display().to_string();
    let mut limits = Limits::with_timeout(timeout);
    limits.max_stdout = 1 << 20;
    let out = process::run(Command::new(path).arg("--version"), &limits).map_err(|err| ToolError::Version { path: p.clone(), err })?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !text.contains(tool.exe()) {
        return Err(ToolError::NotTheTool {
            tool: tool.exe(),
            path: p,
            status: process::describe_status(&out.status),
            output: process::excerpt(&format!("{text}{}", String::from_utf8_lossy(&out.stderr))),
        });
    }
    Ok(parse_version(&text))
}

/// `Cuda compilation tools, release 13.5, V13.5.37` → line `release 13.5, V13.5.37`,
/// number `13.5.37`.
fn parse_version(text: &str) -> ToolVersion {
    let line = text
        .lines()
        .find_map(|l| l.find("release ").map(|i| l[i..].trim().to_string()))
        .unwrap_or_else(|| text.lines().last().unwrap_or("unknown").trim().to_string());
    let number = line
        .split([' ', ','])
        .find_map(|t| t.strip_prefix('V'))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string);
    ToolVersion { line, number }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn missing_tool_message_names_the_install_command() {
        let e = ToolError::Missing { tool: "nvdisasm", var: "NVDISASM", project: "x".into(), hint: INSTALL_HINT };
        let m = e.to_string();
        assert!(m.contains("ci/install-cuda-tools.sh") && m.contains("NVDISASM"), "{m}");
    }

    #[test]
    fn pinned_version_is_the_install_scripts() {
        let script = repo_root().join("ci/install-cuda-tools.sh");
        let text = std::fs::read_to_string(&script).unwrap();
        let line = text.lines().find_map(|l| l.strip_prefix("CUDA_TOOLS_VERSION=")).expect("CUDA_TOOLS_VERSION= line");
        assert_eq!(line.trim().trim_matches('"'), PINNED_VERSION);
    }

    #[test]
    fn versions_parse_and_warn_off_pin() {
        let v = parse_version("nvdisasm: NVIDIA (R) CUDA disassembler\nCuda compilation tools, release 13.5, V13.5.37\nBuild x\n");
        assert_eq!(v.line, "release 13.5, V13.5.37");
        assert_eq!(v.number.as_deref(), Some("13.5.37"));
        assert_eq!(v.pin_warning(Tool::Nvdisasm, Path::new("/x")), None);
        let old = parse_version("nvdisasm: x\nCuda compilation tools, release 12.4, V12.4.131\n");
        let w = old.pin_warning(Tool::Nvdisasm, Path::new("/x/nvdisasm")).unwrap();
        assert!(w.contains("12.4.131") && w.contains(PINNED_VERSION) && w.contains("/x/nvdisasm"), "{w}");
    }

    #[test]
    fn a_tool_that_is_not_the_tool_is_refused() {
        for fake in ["/bin/true", "/bin/false"] {
            let e = version(Tool::Nvdisasm, Path::new(fake), Duration::from_secs(10)).unwrap_err();
            assert!(matches!(e, ToolError::NotTheTool { .. }), "{e}");
            assert!(e.to_string().contains(fake) && e.to_string().contains("nvdisasm"), "{e}");
        }
    }

    #[test]
    fn version_probe_times_out() {
        let dir = std::env::temp_dir().join(format!("sass-harness-tools-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("nvdisasm");
        std::fs::write(&fake, "#!/bin/sh\nexec sleep 100000\n").unwrap();
        make_executable(&fake);
        let t = std::time::Instant::now();
        let e = version(Tool::Nvdisasm, &fake, Duration::from_millis(300)).unwrap_err();
        assert!(matches!(e, ToolError::Version { err: ProcessError::TimedOut { .. }, .. }), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn make_executable(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
