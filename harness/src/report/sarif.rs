//! `findings.sarif`: the findings as one SARIF 2.1.0 run for code-scanning tools. One rule
//! per finding class; errors, warnings and notes keep their level; each result points at the
//! page line it blames, and an error's verified correction becomes a SARIF fix (its diff's
//! hunks as whole-line replacements; the diff itself is in the result's properties too).

use super::{class_description, edits_words, evidence};
use crate::validate::finding::{Class, Edit, Finding, Severity};
use crate::word::format_ranges;
use serde::Serialize;
use std::collections::BTreeMap;

/// The schema a `findings.sarif` names (SARIF 2.1.0, OASIS errata 01).
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The key of the one partial fingerprint each result carries.
pub const FINGERPRINT_KEY: &str = "sassHarnessFinding/v1";

/// The log; `R` is how the results are held ([`write_sarif`] makes each as it writes it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SarifLog<R = Vec<SarifResult>> {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: Vec<Run<R>>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run<R = Vec<SarifResult>> {
    pub tool: Tool,
    pub results: R,
    pub properties: RunProperties,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunProperties {
    /// nvdisasm's version line.
    pub nvdisasm: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tool {
    pub driver: Driver,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Driver {
    pub name: &'static str,
    pub version: &'static str,
    pub rules: Vec<Rule>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub id: &'static str,
    pub short_description: Message,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message {
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult {
    pub rule_id: &'static str,
    pub rule_index: usize,
    pub level: &'static str,
    pub message: Message,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<Location>,
    pub partial_fingerprints: BTreeMap<&'static str, String>,
    pub properties: ResultProperties,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Fix>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultProperties {
    pub arch: String,
    pub variant: String,
    /// The finding's word (32 hex digits, bit 127 first): `nvdisasm` on it reproduces `actual`.
    pub word: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The bits involved as ranges (`9..10,12`), empty when none.
    pub bits: String,
    pub expected: String,
    pub actual: String,
    pub occurrences: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correction: Option<CorrectionProperties>,
}

/// An error's correction as the JSONL has it: typed edits, evidence, and the page diff.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CorrectionProperties {
    pub edits: Vec<Edit>,
    pub fixes: usize,
    pub regressions: usize,
    pub probes: usize,
    pub diff: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub physical_location: PhysicalLocation,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArtifactLocation {
    pub uri: String,
}

/// Lines and columns are 1-based; `end_column` is exclusive.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fix {
    pub description: Message,
    pub artifact_changes: Vec<ArtifactChange>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactChange {
    pub artifact_location: ArtifactLocation,
    pub replacements: Vec<Replacement>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replacement {
    pub deleted_region: Region,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inserted_content: Option<ArtifactContent>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArtifactContent {
    pub text: String,
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// The findings as a SARIF log: one run, one rule per class (in [`Class::ALL`] order), one
/// result per finding in input order.
pub fn sarif_log(findings: &[Finding], tool_version: &str) -> SarifLog {
    log_of(findings.iter().map(result).collect(), tool_version)
}

/// Writes [`sarif_log`]'s log (pretty JSON), making each result as it is written: a big
/// run's results, held whole, were several times the findings' own memory.
pub fn write_sarif(w: impl std::io::Write, findings: &[Finding], tool_version: &str) -> serde_json::Result<()> {
    serde_json::to_writer_pretty(w, &log_of(OneByOne(findings), tool_version))
}

/// The findings' results, serialized one by one.
struct OneByOne<'f>(&'f [Finding]);

impl Serialize for OneByOne<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(result))
    }
}

fn log_of<R>(results: R, tool_version: &str) -> SarifLog<R> {
    let rules = Class::ALL.iter().map(|&c| Rule { id: c.name(), short_description: Message { text: class_description(c).into() } }).collect();
    SarifLog {
        schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool { driver: Driver { name: "sass-harness", version: env!("CARGO_PKG_VERSION"), rules } },
            results,
            properties: RunProperties { nvdisasm: tool_version.trim().to_string() },
        }],
    }
}

/// What a result's message says: what, where, why, and the word that shows it.
fn message(f: &Finding) -> String {
    let mut what = format!("{} ({}), {}", f.variant, f.arch, f.class.name());
    if let Some(field) = &f.field {
        what += &format!(", field {field}");
    }
    if !f.bits.is_empty() {
        what += &format!(", bits {}", format_ranges(&f.bits));
    }
    let proposal = f.proposal.as_deref().map(str::trim).filter(|p| !p.is_empty());
    let why = match (&f.correction, proposal) {
        (Some(c), p) => {
            let p = p.map(|p| format!("{p}: ")).unwrap_or_default();
            format!("{p}{} ({})", edits_words(c), evidence(c))
        }
        (None, Some(p)) => p.to_string(),
        (None, None) if f.severity == Severity::Warning => "no page edit explains it".to_string(),
        (None, None) => class_description(f.class).trim_end_matches('.').to_string(),
    };
    format!(
        "{what}: {why}. The page expects `{}`, nvdisasm prints `{}` for word {} (seen {} time{}).",
        f.expected,
        f.actual,
        f.word,
        f.occurrences,
        if f.occurrences == 1 { "" } else { "s" }
    )
}

fn result(f: &Finding) -> SarifResult {
    let uri = artifact_uri(&f.page);
    let locations = match &uri {
        Some(uri) => vec![Location {
            physical_location: PhysicalLocation {
                artifact_location: ArtifactLocation { uri: uri.clone() },
                region: (f.line >= 1).then_some(Region { start_line: f.line, start_column: None, end_line: None, end_column: None }),
            },
        }],
        None => vec![],
    };
    let fixes = match (&f.correction, &uri) {
        (Some(c), Some(uri)) => replacements(&c.diff)
            .map(|replacements| Fix {
                description: Message { text: edits_words(c) },
                artifact_changes: vec![ArtifactChange { artifact_location: ArtifactLocation { uri: uri.clone() }, replacements }],
            })
            .into_iter()
            .collect(),
        _ => vec![],
    };
    let bits = format_ranges(&f.bits);
    let fingerprint = format!("{}/{}/{}/{}/{bits}/{}", f.arch, f.variant, f.class.name(), f.field.as_deref().unwrap_or(""), f.line);
    SarifResult {
        rule_id: f.class.name(),
        rule_index: Class::ALL.iter().position(|&c| c == f.class).unwrap_or(0),
        level: level(f.severity),
        message: Message { text: message(f) },
        locations,
        partial_fingerprints: [(FINGERPRINT_KEY, fingerprint)].into_iter().collect(),
        properties: ResultProperties {
            arch: f.arch.to_string(),
            variant: f.variant.clone(),
            word: f.word.clone(),
            field: f.field.clone(),
            bits,
            expected: f.expected.clone(),
            actual: f.actual.clone(),
            occurrences: f.occurrences,
            correction: f.correction.as_ref().map(|c| CorrectionProperties {
                edits: c.edits.clone(),
                fixes: c.fixes,
                regressions: c.regressions,
                probes: c.probes,
                diff: c.diff.clone(),
            }),
        },
        fixes,
    }
}

/// A page path as a URI reference: relative paths stay relative (`/`-separated, percent-
/// encoded), absolute ones become `file://` URIs. `None` for an empty path.
pub fn artifact_uri(page: &str) -> Option<String> {
    if page.trim().is_empty() {
        return None;
    }
    let p = page.replace('\\', "/");
    let b = p.as_bytes();
    let drive = b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/';
    let mut out = String::with_capacity(p.len() + 8);
    if drive {
        out.push_str("file:///");
        out.push_str(&p[..2]);
    } else if p.starts_with('/') {
        out.push_str("file://");
    }
    for &c in &b[if drive { 2 } else { 0 }..] {
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    Some(out)
}

/// `22,1` or `22` → (22, 1).
fn hunk_range(s: &str) -> Option<(usize, usize)> {
    match s.split_once(',') {
        Some((a, n)) => Some((a.parse().ok()?, n.parse().ok()?)),
        None => Some((s.parse().ok()?, 1)),
    }
}

/// A unified diff's hunks as whole-line replacements: each deletes the hunk's old lines (from
/// column 1 of its first line to column 1 of the line after) and inserts its new lines.
/// `None` when the diff has no hunk or a malformed one.
pub fn replacements(diff: &str) -> Option<Vec<Replacement>> {
    let mut out = vec![];
    let mut lines = diff.lines();
    while let Some(l) = lines.next() {
        let Some(rest) = l.strip_prefix("@@ -") else { continue };
        let (old, rest) = rest.split_once(" +")?;
        let new = rest.split_once(" @@")?.0;
        let ((start, old_len), (_, new_len)) = (hunk_range(old)?, hunk_range(new)?);
        let (mut o, mut n, mut text) = (0, 0, String::new());
        while o < old_len || n < new_len {
            let l = lines.next()?;
            let mut chars = l.chars();
            let tag = chars.next();
            let body = chars.as_str();
            match tag {
                Some(' ') | None => (o, n) = (o + 1, n + 1),
                Some('-') => o += 1,
                Some('+') => n += 1,
                Some('\\') => continue,
                Some(_) => return None,
            }
            if tag != Some('-') {
                text.push_str(body);
                text.push('\n');
            }
        }
        if o != old_len || n != new_len || (old_len > 0 && start == 0) {
            return None;
        }
        let first = if old_len == 0 { start + 1 } else { start };
        out.push(Replacement {
            deleted_region: Region { start_line: first, start_column: Some(1), end_line: Some(first + old_len), end_column: Some(1) },
            inserted_content: (!text.is_empty()).then_some(ArtifactContent { text }),
        });
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;
    use serde_json::{json, Value};

    /// The official SARIF 2.1.0 JSON schema (draft-07), as shipped in the crates.io package
    /// `serde-sarif` 0.8.0 (`src/schema.json`, MIT). It equals OASIS sarif-spec's
    /// `Schemata/sarif-schema-2.1.0.json` (commit 5280a94, the schema submitted for the 2.1.0
    /// errata) but for eight descriptions' spelling ("identifer" → "identifier"): no keyword
    /// that validates differs.
    const SCHEMA: &str = include_str!("../../tests/data/sarif-schema-2.1.0.json");

    /// The schema compiled by a draft-07 validator, format assertions on.
    fn validator() -> (boon::Schemas, boon::SchemaIndex) {
        let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
        assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#", "SARIF 2.1.0's schema is draft-07");
        assert_eq!(schema["properties"]["version"]["enum"], json!(["2.1.0"]));
        let id = schema["$id"].as_str().expect("the schema has an $id").to_string();
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V7);
        compiler.enable_format_assertions();
        compiler.add_resource(&id, schema).expect("the schema is added");
        let mut schemas = boon::Schemas::new();
        let index = compiler.compile(&id, &mut schemas).unwrap_or_else(|e| panic!("the schema compiles: {e:#}"));
        (schemas, index)
    }

    fn schema_errors(v: &(boon::Schemas, boon::SchemaIndex), doc: &Value) -> Vec<String> {
        match v.0.validate(doc, v.1) {
            Ok(()) => vec![],
            Err(e) => vec![format!("{e:#}")],
        }
    }

    #[test]
    fn report_sarif_validates_against_the_official_schema() {
        let spec = fixture::spec();
        let (summaries, findings) = fixture::data(&spec);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("sass-sarif-test-{}-{nanos}", std::process::id()));
        crate::report::write_reports(&dir, &spec, &summaries, &findings, fixture::TOOL).unwrap();
        let text = std::fs::read_to_string(dir.join("findings.sarif")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let v = validator();
        assert_eq!(schema_errors(&v, &doc), Vec::<String>::new());
        // Relative page paths and a log without findings validate too.
        let mut relative = findings.clone();
        relative.iter_mut().for_each(|f| f.page = "corpus/isa/sm90/DFMA 1.txt".into());
        for log in [sarif_log(&relative, "t"), sarif_log(&[], "t")] {
            assert_eq!(schema_errors(&v, &serde_json::to_value(log).unwrap()), Vec::<String>::new());
        }

        // The validator rejects broken logs: each of these edits breaks the schema.
        type Breakage = (&'static str, fn(&mut Value));
        let broken: [Breakage; 6] = [
            ("level outside the enum", |d| d["runs"][0]["results"][0]["level"] = json!("fatal")),
            ("a uri that is no URI reference", |d| d["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = json!("a b")),
            ("no version", |d| drop(d.as_object_mut().unwrap().remove("version"))),
            ("startLine 0", |d| d["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = json!(0)),
            ("message without text", |d| d["runs"][0]["results"][0]["message"] = json!({})),
            ("a fix without changes", |d| d["runs"][0]["results"][4]["fixes"][0]["artifactChanges"] = json!([])),
        ];
        for (what, edit) in broken {
            let mut d = doc.clone();
            edit(&mut d);
            assert_ne!(d, doc, "{what}: the edit changes the log");
            assert!(!schema_errors(&v, &d).is_empty(), "{what}: the schema rejects it");
        }
    }

    #[test]
    fn report_sarif_levels_locations_and_fixes() {
        let spec = fixture::spec();
        let (_, findings) = fixture::data(&spec);
        let log = serde_json::to_value(sarif_log(&findings, " nv 1.0\n")).unwrap();
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(log["runs"].as_array().unwrap().len(), 1);
        let run = &log["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "sass-harness");
        assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(run["properties"]["nvdisasm"], "nv 1.0");
        let rules: Vec<&str> = run["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(rules, Class::ALL.map(Class::name));
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), findings.len());
        for (r, f) in results.iter().zip(&findings) {
            assert_eq!(r["ruleId"], f.class.name());
            assert_eq!(rules[r["ruleIndex"].as_u64().unwrap() as usize], f.class.name());
            assert_eq!(r["level"], f.severity.name());
            let loc = &r["locations"][0]["physicalLocation"];
            assert_eq!(loc["artifactLocation"]["uri"], format!("file://{}", f.page), "the fixture's pages are absolute");
            assert_eq!(loc["region"]["startLine"], f.line);
            assert_eq!(r["properties"]["word"], f.word);
            assert!(r["partialFingerprints"][FINGERPRINT_KEY].as_str().unwrap().contains(&f.variant));
            assert!(r["message"]["text"].as_str().unwrap().contains(&f.word));
            assert_eq!(r.get("fixes").is_some(), f.severity == Severity::Error, "only the error has a fix");
        }
        let error = &results[4];
        assert_eq!(error["level"], "error");
        let msg = error["message"]["text"].as_str().unwrap();
        assert!(msg.contains("swap RM and RP: row 1 (0b01) of table") && msg.contains("(fixes 3 of 40 probe words, 0 regressions)"), "{msg}");
        assert!(msg.contains("expects `DFMA.RM R0, R0, R0, R0 ;`, nvdisasm prints `DFMA.RP R0, R0, R0, R0 ;`"), "{msg}");
        let change = &error["fixes"][0]["artifactChanges"][0];
        assert_eq!(change["artifactLocation"]["uri"], format!("file://{}", findings[4].page));
        assert_eq!(
            change["replacements"],
            json!([{"deletedRegion": {"startLine": 22, "startColumn": 1, "endLine": 23, "endColumn": 1}, "insertedContent": {"text": "01\tRP\n"}}])
        );
        assert_eq!(error["properties"]["correction"]["diff"], findings[4].correction.as_ref().unwrap().diff);
        assert_eq!(error["properties"]["correction"]["edits"][0]["edit"], "row_name");
        // A warning without a proposal says that no page edit explains it.
        let mut w = findings[2].clone();
        w.proposal = None;
        assert!(message(&w).contains("interaction, bits 80..81: no page edit explains it."), "{}", message(&w));
    }

    #[test]
    fn report_sarif_uris() {
        assert_eq!(artifact_uri("corpus/isa/sm90/DFMA.txt").as_deref(), Some("corpus/isa/sm90/DFMA.txt"));
        assert_eq!(artifact_uri("/w/a b/I2F.???0:x#%.txt").as_deref(), Some("file:///w/a%20b/I2F.%3F%3F%3F0%3Ax%23%25.txt"));
        assert_eq!(artifact_uri(r"C:\pages\DFMA.txt").as_deref(), Some("file:///C:/pages/DFMA.txt"));
        assert_eq!(artifact_uri("a:b").as_deref(), Some("a%3Ab"), "a relative path is not read as a scheme");
        assert_eq!(artifact_uri("é").as_deref(), Some("%C3%A9"));
        assert_eq!(artifact_uri(" "), None);
        // No page: no location; line 0: no region.
        let spec = fixture::spec();
        let (_, findings) = fixture::data(&spec);
        let mut f = findings[0].clone();
        f.line = 0;
        assert_eq!(result(&f).locations[0].physical_location.region, None);
        f.page = String::new();
        assert!(result(&f).locations.is_empty());
    }

    #[test]
    fn report_sarif_replacements_from_diffs() {
        let region = |s, e| Region { start_line: s, start_column: Some(1), end_line: Some(e), end_column: Some(1) };
        let text = |t: &str| Some(ArtifactContent { text: t.into() });
        // Context lines are kept, two hunks give two replacements, headers are skipped.
        let r = replacements("--- a/p\n+++ b/p\n@@ -3,3 +3,2 @@ x\n a\n-b\n c\n@@ -10,0 +9,1 @@\n+new\n").unwrap();
        assert_eq!(
            r,
            [
                Replacement { deleted_region: region(3, 6), inserted_content: text("a\nc\n") },
                Replacement { deleted_region: region(11, 11), inserted_content: text("new\n") },
            ]
        );
        // A pure deletion inserts nothing; "\ No newline" is skipped; a deleted "--- " line is a deletion.
        let r = replacements("@@ -5,2 +4,0 @@\n--- x\n-é\n\\ No newline at end of file\n").unwrap();
        assert_eq!(r, [Replacement { deleted_region: region(5, 7), inserted_content: None }]);
        // Malformed or empty diffs give no fix.
        for bad in ["", "no hunk", "@@ -1,2 +1,2 @@\n-a\n", "@@ -x +1 @@\n+a\n", "@@ -1 +1 @@\n?a\n+b\n", "@@ -0,1 +0,1 @@\n-a\n+b\n", "@@ -1 +1\n-a\n+b\n"] {
            assert_eq!(replacements(bad), None, "{bad:?}");
        }
    }
}
