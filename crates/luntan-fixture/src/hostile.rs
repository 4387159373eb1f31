//! Hostile mode: the forum as a crawler meets it after a few days of
//! running — timeouts, throttling, garbage, lies and traps.
//!
//! Everything is decided from [`Hostility::seed`] and the request, so two
//! runs with the same config see the same faults:
//!
//! - **Transient faults** ([`TransientFault`]): a share of URLs fail their
//!   first 1..=[`Hostility::max_failures`] requests (500, 502, 503, 429 with
//!   `Retry-After`, a reset connection, a stall that never sends a byte, a
//!   body cut short of its `Content-Length`) and are served normally after.
//!   A crawler that retries enough gets every such page.
//! - **Permanent faults** ([`PermanentFault`]): one thread per forum and
//!   kind can never be saved (always 500, a redirect loop, a redirect to
//!   another host, a gzip bomb, a 20 MB page with and without
//!   `Content-Length`, a later page that always fails, a page robots.txt
//!   disallows). The truth names them
//!   ([`crate::ThreadTruth::unservable`]).
//! - **Content traps** that keep the truth intact: links to `../../etc/passwd`,
//!   `%2e%2e%2f`, other hosts, `javascript:` and `file:` in home, list and
//!   thread pages, list rows whose thread or board id is crafted to climb
//!   out of a data directory (and pages served at those URLs, so a crawler
//!   that trusted the id would write somewhere), pages whose declared charset
//!   is wrong, pages with bytes invalid in their encoding, and multi-megabyte
//!   pages that are still within the default body cap.
//!
//! The HTTP-level faults are the server's ([`crate::serve`]); the content
//! traps are part of [`crate::Fixture::get`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::kind::ForumKind;
use crate::text::{hash_str, mix};

/// A fault that a retry gets past.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TransientFault {
    Status500,
    Status502,
    Status503,
    /// `429 Too Many Requests` with `Retry-After` ([`Hostility::retry_after`]).
    TooManyRequests,
    /// The connection is reset (TCP RST) without a byte of response.
    Reset,
    /// Nothing is sent for [`Hostility::stall`]; then the connection is reset.
    Stall,
    /// `Content-Length` promises the whole page; half of it comes, then the connection closes.
    Truncated,
}

impl TransientFault {
    pub const ALL: [TransientFault; 7] = [
        TransientFault::Status500,
        TransientFault::Status502,
        TransientFault::Status503,
        TransientFault::TooManyRequests,
        TransientFault::Reset,
        TransientFault::Stall,
        TransientFault::Truncated,
    ];

    /// The name the CLI and the request log use: `500`, `502`, `503`, `429`,
    /// `reset`, `stall`, `truncate`.
    pub fn name(self) -> &'static str {
        match self {
            TransientFault::Status500 => "500",
            TransientFault::Status502 => "502",
            TransientFault::Status503 => "503",
            TransientFault::TooManyRequests => "429",
            TransientFault::Reset => "reset",
            TransientFault::Stall => "stall",
            TransientFault::Truncated => "truncate",
        }
    }

    pub fn from_name(s: &str) -> Option<TransientFault> {
        TransientFault::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// A fault that never goes away: the thread it hits cannot be saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PermanentFault {
    /// Page 1 always answers 500.
    AlwaysError,
    /// Page 1 redirects to a URL that redirects back.
    RedirectLoop,
    /// Page 1 redirects to [`Hostility::other_host`].
    OffHostRedirect,
    /// Page 1 is a small gzip body that inflates to [`Hostility::bomb_bytes`],
    /// sent whatever `Accept-Encoding` said.
    GzipBomb,
    /// Page 1 is [`Hostility::huge_bytes`] long and says so in `Content-Length`.
    Huge,
    /// Page 1 is [`Hostility::huge_bytes`] long, chunked, with no `Content-Length`.
    HugeChunked,
    /// Page 2 of a multi-page thread always answers 500 (the thread must not
    /// be saved with a hole in it).
    LaterPageError,
    /// robots.txt disallows page 1. The server would serve it; a polite
    /// crawler never asks.
    RobotsDisallowed,
}

impl PermanentFault {
    pub const ALL: [PermanentFault; 8] = [
        PermanentFault::AlwaysError,
        PermanentFault::RedirectLoop,
        PermanentFault::OffHostRedirect,
        PermanentFault::GzipBomb,
        PermanentFault::Huge,
        PermanentFault::HugeChunked,
        PermanentFault::LaterPageError,
        PermanentFault::RobotsDisallowed,
    ];

    /// The name the truth and the CLI use.
    pub fn name(self) -> &'static str {
        match self {
            PermanentFault::AlwaysError => "always-500",
            PermanentFault::RedirectLoop => "redirect-loop",
            PermanentFault::OffHostRedirect => "off-host-redirect",
            PermanentFault::GzipBomb => "gzip-bomb",
            PermanentFault::Huge => "huge-page",
            PermanentFault::HugeChunked => "huge-chunked",
            PermanentFault::LaterPageError => "later-page-500",
            PermanentFault::RobotsDisallowed => "robots-disallowed",
        }
    }

    pub fn from_name(s: &str) -> Option<PermanentFault> {
        PermanentFault::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The thread page (1-based) the fault sits on.
    pub fn page(self) -> usize {
        match self {
            PermanentFault::LaterPageError => 2,
            _ => 1,
        }
    }
}

/// How hostile the server is. [`Hostility::default`] is not at all;
/// [`Hostility::percent`] is the `--hostile PERCENT` preset with every
/// fault and trap on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hostility {
    /// Which URLs fail, how, and which threads are unservable follow from this.
    pub seed: u64,
    /// Share (0–100) of URLs (robots.txt excepted) that fail transiently.
    pub transient_percent: u8,
    /// A faulty URL fails its first 1..=this requests (at least 1).
    pub max_failures: u8,
    /// The transient faults to draw from (empty: none happen).
    pub faults: Vec<TransientFault>,
    /// The `Retry-After` a 429 carries.
    pub retry_after: Duration,
    /// How long a stall lasts before the connection is reset.
    pub stall: Duration,
    /// Each of these hits one thread per forum.
    pub permanent: Vec<PermanentFault>,
    /// Traversal, off-host, `javascript:` and `file:` links and crafted ids in pages.
    pub links: bool,
    /// Base URL of "another host" that off-host links and redirects point at.
    pub other_host: String,
    /// Share (0–100) of thread pages whose declared charset is wrong.
    pub mislabel_percent: u8,
    /// Share (0–100) of thread pages with a few bytes invalid in their encoding.
    pub invalid_bytes_percent: u8,
    /// Share (0–100) of threads whose first page is padded to [`Hostility::big_bytes`].
    pub big_percent: u8,
    /// Size of a padded, still servable page.
    pub big_bytes: usize,
    /// Size of a [`PermanentFault::Huge`] page.
    pub huge_bytes: usize,
    /// Inflated size of a [`PermanentFault::GzipBomb`].
    pub bomb_bytes: usize,
    /// A `Crawl-delay` for robots.txt (whole milliseconds are kept).
    pub crawl_delay: Option<Duration>,
}

impl Default for Hostility {
    fn default() -> Self {
        Hostility {
            seed: 1,
            transient_percent: 0,
            max_failures: 2,
            faults: Vec::new(),
            retry_after: Duration::from_secs(1),
            stall: Duration::from_secs(5),
            permanent: Vec::new(),
            links: false,
            other_host: "http://elsewhere.invalid/".to_owned(),
            mislabel_percent: 0,
            invalid_bytes_percent: 0,
            big_percent: 0,
            big_bytes: 3 << 20,
            huge_bytes: 20 << 20,
            bomb_bytes: 48 << 20,
            crawl_delay: None,
        }
    }
}

impl Hostility {
    /// Every fault and trap on, `percent` of URLs failing transiently.
    pub fn percent(percent: u8) -> Hostility {
        Hostility {
            transient_percent: percent.min(100),
            faults: TransientFault::ALL.to_vec(),
            permanent: PermanentFault::ALL.to_vec(),
            links: true,
            mislabel_percent: 5,
            invalid_bytes_percent: 5,
            big_percent: 1,
            ..Hostility::default()
        }
    }

    /// Whether anything hostile happens at all.
    pub fn is_on(&self) -> bool {
        (self.transient_percent > 0 && !self.faults.is_empty())
            || !self.permanent.is_empty()
            || self.links
            || self.mislabel_percent > 0
            || self.invalid_bytes_percent > 0
            || self.big_percent > 0
            || self.crawl_delay.is_some()
    }

    fn roll(&self, key: &str, salt: u64) -> u64 {
        mix(&[self.seed, hash_str(key), salt])
    }

    /// How many first requests of `path` (decoded, see [`request_key`]) fail.
    pub fn failures_of(&self, path: &str) -> u32 {
        if self.faults.is_empty() || path == "/robots.txt" {
            return 0;
        }
        let h = self.roll(path, 0xFA17);
        if h % 100 >= u64::from(self.transient_percent) {
            return 0;
        }
        1 + ((h >> 20) % u64::from(self.max_failures.max(1))) as u32
    }

    /// The fault of the `attempt`-th (0-based) request of `path`, if it fails.
    pub fn transient_fault(&self, path: &str, attempt: u32) -> Option<TransientFault> {
        if attempt >= self.failures_of(path) {
            return None;
        }
        let h = self.roll(path, 0xF00D + u64::from(attempt));
        Some(self.faults[(h % self.faults.len() as u64) as usize])
    }

    pub(crate) fn mislabelled(&self, path: &str) -> bool {
        self.roll(path, 0x1AB3) % 100 < u64::from(self.mislabel_percent)
    }

    pub(crate) fn has_invalid_bytes(&self, path: &str) -> bool {
        self.roll(path, 0xBAD) % 100 < u64::from(self.invalid_bytes_percent)
    }

    pub(crate) fn is_big(&self, kind: ForumKind, tid: u64) -> bool {
        mix(&[self.seed, kind_code(kind), tid, 0xB16]) % 100 < u64::from(self.big_percent)
    }

    /// Picks the thread each permanent fault hits in one forum: `candidates`
    /// are (tid, pages) of threads that are not deleted, in id order.
    pub(crate) fn assign_permanent(&self, kind: ForumKind, candidates: &[(u64, usize)]) -> Vec<(u64, PermanentFault)> {
        let mut out: Vec<(u64, PermanentFault)> = Vec::new();
        for &fault in &self.permanent {
            let eligible: Vec<u64> =
                candidates.iter().filter(|(tid, pages)| *pages >= fault.page() && !out.iter().any(|(t, _)| t == tid)).map(|(tid, _)| *tid).collect();
            if eligible.is_empty() {
                continue;
            }
            let at = mix(&[self.seed, kind_code(kind), fault as u64, 0x9E3]) % eligible.len() as u64;
            out.push((eligible[at as usize], fault));
        }
        out
    }
}

fn kind_code(kind: ForumKind) -> u64 {
    hash_str(kind.site_id())
}

/// What identifies a URL for fault decisions: the path and query with
/// percent-escapes decoded, so a slug sent raw or escaped is one URL.
pub fn request_key(path_and_query: &str) -> String {
    String::from_utf8_lossy(&crate::text::percent_decode(path_and_query)).into_owned()
}

/// Ids crafted to climb out of `data/pages/<site>/board<B>/board<B>_<date>/`
/// when pasted into `article<T>.html` or `board<B>`: one lands in a `canary`
/// directory beside the data directory, one in `/tmp`.
pub const TRAVERSAL_THREAD_IDS: [&str; 4] = [
    "/../../../../../../canary/pwned",
    "/../../../../../../../../../../../../../../../../tmp/luntan-canary-pwned",
    "%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fcanary%2fpwned",
    "..\\..\\..\\..\\..\\..\\canary\\pwned",
];

/// Board ids crafted the same way (`board<B>` directories).
pub const TRAVERSAL_BOARD_IDS: [&str; 2] = ["/../../../../canary", "%2e%2e%2f%2e%2e%2f%2e%2e%2fcanary"];

/// Whether an id from a request is one of the crafted ones (or any other
/// non-numeric, non-slug junk): such requests get a decoy page.
pub(crate) fn is_crafted(id: &str) -> bool {
    id.contains("..") || id.contains('%') || id.contains('/') || id.contains('\\')
}

/// Extra links for a page in hostile mode: every trick a page can play on a
/// link follower. `board_href`/`thread_href` build the forum's own URL shapes
/// around an id; `rows` wraps one link the way the forum's board lists wrap a
/// thread row, so a site file's list rules look at it.
pub(crate) fn hostile_links_html(kind: ForumKind, other_host: &str, on_list: bool) -> String {
    use std::fmt::Write as _;
    let other = other_host.trim_end_matches('/');
    type Href = fn(&str) -> String;
    let (board_href, thread_href): (Href, Href) = match kind {
        ForumKind::Discuz => (|id| format!("forum.php?mod=forumdisplay&fid={id}"), |id| format!("forum.php?mod=viewthread&tid={id}")),
        ForumKind::Phpbb => (|id| format!("./viewforum.php?f={id}"), |id| format!("./viewtopic.php?t={id}")),
        ForumKind::Bbs => (|id| format!("/bbs/board/{id}/"), |id| format!("/bbs/topic/{id}/x/")),
        ForumKind::DiscuzX => (|id| format!("forum-{id}-1.html"), |id| format!("thread-{id}-1-1.html")),
        ForumKind::Nexus => (|id| format!("thread.php?fid={id}"), |id| format!("read.php?tid={id}")),
        ForumKind::Modern => (|id| format!("/md/category/{id}/x"), |id| format!("/md/topic/{id}/x")),
    };
    let prefix = kind.home_path().trim_end_matches(|c| c != '/');
    let abs = |rel: &str| -> String {
        let path = if rel.starts_with('/') { rel.to_owned() } else { format!("{prefix}{}", rel.trim_start_matches("./")) };
        format!("{other}{path}")
    };
    let mut links: Vec<String> = vec![
        "../../etc/passwd".into(),
        "../../../../../../../../etc/passwd".into(),
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd".into(),
        "%2e%2e/%2e%2e/%2e%2e/etc/passwd".into(),
        "..%2F..%2F..%2Fetc%2Fpasswd".into(),
        "file:///etc/passwd".into(),
        "javascript:location.href='/etc/passwd'".into(),
        format!("javascript:window.open('{}')", thread_href("1001")),
        "data:text/html,%3Ca%20href%3D%22..%2F..%2Fetc%2Fpasswd%22%3E".into(),
        format!("{other}/etc/passwd"),
        format!("//{}/", other.trim_start_matches("http://").trim_start_matches("https://")),
        abs(&board_href("1")),
        abs(&thread_href("1001")),
        format!("{}&page=99999999999999999999999", board_href("1")),
    ];
    links.extend(TRAVERSAL_BOARD_IDS.iter().map(|id| board_href(id)));
    links.extend(TRAVERSAL_THREAD_IDS.iter().map(|id| thread_href(id)));
    let mut out = String::from("\n<div class=\"hostile-links\">");
    for l in &links {
        out.push_str("<a href=\"");
        crate::text::esc_into(&mut out, l);
        out.push_str("\">陷阱</a> ");
    }
    out.push_str("</div>\n");
    if on_list {
        // The same links again as board-list rows, where list rules look.
        let rows = links.iter().map(|l| {
            let mut h = String::new();
            crate::text::esc_into(&mut h, l);
            h
        });
        match kind {
            ForumKind::Discuz | ForumKind::DiscuzX => {
                out.push_str("<table class=\"hostile\">");
                for (i, h) in rows.enumerate() {
                    let _ = write!(
                        out,
                        "<tbody id=\"normalthread_x{i}\"><tr><th><a href=\"{h}\" class=\"s xst\">陷阱</a></th><td class=\"num\"><a>1</a></td></tr></tbody>"
                    );
                }
                out.push_str("</table>\n");
            }
            ForumKind::Phpbb => {
                out.push_str("<ul class=\"topiclist topics hostile\">");
                for h in rows {
                    let _ = write!(out, "<li class=\"row\"><dl><dt><a href=\"{h}\" class=\"topictitle\">陷阱</a></dt><dd class=\"posts\">1</dd></dl></li>");
                }
                out.push_str("</ul>\n");
            }
            ForumKind::Bbs => {
                out.push_str("<ol class=\"topics hostile\">");
                for h in rows {
                    let _ = write!(out, "<li class=\"topic\"><a class=\"title\" href=\"{h}\">陷阱</a> <span class=\"replies\">1</span></li>");
                }
                out.push_str("</ol>\n");
            }
            ForumKind::Nexus => {
                out.push_str("<ul class=\"thread-list hostile\">");
                for h in rows {
                    let _ = write!(
                        out,
                        "<li class=\"thread-item\"><div class=\"subject\"><a class=\"subject-link\" href=\"{h}\">陷阱</a></div><div class=\"stats\"><span class=\"replies\">1</span></div></li>"
                    );
                }
                out.push_str("</ul>\n");
            }
            ForumKind::Modern => {
                out.push_str("<ul component=\"category\" class=\"topic-list hostile\">");
                for h in rows {
                    let _ = write!(
                        out,
                        "<li component=\"category/topic\" data-tid=\"0\"><h2 component=\"topic/header\" class=\"title\"><a href=\"{h}\" itemprop=\"url\">陷阱</a></h2><div class=\"stats stats-replies\"><span class=\"human-readable-number\" title=\"1\">1</span></div></li>"
                    );
                }
                out.push_str("</ul>\n");
            }
        }
    }
    out
}

/// A few bytes no decoder of `kind`'s encoding accepts, in a paragraph no
/// site rule extracts.
pub(crate) fn invalid_bytes(kind: ForumKind) -> &'static [u8] {
    match kind {
        // A lead byte with a trail byte GBK (and GB18030) does not have, and 0xFF.
        ForumKind::Discuz | ForumKind::DiscuzX => b"<p class=\"noise\">\x81\x7F \xFF \x81</p>",
        // 0x80 and 0xFF are never Big5 lead bytes; 0xA1 0x30 is a bad pair.
        ForumKind::Phpbb => b"<p class=\"noise\">\x80 \xFF \xA1\x30</p>",
        // A lone continuation byte, an overlong '/', a surrogate half.
        ForumKind::Bbs | ForumKind::Nexus | ForumKind::Modern => b"<p class=\"noise\">\x80 \xC0\xAF \xED\xA0\x80</p>",
    }
}

/// The `Content-Type` a mislabelled page of `kind` is served with: a charset
/// the bytes are not in.
pub(crate) fn mislabelled_content_type(kind: ForumKind) -> &'static str {
    match kind {
        // GBK bytes called UTF-8: invalid as UTF-8, easy to catch.
        ForumKind::Discuz | ForumKind::DiscuzX => "text/html; charset=utf-8",
        // Big5 bytes called GB2312: nearly every Big5 pair is a valid GBK
        // pair too, so only the text's statistics give it away.
        ForumKind::Phpbb => "text/html; charset=gb2312",
        // UTF-8 bytes called GBK.
        ForumKind::Bbs | ForumKind::Nexus | ForumKind::Modern => "text/html; charset=gbk",
    }
}

/// Padding for a big page: inert markup no site rule extracts, in the
/// page's own encoding (ASCII and a little CJK), `bytes` long or a bit more.
pub(crate) fn padding(kind: ForumKind, bytes: usize) -> Vec<u8> {
    let line = "<p>填充 padding 填充 padding 填充 padding 填充 padding</p>\n";
    let (encoded, _, _) = kind.encoding().encode(line);
    let mut out = Vec::with_capacity(bytes + 128);
    out.extend_from_slice(b"\n<div class=\"pad\" style=\"display:none\">\n");
    while out.len() < bytes {
        out.extend_from_slice(&encoded);
    }
    out.extend_from_slice(b"</div>\n");
    out
}

/// Inserts `extra` before the last `</body>` (or appends it).
pub(crate) fn insert_before_body_end(body: &mut Vec<u8>, extra: &[u8]) {
    let at = body.windows(7).rposition(|w| w.eq_ignore_ascii_case(b"</body>")).unwrap_or(body.len());
    body.splice(at..at, extra.iter().copied());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_faults_are_seeded_bounded_and_end() {
        let h = Hostility::percent(30);
        let paths: Vec<String> = (0..2000).map(|i| format!("/dz/forum.php?mod=viewthread&tid={i}")).collect();
        let faulty: Vec<&String> = paths.iter().filter(|p| h.failures_of(p) > 0).collect();
        let share = faulty.len() as f64 / paths.len() as f64;
        assert!((0.25..0.35).contains(&share), "{share}");
        let mut kinds = std::collections::BTreeSet::new();
        for p in &faulty {
            let n = h.failures_of(p);
            assert!((1..=2).contains(&n), "{p}: {n}");
            for a in 0..n {
                kinds.insert(h.transient_fault(p, a).expect("fails while attempt < n"));
            }
            assert_eq!(h.transient_fault(p, n), None, "{p} must succeed after {n} failures");
        }
        assert_eq!(kinds.len(), TransientFault::ALL.len(), "every kind happens: {kinds:?}");
        assert_eq!(h.failures_of("/robots.txt"), 0);
        // Same seed, same faults; another seed, other faults.
        let again = Hostility::percent(30);
        assert!(paths.iter().all(|p| again.failures_of(p) == h.failures_of(p)));
        let other = Hostility { seed: 2, ..Hostility::percent(30) };
        assert!(paths.iter().any(|p| other.failures_of(p) != h.failures_of(p)));
        assert!(paths.iter().all(|p| Hostility::default().failures_of(p) == 0));
        let only_429 = Hostility { faults: vec![TransientFault::TooManyRequests], ..Hostility::percent(100) };
        assert!(paths.iter().all(|p| only_429.transient_fault(p, 0) == Some(TransientFault::TooManyRequests)));
    }

    #[test]
    fn names_round_trip() {
        for f in TransientFault::ALL {
            assert_eq!(TransientFault::from_name(f.name()), Some(f));
        }
        for f in PermanentFault::ALL {
            assert_eq!(PermanentFault::from_name(f.name()), Some(f));
        }
    }

    #[test]
    fn permanent_faults_pick_distinct_fitting_threads() {
        let h = Hostility::percent(10);
        let candidates: Vec<(u64, usize)> = (1000..1040).map(|t| (t, if t % 5 == 0 { 3 } else { 1 })).collect();
        let picked = h.assign_permanent(ForumKind::Discuz, &candidates);
        assert_eq!(picked.len(), PermanentFault::ALL.len());
        let mut tids: Vec<u64> = picked.iter().map(|(t, _)| *t).collect();
        tids.dedup();
        assert_eq!(tids.len(), picked.len(), "one fault per thread");
        let later = picked.iter().find(|(_, f)| *f == PermanentFault::LaterPageError).unwrap();
        assert_eq!(later.0 % 5, 0, "a later-page fault needs a thread with a later page");
        assert!(h.assign_permanent(ForumKind::Discuz, &[]).is_empty());
    }

    #[test]
    fn inserting_before_the_body_end() {
        let mut b = b"<html><body>x</BODY></html>".to_vec();
        insert_before_body_end(&mut b, b"<p>y</p>");
        assert_eq!(b, b"<html><body>x<p>y</p></BODY></html>");
        let mut b = b"no end".to_vec();
        insert_before_body_end(&mut b, b"!");
        assert_eq!(b, b"no end!");
    }

    #[test]
    fn invalid_bytes_really_are_invalid() {
        for kind in ForumKind::EVERY {
            let bytes = invalid_bytes(kind);
            assert!(kind.encoding().decode_without_bom_handling_and_without_replacement(bytes).is_none(), "{kind:?}");
        }
    }
}
