//! Text analysis shared by indexing and querying.
//!
//! Two analyzers read the same text:
//!
//! - [`ZH_TOKENIZER`] (`title`, `body`): jieba words. Search mode at index
//!   time (so `北京大学` also yields `北京`, `大学`), default mode for queries
//!   (so a query word stays whole and AND-ing its parts stays strict).
//! - [`GRAM_TOKENIZER`] (`title_gram`, `body_gram`, `authors`): every CJK
//!   character and every pair of adjacent CJK characters, plus whole
//!   non-CJK words. A phrase over a string's bigrams finds every place the
//!   string occurs, which jieba cannot promise (it segments `留言` and `留学`
//!   differently, so `留` alone is often not a token).
//!
//! Both fold traditional to simplified (fast2s) on a copy of the text before
//! segmenting and lowercase, so stored text stays as written while `學習`
//! and `学习`, `iPhone` and `iphone` meet in the index. The jieba analyzer
//! drops whitespace/punctuation tokens; the gram analyzer indexes a run of
//! them as one [`SEPARATOR`] token, which keeps phrases honest. Token
//! offsets always point into the original text.
//!
//! Latin and digits are whole words in the gram field (`iphone15`), and a
//! word mixing letters and digits also yields its letter and digit runs at
//! the same position (`iphone`, `15`), so `15` and `iPhone` find
//! `iPhone15` while `phone` does not (words are not substrings).

use tantivy::tokenizer::{TextAnalyzer, Token, TokenStream, Tokenizer};
use tantivy_jieba::JiebaTokenizer;

/// Name under which the jieba analyzer is registered on every index.
pub const ZH_TOKENIZER: &str = "luntan_zh";
/// Name under which the CJK uni/bigram analyzer is registered on every index.
pub const GRAM_TOKENIZER: &str = "luntan_gram";

/// The gram token standing for a run of spaces and punctuation. No word is
/// a lone space, so it cannot collide with text.
pub const SEPARATOR: &str = " ";

/// Tokens longer than this are noise (URLs, base64) and tantivy would choke on huge ones.
const MAX_TOKEN_BYTES: usize = 80;

/// Text folded to simplified Chinese, with a way back to the original's byte offsets.
#[derive(Debug, Clone)]
pub struct Folded {
    pub text: String,
    /// `orig[b]` is the original byte offset of the folded char starting at
    /// byte `b` (and of the end at `text.len()`); `None` when every char kept
    /// its UTF-8 length, so offsets are the same in both texts.
    orig: Option<Vec<usize>>,
}

impl Folded {
    /// The original byte offset of folded byte offset `b` (a char boundary).
    pub fn orig_offset(&self, b: usize) -> usize {
        match &self.orig {
            None => b,
            Some(map) => map[b],
        }
    }
}

/// Traditional → simplified, one char for one char. fast2s maps 3-byte
/// chars to 3-byte chars today, but nothing in its contract says so, so a
/// length change is detected and mapped rather than assumed away.
pub fn fold(text: &str) -> Folded {
    folded_from(text, fast2s::convert(text))
}

/// `folded` must hold exactly one char per char of `text`.
fn folded_from(text: &str, folded: String) -> Folded {
    if folded.len() == text.len() && folded.chars().zip(text.chars()).all(|(a, b)| a.len_utf8() == b.len_utf8()) {
        return Folded { text: folded, orig: None };
    }
    let mut map = vec![0usize; folded.len() + 1];
    let mut oi = text.char_indices().map(|(i, _)| i);
    for (fb, _) in folded.char_indices() {
        map[fb] = oi.next().unwrap_or(text.len());
    }
    map[folded.len()] = text.len();
    Folded { text: folded, orig: Some(map) }
}

/// `text` the way the index compares it: folded to simplified and
/// lowercased, one char per original char. A substring of this is what a
/// plain CJK query term matches.
pub fn normalize(text: &str) -> String {
    normalize_chars(text).into_iter().collect()
}

/// Folds `text` and lowercases it char by char, keeping one char per
/// original char (a lowercase that expands to several chars is skipped) so
/// that char indices line up with the original.
pub fn normalize_chars(text: &str) -> Vec<char> {
    let folded: Vec<char> = fold(text).text.chars().map(lower_char).collect();
    if folded.len() == text.chars().count() {
        folded
    } else {
        // Callers index original offsets by char position; never let a
        // converter that changed the char count break that.
        text.chars().map(lower_char).collect()
    }
}

fn lower_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

/// Han ideographs, kana, hangul and bopomofo: scripts written without spaces,
/// where the gram field indexes single characters and pairs.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3007 | 0x3040..=0x30FF | 0x3100..=0x312F | 0x31A0..=0x31BF | 0x31F0..=0x31FF
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF
        | 0x20000..=0x3134F)
}

/// A char of a non-CJK word (Latin, digits, Cyrillic…).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

fn keep_token(text: &str) -> bool {
    text.len() <= MAX_TOKEN_BYTES && text.chars().any(char::is_alphanumeric)
}

/// A token stream over tokens computed up front: both tokenizers work on a
/// folded copy they own, which a borrowing stream could not hold.
pub struct VecTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

/// tantivy-jieba on folded text, with punctuation/whitespace tokens dropped
/// and words lowercased. tantivy-jieba's global `Jieba` (built once per
/// process, ~115 ms) is shared by every clone of this tokenizer.
#[derive(Clone)]
pub struct ChineseTokenizer {
    inner: JiebaTokenizer,
}

impl ChineseTokenizer {
    /// For indexing: jieba's search mode also emits the shorter words inside long ones.
    pub fn for_index() -> ChineseTokenizer {
        ChineseTokenizer { inner: JiebaTokenizer::with_search_mode(true) }
    }

    /// For queries: whole words, so a query word is not loosened into its parts.
    pub fn for_query() -> ChineseTokenizer {
        ChineseTokenizer { inner: JiebaTokenizer::with_search_mode(false) }
    }

    pub fn tokens(&mut self, text: &str) -> Vec<Token> {
        let folded = fold(text);
        let mut out = Vec::new();
        let mut stream = self.inner.token_stream(&folded.text);
        while let Some(t) = stream.next() {
            if !keep_token(&t.text) {
                continue;
            }
            let mut t = t.clone();
            t.offset_from = folded.orig_offset(t.offset_from);
            t.offset_to = folded.orig_offset(t.offset_to);
            t.text = t.text.to_lowercase();
            out.push(t);
        }
        out
    }
}

impl Tokenizer for ChineseTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        VecTokenStream { tokens: self.tokens(text), next: 0 }
    }
}

/// CJK unigrams and bigrams, whole lowercase non-CJK words.
///
/// Positions count CJK characters, non-CJK words and separator runs one
/// each, so consecutive bigrams sit at consecutive positions (a phrase over
/// them is a substring match) and `iPhone 15` / `iPhone-15` line up alike.
/// A separator run is itself indexed as [`SEPARATOR`], so a phrase with a
/// space in it requires a separator there rather than any character.
#[derive(Clone, Default)]
pub struct GramTokenizer;

impl GramTokenizer {
    pub fn tokens(&self, text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        for_each_gram_unit(text, |unit| match unit {
            Unit::Cjk { pos, from, to, c, next } => {
                out.push(Token { offset_from: from, offset_to: to, position: pos, text: c.to_string(), position_length: 1 });
                if let Some((n, n_to)) = next {
                    let mut s = String::with_capacity(8);
                    s.push(c);
                    s.push(n);
                    out.push(Token { offset_from: from, offset_to: n_to, position: pos, text: s, position_length: 1 });
                }
            }
            Unit::Word { pos, from, to, word, parts } => {
                if word.len() <= MAX_TOKEN_BYTES {
                    out.push(Token { offset_from: from, offset_to: to, position: pos, text: word, position_length: 1 });
                    for (from, to, text) in parts {
                        out.push(Token { offset_from: from, offset_to: to, position: pos, text, position_length: 1 });
                    }
                }
            }
            Unit::Separator { pos, from, to } => {
                out.push(Token { offset_from: from, offset_to: to, position: pos, text: SEPARATOR.to_string(), position_length: 1 });
            }
        });
        out
    }
}

impl Tokenizer for GramTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        VecTokenStream { tokens: self.tokens(text), next: 0 }
    }
}

enum Unit {
    /// A CJK char at `pos`, with the following char when it is CJK too.
    Cjk { pos: usize, from: usize, to: usize, c: char, next: Option<(char, usize)> },
    /// A non-CJK word; `parts` are its letter and digit runs (with original
    /// offsets) when it mixes both, else empty.
    Word { pos: usize, from: usize, to: usize, word: String, parts: Vec<(usize, usize, String)> },
    Separator { pos: usize, from: usize, to: usize },
}

/// Walks `text` (folded, lowercased) in gram units; offsets are the original's.
fn for_each_gram_unit(text: &str, mut f: impl FnMut(Unit)) {
    let norm = normalize_chars(text);
    let offs: Vec<usize> = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect();
    let n = norm.len();
    let mut pos = 0;
    let mut i = 0;
    while i < n {
        let c = norm[i];
        if is_cjk(c) {
            let next = (i + 1 < n && is_cjk(norm[i + 1])).then(|| (norm[i + 1], offs[i + 2]));
            f(Unit::Cjk { pos, from: offs[i], to: offs[i + 1], c, next });
            pos += 1;
            i += 1;
        } else if is_word_char(c) {
            let start = i;
            while i < n && is_word_char(norm[i]) {
                i += 1;
            }
            let mut parts = Vec::new();
            let mut p = start;
            while p < i {
                let class = norm[p].is_alphabetic();
                let q = (p..i).find(|&j| norm[j].is_alphabetic() != class).unwrap_or(i);
                parts.push((offs[p], offs[q], norm[p..q].iter().collect::<String>()));
                p = q;
            }
            if parts.len() == 1 {
                parts.clear();
            }
            f(Unit::Word { pos, from: offs[start], to: offs[i], word: norm[start..i].iter().collect(), parts });
            pos += 1;
        } else {
            let start = i;
            while i < n && !is_cjk(norm[i]) && !is_word_char(norm[i]) {
                i += 1;
            }
            f(Unit::Separator { pos, from: offs[start], to: offs[i] });
            pos += 1;
        }
    }
}

/// The gram-field terms that find `text` as a substring, with their
/// position offsets: bigrams for a CJK run of two or more chars, the char
/// itself for a one-char run, whole words otherwise. Empty when `text` has
/// nothing searchable. One term means a term query, several a phrase.
pub fn gram_query_terms(text: &str) -> Vec<(usize, String)> {
    let mut units: Vec<(usize, String, bool)> = Vec::new();
    for_each_gram_unit(text, |u| match u {
        Unit::Cjk { pos, c, next, .. } => {
            let prev_is_cjk_neighbour = units.last().is_some_and(|(p, _, cjk_pair)| *cjk_pair && *p + 1 == pos);
            match next {
                Some((n, _)) => units.push((pos, format!("{c}{n}"), true)),
                // The last char of a run is covered by the bigram before it.
                None if prev_is_cjk_neighbour => {}
                None => units.push((pos, c.to_string(), false)),
            }
        }
        Unit::Word { pos, word, .. } => units.push((pos, word, false)),
        Unit::Separator { pos, .. } => units.push((pos, SEPARATOR.to_string(), false)),
    });
    // Separators at either end constrain nothing the user meant.
    while units.last().is_some_and(|u| u.1 == SEPARATOR) {
        units.pop();
    }
    let lead = units.iter().take_while(|u| u.1 == SEPARATOR).count();
    units.drain(..lead);
    let base = units.first().map_or(0, |u| u.0);
    units.into_iter().map(|(p, s, _)| (p - base, s)).collect()
}

/// How many positions the gram terms of one string span, so that the next
/// string of a proximity phrase can be placed after it.
pub fn gram_width(terms: &[(usize, String)]) -> usize {
    match terms.last() {
        None => 0,
        Some((p, t)) => {
            let mut cs = t.chars();
            let cjk_pair = matches!((cs.next(), cs.next(), cs.next()), (Some(a), Some(b), None) if is_cjk(a) && is_cjk(b));
            p + if cjk_pair { 2 } else { 1 }
        }
    }
}

/// The analyzer every index registers as [`ZH_TOKENIZER`].
pub fn zh_analyzer() -> TextAnalyzer {
    TextAnalyzer::from(ChineseTokenizer::for_index())
}

/// The analyzer every index registers as [`GRAM_TOKENIZER`].
pub fn gram_analyzer() -> TextAnalyzer {
    TextAnalyzer::from(GramTokenizer)
}

/// Registers luntan's analyzers on an index; needed on every open, since
/// tantivy stores only their names.
pub fn register_tokenizers(index: &tantivy::Index) {
    index.tokenizers().register(ZH_TOKENIZER, zh_analyzer());
    index.tokenizers().register(GRAM_TOKENIZER, gram_analyzer());
}

/// The jieba words of a query term (folded, lowercased, deduplicated, in order).
pub fn query_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in ChineseTokenizer::for_query().tokens(text) {
        if !out.contains(&t.text) {
            out.push(t.text);
        }
    }
    out
}

/// Builds jieba's dictionary now rather than inside the first search or document.
pub fn warm_up() {
    let _ = ChineseTokenizer::for_query().tokens("预热");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zh(text: &str) -> Vec<String> {
        ChineseTokenizer::for_index().tokens(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn punctuation_and_spaces_are_dropped_and_latin_is_lowercased() {
        let toks = zh("我买了 iPhone15，真的 很好！！ Hello World。");
        assert!(toks.contains(&"iphone15".to_string()), "{toks:?}");
        assert!(toks.contains(&"hello".to_string()), "{toks:?}");
        assert!(toks.contains(&"world".to_string()), "{toks:?}");
        for t in &toks {
            assert!(t.chars().any(char::is_alphanumeric), "punctuation token {t:?} in {toks:?}");
            assert_eq!(t, &t.to_lowercase());
        }
    }

    #[test]
    fn traditional_is_folded_but_offsets_point_into_the_original() {
        let text = "電腦軟體很貴，學習資料";
        let toks = ChineseTokenizer::for_index().tokens(text);
        let words: Vec<&str> = toks.iter().map(|t| t.text.as_str()).collect();
        assert!(words.contains(&"电脑"), "{words:?}");
        assert!(words.contains(&"学习"), "{words:?}");
        for t in &toks {
            let orig = &text[t.offset_from..t.offset_to];
            assert_eq!(fold(orig).text, t.text, "offsets of {t:?}");
        }
        assert_eq!(query_words("學習"), query_words("学习"));
    }

    #[test]
    fn fold_maps_offsets_even_when_lengths_differ() {
        let f = fold("abc電腦");
        assert_eq!(f.text, "abc电脑");
        assert_eq!(f.orig_offset(3), 3);
        // fast2s never changes a char's length today; a future table that does
        // must still give offsets into the original.
        let f = folded_from("a電b腦", "aXbY".to_string());
        assert_eq!((f.orig_offset(1), f.orig_offset(2), f.orig_offset(3), f.orig_offset(4)), (1, 4, 5, 8));
    }

    #[test]
    fn grams_are_unigrams_bigrams_and_whole_words() {
        let toks = GramTokenizer.tokens("留言板 iPhone-15，好");
        let got: Vec<(usize, &str)> = toks.iter().map(|t| (t.position, t.text.as_str())).collect();
        assert_eq!(
            got,
            vec![(0, "留"), (0, "留言"), (1, "言"), (1, "言板"), (2, "板"), (3, " "), (4, "iphone"), (5, " "), (6, "15"), (7, " "), (8, "好")]
        );
        let text = "留言板 iPhone-15，好";
        for t in toks.iter().filter(|t| t.text != SEPARATOR) {
            assert_eq!(normalize_chars(&text[t.offset_from..t.offset_to]).into_iter().collect::<String>(), t.text);
        }
    }

    #[test]
    fn mixed_letter_digit_words_also_index_their_runs() {
        let got: Vec<(usize, String)> = GramTokenizer.tokens("买iPhone15了").into_iter().map(|t| (t.position, t.text)).collect();
        let want = [(0, "买"), (1, "iphone15"), (1, "iphone"), (1, "15"), (2, "了")];
        assert_eq!(got, want.map(|(p, t)| (p, t.to_string())));
        let text = "買iPhone15了";
        for t in GramTokenizer.tokens(text) {
            assert_eq!(normalize(&text[t.offset_from..t.offset_to]), fold(&t.text).text);
        }
        assert_eq!(gram_width(&gram_query_terms("留言板")), 3);
        assert_eq!(gram_width(&gram_query_terms("留")), 1);
        assert_eq!(gram_width(&gram_query_terms("ab 留言")), 4);
    }

    #[test]
    fn gram_query_terms_cover_a_string_with_bigrams() {
        assert_eq!(gram_query_terms("留"), vec![(0, "留".to_string())]);
        assert_eq!(gram_query_terms("留言"), vec![(0, "留言".to_string())]);
        assert_eq!(gram_query_terms("留言板"), vec![(0, "留言".to_string()), (1, "言板".to_string())]);
        assert_eq!(gram_query_terms("，iPhone 手！"), vec![(0, "iphone".to_string()), (1, " ".to_string()), (2, "手".to_string())]);
        assert_eq!(gram_query_terms("！？"), vec![]);
        assert_eq!(gram_query_terms("電腦"), gram_query_terms("电脑"));
    }
}
