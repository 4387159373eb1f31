//! A JSON API's answer as servers send it. Most send bare JSON; the
//! comment boxes of news portals answer for a `<script>` tag instead
//! (JSONP: `cb({…});`, Express's `/**/ typeof cb === 'function' && cb({…});`,
//! `try{cb({…})}catch(e){}`), some assign it to a variable
//! (`var data = {…};`), and some guard it against being read as a script
//! (`)]}'`, `while(1);`, `for(;;);`). Every stage that reads an answer
//! (discover, download, extract, the learner) reads it through
//! [`read_json`], so a site file names the endpoint as its script asks it,
//! `&callback=…` and all, and the raw answer is what is saved.

use std::sync::LazyLock;

use regex::bytes::Regex;
use serde_json::Value;

/// Guards against a JSON answer being run as a script, before the JSON.
static GUARD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:\)\]\}'\s*,?|while\s*\(\s*1\s*\)\s*;|for\s*\(\s*;\s*;\s*\)\s*;)").expect("a valid pattern"));

/// What stands before the JSON in a call or an assignment: a callback
/// (`jQuery1124_17(`, `window.cb[3](`), optionally behind Express's
/// `/**/ typeof cb === 'function' &&` and inside `try{`, or a variable
/// (`var data =`). Group 1 is `(` or `=`.
static OPENING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"^\s*(?:/\*\*/\s*)?(?:typeof\s+[\w$.]+\s*===?\s*['"]function['"]\s*&&\s*)?(?:try\s*\{\s*)?"#,
        r#"(?:(?:var|let|const)\s+)?[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*|\[\s*(?:\d+|'[^']*'|"[^"]*")\s*\])*\s*([(=])"#,
    ))
    .expect("a valid pattern")
});

/// What may follow the JSON of a call: its `)`, a `;`, the `catch` of a `try`.
static CALL_END: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*\)\s*;?\s*(?:\}\s*catch\s*\(\s*[\w$]*\s*\)\s*\{\s*\}\s*;?\s*)?$").expect("a valid pattern"));

/// What may follow the JSON of an assignment.
static ASSIGN_END: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*;?\s*$").expect("a valid pattern"));

/// The JSON of an API's answer: bare (after a byte order mark), or
/// unwrapped from JSONP, an assignment or a guard. The error is the bare
/// parse's: an answer that is none of these is invalid JSON, whatever
/// else it might be.
pub fn read_json(body: &[u8]) -> Result<Value, serde_json::Error> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    match serde_json::from_slice(body) {
        Ok(v) => Ok(v),
        Err(e) => unwrapped(body).ok_or(e),
    }
}

fn unwrapped(body: &[u8]) -> Option<Value> {
    if let Some(m) = GUARD.find(body) {
        return serde_json::from_slice(&body[m.end()..]).ok();
    }
    let open = OPENING.captures(body)?;
    let at = open.get(0)?.end();
    let mut values = serde_json::Deserializer::from_slice(&body[at..]).into_iter::<Value>();
    let value = values.next()?.ok()?;
    let rest = &body[at + values.byte_offset()..];
    let end: &Regex = if &open[1] == b"(" { &CALL_END } else { &ASSIGN_END };
    end.is_match(rest).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonp_assignments_and_guards_are_unwrapped_to_their_json() {
        let want = json!({"total": 2, "comments": [{"id": 1, "content": "楼主说得对 (真的)"}]});
        let text = want.to_string();
        for wrapped in [
            text.clone(),
            format!("\u{feff}{text}"),
            format!("jsonp_3({text});"),
            format!("jQuery112405_1701234567890 ( {text} )"),
            format!("/**/ typeof cb === 'function' && cb({text});"),
            format!("try{{newsCb({text});}}catch(e){{}};"),
            format!("window.loader['cb'][2]({text})\n"),
            format!("var data = {text};"),
            format!("data={text}"),
            format!(")]}}',\n{text}"),
            format!("while(1);{text}"),
            format!("for(;;);{text}"),
        ] {
            assert_eq!(read_json(wrapped.as_bytes()).unwrap_or_else(|e| panic!("{wrapped}: {e}")), want, "{wrapped}");
        }
        // Arrays and scalars are JSON too.
        assert_eq!(read_json(b"cb([1,2])").unwrap(), json!([1, 2]));
    }

    #[test]
    fn scripts_and_broken_wrappers_are_invalid_json_as_the_bare_parse_says() {
        for bad in [
            "",
            "<html><body>评论</body></html>",
            "cb({\"a\":1}",
            "cb({\"a\":1}); alert(1)",
            "cb({a:1})",
            "cb({\"a\":1}, 200)",
            "var data = {\"a\":1}; var more = 2;",
            "!function(e){e.cb({\"a\":1})}(window)",
            "1cb({\"a\":1})",
            ")]}'\n<html>",
        ] {
            let bare = serde_json::from_slice::<Value>(bad.as_bytes()).unwrap_err().to_string();
            assert_eq!(read_json(bad.as_bytes()).unwrap_err().to_string(), bare, "{bad:?}");
        }
    }
}
