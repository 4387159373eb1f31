//! Snippets: the passage of a thread that best matches the query, cut on
//! character boundaries, in the original (possibly traditional) characters,
//! with every occurrence of every query word marked.
//!
//! Matching is done on a folded, lowercased copy that has one char per
//! original char, so a simplified query word marks traditional text.
//! tantivy's `SnippetGenerator` is not used: it counts its size limit in
//! bytes and highlights only whole jieba tokens, not the substrings the gram
//! fields matched.

use serde::Serialize;

use crate::analysis::normalize_chars;

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
        self.render("<b>", "</b>", |s, out| {
            for c in s.chars() {
                match c {
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '&' => out.push_str("&amp;"),
                    '"' => out.push_str("&quot;"),
                    _ => out.push(c),
                }
            }
        })
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

/// Char-indexed matches of `needles` in `norm`: `(start, end, needle)`.
fn find_matches(norm: &[char], needles: &[Vec<char>]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    for (k, nd) in needles.iter().enumerate() {
        if nd.is_empty() || nd.len() > norm.len() {
            continue;
        }
        for i in 0..=norm.len() - nd.len() {
            if norm[i] == nd[0] && norm[i..i + nd.len()] == nd[..] {
                out.push((i, i + nd.len(), k));
            }
        }
    }
    out.sort_unstable();
    out
}

fn normalized_needles(needles: &[String]) -> Vec<Vec<char>> {
    let mut out: Vec<Vec<char>> = Vec::new();
    for n in needles {
        let n = normalize_chars(n.trim());
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
    let needles = normalized_needles(needles);
    let norm = normalize_chars(text);
    let offs = char_offsets(text);
    let ranges = find_matches(&norm, &needles).into_iter().map(|(s, e, _)| (s, e)).collect();
    Snippet { text: text.to_string(), highlights: byte_ranges(ranges, &offs, 0, 0) }
}

fn char_offsets(text: &str) -> Vec<usize> {
    text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect()
}

/// At most `max_chars` characters (plus `…` marks) from the line of `text`
/// that holds the most distinct needles (then the most matches), around its
/// densest stretch. Without any match, the start of the text.
pub fn make_snippet(text: &str, needles: &[String], max_chars: usize) -> Snippet {
    let max_chars = max_chars.max(1);
    let needles = normalized_needles(needles);
    let norm = normalize_chars(text);
    let offs = char_offsets(text);
    let n = norm.len();
    let matches = find_matches(&norm, &needles);

    let mut lines = Vec::new();
    let mut start = 0;
    for (i, &c) in norm.iter().enumerate() {
        if c == '\n' {
            lines.push((start, i));
            start = i + 1;
        }
    }
    lines.push((start, n));

    let score = |from: usize, to: usize| {
        let mut seen = vec![false; needles.len()];
        let mut total = 0;
        for &(s, e, k) in &matches {
            if s >= from && e <= to {
                seen[k] = true;
                total += 1;
            }
        }
        (seen.iter().filter(|&&b| b).count(), total)
    };

    let mut best_line = None;
    let mut best_score = (0, 0);
    for &(ls, le) in &lines {
        let sc = score(ls, le);
        if sc > best_score {
            best_score = sc;
            best_line = Some((ls, le));
        }
    }

    let (ls, le) = match best_line {
        Some(l) => l,
        // No match in the body (a title or filter match): the opening words,
        // skipping empty lines.
        None => lines.iter().copied().find(|&(s, e)| e > s).unwrap_or((0, n)),
    };
    let (ws, we) = if le - ls <= max_chars {
        (ls, le)
    } else {
        let context = max_chars / 4;
        let mut best = (ls, (0, 0));
        for &(s, _, _) in matches.iter().filter(|m| m.0 >= ls && m.1 <= le) {
            let from = s.saturating_sub(context).max(ls).min(le - max_chars);
            let sc = score(from, from + max_chars);
            if sc > best.1 {
                best = (from, sc);
            }
        }
        (best.0, best.0 + max_chars)
    };

    let mut out = String::new();
    if ws > ls {
        out.push('…');
    }
    let shift = out.len();
    out.push_str(&text[offs[ws]..offs[we]]);
    if we < le {
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
    fn best_line_and_original_characters_are_kept() {
        let text = "第一行没有\n這是學習資料，學習很重要\n学习一次";
        let s = make_snippet(text, &words(&["学习", "重要"]), 100);
        assert_eq!(s.text, "這是學習資料，學習很重要");
        assert_eq!(s.marked("[", "]"), "這是[學習]資料，[學習]很[重要]");
        assert_eq!(s.html(), "這是<b>學習</b>資料，<b>學習</b>很<b>重要</b>");
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
}
