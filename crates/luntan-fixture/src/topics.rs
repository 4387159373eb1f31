//! Topic-labelled boards, for focused crawling (S2): with
//! [`crate::FixtureConfig::topics`] set, some boards are mostly about one
//! topic (考研, the postgraduate entrance exam) and the others touch it now
//! and then. On-topic threads get titles mixing topic words with ordinary
//! corpus text; a share of them show the topic only weakly (one topic word in
//! a long title), and a share of off-topic threads mention a topic word in
//! passing, as real boards do. The truth marks which threads are on topic
//! ([`crate::ThreadTruth::on_topic`]), so a crawl's recall can be measured.

use crate::corpus::{self, Script};
use crate::kind::ForumKind;
use crate::text::{hash_str, rng};

/// Where the topic lives and how clearly titles show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Topics {
    /// The first `boards` boards of each forum are the topic's home boards.
    pub boards: usize,
    /// Share (0–100) of a topic board's threads that are on the topic.
    pub board_percent: u8,
    /// Share of the other boards' threads that are on the topic anyway.
    pub elsewhere_percent: u8,
    /// Share of on-topic threads whose title carries one topic word in a long
    /// title: the borderline cases a threshold may miss.
    pub weak_percent: u8,
    /// Share of off-topic threads whose title mentions a topic word in passing.
    pub passing_percent: u8,
}

impl Default for Topics {
    fn default() -> Self {
        Topics { boards: 1, board_percent: 85, elsewhere_percent: 4, weak_percent: 4, passing_percent: 3 }
    }
}

/// The topic's words, simplified: what a site file's `<focus><topic>` lists.
pub const TOPIC_WORDS: &[&str] = &["考研", "复试", "导师", "研究生", "调剂", "分数线", "初试", "保研"];

/// On-topic title phrases; each holds two or three topic words, as a title
/// that is plainly about the topic does.
const PHRASES_S: &[&str] = &[
    "考研复试经验分享",
    "考研导师怎么联系",
    "研究生复试分数线出来了",
    "考研调剂求助",
    "考研初试成绩查询",
    "保研还是考研",
    "复试被导师刷了",
    "考研英语复试怎么准备",
    "研究生导师推荐",
    "考研分数线预测",
    "研究生复试准备什么",
    "考研二战调剂经验",
    "考研调剂信息汇总",
    "研究生导师招生简章",
    "考研初试数学复习计划",
    "研究生导师回复邮件了",
];
/// The same phrases in traditional characters (the Big5 forum).
const PHRASES_T: &[&str] = &[
    "考研複試經驗分享",
    "考研導師怎麼聯繫",
    "研究生複試分數線出來了",
    "考研調劑求助",
    "考研初試成績查詢",
    "保研還是考研",
    "複試被導師刷了",
    "考研英語複試怎麼準備",
    "研究生導師推薦",
    "考研分數線預測",
    "研究生複試準備什麼",
    "考研二戰調劑經驗",
    "考研調劑信息匯總",
    "研究生導師招生簡章",
    "考研初試數學複習計劃",
    "研究生導師回覆郵件了",
];
/// [`TOPIC_WORDS`] in traditional characters.
pub(crate) const WORDS_T: &[&str] = &["考研", "複試", "導師", "研究生", "調劑", "分數線", "初試", "保研"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Strong,
    Weak,
    Passing,
    Off,
}

fn label(topics: &Topics, seed: u64, kind: ForumKind, tid: u64, board: usize) -> Label {
    let mut r = rng(&[seed, hash_str(kind.site_id()), tid, 0x70_91C]);
    let share = if board < topics.boards { topics.board_percent } else { topics.elsewhere_percent };
    if r.u32(0..100) < u32::from(share) {
        if r.u32(0..100) < u32::from(topics.weak_percent) {
            Label::Weak
        } else {
            Label::Strong
        }
    } else if r.u32(0..100) < u32::from(topics.passing_percent) {
        Label::Passing
    } else {
        Label::Off
    }
}

/// The title a thread gets for its label; `title` is its ordinary one.
fn retitle(label: Label, script: Script, seed: u64, kind: ForumKind, tid: u64, title: &str) -> Option<String> {
    let mut r = rng(&[seed, hash_str(kind.site_id()), tid, 0x7171E]);
    let (phrases, words) = match script {
        Script::Simplified => (PHRASES_S, TOPIC_WORDS),
        Script::Traditional => (PHRASES_T, WORDS_T),
    };
    let word = words[r.usize(0..words.len())];
    match label {
        Label::Off => None,
        Label::Strong => {
            let phrase = phrases[r.usize(0..phrases.len())];
            // A short tail of ordinary text, as titles carry.
            let tail: String = match script {
                Script::Simplified => corpus::title_from_review(corpus::reviews()[r.usize(0..corpus::reviews().len())], &mut r).chars().take(6).collect(),
                Script::Traditional => corpus::poems()[r.usize(0..corpus::poems().len())].title.chars().take(6).collect(),
            };
            Some(match r.u32(0..3) {
                0 => format!("【求助】{phrase}"),
                1 => format!("{phrase}：{tail}"),
                _ => phrase.to_owned(),
            })
        }
        // One topic word at the end of an ordinary title, long or short:
        // the long ones are the borderline cases a threshold misses.
        Label::Weak => {
            let head = if r.bool() { long_title(script, &mut r, title) } else { title.to_owned() };
            Some(format!("{head}，{}{word}", if script == Script::Simplified { "顺便问下" } else { "順便問下" }))
        }
        Label::Passing => Some(format!("{title}（不是{word}）")),
    }
}

/// An ordinary title padded with a second clause of corpus text.
fn long_title(script: Script, r: &mut fastrand::Rng, title: &str) -> String {
    let more: String = match script {
        Script::Simplified => corpus::reviews()[r.usize(0..corpus::reviews().len())].chars().filter(|c| !c.is_whitespace()).take(14).collect(),
        Script::Traditional => corpus::poems()[r.usize(0..corpus::poems().len())].text.chars().take(14).collect(),
    };
    format!("{title}，{more}")
}

/// What thread `tid` on board `board`, titled `title`, becomes: its new
/// title (`None`: unchanged) and whether it is on the topic. Decided from
/// the seed alone, so the model can label threads as it builds or grows
/// them without this module knowing the model.
pub(crate) fn label_thread(topics: &Topics, seed: u64, kind: ForumKind, tid: u64, board: usize, title: &str) -> (Option<String>, bool) {
    let l = label(topics, seed, kind, tid, board);
    (retitle(l, kind.script(), seed, kind, tid, title), matches!(l, Label::Strong | Label::Weak))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_phrases_fit_their_forums_encodings() {
        // Big5 can carry every traditional phrase.
        for p in PHRASES_T.iter().chain(WORDS_T) {
            assert!(!encoding_rs::BIG5.encode(p).2, "{p}");
        }
        for p in PHRASES_S.iter().chain(TOPIC_WORDS) {
            assert!(!encoding_rs::GBK.encode(p).2, "{p}");
        }
    }
}
