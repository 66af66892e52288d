//! The memory budget: how much a command may hold at once. A request whose estimate is
//! above it is refused before any work, with a message naming the limit, instead of
//! dying in an allocation (`memory allocation of … failed`, exit 134) hours in.
//!
//! The budget is `--memory-budget` or [`VAR`] (`2G`, `512M`, `3000000K`, bytes), else
//! [`DEFAULT`]; under an address-space limit (`ulimit -v`) it is at most half that limit,
//! since mappings, thread stacks and allocator slack take address space beyond the heap.

/// The environment variable the budget is read from (`--memory-budget` sets it).
pub const VAR: &str = "SASS_HARNESS_MEMORY_BUDGET";

/// Default budget: 2 GiB.
pub const DEFAULT: u64 = 2 << 30;

/// Why a size or a request was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// Not bytes or a number with K, M, G or T (or zero, or too large).
    #[error("{text:?} is not a size (expected a positive number of bytes, or with K, M, G or T, e.g. 2G)")]
    NotASize { text: String },
    /// [`VAR`] holds something that is not a size.
    #[error("{VAR}={value:?}: {source}")]
    Variable { value: String, source: Box<BudgetError> },
    /// A request estimated above the budget.
    #[error("{what} would hold about {} in memory at once, above the memory budget of {} ({origin}); {hint}", human(*need), human(*budget))]
    Over { what: String, need: u64, budget: u64, origin: String, hint: String },
}

/// A budget in bytes, and where it came from (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    pub bytes: u64,
    pub source: String,
}

/// `"2G"`, `"512M"`, `"3000000K"`, `"1048576"` → bytes (K, M, G, T are powers of 1024;
/// an optional trailing `B` or `iB` is accepted). Zero is an error.
pub fn parse_size(s: &str) -> Result<u64, BudgetError> {
    let t = s.trim().trim_end_matches(['B', 'b']).trim_end_matches('i');
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(BudgetError::NotASize { text: s.to_string() }),
    };
    match digits.parse::<u64>().ok().and_then(|n| n.checked_mul(1 << shift)) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(BudgetError::NotASize { text: s.to_string() }),
    }
}

/// `2.0 GiB`, `512.0 MiB`, `1.2 TiB`: a byte count for messages.
pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut x = bytes as f64;
    let mut i = 0;
    while x >= 1024.0 && i + 1 < units.len() {
        x /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{x:.1} {}", units[i])
    }
}

/// The process's address-space limit (`ulimit -v`), if one is set.
fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given; no other precondition.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

impl Budget {
    /// The budget from [`VAR`] (else [`DEFAULT`]), capped at half the address-space
    /// limit. A value that is not a size is an error naming the variable.
    pub fn from_env() -> Result<Budget, BudgetError> {
        let mut b = match std::env::var(VAR) {
            Err(_) => Budget { bytes: DEFAULT, source: format!("the default (set --memory-budget or {VAR} to change it)") },
            Ok(v) => Budget {
                bytes: parse_size(&v).map_err(|e| BudgetError::Variable { value: v.clone(), source: Box::new(e) })?,
                source: format!("--memory-budget / {VAR}={v}"),
            },
        };
        if let Some(limit) = address_space_limit().filter(|&l| l / 2 < b.bytes) {
            b = Budget { bytes: limit / 2, source: format!("half the address-space limit (ulimit -v {} KiB)", limit / 1024) };
        }
        Ok(b)
    }

    /// Refuses `what`, estimated to hold `need` bytes at once, when that is above the
    /// budget; `hint` says how to make the request fit.
    pub fn check(&self, what: &str, need: u64, hint: &str) -> Result<(), BudgetError> {
        if need <= self.bytes {
            return Ok(());
        }
        Err(BudgetError::Over { what: what.into(), need, budget: self.bytes, origin: self.source.clone(), hint: hint.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units_and_bad_ones_are_named() {
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("3000000K"), Ok(3_000_000 << 10));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        for bad in ["", "0", "G", "2X", "-1G", "1.5G", "99999999999T"] {
            let e = parse_size(bad).unwrap_err();
            assert_eq!(e, BudgetError::NotASize { text: bad.into() });
            assert!(e.to_string().contains("not a size"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_request_above_the_budget_is_refused_naming_both() {
        let b = Budget { bytes: 1 << 30, source: "test".into() };
        assert!(b.check("x", 1 << 30, "").is_ok());
        let e = b.check("--random 5", 3 << 30, "lower it").unwrap_err().to_string();
        assert!(e.contains("3.0 GiB") && e.contains("1.0 GiB") && e.contains("test") && e.contains("lower it"), "{e}");
    }
}
