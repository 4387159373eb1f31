//! Snippets: the passage of a thread's best-matching post, cut on
//! character boundaries, in the original (possibly traditional) characters,
//! with every occurrence of every query word marked.
//!
//! Matching is done on a folded, lowercased copy that has one char per
//! original char, so a simplified query word marks traditional text. Every
//! hit's whole body is folded, so the fold is by table
//! ([`normalize_chars_by_table`], the same chars as [`normalize_chars`]).
//! tantivy's `SnippetGenerator` is not used: it counts its size limit in
//! bytes and highlights only whole jieba tokens, not the substrings the gram
//! fields matched.

use luntan_core::escape::{escape_into, Escape};
use serde::Serialize;

#[cfg(test)]
use crate::analysis::normalize_chars;
use crate::analysis::{is_cjk, normalize_chars_by_table};

/// A piece of text with highlighted byte ranges (`start..end` into `text`,
/// sorted, not overlapping).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Snippet {
    pub text: String,
    pub highlights: Vec<(usize, usize)>,
}

impl Snippet {
    /// The text with each highlight wrapped in `open`…`close`.
    pub fn marked(&self, open: &str, close: &str) -> String {
        self.render(open, close, |s, out| out.push_str(s))
    }

    /// HTML: text escaped, highlights in `<b>`…`</b>`.
    pub fn html(&self) -> String {
        self.render("<b>", "</b>", |s, out| escape_into(out, s, Escape::HtmlDoubleQuoted))
    }

    fn render(&self, open: &str, close: &str, mut emit: impl FnMut(&str, &mut String)) -> String {
        let mut out = String::with_capacity(self.text.len() + self.highlights.len() * (open.len() + close.len()));
        let mut at = 0;
        for &(s, e) in &self.highlights {
            emit(&self.text[at..s], &mut out);
            out.push_str(open);
            emit(&self.text[s..e], &mut out);
            out.push_str(close);
            at = e;
        }
        emit(&self.text[at..], &mut out);
        out
    }
}

/// 1 for letters, 2 for digits (outside CJK), 0 for everything else.
fn word_class(c: char) -> u8 {
    if is_cjk(c) || !c.is_alphanumeric() {
        0
    } else if c.is_alphabetic() {
        1
    } else {
        2
    }
}

/// What may sit just outside a match of a needle beginning (or ending)
/// with the word `edge`: the index holds Latin and digits as whole words
/// plus, for a word mixing both, its letter and digit runs. So `15` matches
/// in `iphone15` but not in `2015`, and `iphone15` not in `iphone15x`.
fn edge_ok(edge: &[char], outside: Option<char>) -> bool {
    let Some(first) = edge.first() else { return true };
    let class = word_class(*first);
    if class == 0 {
        return true;
    }
    let mixed = edge.iter().any(|&c| word_class(c) != class);
    match outside.map(word_class) {
        None | Some(0) => true,
        Some(o) => !mixed && o != class,
    }
}

/// Char-indexed matches of `needles` in `norm`: `(start, end, needle)`.
fn find_matches(norm: &[char], needles: &[Vec<char>]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    for (k, nd) in needles.iter().enumerate() {
        if nd.is_empty() || nd.len() > norm.len() {
            continue;
        }
        let lead = nd.iter().take_while(|&&c| word_class(c) != 0).count();
        let trail = nd.iter().rev().take_while(|&&c| word_class(c) != 0).count();
        let (lead, trail) = (&nd[..lead], &nd[nd.len() - trail..]);
        let trail_rev: Vec<char> = trail.iter().rev().copied().collect();
        for i in 0..=norm.len() - nd.len() {
            let j = i + nd.len();
            if norm[i] == nd[0] && norm[i..j] == nd[..] && edge_ok(lead, i.checked_sub(1).map(|p| norm[p])) && edge_ok(&trail_rev, norm.get(j).copied()) {
                out.push((i, j, k));
            }
        }
    }
    out.sort_unstable();
    out
}

/// How text is folded and lowercased: [`normalize_chars_by_table`], or in
/// tests the reference it must equal.
type Normalize = fn(&str) -> Vec<char>;

fn normalized_needles(needles: &[String], normalize: Normalize) -> Vec<Vec<char>> {
    let mut out: Vec<Vec<char>> = Vec::new();
    for n in needles {
        let n = normalize(n.trim());
        if !n.is_empty() && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Merges char ranges and turns them into byte ranges relative to `base_char`,
/// shifted by `shift` bytes.
fn byte_ranges(mut ranges: Vec<(usize, usize)>, offs: &[usize], base_char: usize, shift: usize) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged.into_iter().map(|(s, e)| (offs[s] - offs[base_char] + shift, offs[e] - offs[base_char] + shift)).collect()
}

/// Highlights every occurrence of `needles` in the whole of `text` (for titles).
pub fn highlight(text: &str, needles: &[String]) -> Snippet {
    highlight_with(text, needles, normalize_chars_by_table)
}

fn highlight_with(text: &str, needles: &[String], normalize: Normalize) -> Snippet {
    let needles = normalized_needles(needles, normalize);
    let norm = normalize(text);
    let offs = char_offsets(text);
    let ranges = find_matches(&norm, &needles).into_iter().map(|(s, e, _)| (s, e)).collect();
    Snippet { text: text.to_string(), highlights: byte_ranges(ranges, &offs, 0, 0) }
}

fn char_offsets(text: &str) -> Vec<usize> {
    text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect()
}

/// (distinct needles, matches) among `matches` (sorted) lying within `from..to`.
fn coverage(matches: &[(usize, usize, usize)], needles: usize, from: usize, to: usize) -> (usize, usize) {
    let first = matches.partition_point(|m| m.0 < from);
    let mut seen = vec![false; needles];
    let mut total = 0;
    for &(_, e, k) in matches[first..].iter().take_while(|m| m.0 < to) {
        if e <= to {
            seen[k] = true;
            total += 1;
        }
    }
    (seen.iter().filter(|&&b| b).count(), total)
}

/// The char ranges of the posts in a body ([`crate::schema::thread_body`]
/// separates them with an empty line).
fn posts(norm: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < norm.len() {
        if norm[i] == '\n' && norm.get(i + 1) == Some(&'\n') {
            out.push((start, i));
            while i < norm.len() && norm[i] == '\n' {
                i += 1;
            }
            start = i;
        } else {
            i += 1;
        }
    }
    out.push((start, norm.len()));
    // A stray newline at either end of a post is nothing to show.
    for (s, e) in &mut out {
        while *s < *e && norm[*s] == '\n' {
            *s += 1;
        }
        while *e > *s && norm[*e - 1] == '\n' {
            *e -= 1;
        }
    }
    out
}

/// At most `max_chars` characters (plus `…` marks) from the post of `text`
/// that holds the most distinct needles (then the most matches), around its
/// densest stretch, with every match in it marked. Without any match, the
/// start of the first post.
pub fn make_snippet(text: &str, needles: &[String], max_chars: usize) -> Snippet {
    make_snippet_with(text, needles, max_chars, normalize_chars_by_table)
}

fn make_snippet_with(text: &str, needles: &[String], max_chars: usize, normalize: Normalize) -> Snippet {
    let max_chars = max_chars.max(1);
    let needles = normalized_needles(needles, normalize);
    let norm = normalize(text);
    let offs = char_offsets(text);
    let matches = find_matches(&norm, &needles);
    let blocks = posts(&norm);

    let mut best_block = None;
    let mut best_score = (0, 0);
    for &(ps, pe) in &blocks {
        let sc = coverage(&matches, needles.len(), ps, pe);
        if sc > best_score {
            best_score = sc;
            best_block = Some((ps, pe));
        }
    }
    // No match in the body (a title or filter match): the opening words.
    let (ps, pe) = best_block.unwrap_or_else(|| blocks.iter().copied().find(|&(s, e)| e > s).unwrap_or((0, norm.len())));
    let (ws, we) = if pe - ps <= max_chars {
        (ps, pe)
    } else {
        // Some context before the first match, the rest after.
        let context = max_chars / 4;
        let mut best = (ps, (0, 0));
        for &(s, _, _) in matches.iter().filter(|m| m.0 >= ps && m.1 <= pe) {
            let from = s.saturating_sub(context).max(ps).min(pe - max_chars);
            let sc = coverage(&matches, needles.len(), from, from + max_chars);
            if sc > best.1 {
                best = (from, sc);
            }
        }
        let (mut ws, mut we) = (best.0, best.0 + max_chars);
        // Never cut a match in two: widen to take it whole.
        for m in &matches {
            if m.0 < ws && m.1 > ws {
                ws = m.0;
            }
            if m.0 < we && m.1 > we {
                we = m.1.min(pe);
            }
        }
        (ws, we)
    };

    let mut out = String::new();
    if ws > ps {
        out.push('…');
    }
    let shift = out.len();
    out.push_str(&text[offs[ws]..offs[we]]);
    if we < pe {
        out.push('…');
    }
    let ranges = matches.iter().filter(|m| m.0 < we && m.1 > ws).map(|m| (m.0.max(ws), m.1.min(we))).collect();
    Snippet { text: out, highlights: byte_ranges(ranges, &offs, ws, shift) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn best_post_and_original_characters_are_kept() {
        let text = "第一帖没有\n\n這是學習資料，學習很重要\n第二段\n\n学习一次";
        let s = make_snippet(text, &words(&["学习", "重要"]), 100);
        assert_eq!(s.text, "這是學習資料，學習很重要\n第二段");
        assert_eq!(s.marked("[", "]"), "這是[學習]資料，[學習]很[重要]\n第二段");
        assert_eq!(s.html(), "這是<b>學習</b>資料，<b>學習</b>很<b>重要</b>\n第二段");
        for &(a, b) in &s.highlights {
            assert!(s.text.is_char_boundary(a) && s.text.is_char_boundary(b));
        }
    }

    #[test]
    fn latin_needles_match_the_words_the_index_matches() {
        let marked = |text: &str, n: &[&str]| make_snippet(text, &words(n), 100).marked("[", "]");
        assert_eq!(marked("买了iPhone15，2015年", &["15"]), "买了iPhone[15]，2015年");
        assert_eq!(marked("买了iPhone15，iPhone15x", &["iphone15"]), "买了[iPhone15]，iPhone15x");
        assert_eq!(marked("iPhone15 smartphone", &["iphone", "phone"]), "[iPhone]15 smartphone");
        assert_eq!(marked("用iPhone15拍照", &["iphone15拍"]), "用[iPhone15拍]照");
    }

    #[test]
    fn long_lines_are_cut_on_char_boundaries_around_matches() {
        let text = format!("{}考研经验{}", "甲".repeat(300), "乙".repeat(300));
        let s = make_snippet(&text, &words(&["考研"]), 40);
        assert!(s.text.starts_with('…') && s.text.ends_with('…'), "{}", s.text);
        assert_eq!(s.text.chars().count(), 42);
        assert_eq!(s.highlights.len(), 1);
        let (a, b) = s.highlights[0];
        assert_eq!(&s.text[a..b], "考研");
    }

    #[test]
    fn a_match_at_the_edge_of_the_window_is_kept_whole() {
        // The second 万里 would straddle the 40th character.
        let text = format!("万里{}万里{}", "甲".repeat(37), "乙".repeat(100));
        let s = make_snippet(&text, &words(&["万里"]), 40);
        assert_eq!(s.highlights.len(), 2, "{}", s.marked("[", "]"));
        for &(a, b) in &s.highlights {
            assert_eq!(&s.text[a..b], "万里");
        }
    }

    #[test]
    fn overlapping_needles_merge_and_latin_is_case_insensitive() {
        let s = make_snippet("买了IPHONE手机", &words(&["iphone", "手机", "iphone手机"]), 50);
        assert_eq!(s.marked("[", "]"), "买了[IPHONE手机]");
        let t = highlight("考研 经验", &words(&["经验"]));
        assert_eq!(t.marked("<", ">"), "考研 <经验>");
    }

    #[test]
    fn no_match_gives_the_opening_words() {
        let s = make_snippet("\n你好世界，今天天气很好", &words(&["不存在"]), 4);
        assert_eq!(s.text, "你好世界…");
        assert!(s.highlights.is_empty());
        assert_eq!(make_snippet("", &words(&["x"]), 10).text, "");
    }

    #[test]
    fn snippets_by_table_are_the_snippets_of_the_full_fold() {
        let filler = "天气一般，".repeat(30);
        let texts = [
            "乾隆的乾兒子一邊乾淨利落地擲出了一個乾卦，一邊嘴裡嚼着芒果乾。".to_string(),
            "企畫 計畫 企劃 計劃 畫圖 畫畫\n\n看著他，藉口太多，慰藉也無用".to_string(),
            // Matches at the very start and end, contextual chars at both ends.
            "乾坤大挪移，學習學習再學習乾".to_string(),
            format!("畫{filler}學習ＡＢＣ１２３😀学习{filler}看著"),
            format!("{filler}\n\n答覆：學習資料😀emoji全角ｉＰｈｏｎｅ１５，半角iPhone15\n\n{filler}学习"),
            "鍾書讀書，闔家歡樂；校讎仇讎，苧麻瞭望，幺麽甚夥，兒寬樊於期".to_string(),
            crate::testutil::POEMS.to_string(),
        ];
        let needles = [
            vec!["学习"],
            vec!["乾", "干"],
            vec!["画", "划"],
            vec!["着", "借", "藉"],
            vec!["iphone15", "ｉｐｈｏｎｅ", "15"],
            vec!["锺书", "合家", "雠", "苎麻", "瞭望", "甚夥", "儿宽", "樊於"],
            vec!["万里", "明月", "故乡"],
            vec!["😀"],
        ];
        let mut marked = 0;
        for text in &texts {
            assert_eq!(normalize_chars_by_table(text), normalize_chars(text), "{text}");
            for n in &needles {
                let n = words(n);
                for max in [1, 8, 40, 100, 10_000] {
                    let (fast, full) = (make_snippet(text, &n, max), make_snippet_with(text, &n, max, normalize_chars));
                    assert_eq!(fast, full, "{n:?} {max} in {text}");
                    marked += fast.highlights.len();
                }
                assert_eq!(highlight(text, &n), highlight_with(text, &n, normalize_chars), "{n:?} in {text}");
            }
        }
        assert!(marked > 100, "only {marked} highlights: the texts do not exercise the needles");
    }
}
