//! Ids that become file names, and the save date that names a directory.
//!
//! A board or thread id comes from a URL a forum (or an attacker) wrote, and
//! ends up in `board<B>/article<T>.html`, so only a small, safe alphabet is
//! accepted: ASCII letters, digits, `_`, `-` and `.` (not first, never two in
//! a row), at most 64 bytes. Nothing else can name a path outside the data
//! directory. The check runs once, where a string enters ([`SiteId::parse`],
//! [`ThreadRow::location`](crate::store::ThreadRow::location)); past that
//! edge the types carry the proof, and [`DataDir`](crate::DataDir) only
//! builds paths from them.
//!
//! ```
//! use luntan_core::ids::{BoardId, SaveDate, ThreadId};
//! assert_eq!(ThreadId::parse("77").unwrap().as_str(), "77");
//! assert!(BoardId::parse("../etc").is_err());
//! assert!(SaveDate::parse("2026113").is_err());
//! ```

use std::fmt;

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

/// The id luntan gives a board or thread whose URL names it only by a
/// slug (`<links hashed="thread">`: WordPress's `/2025/02/%e4%ba%ac…/`):
/// 16 hex digits of the SHA-256 of the slug's bytes, percent-decoded, so
/// `%E4` and `%e4` name one thread. A slug cannot be an id itself: it may
/// hold any byte and be any length, and ids name files.
///
/// ```
/// use luntan_core::ids::slug_id;
/// assert_eq!(slug_id("%e4%ba%ac"), slug_id("%E4%BA%AC"));
/// assert_eq!(slug_id("%e4%ba%ac"), slug_id("京"));
/// assert_eq!(slug_id("京").len(), 16);
/// ```
pub fn slug_id(slug: &str) -> String {
    use sha2::Digest;
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(slug).collect();
    sha2::Sha256::digest(&bytes)[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Returns `s` if it is a safe id. Prefer the typed ids below, which keep
/// the result of this check.
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

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// `s` as this id, if [`check_id`] accepts it.
            pub fn parse(s: &str) -> Result<$name, IdError> {
                check_id(s).map($name)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<$name, IdError> {
                $name::parse(s)
            }
        }

        // An id reads as the string it is wherever a `&str` is wanted
        // (SQL parameters, map keys, formatting); it can only be *made*
        // through `parse`, which is what the type guarantees.
        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        /// Checked as [`parse`](Self::parse) checks: a JSON or XML field
        /// cannot smuggle in an id a URL could not.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                $name::parse(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(
    /// A forum's id: its site file's `id`, `pages/<site>/`, `index/<site>.index`.
    SiteId
);
id_type!(
    /// A board's id within its forum: `board<B>/`.
    BoardId
);
id_type!(
    /// A thread's id within its forum: `article<T>.html`.
    ThreadId
);

/// The day a thread was saved, `YYYYMMDD` (UTC): `board<B>_<YYYYMMDD>/`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SaveDate([u8; 8]);

impl SaveDate {
    /// `s` as a save date, if it is eight ASCII digits.
    pub fn parse(s: &str) -> Result<SaveDate, IdError> {
        let bytes: [u8; 8] = s.as_bytes().try_into().map_err(|_| IdError::new(s, "a save date is eight digits (YYYYMMDD)"))?;
        if !bytes.iter().all(u8::is_ascii_digit) {
            return Err(IdError::new(s, "a save date is eight digits (YYYYMMDD)"));
        }
        Ok(SaveDate(bytes))
    }

    /// Today (UTC), the date a download saves under.
    pub fn today() -> SaveDate {
        let d = time::OffsetDateTime::now_utc().date();
        SaveDate::parse(&format!("{:04}{:02}{:02}", d.year(), d.month() as u8, d.day())).expect("a calendar date is eight digits")
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("checked ASCII digits")
    }
}

impl fmt::Display for SaveDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::ops::Deref for SaveDate {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SaveDate {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<&str> for SaveDate {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::str::FromStr for SaveDate {
    type Err = IdError;
    fn from_str(s: &str) -> Result<SaveDate, IdError> {
        SaveDate::parse(s)
    }
}

impl serde::Serialize for SaveDate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for SaveDate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SaveDate, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        SaveDate::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl fmt::Debug for SaveDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SaveDate({})", self.as_str())
    }
}

/// Where one thread's files live: every part of its path, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadLoc {
    pub site: SiteId,
    pub board: BoardId,
    pub thread: ThreadId,
    pub saved: SaveDate,
}

/// The SHA-256 of a media file's content, 64 lower-case hex digits: the
/// name it is archived under (`media/<first 2>/<all 64>`), so checked like
/// the ids that name files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MediaHash(String);

impl MediaHash {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> MediaHash {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(bytes);
        let mut hex = String::with_capacity(64);
        for b in digest.iter() {
            hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            hex.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
        }
        MediaHash(hex)
    }

    /// A hash as a row or a URL gives it: 64 lower-case hex digits or nothing.
    pub fn parse(s: &str) -> Result<MediaHash, IdError> {
        if s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(MediaHash(s.to_owned()))
        } else {
            Err(IdError::new(s, "is not a SHA-256 in lower-case hex"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MediaHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_hashes_are_sha256_hex_and_nothing_else() {
        let h = MediaHash::of(b"abc");
        assert_eq!(h.as_str(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(MediaHash::parse(h.as_str()).unwrap(), h);
        for bad in ["", "../x", &h.as_str().to_uppercase(), &h.as_str()[1..], &format!("{}/", &h.as_str()[1..])] {
            assert!(MediaHash::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn traversal_and_odd_bytes_are_refused() {
        for bad in ["", "..", "../../etc/passwd", "%2e%2e%2f", "a/b", "a\\b", "a b", "线程", "a\0b", ".hidden"] {
            assert!(check_id(bad).is_err(), "{bad:?}");
            assert!(ThreadId::parse(bad).is_err(), "{bad:?}");
        }
        for good in ["7", "123456", "abc_DEF-9", "bbs.example.com"] {
            assert_eq!(check_id(good).unwrap(), good);
            assert_eq!(SiteId::parse(good).unwrap().as_str(), good);
        }
        assert!(check_id(&"9".repeat(65)).is_err());
    }

    #[test]
    fn save_dates_are_eight_digits() {
        assert_eq!(SaveDate::parse("20261130").unwrap().to_string(), "20261130");
        for bad in ["", "2026113", "202611300", "2026-11-", "２０２６１１３０", "2026113x"] {
            assert!(SaveDate::parse(bad).is_err(), "{bad:?}");
        }
        assert!(SaveDate::today().as_str().starts_with("20"));
    }
}
