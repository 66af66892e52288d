//! Comparing what the page predicts with what nvdisasm printed, structurally. Shared by
//! `validate` (probe words) and `realcode` (compiled kernels).
//!
//! An instruction is split into named elements (`pred`, `mods`, `op2.body`, `op2.neg`, …)
//! so a disagreement can be pinned to the operand or modifier it touches. `.reuse` is a
//! control field nvdisasm prints only in some combinations: a difference in it is syntax.

use crate::sass::{Body, InstRef, Instruction, Operand, Predicate, Terminator};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Agree,
    /// Same meaning, different text: what differs.
    Syntax(&'static str),
    Differ,
}

/// A part of an instruction that comparing tells apart, and that a disagreement is
/// pinned to. Its name (`Display`) is what reports and proposals show: `mnemonic`,
/// `pred`, `mods`, `arity`, `op2.body`, `op3.sfx`, …
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Element {
    /// The mnemonic.
    Mnemonic,
    /// The guard predicate.
    Pred,
    /// The modifiers, as a set (their order alone is syntax).
    Mods,
    /// The number of operands.
    Arity,
    /// Part `part` of operand `k` (counted as printed, from 0).
    Operand {
        /// The printed operand.
        k: usize,
        /// Which part of it.
        part: Part,
    },
    /// No element of a text: nvdisasm rejects a word the page describes.
    Legality,
}

impl Element {
    /// A difference in operand suffixes (`op1.sfx`)?
    pub fn is_suffix(self) -> bool {
        matches!(self, Element::Operand { part: Part::Sfx, .. })
    }
}

impl std::fmt::Display for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Element::Mnemonic => f.write_str("mnemonic"),
            Element::Pred => f.write_str("pred"),
            Element::Mods => f.write_str("mods"),
            Element::Arity => f.write_str("arity"),
            Element::Operand { k, part } => write!(f, "op{k}.{}", part.name()),
            Element::Legality => f.write_str("<legality>"),
        }
    }
}

/// Ordered by name, as the names were sorted when elements were strings (`op10.body`
/// before `op2.body`): the order disagreements are minimized and reported in.
impl Ord for Element {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for Element {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Each element → canonical value text.
pub fn elements(i: &Instruction) -> Vec<(Element, String)> {
    let mut out = vec![
        (Element::Mnemonic, i.mnemonic.clone()),
        (Element::Pred, i.pred.as_ref().map(|p| p.to_string()).unwrap_or_default()),
        (Element::Mods, i.modifiers.join(".")),
        (Element::Arity, i.operands.len().to_string()),
    ];
    for (k, o) in i.operands.iter().enumerate() {
        for &part in kinds(&o.body) {
            out.push((Element::Operand { k, part }, part_text(o, part)));
        }
    }
    out
}

/// The canonical text of one part of an operand.
fn part_text(o: &Operand, part: Part) -> String {
    match (part, &o.body) {
        (Part::Neg, _) => o.neg.to_string(),
        (Part::Abs, _) => o.abs.to_string(),
        (Part::Not, _) => o.not.to_string(),
        (Part::Sfx, _) => o.suffixes.join("."),
        (Part::Bank, Body::Const { bank, .. }) => format!("{bank:#x}"),
        (Part::Bank, Body::ConstX { ureg, .. }) => Body::UReg { n: *ureg }.to_string(),
        (Part::Offset, Body::Const { offset, .. } | Body::ConstX { offset, .. }) => crate::sass::hex_signed(*offset),
        (_, b) => canonical_body(b),
    }
}

fn canonical_body(b: &Body) -> String {
    match b {
        Body::Float { value, .. } if value.is_nan() => "NaN".into(),
        Body::Float { value, .. } => format!("f{:016x}", value.to_bits()),
        b => b.to_string(),
    }
}

/// The elements whose values differ between `a` and `b`, in [`elements`] order: `a`'s
/// elements first, then those only `b` has. Modifiers count as a set: their order alone
/// is syntax ([`compare`] reports it), so a word whose operands differ and whose
/// modifiers are merely reordered is pinned to the operands alone. Structural (no text
/// is built): this runs for every disagreeing word.
pub fn changed(a: &Instruction, b: &Instruction) -> Vec<Element> {
    changed_of(a, b)
}

/// [`changed`] of instructions owned or read from a text as borrowed tokens (nvdisasm's
/// text then needs no copy: [`InstRef::parse`]).
pub(crate) fn changed_of(a: &impl Compared, b: &impl Compared) -> Vec<Element> {
    let mut out: Vec<Element> = vec![];
    if a.mnemonic() != b.mnemonic() {
        out.push(Element::Mnemonic);
    }
    if a.pred() != b.pred() {
        out.push(Element::Pred);
    }
    if !a.modifiers().same_set(b.modifiers()) {
        out.push(Element::Mods);
    }
    let (na, nb) = (a.n_operands(), b.n_operands());
    if na != nb {
        out.push(Element::Arity);
    }
    for k in 0..na {
        let x = a.operand(k);
        let y = (k < nb).then(|| b.operand(k));
        for &part in kinds(x.body) {
            let same = y.is_some_and(|y| kinds(y.body).contains(&part) && part_eq(&x, &y, part));
            if !same {
                out.push(Element::Operand { k, part });
            }
        }
    }
    for k in 0..nb {
        let y = b.operand(k);
        for &part in kinds(y.body) {
            if !(k < na && kinds(a.operand(k).body).contains(&part)) {
                out.push(Element::Operand { k, part });
            }
        }
    }
    out
}

/// Modifiers or suffixes, owned or borrowed.
#[derive(Clone, Copy)]
pub(crate) enum Tokens<'a> {
    Owned(&'a [String]),
    Borrowed(&'a [&'a str]),
}

impl<'a> Tokens<'a> {
    fn len(self) -> usize {
        match self {
            Tokens::Owned(t) => t.len(),
            Tokens::Borrowed(t) => t.len(),
        }
    }

    fn iter(self) -> impl Iterator<Item = &'a str> {
        (0..self.len()).map(move |i| match self {
            Tokens::Owned(t) => t[i].as_str(),
            Tokens::Borrowed(t) => t[i],
        })
    }

    fn same(self, other: Tokens) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(x, y)| x == y)
    }

    /// The same tokens, in any order.
    fn same_set(self, other: Tokens) -> bool {
        if self.len() != other.len() {
            return false;
        }
        if self.same(other) {
            return true;
        }
        let mut x: Vec<&str> = self.iter().collect();
        let mut y: Vec<&str> = other.iter().collect();
        x.sort();
        y.sort();
        x == y
    }
}

/// An operand as comparing reads it; `text` is a float's or a verbatim body's spelling.
#[derive(Clone, Copy)]
pub(crate) struct OperandView<'a> {
    neg: bool,
    abs: bool,
    not: bool,
    reuse: bool,
    body: &'a Body,
    text: &'a str,
    suffixes: Tokens<'a>,
}

/// What comparing reads of an instruction: an owned [`Instruction`] or an [`InstRef`]
/// borrowed from a text, so that either side is compared without a copy.
pub(crate) trait Compared {
    fn mnemonic(&self) -> &str;
    fn pred(&self) -> Option<&Predicate>;
    fn modifiers(&self) -> Tokens<'_>;
    fn n_operands(&self) -> usize;
    /// Operand `k` (below [`Compared::n_operands`]).
    fn operand(&self, k: usize) -> OperandView<'_>;
    fn terminator(&self) -> Terminator;
}

impl Compared for Instruction {
    fn mnemonic(&self) -> &str {
        &self.mnemonic
    }

    fn pred(&self) -> Option<&Predicate> {
        self.pred.as_ref()
    }

    fn modifiers(&self) -> Tokens<'_> {
        Tokens::Owned(&self.modifiers)
    }

    fn n_operands(&self) -> usize {
        self.operands.len()
    }

    fn operand(&self, k: usize) -> OperandView<'_> {
        let o = &self.operands[k];
        let text = match &o.body {
            Body::Float { text, .. } | Body::Other { text } => text.as_str(),
            _ => "",
        };
        OperandView { neg: o.neg, abs: o.abs, not: o.not, reuse: o.reuse, body: &o.body, text, suffixes: Tokens::Owned(&o.suffixes) }
    }

    fn terminator(&self) -> Terminator {
        self.terminator
    }
}

impl Compared for InstRef<'_> {
    fn mnemonic(&self) -> &str {
        self.mnemonic
    }

    fn pred(&self) -> Option<&Predicate> {
        self.pred.as_ref()
    }

    fn modifiers(&self) -> Tokens<'_> {
        Tokens::Borrowed(InstRef::modifiers(self))
    }

    fn n_operands(&self) -> usize {
        self.operands.len()
    }

    fn operand(&self, k: usize) -> OperandView<'_> {
        let o = &self.operands[k];
        OperandView { neg: o.neg, abs: o.abs, not: o.not, reuse: o.reuse, body: &o.body, text: o.text, suffixes: Tokens::Borrowed(self.suffixes(o)) }
    }

    fn terminator(&self) -> Terminator {
        self.terminator
    }
}

/// A part of an operand, as [`Element::Operand`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    Body,
    Bank,
    Offset,
    Neg,
    Abs,
    Not,
    Sfx,
}

impl Part {
    /// The part's name in an element's (`op2.body`).
    pub fn name(self) -> &'static str {
        match self {
            Part::Body => "body",
            Part::Bank => "bank",
            Part::Offset => "offset",
            Part::Neg => "neg",
            Part::Abs => "abs",
            Part::Not => "not",
            Part::Sfx => "sfx",
        }
    }
}

/// The parts of an operand with this body, in [`elements`] order.
fn kinds(body: &Body) -> &'static [Part] {
    match body {
        Body::Const { .. } | Body::ConstX { .. } => &[Part::Bank, Part::Offset, Part::Neg, Part::Abs, Part::Not, Part::Sfx],
        _ => &[Part::Body, Part::Neg, Part::Abs, Part::Not, Part::Sfx],
    }
}

/// Whether element `part` has the same canonical value in both (see [`elements`]).
fn part_eq(x: &OperandView, y: &OperandView, part: Part) -> bool {
    match part {
        Part::Neg => x.neg == y.neg,
        Part::Abs => x.abs == y.abs,
        Part::Not => x.not == y.not,
        Part::Sfx => x.suffixes.same(y.suffixes),
        Part::Bank => match (x.body, y.body) {
            (Body::Const { bank: p, .. }, Body::Const { bank: q, .. }) => p == q,
            (Body::ConstX { ureg: p, .. }, Body::ConstX { ureg: q, .. }) => p == q,
            _ => false,
        },
        Part::Offset => match (x.body, y.body) {
            (Body::Const { offset: p, .. } | Body::ConstX { offset: p, .. }, Body::Const { offset: q, .. } | Body::ConstX { offset: q, .. }) => p == q,
            _ => false,
        },
        Part::Body => match (x.body, y.body) {
            // Every NaN is one value; otherwise the exact bits (-0.0 is not 0.0).
            (Body::Float { value: p, .. }, Body::Float { value: q, .. }) => (p.is_nan() && q.is_nan()) || p.to_bits() == q.to_bits(),
            // A borrowed verbatim body's text is the view's (`InstRef` leaves it out).
            (Body::Other { .. }, Body::Other { .. }) => x.text == y.text,
            (p, q) => p == q,
        },
    }
}

/// The canonical value text of element `el` of `i`, if `i` has it.
pub fn element_value(i: &Instruction, el: Element) -> Option<String> {
    elements(i).into_iter().find(|(n, _)| *n == el).map(|(_, v)| v)
}

pub fn compare(expected: &Instruction, actual: &Instruction) -> Verdict {
    compare_changed(expected, actual, &changed(expected, actual))
}

/// [`compare`] given `ch`, [`changed`]`(expected, actual)` (for a caller that keeps it).
pub fn compare_changed(expected: &Instruction, actual: &Instruction, ch: &[Element]) -> Verdict {
    compare_changed_of(expected, actual, ch)
}

/// [`compare_changed`] of instructions owned or borrowed ([`Compared`]).
pub(crate) fn compare_changed_of(expected: &impl Compared, actual: &impl Compared, ch: &[Element]) -> Verdict {
    let n = expected.n_operands().min(actual.n_operands());
    let pairs = || (0..n).map(|k| (expected.operand(k), actual.operand(k)));
    if !ch.is_empty() {
        // Suffix order alone?
        if ch.iter().all(|c| c.is_suffix()) && pairs().all(|(x, y)| x.suffixes.same_set(y.suffixes)) {
            return Verdict::Syntax("suffix order");
        }
        return Verdict::Differ;
    }
    if !expected.modifiers().same(actual.modifiers()) {
        return Verdict::Syntax("modifier order");
    }
    // Same meaning, same order: the text can still differ in a float's spelling or in
    // the terminator's spacing (`.reuse` is not compared; everything else is structure).
    let spelled_alike = pairs().all(|(x, y)| match (x.body, y.body) {
        (Body::Float { .. }, Body::Float { .. }) => x.text == y.text,
        _ => true,
    });
    let reuse_alike = pairs().all(|(x, y)| x.reuse == y.reuse);
    match (spelled_alike, expected.terminator() == actual.terminator()) {
        (true, true) if !reuse_alike => Verdict::Syntax("reuse flags"),
        (true, true) => Verdict::Agree,
        (true, false) if expected.terminator() != Terminator::Missing => Verdict::Syntax("terminator spacing"),
        _ => Verdict::Syntax("number spelling"),
    }
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
        assert_eq!(compare(&a, &p("@P0 DFMA R0, R0.reuse, R0, R0 ;").unwrap()), Verdict::Syntax("reuse flags"));
        assert_eq!(compare(&a, &p("@P0 DFMA R0, R1, R0, R0 ;").unwrap()), Verdict::Differ);
        let f = p("DFMA R0, R0, R0, 1e2 ;").unwrap();
        assert_eq!(compare(&f, &p("DFMA R0, R0, R0, 100 ;").unwrap()), Verdict::Syntax("number spelling"));
        assert_eq!(compare(&p("I2F.A.B R0 ;").unwrap(), &p("I2F.B.A R0 ;").unwrap()), Verdict::Syntax("modifier order"));
        let c = p("DFMA R0, R0, R0, c[0x1][0x0] ;").unwrap();
        let d = p("DFMA R0, R0, R0, c[0x0][-0x8000] ;").unwrap();
        assert_eq!(names(changed(&c, &d)), ["op3.bank", "op3.offset"]);
        // Reordered modifiers are syntax; with a changed operand only the operand counts.
        let m = p("FHFMA.RP.BF16 R0, R0, UR255, R0 ;").unwrap();
        let n = p("FHFMA.BF16.RP R0, R0, URZ, R0 ;").unwrap();
        assert_eq!(names(changed(&m, &n)), ["op2.body"]);
        assert_eq!(compare(&m, &n), Verdict::Differ);
        assert_eq!(changed(&m, &p("FHFMA.RP R0, R0, UR255, R0 ;").unwrap()), [Element::Mods]);
        assert_eq!(compare(&m, &p("FHFMA.BF16.RP R0, R0, UR255, R0 ;").unwrap()), Verdict::Syntax("modifier order"));
        // Operands that change kind or appear on one side only name every element.
        let r = p("DFMA R0, -R1.H1, R2 ;").unwrap();
        let q = p("DFMA R0, c[0x1][0x4], R2, R3 ;").unwrap();
        assert_eq!(
            names(changed(&r, &q)),
            ["arity", "op1.body", "op1.neg", "op1.sfx", "op1.bank", "op1.offset", "op3.body", "op3.neg", "op3.abs", "op3.not", "op3.sfx"]
        );
        // changed() and elements() name the same elements; element_value reads them.
        let all: Vec<Element> = elements(&r).into_iter().chain(elements(&q)).map(|(n, _)| n).collect();
        assert!(changed(&r, &q).iter().all(|c| all.contains(c)));
        let op1 = |part| Element::Operand { k: 1, part };
        assert_eq!(element_value(&q, op1(Part::Bank)).as_deref(), Some("0x1"));
        assert_eq!(element_value(&q, op1(Part::Offset)).as_deref(), Some("0x4"));
        assert_eq!(element_value(&r, op1(Part::Sfx)).as_deref(), Some("H1"));
        // Every NaN is one value; -0.0 is not 0.0.
        let n1 = p("DFMA R0, R0, R0, +QNAN ;").unwrap();
        let n2 = p("DFMA R0, R0, R0, -QNAN ;").unwrap();
        assert!(changed(&n1, &n2).is_empty());
        assert_eq!(names(changed(&p("DFMA R0, R0, R0, 0 ;").unwrap(), &p("DFMA R0, R0, R0, -0 ;").unwrap())), ["op3.body"]);
    }

    fn names(els: Vec<Element>) -> Vec<String> {
        els.iter().map(Element::to_string).collect()
    }

    /// Elements sort as their names do (`op10.body` before `op2.body`, `<legality>`
    /// first), and every part of operand 0 is named once.
    #[test]
    fn elements_sort_by_name() {
        let op = |k, part| Element::Operand { k, part };
        let mut els = vec![Element::Pred, op(2, Part::Body), op(10, Part::Body), Element::Legality, Element::Mods, Element::Arity, Element::Mnemonic];
        els.sort();
        assert_eq!(names(els), ["<legality>", "arity", "mnemonic", "mods", "op10.body", "op2.body", "pred"]);
        let parts = [Part::Body, Part::Bank, Part::Offset, Part::Neg, Part::Abs, Part::Not, Part::Sfx];
        let named: std::collections::HashSet<String> = parts.iter().map(|&part| op(0, part).to_string()).collect();
        assert_eq!(named.len(), parts.len());
        assert!(op(3, Part::Sfx).is_suffix() && !op(3, Part::Neg).is_suffix());
    }

    /// A text read as borrowed tokens compares as its parsed instruction does: every pair
    /// of these texts, the second side owned or borrowed (floats, memory operands,
    /// constants, suffixes, predicates, modifiers in another order).
    #[test]
    fn borrowed_texts_compare_as_parsed_ones() {
        let texts = [
            "@P0 DFMA R0, R0, R0, R0 ;",
            "@P0 DFMA R0, R0, R0, R0;",
            "@!P1 DFMA R0, R0.reuse, R0, R0 ;",
            "DFMA R0, R0, R0, 1.5 ;",
            "DFMA R0, R0, R0, 1.50000000000000000001 ;",
            "DFMA R0, -R1.H1, |R2|, c[0x1][0x4] ;",
            "DFMA R0, R1.H1, R2, c[0x0][-0x8000] ;",
            "FHFMA.RP.BF16 R0, R0, UR255, R0 ;",
            "FHFMA.BF16.RP R0, R0, URZ, R0 ;",
            "LDG.E.64 R2, desc[UR4][R2.64+0x10] ;",
            "LDG.E.64 R2, desc[UR4][R2.64+0x20] ;",
            "HADD2 R0, R1.H0_H0, -R2.H1_H1 ;",
            "HADD2 R0, R1.H1_H1, -R2.H0_H0 ;",
            "ISETP.GE.AND P0, PT, R1, 0x10, PT ;",
        ];
        for a in texts {
            let a = p(a).unwrap();
            for b in texts {
                let (owned, borrowed) = (p(b).unwrap(), InstRef::parse(b).unwrap_or_else(|| panic!("{b}")));
                let ch = changed(&a, &owned);
                assert_eq!(changed_of(&a, &borrowed), ch, "{a} / {b}");
                assert_eq!(compare_changed_of(&a, &borrowed, &ch), compare_changed(&a, &owned, &ch), "{a} / {b}");
            }
        }
    }
}
