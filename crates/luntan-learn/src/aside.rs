//! Pages beside a forum's structure: search, filtered and sorted views,
//! feeds, user pages, tags, print views, and the login and posting forms.
//!
//! None of them is a board, a list or a thread as the crawl reads them,
//! yet a forum links them from every page, often in many variants
//! (`/popular?filter=week&term=…`), and a walk that spreads its budget
//! over kinds of URL would spend much of it there. The sample reads them
//! last and few ([`crate::sample::walk`]). They are told by the URL alone:
//! a path segment that names them (`search.php`, `/user/`, `/tags/`,
//! `space-uid-5.html`), a query key (`filter=`, `orderby=`, `q=`) or a
//! query value that dispatches to them (`mod=space`, `action=printable`).

use url::Url;

/// What an aside page is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Aside {
    Search,
    /// A list filtered or sorted another way (`filter=`, `orderby=`).
    View,
    Feed,
    User,
    Tag,
    Print,
    /// Login, registration and the forms that post or reply.
    Account,
}

impl Aside {
    pub fn name(self) -> &'static str {
        match self {
            Aside::Search => "search",
            Aside::View => "filter/sort",
            Aside::Feed => "feed",
            Aside::User => "user",
            Aside::Tag => "tag",
            Aside::Print => "print",
            Aside::Account => "login/post",
        }
    }
}

/// Query keys whose value picks how a page is shown or searched, not
/// which page it is: their values do not make another kind of URL
/// ([`crate::urls::Split::sample_key`]).
pub fn view_key(key: &str) -> bool {
    search_key(key) || sort_key(key)
}

fn search_key(key: &str) -> bool {
    matches!(key.to_ascii_lowercase().as_str(), "q" | "kw" | "keyword" | "keywords" | "srchtxt" | "searchid" | "query" | "search")
}

fn sort_key(key: &str) -> bool {
    matches!(key.to_ascii_lowercase().as_str(), "filter" | "sort" | "sortby" | "sort_by" | "order" | "orderby" | "order_by" | "term")
}

/// `stem` is `word`, or begins with it followed by other than a letter
/// (`user-5`, `tag_3`): a slug that merely starts with the word
/// (`usercp`, `tagline`) is not.
fn lead(stem: &str, word: &str) -> bool {
    stem.strip_prefix(word).is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_lowercase()))
}

/// What a path segment says, if it names an aside page.
fn segment(seg: &str) -> Option<Aside> {
    let seg = seg.to_ascii_lowercase();
    let (stem, ext) = match seg.split_once('.') {
        Some((s, _)) => (s, seg.rsplit('.').next()),
        None => (seg.as_str(), None),
    };
    if matches!(ext, Some("xml" | "rss" | "atom")) || ["feed", "feeds", "rss", "atom"].iter().any(|w| lead(stem, w)) {
        return Some(Aside::Feed);
    }
    // Words that begin compound script names (`searchresults`,
    // `memberlist`, `printthread`, `viewprofile`) match as a prefix.
    if stem.starts_with("search") {
        return Some(Aside::Search);
    }
    if matches!(stem, "u" | "users" | "people" | "profiles" | "userinfo")
        || ["user", "member", "profile"].iter().any(|w| lead(stem, w))
        || ["memberlist", "members", "viewprofile", "space-uid", "space-username"].iter().any(|w| stem.starts_with(w))
    {
        return Some(Aside::User);
    }
    if lead(stem, "tag") || lead(stem, "tags") {
        return Some(Aside::Tag);
    }
    if lead(stem, "print") || ["printable", "printthread", "printview", "printpage"].iter().any(|w| stem.starts_with(w)) {
        return Some(Aside::Print);
    }
    let account = ["login", "logon", "signin", "register", "signup", "compose", "reply", "newthread", "newtopic", "newreply", "posting"];
    // `new` and `post` only whole: `/new` is a form, `/news/` a board;
    // `post.php` a form, `/post/123` a post that leads to its thread.
    if account.iter().any(|w| lead(stem, w)) || stem == "new" || seg == "post.php" {
        return Some(Aside::Account);
    }
    None
}

/// Whether `url` is a login form: a path segment (`/user/login/`,
/// `signin.php`) or a query value (`mod=logging`, `mode=login`) says so.
pub fn is_login(url: &Url) -> bool {
    let words = ["login", "logon", "signin", "logging"];
    let names = |s: &str| {
        let s = s.to_ascii_lowercase();
        let stem = s.split('.').next().unwrap_or_default();
        words.iter().any(|w| lead(stem, w))
    };
    url.path_segments().into_iter().flatten().any(names) || url.query_pairs().any(|(_, v)| names(&v))
}

/// What a query value that dispatches a script (`mod=space`,
/// `action=printable`, `mode=login`) says, if it names an aside page.
fn value(v: &str) -> Option<Aside> {
    Some(match v.to_ascii_lowercase().as_str() {
        "search" => Aside::Search,
        "rss" | "atom" | "feed" => Aside::Feed,
        "space" | "spacecp" | "profile" | "viewprofile" | "member" | "memberlist" | "userinfo" => Aside::User,
        "tag" | "tags" => Aside::Tag,
        "print" | "printable" => Aside::Print,
        "login" | "logging" | "register" | "signup" | "reply" | "newthread" | "newtopic" | "newreply" | "quote" | "post" => Aside::Account,
        _ => return None,
    })
}

/// Whether `url` is an aside page, and of which kind: the first of its
/// path segments, then of its query keys and values, that names one.
pub fn aside(url: &Url) -> Option<Aside> {
    if let Some(a) = url.path_segments().into_iter().flatten().find_map(segment) {
        return Some(a);
    }
    for (k, v) in url.query_pairs() {
        let key = k.to_ascii_lowercase();
        let by_key = if search_key(&key) {
            Some(Aside::Search)
        } else if sort_key(&key) {
            Some(Aside::View)
        } else if matches!(key.as_str(), "feed" | "rss" | "atom") || (key == "format" && matches!(&*v, "rss" | "atom" | "xml")) {
            Some(Aside::Feed)
        } else if matches!(key.as_str(), "tag" | "tags" | "tagid") {
            Some(Aside::Tag)
        } else if key == "print" {
            Some(Aside::Print)
        } else {
            value(&v)
        };
        if by_key.is_some() {
            return by_key;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(u: &str) -> Option<Aside> {
        aside(&Url::parse(u).unwrap())
    }

    #[test]
    fn search_filter_feed_user_tag_print_and_forms_are_aside() {
        for (u, want) in [
            ("http://h/search.php?mod=forum", Aside::Search),
            ("http://h/search?q=%E8%80%83%E7%A0%94", Aside::Search),
            ("http://h/forum.php?mod=forumdisplay&fid=2&filter=heat&orderby=heats", Aside::View),
            ("http://h/popular?filter=week&term=exam", Aside::View),
            ("http://h/viewforum.php?f=2&order=asc", Aside::View),
            ("http://h/forum.php?mod=rss&fid=2", Aside::Feed),
            ("http://h/feed/", Aside::Feed),
            ("http://h/board/2/index.rss", Aside::Feed),
            ("http://h/atom.xml", Aside::Feed),
            ("http://h/user/alice", Aside::User),
            ("http://h/u/5", Aside::User),
            ("http://h/users", Aside::User),
            ("http://h/u.php?uid=5", Aside::User),
            ("http://h/home.php?mod=space&uid=5&do=profile", Aside::User),
            ("http://h/home.php?mod=spacecp&ac=usergroup&gid=10", Aside::User),
            ("http://h/dzx/space-uid-5.html", Aside::User),
            ("http://h/memberlist.php?mode=viewprofile&u=2", Aside::User),
            ("http://h/profile.php?id=3", Aside::User),
            ("http://h/tag/exam", Aside::Tag),
            ("http://h/tags/", Aside::Tag),
            ("http://h/misc.php?mod=tag&id=4", Aside::Tag),
            ("http://h/forum.php?mod=viewthread&action=printable&tid=7", Aside::Print),
            ("http://h/printthread.php?t=7", Aside::Print),
            ("http://h/member.php?mod=logging&action=login", Aside::User),
            ("http://h/ucp.php?mode=login", Aside::Account),
            ("http://h/register.php", Aside::Account),
            ("http://h/signup", Aside::Account),
            ("http://h/forum.php?mod=post&action=reply&fid=2&tid=7", Aside::Account),
            ("http://h/post.php?action=quote&fid=2&tid=7&pid=9", Aside::Account),
            ("http://h/posting.php?mode=reply&t=7", Aside::Account),
            ("http://h/compose", Aside::Account),
            ("http://h/t/new", Aside::Account),
        ] {
            assert_eq!(of(u), Some(want), "{u}");
        }
    }

    #[test]
    fn boards_lists_threads_and_their_pagers_are_not_aside() {
        for u in [
            "http://h/dz/forum.php",
            "http://h/dz/forum.php?mod=forumdisplay&fid=2&page=3",
            "http://h/dz/forum.php?mod=viewthread&tid=7&extra=page%3D2&page=2",
            "http://h/dz/forum.php?mod=viewthread&tid=7&page=1&authorid=5",
            "http://h/dz/forum.php?mod=redirect&goto=lastpost&tid=7",
            "http://h/dzx/forum-2-1.html",
            "http://h/dzx/thread-7-2-1.html",
            "http://h/phpbb/viewtopic.php?t=7&start=15",
            "http://h/phpbb/viewtopic.php?p=9",
            "http://h/bbs/board/tech/",
            "http://h/bbs/topic/12/%E8%80%83%E7%A0%94/?page=2",
            "http://h/nx/read.php?tid=7&uid=3",
            "http://h/nx/thread.php?fid=2",
            "http://h/news/",
            "http://h/post/123",
            "http://h/t/usercp-tips/5",
            "http://h/t/tagline-ideas/6",
            "http://h/feedback/",
        ] {
            assert_eq!(of(u), None, "{u}");
        }
    }
}
