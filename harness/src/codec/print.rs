//! Decoded instruction → SASS text in nvdisasm's syntax, from what the page says.
//!
//! Where the page is silent, nvdisasm's conventions fill in: `RZ` is R255, `URZ` is UR63,
//! predicate bit 3 negates and index 7 is PT (omitted when not negated), constant-bank
//! offsets count 4-byte words, and an `F` operand of a D-prefixed (fp64) instruction holds
//! the high 32 bits of a double. Values a table does not list print as `UNLISTED<n>`.

use super::bits::Values;
use crate::sass::{Body, Instruction, Operand, Predicate};
use crate::spec::{FieldKind, ModSlot, OperandKind, RowKind, Table, Variant};

pub const UNLISTED: &str = "UNLISTED";

/// Tokens a table value prints (empty for `(default)`).
pub fn row_tokens(t: Option<&Table>, v: u64) -> Vec<String> {
    match t.and_then(|t| t.row(v)) {
        Some(r) if r.kind == RowKind::Default => vec![],
        Some(r) => r.name.split('.').map(str::to_string).collect(),
        None => vec![format!("{UNLISTED}{v}")],
    }
}

/// Is the F operand of this variant a double (high 32 bits)?
pub fn float_is_double(v: &Variant) -> bool {
    v.mnemonic.starts_with('D')
}

pub fn float_body(v: &Variant, bits: u64) -> Body {
    let value = if float_is_double(v) { f64::from_bits(bits << 32) } else { f32::from_bits(bits as u32) as f64 };
    Body::Float { value, text: format_float(value) }
}

/// A float as nvdisasm spells it: int32-valued numbers as integers, 2^31 and above as
/// `%.20e`, the rest as `%.20g`; `+INF`, `+QNAN`, `-0.0`. Every spelling parses back to the
/// same value except NaN payloads (see [`lossless`]).
pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-QNAN".into() } else { "+QNAN".into() };
    }
    if x.is_infinite() {
        return if x > 0.0 { "+INF".into() } else { "-INF".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0".into() } else { "0".into() };
    }
    if x.fract() == 0.0 && x.abs() < 2147483648.0 {
        return format!("{}", x as i64);
    }
    let sci = format!("{:.19e}", x); // 20 significant digits, exact rounding
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    let exp_text = |e: i32| format!("e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    if x.abs() >= 2147483648.0 && e < 20 {
        let wide = format!("{:.20e}", x);
        let (m, _) = wide.split_once('e').unwrap_or((&wide, ""));
        return format!("{m}{}", exp_text(e));
    }
    if !(-4..20).contains(&e) {
        let m = mant.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}{}", exp_text(e));
    }
    let fixed = format!("{:.*}", (19 - e).max(0) as usize, x);
    if fixed.contains('.') {
        fixed.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        fixed
    }
}

pub fn print(v: &Variant, values: &Values) -> Instruction {
    let val = |i: usize| values.get(i);
    let mut pred = None;
    let mut modifiers = vec![];
    for (i, f) in v.fields.iter().enumerate() {
        if f.kind == FieldKind::Pred {
            let p = val(i);
            let index = (p & 7) as u8;
            let negated = (p >> 3) & 1 == 1;
            if index != 7 || negated {
                pred = Some(Predicate { negated, index });
            }
        }
    }
    for slot in &v.modifiers {
        match slot {
            ModSlot::Fixed { text } => modifiers.push(text.clone()),
            ModSlot::Group { field, hidden_zero } => {
                let x = val(*field);
                if !(*hidden_zero && x == 0) {
                    modifiers.extend(row_tokens(v.field_table(*field), x));
                }
            }
            ModSlot::Flag { field } => {
                if val(*field) != 0 {
                    modifiers.push(v.fields[*field].name.clone());
                }
            }
        }
    }
    let operands = v
        .operands
        .iter()
        .map(|o| {
            let fv = |k: usize| o.value_fields[k].map(val).unwrap_or(0);
            let body = match o.kind {
                OperandKind::Reg => Body::Reg { n: fv(0) as u16 },
                OperandKind::UReg => Body::UReg { n: fv(0) as u16 },
                OperandKind::Imm => Body::Imm { value: fv(0) as i64 },
                OperandKind::Float => float_body(v, fv(0)),
                OperandKind::Const => Body::Const { bank: fv(0) as u32, offset: (fv(1) * 4) as i64 },
                OperandKind::ConstX => Body::ConstX { ureg: fv(0) as u16, offset: (fv(1) * 4) as i64 },
            };
            let mut op = Operand::new(body);
            op.abs = o.abs_field.map(|f| val(f) != 0).unwrap_or(false);
            op.neg = o.neg_field.map(|f| val(f) != 0).unwrap_or(false);
            for &s in &o.suffix_fields {
                op.suffixes.extend(row_tokens(v.field_table(s), val(s)));
            }
            for &s in &o.selector_fields {
                if val(s) != 0 {
                    op.suffixes.push(v.fields[s].name.clone());
                }
            }
            op
        })
        .collect();
    Instruction { pred, mnemonic: v.mnemonic.clone(), modifiers, operands, terminator: v.terminator }
}

/// Does `values` print distinctly from every other value of `v` (so text → word is exact)?
/// Not when a table gives two values one name, or a float operand holds a NaN: nvdisasm
/// spells every NaN `+QNAN`/`-QNAN`, and so do we.
pub fn lossless(v: &Variant, values: &Values) -> bool {
    injective(v)
        && v.operands.iter().all(|o| {
            o.kind != OperandKind::Float
                || o.value_fields[0].map(|f| match float_body(v, values.get(f)) {
                    Body::Float { value, .. } => !value.is_nan(),
                    _ => true,
                }).unwrap_or(true)
        })
}

/// Does this variant print every value distinctly (so text → word is exact)?
pub fn injective(v: &Variant) -> bool {
    v.tables.iter().all(|t| {
        let mut names: Vec<&str> = t.rows.iter().map(|r| if r.kind == RowKind::Default { "" } else { r.name.as_str() }).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        names.len() == n
    })
}


#[cfg(test)]
mod tests {
    use super::format_float as f;
    #[test]
    fn floats_are_spelled_like_nvdisasm() {
        // Spellings observed from nvdisasm 13.5 on DFMA R,R,R,F words.
        assert_eq!(f(1.0), "1");
        assert_eq!(f(-1.5), "-1.5");
        assert_eq!(f(100.0), "100");
        assert_eq!(f(f64::from_bits(0x3fb9999900000000)), "0.099999964237213134766");
        assert_eq!(f(f64::from_bits(0x0000000100000000)), "2.1219957909652723151e-314");
        assert_eq!(f(2147483648.0), "2.14748364800000000000e+09");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(f64::INFINITY), "+INF");
        for bits in [0x3fb9999900000000u64, 0x0000000100000000, 0x41e0000000000000, 0xc00921fb00000000] {
            let x = f64::from_bits(bits);
            assert_eq!(f(x).parse::<f64>().unwrap().to_bits(), bits, "{}", f(x));
        }
    }
}
