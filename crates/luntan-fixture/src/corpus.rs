//! The text the fake forums are made of: a compiled-in sample of real reviews
//! (Simplified) and Tang poems (Traditional), plus pools of nicknames, board
//! names and deliberately awkward snippets.

use std::sync::OnceLock;

static REVIEWS_TXT: &str = include_str!("../corpus/reviews.txt");
static POEMS_TSV: &str = include_str!("../corpus/poems.tsv");

/// One Tang poem.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Poem {
    pub title: &'static str,
    pub text: &'static str,
}

/// Reviews, one per line; Simplified Chinese that GBK encodes without loss.
pub(crate) fn reviews() -> &'static [&'static str] {
    static LINES: OnceLock<Vec<&'static str>> = OnceLock::new();
    LINES.get_or_init(|| REVIEWS_TXT.lines().map(str::trim).filter(|l| !l.is_empty()).collect())
}

/// Poems; Traditional Chinese that Big5 encodes without loss.
pub(crate) fn poems() -> &'static [Poem] {
    static POEMS: OnceLock<Vec<Poem>> = OnceLock::new();
    POEMS.get_or_init(|| {
        POEMS_TSV
            .lines()
            .filter_map(|l| {
                let mut cols = l.split('\t');
                let title = cols.next()?.trim();
                let _author = cols.next()?;
                let text = cols.next()?.trim();
                (!title.is_empty() && !text.is_empty()).then_some(Poem { title, text })
            })
            .collect()
    })
}

/// Which script a forum writes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Script {
    Simplified,
    Traditional,
}

/// Fixed nicknames. A few hold 喆 or 镕, which GBK has and GB2312 lacks, so a
/// reader that trusts the Discuz! forum's `charset=gb2312` label mangles them.
/// The Traditional pool keeps to plain Big5 (no HKSCS, where 喆 lives), so
/// non-WHATWG tools such as iconv read the Big5 forum too.
const SIMPLIFIED_NAMES: &[&str] = &[
    "小明",
    "老王",
    "考研狗",
    "一只咸鱼",
    "路人甲",
    "吃瓜群众",
    "南方姑娘",
    "北京的雪",
    "程序猿",
    "深夜食堂",
    "喆喆",
    "镕铸人生",
    "陶喆的歌迷",
    "阿喆",
    "风中的蒲公英",
    "楼主好人",
    "隔壁老李",
    "打酱油的",
    "潜水员",
    "版主大人",
];
const TRADITIONAL_NAMES: &[&str] = &[
    "詩仙太白",
    "杜工部",
    "長安少年",
    "江南煙雨",
    "月下獨酌",
    "阿哲",
    "阿明",
    "老李",
    "書生",
    "東坡居士",
    "靜夜思",
    "浪跡天涯",
    "無名氏",
    "版主",
    "茶餘飯後",
    "山中隱士",
];
/// ASCII names, including two that need escaping.
const ASCII_NAMES: &[&str] = &["admin", "tom2008", "xiao_ming", "Lucy", "Tom&Jerry", "dragon-99", "ZhangSan", "bbs_user01", "K.K.", "O'Neil"];
const SIMPLIFIED_ADJ: &[&str] = &["快乐的", "孤独的", "安静的", "北方的", "会飞的", "爱吃鱼的", "不睡觉的", "迷路的"];
const SIMPLIFIED_NOUN: &[&str] = &["小猫", "鲸鱼", "书生", "旅人", "土豆", "西瓜", "蜗牛", "狐狸"];
const TRADITIONAL_ADJ: &[&str] = &["快樂的", "孤獨的", "安靜的", "北方的", "會飛的", "迷路的"];
const TRADITIONAL_NOUN: &[&str] = &["小貓", "鯨魚", "書生", "旅人", "狐狸", "蝸牛"];

/// A nickname drawn from the script's pool.
pub(crate) fn nickname(script: Script, rng: &mut fastrand::Rng) -> String {
    let (fixed, adj, noun) = match script {
        Script::Simplified => (SIMPLIFIED_NAMES, SIMPLIFIED_ADJ, SIMPLIFIED_NOUN),
        Script::Traditional => (TRADITIONAL_NAMES, TRADITIONAL_ADJ, TRADITIONAL_NOUN),
    };
    match rng.u32(0..10) {
        0..=3 => fixed[rng.usize(0..fixed.len())].to_owned(),
        4..=5 => ASCII_NAMES[rng.usize(0..ASCII_NAMES.len())].to_owned(),
        _ => {
            let mut name = format!("{}{}", adj[rng.usize(0..adj.len())], noun[rng.usize(0..noun.len())]);
            if rng.u32(0..4) == 0 {
                name.push_str(&rng.u32(1970..2010).to_string());
            }
            name
        }
    }
}

/// Every nickname a script's pool can produce (for encoding tests).
#[cfg(test)]
pub(crate) fn all_nicknames(script: Script) -> Vec<String> {
    let (fixed, adj, noun) = match script {
        Script::Simplified => (SIMPLIFIED_NAMES, SIMPLIFIED_ADJ, SIMPLIFIED_NOUN),
        Script::Traditional => (TRADITIONAL_NAMES, TRADITIONAL_ADJ, TRADITIONAL_NOUN),
    };
    let mut all: Vec<String> = fixed.iter().chain(ASCII_NAMES).map(|s| s.to_string()).collect();
    for a in adj {
        for n in noun {
            all.push(format!("{a}{n}"));
        }
    }
    all
}

pub(crate) const DZ_BOARDS: &[&str] =
    &["灌水专区", "考研交流", "数码产品", "二手市场", "求职招聘", "情感天地", "美食分享", "旅游攻略", "读书沙龙", "体育运动", "影视音乐", "校园生活"];
/// Boards of the Discuz! X community forum (a city's, not a campus's).
pub(crate) const DZX_BOARDS: &[&str] =
    &["江城茶馆", "房产家居", "亲子育儿", "数码硬件", "摄影天地", "汽车之家", "美食天下", "户外运动", "职场人生", "健康养生", "二手交易", "站务公告"];
/// Boards of the PHPWind-style forum.
pub(crate) const NX_BOARDS: &[&str] = &["技术交流", "资源分享", "影视讨论", "音乐欣赏", "原创文学", "新手求助", "闲聊灌水", "建议反馈"];
/// Categories of the NodeBB-style forum (an open-source community's).
pub(crate) const MD_BOARDS: &[&str] = &["公告", "综合讨论", "技术问答", "开源项目", "产品反馈", "新手入门", "经验分享", "灌水闲聊"];
pub(crate) const PHPBB_BOARDS: &[&str] = &["詩詞鑑賞", "唐詩研究", "閒聊區", "站務公告", "書法藝術", "古文今讀", "茶館", "新詩創作"];
/// (URL name, title) of the modern forum's boards.
pub(crate) const BBS_BOARDS: &[(&str, &str)] = &[
    ("life", "生活"),
    ("tech", "科技"),
    ("study", "学习"),
    ("travel", "旅行"),
    ("food", "美食"),
    ("games", "游戏"),
    ("music", "音乐"),
    ("books", "读书"),
    ("jobs", "求职"),
    ("pets", "宠物"),
];

/// Text that trips careless extractors: markup-like characters, quotes, an
/// emoji outside GBK and Big5 (so those pages carry `&#128512;`), space runs,
/// and an already-escaped entity that must not be decoded twice.
pub(crate) fn tricky_snippet(script: Script, rng: &mut fastrand::Rng) -> &'static str {
    const S: &[&str] = &[
        "价格<100元 & 质量>预期",
        "他说\"真的很好用\"，我说'还行吧'",
        "太棒了😀",
        "AT&T  和  R&D  都有",
        "&amp; 不是 &",
        "<br>这不是换行</br>",
        "5 > 3 && 2 < 4",
        "请看 <script>alert('x')</script>",
        // Markup that would break out of an attribute or link somewhere, if
        // a page that shows posts forgot to escape them.
        "\"><img src=x onerror=\"window.__xss=1\">",
        "<a href=\"javascript:window.__xss=2\">点这里</a>",
    ];
    const T: &[&str] =
        &["價格<100元 & 品質>預期", "他說\"真的很好\"，我說'還行'", "太棒了😀", "李白  與  杜甫", "&amp; 不是 &", "<br>這不是換行</br>", "5 > 3 && 2 < 4"];
    let pool = match script {
        Script::Simplified => S,
        Script::Traditional => T,
    };
    pool[rng.usize(0..pool.len())]
}

/// A suffix for the few thread titles that need escaping.
pub(crate) fn tricky_title_suffix(script: Script, rng: &mut fastrand::Rng) -> &'static str {
    const S: &[&str] = &[" & 其他", " <转载>", " \"必看\"", " 😀"];
    const T: &[&str] = &[" & 其他", " <轉載>", " \"必看\"", " 😀"];
    let pool = match script {
        Script::Simplified => S,
        Script::Traditional => T,
    };
    pool[rng.usize(0..pool.len())]
}

/// A thread title cut from a review: its first clause, as people title posts.
pub(crate) fn title_from_review(line: &str, rng: &mut fastrand::Rng) -> String {
    const PREFIXES: &[&str] = &["【求助】", "【分享】", "[讨论]", "【原创】", "求问：", "", "", "", "", "", "", ""];
    let is_break = |c: char| "，。！？；：,.!?;: 、…~".contains(c);
    let clause = line.split(is_break).map(str::trim).find(|s| s.chars().count() >= 4);
    let text: String = match clause {
        Some(c) => c.chars().take(24).collect(),
        None => line.chars().take(12).collect(),
    };
    format!("{}{}", PREFIXES[rng.usize(0..PREFIXES.len())], text.trim())
}

/// A thread title from a poem.
pub(crate) fn title_from_poem(poem: &Poem, rng: &mut fastrand::Rng) -> String {
    match rng.u32(0..6) {
        0 => format!("讀《{}》有感", poem.title),
        1 => format!("請教：{}", poem.title),
        _ => poem.title.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The corpus was filtered so that only deliberate tricky text needs
    /// numeric character references; check nothing slipped through.
    #[test]
    fn corpus_and_pools_encode_cleanly() {
        assert!(reviews().len() >= 2900, "{}", reviews().len());
        assert!(poems().len() >= 1400, "{}", poems().len());
        let clean = |enc: &'static encoding_rs::Encoding, s: &str| !enc.encode(s).2;
        for l in reviews() {
            assert!(clean(encoding_rs::GBK, l), "not GBK: {l}");
        }
        for p in poems() {
            assert!(clean(encoding_rs::BIG5, p.text) && clean(encoding_rs::BIG5, p.title), "not Big5: {p:?}");
        }
        for n in all_nicknames(Script::Simplified)
            .iter()
            .chain(DZ_BOARDS.iter().chain(DZX_BOARDS).chain(NX_BOARDS).map(|s| s.to_string()).collect::<Vec<_>>().iter())
        {
            assert!(clean(encoding_rs::GBK, n), "not GBK: {n}");
        }
        for n in all_nicknames(Script::Traditional).iter().chain(PHPBB_BOARDS.iter().map(|s| s.to_string()).collect::<Vec<_>>().iter()) {
            assert!(clean(encoding_rs::BIG5, n), "not Big5: {n}");
        }
        // The GBK-but-not-GB2312 names really are outside GB2312: their
        // lead bytes fall below GB2312's 0xA1 range.
        for ch in ["喆", "镕"] {
            let (bytes, _, _) = encoding_rs::GBK.encode(ch);
            assert!(bytes[0] < 0xA1 || bytes[1] < 0xA1, "{ch} {bytes:?}");
        }
    }

    #[test]
    fn titles_are_short_clauses() {
        let mut rng = fastrand::Rng::with_seed(3);
        for l in reviews().iter().take(200) {
            let t = title_from_review(l, &mut rng);
            assert!(!t.is_empty() && t.chars().count() <= 30, "{t}");
        }
    }
}
