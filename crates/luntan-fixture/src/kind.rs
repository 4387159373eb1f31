//! The forum kinds: what each one's software fixes (names, paths,
//! encodings, page sizes). Apart from the model so that fault and topic
//! rules, which only need to know which forum, sit below it.
//!
//! Three kinds are served by default ([`ForumKind::ALL`]); three more
//! ([`ForumKind::EXTRA`]) only when a config names them, so the default
//! fixture, its tests, the demo and the benchmarks stay as they were.

use serde::{Deserialize, Serialize};

use crate::corpus::Script;

/// One of the fake forums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ForumKind {
    /// Discuz!-style, GBK pages labelled `gb2312`, under `/dz/` (site id `dz`).
    Discuz,
    /// phpBB-style, Big5, Traditional Chinese, under `/phpbb/` (site id `phpbb`).
    Phpbb,
    /// A modern UTF-8 forum that declares no charset anywhere, under `/bbs/` (site id `bbs`).
    Bbs,
    /// Discuz! X3.4 with URL rewriting (`forum-{fid}-{page}.html`,
    /// `thread-{tid}-{page}-{listpage}.html`), GB18030 bytes labelled `gbk`
    /// in a meta tag, recent post times shown as "3 天前" with the real time
    /// only in a `title` attribute, under `/dzx/` (site id `dzx`). Not served
    /// by default.
    DiscuzX,
    /// A PHPWind/NexusPHP-style forum (`thread.php?fid=`, `read.php?tid=`),
    /// UTF-8 declared only in the HTTP header, posts as nested divs, under
    /// `/nx/` (site id `nx`). Not served by default.
    Nexus,
    /// A NodeBB-style forum as a client without JavaScript receives it
    /// (`/md/category/{cid}/{slug}`, `/md/topic/{tid}/{slug}`), UTF-8 with
    /// `<meta charset="utf-8">`: times only in the `title` of an empty
    /// `<span class="timeago">`, in UTC; pagers only inside `<noscript>` and
    /// in `<link rel="next">`. Under `/md/` (site id `md`). Not served by default.
    Modern,
}

impl ForumKind {
    /// The three forums served by default (and the only ones `make demo`,
    /// the benchmarks and most tests know).
    pub const ALL: [ForumKind; 3] = [ForumKind::Discuz, ForumKind::Phpbb, ForumKind::Bbs];

    /// The forums served only when a config names them.
    pub const EXTRA: [ForumKind; 3] = [ForumKind::DiscuzX, ForumKind::Nexus, ForumKind::Modern];

    /// Every kind the fixture can serve: [`ForumKind::ALL`], then [`ForumKind::EXTRA`].
    pub const EVERY: [ForumKind; 6] = [ForumKind::Discuz, ForumKind::Phpbb, ForumKind::Bbs, ForumKind::DiscuzX, ForumKind::Nexus, ForumKind::Modern];

    /// The site id, which is also the URL prefix (`/dz/`) and the site file's name (`dz.xml`).
    pub fn site_id(self) -> &'static str {
        match self {
            ForumKind::Discuz => "dz",
            ForumKind::Phpbb => "phpbb",
            ForumKind::Bbs => "bbs",
            ForumKind::DiscuzX => "dzx",
            ForumKind::Nexus => "nx",
            ForumKind::Modern => "md",
        }
    }

    /// The kind with this site id, default or not (`dz`, `phpbb`, `bbs`, `dzx`, `nx`, `md`).
    pub fn from_site_id(id: &str) -> Option<ForumKind> {
        ForumKind::EVERY.into_iter().find(|k| k.site_id() == id)
    }

    /// The kind whose URL prefix (`/dz/`, `/dzx/`, …) starts `path`.
    pub(crate) fn of_path(path: &str) -> Option<ForumKind> {
        ForumKind::EVERY.into_iter().find(|k| path.strip_prefix('/').and_then(|p| p.strip_prefix(k.site_id())).is_some_and(|p| p.starts_with('/')))
    }

    /// Whether a list's link to a thread names the list page it sits on
    /// (Discuz! X's `thread-T-1-N.html`, the PHPWind-style `&fpage=N`).
    pub(crate) fn links_name_list_page(self) -> bool {
        matches!(self, ForumKind::DiscuzX | ForumKind::Nexus)
    }

    /// Whether the forum has a search and logins the fixture serves
    /// ([`crate::search`]); the extra kinds have none.
    pub fn has_search(self) -> bool {
        ForumKind::ALL.contains(&self)
    }

    /// The forum's display name.
    pub fn name(self) -> &'static str {
        match self {
            ForumKind::Discuz => "清水河畔",
            ForumKind::Phpbb => "唐詩論壇",
            ForumKind::Bbs => "新青年论坛",
            ForumKind::DiscuzX => "江城社区",
            ForumKind::Nexus => "风之谷论坛",
            ForumKind::Modern => "开源社区",
        }
    }

    /// The encoding pages are really written in.
    pub fn encoding(self) -> &'static encoding_rs::Encoding {
        match self {
            ForumKind::Discuz => encoding_rs::GBK,
            ForumKind::Phpbb => encoding_rs::BIG5,
            ForumKind::Bbs => encoding_rs::UTF_8,
            // GB18030 bytes (an emoji is a four-byte sequence, not a
            // reference) under a `gbk` label, as browsers read it.
            ForumKind::DiscuzX => encoding_rs::GB18030,
            ForumKind::Nexus | ForumKind::Modern => encoding_rs::UTF_8,
        }
    }

    /// The name the truth uses for [`ForumKind::encoding`]: `GBK`, `Big5`, `UTF-8` or `GB18030`.
    pub fn encoding_name(self) -> &'static str {
        match self {
            ForumKind::Discuz => "GBK",
            ForumKind::Phpbb => "Big5",
            ForumKind::Bbs => "UTF-8",
            ForumKind::DiscuzX => "GB18030",
            ForumKind::Nexus | ForumKind::Modern => "UTF-8",
        }
    }

    /// The home page, relative to the server root.
    pub fn home_path(self) -> &'static str {
        match self {
            ForumKind::Discuz => "/dz/forum.php",
            ForumKind::Phpbb => "/phpbb/index.php",
            ForumKind::Bbs => "/bbs/",
            ForumKind::DiscuzX => "/dzx/forum.php",
            ForumKind::Nexus => "/nx/index.php",
            ForumKind::Modern => "/md/",
        }
    }

    /// Thread rows per board list page.
    pub fn list_page_size(self) -> usize {
        match self {
            ForumKind::Discuz => 20,
            ForumKind::Phpbb => 25,
            ForumKind::Bbs => 20,
            ForumKind::DiscuzX => 20,
            ForumKind::Nexus => 30,
            ForumKind::Modern => 20,
        }
    }

    /// Posts per thread page.
    pub fn thread_page_size(self) -> usize {
        match self {
            ForumKind::Discuz => 10,
            ForumKind::Phpbb => 15,
            ForumKind::Bbs => 10,
            ForumKind::DiscuzX => 10,
            ForumKind::Nexus => 15,
            ForumKind::Modern => 10,
        }
    }

    /// Threads' last posts fall within this many days before the newest
    /// (a busy forum's are recent: the Discuz! X one shows many times as
    /// "3 天前").
    pub(crate) fn active_days(self) -> u32 {
        match self {
            ForumKind::DiscuzX => 60,
            _ => 400,
        }
    }

    pub(crate) fn script(self) -> Script {
        match self {
            ForumKind::Phpbb => Script::Traditional,
            _ => Script::Simplified,
        }
    }

    /// Seeds depend on the forum, not on its position in the config, so a
    /// forum's pages stay the same whichever other forums are served.
    pub(crate) fn code(self) -> u64 {
        match self {
            ForumKind::Discuz => 0xD2,
            ForumKind::Phpbb => 0xB5,
            ForumKind::Bbs => 0x8B,
            ForumKind::DiscuzX => 0xD3,
            ForumKind::Nexus => 0x4E,
            ForumKind::Modern => 0x3D,
        }
    }
}
