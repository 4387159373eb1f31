//! Error location for site files: the line an element path such as
//! `thread@title` points at, the well-formedness pass that gives XML errors
//! their line, and the one-line form of every message, kept apart so that
//! validation only has to say what is wrong and where.

use std::path::Path;

use super::SiteError;

/// The text being read and where it came from: every error names the file
/// and looks its line up in the text.
pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
}

impl Ctx<'_> {
    /// An error at `at`: a path below `<site>` such as `home`, `links/thread`,
    /// `thread@title` or `@id`. The report names the last part; the path
    /// finds the right line when one name is used in several elements
    /// (`title` is an attribute of both `<list>` and `<thread>`).
    pub(super) fn err(&self, at: &str, message: impl Into<String>) -> SiteError {
        let field = at.rsplit(['/', '@']).next().unwrap_or(at);
        SiteError { path: self.path.to_owned(), line: self.line_of(at), field: field.to_owned(), message: one_line(&message.into()) }
    }

    fn line_of(&self, at: &str) -> usize {
        let (elements, attribute) = match at.split_once('@') {
            Some((e, a)) => (e, Some(a)),
            None => (at, None),
        };
        let path: Vec<&str> = elements.split('/').filter(|e| !e.is_empty()).collect();
        if let Some(byte) = locate(self.text, &path, attribute) {
            return line_at(self.text, byte);
        }
        // Not in the document (a required part is missing, or serde named
        // something the path cannot express): the first mention, else line 1.
        let name = attribute.or(path.last().copied()).unwrap_or(at);
        let element = self.text.find(&format!("<{name}"));
        let attribute = || self.text.find(&format!(" {name}=")).or_else(|| self.text.find(&format!("\t{name}=")));
        element.or_else(attribute).map(|at| line_at(self.text, at)).unwrap_or(1)
    }
}

/// The byte where the first element at `path` below the root starts, or
/// where its `attribute` is written.
fn locate(text: &str, path: &[&str], attribute: Option<&str>) -> Option<usize> {
    use quick_xml::events::Event;
    let bom = bom_len(text);
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<Vec<u8>> = Vec::new();
    loop {
        let start = reader.buffer_position() as usize + bom;
        let (tag, empty) = match reader.read_event().ok()? {
            Event::Start(t) => (t.into_owned(), false),
            Event::Empty(t) => (t.into_owned(), true),
            Event::End(_) => {
                stack.pop();
                continue;
            }
            Event::Eof => return None,
            _ => continue,
        };
        let depth = stack.len();
        let name: Vec<u8> = tag.name().into_inner().as_bytes().to_vec();
        // The root is depth 0; `path` starts below it.
        let here =
            depth >= 1 && depth == path.len() && stack[1..].iter().zip(path).all(|(s, p)| s.as_slice() == p.as_bytes()) && name == path[depth - 1].as_bytes();
        let at_root = depth == 0 && path.is_empty();
        if here || at_root {
            match attribute {
                None => return Some(start),
                Some(a) => {
                    let raw: &[u8] = tag.as_bytes();
                    let named_here = |i: usize| {
                        raw[i - 1].is_ascii_whitespace()
                            && raw[i..].starts_with(a.as_bytes())
                            && raw[i + a.len()..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'=')
                    };
                    // `raw` starts after the `<`.
                    if let Some(i) = (1..raw.len()).find(|&i| named_here(i)) {
                        return Some(start + 1 + i);
                    }
                }
            }
        }
        if !empty {
            stack.push(name);
        }
    }
}

/// Error texts from regex, CSS and XML parsers span lines; the report is one.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// quick-xml skips a leading byte order mark and counts positions after it.
fn bom_len(text: &str) -> usize {
    if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

/// Counts bytes, not chars, so a position inside a character (or past the
/// end) still gives a line instead of a panic.
fn line_at(text: &str, byte: usize) -> usize {
    let bytes = text.as_bytes();
    bytes[..byte.min(bytes.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The field serde's message names in backticks, if what is quoted looks
/// like a field name: serde also quotes chunks of the input it choked on.
pub(super) fn quoted_word(msg: &str) -> Option<String> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    let w = msg[start..start + len].trim_start_matches('@');
    let field_like = !w.is_empty() && w.len() <= 40 && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    field_like.then(|| w.to_owned())
}

/// A syntax pass first, because quick-xml's serde errors carry no position.
pub(super) fn check_well_formed(ctx: &Ctx) -> Result<(), SiteError> {
    let mut reader = quick_xml::Reader::from_str(ctx.text);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => return Ok(()),
            Ok(_) => {}
            Err(e) => {
                let at = reader.error_position() as usize + bom_len(ctx.text);
                return Err(SiteError { path: ctx.path.to_owned(), line: line_at(ctx.text, at), field: "xml".into(), message: one_line(&e.to_string()) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::site::tests::{parse, DISCUZ};

    #[test]
    fn a_bad_regex_names_its_line_and_field() {
        let text = DISCUZ.replace("tid={thread}$", "tid=(?P<thread>\\d+");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.field, "thread");
        assert_eq!(e.line, 11);
        let shown = e.to_string();
        assert!(shown.starts_with("data/sites/x.xml: line 11: thread: bad regular expression"), "{shown}");
    }

    #[test]
    fn broken_xml_gives_the_line() {
        let e = parse(&DISCUZ.replace("</name>", "</nam>")).unwrap_err();
        assert_eq!(e.field, "xml");
        assert_eq!(e.line, 3);
    }

    #[test]
    fn a_name_used_by_two_elements_points_at_the_one_that_is_wrong() {
        // `title` is an attribute of <list> (line 14) and of <thread> (line 15).
        let e = parse(&DISCUZ.replace(r##"title="#thread_subject""##, r##"title="#thread_subject[""##)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("title", 15), "{e}");
        let e = parse(&DISCUZ.replace(r#"title="a.xst""#, r#"title="a..xst""#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("title", 14), "{e}");
        // <thread> is both a link pattern (line 11) and the post rules (line 15).
        let e = parse(&DISCUZ.replace(r#" body-id="postmessage_\d+""#, "")).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("thread", 15), "{e}");
    }

    #[test]
    fn lines_count_from_the_top_of_a_file_with_a_byte_order_mark() {
        let bom = |t: &str| format!("\u{feff}{t}");
        let e = parse(&bom(&DISCUZ.replace(r#"author="a.xw1""#, r#"author="a..xw1""#))).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("author", 16), "{e}");
        let e = parse(&bom(&DISCUZ.replace("</name>", "</nam>"))).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("xml", 3), "{e}");
    }

    #[test]
    fn unknown_and_missing_fields_are_named() {
        let e = parse(&DISCUZ.replace("<max-board-pages>", "<max-bord-pages>").replace("</max-board-pages>", "</max-bord-pages>")).unwrap_err();
        assert!(e.to_string().contains("max-bord-pages"), "{e}");
        let e = parse(&DISCUZ.replace("  <home>http://127.0.0.1:8080/dz/forum.php</home>\n", "")).unwrap_err();
        assert!(e.to_string().contains("home"), "{e}");
    }
}
