//! The search syntax, parsed into a tree of [`Node`]s.
//!
//! ```text
//! 考研 经验            both terms (AND), each as written: a substring of the
//!                      title or body (Latin and digits: whole words, or the
//!                      letter/digit runs of a word like iPhone15)
//! "考研 经验"          exact phrase (also “…” and 「…」); a space in it stands
//!                      for any run of spaces and punctuation, or for none
//!                      (服务 态度, 服务，态度 and 服务态度 alike); past four
//!                      spaces, for a run at every one or at none
//! -广告                exclude threads containing 广告
//! 考研 OR 保研         either (also `|`); OR binds tighter than AND
//! (考研 OR 保研) 数学  grouping
//! site:dz board:2      only that forum / board (exact ids)
//! author:小明          a poster's name contains 小明, or a poster's id (the
//!                      forum's own, as the thread XML keeps it) is 小明
//! reply-to:小明        a post answers or quotes one of 小明's (name or id)
//! link:weibo.com       a post links to weibo.com or a host under it
//! title:经验           the term must be in the title (title:"…" for a phrase)
//! ```
//!
//! An unknown `word:rest` (a URL, `c:\`) is an ordinary word. A term or
//! phrase written twice in one group counts once (`明月 明月` is `明月`), and a
//! query holds at most [`MAX_TERMS`] distinct terms and filters, nested at most
//! [`MAX_DEPTH`] parentheses deep: every later pass walks the tree
//! recursively, so the bounds are what keeps a hostile query from overflowing
//! the stack or costing seconds. Parsing is
//! syntax only; analysis (folding, segmentation) happens when the query is
//! run against the indexes, where jieba words only rank (whole words and
//! titles first, words near each other first), never select.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

/// Malformed query text. Positions are 1-based character columns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("empty query")]
    Empty,
    #[error("unmatched quote {quote} at column {at}")]
    UnclosedQuote { quote: char, at: usize },
    #[error("empty phrase at column {at}")]
    EmptyPhrase { at: usize },
    #[error("{field}: at column {at} needs a value (e.g. {field}:{example})")]
    EmptyField { field: &'static str, example: &'static str, at: usize },
    #[error("unmatched '(' at column {at}")]
    UnclosedParen { at: usize },
    #[error("unmatched ')' at column {at}")]
    UnopenedParen { at: usize },
    #[error("empty parentheses at column {at}")]
    EmptyGroup { at: usize },
    #[error("OR at column {at} needs a term on both sides")]
    DanglingOr { at: usize },
    #[error("'-' at column {at} must be followed by the term to exclude, without a space")]
    DanglingMinus { at: usize },
    #[error("an exclusion cannot be an OR alternative (column {at}); exclude it outside the OR")]
    NegationInOr { at: usize },
    #[error("nothing to search for (only exclusions or punctuation)")]
    NothingToSearch,
    #[error("parentheses nested more than {MAX_DEPTH} deep at column {at}")]
    TooDeep { at: usize },
    #[error("more than {MAX_TERMS} different terms and filters (the one at column {at} is one too many)")]
    TooManyTerms { at: usize },
}

/// Deepest nesting of parentheses a query may have. Real queries use two or
/// three; 3,800 `(` overflowed the stack of the recursive parser before
/// this bound.
pub const MAX_DEPTH: usize = 16;
/// Most distinct terms, phrases and filters in one query, counted after
/// duplicates are collapsed. Each one is a posting list read in every index.
pub const MAX_TERMS: usize = 64;

impl QueryError {
    /// The 1-based column the error points at, when it points at one.
    pub fn column(&self) -> Option<usize> {
        match self {
            QueryError::UnclosedQuote { at, .. }
            | QueryError::EmptyPhrase { at }
            | QueryError::EmptyField { at, .. }
            | QueryError::UnclosedParen { at }
            | QueryError::UnopenedParen { at }
            | QueryError::EmptyGroup { at }
            | QueryError::DanglingOr { at }
            | QueryError::DanglingMinus { at }
            | QueryError::NegationInOr { at }
            | QueryError::TooDeep { at }
            | QueryError::TooManyTerms { at } => Some(*at),
            QueryError::Empty | QueryError::NothingToSearch => None,
        }
    }
}

/// Where a text term must occur.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    TitleOrBody,
    Title,
}

/// One node of a parsed query.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Node {
    /// A whitespace-free term; it must occur as written (see the module doc).
    Term {
        text: String,
        scope: Scope,
    },
    /// An exact phrase.
    Phrase {
        text: String,
        scope: Scope,
    },
    Site(String),
    Board(String),
    Author(String),
    /// A post answers or quotes this author (name or id).
    ReplyTo(String),
    /// A post's own text links to this host (lower-cased) or one under it.
    Link(String),
    /// Every child must match; [`Node::Not`] children exclude.
    And(Vec<Node>),
    /// At least one child must match.
    Or(Vec<Node>),
    Not(Box<Node>),
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub root: Node,
}

impl Query {
    pub fn parse(text: &str) -> Result<Query, QueryError> {
        let tokens = lex(text)?;
        if tokens.is_empty() {
            return Err(QueryError::Empty);
        }
        let mut p = Parser { tokens, i: 0, depth: 0, leaves: HashSet::new() };
        let root = p.and(None)?;
        if let Some(t) = p.tokens.get(p.i) {
            return Err(QueryError::UnopenedParen { at: t.at });
        }
        if !has_positive(&root) {
            // Exclusions alone are fine once something selects threads (a
            // filter); a bare `-x` would silently list the whole archive.
            return Err(QueryError::NothingToSearch);
        }
        Ok(Query { root })
    }

    /// Every node, depth first, with whether it sits under an exclusion.
    pub fn walk(&self, f: &mut dyn FnMut(&Node, bool)) {
        fn go(n: &Node, negated: bool, f: &mut dyn FnMut(&Node, bool)) {
            f(n, negated);
            match n {
                Node::And(c) | Node::Or(c) => c.iter().for_each(|c| go(c, negated, f)),
                Node::Not(c) => go(c, !negated, f),
                _ => {}
            }
        }
        go(&self.root, false, f)
    }
}

fn has_positive(n: &Node) -> bool {
    match n {
        Node::Not(_) => false,
        Node::And(c) | Node::Or(c) => c.iter().any(has_positive),
        _ => true,
    }
}

impl FromStr for Query {
    type Err = QueryError;
    fn from_str(s: &str) -> Result<Query, QueryError> {
        Query::parse(s)
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = |s: &Scope| if *s == Scope::Title { "title:" } else { "" };
        match self {
            Node::Term { text, scope: s } => write!(f, "{}{text}", scope(s)),
            Node::Phrase { text, scope: s } => write!(f, "{}\"{text}\"", scope(s)),
            Node::Site(v) => write!(f, "site:{v}"),
            Node::Board(v) => write!(f, "board:{v}"),
            Node::Author(v) => write!(f, "author:{v}"),
            Node::ReplyTo(v) => write!(f, "reply-to:{v}"),
            Node::Link(v) => write!(f, "link:{v}"),
            Node::And(c) | Node::Or(c) => {
                let sep = if matches!(self, Node::Or(_)) { " OR " } else { " " };
                f.write_str("(")?;
                for (i, n) in c.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    write!(f, "{n}")?;
                }
                f.write_str(")")
            }
            Node::Not(n) => write!(f, "-{n}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    LParen,
    RParen,
    Or,
    Minus,
    Leaf(Node),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    at: usize,
}

const FIELDS: [(&str, &str); 6] = [("site", "dz"), ("board", "2"), ("author", "小明"), ("reply-to", "小明"), ("link", "weibo.com"), ("title", "经验")];

fn closing_quote(c: char) -> Option<char> {
    match c {
        '"' => Some('"'),
        '“' => Some('”'),
        '「' => Some('」'),
        '『' => Some('』'),
        _ => None,
    }
}

fn lex(text: &str) -> Result<Vec<Token>, QueryError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // Reads a quoted phrase starting at chars[i] (the opening quote).
    let phrase = |i: &mut usize| -> Result<String, QueryError> {
        let at = *i + 1;
        let close = closing_quote(chars[*i]).expect("called on a quote");
        let start = *i + 1;
        let Some(len) = chars[start..].iter().position(|&c| c == close) else {
            return Err(QueryError::UnclosedQuote { quote: chars[at - 1], at });
        };
        *i = start + len + 1;
        let s: String = chars[start..start + len].iter().collect();
        if s.trim().is_empty() {
            return Err(QueryError::EmptyPhrase { at });
        }
        Ok(s.trim().to_string())
    };
    let is_break = |c: char| c.is_whitespace() || c == '(' || c == ')' || closing_quote(c).is_some();
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            out.push(Token { tok: Tok::LParen, at });
            i += 1;
        } else if c == ')' {
            out.push(Token { tok: Tok::RParen, at });
            i += 1;
        } else if closing_quote(c).is_some() {
            let text = phrase(&mut i)?;
            out.push(Token { tok: Tok::Leaf(Node::Phrase { text, scope: Scope::TitleOrBody }), at });
        } else if c == '-' {
            if i + 1 >= chars.len() || chars[i + 1].is_whitespace() || chars[i + 1] == ')' || chars[i + 1] == '-' {
                return Err(QueryError::DanglingMinus { at });
            }
            out.push(Token { tok: Tok::Minus, at });
            i += 1;
        } else {
            let start = i;
            while i < chars.len() && !is_break(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if word == "OR" || word == "|" || word == "||" {
                out.push(Token { tok: Tok::Or, at });
                continue;
            }
            let field = word.find([':', '：']).and_then(|colon| {
                let name = word[..colon].to_ascii_lowercase();
                let rest_start = colon + word[colon..].chars().next().map_or(1, char::len_utf8);
                FIELDS.iter().find(|(f, _)| *f == name).map(|&(f, ex)| (f, ex, word[rest_start..].to_string()))
            });
            let Some((field, example, mut value)) = field else {
                out.push(Token { tok: Tok::Leaf(Node::Term { text: word, scope: Scope::TitleOrBody }), at });
                continue;
            };
            let mut quoted = false;
            if value.is_empty() && i < chars.len() && closing_quote(chars[i]).is_some() {
                value = phrase(&mut i)?;
                quoted = true;
            }
            if value.is_empty() {
                return Err(QueryError::EmptyField { field, example, at });
            }
            let node = match field {
                "site" => Node::Site(value),
                "board" => Node::Board(value),
                "author" => Node::Author(value),
                "reply-to" => Node::ReplyTo(value),
                "link" => Node::Link(link_host(&value)),
                _ if quoted => Node::Phrase { text: value, scope: Scope::Title },
                _ => Node::Term { text: value, scope: Scope::Title },
            };
            out.push(Token { tok: Tok::Leaf(node), at });
        }
    }
    Ok(out)
}

/// What `link:` looks for: the host of a URL given whole
/// (`link:https://weibo.com/u/1`), else the value lower-cased, without a
/// leading `www.` or a trailing dot, so it matches that host and every one under it.
fn link_host(value: &str) -> String {
    let v = value.trim().to_lowercase();
    let host = match v.split_once("://") {
        Some((_, rest)) => rest.split(['/', '?', '#']).next().unwrap_or("").rsplit('@').next().unwrap_or("").to_string(),
        None => v.split(['/', '?', '#']).next().unwrap_or("").to_string(),
    };
    let host = host.trim_end_matches('.');
    let host = if host.starts_with('[') { host } else { host.split(':').next().unwrap_or(host) };
    host.strip_prefix("www.").filter(|h| h.contains('.')).unwrap_or(host).to_string()
}

struct Parser {
    tokens: Vec<Token>,
    i: usize,
    /// Parentheses open around the current token.
    depth: usize,
    /// The distinct leaves seen so far, for [`MAX_TERMS`].
    leaves: HashSet<Node>,
}

/// `node` appended unless an equal one is there already: a repeated term
/// would be scored once per copy (667 copies of one word took 431 ms).
fn push_distinct(items: &mut Vec<Node>, seen: &mut HashSet<Node>, node: Node) {
    if seen.insert(node.clone()) {
        items.push(node);
    }
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.i)
    }

    /// A sequence of OR-groups up to `)` or the end; `open` is the column of
    /// the `(` this group started with.
    fn and(&mut self, open: Option<usize>) -> Result<Node, QueryError> {
        let (mut items, mut seen) = (Vec::new(), HashSet::new());
        loop {
            match self.peek().map(|t| &t.tok) {
                None => {
                    if let Some(at) = open {
                        return Err(QueryError::UnclosedParen { at });
                    }
                    break;
                }
                Some(Tok::RParen) => {
                    if open.is_none() {
                        return Err(QueryError::UnopenedParen { at: self.tokens[self.i].at });
                    }
                    break;
                }
                _ => {
                    let item = self.or()?;
                    push_distinct(&mut items, &mut seen, item);
                }
            }
        }
        if items.is_empty() {
            return Err(match open {
                Some(at) => QueryError::EmptyGroup { at },
                None => QueryError::Empty,
            });
        }
        Ok(if items.len() == 1 { items.pop().expect("one item") } else { Node::And(items) })
    }

    fn or(&mut self) -> Result<Node, QueryError> {
        let first_at = self.peek().map_or(0, |t| t.at);
        let mut alts = vec![self.unary()?];
        let mut seen: HashSet<Node> = alts.iter().cloned().collect();
        let mut or_at = None;
        while let Some(Token { tok: Tok::Or, at }) = self.peek() {
            let at = *at;
            or_at.get_or_insert(at);
            self.i += 1;
            match self.peek().map(|t| &t.tok) {
                None | Some(Tok::RParen) | Some(Tok::Or) => return Err(QueryError::DanglingOr { at }),
                _ => {
                    let alt = self.unary()?;
                    push_distinct(&mut alts, &mut seen, alt);
                }
            }
        }
        if alts.len() == 1 {
            return Ok(alts.pop().expect("one alternative"));
        }
        if alts.iter().any(|a| matches!(a, Node::Not(_))) {
            return Err(QueryError::NegationInOr { at: or_at.unwrap_or(first_at) });
        }
        Ok(Node::Or(alts))
    }

    fn unary(&mut self) -> Result<Node, QueryError> {
        if let Some(Token { tok: Tok::Minus, .. }) = self.peek() {
            self.i += 1;
            return Ok(Node::Not(Box::new(self.primary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Node, QueryError> {
        let Some(t) = self.tokens.get(self.i).cloned() else {
            return Err(QueryError::Empty);
        };
        self.i += 1;
        match t.tok {
            Tok::LParen => {
                if self.depth >= MAX_DEPTH {
                    return Err(QueryError::TooDeep { at: t.at });
                }
                self.depth += 1;
                let inner = self.and(Some(t.at))?;
                self.depth -= 1;
                self.i += 1; // the `)` that `and` stopped at
                Ok(inner)
            }
            Tok::RParen => Err(QueryError::UnopenedParen { at: t.at }),
            Tok::Or => Err(QueryError::DanglingOr { at: t.at }),
            Tok::Minus => Err(QueryError::DanglingMinus { at: t.at }),
            Tok::Leaf(n) => {
                if !self.leaves.contains(&n) {
                    if self.leaves.len() == MAX_TERMS {
                        return Err(QueryError::TooManyTerms { at: t.at });
                    }
                    self.leaves.insert(n.clone());
                }
                Ok(n)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(s: &str) -> Node {
        Node::Term { text: s.into(), scope: Scope::TitleOrBody }
    }

    #[test]
    fn well_formed_queries_parse_to_their_trees() {
        let cases = [
            (
                "考研 \"数学 真题\" -广告 a OR b site:dz title:经验 author:小明",
                Node::And(vec![
                    term("考研"),
                    Node::Phrase { text: "数学 真题".into(), scope: Scope::TitleOrBody },
                    Node::Not(Box::new(term("广告"))),
                    Node::Or(vec![term("a"), term("b")]),
                    Node::Site("dz".into()),
                    Node::Term { text: "经验".into(), scope: Scope::Title },
                    Node::Author("小明".into()),
                ]),
            ),
            (
                "(考研 OR 保研) “数学”  http://x.y/z title:\"a b\"",
                Node::And(vec![
                    Node::Or(vec![term("考研"), term("保研")]),
                    Node::Phrase { text: "数学".into(), scope: Scope::TitleOrBody },
                    term("http://x.y/z"),
                    Node::Phrase { text: "a b".into(), scope: Scope::Title },
                ]),
            ),
            ("wi-fi", term("wi-fi")),
            ("SITE：dz", Node::Site("dz".into())),
            (
                "reply-to:小明 link:WWW.Weibo.com. link:https://user@m.weibo.cn:8080/u/1?x=1 link:www",
                Node::And(vec![Node::ReplyTo("小明".into()), Node::Link("weibo.com".into()), Node::Link("m.weibo.cn".into()), Node::Link("www".into())]),
            ),
        ];
        for (q, want) in cases {
            assert_eq!(Query::parse(q).unwrap().root, want, "{q:?}");
        }
    }

    #[test]
    fn malformed_queries_are_errors_with_a_column() {
        let cases: &[(&str, QueryError)] = &[
            ("", QueryError::Empty),
            ("   ", QueryError::Empty),
            ("\"考研", QueryError::UnclosedQuote { quote: '"', at: 1 }),
            ("a \"\"", QueryError::EmptyPhrase { at: 3 }),
            ("site:", QueryError::EmptyField { field: "site", example: "dz", at: 1 }),
            ("考研 author: 小明", QueryError::EmptyField { field: "author", example: "小明", at: 4 }),
            ("(a b", QueryError::UnclosedParen { at: 1 }),
            ("a b)", QueryError::UnopenedParen { at: 4 }),
            ("a ()", QueryError::EmptyGroup { at: 3 }),
            ("a OR", QueryError::DanglingOr { at: 3 }),
            ("OR a", QueryError::DanglingOr { at: 1 }),
            ("a - b", QueryError::DanglingMinus { at: 3 }),
            ("a OR -b", QueryError::NegationInOr { at: 3 }),
            ("-广告", QueryError::NothingToSearch),
        ];
        for (q, want) in cases {
            assert_eq!(Query::parse(q).unwrap_err(), *want, "{q:?}");
            assert!(!want.to_string().contains('\n'));
        }
        assert!(Query::parse("site:dz -广告").is_ok());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        // What took luntan-serve down: a thread page's `q` of ~3,800 `(`,
        // and 50,000 on the command line.
        for n in [MAX_DEPTH + 1, 3_800, 50_000] {
            let q = format!("{}a{}", "(".repeat(n), ")".repeat(n));
            assert_eq!(Query::parse(&q).unwrap_err(), QueryError::TooDeep { at: MAX_DEPTH + 1 }, "{n}");
            assert_eq!(Query::parse(&"(".repeat(n)).unwrap_err(), QueryError::TooDeep { at: MAX_DEPTH + 1 }, "{n} open");
        }
        let deepest = format!("{}a{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(Query::parse(&deepest).unwrap().root, term("a"));
        let negated = format!("b {}a{}", "-(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
        assert!(matches!(Query::parse(&negated), Err(QueryError::TooDeep { .. })));
    }

    #[test]
    fn repeated_terms_count_once() {
        let q = vec!["明月"; 667].join(" ");
        assert_eq!(Query::parse(&q).unwrap().root, term("明月"));
        assert_eq!(Query::parse("a OR a OR b").unwrap().root, Node::Or(vec![term("a"), term("b")]));
        assert_eq!(Query::parse("a OR a").unwrap().root, term("a"));
        assert_eq!(
            Query::parse("\"a b\" x \"a b\" title:x x").unwrap().root,
            Node::And(vec![Node::Phrase { text: "a b".into(), scope: Scope::TitleOrBody }, term("x"), Node::Term { text: "x".into(), scope: Scope::Title },])
        );
        // Different scopes and exclusions are different nodes.
        assert_eq!(Query::parse("x -y -y").unwrap().root, Node::And(vec![term("x"), Node::Not(Box::new(term("y")))]));
    }

    #[test]
    fn distinct_terms_are_bounded() {
        let words: Vec<String> = (0..=MAX_TERMS).map(|i| format!("w{i}")).collect();
        let ok = words[..MAX_TERMS].join(" ");
        assert!(Query::parse(&ok).is_ok());
        let too_many = words.join(" ");
        let at = ok.chars().count() + 2;
        assert_eq!(Query::parse(&too_many).unwrap_err(), QueryError::TooManyTerms { at });
        // Repeats do not count, wherever they sit.
        let repeated = format!("{ok} ({ok}) {}", words[0]);
        assert!(Query::parse(&repeated).is_ok());
    }

    #[test]
    fn no_input_panics() {
        for q in ["\"", "“", "-", "--", "(", ")", "((", "a:", ":", "title:\"", "title:“x", "-(", "(-a)", "| |", "-\"\""] {
            let _ = Query::parse(q);
        }
    }
}
