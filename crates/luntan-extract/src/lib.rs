//! luntan's extract stage: saved thread HTML (any encoding, any forum
//! template) → one normalized UTF-8 [`ThreadDoc`](luntan_core::ThreadDoc)
//! XML per thread, moving its row `Saved → Extracted`.
//!
//! Each page is decoded by [`luntan_text::encoding`], which crawl shares.
//!
//! - [`parse`]: one page → title and posts by the site file's
//!   [`ThreadRules`](luntan_core::site::ThreadRules) ([`parse::parse_page`]);
//!   a thread's pages → a `ThreadDoc` ([`parse::extract_thread`]).
//!   With `post="auto"` the posts are found as the page's repeated
//!   records instead of by selectors (S4's template-based extraction,
//!   `template.rs`).
//! - [`stream`]: the same page reading without a DOM: the site file's
//!   selectors matched over html5ever's tokens with a stack of open
//!   elements ([`stream::parse_page_stream`]), the tokens read off the page
//!   by a byte scanner (`scan.rs`; html5ever's tokenizer for pages with
//!   NUL); `parse_page` takes it when the rules allow ([`stream::streamable`], `luntan-extract --explain`)
//!   and the page has nothing whose tree it does not rebuild exactly, else
//!   the DOM. `LUNTAN_EXTRACT_DOM=1` reads every page through the DOM (the
//!   A/B switch).
//! - [`stage`]: the whole stage over the store ([`stage::run`] with an
//!   [`ExtractConfig`], under a [`luntan_core::StageRun`]), parallel with
//!   rayon, failures recorded per thread.
//! - [`ExtractError`]: what went wrong, naming the file.
//!
//! The `luntan-extract` binary (`src/main.rs`) is a thin CLI over [`run`]
//! and [`luntan_text::encoding::detect`] (`--detect FILE…`).
//!
//! ```
//! use std::path::Path;
//! use luntan_core::Site;
//! use luntan_text::encoding::{detect_and_decode, Source};
//! use luntan_extract::parse::parse_page;
//!
//! let site = Site::parse(r#"<site id="dz"><home>http://bbs.example/</home>
//!   <links><board>fid={board}</board><thread>tid={thread}</thread></links>
//!   <thread post="div.post" body="td.t_f" author="a.author"/></site>"#, Path::new("dz.xml")).unwrap();
//! let html = "<html><head><meta charset=\"gb2312\"><title>考研</title></head><body>\
//!   <div class=\"post\"><a class=\"author\">小明</a><table><tr><td class=\"t_f\">朱镕基<br>第二段</td></tr></table></div>\
//!   </body></html>";
//! let (bytes, _, _) = encoding_rs::GB18030.encode(html);
//!
//! let (detection, text) = detect_and_decode(&bytes, None, site.encoding, None);
//! assert_eq!((detection.encoding, detection.source), (encoding_rs::GB18030, Source::Meta));
//! assert_eq!(text.malformed, 0);
//!
//! let page = parse_page(&site, &text.text);
//! assert_eq!(page.title.as_deref(), Some("考研"));
//! assert_eq!(page.posts[0].author, "小明");
//! assert_eq!(page.posts[0].paragraphs, ["朱镕基", "第二段"]);
//! ```

mod conversation;
mod dom;
mod error;
pub mod hybrid;
pub mod json;
mod page;
pub mod parse;
mod scan;
pub mod stage;
mod states;
pub mod stream;
pub mod template;
mod text;

pub use error::ExtractError;
pub use page::{PageExtract, PageReport, RawPage, ThreadExtract, ThreadFacts};
pub use parse::{extract_thread, parse_page};
pub use stage::{run, ExtractConfig, ExtractSummary};
