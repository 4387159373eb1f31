//! Ids that become file names. A board or thread id comes from a URL a
//! forum (or an attacker) wrote, and ends up in `board<B>/article<T>.html`,
//! so only a small, safe alphabet is accepted: ASCII letters, digits, `_`,
//! `-` and `.` (not first, never two in a row), at most 64 bytes. Nothing else can name a path outside the
//! data directory.

/// An id that was refused, with why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("id {value:?}: {why}")]
pub struct IdError {
    pub value: String,
    pub why: &'static str,
}

impl IdError {
    pub fn new(value: &str, why: &'static str) -> IdError {
        let mut value = value.to_owned();
        if value.len() > 80 {
            let mut cut = 80;
            while !value.is_char_boundary(cut) {
                cut -= 1;
            }
            value.truncate(cut);
        }
        IdError { value, why }
    }
}

/// Returns `s` if it is a safe id.
pub fn check_id(s: &str) -> Result<String, IdError> {
    if s.is_empty() {
        return Err(IdError::new(s, "empty"));
    }
    if s.len() > 64 {
        return Err(IdError::new(s, "longer than 64 bytes"));
    }
    if !s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
        return Err(IdError::new(s, "only ASCII letters, digits, '_', '-' and '.' may name a file"));
    }
    if s.starts_with('.') || s.contains("..") {
        return Err(IdError::new(s, "may not start with '.' or hold '..'"));
    }
    Ok(s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_and_odd_bytes_are_refused() {
        for bad in ["", "..", "../../etc/passwd", "%2e%2e%2f", "a/b", "a\\b", "a b", "线程", "a\0b", ".hidden"] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
        for good in ["7", "123456", "abc_DEF-9", "bbs.example.com"] {
            assert_eq!(check_id(good).unwrap(), good);
        }
        assert!(check_id(&"9".repeat(65)).is_err());
    }
}
