//! Duplicate Ajax states (S4): a page drawn by JavaScript changes under one
//! URL, so a browser-driven crawl that clicks "more comments" or a tab must
//! tell a new state from one it has seen. S4's test, exactly:
//!
//! 1. Structure: simple tree matching (Yang's STM) between the two DOM trees:
//!    zero when the roots differ, otherwise one for the roots plus the best
//!    in-order matching of their first-level subtrees, each pair scored by
//!    STM recursively (the classic dynamic programme). Similarity is the
//!    matched node count divided by the average node count of the two trees.
//! 2. Only above 90 % structural similarity are the texts compared: nodes
//!    "changed" are those left unmatched plus matched pairs whose own text
//!    differs, counted against the same average node count. Below 15 %
//!    changed, the new state is a duplicate and is dropped.
//!
//! The algorithm is pure (no browser, no I/O); [`DomNode::from_html`] builds
//! its input from a page with scraper, so the later browser mode only has
//! to hand over the DOM it serialised.

use scraper::{ElementRef, Html, Node};

/// S4's structural threshold: above it, texts are compared.
pub const STRUCTURE_THRESHOLD: f64 = 0.90;
/// S4's text threshold: fewer changed nodes than this share is a duplicate.
pub const CHANGE_THRESHOLD: f64 = 0.15;

/// One element of a DOM tree: its tag, its own text (the text nodes directly
/// inside it, trimmed and joined) and its element children in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DomNode {
    pub tag: String,
    pub text: String,
    pub children: Vec<DomNode>,
}

impl DomNode {
    pub fn new(tag: &str, text: &str, children: Vec<DomNode>) -> DomNode {
        DomNode { tag: tag.to_owned(), text: text.to_owned(), children }
    }

    /// The `<html>` element of a page as a tree (scripts and styles kept:
    /// they are part of the state's structure too).
    pub fn from_html(html: &str) -> DomNode {
        let doc = Html::parse_document(html);
        from_element(doc.root_element())
    }

    /// Nodes in the tree, this one included.
    pub fn size(&self) -> usize {
        1 + self.children.iter().map(DomNode::size).sum::<usize>()
    }
}

fn from_element(el: ElementRef) -> DomNode {
    let mut text = String::new();
    let mut children = Vec::new();
    for child in el.children() {
        match child.value() {
            Node::Text(t) => {
                let t = t.trim();
                if !t.is_empty() {
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    text.push_str(t);
                }
            }
            Node::Element(_) => children.extend(ElementRef::wrap(child).map(from_element)),
            _ => {}
        }
    }
    DomNode { tag: el.value().name().to_owned(), text, children }
}

/// The size of the maximum matching between `a` and `b` under STM.
pub fn simple_tree_matching(a: &DomNode, b: &DomNode) -> usize {
    stm(a, b, &mut None)
}

/// STM that also records the matched pairs (as references) when asked.
fn stm<'a>(a: &'a DomNode, b: &'a DomNode, pairs: &mut Option<Vec<(&'a DomNode, &'a DomNode)>>) -> usize {
    if a.tag != b.tag {
        return 0;
    }
    let (m, n) = (a.children.len(), b.children.len());
    // w[i][j]: STM of the i-th child of a and the j-th child of b.
    let mut w = vec![vec![0usize; n]; m];
    for (i, ca) in a.children.iter().enumerate() {
        for (j, cb) in b.children.iter().enumerate() {
            w[i][j] = stm(ca, cb, &mut None);
        }
    }
    let mut t = vec![vec![0usize; n + 1]; m + 1];
    for i in 1..=m {
        for j in 1..=n {
            t[i][j] = t[i][j - 1].max(t[i - 1][j]).max(t[i - 1][j - 1] + w[i - 1][j - 1]);
        }
    }
    if let Some(out) = pairs.as_mut() {
        out.push((a, b));
        // Walk the table back to find which children were paired, then
        // descend into each pair for its own matching.
        let (mut i, mut j) = (m, n);
        let mut chosen = Vec::new();
        while i > 0 && j > 0 {
            if t[i][j] == t[i - 1][j] {
                i -= 1;
            } else if t[i][j] == t[i][j - 1] {
                j -= 1;
            } else {
                if w[i - 1][j - 1] > 0 {
                    chosen.push((i - 1, j - 1));
                }
                i -= 1;
                j -= 1;
            }
        }
        for (ci, cj) in chosen.into_iter().rev() {
            stm(&a.children[ci], &b.children[cj], pairs);
        }
    }
    t[m][n] + 1
}

/// How two states compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StateComparison {
    /// Matched nodes ÷ average node count.
    pub structure: f64,
    /// Changed nodes ÷ average node count; `None` when the structure was
    /// too different for texts to be compared.
    pub changed: Option<f64>,
    pub duplicate: bool,
}

/// S4's duplicate test of `new` against a state already kept.
pub fn compare_states(kept: &DomNode, new: &DomNode) -> StateComparison {
    let mut pairs = Some(Vec::new());
    let matched = stm(kept, new, &mut pairs);
    let average = (kept.size() + new.size()) as f64 / 2.0;
    let structure = matched as f64 / average;
    if structure <= STRUCTURE_THRESHOLD {
        return StateComparison { structure, changed: None, duplicate: false };
    }
    let pairs = pairs.unwrap_or_default();
    let retexted = pairs.iter().filter(|(a, b)| a.text != b.text).count();
    let changed = ((average - matched as f64) + retexted as f64) / average;
    StateComparison { structure, changed: Some(changed), duplicate: changed < CHANGE_THRESHOLD }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(tag: &str, children: Vec<DomNode>) -> DomNode {
        DomNode::new(tag, "", children)
    }
    fn leaf(tag: &str, text: &str) -> DomNode {
        DomNode::new(tag, text, vec![])
    }

    #[test]
    fn differing_roots_match_nothing() {
        assert_eq!(simple_tree_matching(&n("a", vec![leaf("b", "")]), &n("x", vec![leaf("b", "")])), 0);
    }

    /// Yang's example shape, counted by hand:
    /// A = a(b(c, d), e)         5 nodes
    /// B = a(b(d), e, b(c, d))   7 nodes
    /// Children of a: [b(c,d), e] against [b(d), e, b(c,d)].
    /// W: b(c,d)~b(d) = 2, b(c,d)~b(c,d) = 3, e~e = 1, others 0.
    /// Best in-order matching: b(c,d)↔b(d) (2) + e↔e (1) = 3,
    /// or b(c,d)↔b(c,d) (3) alone = 3; so STM = 3 + 1 = 4.
    #[test]
    fn a_hand_computed_matching() {
        let a = n("a", vec![n("b", vec![leaf("c", ""), leaf("d", "")]), leaf("e", "")]);
        let b = n("a", vec![n("b", vec![leaf("d", "")]), leaf("e", ""), n("b", vec![leaf("c", ""), leaf("d", "")])]);
        assert_eq!((a.size(), b.size()), (5, 7));
        assert_eq!(simple_tree_matching(&a, &b), 4);
        assert_eq!(simple_tree_matching(&b, &a), 4, "symmetric");
        let c = compare_states(&a, &b);
        assert!((c.structure - 4.0 / 6.0).abs() < 1e-9, "{c:?}");
        assert_eq!((c.changed, c.duplicate), (None, false));
    }

    /// Order matters: subtrees are matched in order, never crossed.
    /// a(b, c) against a(c, b): only one of b, c can pair, so STM = 2.
    #[test]
    fn subtrees_are_matched_in_order() {
        let a = n("a", vec![leaf("b", ""), leaf("c", "")]);
        let b = n("a", vec![leaf("c", ""), leaf("b", "")]);
        assert_eq!(simple_tree_matching(&a, &b), 2);
    }

    /// A comments list of 20 items, one comment's text edited: 42 nodes
    /// each (div, ul, 20 × li(p)), all matched, one pair retexted:
    /// changed = 1/42 < 15 %, a duplicate.
    #[test]
    fn the_same_page_with_a_changed_counter_is_a_duplicate() {
        let page = |edited: &str| {
            let items = (0..20).map(|i| n("li", vec![leaf("p", if i == 7 { edited } else { "评论" })])).collect();
            n("div", vec![n("ul", items)])
        };
        let (a, b) = (page("原文"), page("改过"));
        assert_eq!(a.size(), 42);
        let c = compare_states(&a, &b);
        assert_eq!(c.structure, 1.0);
        assert!((c.changed.unwrap() - 1.0 / 42.0).abs() < 1e-9, "{c:?}");
        assert!(c.duplicate);
    }

    /// Same structure (so above 90 %), but every one of the 20 comments has
    /// new text (the next comments page): changed = 20/42 ≈ 48 % ≥ 15 %, kept.
    #[test]
    fn the_next_comments_page_is_new_although_its_structure_is_the_same() {
        let page = |offset: usize| {
            let items = (0..20).map(|i| n("li", vec![leaf("p", &format!("评论{}", (i + offset) / 2))])).collect();
            n("div", vec![n("ul", items)])
        };
        let c = compare_states(&page(0), &page(20));
        assert_eq!(c.structure, 1.0);
        assert!((c.changed.unwrap() - 20.0 / 42.0).abs() < 1e-9, "{c:?}");
        assert!(!c.duplicate);
    }

    /// Two more comments loaded by scrolling: 42 against 46 nodes, STM 42,
    /// structure 42/44 ≈ 95.5 % > 90 %; changed = (44 − 42)/44 ≈ 4.5 %: a
    /// duplicate by S4's rule (the thresholds are the paper's, not ours).
    #[test]
    fn structure_just_above_the_threshold_compares_texts() {
        let page = |k: usize| n("div", vec![n("ul", (0..k).map(|_| n("li", vec![leaf("p", "评论")])).collect())]);
        let c = compare_states(&page(20), &page(22));
        assert!((c.structure - 42.0 / 44.0).abs() < 1e-9, "{c:?}");
        assert!((c.changed.unwrap() - 2.0 / 44.0).abs() < 1e-9);
        assert!(c.duplicate);
        // Ten more: 42 against 62 nodes, 42/52 ≈ 80.8 %: not compared, kept.
        let c = compare_states(&page(20), &page(30));
        assert!((c.structure - 42.0 / 52.0).abs() < 1e-9);
        assert!(!c.duplicate && c.changed.is_none());
    }

    #[test]
    fn trees_from_html_keep_own_text_and_element_order() {
        let t = DomNode::from_html("<html><body><div id=c><p>甲 <b>乙</b> 丙</p></div></body></html>");
        let body = &t.children[1];
        assert_eq!(body.tag, "body");
        let p = &body.children[0].children[0];
        assert_eq!((p.tag.as_str(), p.text.as_str(), p.children[0].text.as_str()), ("p", "甲 丙", "乙"));
        let same = DomNode::from_html("<html><body><div id=c><p>甲 <b>乙</b> 丙</p></div></body></html>");
        assert!(compare_states(&t, &same).duplicate);
    }
}
