//! A saved page as the forum served it, under a banner that says what it
//! is, with its links mended so they lead somewhere.
//!
//! The page is decoded with the encoding extract read it with (the thread
//! XML's `<encoding>`) and served as UTF-8. Its `<a href>` and `<area
//! href>` values are read with luntan-text's HTML tokenizer
//! ([`luntan_text::markup`], the one download's link scan and extract
//! stand on) and rewritten:
//!
//! - a link to a page this archive holds (a thread of the same forum that
//!   is extracted or indexed, matched by the site file's thread patterns,
//!   its later pages by the URLs download recorded) goes to that page's
//!   `/archive/<site>/<id>?page=N`;
//! - any other relative link is made absolute against the page's own URL
//!   (or its `<base href>`), so it goes to the forum rather than to this
//!   server;
//! - absolute links, fragments and other schemes stay as written.
//!
//! A `<base href>` is kept only as `data-luntan-base-href`: the rewritten
//! links no longer need it, and left in force it would send this server's
//! own `/archive/…` links to the forum.
//!
//! The page is still the forum's untrusted HTML: it is served under
//! `Content-Security-Policy: sandbox` (a unique origin, no scripts, forms or
//! plugins) and `nosniff`, exactly as before the rewrite.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use encoding_rs::Encoding;
use luntan_core::capture::{self, PageCapture};
use luntan_core::ids::{SiteId, ThreadId};
use luntan_core::site::LinkPattern;
use luntan_core::store::ThreadRow;
use luntan_core::{Site, Store, ThreadState};
use luntan_text::markup::{declaration_end, end_tag, name_end, past_gt, raw_end, script_end, tag_rest, unescape_into, Span};
use url::Url;

use crate::catalog::blocking;
use crate::data::{load_thread, open_store, thread_ids};
use crate::error::ApiError;
use crate::html::{enc, escape, safe_href};
use crate::params::Params;
use crate::State as AppState;

/// The saved page as the forum served it, under a sandbox policy: the
/// browser treats it as a unique origin with scripts, forms and plugins
/// off, so whatever the forum's HTML holds never runs.
pub async fn archive(
    State(st): State<AppState>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
    RawQuery(raw): RawQuery,
) -> Response {
    let Ok(Path((site, id))) = path else { return ApiError::NotFound("no such thread".into()).into_response() };
    let page_no = match Params::parse(raw.as_deref(), &["page"]).and_then(|p| p.number("page", 1, 10_000)) {
        Ok(n) => n.max(1) as u32,
        Err(e) => return e.into_response(),
    };
    let (site, id) = match thread_ids(&site, &id) {
        Ok(ids) => ids,
        Err(e) => return e.into_response(),
    };
    match blocking(move || render(&st, &site, &id, page_no)).await {
        Ok(html) => {
            let mut r = html.into_response();
            let h = r.headers_mut();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
            h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
            h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
            r
        }
        Err(e) => e.into_response(),
    }
}

/// Page `page_no` of a saved thread: decoded, bannered, its links mended.
fn render(st: &AppState, site: &SiteId, id: &ThreadId, page_no: u32) -> Result<String, ApiError> {
    let (row, doc) = load_thread(st, site, id)?;
    let pages = row.pages.unwrap_or(1);
    if page_no > pages {
        return Err(ApiError::NotFound(format!("thread {site}/{id} has no page {page_no}")));
    }
    let loc = row.saved_location().ok_or_else(|| ApiError::NotFound(format!("no saved page of {site}/{id}")))?;
    let bytes = std::fs::read(st.data.html_path(&loc, page_no)).map_err(|_| ApiError::NotFound(format!("no saved page {page_no} of {site}/{id}")))?;
    // Pages saved before captures were kept have none: the thread's URL and save day stand in.
    let captures = capture::read(&st.data.http_path(&loc)).ok().flatten().unwrap_or_default();
    let this = captures.iter().find(|c| c.page == page_no);
    let page_url = this.map(|c| c.url.clone()).unwrap_or_else(|| doc.url.clone());
    let saved_on = this.and_then(saved_at).unwrap_or_else(|| saved_day(row.save_date.as_deref().unwrap_or(&doc.saved)));
    let site_file = Site::load_all(&st.data.sites_dir(), Some(&row.site)).0.into_iter().next();

    let encoding = Encoding::for_label(doc.encoding.as_bytes())
        .or_else(|| site_file.as_ref().and_then(|s| s.encoding))
        .unwrap_or_else(|| luntan_text::encoding::detect(&bytes, row.content_type.as_deref(), None, None).encoding);
    let text = luntan_text::encoding::decode(&bytes, encoding).text;

    let banner = banner(&row, &page_url, &saved_on, page_no, pages);
    let mut archived = Archived { st, store: open_store(st)?, site: site_file, rows: HashMap::new() };
    Ok(rewrite(&text, Url::parse(&page_url).ok().as_ref(), encoding, &banner, |u| archived.path_of(u)))
}

/// When a page arrived, as people read it: `2026-11-30 08:15（UTC）`.
fn saved_at(c: &PageCapture) -> Option<String> {
    let t = c.time().ok()?;
    Some(format!("{:04}-{:02}-{:02} {:02}:{:02}（UTC）", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute()))
}

/// A row's save day (`20261130`) as `2026-11-30`.
fn saved_day(d: &str) -> String {
    if d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()) {
        format!("{}-{}-{}", &d[..4], &d[4..6], &d[6..])
    } else {
        d.to_string()
    }
}

/// The line above the page: whose copy this is, when it was saved, and the
/// way to the thread as luntan read it.
fn banner(row: &ThreadRow, page_url: &str, saved_on: &str, page_no: u32, pages: u32) -> String {
    let url = escape(page_url);
    let original = match safe_href(page_url) {
        Some(u) => format!(r#"<a href="{}" style="color:#0645ad">{url}</a>"#, escape(u)),
        None => url.into_owned(),
    };
    let page_note = if pages > 1 { format!("（第 {page_no} 页，共 {pages} 页）") } else { String::new() };
    format!(
        r#"<div id="luntan-archive-banner" lang="zh-CN" style="all:initial;display:block;box-sizing:border-box;margin:0;padding:6px 12px;background:#fff8c5;border-bottom:1px solid #d4a72c;color:#1d1d1f;font:14px/1.6 sans-serif;text-align:left">这是 {original} 的存档副本，保存于 {saved}{page_note}。<a href="/thread/{site}/{id}" style="color:#0645ad">查看抽取后的主题</a></div>"#,
        saved = escape(saved_on),
        site = escape(&enc(&row.site)),
        id = escape(&enc(&row.thread)),
    )
}

/// Which linked pages this archive holds, each thread looked up once.
struct Archived<'a> {
    st: &'a AppState,
    store: Store,
    site: Option<Site>,
    /// Thread id → its row when the archive serves it, with its pages' URLs.
    rows: HashMap<luntan_core::ids::ThreadId, Option<(ThreadRow, Vec<PageCapture>)>>,
}

impl Archived<'_> {
    /// This server's path for `url` when it is a page of a thread the
    /// archive serves (`/archive/<site>/<id>`, `?page=N` past the first),
    /// its fragment kept.
    fn path_of(&mut self, url: &Url) -> Option<String> {
        let site = self.site.as_ref()?;
        if !site.host_allowed(url) {
            return None;
        }
        let mut bare = url.clone();
        bare.set_fragment(None);
        let links = &site.links;
        let later =
            links.thread_page.as_ref().and_then(|p| Some((p, p.captures(bare.as_str())?.ok()?))).filter(|(p, m)| m.thread.is_some() && !p.is_first(m.page));
        let (pattern, m, first) = match later {
            Some((p, m)) => (p, m, false),
            None => {
                let (p, m) =
                    [Some(&links.thread), links.thread_page.as_ref()].into_iter().flatten().find_map(|p| Some((p, p.captures(bare.as_str())?.ok()?)))?;
                (p, m, true)
            }
        };
        let id = m.thread?;
        if !self.rows.contains_key(&id) {
            let row = self.store.thread(&site.id, &id).ok().flatten().filter(|r| matches!(r.state, ThreadState::Extracted | ThreadState::Indexed));
            let found = row.map(|r| {
                let caps = r.saved_location().and_then(|loc| capture::read(&self.st.data.http_path(&loc)).ok().flatten()).unwrap_or_default();
                (r, caps)
            });
            self.rows.insert(id.clone(), found);
        }
        let (row, caps) = self.rows.get(&id)?.as_ref()?;
        let page = if first { 1 } else { later_page(pattern, &bare, m.page, caps)? };
        if page > row.pages.unwrap_or(1) {
            return None;
        }
        let mut path = format!("/archive/{}/{}", enc(&row.site), enc(&row.thread));
        if page > 1 {
            let _ = write!(path, "?page={page}");
        }
        if let Some(f) = url.fragment() {
            let _ = write!(path, "#{f}");
        }
        Some(path)
    }
}

/// Which saved page a later-page link names: the page download fetched
/// from that URL (both read as the pattern reads them), else, for a pager
/// that counts pages from 1, the number in the link.
fn later_page(pattern: &LinkPattern, url: &Url, value: Option<u64>, caps: &[PageCapture]) -> Option<u32> {
    let want = pattern.canonical(url);
    let recorded = caps.iter().find(|c| Url::parse(&c.url).is_ok_and(|u| u == *url || pattern.canonical(&u) == want)).map(|c| c.page);
    recorded.or_else(|| (pattern.first_page == 1).then_some(value).flatten().and_then(|v| u32::try_from(v).ok()))
}

/// One change to the page's text: `text[start..end]` becomes `with`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

/// `page` with `banner` just inside its `<body>` (else after `</head>`,
/// else first) and every `<a href>`/`<area href>` mended: `archived` names
/// the archive's path for a URL it holds; other relative links become
/// absolute against `page_url` (or the page's `<base href>`), resolved
/// with the page's `encoding` for their query as the forum's own pages
/// would be. Tags are found by HTML's tokenizer states (comments, raw text
/// of `<script>`, `<style>`, `<title>` and the like), as a browser with
/// scripting off finds them, so text that only looks like a tag is left
/// alone.
fn rewrite(page: &str, page_url: Option<&Url>, encoding: &'static Encoding, banner: &str, mut archived: impl FnMut(&Url) -> Option<String>) -> String {
    let b = page.as_bytes();
    let mut hrefs: Vec<Span> = Vec::new();
    let mut base: Option<Span> = None;
    let mut base_attr: Option<Span> = None;
    let (mut body_at, mut head_end) = (None, None);
    let mut i = 0;
    while let Some(k) = b[i..].iter().position(|&c| c == b'<') {
        let lt = i + k;
        let Some(&c) = b.get(lt + 1) else { break };
        if c.is_ascii_alphabetic() {
            let Some(ne) = name_end(b, lt + 1) else { break };
            let name = b[lt + 1..ne].to_ascii_lowercase();
            let linking = matches!(&name[..], b"a" | b"area" | b"base");
            let mut href: Option<(Span, Span)> = None;
            let Some(tag) = tag_rest(b, ne, |n, v| {
                // A repeated attribute is dropped: the first one counts.
                if linking && href.is_none() && b[n.start..n.end].eq_ignore_ascii_case(b"href") {
                    href = Some((n, v));
                }
            }) else {
                break;
            };
            i = tag.end;
            match &name[..] {
                b"a" | b"area" => hrefs.extend(href.map(|(_, v)| v)),
                b"base" if base.is_none() => {
                    if let Some((n, v)) = href {
                        base = Some(v);
                        base_attr = Some(n);
                    }
                }
                b"body" if body_at.is_none() => body_at = Some(tag.end),
                b"script" => match script_end(b, i).and_then(|(_, d)| tag_rest(b, d, |_, _| {})) {
                    Some(t) => i = t.end,
                    None => break,
                },
                // `<noscript>` is not here: with scripts off its content is markup.
                b"style" | b"xmp" | b"iframe" | b"noembed" | b"noframes" | b"title" | b"textarea" => {
                    match raw_end(b, i, &name).and_then(|(_, d)| tag_rest(b, d, |_, _| {})) {
                        Some(t) => i = t.end,
                        None => break,
                    }
                }
                b"plaintext" => break,
                _ => {}
            }
        } else if c == b'/' {
            let Some((end, name)) = end_tag(b, lt) else { break };
            if head_end.is_none() && name.is_some_and(|n| b[n.start..n.end].eq_ignore_ascii_case(b"head")) {
                head_end = Some(end);
            }
            i = end;
        } else if c == b'!' || c == b'?' {
            match declaration_end(b, lt) {
                Some(e) => i = e,
                None => break,
            }
        } else {
            i = lt + 1;
        }
    }

    let value = |v: Span| {
        let mut out = String::new();
        unescape_into(&mut out, &page[v.start..v.end], true);
        out
    };
    let resolve = |base: &Url, v: &str| -> Option<Url> {
        let query_bytes: &dyn Fn(&str) -> Cow<'_, [u8]> = &|s| encoding.encode(s).0;
        let mut options = Url::options().base_url(Some(base));
        if encoding != encoding_rs::UTF_8 {
            options = options.encoding_override(Some(query_bytes));
        }
        options.parse(v).ok()
    };
    // The document's base URL: the first `<base href>`, read against the page's URL.
    let doc_base = match (page_url, base) {
        (Some(u), Some(v)) => resolve(u, &value(v)).or_else(|| Some(u.clone())),
        (u, _) => u.cloned(),
    };

    let mut edits = Vec::new();
    for v in hrefs {
        let raw = value(v);
        let trimmed = raw.trim_matches(|c: char| c.is_ascii_whitespace() || c.is_ascii_control());
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let absolute = Url::parse(trimmed).ok();
        let target = absolute.clone().or_else(|| doc_base.as_ref().and_then(|base| resolve(base, trimmed)));
        let Some(target) = target.filter(|u| matches!(u.scheme(), "http" | "https")) else { continue };
        let new = match archived(&target) {
            Some(path) => path,
            None if absolute.is_none() => target.to_string(),
            None => continue,
        };
        edits.push(quoted(b, v, &new));
    }
    if let Some(n) = base_attr {
        edits.push(Edit { start: n.start, end: n.end, with: "data-luntan-base-href".into() });
    }
    let at = body_at.or(head_end).unwrap_or_else(|| after_doctype(b));
    edits.push(Edit { start: at, end: at, with: banner.to_string() });
    edits.sort_by_key(|e| (e.start, e.end));

    let mut out = String::with_capacity(page.len() + banner.len() + 64 * edits.len());
    let mut copied = 0;
    for e in edits {
        out.push_str(&page[copied..e.start]);
        out.push_str(&e.with);
        copied = e.end;
    }
    out.push_str(&page[copied..]);
    out
}

/// The edit that makes the attribute value at `v` read `new`, quoted with
/// `"` whatever quoted it before.
fn quoted(b: &[u8], v: Span, new: &str) -> Edit {
    let with = format!("\"{}\"", escape(new));
    let q = v.start.checked_sub(1).map(|s| b[s]);
    match q {
        Some(q @ (b'"' | b'\'')) if b.get(v.end) == Some(&q) => Edit { start: v.start - 1, end: v.end + 1, with },
        _ => Edit { start: v.start, end: v.end, with },
    }
}

/// Where a page with neither `<body>` nor `</head>` can take the banner:
/// after its doctype (before it, the page would render in quirks mode).
fn after_doctype(b: &[u8]) -> usize {
    let mut i = 0;
    while i < b.len() && luntan_text::markup::is_space(b[i]) {
        i += 1;
    }
    if b[i..].len() >= 9 && b[i..i + 9].eq_ignore_ascii_case(b"<!DOCTYPE") {
        return past_gt(b, i + 9).unwrap_or(0);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_url() -> Url {
        Url::parse("http://bbs.example/dz/forum.php?mod=viewthread&tid=7").unwrap()
    }

    /// Archive paths for tid=8 and tid=7's page 2; nothing else is saved.
    fn saved(u: &Url) -> Option<String> {
        match u.query() {
            Some("mod=viewthread&tid=8") => Some("/archive/dz/8".into()),
            Some("mod=viewthread&tid=7&page=2") => Some("/archive/dz/7?page=2".into()),
            _ => None,
        }
    }

    #[test]
    fn saved_pages_go_to_the_archive_relative_links_to_the_forum_and_the_rest_stays() {
        let page = concat!(
            "<!DOCTYPE html><html><head><title><a href=\"x\"></title><style>a[href='y']{}</style></head>",
            "<body class=b><a href=\"forum.php?mod=viewthread&amp;tid=8\">8</a>",
            "<a href='forum.php?mod=viewthread&amp;tid=7&amp;page=2'>2</a>",
            "<A HREF=forum.php?mod=forumdisplay&amp;fid=2 class=x>list</A>",
            "<a href=\"#top\">top</a><a href=\"javascript:void(0)\">js</a>",
            "<a href=\"http://other.example/a\">other</a><area href=\"/img/map\">",
            "<!-- <a href=\"comment\"> --><script>var s = '<a href=\"script\">';</script>",
            "<noscript><a href=\"ns\">ns</a></noscript></body></html>"
        );
        let out = rewrite(page, Some(&page_url()), encoding_rs::UTF_8, "<div>BANNER</div>", saved);
        let want = concat!(
            "<!DOCTYPE html><html><head><title><a href=\"x\"></title><style>a[href='y']{}</style></head>",
            "<body class=b><div>BANNER</div><a href=\"/archive/dz/8\">8</a>",
            "<a href=\"/archive/dz/7?page=2\">2</a>",
            "<A HREF=\"http://bbs.example/dz/forum.php?mod=forumdisplay&amp;fid=2\" class=x>list</A>",
            "<a href=\"#top\">top</a><a href=\"javascript:void(0)\">js</a>",
            "<a href=\"http://other.example/a\">other</a><area href=\"http://bbs.example/img/map\">",
            "<!-- <a href=\"comment\"> --><script>var s = '<a href=\"script\">';</script>",
            "<noscript><a href=\"http://bbs.example/dz/ns\">ns</a></noscript></body></html>"
        );
        assert_eq!(out, want);
    }

    #[test]
    fn a_base_href_resolves_the_links_and_is_then_put_out_of_force() {
        let page = "<html><head><base href=\"http://cdn.example/x/\"></head><body><a href=\"y?q=1\">y</a></body></html>";
        let out = rewrite(page, Some(&page_url()), encoding_rs::UTF_8, "B", saved);
        assert_eq!(
            out,
            "<html><head><base data-luntan-base-href=\"http://cdn.example/x/\"></head><body>B<a href=\"http://cdn.example/x/y?q=1\">y</a></body></html>"
        );
    }

    #[test]
    fn a_query_is_encoded_as_the_forum_encodes_it_and_quotes_cannot_break_out() {
        let page = "<p><a href=\"s.php?kw=明月&amp;x=&quot;\">s</a>";
        let out = rewrite(page, Some(&page_url()), encoding_rs::GB18030, "B", saved);
        // 明月 in GBK is C3 F7 D4 C2.
        assert_eq!(out, "B<p><a href=\"http://bbs.example/dz/s.php?kw=%C3%F7%D4%C2&amp;x=%22\">s</a>");
    }

    #[test]
    fn the_banner_goes_after_head_or_doctype_when_there_is_no_body_tag() {
        assert_eq!(rewrite("<!doctype html><title>t</title></head><p>x", None, encoding_rs::UTF_8, "B", saved), "<!doctype html><title>t</title></head>B<p>x");
        assert_eq!(rewrite(" <!DOCTYPE html><p>x", None, encoding_rs::UTF_8, "B", saved), " <!DOCTYPE html>B<p>x");
        assert_eq!(rewrite("<p><a href=rel>x", None, encoding_rs::UTF_8, "B", saved), "B<p><a href=rel>x");
    }

    #[test]
    fn save_days_and_times_read_as_dates() {
        assert_eq!(saved_day("20261130"), "2026-11-30");
        let c = PageCapture { page: 1, url: "http://h/".into(), at: "2026-11-30T08:15:02.417Z".into(), exchange: capture::Exchange::Snapshot };
        assert_eq!(saved_at(&c).unwrap(), "2026-11-30 08:15（UTC）");
    }
}
