//! HTML building blocks. Pages are `format!` strings with every piece of
//! forum text passed through [`escape`]: the five characters that can end
//! a text node or a quoted attribute are all there is to escape when every
//! value lands in element text or a double-quoted attribute (never in a
//! script, a style, an unquoted attribute or a URL scheme position, see
//! [`safe_href`]). A template crate would do the same escaping behind a
//! macro; this keeps the one rule visible in one function (luntan-core's,
//! which every writer of markup shares).

use std::borrow::Cow;

use luntan_core::escape::Escape;

/// Text for an HTML text node or a double-quoted attribute value (also XML).
pub fn escape(s: &str) -> Cow<'_, str> {
    luntan_core::escape::escape(s, Escape::Html)
}

/// A forum's URL as a link target only when it is http(s): a `javascript:`
/// or `data:` URL from a page must never become a clickable link.
pub fn safe_href(url: &str) -> Option<&str> {
    let lower = url.trim_start().get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")).then_some(url)
}

/// A query-string value.
pub fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A stored time (`2023-11-20T12:28:00`, the forum's wall clock) as people
/// read it: `2023-11-20 12:28`, seconds kept only when they are not zero.
/// Anything else (a bare date, text) comes back as it was.
pub fn readable_time(t: &str) -> String {
    let b = t.as_bytes();
    let shaped = b.len() == 19 && b[10] == b'T' && b[13] == b':' && b[16] == b':' && t.is_char_boundary(10);
    if !shaped {
        return t.to_string();
    }
    let (day, clock) = (&t[..10], &t[11..]);
    match clock.strip_suffix(":00") {
        Some(hm) => format!("{day} {hm}"),
        None => format!("{day} {clock}"),
    }
}

const CSS: &str = r#"
:root { --fg:#1d1d1f; --muted:#6e6e73; --line:#d2d2d7; --accent:#b3261e; --bg:#fff; }
* { box-sizing: border-box; }
body { margin:0; font: 16px/1.6 -apple-system, "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", sans-serif; color:var(--fg); background:var(--bg); }
header { border-bottom:1px solid var(--line); padding:.5rem 1rem; display:flex; gap:1rem; align-items:baseline; flex-wrap:wrap; }
header a.brand { font-weight:700; font-size:1.2rem; color:var(--accent); text-decoration:none; }
nav a { margin-right:.8rem; }
main { max-width:56rem; margin:0 auto; padding:1rem; }
form.search { display:grid; gap:.5rem; margin-bottom:1rem; }
form.search .row { display:flex; flex-wrap:wrap; gap:.5rem 1rem; align-items:center; }
input[type=search] { flex:1 1 16rem; font-size:1.1rem; padding:.4rem .6rem; border:1px solid var(--line); border-radius:.4rem; min-width:0; }
button { font-size:1rem; padding:.4rem 1rem; border-radius:.4rem; border:1px solid var(--accent); background:var(--accent); color:#fff; }
fieldset { border:1px solid var(--line); border-radius:.4rem; padding:.3rem .6rem; }
.count { color:var(--muted); font-size:.85em; }
ol.hits { list-style:none; padding:0; }
ol.hits li { padding:.6rem 0; border-bottom:1px solid var(--line); }
.hit-title { font-size:1.1rem; }
.snippet.in-quote { border-left:3px solid var(--line); padding-left:.5rem; }
.quote-label { color:var(--muted); }
.meta { color:var(--muted); font-size:.85rem; }
.meta a { margin-left:.5rem; }
b, mark { color:var(--accent); background:none; font-weight:700; }
.error { border:1px solid var(--accent); padding:.5rem; border-radius:.4rem; }
article.post { border-bottom:1px solid var(--line); padding:.6rem 0; }
article.post p { margin:.3rem 0; white-space:pre-wrap; overflow-wrap:anywhere; }
table { border-collapse:collapse; width:100%; }
td, th { border-bottom:1px solid var(--line); padding:.25rem .4rem; text-align:right; }
td:first-child, th:first-child { text-align:left; }
.pager { display:flex; flex-wrap:wrap; gap:.3rem .6rem; align-items:baseline; margin:1rem 0; }
.pager a, .pager .current { padding:.1rem .45rem; border-radius:.3rem; }
.pager .current { background:var(--accent); color:#fff; font-weight:700; }
.pager .gap { color:var(--muted); }
.results { display:grid; grid-template-columns:minmax(10rem, 14rem) minmax(0, 1fr); gap:0 1.5rem; align-items:start; }
aside.facets { font-size:.9rem; }
aside.facets h2 { font-size:.95rem; margin:.6rem 0 .2rem; color:var(--muted); }
aside.facets ul { list-style:none; margin:0; padding:0; }
aside.facets li { display:flex; justify-content:space-between; gap:.5rem; }
aside.facets li a { overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
aside.facets a.on { font-weight:700; color:var(--accent); }
.summary { color:var(--muted); }
svg { max-width:100%; height:auto; }
svg.chart .point:hover { stroke-width:3; }
ul.legend { list-style:none; padding:0; margin:.5rem 0; display:flex; flex-wrap:wrap; gap:.3rem 1.2rem; }
ul.legend li { display:flex; align-items:center; gap:.3rem; }
ul.legend svg.key { flex:none; }
details.chart-data { margin:.5rem 0; font-size:.9rem; }
nav.hit-nav { display:flex; flex-wrap:wrap; gap:.3rem 1rem; align-items:baseline; margin:.5rem 0; font-size:.95rem; }
nav.hit-nav a { max-width:22rem; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
nav.hit-nav .place { color:var(--muted); }
a.permalink { color:var(--muted); text-decoration:none; }
blockquote.quote { margin:.4rem 0; padding:.2rem .8rem; border-left:3px solid var(--line); color:var(--muted); background:#f7f7f9; }
blockquote.quote .quote-head { font-size:.85rem; margin:.2rem 0; }
div.replies { margin-left:1.2rem; border-left:2px solid var(--line); padding-left:.8rem; }
div.replies article.post:last-child { border-bottom:none; }
ul.post-links { font-size:.85rem; margin:.3rem 0; padding-left:1.2rem; color:var(--muted); }
a.permalink:hover { text-decoration:underline; }
@media (max-width: 40rem) { main { padding:.5rem; } .hide-narrow { display:none; } .results { grid-template-columns:1fr; } aside.facets { order:2; } }
"#;

/// A whole page: `body` is already HTML, `title` is text.
pub fn page(title: &str, body: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - 论坛搜索</title>
<style>{CSS}</style>
<script src="/static/app.js" defer></script>
</head>
<body>
<header><a class="brand" href="/">论坛搜索</a><nav><a href="/">搜索</a><a href="/trend">趋势</a><a href="/status">状态</a></nav></header>
<main>
{body}
</main>
</body>
</html>
"#,
        title = escape(title)
    )
}

/// The enhancement script: a changed checkbox or select submits its form,
/// so filtering needs no extra click. The page works without it.
pub const SCRIPT: &str = r#"document.addEventListener('change', function (e) {
  var t = e.target;
  if (t.form && t.form.classList.contains('search') && (t.type === 'checkbox' || t.tagName === 'SELECT')) { t.form.submit(); }
});
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_quoted_attributes() {
        assert_eq!(escape(r#""><img src=x onerror='a()'>&"#), "&quot;&gt;&lt;img src=x onerror=&#39;a()&#39;&gt;&amp;");
        assert!(matches!(escape("明月"), Cow::Borrowed(_)));
    }

    #[test]
    fn only_http_urls_become_links() {
        assert!(safe_href("http://a/b").is_some() && safe_href("HTTPS://a").is_some());
        for bad in ["javascript:alert(1)", " JavaScript:x", "data:text/html,x", "file:///etc/passwd", "//evil", "vbscript:x"] {
            assert!(safe_href(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn times_read_as_day_and_minute() {
        assert_eq!(readable_time("2023-11-20T12:28:00"), "2023-11-20 12:28");
        assert_eq!(readable_time("2023-11-20T12:28:05"), "2023-11-20 12:28:05");
        assert_eq!(readable_time("2023-11-20"), "2023-11-20");
        assert_eq!(readable_time("昨天 12:28"), "昨天 12:28");
        assert_eq!(readable_time("一二三四五六T1:3:5"), "一二三四五六T1:3:5");
    }
}
