//! html5ever's tag sets (special elements, scopes, implied end tags) and
//! the quirks a doctype sets: the tables the tree-building replay reads.

use html5ever::tokenizer::TagKind;
use html5ever::{local_name, LocalName};

pub(super) fn is_special(n: &LocalName) -> bool {
    matches!(
        *n,
        local_name!("address")
            | local_name!("applet")
            | local_name!("area")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("blockquote")
            | local_name!("body")
            | local_name!("br")
            | local_name!("button")
            | local_name!("caption")
            | local_name!("center")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("dd")
            | local_name!("details")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("dt")
            | local_name!("embed")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("form")
            | local_name!("frame")
            | local_name!("frameset")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("head")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("hr")
            | local_name!("html")
            | local_name!("iframe")
            | local_name!("img")
            | local_name!("input")
            | local_name!("isindex")
            | local_name!("li")
            | local_name!("link")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("marquee")
            | local_name!("menu")
            | local_name!("meta")
            | local_name!("nav")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("object")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("param")
            | local_name!("plaintext")
            | local_name!("pre")
            | local_name!("script")
            | local_name!("section")
            | local_name!("select")
            | local_name!("source")
            | local_name!("style")
            | local_name!("summary")
            | local_name!("table")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("template")
            | local_name!("textarea")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("title")
            | local_name!("tr")
            | local_name!("track")
            | local_name!("ul")
            | local_name!("wbr")
            | local_name!("xmp")
    )
}

pub(super) fn default_scope(n: &LocalName) -> bool {
    matches!(
        *n,
        local_name!("applet")
            | local_name!("caption")
            | local_name!("html")
            | local_name!("table")
            | local_name!("td")
            | local_name!("th")
            | local_name!("marquee")
            | local_name!("object")
            | local_name!("select")
            | local_name!("template")
    )
}

pub(super) fn list_item_scope(n: &LocalName) -> bool {
    default_scope(n) || matches!(*n, local_name!("ol") | local_name!("ul"))
}

pub(super) fn button_scope(n: &LocalName) -> bool {
    default_scope(n) || *n == local_name!("button")
}

pub(super) fn table_scope(n: &LocalName) -> bool {
    matches!(*n, local_name!("html") | local_name!("table") | local_name!("template"))
}

pub(super) fn table_body_context(n: &LocalName) -> bool {
    matches!(*n, local_name!("tbody") | local_name!("tfoot") | local_name!("thead") | local_name!("template") | local_name!("html"))
}

pub(super) fn table_row_context(n: &LocalName) -> bool {
    matches!(*n, local_name!("tr") | local_name!("template") | local_name!("html"))
}

pub(super) fn td_th(n: &LocalName) -> bool {
    matches!(*n, local_name!("td") | local_name!("th"))
}

pub(super) fn cursory_implied_end(n: &LocalName) -> bool {
    matches!(
        *n,
        local_name!("dd")
            | local_name!("dt")
            | local_name!("li")
            | local_name!("option")
            | local_name!("optgroup")
            | local_name!("p")
            | local_name!("rb")
            | local_name!("rp")
            | local_name!("rt")
            | local_name!("rtc")
    )
}

pub(super) fn heading(n: &LocalName) -> bool {
    matches!(*n, local_name!("h1") | local_name!("h2") | local_name!("h3") | local_name!("h4") | local_name!("h5") | local_name!("h6"))
}

pub(super) fn ascii_ws(c: char) -> bool {
    c.is_ascii_whitespace()
}

/// The quirks mode a doctype sets (html5ever's `doctype_error_and_quirks`):
/// only whether it is full quirks matters here.
pub(super) fn doctype_quirks(dt: &html5ever::tokenizer::Doctype) -> bool {
    const QUIRKY_PUBLIC_PREFIXES: &[&str] = &[
        "-//advasoft ltd//dtd html 3.0 aswedit + extensions//",
        "-//as//dtd html 3.0 aswedit + extensions//",
        "-//ietf//dtd html 2.0 level 1//",
        "-//ietf//dtd html 2.0 level 2//",
        "-//ietf//dtd html 2.0 strict level 1//",
        "-//ietf//dtd html 2.0 strict level 2//",
        "-//ietf//dtd html 2.0 strict//",
        "-//ietf//dtd html 2.0//",
        "-//ietf//dtd html 2.1e//",
        "-//ietf//dtd html 3.0//",
        "-//ietf//dtd html 3.2 final//",
        "-//ietf//dtd html 3.2//",
        "-//ietf//dtd html 3//",
        "-//ietf//dtd html level 0//",
        "-//ietf//dtd html level 1//",
        "-//ietf//dtd html level 2//",
        "-//ietf//dtd html level 3//",
        "-//ietf//dtd html strict level 0//",
        "-//ietf//dtd html strict level 1//",
        "-//ietf//dtd html strict level 2//",
        "-//ietf//dtd html strict level 3//",
        "-//ietf//dtd html strict//",
        "-//ietf//dtd html//",
        "-//metrius//dtd metrius presentational//",
        "-//microsoft//dtd internet explorer 2.0 html strict//",
        "-//microsoft//dtd internet explorer 2.0 html//",
        "-//microsoft//dtd internet explorer 2.0 tables//",
        "-//microsoft//dtd internet explorer 3.0 html strict//",
        "-//microsoft//dtd internet explorer 3.0 html//",
        "-//microsoft//dtd internet explorer 3.0 tables//",
        "-//netscape comm. corp.//dtd html//",
        "-//netscape comm. corp.//dtd strict html//",
        "-//o'reilly and associates//dtd html 2.0//",
        "-//o'reilly and associates//dtd html extended 1.0//",
        "-//o'reilly and associates//dtd html extended relaxed 1.0//",
        "-//softquad software//dtd hotmetal pro 6.0::19990601::extensions to html 4.0//",
        "-//softquad//dtd hotmetal pro 4.0::19971010::extensions to html 4.0//",
        "-//spyglass//dtd html 2.0 extended//",
        "-//sq//dtd html 2.0 hotmetal + extensions//",
        "-//sun microsystems corp.//dtd hotjava html//",
        "-//sun microsystems corp.//dtd hotjava strict html//",
        "-//w3c//dtd html 3 1995-03-24//",
        "-//w3c//dtd html 3.2 draft//",
        "-//w3c//dtd html 3.2 final//",
        "-//w3c//dtd html 3.2//",
        "-//w3c//dtd html 3.2s draft//",
        "-//w3c//dtd html 4.0 frameset//",
        "-//w3c//dtd html 4.0 transitional//",
        "-//w3c//dtd html experimental 19960712//",
        "-//w3c//dtd html experimental 970421//",
        "-//w3c//dtd w3 html//",
        "-//w3o//dtd w3 html 3.0//",
        "-//webtechs//dtd mozilla html 2.0//",
        "-//webtechs//dtd mozilla html//",
    ];
    const QUIRKY_PUBLIC_MATCHES: &[&str] = &["-//w3o//dtd w3 html strict 3.0//en//", "-/w3c/dtd html 4.0 transitional/en", "html"];
    const QUIRKY_SYSTEM_MATCHES: &[&str] = &["http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd"];
    const HTML4_PUBLIC_PREFIXES: &[&str] = &["-//w3c//dtd html 4.01 frameset//", "-//w3c//dtd html 4.01 transitional//"];
    if dt.force_quirks || dt.name.as_deref() != Some("html") {
        return true;
    }
    let public = dt.public_id.as_deref().map(str::to_ascii_lowercase);
    let system = dt.system_id.as_deref().map(str::to_ascii_lowercase);
    let pfx = |list: &[&str], p: &str| list.iter().any(|x| p.starts_with(x));
    match (public.as_deref(), system.as_deref()) {
        (Some(p), _) if QUIRKY_PUBLIC_MATCHES.contains(&p) => true,
        (_, Some(s)) if QUIRKY_SYSTEM_MATCHES.contains(&s) => true,
        (Some(p), _) if pfx(QUIRKY_PUBLIC_PREFIXES, p) => true,
        (Some(p), _) if pfx(&["-//w3c//dtd xhtml 1.0 frameset//", "-//w3c//dtd xhtml 1.0 transitional//"], p) => false,
        (Some(p), s) if pfx(HTML4_PUBLIC_PREFIXES, p) => s.is_none(),
        _ => false,
    }
}

/// The parts of a table besides its rows and cells.
pub(super) fn table_part(n: &LocalName) -> bool {
    matches!(*n, local_name!("caption") | local_name!("col") | local_name!("colgroup")) || table_section(n)
}

pub(super) fn table_section(n: &LocalName) -> bool {
    matches!(*n, local_name!("tbody") | local_name!("tfoot") | local_name!("thead"))
}

/// What ends the current table section (with `row`, the current row) and
/// is read again a level up: a new part of the table (or row), or `</table>`.
pub(super) fn table_part_or_end(kind: TagKind, n: &LocalName, row: bool) -> bool {
    match kind {
        TagKind::StartTag => table_part(n) || (row && *n == local_name!("tr")),
        TagKind::EndTag => *n == local_name!("table"),
    }
}

/// End tags every mode inside a table ignores (which of the table's own
/// each ignores is up to the mode).
pub(super) fn table_end_ignored(n: &LocalName) -> bool {
    matches!(*n, local_name!("body") | local_name!("caption") | local_name!("col") | local_name!("colgroup") | local_name!("html"))
}

/// Containers that a start tag in body opens and an end tag closes by
/// scope; the start tag closes a `<p>` first.
pub(super) fn block_container(n: &LocalName) -> bool {
    matches!(
        *n,
        local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("search")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("ul")
    )
}
