//! Matching threads, and their posts, per day, week or month, per forum,
//! counted inside the index: a collector reads each match's `posted` fast
//! field (the thread's first post) and its multi-valued `post_times` (every
//! dated post) and adds them to their buckets, so no stored document is
//! loaded and no hit list is built. tantivy's own date histogram aggregation
//! has only fixed intervals (a month is not one), hence this collector.
//!
//! A thread matches as a whole (the index holds one document per thread), so
//! its posts are counted by their own times whether or not each post holds
//! the query: the posts series shows how much a matching topic is discussed
//! over time, the threads series when topics start.

use std::collections::BTreeMap;

use luntan_core::ids::SiteId;
use serde::Serialize;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DateTime, DocId, Score, SegmentOrdinal, SegmentReader};

use crate::query::{Query, QueryError};
use crate::schema::POST_TIMES;
use crate::search::{compile, Catalog, SearchError};

/// The width of a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Interval {
    Day,
    /// ISO weeks, named by their Monday.
    Week,
    Month,
}

/// An interval that is none of day, week or month, as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("interval {0:?}: expected day, week or month")]
pub struct IntervalError(pub String);

impl std::str::FromStr for Interval {
    type Err = IntervalError;
    fn from_str(s: &str) -> Result<Interval, IntervalError> {
        match s {
            "day" => Ok(Interval::Day),
            "week" => Ok(Interval::Week),
            "month" => Ok(Interval::Month),
            other => Err(IntervalError(other.to_owned())),
        }
    }
}

/// Counts per forum and bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Trend {
    /// Every bucket from the oldest that holds a matching thread or one of
    /// its posts in any forum to the newest, those in between that hold
    /// nothing included (their counts are 0), so the buckets are evenly
    /// spaced in time; each named by its first day (`YYYY-MM-DD`; months
    /// `YYYY-MM`).
    pub buckets: Vec<String>,
    /// Per forum (site id), matching threads by first post time, one count
    /// per entry of `buckets`.
    pub series: BTreeMap<SiteId, Vec<u64>>,
    /// Per forum, matching threads without a first post time (in no bucket).
    pub undated: BTreeMap<SiteId, u64>,
    /// Per forum, all matching threads.
    pub totals: BTreeMap<SiteId, u64>,
    /// Per forum, the posts of the matching threads by each post's own time,
    /// one count per entry of `buckets`.
    pub post_series: BTreeMap<SiteId, Vec<u64>>,
    /// Per forum, dated posts of the matching threads (posts without a time
    /// are in no bucket and not counted).
    pub post_totals: BTreeMap<SiteId, u64>,
}

const DAY: i64 = 86_400;

/// The bucket of a time, as a sortable number: days since 1970 for day and
/// week (the week's Monday), `year * 12 + month0` for months.
fn bucket(interval: Interval, secs: i64) -> i64 {
    let day = secs.div_euclid(DAY);
    match interval {
        Interval::Day => day,
        // 1970-01-01 was a Thursday: three days after a Monday.
        Interval::Week => day - (day + 3).rem_euclid(7),
        Interval::Month => match time::OffsetDateTime::from_unix_timestamp(secs) {
            Ok(t) => i64::from(t.year()) * 12 + i64::from(t.month() as u8 - 1),
            Err(_) => i64::MIN,
        },
    }
}

/// The bucket after `key`.
fn next_bucket(interval: Interval, key: i64) -> i64 {
    match interval {
        Interval::Day | Interval::Month => key + 1,
        Interval::Week => key + 7,
    }
}

fn bucket_name(interval: Interval, key: i64) -> String {
    match interval {
        Interval::Day | Interval::Week => match time::OffsetDateTime::from_unix_timestamp(key * DAY) {
            Ok(t) => format!("{:04}-{:02}-{:02}", t.year(), t.month() as u8, t.day()),
            Err(_) => String::from("?"),
        },
        Interval::Month => format!("{:04}-{:02}", key.div_euclid(12), key.rem_euclid(12) + 1),
    }
}

/// What one forum's matches add up to.
#[derive(Debug, Default)]
struct Counts {
    threads: BTreeMap<i64, u64>,
    undated: u64,
    posts: BTreeMap<i64, u64>,
}

/// Seconds since 1970: from `.0` (included) to `.1` (excluded), either open.
#[derive(Debug, Clone, Copy, Default)]
struct Span(Option<i64>, Option<i64>);

impl Span {
    fn of(since: Option<time::Date>, until: Option<time::Date>) -> Span {
        let midnight = |d: time::Date| d.midnight().assume_utc().unix_timestamp();
        // `until` reaches to the end of its day.
        Span(since.map(midnight), until.map(|d| midnight(d) + DAY))
    }

    fn is_open(&self) -> bool {
        self.0.is_none() && self.1.is_none()
    }

    fn holds(&self, t: DateTime) -> bool {
        let s = t.into_timestamp_secs();
        self.0.is_none_or(|lo| s >= lo) && self.1.is_none_or(|hi| s < hi)
    }
}

struct Histogram {
    interval: Interval,
    span: Span,
}

struct SegmentHistogram {
    posted: Option<Column<DateTime>>,
    post_times: Option<Column<DateTime>>,
    counts: Counts,
    buckets: Buckets,
    span: Span,
}

/// A time's bucket key. Matches come in doc order and a thread's posts and
/// neighbours often share a day: the last day's bucket saves the month's
/// calendar arithmetic.
struct Buckets {
    interval: Interval,
    last: Option<(i64, i64)>,
}

impl Buckets {
    fn key(&mut self, t: DateTime) -> i64 {
        let secs = t.into_timestamp_secs();
        let day = secs.div_euclid(DAY);
        match self.last {
            Some((d, k)) if d == day => k,
            _ => {
                let k = bucket(self.interval, secs);
                self.last = Some((day, k));
                k
            }
        }
    }
}

impl Collector for Histogram {
    type Fruit = Counts;
    type Child = SegmentHistogram;

    fn for_segment(&self, _ord: SegmentOrdinal, seg: &SegmentReader) -> tantivy::Result<SegmentHistogram> {
        let ff = seg.fast_fields();
        Ok(SegmentHistogram {
            posted: ff.date("posted").ok(),
            post_times: ff.date(POST_TIMES).ok(),
            counts: Counts::default(),
            buckets: Buckets { interval: self.interval, last: None },
            span: self.span,
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<Counts>) -> tantivy::Result<Counts> {
        let mut out = Counts::default();
        for c in fruits {
            for (k, n) in c.threads {
                *out.threads.entry(k).or_default() += n;
            }
            for (k, n) in c.posts {
                *out.posts.entry(k).or_default() += n;
            }
            out.undated += c.undated;
        }
        Ok(out)
    }
}

impl SegmentCollector for SegmentHistogram {
    type Fruit = Counts;

    fn collect(&mut self, doc: DocId, _score: Score) {
        match self.posted.as_ref().and_then(|c| c.first(doc)) {
            // A date range selects threads as a search's does, by first post.
            Some(t) if !self.span.holds(t) => return,
            Some(t) => *self.counts.threads.entry(self.buckets.key(t)).or_default() += 1,
            None if !self.span.is_open() => return,
            None => self.counts.undated += 1,
        }
        if let Some(column) = &self.post_times {
            for t in column.values_for_doc(doc).filter(|&t| self.span.holds(t)) {
                *self.counts.posts.entry(self.buckets.key(t)).or_default() += 1;
            }
        }
    }

    fn harvest(self) -> Counts {
        self.counts
    }
}

impl Catalog {
    /// Matching threads, and their posts, per `interval` in each selected
    /// forum (`sites` empty: all).
    pub fn trend(&self, query: &Query, interval: Interval, sites: &[SiteId]) -> Result<Trend, SearchError> {
        self.trend_within(query, interval, sites, None, None)
    }

    /// [`Catalog::trend`] of the threads whose first post is from `since`
    /// to `until` (both days included), the threads a search with that
    /// range finds, and of their posts in the same days (undated threads
    /// and posts are then in none).
    pub fn trend_within(
        &self,
        query: &Query,
        interval: Interval,
        sites: &[SiteId],
        since: Option<time::Date>,
        until: Option<time::Date>,
    ) -> Result<Trend, SearchError> {
        let (schema, snapshots) = self.snapshots(sites)?;
        let tq = compile(&query.root, schema).ok_or(QueryError::NothingToSearch)?;
        let histogram = Histogram { interval, span: Span::of(since, until) };
        let mut per_site: Vec<(SiteId, Counts)> = Vec::new();
        for (name, path, searcher) in snapshots {
            let counts = searcher.search(&*tq, &histogram).map_err(|source| SearchError::Search { path, source })?;
            per_site.push((name, counts));
        }
        let held = per_site.iter().flat_map(|(_, c)| c.threads.keys().chain(c.posts.keys()).copied()).filter(|&k| k != i64::MIN);
        let (first, last) = (held.clone().min(), held.max());
        // Every bucket from the first to the last: an empty one is a 0 drawn
        // in its place, not a gap closed up.
        let keys: Vec<i64> = match (first, last) {
            (Some(first), Some(last)) => std::iter::successors(Some(first), |&k| Some(next_bucket(interval, k))).take_while(|&k| k <= last).collect(),
            _ => Vec::new(),
        };
        let mut trend = Trend { buckets: keys.iter().map(|&k| bucket_name(interval, k)).collect(), ..Trend::default() };
        let along = |m: &BTreeMap<i64, u64>| keys.iter().map(|k| m.get(k).copied().unwrap_or(0)).collect::<Vec<u64>>();
        for (name, c) in per_site {
            trend.totals.insert(name.clone(), c.threads.values().sum::<u64>() + c.undated);
            trend.undated.insert(name.clone(), c.undated);
            trend.post_totals.insert(name.clone(), c.posts.values().sum());
            trend.series.insert(name.clone(), along(&c.threads));
            trend.post_series.insert(name, along(&c.posts));
        }
        Ok(trend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::parse_posted;

    fn secs(s: &str) -> i64 {
        parse_posted(s).unwrap().into_timestamp_secs()
    }

    /// The name of the bucket after the one named `name`.
    fn after(interval: Interval, name: &str) -> String {
        let first = if interval == Interval::Month { format!("{name}-01T00:00:00") } else { format!("{name}T00:00:00") };
        bucket_name(interval, next_bucket(interval, bucket(interval, secs(&first))))
    }

    #[test]
    fn buckets_are_calendar_days_iso_weeks_and_months() {
        assert_eq!(after(Interval::Month, "2023-12"), "2024-01");
        assert_eq!(after(Interval::Week, "2024-02-26"), "2024-03-04");
        assert_eq!(after(Interval::Day, "2024-02-28"), "2024-02-29");
        // 2024-03-07 was a Thursday; its ISO week began on Monday 2024-03-04.
        let t = secs("2024-03-07T23:59:59");
        assert_eq!(bucket_name(Interval::Day, bucket(Interval::Day, t)), "2024-03-07");
        assert_eq!(bucket_name(Interval::Week, bucket(Interval::Week, t)), "2024-03-04");
        assert_eq!(bucket_name(Interval::Week, bucket(Interval::Week, secs("2024-03-04T00:00:00"))), "2024-03-04");
        assert_eq!(bucket_name(Interval::Week, bucket(Interval::Week, secs("2024-03-03T12:00:00"))), "2024-02-26");
        assert_eq!(bucket_name(Interval::Month, bucket(Interval::Month, t)), "2024-03");
        assert_eq!(bucket_name(Interval::Month, bucket(Interval::Month, secs("1969-12-31T00:00:00"))), "1969-12");
        assert_eq!(bucket_name(Interval::Week, bucket(Interval::Week, secs("1969-12-31T00:00:00"))), "1969-12-29");
    }

    #[test]
    fn counts_match_the_threads_by_brute_force() {
        let dir = tempfile::tempdir().unwrap();
        let docs = crate::testutil::synthetic(300);
        for site in ["s0", "s1", "s2"] {
            let part: Vec<&luntan_core::ThreadDoc> = docs.iter().filter(|d| d.site == site).collect();
            crate::testutil::write_index(&dir.path().join(format!("{site}.index")), &part);
        }
        let catalog = Catalog::open(dir.path()).unwrap();
        let q = Query::parse("书 OR 酒店").unwrap();
        for interval in [Interval::Day, Interval::Week, Interval::Month] {
            let trend = catalog.trend(&q, interval, &[]).unwrap();
            let mut want: BTreeMap<(String, String), u64> = BTreeMap::new();
            let mut want_posts: BTreeMap<(String, String), u64> = BTreeMap::new();
            let mut total = 0;
            for d in &docs {
                if !(crate::testutil::contains(d, "书", false) || crate::testutil::contains(d, "酒店", false)) {
                    continue;
                }
                total += 1;
                let posted = d.posted.as_deref().or_else(|| d.posts.iter().find_map(|p| p.time.as_deref()));
                if let Some(p) = posted.and_then(parse_posted) {
                    let name = bucket_name(interval, bucket(interval, p.into_timestamp_secs()));
                    *want.entry((d.site.to_string(), name)).or_default() += 1;
                }
                for p in d.posts.iter().filter_map(|p| p.time.as_deref().and_then(parse_posted)) {
                    let name = bucket_name(interval, bucket(interval, p.into_timestamp_secs()));
                    *want_posts.entry((d.site.to_string(), name)).or_default() += 1;
                }
            }
            let flat = |series: &BTreeMap<SiteId, Vec<u64>>| {
                let mut got: BTreeMap<(String, String), u64> = BTreeMap::new();
                for (site, counts) in series {
                    for (b, &n) in trend.buckets.iter().zip(counts) {
                        if n > 0 {
                            got.insert((site.to_string(), b.clone()), n);
                        }
                    }
                }
                got
            };
            assert!(!want.is_empty());
            assert_eq!(flat(&trend.series), want, "{interval:?}");
            // Threads span several buckets: a thread's posts are not all where it began.
            assert_ne!(
                want_posts.keys().collect::<Vec<_>>(),
                want.keys().collect::<Vec<_>>(),
                "{interval:?}: the test needs posts outside their thread's bucket"
            );
            assert_eq!(flat(&trend.post_series), want_posts, "{interval:?}");
            assert_eq!(trend.post_totals.values().sum::<u64>(), want_posts.values().sum::<u64>());
            assert_eq!(trend.totals.values().sum::<u64>(), total);
            let names = trend.buckets.clone();
            let mut sorted = names.clone();
            sorted.sort();
            assert_eq!(names, sorted);
            // Contiguous: each bucket is the one after the last, empty ones kept as 0.
            for pair in trend.buckets.windows(2) {
                assert_eq!(after(interval, &pair[0]), pair[1], "{interval:?}");
            }
            assert!(trend.series.values().all(|v| v.len() == trend.buckets.len()));
            assert!(trend.series.values().any(|v| v.contains(&0)), "{interval:?}: the test needs an empty bucket");
        }
        // A date range: the threads a search with it finds, their posts in the same days.
        let day = |s: &str| time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).unwrap();
        let (since, until) = (day("2020-03-01"), day("2020-05-31"));
        let within = catalog.trend_within(&q, Interval::Week, &[], Some(since), Some(until)).unwrap();
        let (mut threads, mut posts) = (BTreeMap::new(), BTreeMap::new());
        let in_range = |t: &str| ("2020-03-01".."2020-06-01").contains(&t);
        for d in docs.iter().filter(|d| crate::testutil::contains(d, "书", false) || crate::testutil::contains(d, "酒店", false)) {
            let Some(first) = d.posted.as_deref().or_else(|| d.posts.iter().find_map(|p| p.time.as_deref())).filter(|t| in_range(t)) else { continue };
            let week = |t: &str| bucket_name(Interval::Week, bucket(Interval::Week, secs(t)));
            *threads.entry(week(first)).or_default() += 1u64;
            for t in d.posts.iter().filter_map(|p| p.time.as_deref()).filter(|t| in_range(t)) {
                *posts.entry(week(t)).or_default() += 1u64;
            }
        }
        let summed = |series: &BTreeMap<SiteId, Vec<u64>>| {
            let mut out: BTreeMap<String, u64> = BTreeMap::new();
            for counts in series.values() {
                for (b, &n) in within.buckets.iter().zip(counts).filter(|(_, &n)| n > 0) {
                    *out.entry(b.clone()).or_default() += n;
                }
            }
            out
        };
        assert!(!threads.is_empty());
        assert_eq!(summed(&within.series), threads);
        assert_eq!(summed(&within.post_series), posts);
        assert!(within.buckets.first().unwrap().as_str() >= "2020-02-24" && within.buckets.last().unwrap().as_str() <= "2020-05-25", "{:?}", within.buckets);
        assert!(within.undated.values().all(|&n| n == 0));

        let one = catalog.trend(&q, Interval::Month, &["s1".parse().unwrap()]).unwrap();
        assert_eq!(one.series.keys().collect::<Vec<_>>(), ["s1"]);
        assert!(matches!(catalog.trend(&q, Interval::Day, &["nope".parse().unwrap()]), Err(SearchError::UnknownSite { .. })));
    }
}
