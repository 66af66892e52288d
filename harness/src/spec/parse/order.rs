//! The printed modifier order a page implies, from its distilled line and tables.

use super::*;

/// The modifier print order, read off the distilled line (nvdisasm's text for the zero
/// word, or for a table that leaves 0 out its base row: [`crate::gen::distilled_values`]):
/// each distilled modifier is matched to the heading's fixed modifiers or to the group
/// whose zero (base) row prints it. Groups whose zero row prints nothing visible
/// (`(default)`, or a name the distilled line does not show separately) are placed by
/// group number; modifier flags go last, in bit order.
pub(super) fn modifier_order(p: &mut Lines, v: &Variant, heading_mods: &[String], d: &sass::Instruction) -> Result<Vec<ModSlot>, String> {
    let mut order = ModOrder::new(v);
    order.place_distilled(heading_mods, &d.modifiers)?;
    order.place_rest(p);
    let mut flags: Vec<usize> =
        v.fields.iter().enumerate().filter(|(_, f)| matches!(&f.kind, FieldKind::Flag { role: FlagRole::Modifier, .. })).map(|(i, _)| i).collect();
    flags.sort_by_key(|&i| v.fields[i].bits[0]);
    order.placed.extend(flags.into_iter().map(|field| ModSlot::Flag { field }));
    Ok(order.placed)
}

/// The modifier slots placed so far (see [`modifier_order`]).
pub(super) struct ModOrder<'a> {
    pub(super) v: &'a Variant,
    /// The variant's `modi N` fields, by group number.
    pub(super) groups: Vec<usize>,
    pub(super) placed: Vec<ModSlot>,
    /// Groups placed so far.
    pub(super) used: Vec<usize>,
}

impl<'a> ModOrder<'a> {
    pub(super) fn new(v: &'a Variant) -> Self {
        let mut groups: Vec<usize> = v.fields.iter().enumerate().filter(|(_, f)| matches!(f.kind, FieldKind::Group { .. })).map(|(i, _)| i).collect();
        groups.sort_by_key(|&i| group_number(v, i));
        ModOrder { v, groups, placed: vec![], used: vec![] }
    }

    /// Places the distilled modifiers `toks`, in order: the heading's, and groups whose zero
    /// row prints the next tokens.
    pub(super) fn place_distilled(&mut self, heading_mods: &[String], toks: &[String]) -> Result<(), String> {
        let mut hmods = heading_mods.iter().peekable();
        let mut i = 0;
        while i < toks.len() {
            if hmods.peek().map(|h| *h == &toks[i]).unwrap_or(false) {
                self.placed.push(ModSlot::Fixed { text: toks[i].clone() });
                hmods.next();
                i += 1;
                continue;
            }
            let Some((g, n)) = self.zero_row_at(&toks[i..]) else {
                return Err(format!("distilled modifier '{}' matches no heading modifier and no group's zero row", toks[i]));
            };
            self.placed.push(ModSlot::Group { field: g, hidden_zero: false });
            self.used.push(g);
            i += n;
        }
        if let Some(h) = hmods.next() {
            return Err(format!("heading modifier '{h}' is not in the distilled line"));
        }
        Ok(())
    }

    /// The first unplaced group whose zero row prints the tokens `toks` starts with, and how
    /// many tokens that is.
    pub(super) fn zero_row_at(&self, toks: &[String]) -> Option<(usize, usize)> {
        self.groups.iter().filter(|g| !self.used.contains(g)).find_map(|&g| {
            let rt = self.v.field_table(g).and_then(|t| t.base_row())?.tokens();
            let prints = !rt.is_empty() && toks.len() >= rt.len() && toks[..rt.len()].iter().zip(&rt).all(|(a, b)| a == b);
            prints.then_some((g, rt.len()))
        })
    }

    /// Places the groups the distilled line does not show by group number: after the last
    /// placed group with a smaller number. A named zero row is hidden at zero (a warning).
    pub(super) fn place_rest(&mut self, p: &mut Lines) {
        let v = self.v;
        for g in self.groups.clone() {
            if self.used.contains(&g) {
                continue;
            }
            let row0 = v.field_table(g).and_then(|t| t.row(0));
            let mut hidden_zero = false;
            if let Some(r) = row0 {
                if r.kind != RowKind::Default {
                    hidden_zero = true;
                    let n = group_number(v, g);
                    let m = format!(
                        "{}: group {n} prints '{}' at zero but the distilled line does not show it separately; at zero it prints nothing",
                        v.key, r.name
                    );
                    p.warn(v.line, rules::HIDDEN_AT_ZERO, m);
                }
            }
            let pos = self
                .placed
                .iter()
                .rposition(|s| matches!(s, ModSlot::Group { field, .. } if group_number(v, *field) < group_number(v, g)))
                .map(|x| x + 1)
                .unwrap_or_else(|| self.placed.iter().take_while(|s| matches!(s, ModSlot::Fixed { .. })).count());
            self.placed.insert(pos, ModSlot::Group { field: g, hidden_zero });
            self.used.push(g);
        }
    }
}

/// The group number of field `f` (0 unless a `modi N` field).
pub(super) fn group_number(v: &Variant, f: usize) -> u32 {
    match v.fields[f].kind {
        FieldKind::Group { group } => group,
        _ => 0,
    }
}
