//! `<media>`: which of a thread's pictures and attachments `luntan-media`
//! archives, once per content hash, and what it refuses to keep.
//!
//! ```xml
//! <media images="true" attachments="forum\.php\?mod=attachment&amp;aid=\d+"
//!        max-kb="4096" types="image/* application/pdf application/zip"/>
//! ```
//!
//! Without the element nothing is fetched: media cost the forum far more
//! bytes than its pages, so archiving them is the operator's choice per site.

use regex::Regex;
use serde::Deserialize;

use super::locate::Ctx;
use super::SiteError;

/// The per-file cap when `max-kb` gives none: 10 MB.
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 10 << 20;

/// What a forum's media archive keeps.
#[derive(Debug, Clone)]
pub struct MediaRules {
    /// The posts' `<img>`s (the thread XML's `images`).
    pub images: bool,
    /// Links (the thread XML's `links`) whose absolute URL this finds are
    /// attachments, archived as the images are.
    pub attachments: Option<Regex>,
    /// A file larger than this is refused, unread past the cap.
    pub max_bytes: u64,
    /// Content types kept, lower case: `image/png`, or `image/*` for any
    /// subtype.
    pub types: Vec<String>,
}

impl MediaRules {
    /// Whether a post's link is an attachment to archive.
    pub fn is_attachment(&self, href: &str) -> bool {
        self.attachments.as_ref().is_some_and(|p| p.is_match(href))
    }

    /// Whether a response of `mime` (its type and subtype, lower case, no
    /// parameters) is kept.
    pub fn type_allowed(&self, mime: &str) -> bool {
        self.types.iter().any(|t| match t.strip_suffix("/*") {
            Some(major) => mime.split_once('/').is_some_and(|(m, _)| m == major),
            None => t == mime,
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMedia {
    /// Read as text, not `bool`: serde's error for a bad boolean names no
    /// attribute, and the file's reader should learn which one.
    #[serde(rename = "@images")]
    images: Option<String>,
    #[serde(rename = "@attachments")]
    attachments: Option<String>,
    #[serde(rename = "@max-kb")]
    max_kb: Option<u64>,
    #[serde(rename = "@types")]
    types: Option<String>,
}

/// `<media>` checked: something to keep, a cap above zero, a pattern that
/// compiles, content types written `type/subtype` or `type/*`.
pub(super) fn media(ctx: &Ctx, raw: &RawMedia) -> Result<MediaRules, SiteError> {
    let attachments = match raw.attachments.as_deref().map(str::trim) {
        None => None,
        Some("") => return Err(ctx.err("media@attachments", "empty pattern (leave it out to keep no attachments)")),
        Some(p) => Some(
            Regex::new(p)
                .map_err(|e| ctx.err("media@attachments", format!("bad regular expression: {}", e.to_string().lines().last().unwrap_or("").trim())))?,
        ),
    };
    let images = match raw.images.as_deref().map(str::trim) {
        None | Some("true") => true,
        Some("false") => false,
        Some(other) => return Err(ctx.err("media@images", format!("{other:?} is not true or false"))),
    };
    if !images && attachments.is_none() {
        return Err(ctx.err("media", "keeps nothing: leave images=\"true\" or give attachments=\"…\" (a pattern for attachment links)"));
    }
    let max_bytes = match raw.max_kb {
        Some(0) => return Err(ctx.err("media@max-kb", "must be above 0")),
        Some(kb) => kb.saturating_mul(1024),
        None => DEFAULT_MEDIA_MAX_BYTES,
    };
    let types = match &raw.types {
        None => vec!["image/*".to_owned()],
        Some(list) => {
            let types: Vec<String> = list.split([' ', ',', '\t', '\n']).filter(|t| !t.is_empty()).map(str::to_ascii_lowercase).collect();
            if types.is_empty() {
                return Err(ctx.err("media@types", "lists no content type (leave it out for image/*)"));
            }
            if let Some(bad) = types.iter().find(|t| !is_media_type(t)) {
                return Err(ctx.err("media@types", format!("{bad:?} is not a content type such as image/png or image/*")));
            }
            types
        }
    };
    Ok(MediaRules { images, attachments, max_bytes, types })
}

/// `type/subtype` or `type/*`, each part a token (RFC 9110's tchar, less
/// what never appears in a real type).
fn is_media_type(t: &str) -> bool {
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
    match t.split_once('/') {
        Some((major, "*")) => token(major),
        Some((major, minor)) => token(major) && token(minor),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::site::tests::{discuz_with, parse};

    #[test]
    fn media_is_off_unless_the_file_asks_and_its_defaults_keep_pictures() {
        assert!(parse(&discuz_with("")).unwrap().media.is_none());
        let m = parse(&discuz_with("<media/>")).unwrap().media.unwrap();
        assert!(m.images && m.attachments.is_none());
        assert_eq!((m.max_bytes, m.types.as_slice()), (10 << 20, &["image/*".to_owned()][..]));
        assert!(m.type_allowed("image/jpeg") && !m.type_allowed("text/html") && !m.type_allowed("imagex/png"));
        assert!(!m.is_attachment("http://h/forum.php?mod=attachment&aid=1"));
    }

    #[test]
    fn attachments_caps_and_types_are_read() {
        let m = parse(&discuz_with(
            r#"<media images="false" attachments="mod=attachment&amp;aid=\d+" max-kb="512" types="Image/PNG, application/pdf  application/*"/>"#,
        ))
        .unwrap()
        .media
        .unwrap();
        assert!(!m.images);
        assert!(m.is_attachment("http://h/forum.php?mod=attachment&aid=12") && !m.is_attachment("http://h/forum.php?mod=viewthread"));
        assert_eq!(m.max_bytes, 512 * 1024);
        assert!(m.type_allowed("image/png") && m.type_allowed("application/zip") && !m.type_allowed("image/jpeg"));
    }

    #[test]
    fn each_mistake_is_one_line_naming_its_attribute_and_line() {
        for (attrs, field, says) in [
            (r#"max-kb="0""#, "max-kb", "above 0"),
            (r#"attachments="aid=(""#, "attachments", "bad regular expression"),
            (r#"attachments=" ""#, "attachments", "empty pattern"),
            (r#"types="image""#, "types", "not a content type"),
            (r#"types=" , ""#, "types", "lists no content type"),
            (r#"images="false""#, "media", "keeps nothing"),
            (r#"images="yes please""#, "images", "not true or false"),
            (r#"max-mb="3""#, "max-mb", "unknown field"),
        ] {
            let e = parse(&discuz_with(&format!("<media {attrs}/>"))).unwrap_err();
            assert_eq!((e.field.as_str(), e.line), (field, 8), "{attrs}: {e}");
            assert!(e.message.contains(says), "{attrs}: {e}");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
}
