//! Search queries are typed by anyone: any text parses or gets an error
//! that points inside it, never a panic; an accepted query stays within
//! the bounds every later (recursive) pass relies on: nesting and distinct
//! terms, with no term written twice in one group.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;

use luntan_search::query::{MAX_DEPTH, MAX_TERMS};
use luntan_search::{Node, Query};

/// Groups below `n`, counted the way parentheses nest them.
fn depth(n: &Node) -> usize {
    match n {
        Node::And(c) | Node::Or(c) => 1 + c.iter().map(depth).max().unwrap_or(0),
        Node::Not(c) => depth(c),
        _ => 0,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let columns = text.chars().count() + 1;
    match Query::parse(text) {
        Ok(q) => {
            let mut positive = false;
            q.walk(&mut |n, negated| {
                if let Node::Term { text, .. } | Node::Phrase { text, .. } = n {
                    assert!(!text.is_empty(), "empty term in {q:?}");
                }
                positive |= !negated && !matches!(n, Node::And(_) | Node::Or(_) | Node::Not(_));
            });
            assert!(positive, "a query that parses selects something: {q:?}");
            // A group is an And or Or, and each `(` adds at most one of each.
            assert!(depth(&q.root) <= 2 * (MAX_DEPTH + 1), "too deep: {q:?}");
            let mut leaves = HashSet::new();
            q.walk(&mut |n, _| {
                if !matches!(n, Node::And(_) | Node::Or(_) | Node::Not(_)) {
                    leaves.insert(n.clone());
                }
                if let Node::And(c) | Node::Or(c) = n {
                    let distinct: HashSet<&Node> = c.iter().collect();
                    assert_eq!(distinct.len(), c.len(), "a repeated child in {n:?}");
                }
            });
            assert!(leaves.len() <= MAX_TERMS, "{} terms", leaves.len());
            let _ = q.root.to_string();
        }
        Err(e) => {
            let at = e.column().unwrap_or(1);
            assert!((1..=columns).contains(&at), "column {at} outside a {columns}-column query: {e}");
        }
    }
});
