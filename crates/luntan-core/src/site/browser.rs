//! Browser mode (S4, event-driven): a forum whose pages JavaScript draws
//! is read through a real Chromium. `<browser>` lists what to do on each
//! kind of page once it has loaded, in order:
//!
//! ```xml
//! <browser timeout-ms="20000" settle-ms="300">
//!   <list><wait selector="div.row a.thread"/></list>
//!   <thread>
//!     <wait selector="div.post"/>
//!     <click selector="button.more" max="50"/>   <!-- "下一页", "更多评论", "展开全文" -->
//!     <scroll items="div.card" max="20"/>          <!-- until no new item appears -->
//!     <click selector="a.more" items="div.comment" max="50"/>  <!-- appends -->
//!   </thread>
//! </browser>
//! ```
//!
//! Each state an event leaves is a DOM snapshot; the crawl keeps it unless
//! S4's duplicate test finds it a repeat. Kept states are saved as the
//! thread's pages and read by the site's ordinary `<thread>` selectors.

use std::time::Duration;

use serde::Deserialize;

use super::locate::Ctx;
use super::SiteError;

/// Most times one `click` or `scroll` fires, whatever the file says.
pub const MAX_REPEATS: u32 = 1000;

/// What luntan does in the browser, per page type.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserRules {
    /// Bound on a page's load and on each wait for the page to settle; a
    /// page still busy after it fails with that reason.
    pub timeout: Duration,
    /// How far ahead a page counts as settled: nothing it has due within
    /// this (timers, frames), or, where that cannot be foreseen, this long
    /// with no request in flight or started.
    pub settle: Duration,
    /// On the home page and every board's list page.
    pub list: Vec<Action>,
    /// On every thread page.
    pub thread: Vec<Action>,
}

/// One event, or a wait, on a loaded page. Selectors are CSS, evaluated
/// by the browser (checked here with the same parser the extractor uses).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Wait (up to the page timeout) until `selector` matches; a page where
    /// it never does fails with that reason.
    Wait { selector: String },
    /// Click the first element `selector` matches, again while one does, at
    /// most `max` times. With `items` (a "更多评论" that appends), a click
    /// that made the count of `items` grow leaves a new state whatever S4's
    /// test says: its new items are new content, however small a share of
    /// the page they are.
    Click { selector: String, max: u32, items: Option<String> },
    /// Scroll to the bottom until the count of `items` stops growing, at most
    /// `max` times.
    Scroll { items: String, max: u32 },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBrowser {
    #[serde(rename = "@timeout-ms")]
    timeout_ms: Option<u64>,
    #[serde(rename = "@settle-ms")]
    settle_ms: Option<u64>,
    list: Option<RawActions>,
    thread: Option<RawActions>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawActions {
    #[serde(rename = "$value", default)]
    actions: Vec<RawAction>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawAction {
    Wait {
        #[serde(rename = "@selector")]
        selector: String,
    },
    Click {
        #[serde(rename = "@selector")]
        selector: String,
        #[serde(rename = "@max")]
        max: Option<u32>,
        #[serde(rename = "@items")]
        items: Option<String>,
    },
    Scroll {
        #[serde(rename = "@items")]
        items: String,
        #[serde(rename = "@max")]
        max: Option<u32>,
    },
}

/// `<browser>` checked: times above zero, selectors that parse, repeat
/// counts between 1 and [`MAX_REPEATS`].
pub(super) fn browser(ctx: &Ctx, raw: &RawBrowser) -> Result<BrowserRules, SiteError> {
    let ms = |at: &str, v: Option<u64>, default: u64| match v {
        Some(0) => Err(ctx.err(at, "must be above 0")),
        v => Ok(Duration::from_millis(v.unwrap_or(default))),
    };
    Ok(BrowserRules {
        timeout: ms("browser@timeout-ms", raw.timeout_ms, 30_000)?,
        settle: ms("browser@settle-ms", raw.settle_ms, 300)?,
        list: actions(ctx, "list", raw.list.as_ref())?,
        thread: actions(ctx, "thread", raw.thread.as_ref())?,
    })
}

fn actions(ctx: &Ctx, page: &str, raw: Option<&RawActions>) -> Result<Vec<Action>, SiteError> {
    let Some(raw) = raw else { return Ok(Vec::new()) };
    let selector = |at: &str, s: &str| {
        let s = s.trim();
        scraper::Selector::parse(s).map_err(|e| ctx.err(&format!("browser/{page}/{at}"), format!("{s:?} is not a CSS selector: {e}")))?;
        Ok(s.to_owned())
    };
    let max = |what: &str, m: Option<u32>, default: u32| match m.unwrap_or(default) {
        m @ 1..=MAX_REPEATS => Ok(m),
        m => Err(ctx.err(&format!("browser/{page}/{what}@max"), format!("{m} is not between 1 and {MAX_REPEATS}"))),
    };
    raw.actions
        .iter()
        .map(|a| match a {
            RawAction::Wait { selector: s } => Ok(Action::Wait { selector: selector("wait@selector", s)? }),
            RawAction::Click { selector: s, max: m, items } => Ok(Action::Click {
                selector: selector("click@selector", s)?,
                max: max("click", *m, 1)?,
                items: items.as_deref().map(|i| selector("click@items", i)).transpose()?,
            }),
            RawAction::Scroll { items, max: m } => Ok(Action::Scroll { items: selector("scroll@items", items)?, max: max("scroll", *m, 20)? }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::*;

    const SITE: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<site id="js">
  <home>http://127.0.0.1:8080/xhr/</home>
  <links><board>/xhr/forum/(?P&lt;board&gt;\d+)</board><thread>/xhr/thread/(?P&lt;thread&gt;\d+)</thread></links>
  <thread post="div.post" body="div.message"/>
  <browser timeout-ms="5000">
    <list><wait selector="a.thread"/></list>
    <thread>
      <wait selector="div.post"/>
      <click selector="button.more" max="50" items="div.post"/>
      <scroll items="div.post"/>
      <click selector="a.refresh"/>
    </thread>
  </browser>
</site>
"##;

    #[test]
    fn actions_keep_their_order_and_defaults() {
        let b = parse(SITE).unwrap().browser.unwrap();
        assert_eq!((b.timeout, b.settle), (Duration::from_secs(5), Duration::from_millis(300)));
        assert_eq!(b.list, [Action::Wait { selector: "a.thread".into() }]);
        assert_eq!(
            b.thread,
            [
                Action::Wait { selector: "div.post".into() },
                Action::Click { selector: "button.more".into(), max: 50, items: Some("div.post".into()) },
                Action::Scroll { items: "div.post".into(), max: 20 },
                Action::Click { selector: "a.refresh".into(), max: 1, items: None },
            ]
        );
    }

    #[test]
    fn broken_browser_rules_name_the_attribute() {
        let e = parse(&SITE.replace(r#"selector="button.more""#, r#"selector="button..more""#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("selector", 10), "{e}");
        let e = parse(&SITE.replace(r#"max="50""#, r#"max="0""#)).unwrap_err();
        assert_eq!(e.field, "max", "{e}");
        let e = parse(&SITE.replace(r#"timeout-ms="5000""#, r#"timeout-ms="0""#)).unwrap_err();
        assert_eq!(e.field, "timeout-ms", "{e}");
        let e = parse(&SITE.replace("<scroll items", "<hover items")).unwrap_err();
        assert!(e.to_string().contains("hover"), "{e}");
    }
}
