//! Text inputs of the offline tools: words one per line (`decode`) and SASS listings
//! (`asm`, `asm --patch`), read line by line in bounded memory.
//!
//! A line is at most [`MAX_LINE_BYTES`]; a longer one is an error naming it, and only that
//! much of it is ever held (a 10 MB single-line file costs 64 kB). Errors name the input
//! and the line, `words.txt:12: …`, and reading goes on so that every error is reported,
//! up to [`MAX_ERRORS`] (a binary file given as text would otherwise print millions).

use crate::codec::asm::{AsmError, Assembler};
use crate::codec::{self, Codec, Schedule};
use crate::sass::{self, Instruction};
use crate::spec::Arch;
use crate::word::Word;
use std::collections::HashMap;
use std::io::{self, BufRead, Write};

/// The longest line read: far above any instruction (nvdisasm's longest are ~200 bytes).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Errors reported before giving up on an input.
pub const MAX_ERRORS: usize = 100;

/// A problem at one line of a named input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct InputError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// Reads lines of at most [`MAX_LINE_BYTES`], without holding more than that.
pub struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    line: usize,
}

/// One line: its number and its text, or why it is not one.
pub type LineResult<'a> = (usize, Result<&'a str, String>);

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R) -> Lines<R> {
        Lines { reader, buf: Vec::with_capacity(256), line: 0 }
    }

    /// The next line without its end (`\n` or `\r\n`), or `None` at the end of input.
    pub fn next_line(&mut self) -> io::Result<Option<LineResult<'_>>> {
        self.buf.clear();
        let (mut total, mut any) = (0usize, false);
        loop {
            let avail = self.reader.fill_buf()?;
            if avail.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match avail.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            // Keep at most one byte past the limit: enough to know the line is too long.
            let room = (MAX_LINE_BYTES + 1).saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&avail[..take.min(room)]);
            total = total.saturating_add(take);
            self.reader.consume(if done { take + 1 } else { take });
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.line += 1;
        if total > MAX_LINE_BYTES {
            return Ok(Some((self.line, Err(format!("line of {total} bytes; lines may have at most {MAX_LINE_BYTES}")))));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.buf.contains(&0) {
            return Ok(Some((self.line, Err("binary data (a NUL byte), not text".into()))));
        }
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((self.line, Ok(s)))),
            Err(e) => Ok(Some((self.line, Err(format!("not UTF-8 text (byte {})", e.valid_up_to() + 1))))),
        }
    }
}

/// A line's text without a trailing `// comment`, trimmed.
fn strip_comment(s: &str) -> &str {
    s.find("//").map_or(s, |i| &s[..i]).trim()
}

/// Counts of a decode run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeStats {
    pub words: usize,
    /// Words no variant decodes.
    pub unmatched: usize,
    /// Lines that are no word.
    pub bad_lines: usize,
}

/// Decodes one word per line of `input` (named `name` in errors), printing
/// `WORD  KEY  TEXT` (or `WORD  error: …`) to `out` as it goes, each text led by its
/// word's scheduling bits where `controls` ([`decode_one`]); blank lines and `//` comments
/// are skipped. Lines that are no word go to `on_error` and the run goes on.
pub fn decode_lines(
    printer: &codec::Printer,
    controls: bool,
    arch: Arch,
    name: &str,
    input: impl BufRead,
    out: &mut impl Write,
    on_error: &mut dyn FnMut(InputError),
) -> io::Result<DecodeStats> {
    let mut lines = Lines::new(input);
    let mut stats = DecodeStats::default();
    while let Some((line, text)) = lines.next_line()? {
        let word = text.and_then(|t| {
            let t = strip_comment(t);
            if t.is_empty() {
                return Ok(None);
            }
            Word::parse_hex(t).map(Some).ok_or_else(|| format!("'{}' is not a word of up to 32 hex digits", clip(t)))
        });
        match word {
            Ok(None) => {}
            Ok(Some(w)) => decode_one(printer, controls, arch, w, out, &mut stats)?,
            Err(message) => {
                stats.bad_lines += 1;
                on_error(InputError { file: name.to_string(), line, message });
                if stats.bad_lines >= MAX_ERRORS {
                    on_error(InputError { file: name.to_string(), line, message: format!("{MAX_ERRORS} bad lines; stopping") });
                    break;
                }
            }
        }
    }
    Ok(stats)
}

/// Decodes and prints one word (its text through `printer`'s compiled forms), the text led
/// by the word's scheduling bits where `controls` (`[----:B------:R-:W-:Y:S04] FFMA …`,
/// what `asm` reads).
pub fn decode_one(printer: &codec::Printer, controls: bool, arch: Arch, w: Word, out: &mut impl Write, stats: &mut DecodeStats) -> io::Result<()> {
    stats.words += 1;
    let codec = printer.codec();
    match codec.decode(arch, w) {
        Ok((vi, vals)) => {
            let mut text = if controls { format!("{} ", Schedule::of(w)) } else { String::new() };
            printer.print_word_into(vi, &vals, w, &mut text);
            writeln!(out, "{}  {}  {}", w, codec.variant(vi).key, text)
        }
        Err(e) => {
            stats.unmatched += 1;
            writeln!(out, "{w}  error: {e}")
        }
    }
}

/// At most 60 characters of `s`, for messages.
fn clip(s: &str) -> String {
    if s.chars().count() <= 60 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(60).collect::<String>())
    }
}

// ---------------------------------------------------------------------------------------
// Listings
// ---------------------------------------------------------------------------------------

/// One instruction of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub line: usize,
    /// The `.section` it follows (`.text.<function>`), if any.
    pub section: Option<String>,
    /// Its address within the section: the `/*0010*/` prefix, else the previous one's + 16.
    pub addr: u64,
    /// The instruction text, without address, comments and annotations.
    pub text: String,
    /// The word in nvdisasm's `-hex` comments (`/* 0x<low> */`, next line `/* 0x<high> */`).
    pub hex: Option<Word>,
    /// Its scheduling bits where the line starts with their annotation
    /// (`[----:B------:R-:W-:Y:S04]`, before or after the address): they override the
    /// control bits the word would take from elsewhere.
    pub schedule: Option<Schedule>,
}

/// A listing read: its instructions and the labels it defines (name → section, address).
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub items: Vec<Item>,
    pub labels: HashMap<String, (Option<String>, u64)>,
}

/// Where a cubin lies in a fatbin, or in a program or object that embeds one: what
/// `disasm` names each of a fatbin's cubins by, on a `//` line before its listing
/// (`// app.o (SM90 cubin at byte 0x1a50)`, [`CubinAt::name`]), so that `asm --patch`
/// takes that listing back into the same cubin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubinAt {
    /// The architecture its fatbin entry names (`90`).
    pub arch: u32,
    /// Where its entry's header starts in the file.
    pub offset: usize,
}

impl CubinAt {
    /// What names it, for a cubin of `file` (`app.o (SM90 cubin at byte 0x1a50)`):
    /// `disasm` writes it on a `//` line, its heading.
    pub fn name(&self, file: &str) -> String {
        format!("{file} (SM{} cubin at byte {:#x})", self.arch, self.offset)
    }

    /// The cubin a `//` comment (its text after `//`) names, if it is such a heading.
    pub fn of_heading(comment: &str) -> Option<CubinAt> {
        let inner = comment.trim_end().strip_suffix(')')?;
        let (_, tail) = inner.rsplit_once(" (SM")?;
        let (arch, offset) = tail.split_once(" cubin at byte 0x")?;
        Some(CubinAt { arch: arch.parse().ok()?, offset: usize::from_str_radix(offset, 16).ok()? })
    }
}

/// One cubin's part of a listing: the instructions after a line that names a cubin (or
/// before any), read as a listing of their own (labels are per cubin: each kernel's
/// listing numbers its own).
#[derive(Clone, Debug)]
pub struct Part {
    /// The cubin its heading names, and that line.
    pub cubin: Option<(CubinAt, usize)>,
    pub listing: Listing,
}

/// The largest listing held: items cost about 100 bytes each, so some 50 M instructions.
pub const MAX_LISTING_BYTES: u64 = 4 << 30;

/// Reads a listing in nvdisasm's or `disasm`'s format: one instruction per line, optional
/// `/*0010*/` address prefixes, trailing `/* 0x… */` hex comments, `//` comments,
/// `.section` lines (which name the code section the following instructions patch), label
/// lines (`.L_x_0:`), other directives skipped. Every bad line is an error.
/// A listing of several cubins (what `disasm` prints of a fatbin) is an error here, at its
/// second heading: [`read_parts`] reads it.
pub fn read_listing(name: &str, input: impl BufRead) -> Result<Listing, Vec<InputError>> {
    let mut parts = read_parts(name, input)?;
    if let Some(second) = parts.get(1) {
        let line = second.cubin.map_or(0, |(_, l)| l);
        let message =
            "a second cubin's listing (as `disasm` lists a fatbin): `asm --patch FILE` takes it with the file it came from; otherwise keep one cubin's lines"
                .into();
        return Err(vec![InputError { file: name.to_string(), line, message }]);
    }
    Ok(parts.pop().map(|p| p.listing).unwrap_or_default())
}

/// Reads a listing as [`read_listing`] does, in parts: a new one at each line that names
/// a cubin (`// ` and [`CubinAt::name`]); instructions before any such line are a part
/// without one. An empty listing has no part.
pub fn read_parts(name: &str, input: impl BufRead) -> Result<Vec<Part>, Vec<InputError>> {
    let mut r = Reader {
        name,
        listing: Listing::default(),
        cubin: None,
        parts: vec![],
        section: None,
        next: 0,
        pending_label: vec![],
        errors: vec![],
        bytes: 0,
        last_hex_item: None,
    };
    let mut lines = Lines::new(input);
    loop {
        let at = lines.line + 1;
        let next = lines.next_line().map_err(|e| vec![InputError { file: name.to_string(), line: at, message: format!("cannot read: {e}") }])?;
        let Some((line, text)) = next else { break };
        match text {
            Ok(t) => r.line(line, t),
            Err(message) => r.error(line, message),
        }
        if r.errors.len() >= MAX_ERRORS {
            r.errors.push(InputError { file: name.to_string(), line, message: format!("{MAX_ERRORS} errors; stopping") });
            break;
        }
    }
    r.finish()
}

struct Reader<'a> {
    name: &'a str,
    /// The part being read: its listing and heading; the parts before it.
    listing: Listing,
    cubin: Option<(CubinAt, usize)>,
    parts: Vec<Part>,
    section: Option<String>,
    next: u64,
    pending_label: Vec<String>,
    errors: Vec<InputError>,
    bytes: u64,
    /// The item whose low half a `/* 0x… */` line completes.
    last_hex_item: Option<usize>,
}

impl Reader<'_> {
    fn error(&mut self, line: usize, message: String) {
        self.errors.push(InputError { file: self.name.to_string(), line, message });
    }

    fn line(&mut self, line: usize, raw: &str) {
        let t = raw.trim();
        let hex_only = parse_hex_comment(t);
        if let Some(high) = hex_only {
            // The second line of a `-hex` pair: the word's high half.
            if let Some(i) = self.last_hex_item.take() {
                let it = &mut self.listing.items[i];
                it.hex = it.hex.map(|low| Word((high as u128) << 64 | low.0));
            }
            return;
        }
        self.last_hex_item = None;
        if let Some(at) = t.strip_prefix("//").and_then(CubinAt::of_heading) {
            self.end_part();
            self.cubin = Some((at, line));
            return;
        }
        if t.is_empty() || t.starts_with("//") {
            return;
        }
        if let Some(rest) = t.strip_prefix(".section") {
            let name = rest.trim().split(',').next().unwrap_or("").trim().to_string();
            if name.is_empty() {
                return self.error(line, "'.section' without a name".into());
            }
            self.section = Some(name);
            self.next = 0;
            return;
        }
        if let Some(label) = t.strip_suffix(':').filter(|l| !l.is_empty() && !l.contains(char::is_whitespace)) {
            self.pending_label.push(label.to_string());
            return;
        }
        if t.starts_with('.') {
            return; // another directive: layout, not instructions
        }
        self.instruction(line, t);
    }

    fn instruction(&mut self, line: usize, t: &str) {
        let (addr, schedule, rest) = match split_head(t) {
            Ok(x) => x,
            Err(m) => return self.error(line, m),
        };
        let addr = addr.unwrap_or(self.next);
        let (body, low) = split_hex_comment(rest);
        let body = strip_annotation(strip_comment(body));
        let body = body.trim();
        if body.is_empty() {
            return self.error(line, "an address with no instruction".into());
        }
        for l in self.pending_label.drain(..) {
            self.listing.labels.insert(l, (self.section.clone(), addr));
        }
        self.bytes += 100 + body.len() as u64;
        if self.bytes > MAX_LISTING_BYTES {
            return self.error(line, format!("listing larger than {MAX_LISTING_BYTES} bytes held; split it"));
        }
        self.next = addr.saturating_add(16);
        if low.is_some() {
            self.last_hex_item = Some(self.listing.items.len());
        }
        let hex = low.map(|l| Word(l as u128));
        self.listing.items.push(Item { line, section: self.section.clone(), addr, text: body.to_string(), hex, schedule });
    }

    /// Ends the part being read (kept if it has a heading or anything in it); the next
    /// starts with no section.
    fn end_part(&mut self) {
        // A label after the last instruction marks the section's end (nvdisasm's `.L_x_10`).
        for l in self.pending_label.drain(..) {
            self.listing.labels.insert(l, (self.section.clone(), self.next));
        }
        let listing = std::mem::take(&mut self.listing);
        if self.cubin.is_some() || !listing.items.is_empty() || !listing.labels.is_empty() {
            self.parts.push(Part { cubin: self.cubin.take(), listing });
        }
        (self.section, self.next) = (None, 0);
    }

    fn finish(mut self) -> Result<Vec<Part>, Vec<InputError>> {
        self.end_part();
        if self.errors.is_empty() {
            Ok(self.parts)
        } else {
            Err(self.errors)
        }
    }
}

/// A line's address and scheduling annotation, in either order (`[…] /*0010*/ rest`, as
/// `disasm --controls` and CuAssembler print them, or `/*0010*/ […] rest`), each if there,
/// and the rest.
fn split_head(t: &str) -> Result<(Option<u64>, Option<Schedule>, &str), String> {
    let (first, rest) = Schedule::split_off(t).map_err(|e| e.to_string())?;
    let (addr, rest) = split_address(rest.trim_start())?;
    match first {
        Some(s) => Ok((addr, Some(s), rest)),
        None => {
            let (second, rest) = Schedule::split_off(rest).map_err(|e| e.to_string())?;
            Ok((addr, second, rest))
        }
    }
}

/// `/*0010*/ rest` → (Some(0x10), rest); text without a prefix → (None, text).
fn split_address(t: &str) -> Result<(Option<u64>, &str), String> {
    let Some(rest) = t.strip_prefix("/*") else { return Ok((None, t)) };
    let Some(end) = rest.find("*/") else { return Err("unclosed '/*'".into()) };
    let a = rest[..end].trim();
    let addr = u64::from_str_radix(a, 16).map_err(|_| format!("'/*{}*/' is no address", clip(a)))?;
    Ok((Some(addr), &rest[end + 2..]))
}

/// A line that is only `/* 0x<hex> */`: the hex value.
fn parse_hex_comment(t: &str) -> Option<u64> {
    let inner = t.strip_prefix("/*")?.strip_suffix("*/")?.trim();
    u64::from_str_radix(inner.strip_prefix("0x")?, 16).ok()
}

/// `TEXT /* 0x<hex> */` → (TEXT, Some(hex)).
fn split_hex_comment(t: &str) -> (&str, Option<u64>) {
    let trimmed = t.trim_end();
    if let Some(i) = trimmed.rfind("/* 0x") {
        if let Some(v) = parse_hex_comment(&trimmed[i..]) {
            return (&trimmed[..i], Some(v));
        }
    }
    (t, None)
}

/// Removes nvdisasm's `(*"BRANCH_TARGETS …"*)` annotation, keeping the terminator.
fn strip_annotation(t: &str) -> String {
    match (t.find("(*"), t.rfind("*)")) {
        (Some(a), Some(b)) if b > a => format!("{}{}", t[..a].trim_end(), &t[b + 2..]),
        _ => t.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Assembling listings
// ---------------------------------------------------------------------------------------

/// A raw word in a listing: `UNDECODED 0x<32 hex digits>`, as `disasm` prints words no
/// variant decodes, so that its listings assemble back.
pub const RAW_MNEMONIC: &str = "UNDECODED";

/// Assembles a listing's instructions for `arch`, each word's control bits taken from
/// `controls(item)` where the text does not say them; every error is collected.
pub fn assemble_listing(codec: &Codec, arch: Arch, name: &str, listing: &Listing, controls: &dyn Fn(&Item) -> Word) -> Result<Vec<Word>, Vec<InputError>> {
    let (words, errors): (Vec<_>, Vec<_>) = assemble_items(codec, arch, name, listing, controls).into_iter().partition(Result::is_ok);
    match errors.is_empty() {
        true => Ok(words.into_iter().flatten().collect()),
        false => Err(errors.into_iter().filter_map(Result::err).collect()),
    }
}

/// [`assemble_listing`], each item's word or error.
pub fn assemble_items(codec: &Codec, arch: Arch, name: &str, listing: &Listing, controls: &dyn Fn(&Item) -> Word) -> Vec<Result<Word, InputError>> {
    let asm = Assembler::new(codec);
    let error = |it: &Item, message| InputError { file: name.to_string(), line: it.line, message };
    listing.items.iter().map(|it| assemble_item(codec, &asm, arch, listing, it, controls(it)).map_err(|m| error(it, m))).collect()
}

/// One listing line's word; its annotation, if any, gives the scheduling bits of `controls`.
fn assemble_item(codec: &Codec, asm: &Assembler, arch: Arch, listing: &Listing, it: &Item, controls: Word) -> Result<Word, String> {
    let controls = it.schedule.map_or(controls, |s| s.apply(controls));
    if let Some(w) = raw_word(&it.text)? {
        return Ok(it.schedule.map_or(w, |s| s.apply(w)));
    }
    if let Some(op) = relocated_operand(&it.text) {
        let why = "the linker writes its value, so no word reads as it (asm --patch keeps the word of such a line while it reads as disasm lists it)";
        return Err(format!("'{}': '{}' is a relocated operand: {why}", clip(&it.text), clip(op)));
    }
    let (text, had_label) = resolve_labels(&it.text, it, listing)?;
    let inst = sass::parse_instruction(&text).map_err(|e| format!("'{}': {e}", clip(&it.text)))?;
    let (vi, w) = assemble_one(codec, asm, arch, &inst, controls).map_err(|e| asm_message(&e, &it.text))?;
    let v = codec.variant(vi);
    // nvdisasm prints branch targets as absolute addresses; the codec reads them as if the
    // word sat at address 0.
    let targets = v.target_operands();
    if had_label || targets.is_empty() || it.addr == 0 || codec::conventions::target_is_absolute(&text) {
        return Ok(w);
    }
    let at_zero = codec::conventions::target_at_zero(&text, &targets, v.operands.len(), it.addr);
    let inst = sass::parse_instruction(&at_zero).map_err(|e| format!("'{}': {e}", clip(&it.text)))?;
    assemble_one(codec, asm, arch, &inst, controls).map(|(_, w)| w).map_err(|e| asm_message(&e, &it.text))
}

/// [`assemble_flex`], where `controls` (the original word when patching, or a listing's
/// `/* 0x… */` word) is kept whole where it prints as the text (an unedited line: the bits
/// its text does not say, such as a NaN's payload or bits nvdisasm ignores, stay the
/// cubin's), and a text that reads as several words (nvdisasm prints each of them as the
/// text) gives one: `controls` where it is one of them, else the first in the assembler's
/// order (codec order; operands nvdisasm leaves out taken for the later ones first), which
/// is what ptxas writes in every such line of the corpus's cubins (IADD3's carry-out
/// predicates, P before PT; BRA.U.ANY's first form): `asm` of a `disasm` listing gives
/// back the cubin's words, from their control bits alone too
/// (`offline::asm_of_every_corpus_listing_gives_back_its_words`).
pub fn assemble_one(codec: &Codec, asm: &Assembler, arch: Arch, inst: &Instruction, controls: Word) -> Result<(usize, Word), AsmError> {
    if let Some(kept) = printed_as(codec, arch, controls, inst) {
        return Ok(kept);
    }
    let found = assemble_flex(codec, asm, arch, inst, controls).or_else(|e| one_of(codec, arch, e, controls))?;
    // The text's `.reuse` marks decide the reuse bits where `controls`' do not print them.
    codec::asm::reuse_as_written(codec, inst, found)
}

/// `w` with its variant, where it decodes as a form that prints `inst` with the stored
/// conventions, byte for byte (as texts: a NaN operand is equal to no other).
fn printed_as(codec: &Codec, arch: Arch, w: Word, inst: &Instruction) -> Option<(usize, Word)> {
    let (vi, vals) = codec.decode(arch, w).ok()?;
    (codec::print_word(codec.variant(vi), &vals, w).to_string() == inst.to_string()).then_some((vi, w))
}

/// [`assemble_one`]'s choice, where `e` (an error of [`assemble_flex`]) is an ambiguity;
/// any other error as it is.
pub fn one_of(codec: &Codec, arch: Arch, e: AsmError, controls: Word) -> Result<(usize, Word), AsmError> {
    let AsmError::Ambiguous { words, keys, .. } = &e else { return Err(e) };
    let k = words.iter().position(|&x| x == controls).unwrap_or(0);
    codec.index_of(&keys[k], Some(arch)).map(|vi| (vi, words[k])).ok_or(e)
}

fn asm_message(e: &AsmError, text: &str) -> String {
    format!("'{}': {e}", clip(text))
}

/// `UNDECODED 0x…`: the word itself.
fn raw_word(text: &str) -> Result<Option<Word>, String> {
    let Some(rest) = text.strip_prefix(RAW_MNEMONIC) else { return Ok(None) };
    let hex = rest.trim().trim_end_matches(';').trim();
    Word::parse_hex(hex).map(Some).ok_or_else(|| format!("'{RAW_MNEMONIC}' needs one word of up to 32 hex digits, not '{}'", clip(hex)))
}

/// The relocated operand of a relocatable cubin's listing line (`32@lo(garr)`,
/// `` `((ctab + 0x8))``, `` `(fun@unified(f))``: see [`crate::reloc`]), if it has one. A
/// symbol alone, `` `(ext_fn)``, reads as a label (a listing may define it).
fn relocated_operand(text: &str) -> Option<&str> {
    let at = ["32@lo(", "32@hi(", "`((", "@srel", "fun@"].iter().filter_map(|m| text.find(m)).min()?;
    let start = text[..at].rfind([' ', ',']).map_or(0, |i| i + 1);
    let end = text[at..].find([',', ';']).map_or(text.len(), |i| at + i);
    Some(text[start..end].trim())
}

/// Replaces each `` `(LABEL)`` by the label's address relative to the item (the codec's
/// at-address-zero target); whether there was one.
fn resolve_labels(text: &str, it: &Item, listing: &Listing) -> Result<(String, bool), String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut any = false;
    while let Some(i) = rest.find("`(") {
        let Some(j) = rest[i..].find(')') else { return Err(format!("unclosed label reference in '{}'", clip(text))) };
        let name = &rest[i + 2..i + j];
        let undefined = || {
            format!("label '{}' is not defined in the listing (or, in a relocatable cubin's, is a relocation's symbol, whose value the linker writes: asm --patch keeps the word of such a line while it reads as disasm lists it)", clip(name))
        };
        let (section, addr) = listing.labels.get(name).ok_or_else(undefined)?;
        if *section != it.section {
            return Err(format!("label '{name}' lies in another section"));
        }
        out.push_str(&rest[..i]);
        out.push_str(&sass::hex_signed(i128::from(*addr) - i128::from(it.addr)));
        rest = &rest[i + j + 1..];
        any = true;
    }
    out.push_str(rest);
    Ok((out, any))
}

/// Assembles `inst`; when it does not assemble as written, tries it without each alias
/// modifier nvdisasm adds (`IMAD.MOV.U32` is the page's `IMAD.U32`), as the stored
/// conventions of the mnemonic's forms say.
pub fn assemble_flex(codec: &Codec, asm: &Assembler, arch: Arch, inst: &Instruction, controls: Word) -> Result<(usize, Word), AsmError> {
    let first = match asm.assemble_inst(arch, inst, controls) {
        Ok(r) => return Ok(r),
        Err(e) => e,
    };
    let mut tried: Vec<Instruction> = vec![];
    for v in codec.variants().iter().filter(|v| v.arch == arch && v.mnemonic == inst.mnemonic) {
        let Some(c) = &v.conventions else { continue };
        let alt = c.unalias(inst);
        if alt == *inst || tried.contains(&alt) {
            continue;
        }
        if let Ok(r) = asm.assemble_inst(arch, &alt, controls) {
            return Ok(r);
        }
        tried.push(alt);
    }
    Err(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line's own word is kept where it prints as the line (an FSEL `-QNAN` of ptxas's,
    /// whose payload the text does not say: `corpus/ptx-holdout2`'s fastmath, SM90); with
    /// its control bits alone, or once the text is edited, the text is assembled (the
    /// canonical NaN).
    #[test]
    fn an_unedited_lines_word_is_kept_whole() {
        let s = crate::spec::builtin::load_builtin(Arch(90)).expect("the built-in spec");
        let c = Codec::new(&s);
        let a = Assembler::new(&c);
        let w = Word::parse_hex("000fe20001000000fff0000007071808").unwrap();
        let text = crate::sass::parse_instruction("@P1 FSEL R7, R7, -QNAN , P2 ;").unwrap();
        let (vi, _) = c.decode(Arch(90), w).unwrap();
        assert_eq!(assemble_one(&c, &a, Arch(90), &text, w), Ok((vi, w)));
        let controls = Word(w.0 & !((1u128 << 105) - 1));
        let (_, canonical) = assemble_one(&c, &a, Arch(90), &text, controls).unwrap();
        assert_eq!(canonical.0 ^ w.0, 0b11 << 52, "{canonical}");
        let edited = crate::sass::parse_instruction("@P1 FSEL R7, R8, -QNAN , P2 ;").unwrap();
        let (_, moved) = assemble_one(&c, &a, Arch(90), &edited, w).unwrap();
        assert_eq!(moved.0 ^ canonical.0, 0xf << 24, "{moved}");
    }

    /// A relocatable cubin's relocated operands, as `disasm` lists them, are named in the
    /// error; a plain label reference or a `32@`-free line is not one.
    #[test]
    fn relocated_operands_are_told_apart() {
        let cases = [
            ("UMOV UR4, 32@lo(garr) ;", Some("32@lo(garr)")),
            ("MOV R21, 32@hi((kern2 + .L_x_0@srel)) ;", Some("32@hi((kern2 + .L_x_0@srel))")),
            ("LDC R6, c[R0+`((branchy.const_opt.0.12 + -0x8000))] ;", Some("c[R0+`((branchy.const_opt.0.12 + -0x8000))]")),
            ("UMOV UR5, 32@hi(fun@unified(local_fn)) ;", Some("32@hi(fun@unified(local_fn))")),
            ("BRA `(.L_x_3) ;", None),
            ("CALL.ABS.NOINC `(ext_fn) ;", None),
            ("IADD3 R4, R4, 0x7, RZ ;", None),
        ];
        for (text, op) in cases {
            assert_eq!(relocated_operand(text), op, "{text}");
        }
    }

    fn lines_of(bytes: &[u8]) -> Vec<(usize, Result<String, String>)> {
        let mut l = Lines::new(bytes);
        let mut out = vec![];
        while let Some((n, t)) = l.next_line().unwrap() {
            out.push((n, t.map(str::to_string)));
        }
        out
    }

    #[test]
    fn lines_are_bounded_and_checked() {
        assert_eq!(lines_of(b"a\r\nb\n\nc"), vec![(1, Ok("a".into())), (2, Ok("b".into())), (3, Ok("".into())), (4, Ok("c".into()))]);
        let mut long = vec![b'x'; 10 << 20];
        long.extend_from_slice(b"\nok\n");
        let got = lines_of(&long);
        assert_eq!(got.len(), 2);
        assert!(got[0].1.as_ref().unwrap_err().contains(&format!("{} bytes", 10 << 20)), "{:?}", got[0]);
        assert_eq!(got[1], (2, Ok("ok".into())));
        assert!(lines_of(b"\xff\xfe\n")[0].1.as_ref().unwrap_err().contains("UTF-8"));
        assert!(lines_of(b"a\0b\n")[0].1.as_ref().unwrap_err().contains("NUL"));
    }

    #[test]
    fn listing_lines_of_nvdisasm_and_disasm_read() {
        let text = "\t.section\t.text.k,\"ax\",@progbits\n\
            .text.k:\n\
            \x20       /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */\n\
            \x20                                                                          /* 0x000fe20000000800 */\n\
            .L_x_0:\n\
            \x20       /*0010*/              @!P0 BRA `(.L_x_0) ; // a loop\n\
            \x20       /*0020*/                   BRX R6 -0x120      (*\"BRANCH_TARGETS .L_x_7\"*);\n\
            NOP ;\n";
        let l = read_listing("t", text.as_bytes()).unwrap();
        let got: Vec<(Option<&str>, u64, &str)> = l.items.iter().map(|i| (i.section.as_deref(), i.addr, i.text.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (Some(".text.k"), 0, "LDC R1, c[0x0][0x28] ;"),
                (Some(".text.k"), 0x10, "@!P0 BRA `(.L_x_0) ;"),
                (Some(".text.k"), 0x20, "BRX R6 -0x120;"),
                (Some(".text.k"), 0x30, "NOP ;")
            ]
        );
        assert_eq!(l.items[0].hex, Some(Word(0x000fe20000000800_u128 << 64 | 0x00000a00ff017b82)));
        assert_eq!(l.labels[".L_x_0"], (Some(".text.k".into()), 0x10));
        let (t, any) = resolve_labels(&l.items[1].text, &l.items[1], &l).unwrap();
        assert_eq!((t.as_str(), any), ("@!P0 BRA 0x0 ;", true));
        let e = read_listing("t.sass", "/*zz*/ NOP ;\n/*0010*/\n".as_bytes()).unwrap_err();
        assert_eq!(e.iter().map(|e| e.line).collect::<Vec<_>>(), vec![1, 2]);
        assert!(e[0].to_string().starts_with("t.sass:1: "), "{}", e[0]);
    }

    /// A listing of several cubins (`disasm` of a fatbin) reads in parts, one per heading,
    /// each with its own sections and labels (every cubin's listing numbers its own);
    /// `read_listing` takes one cubin's lines only.
    #[test]
    fn a_listing_of_several_cubins_reads_in_parts() {
        let at = CubinAt { arch: 100, offset: 0x1280 };
        assert_eq!(CubinAt::of_heading(&format!(" {}", at.name("dir (SM90 x)/a.o"))), Some(at));
        assert_eq!(CubinAt::of_heading(" a.o (SM100 cubin at byte 1280)"), None);
        let one = ".section .text.k\n.L_x_0:\n/*0000*/ BRA `(.L_x_0) ;\n";
        let text = format!("// {}\n{one}// {}\n// a comment\n{one}", CubinAt { arch: 90, offset: 0xc0 }.name("a.o"), at.name("a.o"));
        let parts = read_parts("t", text.as_bytes()).unwrap();
        let got: Vec<_> = parts
            .iter()
            .map(|p| (p.cubin, p.listing.items.iter().map(|i| (i.line, i.section.as_deref())).collect::<Vec<_>>(), p.listing.labels.len()))
            .collect();
        assert_eq!(got, [(Some((CubinAt { arch: 90, offset: 0xc0 }, 1)), vec![(4, Some(".text.k"))], 1), (Some((at, 5)), vec![(9, Some(".text.k"))], 1)]);
        let e = read_listing("t", text.as_bytes()).unwrap_err();
        assert!(e.len() == 1 && e[0].line == 5 && e[0].message.contains("asm --patch"), "{e:?}");
        assert_eq!(read_listing("t", one.as_bytes()).unwrap().items.len(), 1);
        assert!(read_parts("t", "// just a comment\n".as_bytes()).unwrap().is_empty());
    }

    #[test]
    fn a_binary_file_stops_after_max_errors() {
        let bytes: Vec<u8> = (0..1_000_000u32).map(|i| if i % 7 == 0 { b'\n' } else { (i * 31 % 256) as u8 | 0x80 }).collect();
        let e = read_listing("bin", &bytes[..]).unwrap_err();
        assert_eq!(e.len(), MAX_ERRORS + 1);
        assert!(e.last().unwrap().message.contains("stopping"));
    }
}
