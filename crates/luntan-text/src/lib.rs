//! luntan's text helpers, below every stage that reads Chinese text: crawl,
//! extract and search all use them, so none has to import another stage.
//!
//! - [`encoding`]: which encoding a page's bytes are in
//!   ([`encoding::detect`]: site file, BOM, HTTP charset, `<meta>`, the
//!   site's cached encoding, chardetng; declarations are checked against the
//!   bytes) and its text, decoded once ([`encoding::detect_and_decode`]).
//! - [`fold`]: traditional Chinese and variant forms folded to simplified
//!   (fast2s, then OpenCC's tables through [`variant`]), the one fold
//!   crawl's topic scoring and search's analyzers share.
//! - [`jieba()`]: one jieba dictionary per process, built on first use.
//! - [`markup`]: HTML's tokenizer states over bytes (where tags, comments
//!   and raw text end, what a character reference stands for), shared by
//!   download's link scan and extract's tokenizer.
//!
//! ```
//! use luntan_text::encoding::{detect_and_decode, Source};
//!
//! let html = "<meta charset=\"gb2312\"><title>考研</title><p>朱镕基</p>";
//! let (bytes, _, _) = encoding_rs::GB18030.encode(html);
//! let (detection, text) = detect_and_decode(&bytes, None, None, None);
//! // gb2312 is read as its superset, so 镕 (outside GB2312) survives.
//! assert_eq!((detection.encoding, detection.source), (encoding_rs::GB18030, Source::Meta));
//! assert_eq!((text.text.as_str(), text.malformed), (html, 0));
//!
//! // A traditional title segments like its simplified twin.
//! let folded = luntan_text::fold("考研複試經驗");
//! let words: Vec<&str> = luntan_text::jieba().cut(&folded, true).iter().map(|t| t.word).collect();
//! assert!(words.contains(&"复试"), "{words:?}");
//! ```

mod chinese;
pub mod encoding;
pub mod hrefs;
pub mod markup;
pub mod pager;

pub use chinese::{fold, jieba, variant, variant_count};
