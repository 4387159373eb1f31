//! Focused crawling (S2): score a thread link by its URL and anchor text
//! against the site's topic words, and queue only links above a threshold.
//!
//! `Q = α·url(i) + (1 − α)·cos(a_i, T)`: `url(i)` is 1 when the URL (decoded)
//! contains a topic or URL word; `cos` is the cosine of the anchor's term
//! vector and the topic's, both segmented with jieba after folding
//! traditional to simplified, so a Big5 forum's titles match simplified topics.

use std::collections::HashMap;

use luntan_core::site::Focus;
use luntan_text::{fold, jieba};
use url::Url;

/// Words of `text` as a term-frequency vector: folded to simplified,
/// lowercased, punctuation and whitespace dropped.
fn terms(text: &str) -> HashMap<String, f64> {
    let folded = fold(text).to_lowercase();
    let mut tf = HashMap::new();
    for tok in jieba().cut(&folded, true) {
        let w = tok.word.trim();
        if w.chars().any(char::is_alphanumeric) {
            *tf.entry(w.to_owned()).or_insert(0.0) += 1.0;
        }
    }
    tf
}

fn cosine(a: &HashMap<String, f64>, b: &HashMap<String, f64>) -> f64 {
    let dot: f64 = a.iter().filter_map(|(w, x)| b.get(w).map(|y| x * y)).sum();
    let norm = |v: &HashMap<String, f64>| v.values().map(|x| x * x).sum::<f64>().sqrt();
    let d = norm(a) * norm(b);
    if d == 0.0 {
        0.0
    } else {
        dot / d
    }
}

/// A site's topic, ready to score links.
#[derive(Debug, Clone)]
pub struct Scorer {
    alpha: f64,
    pub threshold: f64,
    topic: HashMap<String, f64>,
    /// Lowercased topic and URL words looked for in URLs.
    url_words: Vec<String>,
}

impl Scorer {
    pub fn new(focus: &Focus) -> Scorer {
        let topic = terms(&focus.topics.join(" "));
        let mut url_words: Vec<String> = focus.topics.iter().chain(&focus.url_words).map(|w| fold(w).to_lowercase()).collect();
        url_words.sort();
        url_words.dedup();
        Scorer { alpha: focus.alpha, threshold: focus.threshold, topic, url_words }
    }

    /// `Q` for a link.
    pub fn score(&self, url: &Url, anchor: &str) -> f64 {
        let decoded = percent_decode(url.as_str());
        let in_url = f64::from(u8::from(self.url_words.iter().any(|w| decoded.contains(w.as_str()))));
        self.alpha * in_url + (1.0 - self.alpha) * cosine(&terms(anchor), &self.topic)
    }

    pub fn keeps(&self, score: f64) -> bool {
        score >= self.threshold
    }
}

/// The URL as a reader sees it, so Chinese topic words match slugs.
fn percent_decode(s: &str) -> String {
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(s).collect();
    fold(&String::from_utf8_lossy(&bytes)).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn focus(alpha: f64) -> Focus {
        Focus { alpha, threshold: 0.2, topics: vec!["考研".into(), "复试".into(), "导师".into()], url_words: vec!["kaoyan".into()] }
    }

    #[test]
    fn on_topic_anchors_score_above_off_topic_ones() {
        let s = Scorer::new(&focus(0.3));
        let u = Url::parse("http://bbs.test/thread/1").unwrap();
        let on = s.score(&u, "考研复试经验：如何联系导师");
        let off = s.score(&u, "这家酒店的早餐很不错");
        assert!(on > 0.2 && s.keeps(on), "{on}");
        assert_eq!(off, 0.0);
        assert!(!s.keeps(off));
    }

    #[test]
    fn url_words_count_alpha_and_traditional_titles_fold() {
        let s = Scorer::new(&focus(0.3));
        let plain = Url::parse("http://bbs.test/thread/1").unwrap();
        let topical = Url::parse("http://kaoyan.bbs.test/thread/1").unwrap();
        let slug = Url::parse("http://bbs.test/topic/7/%E8%80%83%E7%A0%94/").unwrap();
        assert!((s.score(&topical, "无关") - 0.3).abs() < 1e-9);
        assert!((s.score(&slug, "无关") - 0.3).abs() < 1e-9, "a percent-encoded Chinese slug holds 考研");
        assert!(s.score(&plain, "考研複試") > 0.0, "traditional 複試 folds to 复试");
        assert_eq!(Scorer::new(&focus(1.0)).score(&plain, "考研"), 0.0, "alpha 1 looks at the URL only");
    }
}
