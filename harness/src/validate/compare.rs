//! Comparing what the page predicts with what nvdisasm printed, structurally.
//!
//! An instruction is split into named elements (`pred`, `mods`, `op2.body`, `op2.neg`, …)
//! so a disagreement can be pinned to the operand or modifier it touches. `.reuse` is a
//! control field nvdisasm prints only in some combinations; it is not compared.

use crate::sass::{Body, Instruction, Terminator};

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Agree,
    /// Same meaning, different text: what differs.
    Syntax(&'static str),
    Differ,
}

/// Element name → canonical value text.
pub fn elements(i: &Instruction) -> Vec<(String, String)> {
    let mut out = vec![];
    out.push(("mnemonic".to_string(), i.mnemonic.clone()));
    out.push(("pred".to_string(), i.pred.as_ref().map(|p| p.to_string()).unwrap_or_default()));
    out.push(("mods".to_string(), i.modifiers.join(".")));
    out.push(("arity".to_string(), i.operands.len().to_string()));
    for (k, o) in i.operands.iter().enumerate() {
        match &o.body {
            Body::Const { bank, offset } => {
                out.push((format!("op{k}.bank"), format!("{bank:#x}")));
                out.push((format!("op{k}.offset"), crate::sass::hex_signed(*offset)));
            }
            Body::ConstX { ureg, offset } => {
                out.push((format!("op{k}.bank"), Body::UReg { n: *ureg }.to_string()));
                out.push((format!("op{k}.offset"), crate::sass::hex_signed(*offset)));
            }
            b => out.push((format!("op{k}.body"), canonical_body(b))),
        }
        out.push((format!("op{k}.neg"), o.neg.to_string()));
        out.push((format!("op{k}.abs"), o.abs.to_string()));
        out.push((format!("op{k}.not"), o.not.to_string()));
        out.push((format!("op{k}.sfx"), o.suffixes.join(".")));
    }
    out
}

fn canonical_body(b: &Body) -> String {
    match b {
        Body::Float { value, .. } if value.is_nan() => "NaN".into(),
        Body::Float { value, .. } => format!("f{:016x}", value.to_bits()),
        b => b.to_string(),
    }
}

/// Names of elements whose values differ between `a` and `b`.
pub fn changed(a: &Instruction, b: &Instruction) -> Vec<String> {
    let ea = elements(a);
    let eb = elements(b);
    let mut out: Vec<String> = vec![];
    for (n, v) in &ea {
        match eb.iter().find(|(m, _)| m == n) {
            Some((_, w)) if w == v => {}
            _ => out.push(n.clone()),
        }
    }
    for (n, _) in &eb {
        if !ea.iter().any(|(m, _)| m == n) {
            out.push(n.clone());
        }
    }
    out
}

pub fn element_value(i: &Instruction, name: &str) -> Option<String> {
    elements(i).into_iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

pub fn compare(expected: &Instruction, actual: &Instruction) -> Verdict {
    let strip = |i: &Instruction| {
        let mut j = i.clone();
        for o in &mut j.operands {
            o.reuse = false;
        }
        j
    };
    let (e, a) = (strip(expected), strip(actual));
    if e.to_string() == a.to_string() {
        return Verdict::Agree;
    }
    if !changed(&e, &a).is_empty() {
        // Modifier order alone?
        let mut em = e.modifiers.clone();
        let mut am = a.modifiers.clone();
        em.sort();
        am.sort();
        let ch = changed(&e, &a);
        if em == am && ch.iter().all(|c| c == "mods") {
            return Verdict::Syntax("modifier order");
        }
        // Suffix order alone?
        if ch.iter().all(|c| c.ends_with(".sfx")) {
            let same = e.operands.iter().zip(&a.operands).all(|(x, y)| {
                let mut s = x.suffixes.clone();
                let mut t = y.suffixes.clone();
                s.sort();
                t.sort();
                s == t
            });
            if same {
                return Verdict::Syntax("suffix order");
            }
        }
        return Verdict::Differ;
    }
    if e.terminator != a.terminator && e.terminator != Terminator::Missing {
        let mut e2 = e.clone();
        e2.terminator = a.terminator;
        if e2.to_string() == a.to_string() {
            return Verdict::Syntax("terminator spacing");
        }
    }
    Verdict::Syntax("number spelling")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::parse_instruction as p;

    #[test]
    fn verdicts() {
        let a = p("@P0 DFMA R0, R0, R0, R0 ;").unwrap();
        assert_eq!(compare(&a, &a), Verdict::Agree);
        assert_eq!(compare(&a, &p("@P0 DFMA R0, R0, R0, R0;").unwrap()), Verdict::Syntax("terminator spacing"));
        assert_eq!(compare(&a, &p("@P0 DFMA R0, R0.reuse, R0, R0 ;").unwrap()), Verdict::Agree);
        assert_eq!(compare(&a, &p("@P0 DFMA R0, R1, R0, R0 ;").unwrap()), Verdict::Differ);
        let f = p("DFMA R0, R0, R0, 1e2 ;").unwrap();
        assert_eq!(compare(&f, &p("DFMA R0, R0, R0, 100 ;").unwrap()), Verdict::Syntax("number spelling"));
        assert_eq!(compare(&p("I2F.A.B R0 ;").unwrap(), &p("I2F.B.A R0 ;").unwrap()), Verdict::Syntax("modifier order"));
        let c = p("DFMA R0, R0, R0, c[0x1][0x0] ;").unwrap();
        let d = p("DFMA R0, R0, R0, c[0x0][-0x8000] ;").unwrap();
        assert_eq!(changed(&c, &d), vec!["op3.bank", "op3.offset"]);
    }
}
