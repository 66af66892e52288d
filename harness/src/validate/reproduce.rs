//! Re-running every finding's word through a fresh nvdisasm batch: a report whose words do
//! not print `actual` again is not worth trusting, so the validator checks its own output.

use super::finding::{outcome_text, Finding, ILLEGAL_PREFIX};
use crate::oracle::nvdisasm::{Nvdisasm, NvdisasmError, Outcome};
use crate::spec::Arch;
use crate::word::Word;
use std::collections::BTreeMap;

/// A finding whose word printed something else on the re-run.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub index: usize,
    pub got: String,
}

/// Disassembles the findings' words again (per architecture, one batch of those it rejected
/// and one of the rest; `nv.jobs` batches at once) and returns those whose outcome is not
/// their `actual`; a malformed word is a mismatch too.
pub fn reproduce(nv: &Nvdisasm, findings: &[Finding]) -> Result<Vec<Mismatch>, NvdisasmError> {
    let mut by_arch: BTreeMap<Arch, Vec<usize>> = BTreeMap::new();
    for (i, f) in findings.iter().enumerate() {
        by_arch.entry(f.arch).or_default().push(i);
    }
    let mut out = vec![];
    // The words whose finding says nvdisasm rejects them go in a batch of their own: an
    // nvdisasm run with an illegal word runs twice (the first run only names them), the
    // others' runs then run once.
    let mut batches: Vec<(Arch, Vec<usize>, Vec<Word>)> = vec![];
    for (arch, idx) in by_arch {
        let (rejected, printed): (Vec<usize>, Vec<usize>) = idx.into_iter().partition(|&i| findings[i].actual.starts_with(ILLEGAL_PREFIX));
        for part in [printed, rejected] {
            let (mut ok, mut words) = (vec![], vec![]);
            for i in part {
                match findings[i].word() {
                    Some(w) => {
                        ok.push(i);
                        words.push(w);
                    }
                    None => out.push(Mismatch { index: i, got: "<not 32 hex digits>".into() }),
                }
            }
            batches.push((arch, ok, words));
        }
    }
    for ((_, ok, _), outs) in batches.iter().zip(disassemble_all(nv, &batches)?) {
        for (k, (&i, o)) in ok.iter().zip(outs).enumerate() {
            let got = outcome_text(&o);
            if got != findings[i].actual && !same_at_zero(&got, &findings[i].actual, 16 * k as u64) {
                out.push(Mismatch { index: i, got });
            }
        }
    }
    out.sort_by_key(|m| m.index);
    Ok(out)
}

/// Each batch's outcomes, `nv.jobs` batches at a time: each is a process start or two of
/// its own and this is a run's last step (one after another, a run of two architectures
/// waited on four starts in a row).
fn disassemble_all(nv: &Nvdisasm, batches: &[(Arch, Vec<usize>, Vec<Word>)]) -> Result<Vec<Vec<Outcome>>, NvdisasmError> {
    crate::oracle::process::in_parallel(nv.jobs, batches.len(), |i| nv.disassemble(&batches[i].0.nvdisasm_name(), &batches[i].2)).into_iter().collect()
}

/// Does `got`, printed at `addr`, read as `actual` once the immediates that are `addr` more
/// than `actual`'s are taken for branch targets (findings show targets as at address 0)?
fn same_at_zero(got: &str, actual: &str, addr: u64) -> bool {
    let (Ok(g), Ok(a)) = (crate::sass::parse_instruction(got), crate::sass::parse_instruction(actual)) else { return false };
    let imm = |o: &crate::sass::Operand| if let crate::sass::Body::Imm { value } = o.body { Some(value) } else { None };
    let targets: Vec<usize> = (0..g.operands.len().min(a.operands.len()))
        .filter(|&k| matches!((imm(&g.operands[k]), imm(&a.operands[k])), (Some(x), Some(y)) if x - i128::from(addr) == y))
        .collect();
    !targets.is_empty() && crate::codec::conventions::target_at_zero(got, &targets, g.operands.len(), addr) == actual
}
