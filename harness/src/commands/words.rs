//! The offline commands on words and text: `decode`, `asm` (and `asm --patch`), `disasm`,
//! `model`, and `parse`'s summary. None of them starts an NVIDIA tool.

use super::{open_input, spec_for, Result};
use crate::codec::{self, Codec};
use crate::spec::{self, Spec};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Prints each word's variant and text (arguments, then --file, stdin and files named as
/// arguments, streamed); an error when `arch` has no variant, a word matches none or a
/// line is no word (after printing every word).
pub fn decode(s: &Spec, arch: u32, file: Option<&Path>, words: &[String], controls: bool) -> Result {
    use crate::listing;
    let c = Codec::new(s);
    let a = spec::Arch(arch);
    if !c.variants().iter().any(|v| v.arch == a) {
        return Err(format!("the pages have no variant for SM{arch}").into());
    }
    // Built once: its compiled forms print each word straight into a buffer.
    let printer = codec::Printer::new(&c);
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
        match crate::word::Word::parse_hex(w) {
            Some(word) => listing::decode_one(&printer, controls, a, word, &mut out, &mut stats).map_err(io)?,
            // An argument that names a file is read as --file reads one.
            None if Path::new(w).is_file() => inputs.push(Path::new(w)),
            None => {
                stats.bad_lines += 1;
                report(listing::InputError {
                    file: "argument".into(),
                    line: i + 1,
                    message: format!("'{w}' is not a word of up to 32 hex digits, nor a file"),
                });
            }
        }
    }
    for p in inputs {
        let (name, input) = open_input(p)?;
        let st = listing::decode_lines(&printer, controls, a, &name, input, &mut out, &mut report).map_err(|e| format!("{name}: cannot read: {e}"))?;
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
        Err(problems.join("; ").into())
    }
}

/// Every listing error on stderr; the error that ends the command.
pub fn listing_errors(errors: Vec<crate::listing::InputError>) -> String {
    for e in &errors {
        eprintln!("error: {e}");
    }
    format!("{} error(s), listed above", errors.len())
}

/// One instruction (an argument) or a listing (--file, `-`, or an argument that names a
/// file, as with --patch) to words on stdout.
pub fn asm(sp: &[PathBuf], arch: u32, file: Option<&Path>, text: Option<&str>) -> Result {
    use crate::listing;
    let s = spec_for(sp, arch)?;
    let c = Codec::new(&s);
    let a = spec::Arch(arch);
    let path = match (file, text) {
        (Some(f), None) => f,
        (None, Some("-")) => Path::new("-"),
        (None, Some(t)) if Path::new(t).is_file() => Path::new(t),
        (None, Some(t)) => {
            // An argument without blanks may have been meant as a file.
            let no_file = if t.contains(char::is_whitespace) { String::new() } else { format!("'{t}' names no file; as an instruction: ") };
            // A leading `[B------:R-:W-:Y:S04]` gives the scheduling bits (else zero).
            let (schedule, t) = codec::Schedule::split_off(t).map_err(|e| format!("{no_file}{e}"))?;
            let controls = schedule.map_or(crate::word::Word::ZERO, |s| s.apply(crate::word::Word::ZERO));
            // As in listings: nvdisasm's alias modifiers (`IMAD.MOV.U32`) are read too.
            let inst = crate::sass::parse_instruction(t).map_err(|e| format!("{no_file}'{t}': {e}"))?;
            let asm = codec::asm::Assembler::new(&c);
            // A text nvdisasm prints alike for several words gives the first (as ptxas
            // writes it: `listing::assemble_one`), and says so.
            let found = listing::assemble_flex(&c, &asm, a, &inst, controls).or_else(|e| {
                if let codec::asm::AsmError::Ambiguous { words, keys, .. } = &e {
                    let all: Vec<String> = words.iter().zip(keys).map(|(w, k)| format!("{w} {k}")).collect();
                    eprintln!("note: {} words print as this text ({}); the first, as ptxas writes such texts", words.len(), all.join(", "));
                }
                listing::one_of(&c, a, e, controls)
            });
            let found = found.and_then(|f| codec::asm::reuse_as_written(&c, &inst, f));
            let (vi, w) = found.map_err(|e| format!("{no_file}{e}"))?;
            println!("{}  {}", w, c.variant(vi).key);
            return Ok(());
        }
        (Some(_), Some(_)) => return Err("give the listing with --file or the instruction as an argument, not both".into()),
        (None, None) => return Err("asm needs an instruction, --file LISTING or - (stdin)".into()),
    };
    let (name, input) = open_input(path)?;
    let l = listing::read_listing(&name, input).map_err(listing_errors)?;
    // A `/* 0x… */` comment gives the word's control bits; otherwise they are zero.
    let words = listing::assemble_listing(&c, a, &name, &l, &|it| it.hex.unwrap_or(crate::word::Word::ZERO)).map_err(listing_errors)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for w in words {
        writeln!(out, "{w}").map_err(|e| format!("cannot write: {e}"))?;
    }
    out.flush().map_err(|e| format!("cannot write: {e}"))?;
    Ok(())
}

/// `asm --patch FILE --out NEW LISTING`: FILE a cubin, or a fatbin, program or object
/// whose cubins the listing's parts patch in place (see [`crate::fatpatch`]).
pub fn asm_patch(sp: &[PathBuf], file: &Path, out: &Path, listing_file: Option<&Path>, text: Option<&str>) -> Result {
    use crate::{disasm, fatbin, fatpatch, listing};
    let path = match (listing_file, text) {
        (Some(f), None) => f,
        (None, Some(t)) => Path::new(t),
        _ => return Err("asm --patch needs one listing: a file (or --file) or - (stdin)".into()),
    };
    let name = file.display().to_string();
    let bytes = disasm::read_cubin(file).map_err(|e| e.to_string())?;
    let (lname, input) = open_input(path)?;
    let parts = listing::read_parts(&lname, input).map_err(listing_errors)?;
    // Each cubin with the spec of its own architecture.
    let mut patch_one = |cubin_name: &str, cubin: &[u8], l: &listing::Listing| {
        let arch = disasm::arch_of(cubin_name, cubin, None)?;
        let s = spec_for(sp, arch.0).map_err(|e| disasm::PatchError::Spec { cubin: cubin_name.to_string(), message: e.to_string() })?;
        disasm::patch(&Codec::new(&s), cubin_name, cubin, &lname, l)
    };
    let patched = match fatbin::contents(&bytes) {
        Ok(fatbin::Contents::Fat(entries)) => {
            let patched = fatpatch::patch_fat(&name, &bytes, &entries, &lname, &parts, &mut patch_one);
            patched.map(|(b, done)| (b, done.into_iter().map(|(at, st)| (Some(at), st)).collect()))
        }
        Err(e @ fatbin::FatbinError::Malformed { .. }) => return Err(format!("{name}: {e}").into()),
        // A cubin, and whatever is neither: the cubin reader says what is wrong.
        _ => {
            if let Some(second) = parts.get(1) {
                let line = second.cubin.map_or(0, |(_, l)| l);
                return Err(format!("{lname}:{line}: a second cubin's listing, but {name} is one cubin").into());
            }
            let empty = listing::Listing::default();
            patch_one(&name, &bytes, parts.first().map_or(&empty, |p| &p.listing)).map(|(b, st)| (b, vec![(None, st)]))
        }
    };
    let (patched, done) = match patched {
        Err(disasm::PatchError::Listing(errors)) => return Err(listing_errors(errors).into()),
        r => r.map_err(|e| e.to_string())?,
    };
    disasm::write_atomically(out, &patched).map_err(|e| e.to_string())?;
    let (read, changed) = done.iter().fold((0, 0), |(r, c), (_, st)| (r + st.instructions, c + st.changed));
    // A fatbin's: how many words changed in each cubin.
    let each: String = done.iter().filter_map(|(at, st)| at.map(|at| format!("; SM{} cubin at byte {:#x}: {}", at.arch, at.offset, st.changed))).collect();
    eprintln!("{}: {read} instruction(s) read, {changed} word(s) changed{each}", out.display());
    Ok(())
}

/// `disasm FILE`: the listing on stdout; words no variant decodes make it an error. FILE
/// is a cubin, or a fatbin or host program or object whose cubins are listed in turn.
pub fn disasm(sp: &[PathBuf], file: &Path, arch: Option<u32>, style: crate::disasm::Style) -> Result {
    use crate::{disasm, fatbin};
    let name = file.display().to_string();
    let bytes = disasm::read_cubin(file).map_err(|e| e.to_string())?;
    let entries = match fatbin::contents(&bytes) {
        Ok(fatbin::Contents::Fat(entries)) => entries,
        Err(e @ fatbin::FatbinError::Malformed { .. }) => return Err(format!("{name}: {e}").into()),
        // A cubin, and whatever is neither: the cubin reader says what is wrong.
        _ => {
            let stats = disasm_cubin(sp, &name, &bytes, arch, style, &mut std::io::stdout().lock())?;
            return undecoded(&name, stats);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut sum = FatSummary::default();
    for e in &entries {
        match &e.payload {
            fatbin::Payload::Cubin(b) if arch.is_none_or(|a| a == e.arch) => {
                let at = crate::listing::CubinAt { arch: e.arch, offset: e.offset }.name(&name);
                writeln!(out, "// {at}").map_err(|e| format!("cannot write: {e}"))?;
                // One cubin that cannot be listed (an architecture the spec lacks) does not
                // keep the others from being listed; it is the error at the end.
                match disasm_cubin(sp, &at, b, None, style, &mut out) {
                    Ok(st) => {
                        sum.listed.push(e.arch);
                        (sum.stats.words, sum.stats.undecoded) = (sum.stats.words + st.words, sum.stats.undecoded + st.undecoded);
                    }
                    Err(why) => sum.failed.push(why.to_string()),
                }
                writeln!(out).map_err(|e| format!("cannot write: {e}"))?;
            }
            fatbin::Payload::Cubin(_) => sum.other_arch.push(e.arch),
            fatbin::Payload::Ptx => sum.ptx += 1,
        }
    }
    sum.finish(&name, arch)
}

/// What a fatbin's listing covered.
#[derive(Default)]
struct FatSummary {
    /// The architectures of the cubins listed, and of those left out for `--arch`.
    listed: Vec<u32>,
    other_arch: Vec<u32>,
    /// Why each cubin that could not be listed was not.
    failed: Vec<String>,
    ptx: usize,
    stats: crate::disasm::DisasmStats,
}

impl FatSummary {
    /// The line on stderr, then the error, if any: cubins not listed, none of `arch`, or
    /// undecoded words.
    fn finish(self, name: &str, arch: Option<u32>) -> Result {
        let sms = |v: &[u32]| v.iter().map(|a| format!("SM{a}")).collect::<Vec<_>>().join(", ");
        let mut line = match self.listed.len() {
            0 => format!("{name}: no cubin listed"),
            n => format!("{name}: {n} cubin(s) listed ({})", sms(&self.listed)),
        };
        if !self.other_arch.is_empty() {
            line += &format!("; {} of other architectures ({})", self.other_arch.len(), sms(&self.other_arch));
        }
        if self.ptx > 0 {
            line += &format!("; {} PTX entr{} (no machine code)", self.ptx, if self.ptx == 1 { "y" } else { "ies" });
        }
        eprintln!("{line}");
        if !self.failed.is_empty() {
            return Err(format!("{} cubin(s) not listed: {}", self.failed.len(), self.failed.join("; ")).into());
        }
        if let (Some(a), true) = (arch, self.listed.is_empty()) {
            return Err(format!("{name}: no SM{a} cubin in it").into());
        }
        undecoded(name, self.stats)
    }
}

/// The error for words that decode as nothing, if any.
fn undecoded(name: &str, stats: crate::disasm::DisasmStats) -> Result {
    if stats.undecoded > 0 {
        return Err(format!("{name}: {} of {} word(s) decode as nothing (printed as UNDECODED)", stats.undecoded, stats.words).into());
    }
    Ok(())
}

/// One cubin's listing into `out` (`name` in errors).
fn disasm_cubin(
    sp: &[PathBuf],
    name: &str,
    bytes: &[u8],
    arch: Option<u32>,
    style: crate::disasm::Style,
    out: &mut impl std::io::Write,
) -> Result<crate::disasm::DisasmStats> {
    use crate::disasm;
    let a = disasm::arch_of(name, bytes, arch).map_err(|e| e.to_string())?;
    let sections = disasm::sections_of(name, bytes).map_err(|e| e.to_string())?;
    let s = spec_for(sp, a.0)?;
    let c = Codec::new(&s);
    let mut out = std::io::BufWriter::new(out);
    let infos = disasm::infos_of(name, bytes, &sections).map_err(|e| e.to_string())?;
    let stats = disasm::disassemble(&c, a, &sections, &infos, style, &mut out).map_err(|e| format!("cannot write: {e}"))?;
    out.flush().map_err(|e| format!("cannot write: {e}"))?;
    Ok(stats)
}

pub fn model(s: &Spec, arch: spec::Arch, batch: Option<&Path>, args: &[String]) -> Result {
    use crate::semantics::batch;
    let c = Codec::new(s);
    if let Some(file) = batch {
        let stdout = std::io::stdout();
        let errors = if file == Path::new("-") {
            batch::model_batch(&c, arch, std::io::stdin().lock(), stdout.lock())?
        } else {
            let f = std::fs::File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
            batch::model_batch(&c, arch, std::io::BufReader::new(f), stdout.lock())?
        };
        return if errors == 0 { Ok(()) } else { Err(format!("{errors} batch line(s) had errors (see their \"error\")").into()) };
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

pub fn print_summary(s: &Spec) {
    for p in &s.pages {
        println!("{} ({}) — {} — {} variants", p.instruction, p.arch, p.file, p.variants.len());
        for v in &p.variants {
            println!("  {}  [{}]  distilled: {}", v.key, v.form, v.distilled);
            for f in &v.fields {
                println!("    {:<12} {:>3} bit(s)  {}", f.name, f.width(), crate::word::format_ranges(&f.bits));
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
