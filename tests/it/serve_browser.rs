//! `luntan-serve`'s pages in a real headless Chromium (Debian's `chromium`,
//! driven over CDP by chromiumoxide): a person types a query, sees hits from
//! every forum with per-forum counts, narrows to one forum and a date range,
//! opens a thread and sees the query highlighted; the trend chart shows the
//! fixture's counts; hostile posts stay text. Screenshots of each page go
//! to `$CARGO_TARGET_TMPDIR/serve-screenshots/` (printed).

use crate::serve::{broad_query, brute_facets, enc, months, post_months, served, Served};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::input::InsertTextParams;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde_json::Value;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Recorded before any page script runs: an `alert` or the fixture's
/// hostile `window.__xss=…` would leave a trace here.
const TRAP: &str = "window.__xss = 0; window.alert = function () { window.__xss = 'alert'; };";

async fn eval(page: &Page, js: &str) -> Value {
    page.evaluate(js).await.unwrap_or_else(|e| panic!("{js}: {e}")).into_value().unwrap_or(Value::Null)
}

async fn shot(page: &Page, dir: &Path, name: &str) {
    page.save_screenshot(ScreenshotParams::builder().full_page(true).build(), dir.join(format!("{name}.png"))).await.expect("screenshot");
}

/// Waits until `js` is truthy (a navigation started by a click or a submit
/// has loaded its page).
async fn until(page: &Page, js: &str) {
    for _ in 0..200 {
        if let Ok(v) = page.evaluate(js).await {
            if v.into_value::<Value>().is_ok_and(|v| v.as_bool() == Some(true)) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("page never satisfied {js}; url {:?}", page.url().await);
}

fn hits_js() -> &'static str {
    "Array.from(document.querySelectorAll('li.hit')).map(li => ({ site: li.dataset.site, thread: li.dataset.thread, posted: li.querySelector('.posted').getAttribute('datetime').slice(0, 10) }))"
}

#[test]
fn a_person_searches_filters_reads_a_thread_and_sees_the_trend_in_chromium() {
    let (s, dir, profile, base) = start();
    let q = s.common_query();
    let matching = s.matching(&q);
    let per_site: BTreeMap<String, usize> = s.sites().into_iter().map(|site| (site.clone(), matching.iter().filter(|d| d.site == site).count())).collect();
    let hostile =
        s.docs.iter().find(|d| d.posts.iter().any(|p| p.text().contains("onerror"))).expect("the fixture has a post with an onerror attribute in its text");
    let scripted = s.docs.iter().find(|d| d.posts.iter().any(|p| p.text().contains("<script>"))).expect("the fixture has a post with a <script> in its text");
    let linked =
        s.docs.iter().find(|d| d.posts.iter().any(|p| p.text().contains("javascript:"))).expect("the fixture has a post with a javascript: link in its text");

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let (browser, events) = chromium(profile.path(), 1000).await;
        let page = browser.new_page("about:blank").await.unwrap();
        page.evaluate_on_new_document(TRAP).await.unwrap();

        // Type a query into the search box and press Enter.
        page.goto(format!("{base}/")).await.unwrap();
        until(&page, "!!document.querySelector('input[name=q]')").await;
        // Chinese is typed as an input method commits it (CDP's insertText);
        // Enter is a key press.
        let input = page.find_element("input[name=q]").await.unwrap();
        input.click().await.unwrap();
        page.execute(InsertTextParams::new(q.clone())).await.unwrap();
        input.press_key("Enter").await.unwrap();
        until(&page, "location.pathname === '/search' && document.readyState === 'complete' && !!document.getElementById('total')").await;
        let total: usize = eval(&page, "document.getElementById('total').textContent").await.as_str().unwrap().parse().unwrap();
        assert_eq!(total, matching.len());
        // Every forum's checkbox shows its count, and every forum has hits.
        let counts = eval(&page, "Array.from(document.querySelectorAll('fieldset label')).map(l => [l.querySelector('input').value, l.querySelector('.count').textContent])").await;
        let counts: BTreeMap<String, usize> = counts
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().trim_matches(['(', ')']).parse().unwrap()))
            .collect();
        assert_eq!(counts, per_site);
        assert!(counts.values().all(|&n| n > 0));
        let hits = eval(&page, hits_js()).await;
        let keys: BTreeSet<String> = matching.iter().map(|d| format!("{}/{}", d.site, d.thread)).collect();
        assert_eq!(hits.as_array().unwrap().len(), 10.min(matching.len()));
        for h in hits.as_array().unwrap() {
            assert!(keys.contains(&format!("{}/{}", h["site"].as_str().unwrap(), h["thread"].as_str().unwrap())), "{h}");
        }
        assert!(eval(&page, "document.querySelectorAll('li.hit b').length").await.as_u64().unwrap() > 0, "no highlighted snippet");
        shot(&page, &dir, "search").await;

        // Page 2 through the pager link.
        page.find_element("a[rel=next]").await.unwrap().click().await.unwrap();
        until(&page, "location.search.includes('page=2') && document.readyState === 'complete'").await;
        let second = eval(&page, hits_js()).await;
        assert!(second.as_array().unwrap().iter().all(|h| !hits.as_array().unwrap().contains(h)));

        // One forum (ticking its box submits the form) and a date range.
        let site = s.sites()[1].clone();
        page.goto(format!("{base}/search?q={}", enc(&q))).await.unwrap();
        until(&page, "document.readyState === 'complete'").await;
        page.find_element(&format!("input[name=site][value='{site}']")).await.unwrap().click().await.unwrap();
        until(&page, &format!("location.search.includes('site={site}') && document.readyState === 'complete'")).await;
        // The index dates a thread by its first post that has a time.
        let posted = |d: &luntan_core::ThreadDoc| d.posted.clone().or_else(|| d.posts.iter().find_map(|p| p.time.clone()));
        let mut days: Vec<String> = matching.iter().filter(|d| d.site == site).filter_map(|d| posted(d)).map(|p| p[..10].to_string()).collect();
        days.sort();
        let (since, until_day) = (days[days.len() / 4].as_str(), days[days.len() * 3 / 4].as_str());
        eval(&page, &format!("document.querySelector('input[name=since]').value = '{since}'; document.querySelector('input[name=until]').value = '{until_day}'; true")).await;
        page.find_element("button[type=submit]").await.unwrap().click().await.unwrap();
        // The site box's own submit already put an empty since= in the URL.
        until(&page, &format!("location.search.includes('since={since}') && document.readyState === 'complete'")).await;
        let want: Vec<&&luntan_core::ThreadDoc> =
            matching.iter().filter(|d| d.site == site && posted(d).is_some_and(|p| (since..=until_day).contains(&&p[..10]))).collect();
        let total: usize = eval(&page, "document.getElementById('total').textContent").await.as_str().unwrap().parse().unwrap();
        let hits = eval(&page, hits_js()).await;
        let wanted: Vec<(String, Option<String>)> = want.iter().map(|d| (d.thread.to_string(), posted(d))).collect();
        let url = eval(&page, "location.search").await;
        assert_eq!(total, want.len(), "{since}..{until_day} ({url}): page shows {hits}, want {wanted:?}");
        assert!(!hits.as_array().unwrap().is_empty());
        for h in hits.as_array().unwrap() {
            assert_eq!(h["site"], site.as_str());
            let day = h["posted"].as_str().unwrap();
            assert!((since..=until_day).contains(&day), "{day} outside {since}..{until_day}");
        }
        shot(&page, &dir, "search-filtered").await;

        // Open the first hit: the whole thread, the query highlighted.
        let first = hits[0].clone();
        page.find_element("li.hit .hit-title a").await.unwrap().click().await.unwrap();
        until(&page, "location.pathname.startsWith('/thread/') && document.readyState === 'complete'").await;
        let doc = s.docs.iter().find(|d| d.site == first["site"].as_str().unwrap() && d.thread == first["thread"].as_str().unwrap()).unwrap();
        assert_eq!(eval(&page, "document.querySelectorAll('article.post').length").await.as_u64().unwrap() as usize, doc.posts.len());
        let marked = eval(&page, "Array.from(document.querySelectorAll('main b')).map(b => b.textContent)").await;
        let marked: Vec<String> = marked.as_array().unwrap().iter().map(|v| luntan_search::analysis::normalize(v.as_str().unwrap())).collect();
        assert!(!marked.is_empty(), "the query is not highlighted");
        // Adjacent matches may share one mark: each holds the query and nothing else.
        let nq = luntan_search::analysis::normalize(&q);
        assert!(marked.iter().all(|m| !m.is_empty() && m.replace(&nq, "").is_empty()), "{marked:?}");
        let lang = eval(&page, "document.documentElement.lang").await;
        assert_eq!(lang, "zh-CN");
        shot(&page, &dir, "thread").await;

        // The trend chart: one line per forum, a point per month with the fixture's count
        // (the months with none drawn as 0 when there are few enough to mark).
        page.goto(format!("{base}/trend?q={}&interval=month", enc(&q))).await.unwrap();
        until(&page, "document.readyState === 'complete' && !!document.querySelector('svg.chart')").await;
        let points = eval(&page, "Array.from(document.querySelectorAll('svg.chart .point')).map(c => [c.dataset.site, c.dataset.bucket, Number(c.dataset.count), c.querySelector('title').textContent])").await;
        let mut got = BTreeMap::new();
        for p in points.as_array().unwrap() {
            let (site, bucket, n, title) = (p[0].as_str().unwrap(), p[1].as_str().unwrap(), p[2].as_u64().unwrap(), p[3].as_str().unwrap());
            assert_eq!(title, format!("{site} {bucket}: {n}"), "hover text");
            if n > 0 {
                got.insert((site.to_string(), bucket.to_string()), n);
            }
        }
        assert_eq!(got, months(&matching));
        assert_eq!(eval(&page, "document.querySelectorAll('svg.chart polyline').length").await.as_u64().unwrap() as usize, s.sites().len());
        shot(&page, &dir, "trend").await;

        // The same chart counting posts: chosen in the form, as a person would.
        eval(&page, "document.querySelector('select[name=what]').value = 'posts'; document.querySelector('form.search').submit(); true").await;
        until(&page, "location.search.includes('what=posts') && document.readyState === 'complete' && !!document.querySelector('svg.chart')").await;
        let points = eval(&page, "Array.from(document.querySelectorAll('svg.chart .point')).filter(c => c.dataset.count !== '0').map(c => [c.dataset.site, c.dataset.bucket, Number(c.dataset.count)])").await;
        let got: BTreeMap<(String, String), u64> =
            points.as_array().unwrap().iter().map(|p| ((p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()), p[2].as_u64().unwrap())).collect();
        assert_eq!(got, post_months(&matching));

        page.goto(format!("{base}/status")).await.unwrap();
        until(&page, "document.readyState === 'complete'").await;
        let indexed = eval(&page, "Array.from(document.querySelectorAll('tr[data-site]')).map(r => [r.dataset.site, Number(r.querySelector('.indexed').textContent)])").await;
        for row in indexed.as_array().unwrap() {
            let want = s.docs.iter().filter(|d| d.site == row[0].as_str().unwrap()).count();
            assert_eq!(row[1].as_u64().unwrap() as usize, want, "{row}");
        }
        // Every forum's failures with their reasons and its last round, as luntan-status says them.
        let cli: Vec<serde_json::Value> = s.work.ok("status", &["--json"]).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let failed = eval(&page, "Array.from(document.querySelectorAll('tr[data-site]')).map(r => [r.dataset.site, Number(r.querySelector('.failed').textContent)])").await;
        let failures = eval(&page, "Array.from(document.querySelectorAll('li.failure')).map(li => li.textContent)").await;
        let failures: Vec<&str> = failures.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        let text = eval(&page, "document.body.textContent").await;
        let mut reasons = 0;
        for site in &cli {
            let name = site["site"].as_str().unwrap();
            let row = failed.as_array().unwrap().iter().find(|r| r[0] == name).unwrap_or_else(|| panic!("no status row for {name}"));
            assert_eq!(row[1], site["failed"], "{name}");
            for f in site["failures"].as_array().unwrap() {
                let cause = f["cause"].as_str().unwrap();
                assert!(failures.iter().any(|li| li.contains(cause) && li.contains(&format!("{} 个主题", f["threads"]))), "{name}: {cause} not shown in {failures:?}");
                reasons += 1;
            }
            let round = &site["last_round"];
            assert!(text.as_str().unwrap().contains(&format!("{} 次请求，{} 个列表页", round["requests"], round["list_pages"])), "{name}: last round {round} not shown");
        }
        assert_eq!(failures.len(), reasons);
        let truth_failed = s.truth.forums.iter().flat_map(|f| &f.threads).filter(|t| !t.servable()).count();
        let shown: u64 = failed.as_array().unwrap().iter().map(|r| r[1].as_u64().unwrap()).sum();
        assert!(truth_failed == 0 || shown > 0, "the fixture holds {truth_failed} threads no crawler can save, and the page shows no failure");
        shot(&page, &dir, "status").await;

        // Hostile posts: shown as text, nothing runs, nothing breaks out.
        for (d, needle) in [(hostile, "onerror"), (scripted, "<script>"), (linked, "javascript:")] {
            page.goto(format!("{base}/thread/{}/{}", d.site, d.thread)).await.unwrap();
            until(&page, "document.readyState === 'complete'").await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            let state = eval(
                &page,
                "({ xss: window.__xss, imgs: document.images.length, scripts: Array.from(document.scripts).map(s => s.src), \
                  onerror: document.querySelectorAll('[onerror]').length, js_links: document.querySelectorAll('a[href^=\"javascript\" i]').length, \
                  text: document.querySelector('main').textContent })",
            )
            .await;
            assert_eq!(state["xss"], 0, "{}/{}: a script ran", d.site, d.thread);
            assert_eq!(state["imgs"], 0);
            assert_eq!(state["onerror"], 0);
            assert_eq!(state["js_links"], 0);
            assert_eq!(state["scripts"], serde_json::json!([format!("{base}/static/app.js")]));
            assert!(state["text"].as_str().unwrap().contains(needle), "{needle} not shown as text");
            shot(&page, &dir, &format!("hostile-{}", needle.trim_matches(['<', '>', ':']))).await;
            // The archived copy is served sandboxed: its scripts cannot run.
            page.goto(format!("{base}/archive/{}/{}", d.site, d.thread)).await.unwrap();
            until(&page, "document.readyState === 'complete'").await;
            // Scripts are off in it, the trap's included, so __xss stays unset.
            let v = eval(&page, "window.__xss === undefined ? null : window.__xss").await;
            assert!(v == 0 || v.is_null(), "the archived page ran a script: {v}");
        }
        // And in a search page's snippet.
        page.goto(format!("{base}/search?q=onerror&site={}", hostile.site)).await.unwrap();
        until(&page, "document.readyState === 'complete'").await;
        assert!(eval(&page, "document.querySelectorAll('li.hit').length").await.as_u64().unwrap() > 0);
        assert_eq!(eval(&page, "[window.__xss, document.images.length, document.querySelectorAll('[onerror]').length]").await, serde_json::json!([0, 0, 0]));

        close(browser, events).await;
    });
    println!("screenshots in {}", dir.display());
}

#[test]
fn a_person_walks_from_hit_to_hit_and_back_and_reads_the_chart_by_its_legend_in_chromium() {
    let (s, dir, profile, base) = start();
    let q = s.common_query();
    let site = s.sites()[0].clone();
    let search = format!("q={}&site={site}&sort=oldest", enc(&q));
    let api = crate::serve::get(s.addr, &format!("/api/search?{search}&limit=20"), &[]).json();
    let hits: Vec<(String, String)> =
        api["hits"].as_array().unwrap().iter().map(|h| (h["site"].as_str().unwrap().into(), h["thread"].as_str().unwrap().into())).collect();
    assert!(hits.len() >= 12, "the test needs two pages of one forum's hits");
    let here = "location.pathname.split('/').slice(2, 4).join('/')";
    let key = |i: usize| format!("{}/{}", hits[i].0, hits[i].1);

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let (browser, events) = chromium(profile.path(), 1200).await;
        let page = browser.new_page("about:blank").await.unwrap();

        // Hit 10 of the search, as its results page links it.
        page.goto(format!("{base}/thread/{}?{search}&n=10", key(9))).await.unwrap();
        until(&page, "document.readyState === 'complete' && !!document.querySelector('nav.hit-nav')").await;
        let place = eval(&page, "document.querySelector('nav.hit-nav .place').textContent").await;
        assert_eq!(place.as_str().unwrap(), format!("第 10 个结果，共 {} 个", api["total"]));
        // 下一个结果, clicked: hit 11, on the second page of results.
        page.find_element("nav.hit-nav a[rel=next]").await.unwrap().click().await.unwrap();
        until(&page, "location.search.includes('n=11') && document.readyState === 'complete'").await;
        assert_eq!(eval(&page, here).await.as_str().unwrap(), key(10));
        let next_text = eval(&page, "document.querySelector('nav.hit-nav a[rel=prev]').textContent").await;
        assert!(next_text.as_str().unwrap().starts_with("上一个结果"), "{next_text}");
        shot(&page, &dir, "thread-nav").await;
        // 上一个结果 leads back to hit 10.
        page.find_element("nav.hit-nav a[rel=prev]").await.unwrap().click().await.unwrap();
        until(&page, "location.search.includes('n=10') && document.readyState === 'complete'").await;
        assert_eq!(eval(&page, here).await.as_str().unwrap(), key(9));
        // 返回搜索结果: the first page of the same search, which lists hit 10.
        page.find_element("nav.hit-nav a.back").await.unwrap().click().await.unwrap();
        until(&page, "location.pathname === '/search' && document.readyState === 'complete' && !!document.getElementById('total')").await;
        let params = eval(&page, "Array.from(new URLSearchParams(location.search).entries())").await;
        let params: Vec<(String, String)> = params.as_array().unwrap().iter().map(|p| (p[0].as_str().unwrap().into(), p[1].as_str().unwrap().into())).collect();
        assert_eq!(params, [("q".to_string(), q.clone()), ("site".into(), site.clone()), ("sort".into(), "oldest".into())]);
        let listed = eval(&page, hits_js()).await;
        assert!(listed.as_array().unwrap().iter().any(|h| format!("{}/{}", h["site"].as_str().unwrap(), h["thread"].as_str().unwrap()) == key(9)), "{listed}");

        // The first hit has no previous one; each post has its own link, times read as people write them.
        page.goto(format!("{base}/thread/{}?{search}&n=1", key(0))).await.unwrap();
        until(&page, "document.readyState === 'complete' && !!document.querySelector('nav.hit-nav')").await;
        assert_eq!(eval(&page, "document.querySelectorAll('a[rel=prev]').length").await, 0);
        let links = eval(&page, "Array.from(document.querySelectorAll('article.post')).map(a => [a.id, a.querySelector('a.permalink').getAttribute('href')])").await;
        for l in links.as_array().unwrap() {
            assert_eq!(format!("#{}", l[0].as_str().unwrap()), l[1].as_str().unwrap());
        }
        let last = links.as_array().unwrap().last().unwrap()[1].as_str().unwrap().to_string();
        page.find_element(&format!("article.post:last-of-type a.permalink[href='{last}']")).await.unwrap().click().await.unwrap();
        until(&page, &format!("location.hash === '{last}'")).await;
        let times = eval(&page, "Array.from(document.querySelectorAll('article.post time')).map(t => t.textContent)").await;
        let readable = regex::Regex::new(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$").unwrap();
        assert!(!times.as_array().unwrap().is_empty());
        for t in times.as_array().unwrap() {
            assert!(readable.is_match(t.as_str().unwrap()), "{t}");
        }

        // The chart: a legend entry per forum in its line's colour, no two alike, every series seen.
        page.goto(format!("{base}/trend?q={}&interval=month", enc(&q))).await.unwrap();
        until(&page, "document.readyState === 'complete' && !!document.querySelector('svg.chart')").await;
        let series = eval(
            &page,
            "Array.from(document.querySelectorAll('svg.chart g.series')).map(g => { const l = g.querySelector('polyline'); \
               const pts = document.querySelector('svg.chart g.points[data-site=\"' + g.dataset.site + '\"]').querySelectorAll('.point'); \
               return [g.dataset.site, l.getAttribute('stroke'), l.getAttribute('stroke-dasharray'), pts[0].tagName, pts.length]; })",
        )
        .await;
        let legend = eval(&page, "Array.from(document.querySelectorAll('ul.legend li')).map(li => [li.dataset.site, li.dataset.color, li.textContent, getComputedStyle(li).display])").await;
        let series = series.as_array().unwrap();
        let legend = legend.as_array().unwrap();
        assert_eq!(series.len(), s.sites().len());
        assert_eq!(legend.len(), series.len());
        let looks: BTreeSet<(String, String, String)> =
            series.iter().map(|g| (g[1].as_str().unwrap().into(), g[2].as_str().unwrap_or("").into(), g[3].as_str().unwrap().into())).collect();
        let colours: BTreeSet<&str> = series.iter().map(|g| g[1].as_str().unwrap()).collect();
        assert_eq!(colours.len(), series.len(), "two forums in one colour: {series:?}");
        assert_eq!(looks.len(), series.len());
        for (g, li) in series.iter().zip(legend) {
            assert_eq!(g[0], li[0]);
            assert_eq!(g[1], li[1], "the legend's colour is the line's");
            assert!(li[2].as_str().unwrap().contains(g[0].as_str().unwrap()));
            assert_ne!(li[3], "none");
        }
        // Markers are drawn above every line: at the top of each point is a
        // point (its own, or another forum's of the same count, of another
        // shape), never a line.
        let buckets = eval(&page, "document.querySelectorAll('details.chart-data tbody tr').length").await.as_u64().unwrap() as usize;
        for g in series {
            assert!(g[4].as_u64().unwrap() as usize <= buckets);
        }
        eval(&page, "document.querySelector('svg.chart').scrollIntoView(); true").await;
        let hidden = eval(
            &page,
            "Array.from(document.querySelectorAll('svg.chart .point')).filter(p => { const r = p.getBoundingClientRect(); \
               const top = document.elementFromPoint(r.left + r.width / 2, r.top + 1); \
               return !(top && top.classList && (top.classList.contains('point') || top.closest('a'))); }).length",
        )
        .await;
        assert_eq!(hidden, 0, "a point under something else");
        // Gridlines with values, dates on the time axis.
        let ticks = eval(&page, "[document.querySelectorAll('svg.chart .y-tick').length, Array.from(document.querySelectorAll('svg.chart .x-tick')).map(t => t.textContent)]").await;
        assert!(ticks[0].as_u64().unwrap() >= 2);
        assert!(ticks[1].as_array().unwrap().iter().all(|t| regex::Regex::new(r"^\d{4}(-\d{2}){0,2}$").unwrap().is_match(t.as_str().unwrap())), "{ticks}");
        shot(&page, &dir, "trend-legend").await;

        close(browser, events).await;
    });
}

/// Where every test's screenshots go (printed by the first test), made if
/// missing; and the one check that Chromium is there at all.
fn screenshots() -> PathBuf {
    assert!(Path::new(CHROMIUM).exists(), "{CHROMIUM} not found: install Debian's chromium package (apt-get install -y chromium)");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What every test starts from: the served index, the screenshots' folder,
/// a fresh Chromium profile and the server's base URL.
fn start() -> (&'static Served, PathBuf, tempfile::TempDir, String) {
    let s = served();
    let dir = screenshots();
    let profile = tempfile::tempdir().unwrap();
    let base = format!("http://{}", s.addr);
    (s, dir, profile, base)
}

/// Closes what [`chromium`] launched, waiting for the browser to exit.
async fn close(mut browser: Browser, events: tokio::task::JoinHandle<()>) {
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}

/// Headless Chromium with a window `width` pixels wide, with its event loop.
async fn chromium(profile: &Path, width: u32) -> (Browser, tokio::task::JoinHandle<()>) {
    let config = BrowserConfig::builder()
        .chrome_executable(CHROMIUM)
        .disable_default_args()
        .no_sandbox()
        .user_data_dir(profile)
        .args(["disable-gpu", "disable-quic", "no-first-run", "disable-background-networking", "disable-component-update", "disable-sync"])
        .window_size(width, 900)
        .launch_timeout(Duration::from_secs(60))
        .request_timeout(Duration::from_secs(60))
        .build()
        .expect("browser config");
    let (browser, mut handler) = Browser::launch(config).await.expect("launching chromium");
    (browser, tokio::spawn(async move { while handler.next().await.is_some() {} }))
}

const FACETS_JS: &str = "Array.from(document.querySelectorAll('section.facet')).map(sec => [sec.dataset.facet, \
    Array.from(sec.querySelectorAll('a[data-value]')).map(a => [a.dataset.value, a.dataset.site, Number(a.dataset.count), a.textContent, a.classList.contains('on')])])";

#[test]
fn a_person_narrows_by_facets_and_pages_by_number_in_chromium() {
    let (s, dir, profile, base) = start();
    let (q, n) = broad_query(s);
    let matching = s.matching(&q);
    let want = brute_facets(&matching);
    let total_js = "Number(document.getElementById('total').textContent)";

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let (browser, events) = chromium(profile.path(), 1200).await;
        let page = browser.new_page("about:blank").await.unwrap();
        page.evaluate_on_new_document(TRAP).await.unwrap();
        page.goto(format!("{base}/search?q={}", enc(&q))).await.unwrap();
        until(&page, "document.readyState === 'complete' && !!document.getElementById('total')").await;
        assert_eq!(eval(&page, total_js).await.as_u64().unwrap() as usize, n);
        assert!(eval(&page, "document.getElementById('took').textContent").await.as_str().unwrap().parse::<f64>().is_ok());

        // Each facet: its top values with the brute-force counts, most first.
        let facets = eval(&page, FACETS_JS).await;
        let facets = facets.as_array().unwrap();
        let names: Vec<&str> = facets.iter().map(|f| f[0].as_str().unwrap()).collect();
        assert_eq!(names, ["forum", "board", "author", "year", "month"]);
        for f in facets {
            let facet = f[0].as_str().unwrap();
            let values = f[1].as_array().unwrap();
            assert!(!values.is_empty() && values.len() <= 10, "{facet}: {values:?}");
            for v in values {
                let site = if facet == "board" { v[1].as_str().unwrap().to_string() } else { String::new() };
                let key = (site, v[0].as_str().unwrap().to_string());
                assert_eq!(want[facet].get(&key).copied(), v[2].as_u64(), "{facet} {key:?}");
                if facet == "forum" {
                    // Shown by the forum's name.
                    let name = &matching.iter().find(|d| d.site == key.1).unwrap().forum;
                    assert_eq!(v[3].as_str().unwrap(), name);
                }
            }
            if facet != "year" && facet != "month" {
                let counts: Vec<u64> = values.iter().map(|v| v[2].as_u64().unwrap()).collect();
                assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{facet}: {counts:?}");
            }
        }
        shot(&page, &dir, "search-facets").await;

        // A board, clicked: as many threads as its count, the others' filters kept.
        let board = &facets[1][1][0];
        let (board_id, board_site, board_count) = (board[0].as_str().unwrap().to_string(), board[1].as_str().unwrap().to_string(), board[2].as_u64().unwrap());
        page.find_element("section.facet[data-facet=board] a[data-value]").await.unwrap().click().await.unwrap();
        until(&page, "location.search.includes('board=') && document.readyState === 'complete' && !!document.getElementById('total')").await;
        assert_eq!(eval(&page, total_js).await.as_u64().unwrap(), board_count);
        let params = eval(&page, "Array.from(new URLSearchParams(location.search).entries())").await;
        let params: Vec<(String, String)> = params.as_array().unwrap().iter().map(|p| (p[0].as_str().unwrap().into(), p[1].as_str().unwrap().into())).collect();
        assert_eq!(params, [("q".to_string(), q.clone()), ("site".into(), board_site.clone()), ("board".into(), board_id.clone())]);
        // The form shows the board; the facet shows it chosen.
        assert_eq!(eval(&page, "document.querySelector('input[name=board]').value").await.as_str().unwrap(), board_id);
        let facets = eval(&page, FACETS_JS).await;
        let on: Vec<String> = facets.as_array().unwrap().iter().flat_map(|f| f[1].as_array().unwrap().iter().filter(|v| v[4] == true).map(|v| format!("{}:{}", f[0].as_str().unwrap(), v[0].as_str().unwrap()))).collect();
        assert_eq!(on, [format!("forum:{board_site}"), format!("board:{board_id}")]);
        // Then a year within it: the year's count on this page is what it finds.
        let years = eval(&page, "Array.from(document.querySelectorAll('section.facet[data-facet=year] a')).map(a => [a.dataset.value, Number(a.dataset.count)])").await;
        let (year, year_count) = (years[0][0].as_str().unwrap().to_string(), years[0][1].as_u64().unwrap());
        let want_year = matching
            .iter()
            .filter(|d| d.site == board_site && d.board == board_id)
            .filter(|d| d.posted.as_deref().or_else(|| d.posts.iter().find_map(|p| p.time.as_deref())).is_some_and(|t| t.starts_with(&year)))
            .count() as u64;
        assert_eq!(year_count, want_year);
        page.find_element(&format!("section.facet[data-facet=year] a[data-value='{year}']")).await.unwrap().click().await.unwrap();
        until(&page, &format!("location.search.includes('since={year}-01-01') && document.readyState === 'complete' && !!document.getElementById('total')")).await;
        assert_eq!(eval(&page, total_js).await.as_u64().unwrap(), year_count);
        assert!(eval(&page, "location.search").await.as_str().unwrap().contains(&format!("board={board_id}")));

        // Numbered pages: 3, clicked, is the third page and says so.
        page.goto(format!("{base}/search?q={}", enc(&q))).await.unwrap();
        until(&page, "document.readyState === 'complete' && !!document.querySelector('nav.pager')").await;
        let first = eval(&page, hits_js()).await;
        let numbers = eval(&page, "Array.from(document.querySelectorAll('nav.pager [data-page]')).map(e => e.textContent)").await;
        let last = n.div_ceil(10);
        assert_eq!(numbers, serde_json::json!(["1", "2", "3", last.to_string()]));
        assert_eq!(eval(&page, "document.querySelector('nav.pager [aria-current=page]').textContent").await, "1");
        page.find_element("nav.pager a.page[data-page='3']").await.unwrap().click().await.unwrap();
        until(&page, "location.search.includes('page=3') && document.readyState === 'complete'").await;
        assert_eq!(eval(&page, "document.querySelector('nav.pager [aria-current=page]').textContent").await, "3");
        let third = eval(&page, hits_js()).await;
        assert_eq!(third.as_array().unwrap().len(), 10);
        assert!(third.as_array().unwrap().iter().all(|h| !first.as_array().unwrap().contains(h)));
        let shown = eval(&page, "Array.from(document.querySelectorAll('nav.pager [data-page]')).map(e => e.textContent)").await;
        assert_eq!(shown, serde_json::json!(["1", "2", "3", "4", "5", last.to_string()]));
        // Each hit shows its board and its replies; times read as people write them.
        let meta = eval(&page, "Array.from(document.querySelectorAll('li.hit')).map(li => [li.querySelector('.board').textContent, li.querySelector('.replies').textContent, li.querySelector('.posted').textContent])").await;
        let readable = regex::Regex::new(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?)?$").unwrap();
        for m in meta.as_array().unwrap() {
            assert!(!m[0].as_str().unwrap().is_empty() && m[1].as_str().unwrap().ends_with(" 回复"), "{m}");
            assert!(readable.is_match(m[2].as_str().unwrap()), "{m}");
        }
        assert_eq!(eval(&page, "window.__xss").await, 0);
        shot(&page, &dir, "search-pages").await;

        close(browser, events).await;
    });
}

/// Issue 36: a thread read as a conversation. A reply that quotes an earlier
/// post shows the quote as a quote (apart from its own words, linked to the
/// quoted floor) and sits under the post it answers; its author's link
/// opens their page, which leads back to that floor. Checked by the DOM,
/// with screenshots for a person to look at.
#[test]
fn a_person_reads_a_quote_as_a_quote_and_a_reply_under_its_post_then_the_authors_page_in_chromium() {
    let (s, dir, profile, base) = start();
    let (d, at, to) = s
        .docs
        .iter()
        .find_map(|d| {
            d.posts.iter().enumerate().find_map(|(i, p)| {
                let answered = p.reply_to.as_deref()?;
                let j = d.posts[..i].iter().position(|q| q.id.as_deref() == Some(answered))?;
                (!p.quotes.is_empty() && p.author_id.is_some()).then_some((d, i, j))
            })
        })
        .expect("the fixture has a reply that quotes an earlier post of its thread, by an author with an id");
    let (reply, answered) = (&d.posts[at], &d.posts[to]);
    let (rf, af) = (reply.floor, answered.floor);

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let (browser, events) = chromium(profile.path(), 1000).await;
        let page = browser.new_page("about:blank").await.unwrap();
        page.goto(format!("{base}/thread/{}/{}", d.site, d.thread)).await.unwrap();
        until(&page, &format!("document.readyState === 'complete' && !!document.getElementById('floor{rf}')")).await;
        shot(&page, &dir, "thread-conversation").await;

        // The reply's article sits in the answered post's replies.
        let nested = format!(
            "(() => {{ const r = document.getElementById('floor{rf}'), a = document.getElementById('floor{af}'); \
             return r.parentElement.classList.contains('replies') && r.parentElement.parentElement === a; }})()"
        );
        assert_eq!(eval(&page, &nested).await, Value::Bool(true), "floor {rf} is not under floor {af}");
        // Its quotes are blockquotes of its own, holding the quoted words; its
        // own paragraphs hold only its own words.
        let quotes = eval(
            &page,
            &format!(
                "Array.from(document.querySelectorAll('#floor{rf} > blockquote.quote')).map(q => \
                 Array.from(q.querySelectorAll(':scope > p:not(.quote-head)')).map(p => p.textContent))"
            ),
        )
        .await;
        let want: Vec<Vec<String>> = reply.quotes.iter().map(|q| q.paragraphs.clone()).collect();
        assert_eq!(quotes, serde_json::json!(want), "floor {rf}'s quotes");
        let own = eval(&page, &format!("Array.from(document.querySelectorAll('#floor{rf} > p')).map(p => p.textContent)")).await;
        assert_eq!(own, serde_json::json!(reply.paragraphs), "floor {rf}'s own words");
        if reply.quotes[0].of.as_deref() == answered.id.as_deref() {
            let head = eval(&page, &format!("document.querySelector('#floor{rf} > blockquote.quote .quote-head a').getAttribute('href')")).await;
            assert_eq!(head, Value::String(format!("#floor{af}")), "the quote links the quoted floor");
        }

        // The reply's author: their page lists this floor.
        page.find_element(&format!("#floor{rf} > .meta a.author")).await.unwrap().click().await.unwrap();
        until(&page, "location.pathname === '/author' && document.readyState === 'complete'").await;
        shot(&page, &dir, "author").await;
        let links = eval(&page, "Array.from(document.querySelectorAll('a.permalink')).map(a => a.getAttribute('href'))").await;
        let back = format!("/thread/{}/{}#floor{rf}", d.site, d.thread);
        assert!(links.as_array().unwrap().iter().any(|l| l.as_str() == Some(back.as_str())), "{back} not on the author page: {links}");
        // Every post of theirs in that forum is listed, and nothing else (one page holds 20 threads).
        let theirs: BTreeSet<String> = s
            .docs
            .iter()
            .filter(|x| x.site == d.site)
            .flat_map(|x| x.posts.iter().filter(|p| p.author_id == reply.author_id).map(move |p| format!("/thread/{}/{}#floor{}", x.site, x.thread, p.floor)))
            .collect();
        let threads: BTreeSet<&str> = theirs.iter().map(|l| l.split('#').next().unwrap()).collect();
        if threads.len() <= 20 {
            let got: BTreeSet<String> = links.as_array().unwrap().iter().filter_map(|l| l.as_str().map(str::to_string)).collect();
            assert_eq!(got, theirs);
        }

        close(browser, events).await;
    });
    println!("screenshots in {}", dir.display());
}
