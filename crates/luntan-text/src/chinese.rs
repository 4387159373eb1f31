//! Chinese text as every stage compares it: traditional folded to
//! simplified, segmented by one jieba per process.

use std::sync::OnceLock;

use jieba_rs::Jieba;

/// `text` with traditional Chinese folded to simplified (fast2s's table), so
/// that a Big5 forum's `學習` meets a simplified `学习`. Everything else,
/// case included, is left as it is: crawl's focus lowercases the whole text
/// before segmenting, search lowercases each word after, and each keeps its
/// own way.
///
/// fast2s maps each char to one char of the same UTF-8 length today, but
/// nothing in its contract says so; a caller that needs offsets into the
/// original maps them (`luntan_search::analysis::fold`).
pub fn fold(text: &str) -> String {
    fast2s::convert(text)
}

/// jieba's default dictionary, shared by every caller in the process.
/// Building it costs about 0.1 s and 45 MB, so it is built once, on first
/// use: a crawl whose sites ask for no focus never builds it.
pub fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_folds_traditional_and_nothing_else() {
        assert_eq!(fold("電腦軟體很貴，學習資料"), "电脑软体很贵，学习资料");
        let other = "学习 iPhone15 ΣΟΦΙΑ 😀 カタカナ ";
        assert_eq!(fold(other), other);
    }

    #[test]
    fn jieba_is_built_once() {
        assert!(std::ptr::eq(jieba(), jieba()));
        let words: Vec<&str> = jieba().cut("考研复试经验", true).iter().map(|t| t.word).collect();
        assert!(words.contains(&"考研"), "{words:?}");
    }
}
