//! The site file as serde reads it, every value still unchecked: a shape
//! that follows the XML, so the public types can follow their users instead.

use serde::Deserialize;

use super::locate::{check_well_formed, quoted_word, Ctx};
use super::SiteError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSite {
    #[serde(rename = "@id")]
    pub(super) id: Option<String>,
    pub(super) name: Option<String>,
    pub(super) home: String,
    pub(super) encoding: Option<String>,
    pub(super) politeness: Option<RawPoliteness>,
    #[serde(rename = "max-board-pages")]
    pub(super) max_board_pages: Option<u32>,
    #[serde(rename = "allow-host", default)]
    pub(super) allow_host: Vec<String>,
    pub(super) incremental: Option<RawIncremental>,
    pub(super) focus: Option<RawFocus>,
    pub(super) search: Option<RawSearch>,
    #[serde(rename = "account", default)]
    pub(super) account: Vec<RawAccount>,
    pub(super) links: Option<RawLinks>,
    pub(super) list: Option<RawList>,
    pub(super) thread: Option<RawThread>,
    pub(super) json: Option<RawJson>,
    pub(super) browser: Option<super::browser::RawBrowser>,
    /// A hybrid site's comments: JSON under HTML articles.
    pub(super) comments: Option<super::hybrid::RawComments>,
    /// Which pictures and attachments `luntan-media` archives.
    pub(super) media: Option<super::media::RawMedia>,
}

impl RawSite {
    /// Reads site-file text; only the XML and the element and attribute
    /// names are checked here, the values are `validate`'s.
    pub(super) fn read(ctx: &Ctx) -> Result<RawSite, SiteError> {
        check_well_formed(ctx)?;
        quick_xml::de::from_str(ctx.text).map_err(|e| {
            let msg = e.to_string();
            // serde names the offending field in its message; point at it when we can.
            let field = quoted_word(&msg).unwrap_or_else(|| "site".into());
            ctx.err(&field, msg)
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPoliteness {
    #[serde(rename = "@delay-ms")]
    pub(super) delay_ms: Option<u64>,
    #[serde(rename = "@concurrency")]
    pub(super) concurrency: Option<usize>,
    #[serde(rename = "@timeout-ms")]
    pub(super) timeout_ms: Option<u64>,
    #[serde(rename = "@retries")]
    pub(super) retries: Option<u32>,
    #[serde(rename = "@max-body-kb")]
    pub(super) max_body_kb: Option<u64>,
    #[serde(rename = "@robots")]
    pub(super) robots: Option<bool>,
    #[serde(rename = "@user-agent")]
    pub(super) user_agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSearch {
    #[serde(rename = "@row")]
    pub(super) row: String,
    #[serde(rename = "@time")]
    pub(super) time: String,
    #[serde(rename = "@encoding")]
    pub(super) encoding: Option<String>,
    #[serde(rename = "@first-page")]
    pub(super) first_page: Option<u64>,
    #[serde(rename = "@max-pages")]
    pub(super) max_pages: Option<u32>,
    #[serde(rename = "@next")]
    pub(super) next: Option<String>,
    #[serde(rename = "@interval-ms")]
    pub(super) interval_ms: Option<u64>,
    pub(super) url: String,
    pub(super) busy: Option<RawMatcher>,
    pub(super) empty: Option<RawMatcher>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMatcher {
    #[serde(rename = "@selector")]
    pub(super) selector: Option<String>,
    #[serde(rename = "@wait-ms")]
    pub(super) wait_ms: Option<u64>,
    #[serde(rename = "$text", default)]
    pub(super) pattern: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAccount {
    #[serde(rename = "@name")]
    pub(super) name: Option<String>,
    #[serde(rename = "@cookie")]
    pub(super) cookie: Option<String>,
    #[serde(rename = "@login-url")]
    pub(super) login_url: Option<String>,
    #[serde(rename = "field", default)]
    pub(super) field: Vec<RawField>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawField {
    #[serde(rename = "@name")]
    pub(super) name: String,
    #[serde(rename = "$text", default)]
    pub(super) value: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFocus {
    #[serde(rename = "@alpha")]
    pub(super) alpha: Option<f64>,
    #[serde(rename = "@threshold")]
    pub(super) threshold: Option<f64>,
    #[serde(rename = "topic", default)]
    pub(super) topic: Vec<String>,
    #[serde(rename = "url-word", default)]
    pub(super) url_word: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIncremental {
    #[serde(rename = "@stop-after")]
    pub(super) stop_after: Option<u32>,
    #[serde(rename = "@interval-minutes")]
    pub(super) interval_minutes: Option<u64>,
    #[serde(rename = "@min-interval-minutes")]
    pub(super) min_interval_minutes: Option<u64>,
    #[serde(rename = "@max-interval-hours")]
    pub(super) max_interval_hours: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLinks {
    /// Groups (`thread`, `board`) that capture a slug, not an id.
    #[serde(rename = "@hashed")]
    pub(super) hashed: Option<String>,
    pub(super) board: RawPattern,
    #[serde(rename = "board-page")]
    pub(super) board_page: Option<RawPattern>,
    pub(super) thread: RawPattern,
    #[serde(rename = "thread-page")]
    pub(super) thread_page: Option<RawPattern>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPattern {
    #[serde(rename = "@first")]
    pub(super) first: Option<u64>,
    /// `<board>` only: how many hops board links met on list and thread
    /// pages are followed, and at most how many boards a round reads.
    #[serde(rename = "@depth")]
    pub(super) depth: Option<u32>,
    #[serde(rename = "@max")]
    pub(super) max: Option<usize>,
    /// `<thread>` only: parameters added to a thread's URL when it is asked for.
    #[serde(rename = "@add-query")]
    pub(super) add_query: Option<String>,
    #[serde(rename = "$text")]
    pub(super) pattern: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawList {
    #[serde(rename = "@row")]
    pub(super) row: String,
    #[serde(rename = "@title")]
    pub(super) title: Option<String>,
    #[serde(rename = "@replies")]
    pub(super) replies: Option<String>,
    #[serde(rename = "@last-post")]
    pub(super) last_post: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThread {
    #[serde(rename = "@title")]
    pub(super) title: Option<String>,
    #[serde(rename = "@post")]
    pub(super) post: Option<String>,
    #[serde(rename = "@body")]
    pub(super) body: Option<String>,
    #[serde(rename = "@body-id")]
    pub(super) body_id: Option<String>,
    #[serde(rename = "@author")]
    pub(super) author: Option<String>,
    #[serde(rename = "@time")]
    pub(super) time: Option<String>,
    #[serde(rename = "@floor")]
    pub(super) floor: Option<String>,
    #[serde(rename = "@strip")]
    pub(super) strip: Option<String>,
    #[serde(rename = "@quote")]
    pub(super) quote: Option<String>,
    #[serde(rename = "@quote-head")]
    pub(super) quote_head: Option<String>,
    #[serde(rename = "@quote-intro")]
    pub(super) quote_intro: Option<String>,
    #[serde(rename = "@nested-posts")]
    pub(super) nested_posts: Option<String>,
    #[serde(rename = "@quote-of")]
    pub(super) quote_of: Option<String>,
    #[serde(rename = "@quote-of-pattern")]
    pub(super) quote_of_pattern: Option<String>,
    #[serde(rename = "@quote-author")]
    pub(super) quote_author: Option<String>,
    #[serde(rename = "@quote-author-pattern")]
    pub(super) quote_author_pattern: Option<String>,
    #[serde(rename = "@time-zone")]
    pub(super) time_zone: Option<String>,
    #[serde(rename = "@time-format")]
    pub(super) time_format: Option<String>,
    // Version 2's fields, each with its `-pattern` (see `Conversation`).
    #[serde(rename = "@post-id")]
    pub(super) post_id: Option<String>,
    #[serde(rename = "@post-id-pattern")]
    pub(super) post_id_pattern: Option<String>,
    #[serde(rename = "@author-id")]
    pub(super) author_id: Option<String>,
    #[serde(rename = "@author-id-pattern")]
    pub(super) author_id_pattern: Option<String>,
    #[serde(rename = "@author-url")]
    pub(super) author_url: Option<String>,
    #[serde(rename = "@author-url-pattern")]
    pub(super) author_url_pattern: Option<String>,
    #[serde(rename = "@reply-to")]
    pub(super) reply_to: Option<String>,
    #[serde(rename = "@reply-to-pattern")]
    pub(super) reply_to_pattern: Option<String>,
    #[serde(rename = "@edited")]
    pub(super) edited: Option<String>,
    #[serde(rename = "@edited-pattern")]
    pub(super) edited_pattern: Option<String>,
    #[serde(rename = "@likes")]
    pub(super) likes: Option<String>,
    #[serde(rename = "@likes-pattern")]
    pub(super) likes_pattern: Option<String>,
    #[serde(rename = "@location")]
    pub(super) location: Option<String>,
    #[serde(rename = "@location-pattern")]
    pub(super) location_pattern: Option<String>,
    #[serde(rename = "@links")]
    pub(super) links: Option<String>,
    #[serde(rename = "@images")]
    pub(super) images: Option<String>,
    #[serde(rename = "@board-name")]
    pub(super) board_name: Option<String>,
    #[serde(rename = "@board-name-pattern")]
    pub(super) board_name_pattern: Option<String>,
    #[serde(rename = "@thread-replies")]
    pub(super) thread_replies: Option<String>,
    #[serde(rename = "@thread-replies-pattern")]
    pub(super) thread_replies_pattern: Option<String>,
    #[serde(rename = "@thread-views")]
    pub(super) thread_views: Option<String>,
    #[serde(rename = "@thread-views-pattern")]
    pub(super) thread_views_pattern: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJson {
    #[serde(rename = "@time-zone")]
    pub(super) time_zone: Option<String>,
    #[serde(rename = "seed", default)]
    pub(super) seed: Vec<String>,
    pub(super) list: RawEndpoint,
    pub(super) thread: Option<RawEndpoint>,
    pub(super) comments: Option<RawEndpoint>,
    pub(super) users: Option<RawUsers>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEndpoint {
    #[serde(rename = "@paging")]
    pub(super) paging: Option<String>,
    #[serde(rename = "@first")]
    pub(super) first: Option<String>,
    #[serde(rename = "@page-size")]
    pub(super) page_size: Option<usize>,
    #[serde(rename = "@next")]
    pub(super) next: Option<String>,
    #[serde(rename = "@max-pages")]
    pub(super) max_pages: Option<u32>,
    #[serde(rename = "@items")]
    pub(super) items: Option<String>,
    #[serde(rename = "@id")]
    pub(super) id: Option<String>,
    #[serde(rename = "@title")]
    pub(super) title: Option<String>,
    #[serde(rename = "@author")]
    pub(super) author: Option<String>,
    #[serde(rename = "@time")]
    pub(super) time: Option<String>,
    #[serde(rename = "@body")]
    pub(super) body: Option<String>,
    #[serde(rename = "@body-format")]
    pub(super) body_format: Option<String>,
    #[serde(rename = "@floor")]
    pub(super) floor: Option<String>,
    #[serde(rename = "@replies")]
    pub(super) replies: Option<String>,
    #[serde(rename = "@author-id")]
    pub(super) author_id: Option<String>,
    #[serde(rename = "@author-url")]
    pub(super) author_url: Option<String>,
    #[serde(rename = "@parent")]
    pub(super) parent: Option<String>,
    #[serde(rename = "@children")]
    pub(super) children: Option<String>,
    #[serde(rename = "@likes")]
    pub(super) likes: Option<String>,
    #[serde(rename = "@location")]
    pub(super) location: Option<String>,
    #[serde(rename = "@edited")]
    pub(super) edited: Option<String>,
    #[serde(rename = "$text")]
    pub(super) url: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawUsers {
    #[serde(rename = "@max")]
    pub(super) max: Option<usize>,
    #[serde(rename = "@depth")]
    pub(super) depth: Option<u32>,
    #[serde(rename = "@followers")]
    pub(super) followers: Option<f64>,
    #[serde(rename = "@activity")]
    pub(super) activity: Option<f64>,
    #[serde(rename = "found", default)]
    pub(super) found: Vec<RawFound>,
    pub(super) link: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFound {
    #[serde(rename = "@id")]
    pub(super) id: String,
    #[serde(rename = "@name")]
    pub(super) name: Option<String>,
    #[serde(rename = "@followers")]
    pub(super) followers: Option<String>,
    #[serde(rename = "@activity")]
    pub(super) activity: Option<String>,
    #[serde(rename = "$text")]
    pub(super) path: String,
}
