//! The JSON shape of a hit and of a result summary, one definition for
//! `luntan-search --json` and `luntan-serve`'s `/api/search`.

use serde_json::{json, Value};

use crate::search::{Hit, SearchOptions, SearchResults};
use crate::snippet::Snippet;

/// One hit: `title_html` and `snippet` are HTML with `<b>` highlights (text
/// escaped); `title_highlights` and `highlights` are byte ranges into
/// `title` and `snippet_text`. A hit whose words are only in a quote says
/// so (`in_quote`, and `quote_author` where known): its snippet is the
/// quote's. With ids only, just rank, score, site, thread.
pub fn hit_json(h: &Hit, ids_only: bool) -> Value {
    if ids_only {
        return json!({ "rank": h.rank, "score": h.score, "site": h.site, "thread": h.thread });
    }
    let mut hit = json!({
        "rank": h.rank,
        "score": h.score,
        "site": h.site,
        "forum": h.forum,
        "board": h.board,
        "thread": h.thread,
        "url": h.url,
        "title": h.title,
        "title_html": Snippet { text: h.title.clone(), highlights: h.title_highlights.clone() }.html(),
        "title_highlights": h.title_highlights,
        "posted": h.posted,
        "saved": h.saved,
        "authors": h.authors,
        "replies": h.replies,
        "snippet": h.snippet.html(),
        "snippet_text": h.snippet.text,
        "highlights": h.snippet.highlights,
    });
    // Only on a hit found in a quote, so every other hit's line is as it was.
    if h.in_quote {
        hit["in_quote"] = json!(true);
        if let Some(a) = &h.quote_author {
            hit["quote_author"] = json!(a);
        }
    }
    hit
}

/// The counts behind a page of hits; `took_ms` is rounded to 0.1 ms.
pub fn summary_json(r: &SearchResults, opts: &SearchOptions, took_ms: f64) -> Value {
    json!({
        "total": r.total,
        "per_site": r.per_site,
        "offset": opts.offset,
        "limit": opts.limit,
        "returned": r.hits.len(),
        "took_ms": (took_ms * 10.0).round() / 10.0,
    })
}
