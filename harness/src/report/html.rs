//! One self-contained HTML page per instruction page: each variant's 128-bit layout drawn like
//! the ISA viewer, bits coloured by what validation showed, then the variant's findings.

use super::{about, edits_words, error_groups, evidence, finding_matches, locations_of, note_lines, of_severity, summary_matches, variants_of, Counts};
use crate::spec::{Field, Page, Variant};
use crate::validate::finding::{BitStatus, Class, Finding, Severity, VariantSummary};
use crate::word::format_ranges;
use std::fmt::Write as _;

/// HTML-escapes text for element content and (double- or single-quoted) attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em 2em;color:#222;background:#fff}
h1{margin:0 0 .2em}h1 .arch{color:#666;font-weight:normal}
h2{margin:1.6em 0 .4em;padding-top:.6em;border-top:2px solid #ccc;font-family:ui-monospace,Menlo,Consolas,monospace}
.meta{color:#555;margin:.2em 0}
code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace}
.legend{display:flex;flex-wrap:wrap;gap:.4em 1.2em;margin:.8em 0;font-size:13px;align-items:center}
.legend span.sw{display:inline-block;width:1.6em;height:1.2em;border:1px solid #888;vertical-align:middle;margin-right:.3em;text-align:center;font-size:11px;line-height:1.2em}
nav ul{columns:3;font-size:13px;padding-left:1.2em}
table.layout{border-collapse:collapse;table-layout:fixed;width:100%;margin:.3em 0}
table.layout td{border:1px solid #888;text-align:center;padding:0;height:1.5em;font-size:11px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;font-family:ui-monospace,Menlo,Consolas,monospace}
table.layout tr.idx td{border:none;font-size:9px;color:#777;height:1.2em;vertical-align:bottom}
td.bit{font-weight:bold}
.verified{background:#a8dca0}
.disputed{background:#f08c8c}
.unconfirmed{background:#efe3a4}
.unvalidated{background:#fff}
td.bit.inferred{font-style:italic;color:#b05a00;outline:1px dashed #b05a00;outline-offset:-3px}
.field{background:#dce7f7}
.field.control{background:#e9def4}
.fixed{background:#f3f3f3}
.free{background:repeating-linear-gradient(45deg,#fff,#fff 3px,#ddd 3px,#ddd 5px)}
dl.info{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;margin:.6em 0;font-size:14px}
dl.info dt{color:#555}dl.info dd{margin:0}
table.findings,table.index{border-collapse:collapse;font-size:13px;margin:.4em 0}
table.findings th,table.findings td,table.index th,table.index td{border:1px solid #bbb;padding:.2em .5em;text-align:left;vertical-align:top}
table.findings th,table.index th{background:#eee}
table td.num{text-align:right}
.none{color:#2a7a2a}
td.bit.error{box-shadow:inset 0 0 0 2px #b00020;color:#b00020}
h2.severity{font-family:inherit}
.sev{display:inline-block;padding:0 .4em;border-radius:3px;font-size:12px;font-weight:bold}
.sev.error{background:#b00020;color:#fff}.sev.warning{background:#e8a200;color:#000}.sev.note{background:#ccd;color:#000}
div.error{border-left:4px solid #b00020;padding:.2em .8em;margin:.8em 0;background:#fff8f8}
div.error h3{margin:.2em 0;font-size:15px}
pre.diff{background:#f6f8fa;border:1px solid #ccc;padding:.4em .6em;overflow-x:auto;font-size:12px}
pre.diff .add{color:#116329;background:#dafbe1}
pre.diff .del{color:#82071e;background:#ffebe9}
pre.diff .hunk{color:#0550ae}
pre.diff .file{color:#555;font-weight:bold}
ul.notes{font-size:13px}
p.notes{font-size:13px;color:#444}
details{font-size:13px;margin:.3em 0}
"#;

fn status_class(s: Option<BitStatus>) -> &'static str {
    match s {
        Some(BitStatus::Verified) => "verified",
        Some(BitStatus::Disputed) => "disputed",
        Some(BitStatus::Unconfirmed) => "unconfirmed",
        None => "unvalidated",
    }
}

fn status_words(s: Option<BitStatus>) -> &'static str {
    match s {
        Some(BitStatus::Verified) => "verified",
        Some(BitStatus::Disputed) => "disputed",
        Some(BitStatus::Unconfirmed) => "unconfirmed",
        None => "not validated",
    }
}

/// Who a bit belongs to on the page.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Owner {
    Field(usize),
    Fixed,
    Free,
}

fn owner(v: &Variant, bit: u8) -> Owner {
    if let Some(i) = v.fields.iter().position(|f| f.bits.contains(&bit)) {
        Owner::Field(i)
    } else if v.fixed_mask.contains(bit) {
        Owner::Fixed
    } else {
        Owner::Free
    }
}

/// `operand 3 (value bit 2 of 8)`, and every other field claiming the bit.
fn bit_role(v: &Variant, bit: u8) -> String {
    let claims: Vec<String> = v
        .fields
        .iter()
        .filter_map(|f: &Field| f.bits.iter().position(|&b| b == bit).map(|k| format!("{} (value bit {k} of {})", f.name, f.bits.len())))
        .collect();
    if !claims.is_empty() {
        claims.join(", ")
    } else if v.fixed_mask.contains(bit) {
        let val = v.fixed_value.bit(bit) as u8;
        if v.inferred.contains(bit) {
            format!("fixed {val} (inferred)")
        } else {
            format!("fixed {val}")
        }
    } else {
        "no field, not fixed".into()
    }
}

fn layout(out: &mut String, v: &Variant, summary: Option<&VariantSummary>, findings: &[&Finding]) {
    let status = |bit: u8| summary.and_then(|s| s.bit_status.get(bit as usize).copied());
    for half in 0..2u8 {
        let lo = half * 64;
        let _ = writeln!(out, "<table class=\"layout\" aria-label=\"bits {}..{}\">", lo, lo + 63);
        // Bit indices.
        out.push_str("<tr class=\"idx\">");
        for b in lo..lo + 64 {
            let _ = write!(out, "<td>{b}</td>");
        }
        out.push_str("</tr>\n<tr class=\"bits\">");
        // One cell per bit: status colour, fixed value, tooltip.
        for b in lo..lo + 64 {
            let st = status(b);
            let classes: Vec<&str> = findings.iter().filter(|f| f.bits.contains(&b)).map(|f| f.class.name()).collect();
            let mut tip = format!("bit {b}: {} — {}", bit_role(v, b), status_words(st));
            if !classes.is_empty() {
                let mut c = classes.clone();
                c.dedup();
                let _ = write!(tip, "; findings: {}", c.join(", "));
            }
            let fixed = v.fixed_mask.contains(b) && owner(v, b) == Owner::Fixed;
            let text = if fixed {
                if v.fixed_value.bit(b) {
                    "1"
                } else {
                    "0"
                }
            } else {
                ""
            };
            let inferred = if v.inferred.contains(b) { " inferred" } else { "" };
            let error = if findings.iter().any(|f| f.severity == Severity::Error && f.bits.contains(&b)) {
                tip.push_str("; error: a verified page edit changes this bit");
                " error"
            } else {
                ""
            };
            let _ = write!(out, "<td class=\"bit {}{inferred}{error}\" data-bit=\"{b}\" title=\"{}\">{text}</td>", status_class(st), esc(&tip));
        }
        out.push_str("</tr>\n<tr class=\"fields\">");
        // Merged cells: runs of adjacent bits with the same owner.
        let mut b = lo;
        while b < lo + 64 {
            let o = owner(v, b);
            let mut e = b;
            while e + 1 < lo + 64 && owner(v, e + 1) == o {
                e += 1;
            }
            let span = e - b + 1;
            let range = if span == 1 { b.to_string() } else { format!("{b}..{e}") };
            match o {
                Owner::Field(i) => {
                    let f = &v.fields[i];
                    let mut tip = format!("{}: bits {range}", f.name);
                    if f.bits.len() != span as usize {
                        let vb: Vec<u8> = (b..=e).filter_map(|x| f.bits.iter().position(|&y| y == x).map(|k| k as u8)).collect();
                        let _ = write!(tip, " (value bits {} of {}: all at {})", format_ranges(&vb), f.bits.len(), format_ranges(&f.bits));
                    }
                    let class = if f.is_control() { "field control" } else { "field" };
                    let _ = write!(out, "<td class=\"{class}\" colspan=\"{span}\" title=\"{}\">{}</td>", esc(&tip), esc(&f.name));
                }
                Owner::Fixed => {
                    let _ = write!(out, "<td class=\"fixed\" colspan=\"{span}\" title=\"fixed bits {range}\"></td>");
                }
                Owner::Free => {
                    let _ = write!(out, "<td class=\"free\" colspan=\"{span}\" title=\"bits {range}: no field, not fixed\"></td>");
                }
            }
            b = e + 1;
        }
        out.push_str("</tr>\n</table>\n");
    }
}

fn findings_table(out: &mut String, findings: &[&Finding]) {
    out.push_str("<table class=\"findings\">\n<tr><th>severity</th><th>class</th><th>line</th><th>field</th><th>bits</th><th>word</th><th>expected</th><th>actual</th><th>proposal</th><th>seen</th></tr>\n");
    for f in findings {
        let _ = writeln!(
            out,
            "<tr class=\"finding {cls} {sev}\"><td><span class=\"sev {sev}\">{sev}</span></td><td>{cls}</td><td class=\"num\">{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
            f.line,
            f.field.as_deref().map(esc).unwrap_or_else(|| "—".into()),
            if f.bits.is_empty() { "—".into() } else { format_ranges(&f.bits) },
            esc(&f.word),
            esc(&f.expected),
            esc(&f.actual),
            f.proposal.as_deref().map(esc).unwrap_or_else(|| "—".into()),
            f.occurrences,
            cls = f.class.name(),
            sev = f.severity.name(),
        );
    }
    out.push_str("</table>\n");
}

/// A variant's findings: errors then warnings in a table, then its notes in one line with
/// the full list folded away.
fn variant_findings(out: &mut String, findings: &[&Finding]) {
    if findings.is_empty() {
        out.push_str("<p class=\"none\">No findings.</p>\n");
        return;
    }
    let mut loud = of_severity(findings.iter().copied(), Severity::Error);
    loud.extend(of_severity(findings.iter().copied(), Severity::Warning));
    if loud.is_empty() {
        out.push_str("<p class=\"none\">No errors or warnings.</p>\n");
    } else {
        findings_table(out, &loud);
    }
    let notes = of_severity(findings.iter().copied(), Severity::Note);
    if let Some(line) = note_lines(notes.iter().copied()).first() {
        let _ = writeln!(out, "<p class=\"notes\"><span class=\"sev note\">notes</span> {}</p>", esc(&line.text));
        let _ = writeln!(out, "<details><summary>all {} notes</summary>", notes.len());
        findings_table(out, &notes);
        out.push_str("</details>\n");
    }
}

/// A unified diff with added, deleted, hunk and file-header lines marked for colour.
fn diff_pre(out: &mut String, diff: &str) {
    out.push_str("<pre class=\"diff\">");
    let mut in_hunk = false;
    for l in diff.lines() {
        let class = if l.starts_with("@@") {
            in_hunk = true;
            "hunk"
        } else if !in_hunk && (l.starts_with("---") || l.starts_with("+++") || l.starts_with("diff ")) {
            "file"
        } else if l.starts_with('+') {
            "add"
        } else if l.starts_with('-') {
            "del"
        } else {
            "ctx"
        };
        let _ = writeln!(out, "<span class=\"{class}\">{}</span>", esc(l));
    }
    out.push_str("</pre>\n");
}

/// One page edit and the errors it explains: what and where, the edit in words, the
/// evidence, each error's word with expected and actual text, the page diff. `href` links
/// to the variant's section.
fn error_block(out: &mut String, n: usize, g: &[&Finding], href: &str) {
    let f = g[0];
    let what = if g.len() == 1 { about(f) } else { format!("{} errors, one page edit", g.len()) };
    let _ = writeln!(
        out,
        "<div class=\"error\" id=\"e{n}\">\n<h3><span class=\"sev error\">error</span> <a href=\"{}\">{}</a>: {}</h3>\n<dl class=\"info\">",
        esc(href),
        esc(&variants_of(g)),
        esc(&what)
    );
    let _ = writeln!(out, "<dt>where</dt><dd><code>{}</code></dd>", esc(&locations_of(g)));
    match &f.correction {
        Some(c) => {
            let _ = writeln!(out, "<dt>edit</dt><dd class=\"edit\">{}</dd>", esc(&edits_words(c)));
            let _ = writeln!(out, "<dt>evidence</dt><dd class=\"evidence\">{}</dd>", esc(&evidence(c)));
        }
        None => out.push_str("<dt>edit</dt><dd class=\"edit\">none recorded (an error should carry a verified correction)</dd>\n"),
    }
    for e in g {
        let label = if g.len() == 1 { "word".to_string() } else { esc(&about(e)) };
        let proposal = e.proposal.as_deref().filter(|p| !p.trim().is_empty()).map(|p| format!("<br>{}", esc(p))).unwrap_or_default();
        let _ = writeln!(
            out,
            "<dt>{label}</dt><dd class=\"word\"><code>{}</code> (seen {}×): the page expects <code>{}</code>, nvdisasm prints <code>{}</code>{proposal}</dd>",
            esc(&e.word),
            e.occurrences,
            esc(&e.expected),
            esc(&e.actual)
        );
    }
    out.push_str("</dl>\n");
    match f.correction.as_ref().filter(|c| !c.diff.trim().is_empty()) {
        Some(c) => diff_pre(out, &c.diff),
        None => out.push_str("<p>(no diff recorded)</p>\n"),
    }
    out.push_str("</div>\n");
}

/// The page's errors (each in full), warnings (a table) and notes (one line per variant),
/// before the per-variant layouts. `href` links a finding to its variant's section.
fn lead(out: &mut String, findings: &[&Finding], href: &dyn Fn(&Finding) -> String) {
    let groups = error_groups(findings.iter().copied());
    let n: usize = groups.iter().map(Vec::len).sum();
    let _ = writeln!(out, "<section class=\"errors\">\n<h2 class=\"severity\">Errors ({n})</h2>");
    if groups.is_empty() {
        out.push_str("<p class=\"none\">No errors.</p>\n");
    } else {
        let _ = writeln!(
            out,
            "<p>{n} error{}, explained by {} page edit{}.</p>",
            if n == 1 { "" } else { "s" },
            groups.len(),
            if groups.len() == 1 { "" } else { "s" }
        );
    }
    for (i, g) in groups.iter().enumerate() {
        error_block(out, i + 1, g, &href(g[0]));
    }
    out.push_str("</section>\n");
    let warnings = of_severity(findings.iter().copied(), Severity::Warning);
    let _ = writeln!(out, "<section class=\"warnings\">\n<h2 class=\"severity\">Warnings ({})</h2>", warnings.len());
    if warnings.is_empty() {
        out.push_str("<p class=\"none\">No warnings.</p>\n");
    } else {
        findings_table(out, &warnings);
    }
    out.push_str("</section>\n");
    let lines = note_lines(findings.iter().copied());
    let n: usize = lines.iter().map(|l| l.count).sum();
    let _ = writeln!(out, "<section class=\"notes\">\n<h2 class=\"severity\">Notes ({n})</h2>");
    if lines.is_empty() {
        out.push_str("<p class=\"none\">No notes.</p>\n");
    } else {
        out.push_str("<ul class=\"notes\">\n");
        for l in &lines {
            let _ = writeln!(out, "<li><code>{}</code> ({}): {}</li>", esc(&l.variant), esc(&l.arch.to_string()), esc(&l.text));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn legend(out: &mut String) {
    out.push_str("<div class=\"legend\">");
    for (class, text) in [
        ("verified", "verified: a probe isolating the bit agreed with the page"),
        ("disputed", "disputed: a finding names the bit"),
        ("unconfirmed", "unconfirmed: nothing nvdisasm prints confirms it"),
        ("unvalidated", "not validated"),
    ] {
        let _ = write!(out, "<span><span class=\"sw {class}\"></span>{}</span>", esc(text));
    }
    out.push_str("<span><span class=\"sw\" style=\"font-weight:bold\">0/1</span>fixed bit value</span>");
    out.push_str(
        "<span><span class=\"sw\" style=\"font-style:italic;color:#b05a00;outline:1px dashed #b05a00;outline-offset:-3px\">0</span>fixed, inferred</span>",
    );
    out.push_str("<span><span class=\"sw\" style=\"box-shadow:inset 0 0 0 2px #b00020\"></span>an error's edit changes the bit</span>");
    out.push_str("<span><span class=\"sw field\"></span>field</span>");
    out.push_str("<span><span class=\"sw field control\"></span>control field</span>");
    out.push_str("<span><span class=\"sw free\"></span>no field, not fixed</span>");
    out.push_str("</div>\n");
}

fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(title)
    );
}

fn variant_anchor(v: &Variant) -> String {
    let id: String = v.key.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    format!("v-{id}")
}

/// One self-contained page (inline CSS, no scripts or external assets) for an instruction
/// page: first its errors (each with the edit in words, the evidence and the page diff),
/// warnings and notes (one line per variant); then per variant its 128-bit layout (bits 0–63
/// then 64–127, least significant first; one `td.bit` per bit carrying `data-bit`, its status
/// class and `error` when an error names it; fields as merged cells below), its
/// key/form/distilled line and tallies, and its findings.
pub fn html_page(page: &Page, summaries: &[VariantSummary], findings: &[Finding], tool_version: &str) -> String {
    let arch = page.arch.to_string();
    let mut out = String::new();
    head(&mut out, &format!("{} — {arch}", page.instruction));
    let _ = writeln!(out, "<header>\n<h1>{} <span class=\"arch\">{}</span></h1>", esc(&page.instruction), esc(&arch));
    if let Some(d) = &page.description {
        let _ = writeln!(out, "<p class=\"desc\">{}</p>", esc(d));
    }
    let on_page: Vec<&Finding> = findings.iter().filter(|f| page.variants.iter().any(|v| finding_matches(f, v))).collect();
    let c = Counts::of(on_page.iter().copied());
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} variants{} · page <code>{}</code> · nvdisasm <code>{}</code> · {} errors, {} warnings, {} notes · <a href=\"index.html\">all pages</a></p>",
        page.variants.len(),
        page.gpu.as_deref().map(|g| format!(" on {arch} ({})", esc(g))).unwrap_or_default(),
        esc(&page.file),
        esc(tool_version.trim()),
        c.errors,
        c.warnings,
        c.notes
    );
    legend(&mut out);
    out.push_str("<nav><ul>\n");
    for v in &page.variants {
        let c = Counts::of(findings.iter().filter(|f| finding_matches(f, v)));
        let counts = if c.total() > 0 { format!(" — {} E / {} W / {} N", c.errors, c.warnings, c.notes) } else { String::new() };
        let _ = writeln!(out, "<li><a href=\"#{}\">{}</a> <code>{}</code>{counts}</li>", esc(&variant_anchor(v)), esc(&v.key), esc(&v.form));
    }
    out.push_str("</ul></nav>\n</header>\n");
    let href = |f: &Finding| page.variants.iter().find(|v| finding_matches(f, v)).map(|v| format!("#{}", variant_anchor(v))).unwrap_or_default();
    lead(&mut out, &on_page, &href);
    for v in &page.variants {
        variant_section(&mut out, v, summaries, findings);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A variant's section: heading, layout, facts and tallies, findings.
fn variant_section(out: &mut String, v: &Variant, summaries: &[VariantSummary], findings: &[Finding]) {
    let summary = summaries.iter().find(|s| summary_matches(s, v));
    let fs: Vec<&Finding> = findings.iter().filter(|f| finding_matches(f, v)).collect();
    let _ = writeln!(out, "<section class=\"variant\" id=\"{}\" data-key=\"{}\">\n<h2>{}</h2>", esc(&variant_anchor(v)), esc(&v.key), esc(&v.key));
    layout(out, v, summary, &fs);
    out.push_str("<dl class=\"info\">\n");
    let _ = writeln!(out, "<dt>key</dt><dd><code>{}</code></dd>", esc(&v.key));
    let _ = writeln!(out, "<dt>heading</dt><dd><code>{}</code></dd>", esc(&v.heading));
    let _ = writeln!(out, "<dt>form</dt><dd><code>{}</code></dd>", esc(&v.form));
    let _ = writeln!(out, "<dt>distilled</dt><dd><code>{}</code></dd>", esc(&v.distilled));
    let _ = writeln!(out, "<dt>source</dt><dd><code>{}:{}</code></dd>", esc(&v.file), v.line);
    match summary {
        Some(s) => {
            let pct = if s.words > 0 { format!(" ({:.1}%)", 100.0 * s.agreeing as f64 / s.words as f64) } else { String::new() };
            let _ = writeln!(out, "<dt>words checked</dt><dd class=\"words\">{}</dd>", s.words);
            let _ = writeln!(out, "<dt>agreeing</dt><dd class=\"agreeing\">{}{pct}</dd>", s.agreeing);
            let by: Vec<String> = Class::ALL
                .iter()
                .filter_map(|c| s.findings.get(c.name()).filter(|&&n| n > 0).map(|n| format!("{} {n}", c.name())))
                .chain(s.findings.iter().filter(|(k, &n)| n > 0 && !Class::ALL.iter().any(|c| c.name() == k.as_str())).map(|(k, n)| format!("{k} {n}")))
                .collect();
            let _ = writeln!(out, "<dt>findings</dt><dd>{}</dd>", if by.is_empty() { "none".to_string() } else { esc(&by.join(", ")) });
        }
        None => out.push_str("<dt>validation</dt><dd>not validated</dd>\n"),
    }
    out.push_str("</dl>\n");
    variant_findings(out, &fs);
    out.push_str("</section>\n");
}

/// `html/index.html`: a table of the pages (with their file names), their tallies and their
/// errors, warnings and notes, a totals row, then every error with a link to its variant.
pub fn html_index(pages: &[(&Page, String)], summaries: &[VariantSummary], findings: &[Finding], tool_version: &str) -> String {
    let mut out = String::new();
    head(&mut out, "SASS encoding validation");
    let _ = writeln!(
        out,
        "<h1>SASS encoding validation</h1>\n<p class=\"meta\">nvdisasm <code>{}</code> · {} page{}</p>",
        esc(tool_version.trim()),
        pages.len(),
        if pages.len() == 1 { "" } else { "s" }
    );
    out.push_str("<table class=\"index\">\n<tr><th>instruction</th><th>arch</th><th>variants</th><th>validated</th><th>words checked</th><th>agreeing</th><th>errors</th><th>warnings</th><th>notes</th></tr>\n");
    let row = |out: &mut String, first: String, arch: String, nums: [usize; 4], c: Counts| {
        let _ = write!(out, "<tr><td>{first}</td><td>{arch}</td>");
        for n in nums {
            let _ = write!(out, "<td class=\"num\">{n}</td>");
        }
        let _ = writeln!(
            out,
            "<td class=\"num errors\">{}</td><td class=\"num warnings\">{}</td><td class=\"num notes\">{}</td></tr>",
            c.errors, c.warnings, c.notes
        );
    };
    let mut errors: Vec<(Vec<&Finding>, String)> = vec![];
    // Each page's findings and summaries, in one pass (a scan per page is quadratic).
    let (fi, si) = super::by_page(pages.iter().map(|(p, _)| *p), summaries, findings);
    let page_fs: Vec<Vec<&Finding>> = fi.iter().map(|is| is.iter().map(|&i| &findings[i]).collect()).collect();
    let page_ss: Vec<Vec<&VariantSummary>> = si.iter().map(|is| is.iter().map(|&i| &summaries[i]).collect()).collect();
    for (pi, (page, file)) in pages.iter().enumerate() {
        let (ss, fs) = (&page_ss[pi], &page_fs[pi]);
        for g in error_groups(fs.iter().copied()) {
            let v = page.variants.iter().find(|v| finding_matches(g[0], v)).map(variant_anchor).unwrap_or_default();
            errors.push((g, format!("{file}#{v}")));
        }
        let nums = [page.variants.len(), ss.len(), ss.iter().map(|s| s.words).sum(), ss.iter().map(|s| s.agreeing).sum()];
        let first = format!("<a href=\"{}\">{}</a>", esc(file), esc(&page.instruction));
        row(&mut out, first, esc(&page.arch.to_string()), nums, Counts::of(fs.iter().copied()));
    }
    let all = |f: fn(&VariantSummary) -> usize| summaries.iter().map(f).sum::<usize>();
    let nums = [pages.iter().map(|(p, _)| p.variants.len()).sum(), summaries.len(), all(|s| s.words), all(|s| s.agreeing)];
    row(&mut out, "<strong>total</strong>".into(), String::new(), nums, Counts::of(findings));
    out.push_str("</table>\n");
    let n: usize = errors.iter().map(|(g, _)| g.len()).sum();
    let _ = writeln!(out, "<h2 class=\"severity\">Errors ({n})</h2>");
    if errors.is_empty() {
        out.push_str("<p class=\"none\">No errors.</p>\n");
    } else {
        let _ = writeln!(
            out,
            "<p>{n} error{}, explained by {} page edit{}:</p>",
            if n == 1 { "" } else { "s" },
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        );
        out.push_str("<ul class=\"errors\">\n");
        for (g, href) in &errors {
            let f = g[0];
            let what = if g.len() == 1 { about(f) } else { format!("{} errors", g.len()) };
            let edit = f.correction.as_ref().map(|c| format!("{} ({})", edits_words(c), evidence(c))).unwrap_or_else(|| "no correction recorded".into());
            let _ = writeln!(out, "<li><a href=\"{}\">{}</a>: {} — {}</li>", esc(href), esc(&variants_of(g)), esc(&what), esc(&edit));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    /// The text of each `<section class="variant" …>…</section>`.
    fn sections(html: &str) -> Vec<&str> {
        html.split("<section class=\"variant\"").skip(1).map(|s| s.split("</section>").next().unwrap()).collect()
    }

    fn bit_cell(section: &str, bit: u8) -> &str {
        let at = section.find(&format!("data-bit=\"{bit}\"")).expect("bit cell");
        let start = section[..at].rfind("<td").unwrap();
        let end = at + section[at..].find("</td>").unwrap();
        &section[start..end]
    }

    #[test]
    fn report_html_layout_status_and_escaping() {
        let spec = fixture::spec();
        let (summaries, findings) = fixture::data(&spec);
        let page = &spec.pages[0];
        let html = html_page(page, &summaries, &findings, fixture::TOOL);
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        assert!(!html.contains("<link") && !html.contains("<script") && !html.contains("src="), "self-contained");

        let secs = sections(&html);
        assert_eq!(secs.len(), page.variants.len());
        for (s, v) in secs.iter().zip(&page.variants) {
            assert!(s.contains(&format!("data-key=\"{}\"", v.key)));
            assert_eq!(s.matches("<td class=\"bit ").count(), 128, "{}", v.key);
            assert_eq!(s.matches("data-bit=\"").count(), 128, "{}", v.key);
            // Field cells span exactly the bits the fields own: per row, colspans add to 64.
            for row in s.split("<tr class=\"fields\">").skip(1) {
                let row = row.split("</tr>").next().unwrap();
                let total: usize = row.split("colspan=\"").skip(1).map(|c| c.split('"').next().unwrap().parse::<usize>().unwrap()).sum();
                assert_eq!(total, 64, "{}", v.key);
            }
            // Every field is labelled at least once; fixed bits show their value.
            for f in &v.fields {
                assert!(s.contains(&format!(">{}</td>", esc(&f.name))), "{} labels {}", v.key, f.name);
            }
            for b in v.fixed_mask.iter().filter(|&b| !v.fields.iter().any(|f| f.bits.contains(&b))) {
                let cell = bit_cell(s, b);
                assert!(cell.ends_with(if v.fixed_value.bit(b) { ">1" } else { ">0" }), "{cell}");
            }
        }

        // The first variant: disputed bits carry the disputed class, others their status.
        let v0 = &page.variants[0];
        let disputed = fixture::disputed_bits(v0);
        for &b in &disputed {
            let cell = bit_cell(secs[0], b);
            assert!(cell.starts_with("<td class=\"bit disputed"), "{cell}");
            assert!(cell.contains("modi 1") && cell.contains("field_bits"), "{cell}");
        }
        assert!(secs[0].matches("class=\"bit disputed").count() == disputed.len());
        // The error's bits are marked as such, and only they.
        for &b in &disputed {
            let cell = bit_cell(secs[0], b);
            assert!(cell.contains(" error\" data-bit") && cell.contains("error: a verified page edit"), "{cell}");
        }
        assert_eq!(secs[0].matches(" error\" data-bit").count(), disputed.len());
        assert_eq!(secs[1].matches(" error\" data-bit").count(), 0);
        let pred = &v0.fields[v0.field_by_name("pred").unwrap()];
        assert!(bit_cell(secs[0], pred.bits[0]).starts_with("<td class=\"bit verified"));
        let ctl = v0.fields.iter().find(|f| f.is_control()).unwrap();
        assert!(bit_cell(secs[0], ctl.bits[0]).starts_with("<td class=\"bit unconfirmed"));
        // Variants without a summary are drawn, not validated.
        assert!(bit_cell(secs[2], 0).starts_with("<td class=\"bit unvalidated"));
        assert!(secs[2].contains("not validated"));

        // Tallies and findings.
        assert!(secs[0].contains("<dd class=\"words\">40</dd>") && secs[0].contains("<dd class=\"agreeing\">37 (92.5%)</dd>"));
        // Per variant: errors and warnings in a table, then notes on one line with the list folded.
        assert_eq!(secs[0].matches("<tr class=\"finding ").count(), 2 + 4);
        let loud = secs[0].split("<details>").next().unwrap();
        let e = loud.find("<tr class=\"finding field_bits error\">").expect("error row");
        let w = loud.find("<tr class=\"finding interaction warning\">").expect("warning row");
        assert!(e < w && !loud.contains(" note\"><td>"), "errors, then warnings, then notes folded");
        assert!(secs[0].contains("<p class=\"notes\"><span class=\"sev note\">notes</span> bits 40..45,76..77: nvdisasm ignores them"));
        assert!(secs[0].contains("<details><summary>all 4 notes</summary>"));
        assert_eq!(secs[1].matches("<tr class=\"finding ").count(), 1);
        assert!(secs[1].contains("No errors or warnings.") && secs[2].contains("No findings."));
        assert!(secs[0].contains(&format!("<td class=\"mono\">{}</td>", format_ranges(&disputed))));

        // Escaping.
        assert!(html.contains("a &lt; b | c &amp; d"), "expected escaped");
        assert!(html.contains("&lt;illegal: x|y &amp; z&gt;"), "actual escaped");
        assert!(!html.contains("<illegal") && !html.contains("a < b"));
        assert_eq!(esc(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(html, html_page(page, &summaries, &findings, fixture::TOOL));
    }

    #[test]
    fn report_html_leads_with_errors_then_warnings_then_notes() {
        let spec = fixture::spec();
        let (summaries, findings) = fixture::data(&spec);
        let page = &spec.pages[0];
        let v0 = &page.variants[0];
        let html = html_page(page, &summaries, &findings, fixture::TOOL);
        let at = |h: &str| html.find(h).unwrap_or_else(|| panic!("{h} in page"));
        let order = ["<section class=\"errors\">", "<section class=\"warnings\">", "<section class=\"notes\">", "<section class=\"variant\""].map(at);
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert!(html.contains("1 errors, 1 warnings, 5 notes"));
        let errors = &html[order[0]..order[1]];
        assert!(errors.contains("<h2 class=\"severity\">Errors (1)</h2>"));
        assert_eq!(errors.matches("<div class=\"error\"").count(), 1);
        assert!(errors.contains(&format!("<a href=\"#{}\">{} (SM90)</a>: field_bits, field modi 1", variant_anchor(v0), v0.key)));
        assert!(errors.contains("<p>1 error, explained by 1 page edit.</p>"));
        assert!(errors.contains("<dt>word</dt><dd class=\"word\"><code>000fe20000004000000000000000722b</code> (seen 3×): the page expects <code>DFMA.RM R0, R0, R0, R0 ;</code>, nvdisasm prints <code>DFMA.RP R0, R0, R0, R0 ;</code><br>swap RM and RP</dd>"), "{errors}");
        assert!(
            errors.contains("<dd class=\"edit\">row 1 (0b01) of table \u{201c}Modifier Group 1\u{201d} is \u{201c}RP\u{201d}, not \u{201c}RM\u{201d}</dd>"),
            "{errors}"
        );
        assert!(errors.contains("<dd class=\"evidence\">fixes 3 of 40 probe words, 0 regressions</dd>"));
        assert!(errors.contains(&format!("<dt>where</dt><dd><code>{}:{}</code></dd>", esc(&v0.file), v0.layout_lines[3])));
        assert!(errors.contains("<code>DFMA.RM R0, R0, R0, R0 ;</code>") && errors.contains("<code>DFMA.RP R0, R0, R0, R0 ;</code>"));
        let diff = "<pre class=\"diff\"><span class=\"file\">--- a/DFMA.txt</span>\n<span class=\"file\">+++ b/DFMA.txt</span>\n\
                    <span class=\"hunk\">@@ -22,1 +22,1 @@</span>\n<span class=\"del\">-01\tRM</span>\n<span class=\"add\">+01\tRP</span>\n</pre>";
        assert!(errors.contains(diff), "{errors}");
        let warnings = &html[order[1]..order[2]];
        assert_eq!(warnings.matches("<tr class=\"finding ").count(), 1);
        assert!(warnings.contains("bits 80 &amp; 81 together print &lt;.FTZ&gt;"), "{warnings}");
        let notes = &html[order[2]..order[3]];
        assert_eq!(notes.matches("<li>").count(), 2, "one line per variant");
        assert!(notes.contains(&format!(
            "<li><code>{}</code> (SM90): bits 100..103: nvdisasm ignores them (fixed_ignored: 1 finding, 4 bits)</li>",
            page.variants[1].key
        )));
        // A deleted line that looks like a file header inside a hunk is still a deletion.
        let mut out = String::new();
        diff_pre(&mut out, "@@ -1 +1 @@\n--- x\n+<y>\n");
        assert_eq!(
            out,
            "<pre class=\"diff\"><span class=\"hunk\">@@ -1 +1 @@</span>\n<span class=\"del\">--- x</span>\n<span class=\"add\">+&lt;y&gt;</span>\n</pre>\n"
        );
    }

    #[test]
    fn report_html_index_links_pages_and_counts_severities() {
        let spec = fixture::spec();
        let (summaries, findings) = fixture::data(&spec);
        let entries: Vec<(&Page, String)> = spec.pages.iter().map(|p| (p, crate::report::html_file_name(p))).collect();
        let index = html_index(&entries, &summaries, &findings, "t<1>");
        let n = spec.pages[0].variants.len();
        let counts = "<td class=\"num errors\">1</td><td class=\"num warnings\">1</td><td class=\"num notes\">5</td>";
        let dfma = format!("<tr><td><a href=\"DFMA_SM90.html\">DFMA</a></td><td>SM90</td><td class=\"num\">{n}</td><td class=\"num\">2</td><td class=\"num\">65</td><td class=\"num\">62</td>{counts}</tr>");
        assert!(index.contains(&dfma), "{index}");
        let variants: usize = spec.pages.iter().map(|p| p.variants.len()).sum();
        let total = format!("<tr><td><strong>total</strong></td><td></td><td class=\"num\">{variants}</td><td class=\"num\">2</td><td class=\"num\">65</td><td class=\"num\">62</td>{counts}</tr>");
        assert!(index.contains(&total), "{index}");
        // Other pages have no findings.
        assert_eq!(
            index.matches("<td class=\"num errors\">0</td><td class=\"num warnings\">0</td><td class=\"num notes\">0</td>").count(),
            spec.pages.len() - 1
        );
        // The errors, linked to their variant's section.
        let v0 = &spec.pages[0].variants[0];
        assert!(index.contains("<h2 class=\"severity\">Errors (1)</h2>"));
        assert!(index.contains("<p>1 error, explained by 1 page edit:</p>"), "{index}");
        assert!(index.contains(&format!("<li><a href=\"DFMA_SM90.html#{}\">{} (SM90)</a>: field_bits, field modi 1", variant_anchor(v0), v0.key)), "{index}");
        assert!(index.contains("(fixes 3 of 40 probe words, 0 regressions)</li>"));
        assert!(index.contains("t&lt;1&gt;"));
    }
}
