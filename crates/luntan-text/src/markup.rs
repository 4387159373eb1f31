//! HTML's tokenizer over bytes: the WHATWG states that decide what is a tag,
//! where a tag, a comment or a raw-text element ends, and what a character
//! reference stands for, as html5ever 0.40 decides them.
//!
//! Two readers stand on this: download's pager-link scan
//! ([`crate::hrefs`]), which only needs where link values (`href`, a `<link>`'s `rel`) lie,
//! and extract's tokenizer (`luntan_extract::scan`), which turns a decoded
//! page into html5ever's tokens without html5ever's character-at-a-time
//! state machine. Both work on bytes: every byte the tokenizer steers by
//! (`<`, `>`, `/`, `!`, `-`, `=`, quotes, whitespace, `&`) is ASCII, and in
//! UTF-8 and every ASCII-compatible legacy encoding luntan reads, no such
//! byte is ever part of a multi-byte character.
//!
//! ```
//! use luntan_text::markup::{tag_rest, unescape_into};
//!
//! let b = br#"<a href="?tid=1&amp;page=2" class=x>"#;
//! let mut attrs = Vec::new();
//! let tag = tag_rest(b, 2, |name, value| attrs.push((name, value))).unwrap();
//! assert_eq!((tag.end, tag.self_closing), (b.len(), false));
//! let (name, href) = attrs[0];
//! assert_eq!(&b[name.start..name.end], b"href");
//! let mut value = String::new();
//! unescape_into(&mut value, std::str::from_utf8(&b[href.start..href.end]).unwrap(), true);
//! assert_eq!(value, "?tid=1&page=2");
//! ```

use memchr::{memchr, memchr2, memmem};

/// HTML's ASCII whitespace as the tokenizer sees it; CR counts, since the
/// tokenizer reads it as the LF it is normalized to.
pub fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0C | b'\r' | b' ')
}

/// Where one attribute value lies: `b[start..end]`, and `b[end]` is the
/// byte that ended it (a quote, whitespace, `>`). `start == end`: empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// A start or end tag read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagEnd {
    /// Just past its `>`.
    pub end: usize,
    pub self_closing: bool,
}

/// Where a tag name starting at `i` ends (at whitespace, `/` or `>`);
/// `None` if the page ends first.
pub fn name_end(b: &[u8], i: usize) -> Option<usize> {
    b[i..].iter().position(|&c| is_space(c) || c == b'/' || c == b'>').map(|k| i + k)
}

/// Reads attributes from `i` (just after the tag name) to the tag's `>`,
/// handing where each one's name (as written) and value (references not
/// resolved) lie to `each`, in source order, repeats included (the first of
/// a name is the one that counts). `None`: the page ends inside the tag,
/// which then never becomes an element.
pub fn tag_rest(b: &[u8], mut i: usize, mut each: impl FnMut(Span, Span)) -> Option<TagEnd> {
    let skip_space = |i: &mut usize| {
        while *i < b.len() && is_space(b[*i]) {
            *i += 1;
        }
    };
    loop {
        skip_space(&mut i);
        match *b.get(i)? {
            b'>' => return Some(TagEnd { end: i + 1, self_closing: false }),
            b'/' => {
                i += 1;
                if *b.get(i)? == b'>' {
                    return Some(TagEnd { end: i + 1, self_closing: true });
                }
                continue;
            }
            _ => {}
        }
        // The first character always belongs to the name, even `=`; quotes
        // and `<` in names are errors but still part of them.
        let name_start = i;
        i += 1;
        while i < b.len() && !(is_space(b[i]) || matches!(b[i], b'/' | b'>' | b'=')) {
            i += 1;
        }
        let name = Span { start: name_start, end: i };
        skip_space(&mut i);
        let value = if b.get(i) == Some(&b'=') {
            i += 1;
            skip_space(&mut i);
            match *b.get(i)? {
                q @ (b'"' | b'\'') => {
                    let close = i + 1 + memchr(q, &b[i + 1..])?;
                    let v = Span { start: i + 1, end: close };
                    i = close + 1;
                    v
                }
                // `href=>`: an empty value, and the `>` ends the tag.
                b'>' => Span { start: i, end: i },
                _ => {
                    let start = i;
                    while i < b.len() && !(is_space(b[i]) || b[i] == b'>') {
                        i += 1;
                    }
                    if i == b.len() {
                        return None;
                    }
                    Span { start, end: i }
                }
            }
        } else {
            Span { start: i, end: i }
        };
        each(name, value);
    }
}

/// If `b[i..]` is `name` (any case) followed by whitespace, `/` or `>`,
/// where that follower is.
pub fn end_name(b: &[u8], i: usize, name: &[u8]) -> Option<usize> {
    let d = i + name.len();
    let follower = *b.get(d)?;
    (b[i..d].eq_ignore_ascii_case(name) && (is_space(follower) || follower == b'/' || follower == b'>')).then_some(d)
}

/// The end of the RAWTEXT or RCDATA content of `<name>` that starts at `i`:
/// where its `</name` starts and where that name ends (the end tag's
/// attributes follow), or `None` if the content runs to the end of the page.
pub fn raw_end(b: &[u8], mut i: usize, name: &[u8]) -> Option<(usize, usize)> {
    loop {
        let at = i + memmem::find(&b[i..], b"</")?;
        if let Some(d) = end_name(b, at + 2, name) {
            return Some((at, d));
        }
        i = at + 1;
    }
}

/// [`raw_end`] for a `<script>`'s content, following the script data
/// states: `<!--` escapes, and inside them a `<script>` that makes
/// `</script>` not end anything until `-->` or its own `</script>`.
pub fn script_end(b: &[u8], mut i: usize) -> Option<(usize, usize)> {
    #[derive(Clone, Copy)]
    enum S {
        Data,
        Escaped,
        EscapedDash,
        EscapedDashDash,
        Double,
        DoubleDash,
        DoubleDashDash,
    }
    let mut s = S::Data;
    loop {
        // Where the next `<` of an escaped state is, once found.
        let lt;
        match s {
            S::Data => {
                let at = i + memchr(b'<', &b[i..])?;
                if b.get(at + 1) == Some(&b'/') {
                    if let Some(d) = end_name(b, at + 2, b"script") {
                        return Some((at, d));
                    }
                    i = at + 2;
                } else if b[at + 1..].starts_with(b"!--") {
                    (i, s) = (at + 4, S::EscapedDashDash);
                } else {
                    i = at + 1;
                }
                continue;
            }
            S::Escaped | S::Double => {
                let at = i + memchr2(b'-', b'<', &b[i..])?;
                if b[at] == b'-' {
                    i = at + 1;
                    s = if matches!(s, S::Escaped) { S::EscapedDash } else { S::DoubleDash };
                    continue;
                }
                lt = at;
            }
            S::EscapedDash | S::EscapedDashDash | S::DoubleDash | S::DoubleDashDash => {
                let double = matches!(s, S::DoubleDash | S::DoubleDashDash);
                let dash_dash = matches!(s, S::EscapedDashDash | S::DoubleDashDash);
                match *b.get(i)? {
                    b'-' => {
                        i += 1;
                        s = if double { S::DoubleDashDash } else { S::EscapedDashDash };
                        continue;
                    }
                    b'<' => lt = i,
                    b'>' if dash_dash => {
                        (i, s) = (i + 1, S::Data);
                        continue;
                    }
                    _ => {
                        i += 1;
                        s = if double { S::Double } else { S::Escaped };
                        continue;
                    }
                }
            }
        }
        let double = matches!(s, S::Double | S::DoubleDash | S::DoubleDashDash);
        if double {
            // Only `</script` + delimiter leaves the double escape.
            match b.get(lt + 1) {
                Some(b'/') => match end_name(b, lt + 2, b"script") {
                    Some(d) => (i, s) = (d + 1, S::Escaped),
                    None => (i, s) = (lt + 2, S::Double),
                },
                _ => (i, s) = (lt + 1, S::Double),
            }
        } else {
            match b.get(lt + 1) {
                Some(b'/') => {
                    if let Some(d) = end_name(b, lt + 2, b"script") {
                        return Some((lt, d));
                    }
                    (i, s) = (lt + 2, S::Escaped);
                }
                Some(c) if c.is_ascii_alphabetic() => match end_name(b, lt + 1, b"script") {
                    Some(d) => (i, s) = (d + 1, S::Double),
                    None => (i, s) = (lt + 1, S::Escaped),
                },
                _ => (i, s) = (lt + 1, S::Escaped),
            }
        }
    }
}

/// Just past the end of a comment whose `<!--` ends at `p`, or `None` if
/// it runs to the end of the page. `<!-->` and `<!--->` are whole comments;
/// otherwise `--`, any more dashes, then `>` or `!>` end it.
pub fn comment_end(b: &[u8], p: usize) -> Option<usize> {
    let rest = &b[p..];
    if rest.starts_with(b">") {
        return Some(p + 1);
    }
    if rest.starts_with(b"->") {
        return Some(p + 2);
    }
    let mut q = p;
    loop {
        let mut e = q + memmem::find(&b[q..], b"--")? + 2;
        while b.get(e) == Some(&b'-') {
            e += 1;
        }
        match b.get(e)? {
            b'>' => return Some(e + 1),
            b'!' if b.get(e + 1) == Some(&b'>') => return Some(e + 2),
            _ => q = e,
        }
    }
}

/// Just past the next `>` from `i` (bogus comments and doctypes end there).
pub fn past_gt(b: &[u8], i: usize) -> Option<usize> {
    memchr(b'>', &b[i..]).map(|k| i + k + 1)
}

/// Just past a markup declaration or processing instruction whose `<` is at
/// `lt` and is followed by `!` or `?`: a comment, a doctype, or what the
/// tokenizer reads as a bogus comment (`<![CDATA[…]>` in HTML, `<?xml …>`);
/// `None` if it runs to the end of the page. A caller that reads SVG or
/// MathML, where `<![CDATA[` is a CDATA section, checks for that first.
pub fn declaration_end(b: &[u8], lt: usize) -> Option<usize> {
    let rest = &b[lt + 2..];
    if b.get(lt + 1) == Some(&b'!') && rest.starts_with(b"--") {
        comment_end(b, lt + 4)
    } else if b.get(lt + 1) == Some(&b'!') && rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"DOCTYPE") {
        past_gt(b, lt + 9)
    } else {
        past_gt(b, lt + 2)
    }
}

/// What starts with `</` at `lt`, read as the tokenizer reads it: where
/// reading goes on, and the name of the end tag it is, if it is one (`</>`
/// is dropped, and `</` before anything but a letter is a bogus comment);
/// `None` if the page ends first.
pub fn end_tag(b: &[u8], lt: usize) -> Option<(usize, Option<Span>)> {
    match *b.get(lt + 2)? {
        b'>' => Some((lt + 3, None)),
        c if c.is_ascii_alphabetic() => {
            let ne = name_end(b, lt + 2)?;
            let tag = tag_rest(b, ne, |_, _| {})?;
            Some((tag.end, Some(Span { start: lt + 2, end: ne })))
        }
        _ => past_gt(b, lt + 2).map(|e| (e, None)),
    }
}

// --------------------------------------------------- character references

/// The character reference at the start of `after` (the text after a `&`):
/// its characters and how many bytes it used, or `None` when the `&` stays
/// literal. `in_attribute`: for old pages' sake, `&copy=` and `&copyx` stay
/// literal in attribute values. html5ever's algorithm, step for step.
pub fn reference(after: &str, in_attribute: bool) -> Option<([Option<char>; 2], usize)> {
    let b = after.as_bytes();
    match b.first()? {
        b'#' => {
            let hex = matches!(b.get(1), Some(b'x' | b'X'));
            let (radix, from) = if hex { (16, 2) } else { (10, 1) };
            let digits = b[from..].iter().take_while(|c| char::from(**c).is_digit(radix)).count();
            if digits == 0 {
                return None;
            }
            let mut n: u32 = 0;
            let mut too_big = false;
            for &d in &b[from..from + digits] {
                n = n.saturating_mul(radix).saturating_add(char::from(d).to_digit(radix).expect("counted as a digit"));
                too_big |= n > 0x10FFFF;
            }
            let used = from + digits + usize::from(b.get(from + digits) == Some(&b';'));
            Some(([Some(numeric(n, too_big)), None], used))
        }
        c if c.is_ascii_alphanumeric() => {
            // Query strings and posts are full of these, and a name ending
            // in `;` is the longest match there is: no need to walk the table.
            for (name, ch) in [("amp;", '&'), ("lt;", '<'), ("gt;", '>'), ("quot;", '"'), ("nbsp;", '\u{A0}')] {
                if after.starts_with(name) {
                    return Some(([Some(ch), None], name.len()));
                }
            }
            // The longest prefix that names a reference; the table also holds
            // every prefix of every name, so the walk stops where no name can.
            let mut best: Option<((u32, u32), usize)> = None;
            for (i, ch) in after.char_indices() {
                let end = i + ch.len_utf8();
                match web_atoms::NAMED_ENTITIES.get(&after[..end]) {
                    Some(&v) if v.0 != 0 => best = Some((v, end)),
                    Some(_) => {}
                    None => break,
                }
            }
            let ((c1, c2), len) = best?;
            // In an attribute, the value's end (a quote, a space, `>`) does
            // not keep a reference without `;` literal; `=` and alphanumerics do.
            if in_attribute && b[len - 1] != b';' && b.get(len).is_some_and(|n| *n == b'=' || n.is_ascii_alphanumeric()) {
                return None;
            }
            let chars = [char::from_u32(c1), if c2 == 0 { None } else { char::from_u32(c2) }];
            Some((chars, len))
        }
        _ => None,
    }
}

/// What `&#n;` stands for, errors resolved as html5ever does.
fn numeric(n: u32, too_big: bool) -> char {
    match n {
        _ if too_big => '\u{FFFD}',
        0 | 0xD800..=0xDFFF => '\u{FFFD}',
        0x80..=0x9F => web_atoms::C1_REPLACEMENTS[(n - 0x80) as usize].unwrap_or_else(|| char::from_u32(n).expect("C1 control")),
        n => char::from_u32(n).unwrap_or('\u{FFFD}'),
    }
}

/// Appends `text` to `out` with its character references resolved, as the
/// tokenizer resolves them in text (`in_attribute` false) or in an
/// attribute value.
pub fn unescape_into(out: &mut String, mut text: &str, in_attribute: bool) {
    while let Some(k) = memchr(b'&', text.as_bytes()) {
        out.push_str(&text[..k]);
        let after = &text[k + 1..];
        match reference(after, in_attribute) {
            Some((chars, used)) => {
                out.extend(chars.into_iter().flatten());
                text = &after[used..];
            }
            None => {
                out.push('&');
                text = after;
            }
        }
    }
    out.push_str(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unescaped(text: &str, in_attribute: bool) -> String {
        let mut out = String::new();
        unescape_into(&mut out, text, in_attribute);
        out
    }

    #[test]
    fn references_without_a_semicolon_stay_literal_only_in_attributes_before_equals_or_alphanumerics() {
        assert_eq!(unescaped("&copy=1 &copyx &copy; &notit; &amp &#26a &#x;", false), "©=1 ©x © ¬it; & \u{1A}a &#x;");
        assert_eq!(unescaped("&copy=1 &copyx &copy; &notit; &amp &#26a &#x;", true), "&copy=1 &copyx © &notit; & \u{1A}a &#x;");
        assert_eq!(unescaped("&#128; &#0; &#xD800; &#x110000; &nbsp;&", false), "€ \u{FFFD} \u{FFFD} \u{FFFD} \u{A0}&");
    }

    #[test]
    fn declarations_end_where_the_tokenizer_ends_them() {
        fn end(s: &str) -> Option<&str> {
            declaration_end(s.as_bytes(), 0).map(|e| &s[..e])
        }
        assert_eq!(end("<!-- a > b -->x"), Some("<!-- a > b -->"));
        assert_eq!(end("<!doctype html>x"), Some("<!doctype html>"));
        assert_eq!(end("<!DOCTYPE>x"), Some("<!DOCTYPE>"));
        assert_eq!(end("<![CDATA[a>b]]>x"), Some("<![CDATA[a>"));
        assert_eq!(end("<?xml version=\"1.0\"?>x"), Some("<?xml version=\"1.0\"?>"));
        assert_eq!(end("<!x"), None);
        assert_eq!(end("<!-- open"), None);
    }

    #[test]
    fn comments_end_where_html5ever_ends_them() {
        fn end(s: &str) -> Option<&str> {
            comment_end(s.as_bytes(), 4).map(|e| &s[..e])
        }
        assert_eq!(end("<!-->x"), Some("<!-->"));
        assert_eq!(end("<!--->x"), Some("<!--->"));
        assert_eq!(end("<!--!>x-->"), Some("<!--!>x-->"));
        assert_eq!(end("<!-- a --!> b"), Some("<!-- a --!>"));
        assert_eq!(end("<!-- a ---> b"), Some("<!-- a --->"));
        assert_eq!(end("<!-- a -- b"), None);
    }

    #[test]
    fn scripts_end_at_their_end_tag_unless_an_escape_hides_it() {
        fn end(s: &str) -> Option<(&str, &str)> {
            script_end(s.as_bytes(), 8).map(|(lt, d)| (&s[8..lt], &s[d..]))
        }
        assert_eq!(end("<script>a<b</SCRIPT >"), Some(("a<b", " >")));
        assert_eq!(end("<script><!--<script></script>x--></script>"), Some(("<!--<script></script>x-->", ">")));
        assert_eq!(end("<script><!-- </script>"), Some(("<!-- ", ">")));
        assert_eq!(end("<script></scripty></script/>"), Some(("</scripty>", "/>")));
        assert_eq!(end("<script><!--<script>"), None);
    }
}
