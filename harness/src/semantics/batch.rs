//! `sass-harness model`: one word on named inputs, or a JSON-lines batch of them.

use super::{predict, Inputs, ModelError, Outputs};
use crate::codec::Codec;
use crate::spec::Arch;
use crate::word::Word;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};

/// One request line: `{"word":"0x…","inputs":{"R2":"0x…","P0":1}}`.
#[derive(Deserialize)]
struct Request {
    word: String,
    #[serde(default)]
    inputs: BTreeMap<String, serde_json::Value>,
}

/// Parse `0x…`/decimal strings or JSON integers into [`Inputs`].
fn inputs_of(map: &BTreeMap<String, serde_json::Value>) -> Result<Inputs, String> {
    let mut inputs = Inputs::default();
    for (k, v) in map {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.to_string(),
            other => return Err(format!("input {k}: {other} is not a number or a string")),
        };
        inputs.parse_assignment(&format!("{k}={text}")).map_err(|e| e.to_string())?;
    }
    Ok(inputs)
}

/// A word as `0x…` or bare hex digits.
pub fn parse_word(text: &str) -> Result<Word, ModelError> {
    let t = text.trim();
    let t = t.strip_prefix("0x").unwrap_or(t);
    Word::parse_hex(t).ok_or_else(|| ModelError::BadWord(text.to_string()))
}

/// The outputs as a JSON object `{"R0":"0x…"}` (hex, zero-padded to the width).
pub fn outputs_json(o: &Outputs) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> =
        o.0.iter().map(|x| (x.loc.to_string(), format!("{:#0w$x}", x.bits, w = (x.width / 4 + 2) as usize).into())).collect();
    serde_json::Value::Object(map)
}

/// One word on `REG=VALUE` assignments.
pub fn model_one(codec: &Codec, arch: Arch, word: &str, assignments: &[String]) -> Result<Outputs, ModelError> {
    let w = parse_word(word)?;
    let mut inputs = Inputs::default();
    for a in assignments {
        inputs.parse_assignment(a)?;
    }
    predict(codec, arch, w, &inputs)
}

/// Every line of `input` → one line of `out`, in order: `{"outputs":…}` or `{"error":…}`.
/// Returns how many lines were errors; `Err` only when reading or writing fails.
pub fn model_batch(codec: &Codec, arch: Arch, input: impl BufRead, mut out: impl Write) -> std::io::Result<usize> {
    let mut errors = 0;
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(|e| std::io::Error::new(e.kind(), format!("reading line {}: {e}", i + 1)))?;
        if line.trim().is_empty() {
            continue;
        }
        let result = serde_json::from_str::<Request>(&line)
            .map_err(|e| format!("line {}: {e}", i + 1))
            .and_then(|r| Ok((parse_word(&r.word).map_err(|e| e.to_string())?, inputs_of(&r.inputs)?)))
            .and_then(|(w, inputs)| predict(codec, arch, w, &inputs).map_err(|e| format!("line {}: {e}", i + 1)));
        let v = match result {
            Ok(o) => serde_json::json!({ "outputs": outputs_json(&o) }),
            Err(e) => {
                errors += 1;
                serde_json::json!({ "error": e })
            }
        };
        writeln!(out, "{v}")?;
    }
    Ok(errors)
}
