//! The links of a page read straight from its bytes: every `<a href>`,
//! those a `<noscript>` holds, `<link rel="next|prev" href>`, and the
//! `<base href>`, for pages whose only use to luntan is where they link
//! (download follows a thread's pager and keeps the page as sent).
//!
//! Building a DOM of every thread page to find its pager took three quarters
//! of luntan-download's CPU. A DOM is not needed to know which `<a>` elements
//! a page has: HTML's tokenizer alone decides what is a tag, and the tree
//! builder only adds, reorders and clones elements. So [`scan`] runs the
//! WHATWG tokenizer's states that matter ([`crate::markup`]) over the
//! raw bytes — tags and their attributes (quotes, `/`, duplicates, a tag cut
//! off by the end of the page),
//! comments, `<!DOCTYPE>`, bogus comments, the raw text of `<script>` (with
//! its `<!--` escapes), `<style>`, `<textarea>`, `<title>` and the rest,
//! `<plaintext>`, and SVG — and [`Page::hrefs`] turns each value into the
//! string html5ever would have: decoded with the page's encoding, `\r` and NUL
//! normalized, character references resolved with html5ever's own table.
//!
//! "The DOM" the scan must agree with is [`crate::pager::each_link`]'s
//! reading of html5ever's tree, which is what a reader without scripts
//! follows: every `a[href]`; every `<link href>` whose `rel` has the token
//! `next` or `prev` ([`is_pager_rel`]; forums that draw their pager with
//! scripts often name the next page only there); and, since html5ever
//! (as a browser with scripts on) keeps a `<noscript>`'s content as raw
//! text, where modern forums put the only pager a crawler can use, both
//! kinds read from that text parsed as a fragment the way a browser with
//! scripts off parses it. The scan reads the same bytes as markup, from
//! `<noscript>` to its `</noscript` and no further; a `<base>` in there is
//! not the page's, for the DOM as here.
//!
//! Why bytes are enough: every encoding luntan meets (GBK, GB18030, Big5,
//! UTF-8, Shift_JIS, EUC, single-byte) is ASCII-compatible, and no byte the
//! tokenizer steers by (`<`, `>`, `/`, `!`, `-`, `=`, quotes, whitespace) can
//! be the second byte of a multi-byte character, so each means the same
//! before decoding as after. A value is decoded only when it holds a byte
//! ≥ 0x80, together with the byte that ended it (which the decoder always
//! gives back as itself), so a damaged character at its end decodes exactly
//! as it does inside the whole page.
//!
//! What the tokenizer cannot settle alone is refused with [`Unsure`], and
//! the caller builds the DOM: a page that may not be ASCII-compatible
//! (UTF-16, ISO-2022-JP), `<frameset>` and `<template>` (the tree builder drops
//! or hides `<a>` there), `<math>`, anything in SVG but plain SVG elements
//! (an `<a>`, a tag that leaves SVG, an integration point, CDATA), and a second
//! `<base href>`; the same inside a `<noscript>`. The one difference left is
//! order: where the tree builder
//! moves an `<a>` (misnested table content is put before its table), the
//! scan keeps source order; the same set of links comes out.

use std::borrow::Cow;

use encoding_rs::Encoding;
use memchr::memchr;

use crate::encoding::{detect, http_charset, prescan_meta};
pub use crate::markup::Span;
use crate::markup::{declaration_end, end_tag, is_space, name_end, raw_end, script_end, tag_rest, unescape_into};

/// Why a page's links need a DOM after all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unsure {
    #[error("the page may be in {0}, which is not ASCII-compatible")]
    Encoding(&'static str),
    #[error("<{0}> changes what the tree builder keeps")]
    Element(&'static str),
    #[error("<{0}> inside SVG")]
    InSvg(String),
    #[error("more than one <base href>")]
    SecondBase,
}

/// What [`scan`] found: the first `<base href>` and, in source order, the
/// `href` of every link a reader without scripts follows (see the module
/// docs).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    /// `<a href>`, `<link rel="next|prev" href>`, and both in `<noscript>`s.
    pub anchors: Vec<Span>,
    pub base: Option<Span>,
}

/// A page's link values as html5ever would read them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Hrefs<'a> {
    pub anchors: Vec<Cow<'a, str>>,
    pub base: Option<Cow<'a, str>>,
}

/// A fetched page and what decides its encoding, read the way
/// `pager::decode` would.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    pub body: &'a [u8],
    pub content_type: Option<&'a str>,
    /// The site file's `<encoding>`.
    pub forced: Option<&'static Encoding>,
}

impl<'a> Page<'a> {
    /// Every link's `href` value ([`Found::anchors`]) and the
    /// `<base href>`, without a DOM.
    ///
    /// The page's encoding is decided only if a value has a non-ASCII byte,
    /// and then without chardetng when the page declares nothing and is
    /// valid UTF-8: pager links are mostly ASCII, and sniffing a page costs
    /// more than the rest of this put together.
    pub fn hrefs(&self) -> Result<Hrefs<'a>, Unsure> {
        let declared = self.declared()?;
        let found = scan(self.body)?;
        let mut encoding: Option<&'static Encoding> = None;
        let mut value = |span: Span| -> Result<Cow<'a, str>, Unsure> {
            let raw = &self.body[span.start..span.end];
            let text = if raw.is_ascii() {
                Cow::Borrowed(std::str::from_utf8(raw).expect("ASCII is UTF-8"))
            } else {
                let enc = match encoding {
                    Some(e) => e,
                    None => *encoding.insert(self.encoding(declared)?),
                };
                Cow::Owned(decode_value(self.body, span, enc)?)
            };
            Ok(unescape(text))
        };
        let anchors = found.anchors.into_iter().map(&mut value).collect::<Result<Vec<_>, _>>()?;
        let base = found.base.map(value).transpose()?;
        Ok(Hrefs { anchors, base })
    }

    /// Whether anything names the page's encoding (site file, BOM, header,
    /// `<meta>`). Refuses pages that anything might decode with an encoding
    /// in which ASCII bytes are not ASCII characters; with nothing declared,
    /// detection guesses, and chardetng never guesses one of those.
    fn declared(&self) -> Result<bool, Unsure> {
        let named = [
            self.forced,
            Encoding::for_bom(self.body).map(|(e, _)| e),
            self.content_type.and_then(http_charset).and_then(|l| Encoding::for_label(l.as_bytes())),
            prescan_meta(self.body).map(|(_, e)| e),
        ];
        if let Some(e) = named.iter().flatten().find(|e| !e.is_ascii_compatible()) {
            return Err(Unsure::Encoding(e.name()));
        }
        // A header label encoding_rs does not know counts as declared too:
        // the shortcut in `encoding` is only taken where nothing is said.
        Ok(named.iter().any(Option::is_some) || self.content_type.and_then(http_charset).is_some())
    }

    /// The encoding `pager::decode` would read the page with.
    fn encoding(&self, declared: bool) -> Result<&'static Encoding, Unsure> {
        // Undeclared valid UTF-8 is UTF-8 to chardetng and to `detect`
        // (tests hold them to it), and checking costs a fraction of a guess.
        if !declared && std::str::from_utf8(self.body).is_ok() {
            return Ok(encoding_rs::UTF_8);
        }
        let e = detect(self.body, self.content_type, self.forced, None).encoding;
        if !e.is_ascii_compatible() {
            return Err(Unsure::Encoding(e.name()));
        }
        Ok(e)
    }
}

/// Decodes a non-ASCII value together with the byte that ended it, so an
/// incomplete character at its end comes out as it does mid-page (the
/// decoder hands the ASCII byte back after the error), then drops that byte.
fn decode_value(body: &[u8], span: Span, enc: &'static Encoding) -> Result<String, Unsure> {
    let (text, _) = enc.decode_without_bom_handling(&body[span.start..=span.end]);
    let mut text = text.into_owned();
    // Every ASCII-compatible encoding gives an ASCII byte back as itself
    // unless it completes a character, and no ending byte can.
    match text.pop() {
        Some(c) if c == char::from(body[span.end]) => Ok(text),
        _ => Err(Unsure::Encoding(enc.name())),
    }
}

// ------------------------------------------------------------------- values

/// A value as the tokenizer leaves it: `\r\n` and `\r` become `\n`, NUL
/// becomes U+FFFD, character references are resolved.
fn unescape(text: Cow<'_, str>) -> Cow<'_, str> {
    if !text.contains(['&', '\r', '\0']) {
        return text;
    }
    let normalized;
    let rest: &str = if text.contains(['\r', '\0']) {
        normalized = text.replace("\r\n", "\n").replace('\r', "\n").replace('\0', "\u{FFFD}");
        &normalized
    } else {
        &text
    };
    let mut out = String::with_capacity(rest.len());
    unescape_into(&mut out, rest, true);
    Cow::Owned(out)
}

// ---------------------------------------------------------------- tokenizer

/// Start tags that end SVG (the tree builder leaves foreign content for them).
#[rustfmt::skip]
const LEAVES_SVG: &[&[u8]] = &[
    b"b", b"big", b"blockquote", b"body", b"br", b"center", b"code", b"dd", b"div", b"dl", b"dt", b"em", b"embed", b"h1", b"h2", b"h3", b"h4", b"h5",
    b"h6", b"head", b"hr", b"i", b"img", b"li", b"listing", b"menu", b"meta", b"nobr", b"ol", b"p", b"pre", b"ruby", b"s", b"small", b"span",
    b"strong", b"strike", b"sub", b"sup", b"table", b"tt", b"u", b"ul", b"var", b"font",
];

/// Finds every link a reader without scripts follows (see [`Found`]) and
/// the first `<base href>` in `b`, in source order, following the
/// tokenizer; see the module docs for what it refuses.
pub fn scan(b: &[u8]) -> Result<Found, Unsure> {
    let mut found = Found::default();
    scan_markup(b, 0, &mut found, false)?;
    Ok(found)
}

/// Whether a `rel` value names a pager: one of its tokens (split at ASCII
/// whitespace, as HTML splits them) is `next` or `prev` in any ASCII case.
/// Bytes or text alike: a token holding a byte ≥ 0x80 is neither before
/// decoding nor after.
pub fn is_pager_rel(rel: &[u8]) -> bool {
    rel.split(|&c| is_space(c)).any(|w| w.eq_ignore_ascii_case(b"next") || w.eq_ignore_ascii_case(b"prev"))
}

/// [`is_pager_rel`] for a raw `rel` value: its character references
/// resolved first (`&#110;ext` is `next`). Decoding cannot change the
/// answer: no multi-byte character in an encoding luntan reads without a
/// DOM takes an ASCII whitespace byte into itself, so tokens split the same,
/// and a token with a byte ≥ 0x80 holds a non-ASCII character either way.
fn raw_pager_rel(raw: &[u8]) -> bool {
    if memchr(b'&', raw).is_none() {
        return is_pager_rel(raw);
    }
    let mut out = String::with_capacity(raw.len());
    unescape_into(&mut out, &String::from_utf8_lossy(raw), true);
    is_pager_rel(out.as_bytes())
}

/// [`scan`] from `i` to the end of `b`. `noscript`: `b` is the raw text of
/// a `<noscript>` (it ends where its `</noscript` starts), read as the
/// fragment a browser without scripts builds of it: a `<noscript>` in it is
/// an ordinary element, and a `<base>` in it is not the page's (which
/// [`Found::base`] stays, as for the DOM).
fn scan_markup(b: &[u8], mut i: usize, found: &mut Found, noscript: bool) -> Result<(), Unsure> {
    // Open SVG elements, lower-cased, outermost first; empty in HTML.
    let mut svg: Vec<Vec<u8>> = Vec::new();
    let in_svg = |what: &[u8]| Unsure::InSvg(String::from_utf8_lossy(what).into_owned());
    while let Some(k) = memchr(b'<', &b[i..]) {
        let lt = i + k;
        let Some(&c) = b.get(lt + 1) else { break };
        if c.is_ascii_alphabetic() {
            let Some(ne) = name_end(b, lt + 1) else { break };
            let name = &b[lt + 1..ne];
            let anchor = name.eq_ignore_ascii_case(b"a");
            let base = name.eq_ignore_ascii_case(b"base");
            let link = name.eq_ignore_ascii_case(b"link");
            let want_href = svg.is_empty() && (anchor || base || link);
            let (mut href, mut rel) = (None, None);
            let Some(tag) = tag_rest(b, ne, |name, value| {
                // A repeated attribute is dropped: the first one counts.
                let name = &b[name.start..name.end];
                if want_href && href.is_none() && name.eq_ignore_ascii_case(b"href") {
                    href = Some(value);
                } else if link && rel.is_none() && name.eq_ignore_ascii_case(b"rel") {
                    rel = Some(value);
                }
            }) else {
                break;
            };
            i = tag.end;
            if !svg.is_empty() {
                let lower = name.to_ascii_lowercase();
                if anchor || base || LEAVES_SVG.contains(&&*lower) || matches!(&*lower, b"foreignobject" | b"desc" | b"title") {
                    return Err(in_svg(&lower));
                }
                if !tag.self_closing {
                    svg.push(lower);
                }
                continue;
            }
            // No name that matters here is longer than this.
            let mut buf = [0u8; 16];
            let lower: &[u8] = match name.len() {
                n @ 1..=16 => {
                    buf[..n].copy_from_slice(name);
                    buf[..n].make_ascii_lowercase();
                    &buf[..n]
                }
                _ => b"",
            };
            match lower {
                b"a" => found.anchors.extend(href),
                b"link" => match (href, rel) {
                    (Some(href), Some(rel)) if raw_pager_rel(&b[rel.start..rel.end]) => found.anchors.push(href),
                    _ => {}
                },
                b"base" if href.is_some() && !noscript => {
                    if found.base.is_some() {
                        return Err(Unsure::SecondBase);
                    }
                    found.base = href;
                }
                b"script" => match script_end(b, i).and_then(|(_, d)| tag_rest(b, d, |_, _| {})) {
                    Some(t) => i = t.end,
                    None => break,
                },
                b"noscript" if !noscript => {
                    // Raw text to the DOM, which a reader without scripts
                    // parses as markup: read it as that, to its `</noscript`
                    // (or the page's end) and no further.
                    let close = raw_end(b, i, name);
                    scan_markup(&b[..close.map_or(b.len(), |(at, _)| at)], i, found, true)?;
                    match close.and_then(|(_, d)| tag_rest(b, d, |_, _| {})) {
                        Some(t) => i = t.end,
                        None => break,
                    }
                }
                b"style" | b"xmp" | b"iframe" | b"noembed" | b"noframes" | b"title" | b"textarea" => {
                    match raw_end(b, i, name).and_then(|(_, d)| tag_rest(b, d, |_, _| {})) {
                        Some(t) => i = t.end,
                        None => break,
                    }
                }
                b"plaintext" => break,
                b"svg" if !tag.self_closing => svg.push(b"svg".to_vec()),
                b"math" => return Err(Unsure::Element("math")),
                b"frameset" => return Err(Unsure::Element("frameset")),
                b"template" => return Err(Unsure::Element("template")),
                _ => {}
            }
        } else if c == b'/' {
            let Some((end, name)) = end_tag(b, lt) else { break };
            i = end;
            if let Some(name) = name.filter(|_| !svg.is_empty()) {
                let lower = b[name.start..name.end].to_ascii_lowercase();
                // An end tag that names no open SVG element closes
                // HTML elements, and SVG with them.
                match svg.iter().rposition(|open| *open == lower) {
                    Some(at) => svg.truncate(at),
                    None => return Err(in_svg(&[b"/", &*lower].concat())),
                }
            }
        } else if c == b'!' || c == b'?' {
            if c == b'!' && b[lt + 2..].starts_with(b"[CDATA[") && !svg.is_empty() {
                // Its `]]>` can hide behind a multi-byte character's second byte.
                return Err(in_svg(b"![CDATA["));
            }
            match declaration_end(b, lt) {
                Some(e) => i = e,
                None => break,
            }
        } else {
            i = lt + 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pager::{base_url, decode, each_link, page_links, page_links_in};
    use luntan_core::site::{LinkMatch, Site};
    use luntan_fixture::{Fixture, FixtureConfig, ForumKind, Hostility};
    use scraper::{Html, Selector};
    use std::collections::{BTreeSet, HashSet, VecDeque};
    use std::path::Path;
    use url::Url;

    type Links = (Vec<String>, Option<String>);

    /// What the DOM makes of a page: every link [`each_link`] finds, in
    /// its order, and the first `base[href]`, decoded the way download used to.
    fn dom(page: &Page) -> Links {
        let text = crate::encoding::detect_and_decode(page.body, page.content_type, page.forced, None).1.text;
        let doc = Html::parse_document(&text);
        let mut links = Vec::new();
        each_link(&doc, None, |l| links.push(l.href.to_owned()));
        let base = Selector::parse("base[href]").unwrap();
        (links, doc.select(&base).next().map(|e| e.value().attr("href").unwrap().to_owned()))
    }

    fn fast(page: &Page) -> Result<Links, Unsure> {
        let h = page.hrefs()?;
        Ok((h.anchors.iter().map(|s| s.to_string()).collect(), h.base.map(|s| s.into_owned())))
    }

    fn html(body: &[u8]) -> Page<'_> {
        Page { body, content_type: Some("text/html; charset=utf-8"), forced: None }
    }

    /// Asserts the scan reads `body` without a DOM and as the DOM does.
    fn same(body: &[u8], content_type: &str) -> Links {
        let page = Page { body, content_type: Some(content_type), forced: None };
        let got = fast(&page).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(body)));
        assert_eq!(got, dom(&page), "{}", String::from_utf8_lossy(body));
        got
    }

    const THREAD: fn(&LinkMatch) -> Option<&str> = |m| m.thread.as_deref();
    const BOARD: fn(&LinkMatch) -> Option<&str> = |m| m.board.as_deref();

    /// download's old reading of a page: decode it, build the DOM, match.
    fn dom_pages(site: &Site, body: &[u8], content_type: Option<&str>, url: &Url, page: bool, id: &str) -> Vec<(u64, Url)> {
        let doc = Html::parse_document(&decode(site, body, content_type));
        let base = base_url(&doc, url);
        let (pattern, key) = if page { (site.links.thread_page.as_ref().unwrap(), THREAD) } else { (site.links.board_page.as_ref().unwrap(), BOARD) };
        page_links(site, &doc, &base, pattern, id, key)
    }

    /// Walks every page of every forum in `cfg` (home, each board's list
    /// pages, each thread's pages, later ones found through the DOM's pager
    /// links) and holds the scan to the DOM on each. Returns the pages seen
    /// and the later-page links found on thread pages.
    fn walk_fixture(cfg: FixtureConfig) -> (usize, usize) {
        let origin = "http://127.0.0.1:9/";
        let fx = Fixture::new(cfg.clone());
        let (mut pages, mut later) = (0, 0);
        for forum in fx.truth().forums {
            let kind = ForumKind::from_site_id(&forum.site).unwrap();
            let site = Site::parse(&luntan_fixture::site_file(&cfg, kind, origin).unwrap(), Path::new("f.xml")).unwrap();
            let mut queue: VecDeque<(String, bool, String)> = VecDeque::new();
            queue.push_back((kind.home_path().to_owned(), false, String::new()));
            queue.extend(forum.boards.iter().map(|b| (b.url_path.clone(), false, b.board.clone())));
            queue.extend(forum.threads.iter().map(|t| (t.url_path.clone(), true, t.thread.clone())));
            let mut seen = HashSet::new();
            while let Some((path, thread_page, id)) = queue.pop_front() {
                if !seen.insert(path.clone()) {
                    continue;
                }
                let resp = fx.get(&path);
                if resp.status != 200 {
                    continue;
                }
                pages += 1;
                let url = Url::parse(origin).unwrap().join(&path).unwrap();
                same(&resp.body, resp.content_type);
                let (pattern, key) =
                    if thread_page { (site.links.thread_page.as_ref().unwrap(), THREAD) } else { (site.links.board_page.as_ref().unwrap(), BOARD) };
                let want = dom_pages(&site, &resp.body, Some(resp.content_type), &url, thread_page, &id);
                let got = page_links_in(&site, &resp.body, Some(resp.content_type), &url, pattern, &id, key);
                assert_eq!(got, want, "{path}");
                if thread_page {
                    later += want.len();
                }
                for (_, u) in want {
                    let next = u[url::Position::BeforePath..].to_owned();
                    queue.push_back((next, thread_page, id.clone()));
                }
            }
        }
        (pages, later)
    }

    #[test]
    fn fixture_pages_of_every_forum_read_as_the_dom_reads_them() {
        let (pages, later) = walk_fixture(FixtureConfig { threads: 40, boards: 2, ..FixtureConfig::default() });
        // Three forums' home, lists and threads, with pagers that lead on.
        assert!(pages > 200, "{pages} pages");
        assert!(later > 150, "{later} later-page links on thread pages");
    }

    #[test]
    fn hostile_fixture_pages_read_as_the_dom_reads_them() {
        // Traversal, off-host and javascript: links, lying charsets, invalid
        // bytes and padding; no faults that keep a page from being served.
        let hostility = Hostility { links: true, mislabel_percent: 40, invalid_bytes_percent: 40, big_percent: 10, big_bytes: 40_000, ..Hostility::default() };
        let (pages, later) = walk_fixture(FixtureConfig { threads: 30, boards: 2, hostility, ..FixtureConfig::default() });
        assert!(pages > 150, "{pages} pages");
        assert!(later > 100, "{later} later-page links on thread pages");
    }

    #[test]
    fn tricky_markup_reads_as_the_dom_reads_it() {
        let cases: &[(&str, &[&str])] = &[
            (r#"<A HREF="viewtopic.php?t=1&amp;start=15">2</A>"#, &["viewtopic.php?t=1&start=15"]),
            ("<a href='x.php?a=1&amp;b=2'>", &["x.php?a=1&b=2"]),
            ("<a href=x.php?a=1&amp;b=2>", &["x.php?a=1&b=2"]),
            ("<a href=x.php?a=1&b=2 class=y>", &["x.php?a=1&b=2"]),
            ("<a\thref\n=\r\n\"y\">", &["y"]),
            (r#"<a title="<a href=no>" href="yes">"#, &["yes"]),
            (r#"<a href="1" HREF="2">"#, &["1"]),
            (r#"<a href="first"href="second">"#, &["first"]),
            (r#"<a/href="slash"><a href="sc"/>"#, &["slash", "sc"]),
            (r#"<a href>empty</a><a href=>e2</a><a href="">e3</a>"#, &["", "", ""]),
            (r#"<a name="x"><a href = ' spaced ' >"#, &[" spaced "]),
            (r#"<a =href="no" "href"="no2" href="yes">"#, &["yes"]),
            (r#"<!-- <a href="commented"> --><a href="after">"#, &["after"]),
            (r#"<!--><a href="1"><!---><a href="2"><!----><a href="3">"#, &["1", "2", "3"]),
            (r#"<!-- --!><a href="bang"><!-- -- > <a href="in"> ---><a href="out">"#, &["bang", "out"]),
            (r#"<!-- <!-- nested --><a href="n">"#, &["n"]),
            (r#"<abbr href="no"><area href="no"><a-b href="no"><ab href=no><a href="yes">"#, &["yes"]),
            (r#"<script>document.write('<a href="in-script">')</script><a href="after-script">"#, &["after-script"]),
            (r#"<script><!-- <script> </script> <a href="dbl"> --></script><a href="after-dbl">"#, &["after-dbl"]),
            (r#"<script><!-- </script><a href="esc-end">"#, &["esc-end"]),
            (r#"<script><!--> </script><a href="x1">"#, &["x1"]),
            (r#"<script><!-- <scriptx> </script><a href="x2">"#, &["x2"]),
            (r#"<script><!-- <script> -- > </script> <a href=no> </SCRIPT> --> </script><a href="x3">"#, &["x3"]),
            (r#"<SCRIPT type="a>b">if (a </scriptx) {}</SCRIPT foo=">" ><a href=ok>"#, &["ok"]),
            (r#"<style>a{} <a href="in-style"></style><a href=s>"#, &["s"]),
            (r#"<textarea><a href="ta"></textarea ><a href=t>"#, &["t"]),
            (r#"<title><a href="ti"></title><a href=ti2>"#, &["ti2"]),
            // A `<noscript>`'s links are read (see `noscript_content_is_read_as_markup`).
            (
                r#"<noscript><a href="ns"></noscript><iframe><a href=if></iframe><xmp><a href=x></xmp><noembed><a></noembed><noframes><a href=nf></noframes><a href=end>"#,
                &["ns", "end"],
            ),
            (r#"<a href="before"><plaintext><a href="never">"#, &["before"]),
            (r#"<a href="kept"><a href="cut""#, &["kept"]),
            (r#"<a href="kept"><a href=cut"#, &["kept"]),
            (r#"<?php <a href="pi"> ?><a href=after-pi>"#, &["after-pi"]),
            (r#"<!DOCTYPE html "<a href='dt'>"><a href=d>"#, &["d"]),
            (r#"</ <a href="bogus"><a href=b></a href="end-tag"><a href=c>"#, &["b", "c"]),
            (r#"<![CDATA[<a href="cdata">]]><a href=x>"#, &["x"]),
            (r#"<a href="&#38;&#x26;&#X26&#0;&#x110000;&#128;&#x81;&#xD800;&#9999999999;&#65&#x;&#;&#">"#, &[]),
            (r#"<a href="?a=1&copy=2&copy&copyx&notit;&notin;&amp&ampx&lt;&nbsp&NotANamedRef;&&;">"#, &[]),
            ("<a href=\"a\r\nb\rc\0d\">", &[]),
            (r#"<table><a href="foster">x</a><tr><td><a href="cell">y</td></tr></table>"#, &["foster", "cell"]),
            (r#"<select><option><a href="in-select">s</a></select>"#, &["in-select"]),
            (r##"<svg viewBox="0 0 1 1"><use xlink:href="#i"/><path d="M0"/><g><style>.x{}</style></g></svg><a href="after-svg">"##, &["after-svg"]),
            (r#"<a href="icon"><svg/></a><svg><script>if (a &lt; b) {}</script></svg><a href=x>"#, &["icon", "x"]),
            (r#"<base target="_blank"><base href="http://forum.test/other/"><a href="rel">"#, &["rel"]),
        ];
        for (snippet, want) in cases {
            let got = same(snippet.as_bytes(), "text/html; charset=utf-8");
            if !want.is_empty() {
                assert_eq!(&got.0, want, "{snippet}");
            }
        }
    }

    #[test]
    fn values_with_non_ascii_bytes_decode_with_the_page_encoding() {
        let gbk = encoding_rs::GBK
            .encode("<html><head><title>中文</title></head><body><a href=\"thread-中文標題.html?q=論壇\">一</a><a href=\"x\">二</a>")
            .0
            .into_owned();
        let got = same(&gbk, "text/html; charset=gbk");
        assert_eq!(got.0, ["thread-中文標題.html?q=論壇", "x"]);
        let big5 = encoding_rs::BIG5.encode("<meta charset=big5><p>繁體中文論壇</p><a href='主題.php?t=1'>").0.into_owned();
        assert_eq!(same(&big5, "text/html").0, ["主題.php?t=1"]);
        // Damaged characters at a value's end decode as they do mid-page:
        // a lone lead byte, half a four-byte GB18030 sequence, a UTF-8 lead.
        let mut damaged = encoding_rs::GBK.encode(&"<p>足够长的中文文字，让编码检测相信声明的国标码</p>".repeat(10)).0.into_owned();
        damaged.extend_from_slice(b"<a href=\"a\x81\"><a href=\"b\x81\x30\"><a href=c\x81\x30><a href='d\xd6\xd0\x81'>");
        let got = same(&damaged, "text/html; charset=gb18030");
        assert_eq!(got.0[1], "b\u{FFFD}0");
        same(b"<a href=\"\xe4\xb8\">", "text/html; charset=utf-8");
    }

    #[test]
    fn every_character_reference_resolves_as_in_html5ever() {
        let mut page = String::new();
        let mut count = 0;
        for (name, v) in web_atoms::NAMED_ENTITIES.entries() {
            if v.0 == 0 {
                continue;
            }
            count += 1;
            // The name alone, then followed by what decides whether a name
            // without `;` counts: `=`, an alphanumeric, anything else.
            for tail in ["", "=", "x", "1", "-", ";"] {
                page.push_str(&format!("<a href=\"&{name}{tail}\"></a><a href=&{name}{tail}></a>"));
            }
        }
        for n in [
            "0",
            "9",
            "38",
            "x26",
            "X26",
            "x0",
            "x80",
            "x81",
            "x9F",
            "xD800",
            "xDFFF",
            "x10FFFF",
            "x110000",
            "xFFFE",
            "1114112",
            "99999999999999",
            "x",
            "X",
            "",
            "0x26",
        ] {
            page.push_str(&format!("<a href=\"&#{n};&#{n}a&#{n}\">"));
        }
        assert!(count > 2000, "{count} references in the table");
        same(page.as_bytes(), "text/html; charset=utf-8");
    }

    /// A phpBB-style site (offset pager) and its thread 7's first page.
    fn phpbb_thread_seven() -> (Site, Url) {
        let site = Site::parse(
            r#"<site id="t"><home>http://forum.test/bbs/index.php</home><links>
                 <board><![CDATA[viewforum\.php\?f={board}$]]></board>
                 <thread><![CDATA[viewtopic\.php\?t={thread}$]]></thread>
                 <thread-page first="0"><![CDATA[viewtopic\.php\?t={thread}&start={page}]]></thread-page>
               </links><thread body="div"/></site>"#,
            Path::new("t.xml"),
        )
        .unwrap();
        (site, Url::parse("http://forum.test/bbs/viewtopic.php?t=7").unwrap())
    }

    #[test]
    fn what_the_scan_cannot_settle_is_left_to_the_dom() {
        let (site, url) = phpbb_thread_seven();
        let pager = r#"<a href="viewtopic.php?t=7&amp;start=15">2</a>"#;
        let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain(pager.encode_utf16().flat_map(u16::to_le_bytes)).collect();
        let cases: Vec<(Vec<u8>, &str, Unsure)> = vec![
            (format!("<frameset>{pager}</frameset>").into_bytes(), "text/html", Unsure::Element("frameset")),
            (format!("<template>{pager}</template>{pager}").into_bytes(), "text/html", Unsure::Element("template")),
            (format!("<math>{pager}</math>").into_bytes(), "text/html", Unsure::Element("math")),
            (format!("<svg>{pager}</svg>").into_bytes(), "text/html", Unsure::InSvg("a".into())),
            (format!("<svg><p>{pager}</svg>").into_bytes(), "text/html", Unsure::InSvg("p".into())),
            (format!("<div><svg><g></div>{pager}").into_bytes(), "text/html", Unsure::InSvg("/div".into())),
            (format!("<svg><![CDATA[ {pager} ]]></svg>{pager}").into_bytes(), "text/html", Unsure::InSvg("![CDATA[".into())),
            (format!("<base href=\"/a/\"><base href=\"/bbs/\">{pager}").into_bytes(), "text/html", Unsure::SecondBase),
            (utf16, "text/html", Unsure::Encoding("UTF-16LE")),
            (pager.as_bytes().to_vec(), "text/html; charset=utf-16be", Unsure::Encoding("UTF-16BE")),
            (format!("<meta charset=iso-2022-jp>{pager}").into_bytes(), "text/html", Unsure::Encoding("ISO-2022-JP")),
        ];
        for (body, ct, why) in &cases {
            let page = Page { body, content_type: Some(ct), forced: None };
            assert_eq!(page.hrefs().as_ref().err(), Some(why), "{}", String::from_utf8_lossy(body));
            let pattern = site.links.thread_page.as_ref().unwrap();
            let want = dom_pages(&site, body, Some(ct), &url, true, "7");
            assert_eq!(page_links_in(&site, body, Some(ct), &url, pattern, "7", THREAD), want, "{}", String::from_utf8_lossy(body));
        }
        // The fallback is the DOM's answer, not an empty one.
        let (body, ct, _) = &cases[0];
        assert_eq!(dom_pages(&site, body, Some(ct), &url, true, "7").len(), 0, "frameset drops the pager");
        let (body, ct, _) = &cases[1];
        assert_eq!(dom_pages(&site, body, Some(ct), &url, true, "7").len(), 1);
    }

    #[test]
    fn base_and_hostile_links_follow_the_same_rules() {
        let (site, url) = phpbb_thread_seven();
        let pattern = site.links.thread_page.as_ref().unwrap();
        let body = br#"<base href="/bbs/sub/"><a href="../viewtopic.php?t=7&amp;start=15">2</a>
            <a href="javascript:location='viewtopic.php?t=7&amp;start=30'">x</a>
            <a href="http://evil.test/bbs/viewtopic.php?t=7&amp;start=45">x</a>
            <a href="viewtopic.php?t=..%2F..%2Fetc&amp;start=60">x</a>
            <a href="/bbs/viewtopic.php?t=7&amp;start=75#p3">x</a>
            <a href="/bbs/viewtopic.php?t=8&amp;start=90">other thread</a>
            <a href="/bbs/viewtopic.php?t=7&amp;start=0">first</a>
            <!-- <a href="/bbs/viewtopic.php?t=7&amp;start=105"> -->"#;
        let got = page_links_in(&site, body, Some("text/html"), &url, pattern, "7", THREAD);
        assert_eq!(got, dom_pages(&site, body, Some("text/html"), &url, true, "7"));
        let got: Vec<(u64, &str)> = got.iter().map(|(p, u)| (*p, u.as_str())).collect();
        assert_eq!(got, [(15, "http://forum.test/bbs/viewtopic.php?t=7&start=15"), (75, "http://forum.test/bbs/viewtopic.php?t=7&start=75")]);
    }

    /// Random soups of the pieces the tokenizer steers by, in UTF-8 and in
    /// GBK with stray lead bytes. Where the scan is sure, the DOM must hold
    /// the same links (as a set: the tree builder clones and moves `<a>`).
    #[test]
    fn random_markup_reads_as_the_dom_reads_it() {
        let pieces: &[&[u8]] = &[
            b"<a href=\"viewtopic.php?t=1&amp;start=15\">",
            b"<a href='v?t=1&start=30'>",
            b"<A HREF=v?t=1&amp;start=45>",
            b"<a href=",
            b"<a ",
            b"href=",
            b" href=\"x\"",
            b"\"",
            b"'",
            b"<",
            b">",
            b"/>",
            b"/",
            b"=",
            b" ",
            b"\n",
            b"\r\n",
            b"\0",
            b"&amp;",
            b"&",
            b"&copy",
            b"&#x26;",
            b"&lt",
            b"<!--",
            b"-->",
            b"--!>",
            b"<!-->",
            b"--",
            b"-",
            b"!",
            b"<!",
            b"<?x ",
            b"<!DOCTYPE html>",
            b"</",
            b"</a>",
            b"</p>",
            b"<p>",
            b"<div title=\"",
            b"<script>",
            b"</script>",
            b"</script >",
            b"<script type=x>",
            b"<!--<script>",
            b"<style>",
            b"</style>",
            b"<textarea>",
            b"</textarea>",
            b"<title>",
            b"</title>",
            b"<noscript>",
            b"</noscript>",
            b"<svg>",
            b"</svg>",
            b"<path d='x'/>",
            b"<g>",
            b"</g>",
            b"<base href=\"/b/\">",
            b"<table>",
            b"<tr><td>",
            b"</table>",
            b"<select>",
            b"<option>",
            b"<b>",
            b"</b>",
            b"<![CDATA[",
            b"]]>",
            b"x",
            b"page=2",
            b"\xd6\xd0\xce\xc4",
            b"\x81",
            b"\x81\x30",
            b"\xe4\xb8\xad",
            b"<svg/>",
            b"</svg >",
            b"<SCRIPT>",
            b"<!--<SCRIPT >",
            b"</SCRIPT>",
            b"<xmp>",
            b"</xmp>",
            b"&#",
            b"&#x",
            b";",
            b"<a/",
            b"<base href=x>",
            b"<noembed>",
            b"</noembed>",
            b"<iframe>",
            b"</iframe>",
            b"\t",
            b"<desc>",
            b"</desc>",
            b"<foreignObject>",
            b"<font color=red>",
            b"<font>",
            b"<math>",
            b"<template>",
            b"</template>",
            b"<plaintext>",
            b"<frameset>",
            b"<a href=\"&amp\">",
            b"<a href=&notin>",
            b"<img src=x>",
            b"<br/>",
            b"<svg><g><a href=s>",
            b"</html>",
            b"<body>",
            b"<head>",
            b"</head>",
            b"<caption>",
            b"<col>",
            b"<colgroup>",
            b"<textarea/>",
            b"<a href=\"\xd6\xd0\">",
            b"<link rel=next href=\"v?t=1&amp;start=60\">",
            b"<link rel=\"stylesheet\" href=s.css>",
            b"<link ",
            b" rel=prev",
            b" rel=\"Next icon\"",
            b"<NOSCRIPT>",
            b"</noscript >",
            b"<noscript><a href=v?t=1&start=75>",
        ];
        let mut rng = fastrand::Rng::with_seed(7);
        let (mut sure, mut total) = (0, 0);
        for round in 0..3000 {
            let mut body = Vec::new();
            for _ in 0..rng.usize(1..80) {
                body.extend_from_slice(pieces[rng.usize(..pieces.len())]);
            }
            let ct = ["text/html; charset=utf-8", "text/html; charset=gbk", "text/html"][round % 3];
            let page = Page { body: &body, content_type: Some(ct), forced: None };
            total += 1;
            let Ok((anchors, base)) = fast(&page) else { continue };
            sure += 1;
            let (dom_anchors, dom_base) = dom(&page);
            let set = |v: Vec<String>| v.into_iter().collect::<BTreeSet<_>>();
            assert_eq!(set(anchors), set(dom_anchors), "{:?}", String::from_utf8_lossy(&body));
            assert_eq!(base, dom_base, "{:?}", String::from_utf8_lossy(&body));
        }
        assert!(sure * 2 > total, "only {sure} of {total} pages read without a DOM");
    }

    #[test]
    fn undeclared_utf8_is_what_detect_says() {
        let pages: &[&str] = &[
            "<a href=\"主\">",
            "<p>é</p><a href='café'>",
            "<a href=/bbs/topic/1/转轴设计/?page=2>2</a> 😀",
            "<html><body>Ünïcödé ñ ß — “quotes” <a href=\"x\">€</a></body></html>",
            "<p>Это русский текст</p><a href=\"страница\">",
            "<p>日本語のテキストです</p><a href=\"ページ\">",
        ];
        for body in pages {
            for ct in [None, Some("text/html")] {
                let page = Page { body: body.as_bytes(), content_type: ct, forced: None };
                assert!(!page.declared().unwrap(), "{body}");
                assert_eq!(page.encoding(false).unwrap(), detect(body.as_bytes(), ct, None, None).encoding, "{body}");
                same(body.as_bytes(), ct.unwrap_or("text/html"));
            }
        }
    }

    #[test]
    fn plain_pages_need_no_detection() {
        // Half a UTF-16 BOM is not one; an ASCII page is read without ever
        // deciding its encoding (no value needs decoding).
        let page = html(b"<a href=\"viewtopic.php?t=1\">\xff</a>");
        assert_eq!(fast(&page).unwrap().0, ["viewtopic.php?t=1"]);
    }

    #[test]
    fn noscript_content_is_read_as_markup() {
        let cases: &[(&str, &[&str])] = &[
            (
                r#"<div id="app"></div><noscript><ul class="pagination"><li><a href="?page=2">2</a></li><li><a href="?page=3">3</a></li></ul></noscript><a href=after>"#,
                &["?page=2", "?page=3", "after"],
            ),
            (r#"<head><noscript><a href=h></noscript></head><body><a href=b>"#, &["h", "b"]),
            (r#"<NOSCRIPT class=x><A HREF="u&amp;v"></NOSCRIPT ><a href=w>"#, &["u&v", "w"]),
            (r#"<noscript/><a href=self-closed></noscript><a href=out>"#, &["self-closed", "out"]),
            (r#"<noscript><a href=unclosed>"#, &["unclosed"]),
            // The first `</noscript` ends it, wherever it stands: inside a
            // script or a comment of its own, the rest is the page's again.
            (r#"<noscript><script>document.write('</noscript>')</script><a href=x></noscript>"#, &["x"]),
            (r#"<noscript><script><a href=in-script></script><a href=ns></noscript>"#, &["ns"]),
            (r#"<noscript><!-- <a href=c> --><a href=n></noscript>"#, &["n"]),
            (r#"<noscript><!-- </noscript><a href=after-comment> -->"#, &["after-comment"]),
            (r#"<noscript><a href="cut</noscript><a href=next>"#, &["next"]),
            (r#"<noscript><a href=cut</noscript><a href=next>"#, &["next"]),
            (r#"<noscript><textarea></noscript><a href=t>"#, &["t"]),
            (r#"<noscript><plaintext><a href=p></noscript><a href=q>"#, &["q"]),
            (r#"<noscript></noscriptx><a href=z></noscript>"#, &["z"]),
            // Nested, the inner one is an ordinary element of the fragment.
            (r#"<noscript><noscript><a href=inner></noscript><a href=outer>"#, &["inner", "outer"]),
            // Raw text: a reference there is text to the fragment, not a tag.
            (r#"<noscript>&lt;a href=esc&gt;</noscript><a href=e>"#, &["e"]),
            // Its `<base>` is not the page's.
            (r#"<noscript><base href="/x/"><a href=y></noscript>"#, &["y"]),
            (r#"<table><noscript><a href=tn></noscript><tr><td>x</table>"#, &["tn"]),
            (r#"<select><noscript><a href=sel></noscript></select>"#, &["sel"]),
            (r#"<noscript><svg><path d=x /></svg><a href=s></noscript>"#, &["s"]),
            // Not a `<noscript>`: in a script's text, a comment, raw text, SVG.
            (r#"<script>var s = '<noscript><a href="no"></noscript>';</script><a href=yes>"#, &["yes"]),
            (r#"<!-- <noscript><a href=no></noscript> --><a href=yes>"#, &["yes"]),
            (r#"<textarea><noscript><a href=no></noscript></textarea><a href=yes>"#, &["yes"]),
            (r#"<title><noscript><a href=no></title><a href=yes>"#, &["yes"]),
            (r#"<svg><noscript><path/></noscript></svg><a href=yes>"#, &["yes"]),
        ];
        for (snippet, want) in cases {
            let got = same(snippet.as_bytes(), "text/html; charset=utf-8");
            assert_eq!(&got.0, want, "{snippet}");
            assert_eq!(got.1, None, "{snippet}");
        }
        let gbk = encoding_rs::GBK.encode("<p>论坛</p><noscript><a href=\"forum-中文-2.html\">下一页</a></noscript>").0.into_owned();
        assert_eq!(same(&gbk, "text/html; charset=gbk").0, ["forum-中文-2.html"]);
        // What the scan cannot settle inside one goes to the DOM, as anywhere.
        for (body, why) in [
            ("<noscript><svg><a href=x></svg></noscript>", Unsure::InSvg("a".into())),
            ("<noscript><template><a href=x></template></noscript>", Unsure::Element("template")),
            ("<noscript><frameset></noscript>", Unsure::Element("frameset")),
        ] {
            assert_eq!(html(body.as_bytes()).hrefs().err(), Some(why), "{body}");
        }
    }

    #[test]
    fn link_rel_next_and_prev_are_links_and_other_rels_are_not() {
        let cases: &[(&str, &[&str])] = &[
            (
                r#"<head><link rel="next" href="/topic/7/slug?page=2"><link rel="Prev stylesheet" href="/topic/7/slug?page=0">
                   <link rel=stylesheet href=/a.css><link rel="nextpage" href=/np><link rel="icon
 NEXT" href=/i><link href=/norel><link rel=next><link rel="alternate" href=/feed></head>"#,
                &["/topic/7/slug?page=2", "/topic/7/slug?page=0", "/i"],
            ),
            // Anywhere in the page, in a `<noscript>` too.
            (r#"<p><link rel=prev href=p1></p><noscript><link rel=next href=n1></noscript>"#, &["p1", "n1"]),
            // The first `rel` and `href` count; references resolve first.
            (r#"<link rel="next" rel="stylesheet" href=first-rel><link rel=stylesheet rel=next href=no>"#, &["first-rel"]),
            (
                r#"<link href=a href=b rel=next><link rel="&#110;ext" href=ent><link rel="x&#32;prev" href=sp><link rel="next&amp;" href=no>"#,
                &["a", "ent", "sp"],
            ),
            // Only ASCII whitespace splits tokens.
            ("<link rel=\"next\u{a0}\" href=nbsp><link rel=\"\tnext\x0c\" href=tab>", &["tab"]),
            // An SVG `<link>` is not HTML's.
            (r#"<svg><link rel=next href=svg-link /></svg><a href=x>"#, &["x"]),
        ];
        for (snippet, want) in cases {
            let got = same(snippet.as_bytes(), "text/html; charset=utf-8");
            assert_eq!(&got.0, want, "{snippet}");
        }
        // A lead byte before a rel's letters takes one into its character:
        // no `next` in the DOM, none in the bytes either.
        let mut gbk = encoding_rs::GBK.encode(&"<p>足够长的中文文字，让编码检测相信声明的国标码</p>".repeat(4)).0.into_owned();
        gbk.extend_from_slice(b"<link rel=\"\x81next\" href=lead><link rel=\"x\x81 next\" href=split>");
        assert_eq!(same(&gbk, "text/html; charset=gbk").0, ["split"]);
        for (rel, pager) in [("next", true), ("PREV", true), ("prev next", true), ("stylesheet", false), ("", false), ("nextprev", false), ("next-page", false)]
        {
            assert_eq!(is_pager_rel(rel.as_bytes()), pager, "{rel:?}");
        }
    }

    /// A thread whose pager is only in `<noscript>` or `<link rel>` is
    /// followed, by the scan and the DOM alike.
    #[test]
    fn pagers_only_in_noscript_or_link_rel_are_followed() {
        let (site, url) = phpbb_thread_seven();
        let pattern = site.links.thread_page.as_ref().unwrap();
        let bodies: [&[u8]; 2] = [
            br#"<div id=app></div><noscript><div class=pagination><a href="viewtopic.php?t=7&amp;start=15">2</a><a href="viewtopic.php?t=7&amp;start=30">3</a></div></noscript>"#,
            br#"<html><head><link rel="prev" href="viewtopic.php?t=7&amp;start=0"><link rel="next" href="/bbs/viewtopic.php?t=7&amp;start=15"></head><body><div id=app></div>"#,
        ];
        for (body, want) in bodies.into_iter().zip([&[15, 30][..], &[15]]) {
            let got = page_links_in(&site, body, Some("text/html"), &url, pattern, "7", THREAD);
            assert_eq!(got, dom_pages(&site, body, Some("text/html"), &url, true, "7"));
            assert_eq!(got.iter().map(|p| p.0).collect::<Vec<_>>(), want, "{}", String::from_utf8_lossy(body));
        }
    }
}
