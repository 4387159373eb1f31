//! luntan's index and search stages.
//!
//! - [`indexer`]: thread XML → one tantivy index per forum (`index/<site>.index`),
//!   [`index_threads`] for `Extracted` rows, [`rebuild_site`] from the files alone.
//! - [`search`]: [`Catalog`] opens every index and searches them together
//!   with one BM25 ranking ([`GlobalStats`]).
//! - [`query`]: the search syntax (`词 "短语" -排除 a OR b site: board: author: title:`).
//! - [`analysis`]: jieba words and CJK uni/bigrams over text folded to simplified Chinese.
//! - [`schema`]: [`LuntanSchema`], the one schema of every index.
//! - [`snippet`]: passages with the query words marked.
//! - [`json`]: a hit and a summary as `--json` and the web API print them.
//! - [`proximity`]: the bonus for query words near each other.
//! - [`trend`]: matching threads per day, week or month, counted in the index.
//! - [`facets`]: matching threads by forum, board, author, year and month.
//! - [`days`]: the days a `since`/`until` bound may name.
//!
//! ```no_run
//! use luntan_search::{Catalog, Query, SearchOptions};
//! let catalog = Catalog::open(std::path::Path::new("index"))?;
//! let results = catalog.search(&Query::parse("考研 经验 -广告")?, &SearchOptions::default())?;
//! for hit in &results.hits {
//!     println!("{} {} {}", hit.rank, hit.title, hit.snippet.marked("[", "]"));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod analysis;
pub mod days;
pub mod facets;
pub mod indexer;
pub mod json;
pub mod proximity;
pub mod query;
pub mod schema;
pub mod search;
pub mod snippet;
mod termsum;
#[cfg(test)]
mod testutil;
mod topkey;
pub mod trend;

pub use days::{check_day, DayOutOfRange};
pub use facets::{Facet, FacetValue, Facets};
pub use indexer::{index_threads, open_or_create_index, rebuild_all, rebuild_site, IndexError, IndexOptions, IndexReport, SiteWriter};
pub use query::{Node, Query, QueryError, Scope};
pub use schema::LuntanSchema;
pub use search::{Catalog, GlobalStats, Hit, SearchError, SearchOptions, SearchResults, SortOrder};
pub use snippet::Snippet;
pub use trend::{Interval, IntervalError, Trend};
