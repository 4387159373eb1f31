//! The trend page: matching threads or posts per interval, per forum, as a
//! chart drawn by the server (inline SVG: no script, nothing to fetch).
//!
//! The chart's x axis is time: every bucket from the first to the last is
//! drawn (an empty one at 0, as `/api/trend` lists it) at its first day's
//! place, so four months take twice the width of two, and the labels are
//! calendar dates chosen for the span. The y axis has gridlines at round
//! counts. Each forum is a line of its own colour (Okabe–Ito, told apart
//! with colour blindness too), its own dash and its own hollow marker, so
//! two forums with the same counts still show both, named in a legend.

use std::fmt::Write as _;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use luntan_core::ids::SiteId;
use luntan_search::{Interval, SortOrder, Trend};
use time::{Date, Duration, Month};

// The search's filters, as given, for the form and every link: the search
// page's own, so the two pages' links cannot drift apart (sort is the
// search page's; the chart counts in no order).
use super::search::Current as Filters;
use super::{error_page, html, known_params};
use crate::catalog::{blocking, check_skipped};
use crate::error::ApiError;
use crate::html::{escape, page};
use crate::State as AppState;

/// What the trend page reads: the search's filters, the bucket width and
/// what is counted. Any other key is ignored.
pub const TREND_PARAMS: &[&str] = &["q", "site", "board", "author", "since", "until", "interval", "what"];

/// Okabe & Ito's palette, its yellow last (faint on white).
const PALETTE: [&str; 8] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];
const DASHES: [&str; 4] = ["", "8 4", "2 3", "10 3 2 3"];
/// Most buckets one chart draws: a day-by-day chart over years would be
/// a smear of thousands of points; the page asks for weeks or months.
const MAX_BUCKETS: usize = 1500;
/// Up to this many buckets every point has a marker; beyond, only the
/// points that are not 0 (the line still goes down to 0 between them).
const MARK_ZEROS_UP_TO: usize = 120;

impl Filters {
    /// The search for one forum's threads in one bucket (narrowed to the
    /// filters' own dates), oldest first.
    fn bucket_search(&self, site: &SiteId, first: Date, last: Date) -> String {
        let mut f = Filters {
            q: self.q.clone(),
            sites: vec![site.clone()],
            board: self.board.clone(),
            author: self.author.clone(),
            sort: SortOrder::Oldest,
            ..Filters::default()
        };
        let since = day(&self.since).map_or(first, |d| d.max(first));
        let until = day(&self.until).map_or(last, |d| d.min(last));
        f.since = since.to_string();
        f.until = until.to_string();
        format!("/search?{}", f.query_string())
    }
}

fn day(s: &str) -> Option<Date> {
    Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).ok()
}

/// A bucket's first day from its name (`YYYY-MM-DD`, months `YYYY-MM`).
fn bucket_start(name: &str) -> Option<Date> {
    day(name).or_else(|| day(&format!("{name}-01")))
}

/// The last day of the bucket that starts on `first`.
fn bucket_end(interval: Interval, first: Date) -> Date {
    match interval {
        Interval::Day => first,
        Interval::Week => first + Duration::days(6),
        Interval::Month => add_months(first, 1).previous_day().unwrap_or(first),
    }
}

fn add_months(d: Date, k: i32) -> Date {
    let m = d.year() * 12 + (d.month() as i32 - 1) + k;
    Date::from_calendar_date(m.div_euclid(12), Month::try_from((m.rem_euclid(12) + 1) as u8).unwrap_or(Month::January), 1).unwrap_or(d)
}

/// Calendar labels for the days from `d0` to `d1`: the finest of days,
/// weeks (Mondays), months, quarters, years… that gives at most eight.
fn x_ticks(d0: Date, d1: Date) -> Vec<(Date, String)> {
    #[derive(Clone, Copy)]
    enum Step {
        Days(i64),
        Weeks(i64),
        Months(i32),
        Years(i32),
    }
    let span = (d1 - d0).whole_days().max(1);
    let steps = [
        (Step::Days(1), 1),
        (Step::Days(2), 2),
        (Step::Weeks(1), 7),
        (Step::Weeks(2), 14),
        (Step::Months(1), 30),
        (Step::Months(2), 61),
        (Step::Months(3), 91),
        (Step::Months(6), 182),
        (Step::Years(1), 365),
        (Step::Years(2), 730),
        (Step::Years(5), 1826),
        (Step::Years(10), 3652),
        (Step::Years(20), 7305),
        (Step::Years(50), 18262),
        (Step::Years(100), 36525),
    ];
    let step = steps.iter().find(|(_, days)| span / days <= 7).map_or(Step::Years(100), |s| s.0);
    let mut out = Vec::new();
    let mut push = |d: Date, label: String| {
        if (d0..=d1).contains(&d) && out.len() < 40 {
            out.push((d, label));
        }
    };
    match step {
        Step::Days(k) | Step::Weeks(k) => {
            let weeks = matches!(step, Step::Weeks(_));
            // Weeks are labelled on their Mondays, the first on or after d0.
            let to_monday = (7 - i64::from(d0.weekday().number_days_from_monday())) % 7;
            let mut d = if weeks { d0 + Duration::days(to_monday) } else { d0 };
            let k = if weeks { 7 * k } else { k };
            while d <= d1 {
                push(d, d.to_string());
                d += Duration::days(k);
            }
        }
        Step::Months(k) => {
            let mut d = add_months(d0.replace_day(1).unwrap_or(d0), i32::from(d0.day() > 1));
            while (d.month() as i32 - 1) % k != 0 {
                d = add_months(d, 1);
            }
            while d <= d1 {
                push(d, format!("{:04}-{:02}", d.year(), d.month() as u8));
                d = add_months(d, k);
            }
        }
        Step::Years(k) => {
            let mut y = d0.year() + i32::from(d0.ordinal() > 1);
            y += (k - y.rem_euclid(k)) % k;
            while let Ok(d) = Date::from_calendar_date(y, Month::January, 1) {
                if d > d1 {
                    break;
                }
                push(d, format!("{y:04}"));
                y += k;
            }
        }
    }
    out
}

/// Gridline values: round steps (1, 2 or 5 times a power of ten) from 0
/// to at least `max`, about five of them.
fn y_ticks(max: u64) -> Vec<u64> {
    let raw = (max.max(1) as f64 / 5.0).max(1.0);
    let pow = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * pow).find(|s| *s >= raw).unwrap_or(10.0 * pow).max(1.0) as u64;
    let top = max.max(1).div_ceil(step) * step;
    (0..=top / step).map(|i| i * step).collect()
}

/// A series' marker centred on (x, y): circle, square, triangle, diamond.
fn marker(k: usize, x: f64, y: f64, class: &str, attrs: &str, inner: &str) -> String {
    match k % 4 {
        0 => format!(r#"<circle class="{class}" cx="{x:.1}" cy="{y:.1}" r="4"{attrs}>{inner}</circle>"#),
        1 => format!(r#"<rect class="{class}" x="{:.1}" y="{:.1}" width="7" height="7"{attrs}>{inner}</rect>"#, x - 3.5, y - 3.5),
        2 => format!(r#"<path class="{class}" d="M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z"{attrs}>{inner}</path>"#, y - 5.0, x + 4.5, y + 3.5, x - 4.5, y + 3.5),
        _ => format!(
            r#"<path class="{class}" d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z"{attrs}>{inner}</path>"#,
            y - 5.0,
            x + 5.0,
            y + 5.0,
            x - 5.0
        ),
    }
}

fn style(k: usize) -> (&'static str, &'static str) {
    (PALETTE[k % PALETTE.len()], DASHES[(k / PALETTE.len() + k) % DASHES.len()])
}

/// The chart of `series` (site, one count per bucket) over `buckets`:
/// a legend, the SVG, and the numbers as a table for those who cannot see
/// it. `link(site, first, last)` is where a point leads.
fn chart<K: std::ops::Deref<Target = str>>(
    buckets: &[String],
    interval: Interval,
    series: &[(K, Vec<u64>)],
    unit: &str,
    link: impl Fn(&K, Date, Date) -> String,
) -> String {
    let starts: Vec<Date> = buckets.iter().map(|b| bucket_start(b).unwrap_or(Date::MIN)).collect();
    let (Some(&d0), Some(&d1)) = (starts.first(), starts.last()) else { return String::new() };
    let (w, h, left, right, top, bottom) = (800.0f64, 340.0f64, 56.0, 24.0, 28.0, 40.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let span = (d1 - d0).whole_days() as f64;
    let x = |d: Date| if span <= 0.0 { left + pw / 2.0 } else { left + pw * (d - d0).whole_days() as f64 / span };
    let max = series.iter().flat_map(|(_, v)| v.iter().copied()).max().unwrap_or(0);
    let ticks = y_ticks(max);
    let ymax = *ticks.last().unwrap_or(&1) as f64;
    let y = |v: u64| top + ph * (1.0 - v as f64 / ymax);
    let mut out = String::from(r#"<ul class="legend">"#);
    for (k, (site, values)) in series.iter().enumerate() {
        let (color, dash) = style(k);
        let _ = write!(
            out,
            r#"<li data-site="{s}" data-color="{color}"><svg class="key" width="44" height="16" viewBox="0 0 44 16" aria-hidden="true"><line x1="2" y1="8" x2="42" y2="8" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>{m}</svg>{s}（共 {n}）</li>"#,
            s = escape(site),
            m = marker(k, 22.0, 8.0, "key-mark", &format!(r##" fill="#fff" stroke="{color}" stroke-width="1.5""##), ""),
            n = values.iter().sum::<u64>(),
        );
    }
    out.push_str("</ul>");
    let _ = write!(out, r#"<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{unit}随时间的变化" xmlns="http://www.w3.org/2000/svg">"#);
    let _ = write!(out, r##"<text x="{left}" y="14" font-size="12" fill="#6e6e73">{unit}</text>"##);
    for v in &ticks {
        let _ = write!(
            out,
            r##"<line class="grid" x1="{left}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="{}"/><text class="y-tick" x="{}" y="{:.1}" font-size="12" text-anchor="end">{v}</text>"##,
            w - right,
            if *v == 0 { "#888" } else { "#e3e3e8" },
            left - 6.0,
            y(*v) + 4.0,
            yy = y(*v),
        );
    }
    for (d, label) in x_ticks(d0, d1) {
        let xx = x(d);
        let _ = write!(
            out,
            r##"<line class="grid" x1="{xx:.1}" y1="{top}" x2="{xx:.1}" y2="{}" stroke="#f0f0f3"/><line x1="{xx:.1}" y1="{}" x2="{xx:.1}" y2="{}" stroke="#888"/><text class="x-tick" x="{xx:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
            h - bottom,
            h - bottom,
            h - bottom + 4.0,
            h - bottom + 17.0,
            escape(&label),
        );
    }
    // Every line first, then every marker, so no line covers a point.
    for (k, (site, values)) in series.iter().enumerate() {
        let (color, dash) = style(k);
        let points: Vec<String> = starts.iter().zip(values).map(|(&d, &v)| format!("{:.1},{:.1}", x(d), y(v))).collect();
        let _ = write!(
            out,
            r#"<g class="series" data-site="{s}" data-color="{color}"><polyline fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}" stroke-linejoin="round" points="{}"/></g>"#,
            points.join(" "),
            s = escape(site),
        );
    }
    for (k, (site, values)) in series.iter().enumerate() {
        let (color, _) = style(k);
        let _ = write!(out, r#"<g class="points" data-site="{}">"#, escape(site));
        for ((&d, &v), name) in starts.iter().zip(values).zip(buckets) {
            if v == 0 && buckets.len() > MARK_ZEROS_UP_TO {
                continue;
            }
            let attrs = format!(
                r##" fill="#fff" stroke="{color}" stroke-width="1.5" data-site="{s}" data-bucket="{b}" data-count="{v}""##,
                s = escape(site),
                b = escape(name)
            );
            let title = format!("<title>{} {}: {v}</title>", escape(site), escape(name));
            let _ = write!(out, r#"<a href="{}">{}</a>"#, escape(&link(site, d, bucket_end(interval, d))), marker(k, x(d), y(v), "point", &attrs, &title));
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    // The numbers themselves, folded away.
    out.push_str(r#"<details class="chart-data"><summary>数据表</summary><table><thead><tr><th>时段</th>"#);
    for (site, _) in series {
        let _ = write!(out, "<th>{}</th>", escape(site));
    }
    out.push_str("</tr></thead><tbody>");
    for (i, b) in buckets.iter().enumerate() {
        let _ = write!(out, "<tr><td>{}</td>", escape(b));
        for (_, values) in series {
            let _ = write!(out, "<td>{}</td>", values.get(i).copied().unwrap_or(0));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></details>");
    out
}

pub async fn trend(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Response {
    let run = async move {
        let p = known_params(raw.as_deref(), TREND_PARAMS)?;
        let text = |k: &str| p.get(k).unwrap_or("").to_string();
        let filters = Filters {
            q: text("q"),
            sites: p.sites()?,
            board: text("board"),
            author: text("author"),
            since: text("since"),
            until: text("until"),
            ..Filters::default()
        };
        let interval = p.interval()?;
        let posts = match p.get("what").unwrap_or("threads") {
            "threads" => false,
            "posts" => true,
            other => return Err(ApiError::bad(format!("what {other:?}: expected threads or posts"))),
        };
        let (since, until) = (p.day("since")?, p.day("until")?);
        if let (Some(a), Some(b)) = (since, until) {
            if a > b {
                return Err(ApiError::bad(format!("since {a} is after until {b}")));
            }
        }
        // The query with board and author, through the search's checks.
        let query = if filters.q.is_empty() { None } else { Some(p.query()?.1) };
        let sites = filters.sites.clone();
        // Each forum as (site id, name), for the checkboxes.
        let (forums, trend): (Vec<(SiteId, String)>, Option<Trend>) = blocking(move || {
            let Some(query) = query else {
                // No query yet: the form, its forums if there is an index.
                return Ok((st.catalog.searchable().map(|c| c.forum_names()).unwrap_or_default(), None));
            };
            let c = st.catalog.searchable()?;
            check_skipped(&c, &sites)?;
            let forums = c.forum_names();
            Ok((forums, Some(c.trend_within(&query, interval, &sites, since, until)?)))
        })
        .await?;
        let mut body = form_html(&filters, &forums, interval, posts);
        if let Some(t) = trend {
            body.push_str(&trend_html(&filters, t, interval, posts));
        }
        Ok::<_, ApiError>(html(StatusCode::OK, page("趋势", &body)))
    };
    run.await.unwrap_or_else(|e| error_page(&e))
}

fn form_html(f: &Filters, forums: &[(SiteId, String)], interval: Interval, posts: bool) -> String {
    let sel = |on: bool| if on { " selected" } else { "" };
    let mut boxes = String::new();
    for (site, name) in forums {
        let checked = if f.sites.contains(site) { " checked" } else { "" };
        let _ = write!(boxes, r#"<label><input type="checkbox" name="site" value="{s}"{checked}> {n}</label> "#, s = escape(site), n = escape(name));
    }
    // A forum asked for that the catalog does not list stays asked for.
    for site in f.sites.iter().filter(|s| !forums.iter().any(|(f, _)| f == *s)) {
        let _ = write!(boxes, r#"<label><input type="checkbox" name="site" value="{s}" checked> {s}</label> "#, s = escape(site));
    }
    format!(
        r#"<form class="search" action="/trend" method="get">
<div class="row"><input type="search" name="q" value="{q}" aria-label="查询" placeholder="输入查询，看每个论坛的主题数随时间的变化"><button type="submit">画图</button></div>
<div class="row"><fieldset><legend>论坛</legend>{boxes}</fieldset></div>
<div class="row"><label>版块 <input type="text" name="board" value="{board}" size="10"></label><label>作者 <input type="text" name="author" value="{author}" size="10"></label>
<label>从 <input type="date" name="since" value="{since}"></label><label>到 <input type="date" name="until" value="{until}"></label></div>
<div class="row"><label>时段 <select name="interval"><option value="day"{d}>按日</option><option value="week"{w}>按周</option><option value="month"{m}>按月</option></select></label>
<label>数 <select name="what"><option value="threads"{th}>主题数</option><option value="posts"{po}>帖子数</option></select></label></div>
</form>"#,
        q = escape(&f.q),
        board = escape(&f.board),
        author = escape(&f.author),
        since = escape(&f.since),
        until = escape(&f.until),
        d = sel(interval == Interval::Day),
        w = sel(interval == Interval::Week),
        m = sel(interval == Interval::Month),
        th = sel(!posts),
        po = sel(posts),
    )
}

fn trend_html(f: &Filters, t: Trend, interval: Interval, posts: bool) -> String {
    let (series, totals, what, point, unit) = if posts {
        (t.post_series, &t.post_totals, "匹配主题的帖子", "每个点是该时段内发表的帖子数，按每帖自己的时间", "帖子数")
    } else {
        (t.series, &t.totals, "匹配的主题", "每个点是该时段内首帖发表的主题数", "主题数")
    };
    let mut body = String::new();
    let totals_text = totals.iter().map(|(s, n)| format!("{} {n}", escape(s))).collect::<Vec<_>>().join("，");
    let undated: u64 = t.undated.values().sum();
    let undated = if !posts && undated > 0 { format!("；其中 {undated} 个没有时间，不在图中") } else { String::new() };
    let _ = write!(body, r#"<p class="summary">{what}：{totals_text}（{point}{undated}）</p>"#);
    let with = |iv: &str| escape(&format!("/trend?{}&interval={iv}&what={}", f.query_string(), if posts { "posts" } else { "threads" })).into_owned();
    let _ = write!(
        body,
        r#"<p class="links"><a class="back" href="{}">返回搜索结果</a> · <a href="{}">按日</a> · <a href="{}">按周</a> · <a href="{}">按月</a></p>"#,
        escape(&format!("/search?{}", f.query_string())),
        with("day"),
        with("week"),
        with("month"),
    );
    let series: Vec<(SiteId, Vec<u64>)> = series.into_iter().collect();
    if t.buckets.is_empty() {
        body.push_str(r#"<p class="empty">没有带时间的匹配结果，无从画图。</p>"#);
    } else if t.buckets.len() > MAX_BUCKETS {
        let _ = write!(
            body,
            r#"<p class="too-many">共 {} 个时段，太多，画不清楚：请改为<a href="{}">按周</a>或<a href="{}">按月</a>，或缩小日期范围。</p>"#,
            t.buckets.len(),
            with("week"),
            with("month"),
        );
    } else {
        body.push_str(&chart(&t.buckets, interval, &series, unit, |site, first, last| f.bucket_search(site, first, last)));
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        day(s).unwrap()
    }

    fn id(s: &str) -> SiteId {
        SiteId::parse(s).unwrap()
    }

    fn xs(svg: &str, site: &str) -> Vec<f64> {
        let g = &svg[svg.find(&format!(r#"<g class="series" data-site="{site}""#)).unwrap()..];
        let points = &g[g.find("points=\"").unwrap() + 8..];
        points[..points.find('"').unwrap()].split(' ').map(|p| p.split(',').next().unwrap().parse().unwrap()).collect()
    }

    #[test]
    fn buckets_sit_at_their_time_and_every_series_has_its_own_look() {
        let buckets: Vec<String> = ["2024-01", "2024-02", "2024-03", "2024-04", "2024-05"].map(String::from).to_vec();
        let series = vec![("dz".to_string(), vec![3, 0, 0, 0, 1]), ("<x>".to_string(), vec![3, 0, 0, 0, 1])];
        let svg = chart(&buckets, Interval::Month, &series, "主题数", |s, a, b| format!("/search?site={s}&since={a}&until={b}"));
        // February is shorter than January: the gap after it is narrower.
        let x = xs(&svg, "dz");
        assert_eq!(x.len(), 5);
        let (jan, feb) = (x[1] - x[0], x[2] - x[1]);
        assert!((jan / feb - 31.0 / 29.0).abs() < 0.01, "{x:?}");
        // Zeros are drawn, titled, escaped.
        assert!(svg.contains("<title>dz 2024-02: 0</title>") && svg.contains("<title>&lt;x&gt; 2024-05: 1</title>"));
        assert!(!svg.contains("<x>"));
        // Two series with the same counts: different colour, dash and marker.
        assert!(svg.contains(PALETTE[0]) && svg.contains(PALETTE[1]));
        assert!(svg.contains("<circle class=\"point\"") && svg.contains("<rect class=\"point\""));
        assert!(svg.contains(r#"stroke-dasharray="8 4""#));
        // A point leads to its forum's threads of its month.
        assert!(svg.contains("/search?site=dz&amp;since=2024-02-01&amp;until=2024-02-29"), "{svg}");
        // Gridlines at round counts with their values.
        assert_eq!(y_ticks(3), [0, 1, 2, 3]);
        assert_eq!(y_ticks(37), [0, 10, 20, 30, 40]);
        assert_eq!(y_ticks(0), [0, 1]);
        assert_eq!(y_ticks(1234), [0, 500, 1000, 1500]);
        assert!(svg.contains(r#"class="y-tick""#) && svg.contains(">2024-03</text>"));
    }

    #[test]
    fn time_labels_are_calendar_dates_fit_for_the_span() {
        let labels = |a: &str, b: &str| x_ticks(d(a), d(b)).into_iter().map(|(_, l)| l).collect::<Vec<_>>();
        assert_eq!(labels("2024-03-01", "2024-03-04"), ["2024-03-01", "2024-03-02", "2024-03-03", "2024-03-04"]);
        // Weeks start on Mondays (2024-03-04 was one).
        assert_eq!(labels("2024-03-01", "2024-04-10"), ["2024-03-04", "2024-03-11", "2024-03-18", "2024-03-25", "2024-04-01", "2024-04-08"]);
        assert_eq!(labels("2023-11-15", "2024-05-01"), ["2023-12", "2024-01", "2024-02", "2024-03", "2024-04", "2024-05"]);
        assert_eq!(labels("2020-02-01", "2024-06-01"), ["2021", "2022", "2023", "2024"]);
        for (a, b) in [("2024-01-01", "2024-01-01"), ("1990-05-05", "2024-06-30"), ("2024-01-31", "2024-12-31")] {
            let t = labels(a, b);
            assert!(t.len() <= 8, "{a}..{b}: {t:?}");
            assert!(t.iter().all(|l| l.as_str() >= &a[..l.len()] && l.as_str() <= &b[..l.len()]), "{a}..{b}: {t:?}");
        }
        assert_eq!(bucket_end(Interval::Month, d("2024-02-01")), d("2024-02-29"));
        assert_eq!(bucket_end(Interval::Week, d("2024-02-26")), d("2024-03-03"));
    }

    #[test]
    fn a_bucket_search_keeps_the_filters_within_their_dates() {
        let f = Filters {
            q: "明月".into(),
            sites: vec![id("a"), id("b")],
            board: "b1".into(),
            author: "阿明".into(),
            since: "2024-02-10".into(),
            ..Filters::default()
        };
        assert_eq!(f.query_string(), "q=%E6%98%8E%E6%9C%88&site=a&site=b&board=b1&author=%E9%98%BF%E6%98%8E&since=2024-02-10");
        let link = f.bucket_search(&id("a"), d("2024-02-01"), d("2024-02-29"));
        assert_eq!(link, "/search?q=%E6%98%8E%E6%9C%88&site=a&board=b1&author=%E9%98%BF%E6%98%8E&since=2024-02-10&until=2024-02-29&sort=oldest");
    }
}
