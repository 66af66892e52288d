//! Instructions, operands and bodies printed as nvdisasm spells them.

use super::*;
use std::fmt;

impl fmt::Display for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Body::Reg { n } if *n == RZ => f.write_str("RZ"),
            Body::Reg { n } => write!(f, "R{n}"),
            Body::UReg { n } if *n == URZ => f.write_str("URZ"),
            Body::UReg { n } => write!(f, "UR{n}"),
            Body::Pred { n: 7 } => f.write_str("PT"),
            Body::Pred { n } => write!(f, "P{n}"),
            Body::UPred { n: 7 } => f.write_str("UPT"),
            Body::UPred { n } => write!(f, "UP{n}"),
            Body::Barrier { n } => write!(f, "B{n}"),
            Body::Imm { value } => f.write_str(&hex_signed(*value)),
            Body::Float { text, .. } => f.write_str(text),
            Body::Const { bank, offset } => write!(f, "c[{:#x}][{}]", bank, hex_signed(*offset)),
            Body::ConstX { ureg, offset } => {
                let u = Body::UReg { n: *ureg };
                write!(f, "cx[{u}][{}]", hex_signed(*offset))
            }
            Body::Mem { .. } => fmt_mem(f, self, &[]),
            Body::Other { text } => f.write_str(text),
        }
    }
}

/// A memory operand as nvdisasm prints it: `desc[UR4][R2.64+UR5+-0x10]`, the register's
/// suffixes right after it.
fn fmt_mem(f: &mut fmt::Formatter<'_>, body: &Body, suffixes: &[String]) -> fmt::Result {
    let Body::Mem { space, reg, ureg, imm } = *body else { return write!(f, "{body}") };
    match space {
        MemSpace::Plain => {}
        MemSpace::Desc { ureg } => write!(f, "desc[{}]", Body::UReg { n: ureg })?,
        MemSpace::Attr => f.write_str("a")?,
        MemSpace::Const { bank } => write!(f, "c[{bank:#x}]")?,
        MemSpace::ConstX { ureg } => write!(f, "cx[{}]", Body::UReg { n: ureg })?,
        MemSpace::Named { name } => f.write_str(name.prefix())?,
    }
    let named = matches!(space, MemSpace::Named { .. });
    let mut parts: Vec<String> = vec![];
    if let Some(n) = reg {
        let mut r = Body::Reg { n }.to_string();
        for s in suffixes.iter().filter(|_| !named) {
            r = format!("{r}.{s}");
        }
        parts.push(r);
    }
    parts.extend(ureg.map(|n| Body::UReg { n }.to_string()));
    parts.extend(imm.map(hex_signed));
    write!(f, "[{}]", parts.join("+"))?;
    // A descriptor's suffixes follow its brackets (`gdesc[UR12].B_KEEP`).
    if named {
        for s in suffixes {
            write!(f, ".{s}")?;
        }
    }
    Ok(())
}

/// `0x10`, `-0x8`: nvdisasm's spelling of a signed number.
pub fn hex_signed(v: impl Into<i128>) -> String {
    let v: i128 = v.into();
    if v < 0 {
        format!("-{:#x}", v.unsigned_abs())
    } else {
        format!("{v:#x}")
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.neg {
            f.write_str("-")?;
        }
        if self.not {
            f.write_str(if matches!(self.body, Body::Pred { .. } | Body::UPred { .. }) { "!" } else { "~" })?;
        }
        // nvdisasm puts selectors inside the bars (`|UR0.B3210|`), `.reuse` straight after
        // a bare register (`R7.reuse.H1`) and after the bars (`-|R244|.reuse`).
        if self.abs {
            f.write_str("|")?;
        }
        if let Body::Mem { .. } = self.body {
            // The suffixes belong to the base register, inside the brackets.
            fmt_mem(f, &self.body, &self.suffixes)?;
            if self.reuse {
                f.write_str(".reuse")?;
            }
            return if self.abs { f.write_str("|") } else { Ok(()) };
        }
        write!(f, "{}", self.body)?;
        if self.reuse && !self.abs {
            f.write_str(".reuse")?;
        }
        let outside = self.abs && self.after_bars;
        if !outside {
            for s in &self.suffixes {
                write!(f, ".{s}")?;
            }
        }
        if self.abs {
            f.write_str("|")?;
            if self.reuse {
                f.write_str(".reuse")?;
            }
        }
        // After the bars, `.reuse` comes first (`|R6|.reuse.H1`, nvdisasm 13.5, SM100 FHADD).
        if outside {
            for s in &self.suffixes {
                write!(f, ".{s}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.pred {
            write!(f, "{p} ")?;
        }
        f.write_str(&self.mnemonic)?;
        for m in &self.modifiers {
            write!(f, ".{m}")?;
        }
        for (i, o) in self.operands.iter().enumerate() {
            f.write_str(if i == 0 || o.joined { " " } else { ", " })?;
            match o.body {
                Body::Const { .. } | Body::ConstX { .. } if self.const_spaced => f.write_str(&o.to_string().replacen("][", "] [", 1))?,
                _ => write!(f, "{o}")?,
            }
        }
        f.write_str(match self.terminator {
            Terminator::SpaceSemicolon => " ;",
            Terminator::Semicolon => ";",
            Terminator::Missing => "",
        })
    }
}
