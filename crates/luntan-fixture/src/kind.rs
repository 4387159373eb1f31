//! The three forum kinds: what each one's software fixes (names, paths,
//! encodings, page sizes). Apart from the model so that fault and topic
//! rules, which only need to know which forum, sit below it.

use serde::{Deserialize, Serialize};

use crate::corpus::Script;

/// One of the three fake forums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ForumKind {
    /// Discuz!-style, GBK pages labelled `gb2312`, under `/dz/` (site id `dz`).
    Discuz,
    /// phpBB-style, Big5, Traditional Chinese, under `/phpbb/` (site id `phpbb`).
    Phpbb,
    /// A modern UTF-8 forum that declares no charset anywhere, under `/bbs/` (site id `bbs`).
    Bbs,
}

impl ForumKind {
    pub const ALL: [ForumKind; 3] = [ForumKind::Discuz, ForumKind::Phpbb, ForumKind::Bbs];

    /// The site id, which is also the URL prefix (`/dz/`) and the site file's name (`dz.xml`).
    pub fn site_id(self) -> &'static str {
        match self {
            ForumKind::Discuz => "dz",
            ForumKind::Phpbb => "phpbb",
            ForumKind::Bbs => "bbs",
        }
    }

    pub fn from_site_id(id: &str) -> Option<ForumKind> {
        ForumKind::ALL.into_iter().find(|k| k.site_id() == id)
    }

    /// The forum's display name.
    pub fn name(self) -> &'static str {
        match self {
            ForumKind::Discuz => "清水河畔",
            ForumKind::Phpbb => "唐詩論壇",
            ForumKind::Bbs => "新青年论坛",
        }
    }

    /// The encoding pages are really written in.
    pub fn encoding(self) -> &'static encoding_rs::Encoding {
        match self {
            ForumKind::Discuz => encoding_rs::GBK,
            ForumKind::Phpbb => encoding_rs::BIG5,
            ForumKind::Bbs => encoding_rs::UTF_8,
        }
    }

    /// The name the truth uses for [`ForumKind::encoding`]: `GBK`, `Big5` or `UTF-8`.
    pub fn encoding_name(self) -> &'static str {
        match self {
            ForumKind::Discuz => "GBK",
            ForumKind::Phpbb => "Big5",
            ForumKind::Bbs => "UTF-8",
        }
    }

    /// The home page, relative to the server root.
    pub fn home_path(self) -> &'static str {
        match self {
            ForumKind::Discuz => "/dz/forum.php",
            ForumKind::Phpbb => "/phpbb/index.php",
            ForumKind::Bbs => "/bbs/",
        }
    }

    /// Thread rows per board list page.
    pub fn list_page_size(self) -> usize {
        match self {
            ForumKind::Discuz => 20,
            ForumKind::Phpbb => 25,
            ForumKind::Bbs => 20,
        }
    }

    /// Posts per thread page.
    pub fn thread_page_size(self) -> usize {
        match self {
            ForumKind::Discuz => 10,
            ForumKind::Phpbb => 15,
            ForumKind::Bbs => 10,
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
        }
    }
}
