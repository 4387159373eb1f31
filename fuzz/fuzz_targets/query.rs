//! Search queries are typed by anyone: any text parses or gets an error
//! that points inside it, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use luntan_search::{Node, Query};

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
        }
        Err(e) => {
            let at = e.column().unwrap_or(1);
            assert!((1..=columns).contains(&at), "column {at} outside a {columns}-column query: {e}");
        }
    }
});
