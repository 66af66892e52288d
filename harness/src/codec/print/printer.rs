//! Printing many words: every form's [`PrintPlan`] and compiled form built once, for a
//! whole codec ([`Printer`]) or one form ([`FormPrinter`]).

use super::{fast, print_planned, PrintPlan};
#[cfg(doc)]
use super::{print, print_with, print_word};
use crate::codec::bits::Values;
use crate::codec::conventions::FormConventions;
use crate::sass::Instruction;
use crate::spec::Variant;
use crate::word::Word;

/// Every form of a codec with its [`PrintPlan`] for the stored conventions, built once:
/// [`print_word`] and [`print()`] for many words.
pub struct Printer<'c, 's> {
    codec: &'c crate::codec::Codec<'s>,
    /// Each variant's conventions: stored ([`Printer::new`]) or given ([`Printer::with`]).
    conventions: Vec<Option<&'c FormConventions>>,
    /// One per codec variant.
    plans: Vec<PrintPlan>,
    /// The forms compiled to print straight into a buffer ([`Printer::print_word_into`]).
    pub(super) compiled: fast::Compiled,
}

impl<'c, 's> Printer<'c, 's> {
    /// Compiles every form of `codec`, which costs far more than printing one word: build
    /// one and print many words with it.
    pub fn new(codec: &'c crate::codec::Codec<'s>) -> Printer<'c, 's> {
        Printer::with(codec, codec.variants().iter().map(|v| v.conventions.as_deref()).collect())
    }

    /// A printer with `conventions` (one per codec variant) in place of the stored ones:
    /// its `print_word` is then [`print_with`] with those (what a validation predicts
    /// with what it learned).
    pub fn with(codec: &'c crate::codec::Codec<'s>, conventions: Vec<Option<&'c FormConventions>>) -> Printer<'c, 's> {
        let plans: Vec<PrintPlan> = codec.variants().iter().zip(&conventions).map(|(v, &c)| PrintPlan::new(v, c, true)).collect();
        let compiled = fast::Compiled::new(codec.variants(), &plans, &conventions);
        Printer { codec, conventions, plans, compiled }
    }

    /// The codec whose variants it prints.
    pub fn codec(&self) -> &'c crate::codec::Codec<'s> {
        self.codec
    }

    /// [`print_word`] of variant `vi`.
    pub fn print_word(&self, vi: usize, values: &Values, word: Word) -> Instruction {
        let v = self.codec.variant(vi);
        print_planned(v, &self.plans[vi], values, self.conventions[vi].map(|c| (c, word)))
    }

    /// [`print()`] of variant `vi`: the page's printing, no stored conventions.
    pub fn print(&self, vi: usize, values: &Values) -> Instruction {
        let v = self.codec.variant(vi);
        print_planned(v, &self.plans[vi], values, None)
    }

    /// [`Printer::print_word`]'s text appended to `out`: the fast way to print many words
    /// (reuse one buffer), written straight into `out` for most forms, without building
    /// an [`Instruction`].
    pub fn print_word_into(&self, vi: usize, values: &Values, word: Word, out: &mut String) {
        self.print_planned_into(vi, values, Some(word), out);
    }

    /// [`Printer::print`]'s text appended to `out`.
    pub fn print_into(&self, vi: usize, values: &Values, out: &mut String) {
        self.print_planned_into(vi, values, None, out);
    }

    /// `word`: print with the stored conventions, if any.
    fn print_planned_into(&self, vi: usize, values: &Values, word: Option<Word>, out: &mut String) {
        let page = || fast::Page { v: self.codec.variant(vi), plan: &self.plans[vi] };
        // The compiled form alone is read (its conventions stored iff it has a control table).
        if let Some(f) = &self.compiled.forms[vi] {
            if self.compiled.print(f, page, values, word.filter(|_| f.has_conventions()), out) {
                return;
            }
        }
        let v = self.codec.variant(vi);
        let learned = word.and_then(|w| Some((self.conventions[vi]?, w)));
        use std::fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(out, "{}", print_planned(v, &self.plans[vi], values, learned));
    }
}

/// One form's [`Printer`]: its plan and compiled form for given conventions, built once,
/// for many words of that form (a page version under judgement has its own variant, and
/// compiling its whole codec would cost more than its words).
pub struct FormPrinter<'c> {
    conventions: Option<&'c FormConventions>,
    plan: PrintPlan,
    compiled: fast::Compiled,
}

impl<'c> FormPrinter<'c> {
    /// `v`'s printer with `conventions` (as [`print_with`] prints with them).
    pub fn new(v: &Variant, conventions: Option<&'c FormConventions>) -> FormPrinter<'c> {
        let plan = PrintPlan::new(v, conventions, true);
        let compiled = fast::Compiled::new(&[v], std::slice::from_ref(&plan), &[conventions]);
        FormPrinter { conventions, plan, compiled }
    }

    /// [`print_with`] of `word` (its values `values`) with the printer's conventions;
    /// `v` must be the variant it was built for.
    pub fn print_word(&self, v: &Variant, values: &Values, word: Word) -> Instruction {
        print_planned(v, &self.plan, values, self.conventions.map(|c| (c, word)))
    }

    /// [`FormPrinter::print_word`]'s text appended to `out`, written straight into it
    /// where the form compiles.
    pub fn print_word_into(&self, v: &Variant, values: &Values, word: Word, out: &mut String) {
        let page = || fast::Page { v, plan: &self.plan };
        if let Some(Some(f)) = self.compiled.forms.first() {
            if self.compiled.print(f, page, values, Some(word).filter(|_| f.has_conventions()), out) {
                return;
            }
        }
        use std::fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(out, "{}", self.print_word(v, values, word));
    }
}
