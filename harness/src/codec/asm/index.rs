//! The assembler's index: variants by architecture and mnemonic, each with a summary
//! that rejects most candidates before their forms are read.

use super::*;

/// The assembler for one codec: variants indexed by architecture and mnemonic, each with
/// what matching text against it needs (modifier slots, the tokens they can read) worked
/// out once, so that assembling a text tries a handful of variants and rejects most by
/// their operand shape, tokens and memory operands before filling any field. A plain text
/// is read without allocating (`text`), and token names are looked up once per text.
///
/// Most texts meet variants not read lately (thousands of them), whose memory is not in
/// cache: what a text reads of a variant is kept small and together (an `Entry` per
/// candidate, then the variant's `Form`), not read from the spec.
pub struct Assembler<'c, 's> {
    codec: &'c Codec<'s>,
    /// Variants by architecture and mnemonic, in codec order (the order of
    /// [`AsmError::Ambiguous`]'s keys).
    index: Vec<(Arch, ByMnemonic)>,
    /// One per codec variant.
    forms: Vec<Form<'s>>,
    vocabulary: Vocabulary<'s>,
}

/// One architecture's variants by mnemonic.
pub(super) type ByMnemonic = StrMap<Vec<Entry>>;

impl<'c, 's> Assembler<'c, 's> {
    /// Indexes every form of `codec` by architecture and mnemonic (build one and assemble
    /// many texts with it).
    pub fn new(codec: &'c Codec<'s>) -> Assembler<'c, 's> {
        let mut vocabulary = Vocabulary::All(StrMap::default());
        let mut rows = SlotPool::default();
        let forms: Vec<Form> = codec.variants().iter().map(|v| Form::new(v, &mut vocabulary, &mut rows)).collect();
        let mut index: Vec<(Arch, ByMnemonic)> = vec![];
        for (vi, v) in codec.variants().iter().enumerate() {
            let k = match index.iter().position(|(a, _)| *a == v.arch) {
                Some(k) => k,
                None => {
                    index.push((v.arch, StrMap::default()));
                    index.len() - 1
                }
            };
            index[k].1.get_or_insert_with(&v.mnemonic, Vec::new).push(Entry::new(vi, &forms[vi]));
        }
        Assembler { codec, index, forms, vocabulary }
    }

    /// The codec it assembles for.
    pub fn codec(&self) -> &'c Codec<'s> {
        self.codec
    }

    /// Same result as [`assemble`].
    pub fn assemble(&self, arch: Arch, text: &str, controls_from: Word) -> Result<(usize, Word), AsmError> {
        // A plain text is read without allocating; the full parser reads the rest. The
        // fast reading is the full parser's (`sass::quick`'s tests): a text it reads that does not
        // assemble as written goes straight to the other readings, not parsed again.
        match &InstRef::parse(text) {
            Some(inst) => self.assemble_ref(arch, inst, controls_from, false).or_else(|e| self.reread(arch, &inst.to_instruction(), inst, controls_from, e)),
            None => self.assemble_inst(arch, &sass::parse_full(text)?, controls_from),
        }
    }

    /// Same result as [`assemble_inst`].
    pub fn assemble_inst(&self, arch: Arch, inst: &Instruction, controls_from: Word) -> Result<(usize, Word), AsmError> {
        let view = &InstRef::of(inst);
        self.assemble_ref(arch, view, controls_from, false).or_else(|e| self.reread(arch, inst, view, controls_from, e))
    }

    /// For `inst` (`view` its view), which gives no single word as written (`first`, the
    /// error as written without its detail): its readings without alias modifiers and with
    /// unnamed registers, else the error as written, with why each variant fails (worked
    /// out only then: most texts that fail as written read as an alias). An ambiguity is
    /// `first` itself: only a [`AsmError::NoVariant`] has a detail to work out.
    fn reread(&self, arch: Arch, inst: &Instruction, view: &InstRef, controls_from: Word, first: AsmError) -> Result<(usize, Word), AsmError> {
        // The index's candidates: a scan of every variant reads thousands not in cache.
        let candidates = self.candidates(arch, &inst.mnemonic).iter().map(|e| self.codec.variant(e.vi()));
        let again = |u: &Instruction| self.assemble_ref(arch, &InstRef::of(u), controls_from, false);
        let found = unaliased(self.codec, candidates, inst, again).or_else(|| unnamed(self.codec, inst, again));
        found.unwrap_or_else(|| match first {
            AsmError::NoVariant { .. } => self.assemble_ref(arch, view, controls_from, true),
            e => Err(e),
        })
    }

    /// The index's entries for `arch` and `mnemonic`, in codec order.
    fn candidates(&self, arch: Arch, mnemonic: &str) -> &[Entry] {
        let found = self.index.iter().find(|(a, _)| *a == arch).and_then(|(_, m)| m.get(mnemonic));
        found.map(Vec::as_slice).unwrap_or_default()
    }

    /// `inst` read as written; `explain`: a [`AsmError::NoVariant`] says why each variant
    /// fails (else its detail is empty: the callers that only try readings skip it).
    pub(super) fn assemble_ref(&self, arch: Arch, inst: &InstRef, controls_from: Word, explain: bool) -> Result<(usize, Word), AsmError> {
        let candidates = self.candidates(arch, inst.mnemonic);
        let tokens = self.vocabulary.ids(inst);
        let text = Summary::of_text(inst, &tokens);
        // One pass over the candidates for both lists, each in codec order.
        let mut admitted: SmallVec<[(&Entry, &Form); 4]> = SmallVec::new();
        let mut longer: SmallVec<[(usize, &Form); 4]> = SmallVec::new();
        for e in candidates {
            if e.summary.admits(&text) {
                admitted.push((e, &self.forms[e.vi()]));
            }
            if e.summary.may_omit(&text, e.omittable) {
                longer.push((e.vi(), &self.forms[e.vi()]));
            }
        }
        // Every form the text may read, fetched at once (see `Form::warm`).
        std::hint::black_box(admitted.iter().map(|(_, f)| f.warm()).chain(longer.iter().map(|(_, f)| f.warm())).fold(0, |x, w| x ^ w));
        let fitting = admitted
            .into_iter()
            .filter(|(e, f)| (e.summary.packs(&text) || f.shape_fits(inst)) && f.tokens_fit(inst, &tokens) && f.mems_fit(inst))
            .map(|(e, f)| (e.vi(), f));
        let mut hits = hits(fitting, inst, &tokens, controls_from);
        omitted_pt_hits(longer.into_iter(), inst, &tokens, controls_from, &mut hits);
        let reasons = || if explain { candidates.iter().filter_map(|e| self.forms[e.vi()].reason(inst, &tokens)).collect() } else { vec![] };
        outcome(self.codec, hits, arch, inst, reasons)
    }
}

/// A variant in the index: its summary lies next to it, so that most candidates are
/// passed over without reading their forms. At most a cache line (asserted below): a
/// text's candidates are scanned.
pub(super) struct Entry {
    pub(super) summary: Summary,
    /// The variant's index, as a `u32` (codecs have thousands).
    pub(super) vi: u32,
    /// The operands nvdisasm may leave out (bit k: operand k; see [`with_omitted`]).
    pub(super) omittable: u16,
}

const _: () = assert!(std::mem::size_of::<Entry>() <= 64);

impl Entry {
    pub(super) fn vi(&self) -> usize {
        self.vi as usize
    }

    pub(super) fn new(vi: usize, form: &Form) -> Entry {
        let n = form.v.operands.len().min(PACKED);
        let omittable = (0..n).filter(|&k| omitted_body(form.v, k, true).is_some()).fold(0, |m, k| m | 1 << k);
        let vi = u32::try_from(vi).expect("fewer than 2^32 variants");
        Entry { summary: Summary::of_form(form), vi, omittable }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{random_values, Rng};

    /// The index and the summaries keep the forms a text reads few (their memory, mostly
    /// not in cache, is the assembler's time): over texts printed of random variants, at
    /// most 1.25 forms per text pass the summaries (1.12 when written; 1.45 before they
    /// held memory shapes and operand suffixes), as the forms' own checks would have them
    /// (a summary rejects nothing a form accepts). `--nocapture` prints the counts.
    #[test]
    fn summaries_leave_few_forms_to_read() {
        let s = crate::spec::load(&[crate::oracle::tools::repo_root().join("corpus/isa-discovered")]).unwrap();
        let c = Codec::new(&s);
        let a = Assembler::new(&c);
        let mut rng = Rng::new(0x00be_7c4a);
        // texts, candidates scanned, passing the summary, the tokens, the memory shapes, filled
        let mut n = [0usize; 6];
        for _ in 0..4096 {
            let v = c.variant(rng.below(c.variants().len() as u64) as usize);
            let text = crate::codec::print(v, &random_values(v, &mut rng)).to_string();
            let Some(inst) = InstRef::parse(&text) else { continue };
            let (tokens, candidates) = (a.vocabulary.ids(&inst), a.candidates(v.arch, inst.mnemonic));
            let summary = Summary::of_text(&inst, &tokens);
            n[0] += 1;
            n[1] += candidates.len();
            for e in candidates {
                let f = &a.forms[e.vi()];
                let fills = f.fill(&inst, &tokens).is_ok();
                let admitted = e.summary.admits(&summary) && (e.summary.packs(&summary) || f.shape_fits(&inst));
                assert!(admitted || !fills, "{text}: the summary of {} rejects it, its form reads it", f.v.key);
                let tokens_ok = admitted && f.tokens_fit(&inst, &tokens);
                let mems_ok = tokens_ok && f.mems_fit(&inst);
                for (k, pass) in [admitted, tokens_ok, mems_ok, fills].into_iter().enumerate() {
                    n[2 + k] += usize::from(pass);
                }
            }
        }
        eprintln!("texts {}, candidates {}, past the summary {}, the tokens {}, the memory shapes {}, filled {}", n[0], n[1], n[2], n[3], n[4], n[5]);
        assert!(n[0] > 3900 && 4 * n[2] <= 5 * n[0], "{n:?}");
    }

    /// A form's memory stays small (a text's candidate forms are mostly not in cache, and
    /// the lines they span are its misses): 747 bytes on average over the discovered spec
    /// (1 316 before forms shared their slot lists; a shared list counts as its share), at
    /// most 900 here. `--nocapture` prints the parts.
    #[test]
    fn forms_stay_compact() {
        let s = crate::spec::load(&[crate::oracle::tools::repo_root().join("corpus/isa-discovered")]).unwrap();
        let c = Codec::new(&s);
        let a = Assembler::new(&c);
        // The form's record, operands, value slots and fixed ids, modifier slots, suffix slots, left-out operands.
        let mut parts = [0usize; 6];
        for f in &a.forms {
            for (sum, n) in parts.iter_mut().zip(f.bytes()) {
                *sum += n;
            }
        }
        let n = a.forms.len();
        let per = parts.map(|p| p / n);
        eprintln!(
            "bytes a form: record {}, operands {}, value slots and fixed ids {}, modifier slots {}, suffix slots {}, left-out operands {}",
            per[0], per[1], per[2], per[3], per[4], per[5]
        );
        let total: usize = parts.iter().sum::<usize>() / n;
        assert!(n > 3000 && total <= 900, "{n} forms, {total} bytes each");
    }

    /// A modifier table of more rows than 16 bits count (a 16-bit field may list 65 536
    /// values; a hostile page may list more) is packed and read: the slots' offsets are
    /// `u32` (with `u16`, `Assembler::new` panicked).
    #[test]
    fn a_table_of_more_than_65_536_rows_is_read() {
        use crate::spec::{FieldKind, Row, RowKind, TableId};
        let mut s = crate::spec::load(&[crate::oracle::tools::repo_root().join("corpus/isa")]).unwrap();
        let v = s
            .pages
            .iter_mut()
            .flat_map(|p| p.variants.iter_mut())
            .find(|v| v.fields.iter().any(|f| matches!(f.kind, FieldKind::Group { .. })))
            .expect("a seed variant with a modifier group");
        let f = v.fields.iter().position(|f| matches!(f.kind, FieldKind::Group { .. })).unwrap();
        let FieldKind::Group { group } = v.fields[f].kind else { unreachable!() };
        let t = v.tables.iter_mut().find(|t| t.id == TableId::Group { group }).expect("the group's table");
        let (width, line) = (t.width, t.line);
        t.rows = (0..70_000u64).map(|i| Row { value: i % (1 << width), name: format!("X{i}"), kind: RowKind::Named, line }).collect();
        let (key, arch) = (v.key.clone(), v.arch);
        let c = Codec::new(&s);
        let a = Assembler::new(&c);
        let vi = c.index_of(&key, Some(arch)).unwrap();
        let text = crate::codec::print(c.variant(vi), &Values::zero(c.variant(vi).fields.len())).to_string();
        assert!(text.contains(".X0"), "{text}");
        let mut want = Values::zero(c.variant(vi).fields.len());
        want.set(f, 69_999 % (1 << width));
        let got = a.assemble(arch, &text.replacen(".X0", ".X69999", 1), Word(0)).unwrap();
        assert_eq!(got, (vi, c.encode(vi, &want).unwrap()), "{text}");
    }
}
