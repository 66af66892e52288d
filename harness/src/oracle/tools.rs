//! Finding NVIDIA's command-line tools: an explicit variable, then CUDA_HOME, then the
//! project's own install (.tools/cuda, from ci/install-cuda-tools.sh), then PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

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
        return if is_exe(&p) {
            Ok(p)
        } else {
            Err(ToolError::BadVariable { var: tool.env_var(), path: p.display().to_string() })
        };
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

/// The tool's version line, e.g. `release 13.5, V13.5.37`.
pub fn version(path: &Path) -> Result<String, ToolError> {
    let out = Command::new(path)
        .arg("--version")
        .output()
        .map_err(|e| ToolError::Run { path: path.display().to_string(), err: e.to_string() })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.find("release ").map(|i| l[i..].trim().to_string()))
        .unwrap_or_else(|| text.lines().last().unwrap_or("unknown").trim().to_string());
    Ok(line)
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
}
