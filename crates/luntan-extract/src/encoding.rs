//! Which encoding a saved page is in, and decoding it.
//!
//! Chinese forums serve GBK, Big5 and UTF-8, and their declarations are often
//! wrong (a template copied from a GB2312 site, a proxy that rewrote the
//! body but not the header). [`detect`] weighs the evidence in this order:
//!
//! 1. the site file's forced encoding (the user said so);
//! 2. a byte order mark (nothing else can produce one by accident);
//! 3. the HTTP `charset` parameter;
//! 4. a `<meta>` charset in the first 1024 bytes (WHATWG prescan);
//! 5. the site's cached encoding from earlier pages, if the bytes agree;
//! 6. chardetng's guess.
//!
//! A declaration (3–5) is checked against the bytes: when they are valid
//! UTF-8 with multi-byte characters while the label names a legacy encoding,
//! or when more than one in twenty non-ASCII bytes is malformed under the
//! label and chardetng's guess does better, the bytes win and
//! [`Detection::reason`] says so. Fewer errors than that are a damaged page,
//! not a wrong label: the label stays and the bad bytes become U+FFFD.
//!
//! GBK-family labels (`gb2312`, `gbk`, `x-gbk`, …) decode with GB18030, the
//! superset, so characters outside GB2312 and four-byte sequences survive;
//! encoding_rs's Big5 already is Big5-HKSCS.

use std::fmt;

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
/// Re-exported so callers can name encodings without depending on encoding_rs.
pub use encoding_rs::Encoding;
use encoding_rs::{DecoderResult, GB18030, GBK, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// Where a [`Detection`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The site file's `<encoding>`.
    Forced,
    /// The HTTP `Content-Type` charset.
    Http,
    /// A byte order mark.
    Bom,
    /// A `<meta>` charset.
    Meta,
    /// The encoding cached for the site from earlier pages.
    Cached,
    /// chardetng's guess from the bytes.
    Sniffed,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Forced => "forced",
            Source::Http => "http",
            Source::Bom => "bom",
            Source::Meta => "meta",
            Source::Cached => "cached",
            Source::Sniffed => "sniffed",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The encoding chosen for one page, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// What to decode with (already widened: GBK family → GB18030).
    pub encoding: &'static Encoding,
    pub source: Source,
    /// One short human line, e.g. `meta charset "gb2312" (GBK family → GB18030)`.
    pub reason: String,
    /// The page's own evidence and its bytes agree, so the result is worth
    /// caching for the site. Never true for `Forced` or `Cached`, which
    /// would only cache what is already known.
    pub confident: bool,
}

/// A page's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    /// Malformed byte sequences, each replaced by U+FFFD.
    pub malformed: usize,
}

/// The decoder to use for what a label names: the GBK family widens to
/// GB18030 so that four-byte sequences decode too.
pub fn widen(encoding: &'static Encoding) -> &'static Encoding {
    if encoding == GBK {
        GB18030
    } else {
        encoding
    }
}

fn family_note(named: &'static Encoding) -> &'static str {
    if named == GBK {
        " (GBK family → GB18030)"
    } else {
        ""
    }
}

/// Chooses the encoding of `bytes`; see the module docs for the order.
///
/// `http_content_type` is the whole `Content-Type` header value as served.
/// `site_forced` comes from the site file, `site_cached` from the store.
pub fn detect(bytes: &[u8], http_content_type: Option<&str>, site_forced: Option<&'static Encoding>, site_cached: Option<&'static Encoding>) -> Detection {
    if let Some(forced) = site_forced {
        return Detection {
            encoding: widen(forced),
            source: Source::Forced,
            reason: format!("site file says {}{}", forced.name(), family_note(forced)),
            confident: false,
        };
    }
    // A BOM outranks a header: a server cannot know what the file's author
    // wrote, and no legacy text starts with these bytes by accident.
    if let Some((enc, _)) = Encoding::for_bom(bytes) {
        return Detection { encoding: enc, source: Source::Bom, reason: format!("{} byte order mark", enc.name()), confident: true };
    }
    if let Some(label) = http_content_type.and_then(http_charset) {
        if let Some(named) = Encoding::for_label_no_replacement(label.as_bytes()) {
            let says = format!("HTTP charset {label:?}");
            return check_declared(bytes, named, Source::Http, &says, &format!("HTTP says {label:?}"));
        }
    }
    if let Some((label, named)) = prescan_meta(bytes) {
        let says = format!("meta charset {label:?}");
        return check_declared(bytes, named, Source::Meta, &says, &format!("meta says {label:?}"));
    }
    if let Some(cached) = site_cached {
        let enc = widen(cached);
        if decodes_cleanly(bytes, enc) && !(enc != UTF_8 && looks_utf8(bytes)) {
            return Detection {
                encoding: enc,
                source: Source::Cached,
                reason: format!("no charset declared; site's cached {}{}", cached.name(), family_note(cached)),
                confident: false,
            };
        }
        let guess = sniff(bytes);
        return Detection {
            encoding: guess,
            source: Source::Sniffed,
            reason: format!("no charset declared and bytes do not fit the site's cached {}; chardetng guess {}", cached.name(), guess.name()),
            confident: sniff_is_confident(bytes, guess),
        };
    }
    let guess = sniff(bytes);
    Detection {
        encoding: guess,
        source: Source::Sniffed,
        reason: format!("no charset declared; chardetng guess {}", guess.name()),
        confident: sniff_is_confident(bytes, guess),
    }
}

/// Holds a declared label against the bytes; `says` describes the label
/// when it is kept, `lie` starts the sentence when the bytes overrule it.
fn check_declared(bytes: &[u8], named: &'static Encoding, source: Source, says: &str, lie: &str) -> Detection {
    // A meta tag can only be read if the page is ASCII-compatible, so a
    // UTF-16 label there is wrong by construction (WHATWG says UTF-8).
    let named = match (source, named) {
        (Source::Meta, e) if e == UTF_16LE || e == UTF_16BE => UTF_8,
        (Source::Meta, e) if e == X_USER_DEFINED => WINDOWS_1252,
        (_, e) => e,
    };
    let enc = widen(named);
    // Multi-byte UTF-8 text often decodes "cleanly" as GB18030 mojibake
    // (any even-length run of high bytes pairs up), so test UTF-8 first.
    if enc != UTF_8 && looks_utf8(bytes) {
        return Detection { encoding: UTF_8, source: Source::Sniffed, reason: format!("{lie} but bytes are UTF-8"), confident: true };
    }
    let bad = decode(bytes, enc).malformed;
    if bad == 0 {
        return Detection { encoding: enc, source, reason: format!("{says}{}", family_note(named)), confident: true };
    }
    // A wrong label garbles most multi-byte characters; a right one on a
    // damaged page (a truncated download, one corrupt post) only a few.
    if bad * 20 > non_ascii(bytes) {
        let guess = sniff(bytes);
        if guess != enc && decode(bytes, guess).malformed < bad {
            return Detection { encoding: guess, source: Source::Sniffed, reason: format!("{lie} but bytes are {}", guess.name()), confident: true };
        }
    }
    Detection { encoding: enc, source, reason: format!("{says}{} ({bad} malformed sequences)", family_note(named)), confident: false }
}

/// chardetng's guess, widened.
fn sniff(bytes: &[u8]) -> &'static Encoding {
    let mut det = EncodingDetector::new(Iso2022JpDetection::Deny);
    det.feed(bytes, true);
    widen(det.guess(None, Utf8Detection::Allow))
}

/// Enough non-ASCII text that a clean decode means something.
fn sniff_is_confident(bytes: &[u8], guess: &'static Encoding) -> bool {
    non_ascii(bytes) >= 32 && decodes_cleanly(bytes, guess)
}

fn non_ascii(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| !b.is_ascii()).count()
}

/// Valid UTF-8 with at least a couple of multi-byte characters: legacy CJK
/// text of that length is practically never valid UTF-8.
fn looks_utf8(bytes: &[u8]) -> bool {
    non_ascii(bytes) >= 6 && std::str::from_utf8(bytes).is_ok()
}

fn decodes_cleanly(bytes: &[u8], enc: &'static Encoding) -> bool {
    let body = strip_bom(bytes, enc);
    enc.decode_without_bom_handling_and_without_replacement(body).is_some()
}

fn strip_bom<'a>(bytes: &'a [u8], enc: &'static Encoding) -> &'a [u8] {
    match Encoding::for_bom(bytes) {
        Some((bom_enc, len)) if bom_enc == enc => &bytes[len..],
        _ => bytes,
    }
}

/// The `charset` parameter of a `Content-Type` value, unquoted.
pub fn http_charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let v = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        (!v.is_empty()).then_some(v)
    })
}

/// Decodes `bytes` with `encoding`, dropping a BOM that belongs to it.
/// Malformed sequences become U+FFFD and are counted; decoding never fails.
pub fn decode(bytes: &[u8], encoding: &'static Encoding) -> Decoded {
    let src = strip_bom(bytes, encoding);
    let mut dec = encoding.new_decoder_without_bom_handling();
    let room = |dec: &encoding_rs::Decoder, n: usize| dec.max_utf8_buffer_length_without_replacement(n).unwrap_or(n.saturating_mul(3)).max(16);
    let mut text = String::with_capacity(room(&dec, src.len()));
    let mut rest = src;
    let mut malformed = 0;
    loop {
        let (result, read) = dec.decode_to_string_without_replacement(rest, &mut text, true);
        rest = &rest[read..];
        match result {
            DecoderResult::InputEmpty => break,
            DecoderResult::OutputFull => {
                let more = room(&dec, rest.len());
                text.reserve(more);
            }
            DecoderResult::Malformed(_, _) => {
                malformed += 1;
                text.push('\u{FFFD}');
            }
        }
    }
    Decoded { text, malformed }
}

/// [`detect`] then [`decode`].
pub fn detect_and_decode(
    bytes: &[u8],
    http_content_type: Option<&str>,
    site_forced: Option<&'static Encoding>,
    site_cached: Option<&'static Encoding>,
) -> (Detection, Decoded) {
    let d = detect(bytes, http_content_type, site_forced, site_cached);
    let text = decode(bytes, d.encoding);
    (d, text)
}

// ---------------------------------------------------------------- meta prescan

fn is_space(b: u8) -> bool {
    matches!(b, 0x09 | 0x0A | 0x0C | 0x0D | 0x20)
}

/// The charset a `<meta>` in the first 1024 bytes declares, following the
/// WHATWG "prescan a byte stream" algorithm: comments and other tags are
/// skipped, `<meta charset>` and `<meta http-equiv="Content-Type"
/// content="…charset=…">` are honoured, labels encoding_rs does not know are
/// passed over. Returns the label as written (lower-cased) and its encoding.
pub fn prescan_meta(bytes: &[u8]) -> Option<(String, &'static Encoding)> {
    let b = &bytes[..bytes.len().min(1024)];
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            // The dashes of "<!--" may close it too: "<!-->" is a whole comment.
            i += 2 + find(&rest[2..], b"-->")? + 3;
            continue;
        }
        if rest.len() > 5 && rest[..5].eq_ignore_ascii_case(b"<meta") && (is_space(rest[5]) || rest[5] == b'/') {
            i += 6;
            if let Some(found) = meta_charset(b, &mut i) {
                return Some(found);
            }
            continue;
        }
        if rest.len() > 1 && rest[0] == b'<' && (rest[1].is_ascii_alphabetic() || (rest[1] == b'/' && rest.get(2).is_some_and(u8::is_ascii_alphabetic))) {
            i += 1;
            while i < b.len() && !is_space(b[i]) && b[i] != b'>' {
                i += 1;
            }
            while get_attribute(b, &mut i).is_some() {}
            i += 1;
            continue;
        }
        if rest.len() > 1 && rest[0] == b'<' && matches!(rest[1], b'!' | b'/' | b'?') {
            i += find(rest, b">")? + 1;
            continue;
        }
        i += 1;
    }
    None
}

/// The attributes of one `<meta>`; `i` is just past `<meta `.
fn meta_charset(b: &[u8], i: &mut usize) -> Option<(String, &'static Encoding)> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset: Option<(String, Option<&'static Encoding>)> = None;
    while let Some((name, value)) = get_attribute(b, i) {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        match name.as_slice() {
            b"http-equiv" => got_pragma |= value.as_slice() == b"content-type",
            b"content" if charset.is_none() => {
                if let Some(label) = charset_from_content(&value) {
                    let label = String::from_utf8_lossy(label).into_owned();
                    let enc = meta_label(&label);
                    charset = Some((label, enc));
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                let label = String::from_utf8_lossy(&value).trim().to_owned();
                let enc = meta_label(&label);
                charset = Some((label, enc));
                need_pragma = Some(false);
            }
            _ => {}
        }
    }
    match need_pragma {
        None => return None,
        Some(true) if !got_pragma => return None,
        _ => {}
    }
    match charset {
        Some((label, Some(enc))) => Some((label, enc)),
        _ => None,
    }
}

/// A label's encoding, forgiving the `<meta charset=gbk/>` that the WHATWG
/// prescan reads as "gbk/".
fn meta_label(label: &str) -> Option<&'static Encoding> {
    Encoding::for_label_no_replacement(label.as_bytes()).or_else(|| Encoding::for_label_no_replacement(label.trim_end_matches('/').as_bytes()))
}

/// WHATWG "extract a character encoding from a meta element" on a `content` value.
fn charset_from_content(v: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    loop {
        let pos = at + find_ci(&v[at..], b"charset")?;
        let mut j = pos + 7;
        while j < v.len() && is_space(v[j]) {
            j += 1;
        }
        if v.get(j) != Some(&b'=') {
            at = pos + 7;
            continue;
        }
        j += 1;
        while j < v.len() && is_space(v[j]) {
            j += 1;
        }
        return match v.get(j) {
            None => None,
            Some(&q) if q == b'"' || q == b'\'' => {
                let end = v[j + 1..].iter().position(|&c| c == q)?;
                Some(&v[j + 1..j + 1 + end])
            }
            Some(_) => {
                let end = v[j..].iter().position(|&c| is_space(c) || c == b';').unwrap_or(v.len() - j);
                (end > 0).then(|| &v[j..j + end])
            }
        };
    }
}

/// WHATWG "get an attribute": name and value lower-cased; `None` at `>` or
/// at the end of input.
fn get_attribute(b: &[u8], i: &mut usize) -> Option<(Vec<u8>, Vec<u8>)> {
    while *i < b.len() && (is_space(b[*i]) || b[*i] == b'/') {
        *i += 1;
    }
    if *i >= b.len() || b[*i] == b'>' {
        return None;
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    loop {
        let c = *b.get(*i)?;
        if c == b'=' && !name.is_empty() {
            *i += 1;
            break;
        }
        if is_space(c) {
            while *i < b.len() && is_space(b[*i]) {
                *i += 1;
            }
            if b.get(*i) != Some(&b'=') {
                return Some((name, value));
            }
            *i += 1;
            break;
        }
        if c == b'/' || c == b'>' {
            return Some((name, value));
        }
        name.push(c.to_ascii_lowercase());
        *i += 1;
    }
    while *i < b.len() && is_space(b[*i]) {
        *i += 1;
    }
    let c = *b.get(*i)?;
    if c == b'"' || c == b'\'' {
        *i += 1;
        loop {
            let d = *b.get(*i)?;
            *i += 1;
            if d == c {
                return Some((name, value));
            }
            value.push(d.to_ascii_lowercase());
        }
    }
    if c == b'>' {
        return Some((name, value));
    }
    loop {
        let d = *b.get(*i)?;
        if is_space(d) || d == b'>' {
            return Some((name, value));
        }
        value.push(d.to_ascii_lowercase());
        *i += 1;
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{BIG5, GBK};

    fn page(meta: &str, body: &str) -> String {
        format!("<!DOCTYPE html><html><head>{meta}<title>test</title></head><body><div>{body}</div></body></html>")
    }

    #[test]
    fn gbk_page_with_meta_gb2312_decodes_beyond_gb2312() {
        // 镕 is GBK but not GB2312; 😀 needs GB18030's four-byte form.
        let text = page(r#"<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=gb2312">"#, "朱镕基说：你好😀");
        let (bytes, _, unmappable) = GB18030.encode(&text);
        assert!(!unmappable);
        let (d, out) = detect_and_decode(&bytes, None, None, None);
        assert_eq!((d.encoding, d.source), (GB18030, Source::Meta));
        assert_eq!(d.reason, r#"meta charset "gb2312" (GBK family → GB18030)"#);
        assert!(d.confident);
        assert_eq!(out.malformed, 0);
        assert_eq!(out.text, text);
    }

    #[test]
    fn big5_page_with_http_charset() {
        let text = page("", "臺灣的論壇，繁體中文內容");
        let (bytes, _, _) = BIG5.encode(&text);
        let (d, out) = detect_and_decode(&bytes, Some("text/html; Charset=\"BIG5\""), None, None);
        assert_eq!((d.encoding, d.source), (BIG5, Source::Http));
        assert_eq!(d.reason, r#"HTTP charset "BIG5""#);
        assert_eq!(out.text, text);
    }

    #[test]
    fn undeclared_utf8_is_sniffed() {
        let text = page("", "没有声明编码的页面，但内容是 UTF-8 的中文。");
        let (d, out) = detect_and_decode(text.as_bytes(), Some("text/html"), None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Sniffed));
        assert!(d.reason.contains("chardetng"), "{}", d.reason);
        assert_eq!(out.text, text);
    }

    #[test]
    fn undeclared_gbk_is_sniffed() {
        let text = page("", "这是一个没有声明编码的简体中文页面，内容足够长，让检测器有把握地判断它的编码。");
        let (bytes, _, _) = GBK.encode(&text);
        let (d, out) = detect_and_decode(&bytes, None, None, None);
        assert_eq!((d.encoding, d.source), (GB18030, Source::Sniffed));
        assert!(d.confident);
        assert_eq!(out.text, text);
    }

    #[test]
    fn bom_wins_and_is_dropped() {
        let text = page(r#"<meta charset="gbk">"#, "带 BOM 的页面");
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(text.as_bytes());
        let (d, out) = detect_and_decode(&bytes, Some("text/html; charset=gbk"), None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Bom));
        assert_eq!(out.text, text);

        // encoding_rs does not encode UTF-16, so build it by hand.
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let (d, out) = detect_and_decode(&utf16, None, None, None);
        assert_eq!(d.encoding, UTF_16LE);
        assert_eq!(out.text, text);
    }

    #[test]
    fn meta_that_lies_loses_to_the_bytes() {
        let text = page(r#"<meta http-equiv=content-type content='text/html;charset=gb2312'>"#, "这个页面声称是 GB2312，其实是 UTF-8。中文");
        let d = detect(text.as_bytes(), None, None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Sniffed));
        assert_eq!(d.reason, r#"meta says "gb2312" but bytes are UTF-8"#);

        // And a UTF-8 label on GBK bytes: invalid UTF-8, chardetng knows better.
        let text = page(r#"<meta charset="utf-8">"#, "这个页面声称是 UTF-8，其实是 GBK 编码的简体中文内容，足够长。");
        let (bytes, _, _) = GBK.encode(&text);
        let (d, out) = detect_and_decode(&bytes, None, None, None);
        assert_eq!(d.encoding, GB18030);
        assert_eq!(d.reason, r#"meta says "utf-8" but bytes are gb18030"#);
        assert_eq!(out.text, text);
    }

    #[test]
    fn cached_encoding_only_without_evidence_and_only_if_it_fits() {
        let gbk_text = page("", "论坛");
        let (gbk, _, _) = GBK.encode(&gbk_text);
        // Too little text for chardetng to be sure; the site's history decides.
        let d = detect(&gbk, None, None, Some(GBK));
        assert_eq!((d.encoding, d.source), (GB18030, Source::Cached));

        // The page declares otherwise: the cache is ignored.
        let big5_text = page(r#"<meta charset="big5">"#, "繁體中文的論壇頁面");
        let (big5, _, _) = BIG5.encode(&big5_text);
        let d = detect(&big5, None, None, Some(GBK));
        assert_eq!((d.encoding, d.source), (BIG5, Source::Meta));

        // No declaration, but the bytes are not the cached encoding's.
        let utf8 = page("", "这个站点改成了 UTF-8");
        let d = detect(utf8.as_bytes(), None, None, Some(GBK));
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Sniffed));
        assert!(d.reason.contains("cached"), "{}", d.reason);
    }

    #[test]
    fn forced_encoding_wins_over_everything() {
        let text = page(r#"<meta charset="utf-8">"#, "强制");
        let d = detect(text.as_bytes(), Some("text/html; charset=utf-8"), Some(GBK), Some(UTF_8));
        assert_eq!((d.encoding, d.source), (GB18030, Source::Forced));
        assert!(!d.confident);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters_and_are_counted() {
        // A UTF-8 page with a corrupt post and a cut-off end: still UTF-8.
        let good = page(r#"<meta charset="utf-8">"#, &"正常的中文内容。".repeat(20));
        let mut bytes = good.as_bytes().to_vec();
        let at = good.find("</div>").unwrap();
        bytes.splice(at..at, b"\xFF\xFE\xC3".iter().copied());
        bytes.extend_from_slice(b"\xE4\xB8");
        let (d, out) = detect_and_decode(&bytes, None, None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Meta));
        assert!(!d.confident, "a damaged page is not cached for the site");
        assert!(d.reason.contains("malformed"), "{}", d.reason);
        assert_eq!(out.malformed, 4);
        assert_eq!(out.text.matches('\u{FFFD}').count(), 4);
        assert!(out.text.starts_with("<!DOCTYPE html>") && out.text.contains("正常的中文内容。"));

        // Garbage with no declaration decodes as something, without panicking.
        let noise: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let (_, out) = detect_and_decode(&noise, None, None, None);
        assert!(!out.text.is_empty());

        // A truncated GBK page: one bad trailing byte, the rest intact.
        let mut gbk = GBK.encode("<meta charset=gbk>中文内容").0.into_owned();
        gbk.push(0xD6);
        let out = decode(&gbk, GB18030);
        assert_eq!((out.text.as_str(), out.malformed), ("<meta charset=gbk>中文内容\u{FFFD}", 1));
        assert_eq!(decode(b"", GB18030), Decoded { text: String::new(), malformed: 0 });
    }

    #[test]
    fn prescan_follows_whatwg() {
        let enc = |s: &str| prescan_meta(s.as_bytes()).map(|(l, e)| (l, e.name()));
        assert_eq!(enc(r#"<meta charset="GB2312">"#), Some(("gb2312".into(), "GBK")));
        assert_eq!(enc("<meta charset = ' big5 ' >"), Some(("big5".into(), "Big5")));
        assert_eq!(enc("<meta charset=GBK/>"), Some(("gbk/".into(), "GBK")));
        assert_eq!(enc("<Meta\tContent=\"text/html; charset = gbk\" http-equiv=\"content-type\">"), Some(("gbk".into(), "GBK")));
        // content without http-equiv does not count; a comment hides a meta.
        assert_eq!(enc(r#"<meta content="text/html; charset=gbk">"#), None);
        assert_eq!(enc(r#"<!-- <meta charset="big5"> --><meta charset="utf-8">"#), Some(("utf-8".into(), "UTF-8")));
        // An attribute value that looks like a tag is not one.
        assert_eq!(enc(r#"<a title="<meta charset=big5>"><meta charset=gbk>"#), Some(("gbk".into(), "GBK")));
        // Unknown labels are passed over; UTF-16 in a meta means UTF-8.
        assert_eq!(enc(r#"<meta charset="klingon"><meta charset="utf-16le">"#), Some(("utf-16le".into(), "UTF-16LE")));
        let d = detect(br#"<meta charset="utf-16le"><p>x</p>"#, None, None, None);
        assert_eq!(d.encoding, UTF_8);
        // Only the first 1024 bytes are looked at.
        let late = format!("{}<meta charset=gbk>", " ".repeat(1024));
        assert_eq!(enc(&late), None);
    }

    #[test]
    fn http_charset_parameter() {
        assert_eq!(http_charset("text/html; charset=GBK"), Some("GBK"));
        assert_eq!(http_charset("text/html;charset=\"utf-8\"; foo=bar"), Some("utf-8"));
        assert_eq!(http_charset("text/html"), None);
        assert_eq!(http_charset("text/html; charset="), None);
        // Unknown labels are no evidence at all.
        let d = detect("中文内容，足够长的一段中文内容".as_bytes(), Some("text/html; charset=x-nonsense"), None, None);
        assert_eq!(d.source, Source::Sniffed);
    }
}
