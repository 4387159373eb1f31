//! The one HTML/XML escaper: the thread XML, serve's pages and feed,
//! search's highlighted snippets and learn's site files all escape text
//! through [`escape_into`] or [`escape`]. They differ only in which
//! characters their published output has always had replaced, and
//! [`Escape`] names each of those sets, so no writer's bytes changed when
//! they came together here.
//!
//! ```
//! use luntan_core::escape::{escape, Escape};
//! assert_eq!(escape("a<b & 'c'", Escape::Html), "a&lt;b &amp; &#39;c&#39;");
//! assert_eq!(escape("a<b & 'c'", Escape::XmlDocument), "a&lt;b &amp; &apos;c&apos;");
//! assert_eq!(escape("明月", Escape::Html), "明月");
//! ```

use std::borrow::Cow;

/// Which characters are replaced: `&` and `<` always, the rest as named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// `& < > " '` (`'` as `&#39;`): HTML text or an attribute value in
    /// either quotes (serve's pages and Atom feed).
    Html,
    /// `& < > "`, `'` kept: HTML text or a double-quoted attribute value
    /// (search's `title_html` and `snippet`, which `luntan-search --json`
    /// prints).
    HtmlDoubleQuoted,
    /// `& < > " '` (`'` as `&apos;`), and what XML 1.0 forbids dropped (C0
    /// controls but tab, LF and CR; U+FFFE, U+FFFF), CR and CRLF written as
    /// LF, as a parser would read them: the thread XML, whose every file
    /// parses back to the text written. One pass straight into the output:
    /// with two Strings allocated per field, writing a thread of long posts
    /// took four to five times as long.
    XmlDocument,
    /// `& < "`: a double-quoted XML attribute value (learn's site files).
    XmlAttribute,
    /// `& < >`: XML element text (learn's site files).
    XmlText,
}

/// What replaces the character at `b[i]`, and how many bytes it spans;
/// `None` keeps it. Only ASCII bytes and the lead byte of U+FFFE/U+FFFF
/// are replaced, so every cut falls on a character boundary.
#[inline]
fn replacement(how: Escape, b: &[u8], i: usize) -> Option<(&'static str, usize)> {
    use Escape::*;
    let with = match (b[i], how) {
        (b'&', _) => "&amp;",
        (b'<', _) => "&lt;",
        (b'>', Html | HtmlDoubleQuoted | XmlDocument | XmlText) => "&gt;",
        (b'"', Html | HtmlDoubleQuoted | XmlDocument | XmlAttribute) => "&quot;",
        (b'\'', Html) => "&#39;",
        (b'\'', XmlDocument) => "&apos;",
        (_, XmlDocument) => return xml_forbidden(b, i),
        _ => return None,
    };
    Some((with, 1))
}

/// [`Escape::XmlDocument`]'s dropped and rewritten characters.
#[inline]
fn xml_forbidden(b: &[u8], i: usize) -> Option<(&'static str, usize)> {
    match b[i] {
        b'\r' if b.get(i + 1) == Some(&b'\n') => Some(("", 1)),
        b'\r' => Some(("\n", 1)),
        b'\t' | b'\n' => None,
        0..=0x1F => Some(("", 1)),
        // U+FFFE and U+FFFF.
        0xEF if matches!(b.get(i + 1..i + 3), Some([0xBF, 0xBE | 0xBF])) => Some(("", 3)),
        _ => None,
    }
}

/// The bytes [`replacement`] may replace under `how` (a superset: `0xEF`
/// also leads most fullwidth punctuation), so a scan over mostly Chinese
/// text asks one table lookup a byte: the thread XML's writer spent a
/// tenth of extract's instructions asking `replacement` of every byte.
const fn candidates(how: Escape) -> [bool; 256] {
    let mut t = [false; 256];
    t[b'&' as usize] = true;
    t[b'<' as usize] = true;
    let (gt, quot, apos, xml) = match how {
        Escape::Html => (true, true, true, false),
        Escape::HtmlDoubleQuoted => (true, true, false, false),
        Escape::XmlDocument => (true, true, true, true),
        Escape::XmlAttribute => (false, true, false, false),
        Escape::XmlText => (true, false, false, false),
    };
    t[b'>' as usize] = gt;
    t[b'"' as usize] = quot;
    t[b'\'' as usize] = apos;
    if xml {
        let mut c = 0;
        while c < 0x20 {
            t[c] = c != b'\t' as usize && c != b'\n' as usize;
            c += 1;
        }
        t[0xEF] = true;
    }
    t
}

const CANDIDATES: [[bool; 256]; 5] = [
    candidates(Escape::Html),
    candidates(Escape::HtmlDoubleQuoted),
    candidates(Escape::XmlDocument),
    candidates(Escape::XmlAttribute),
    candidates(Escape::XmlText),
];

fn table(how: Escape) -> &'static [bool; 256] {
    &CANDIDATES[match how {
        Escape::Html => 0,
        Escape::HtmlDoubleQuoted => 1,
        Escape::XmlDocument => 2,
        Escape::XmlAttribute => 3,
        Escape::XmlText => 4,
    }]
}

/// Appends `s` to `out`, escaped as `how` says.
pub fn escape_into(out: &mut String, s: &str, how: Escape) {
    let b = s.as_bytes();
    let t = table(how);
    let (mut from, mut i) = (0, 0);
    while i < b.len() {
        if !t[b[i] as usize] {
            i += 1;
            continue;
        }
        match replacement(how, b, i) {
            None => i += 1,
            Some((with, len)) => {
                out.push_str(&s[from..i]);
                out.push_str(with);
                i += len;
                from = i;
            }
        }
    }
    out.push_str(&s[from..]);
}

/// `s` escaped as `how` says; borrowed when nothing needs replacing.
pub fn escape(s: &str, how: Escape) -> Cow<'_, str> {
    let b = s.as_bytes();
    let t = table(how);
    match (0..b.len()).find(|&i| t[b[i] as usize] && replacement(how, b, i).is_some()) {
        None => Cow::Borrowed(s),
        Some(first) => {
            let mut out = String::with_capacity(s.len() + 16);
            out.push_str(&s[..first]);
            escape_into(&mut out, &s[first..], how);
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &str = "&<>\"'\t\n\r\r\n\u{0}\u{1F}\u{FFFE}\u{FFFF}\u{FFFD}明";

    #[test]
    fn each_kind_replaces_what_its_writer_always_has() {
        assert_eq!(escape(ALL, Escape::Html), "&amp;&lt;&gt;&quot;&#39;\t\n\r\r\n\u{0}\u{1F}\u{FFFE}\u{FFFF}\u{FFFD}明");
        assert_eq!(escape(ALL, Escape::HtmlDoubleQuoted), "&amp;&lt;&gt;&quot;'\t\n\r\r\n\u{0}\u{1F}\u{FFFE}\u{FFFF}\u{FFFD}明");
        assert_eq!(escape(ALL, Escape::XmlDocument), "&amp;&lt;&gt;&quot;&apos;\t\n\n\n\u{FFFD}明");
        assert_eq!(escape(ALL, Escape::XmlAttribute), "&amp;&lt;>&quot;'\t\n\r\r\n\u{0}\u{1F}\u{FFFE}\u{FFFF}\u{FFFD}明");
        assert_eq!(escape(ALL, Escape::XmlText), "&amp;&lt;&gt;\"'\t\n\r\r\n\u{0}\u{1F}\u{FFFE}\u{FFFF}\u{FFFD}明");
    }

    #[test]
    fn the_tables_hold_every_byte_a_replacement_starts_at() {
        for how in [Escape::Html, Escape::HtmlDoubleQuoted, Escape::XmlDocument, Escape::XmlAttribute, Escape::XmlText] {
            for byte in 0..=255u8 {
                // The lead byte with both continuations U+FFFE/U+FFFF need.
                let b = [byte, 0xBF, 0xBE, b'\n'];
                if replacement(how, &b, 0).is_some() {
                    assert!(table(how)[byte as usize], "{how:?} {byte:#x}");
                }
            }
        }
    }

    #[test]
    fn into_and_cow_agree_and_nothing_to_do_borrows() {
        for how in [Escape::Html, Escape::HtmlDoubleQuoted, Escape::XmlDocument, Escape::XmlAttribute, Escape::XmlText] {
            for s in [ALL, "", "明月 plain", "tail&", "\r", "a\u{FFFF}", "\u{EF}"] {
                let mut out = String::from("x");
                escape_into(&mut out, s, how);
                assert_eq!(out[1..], *escape(s, how), "{how:?} {s:?}");
            }
            assert!(matches!(escape("明月 plain", how), Cow::Borrowed(_)));
        }
    }
}
