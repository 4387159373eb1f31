//! html5ever's tokens, read off a decoded page by byte scanning.
//!
//! The stream ([`crate::stream`]) spent nearly all its time in html5ever's
//! tokenizer, which takes a page one character at a time through a
//! `BufferQueue` and builds every tag name, attribute and text run up char
//! by char. The tokens themselves are simple to find: [`tokenize`] jumps
//! from `<` to `<` with `memchr`, reads tags, comments and raw text with
//! the WHATWG states in [`luntan_text::markup`], and hands the stream the
//! same tokens html5ever would — the same tag names, the same attributes in
//! the same order (repeats dropped, names lower-cased, references resolved
//! with the attribute rules), the same text with references resolved, the
//! same raw text of `<script>`, `<style>`, `<title>`, `<textarea>` and the
//! rest, the sink's switches into raw text obeyed. Text is handed over as
//! slices of one shared copy of the page, as html5ever does.
//!
//! Only how text is cut into tokens differs (html5ever gives a `\n` or a
//! resolved reference a token of its own); tree construction does not
//! depend on it. A doctype, once a page, goes through html5ever's own
//! tokenizer: its quirks rules are many and the cost is nothing.
//!
//! Pages with a NUL character are refused ([`Refused`]), and the stream
//! reads them with html5ever's tokenizer: NUL is replaced, dropped or kept
//! by rules that differ in every state.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts};
use html5ever::{ns, Attribute, LocalName, QualName};
use luntan_text::markup::{comment_end, name_end, past_gt, raw_end, script_end, tag_rest, unescape_into, Span};
use memchr::memchr;

/// Why a page is left to html5ever's tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A NUL character.
    Nul,
    /// The sink asked for a state the scanner does not have (PLAINTEXT).
    State,
}

/// What the sink said after a token.
enum Flow {
    Go,
    Raw(RawKind),
    Stop,
}

struct Scanner<'a, F> {
    html: &'a str,
    /// The page once more, as a tendril that text and values share.
    input: StrTendril,
    sink: F,
}

/// Runs the tokens of `html` into `sink`, ending with `EOFToken`, unless the
/// sink stops it by answering `Script` (the stream does once it gave up).
pub(crate) fn tokenize(html: &str, sink: impl FnMut(Token) -> TokenSinkResult<()>) -> Result<(), Refused> {
    if memchr(0, html.as_bytes()).is_some() {
        return Err(Refused::Nul);
    }
    // html5ever reads `\r\n` and `\r` as `\n` before anything else.
    let normalized;
    let html = if memchr(b'\r', html.as_bytes()).is_some() {
        normalized = html.replace("\r\n", "\n").replace('\r', "\n");
        &normalized
    } else {
        html
    };
    let html = html.strip_prefix('\u{FEFF}').unwrap_or(html);
    let mut s = Scanner { html, input: StrTendril::from_slice(html), sink };
    s.run()
}

fn lower(text: &str) -> std::borrow::Cow<'_, str> {
    if text.bytes().any(|c| c.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(text.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

impl<F: FnMut(Token) -> TokenSinkResult<()>> Scanner<'_, F> {
    fn emit(&mut self, token: Token) -> Result<Flow, Refused> {
        match (self.sink)(token) {
            TokenSinkResult::Continue | TokenSinkResult::EncodingIndicator(_) => Ok(Flow::Go),
            TokenSinkResult::RawData(kind) => Ok(Flow::Raw(kind)),
            TokenSinkResult::Script(()) => Ok(Flow::Stop),
            TokenSinkResult::Plaintext => Err(Refused::State),
        }
    }

    /// The text `html[from..to]`, references resolved if `refs`.
    fn text(&mut self, from: usize, to: usize, refs: bool) -> Result<Flow, Refused> {
        if from == to {
            return Ok(Flow::Go);
        }
        let text = self.piece(from, to, refs.then_some(false));
        self.emit(Token::CharacterTokens(text))
    }

    fn value(&self, v: Span) -> StrTendril {
        self.piece(v.start, v.end, Some(true))
    }

    /// `html[from..to]` as a tendril: a slice of the shared page, or, where
    /// it holds a `&` and `refs` says how (`Some(in_attribute)`), a new one
    /// with its references resolved.
    fn piece(&self, from: usize, to: usize, refs: Option<bool>) -> StrTendril {
        let raw = &self.html[from..to];
        match refs {
            Some(in_attribute) if memchr(b'&', raw.as_bytes()).is_some() => {
                let mut out = String::with_capacity(raw.len());
                unescape_into(&mut out, raw, in_attribute);
                StrTendril::from(out)
            }
            _ if raw.is_empty() => StrTendril::new(),
            _ => self.input.subtendril(from as u32, raw.len() as u32),
        }
    }

    /// The tag `name` whose attributes start at `at`, and where it ends;
    /// `None` if the page ends inside it.
    fn tag(&self, kind: TagKind, name: LocalName, at: usize) -> Option<(Tag, usize)> {
        let b = self.html.as_bytes();
        let mut attrs: Vec<Attribute> = Vec::new();
        let mut duplicates = false;
        let end = tag_rest(b, at, |n, v| {
            let local = LocalName::from(&*lower(&self.html[n.start..n.end]));
            if attrs.iter().any(|a| a.name.local == local) {
                duplicates = true;
            } else {
                attrs.push(Attribute { name: QualName::new(None, ns!(), local), value: self.value(v) });
            }
        })?;
        Some((Tag { kind, name, self_closing: end.self_closing, attrs, had_duplicate_attributes: duplicates }, end.end))
    }

    fn name(&self, from: usize, to: usize) -> LocalName {
        LocalName::from(&*lower(&self.html[from..to]))
    }

    /// A comment's token (the stream does not read what it says).
    fn comment(&mut self) -> Result<Flow, Refused> {
        self.emit(Token::CommentToken(StrTendril::new()))
    }

    fn run(&mut self) -> Result<(), Refused> {
        let b = self.html.as_bytes();
        // Scanning from `i`; text not yet handed over from `text`.
        let (mut i, mut text) = (0, 0);
        macro_rules! flow {
            ($e:expr) => {
                match $e? {
                    Flow::Stop => return Ok(()),
                    flow => flow,
                }
            };
        }
        // Hands over the text before `lt`, then what `$end` (just past the
        // markup at `lt`, `None` at the end of the page) says is next.
        macro_rules! markup {
            ($lt:expr, $end:expr, $emit:expr) => {{
                flow!(self.text(text, $lt, true));
                flow!($emit);
                match $end {
                    Some(e) => (i, text) = (e, e),
                    None => return self.eof(),
                }
            }};
        }
        while let Some(k) = memchr(b'<', &b[i..]) {
            let lt = i + k;
            let Some(&c) = b.get(lt + 1) else { break };
            if c.is_ascii_alphabetic() || (c == b'/' && b.get(lt + 2).is_some_and(u8::is_ascii_alphabetic)) {
                let (kind, from) = if c == b'/' { (TagKind::EndTag, lt + 2) } else { (TagKind::StartTag, lt + 1) };
                let read = name_end(b, from).and_then(|ne| {
                    let name = self.name(from, ne);
                    Some((name.clone(), self.tag(kind, name, ne)?))
                });
                let Some((name, (tag, end))) = read else {
                    // A tag cut off by the end of the page is dropped.
                    flow!(self.text(text, lt, true));
                    return self.eof();
                };
                flow!(self.text(text, lt, true));
                match flow!(self.emit(Token::TagToken(tag))) {
                    Flow::Raw(raw) => match self.raw(raw, name, end)? {
                        Some(e) => (i, text) = (e, e),
                        None => return Ok(()),
                    },
                    _ => (i, text) = (end, end),
                }
            } else if c == b'/' {
                match b.get(lt + 2) {
                    // `</` at the end is text.
                    None => break,
                    Some(b'>') => {
                        flow!(self.text(text, lt, true));
                        (i, text) = (lt + 3, lt + 3);
                    }
                    Some(_) => markup!(lt, past_gt(b, lt + 2), self.comment()),
                }
            } else if c == b'!' {
                let rest = &b[lt + 2..];
                if rest.starts_with(b"--") {
                    markup!(lt, comment_end(b, lt + 4), self.comment());
                } else if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"DOCTYPE") {
                    let end = past_gt(b, lt + 9);
                    let doctype = doctype(&self.html[lt..end.unwrap_or(b.len())]);
                    markup!(lt, end, self.emit(doctype));
                } else {
                    markup!(lt, past_gt(b, lt + 2), self.comment());
                }
            } else if c == b'?' {
                markup!(lt, past_gt(b, lt + 2), self.comment());
            } else {
                // A `<` that starts nothing is text.
                i = lt + 1;
            }
        }
        flow!(self.text(text, b.len(), true));
        self.eof()
    }

    /// The raw text of the element `name` from `at` and its end tag; where
    /// the page goes on after them, or `None` once it ended (EOF handed over).
    fn raw(&mut self, kind: RawKind, name: LocalName, at: usize) -> Result<Option<usize>, Refused> {
        let b = self.html.as_bytes();
        let (found, refs) = match kind {
            RawKind::ScriptData => (script_end(b, at), false),
            RawKind::Rcdata => (raw_end(b, at, name.as_bytes()), true),
            RawKind::Rawtext => (raw_end(b, at, name.as_bytes()), false),
            RawKind::ScriptDataEscaped(_) => return Err(Refused::State),
        };
        // No end tag: the text runs to the end of the page. An end tag cut
        // off by the end of the page is dropped, and the text ends before it.
        let (lt, closed) = match found {
            None => (b.len(), None),
            Some((lt, d)) => (lt, self.tag(TagKind::EndTag, name, d)),
        };
        let Some((tag, end)) = closed else {
            if let Flow::Go = self.text(at, lt, refs)? {
                self.eof()?;
            }
            return Ok(None);
        };
        if let Flow::Stop = self.text(at, lt, refs)? {
            return Ok(None);
        }
        match self.emit(Token::TagToken(tag))? {
            Flow::Go => Ok(Some(end)),
            Flow::Stop => Ok(None),
            Flow::Raw(_) => Err(Refused::State),
        }
    }

    fn eof(&mut self) -> Result<(), Refused> {
        self.emit(Token::EOFToken).map(|_| ())
    }
}

/// The doctype token of `markup` (`<!DOCTYPE …>`, or to the end of the
/// page), from html5ever's tokenizer.
fn doctype(markup: &str) -> Token {
    struct Catch(RefCell<Option<Token>>);
    impl TokenSink for Catch {
        type Handle = ();
        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            if let Token::DoctypeToken(_) = token {
                *self.0.borrow_mut() = Some(token);
            }
            TokenSinkResult::Continue
        }
    }
    let tok = Tokenizer::new(Catch(RefCell::new(None)), TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(markup));
    let _ = tok.feed(&input);
    tok.end();
    let caught = tok.sink.0.borrow_mut().take();
    caught.expect("<!DOCTYPE always makes a doctype token")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens as the stream sees them: text merged across html5ever's cuts,
    /// parse errors dropped, comments without their text.
    fn normalized(tokens: Vec<Token>) -> Vec<Token> {
        let mut out: Vec<Token> = Vec::new();
        for t in tokens {
            match t {
                Token::ParseError(_) => {}
                Token::CommentToken(_) => out.push(Token::CommentToken(StrTendril::new())),
                Token::CharacterTokens(t) => match out.last_mut() {
                    Some(Token::CharacterTokens(prev)) => prev.push_tendril(&t),
                    _ => out.push(Token::CharacterTokens(t)),
                },
                t => out.push(t),
            }
        }
        out
    }

    /// Switches into raw text where a tree builder in `<body>` would.
    fn raw_for(token: &Token) -> TokenSinkResult<()> {
        if let Token::TagToken(Tag { kind: TagKind::StartTag, name, .. }) = token {
            match &**name {
                "script" => return TokenSinkResult::RawData(RawKind::ScriptData),
                "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => return TokenSinkResult::RawData(RawKind::Rawtext),
                "title" | "textarea" => return TokenSinkResult::RawData(RawKind::Rcdata),
                _ => {}
            }
        }
        TokenSinkResult::Continue
    }

    fn html5ever_tokens(html: &str) -> Vec<Token> {
        struct Keep(RefCell<Vec<Token>>);
        impl TokenSink for Keep {
            type Handle = ();
            fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
                let r = raw_for(&token);
                self.0.borrow_mut().push(token);
                r
            }
        }
        let tok = Tokenizer::new(Keep(RefCell::new(Vec::new())), TokenizerOpts::default());
        let input = BufferQueue::default();
        input.push_back(StrTendril::from_slice(html));
        let _ = tok.feed(&input);
        tok.end();
        normalized(tok.sink.0.into_inner())
    }

    fn scanned_tokens(html: &str) -> Result<Vec<Token>, Refused> {
        let mut got = Vec::new();
        tokenize(html, |t| {
            let r = raw_for(&t);
            got.push(t);
            r
        })?;
        Ok(normalized(got))
    }

    /// Asserts the scan gives html5ever's tokens for `html`.
    pub(crate) fn same_tokens(html: &str) {
        let got = scanned_tokens(html).unwrap_or_else(|e| panic!("{e:?}: {html:?}"));
        assert_eq!(got, html5ever_tokens(html), "{html:?}");
    }

    #[test]
    fn tags_attributes_and_text_come_out_as_html5ever_gives_them() {
        for html in [
            "",
            "plain",
            "<",
            "a < b <3 <",
            "</",
            "</>x</ x>y</1>",
            r#"<DIV Class="a b" ID=x data-X='1' class=dup checked>t</Div>"#,
            r#"<a href=?a=1&amp;b=2&copy=3&copy;&notit; title="&lt;&#x26;&#38&#0;&#128;&bogus;">&amp;&lt;b&gt;&copy=1&notit;&#26a&#x;&</a>"#,
            "<br/><br / ><img src=x/><p/a>",
            r#"<a b="c"d='e'f=g/ h>"#,
            "<a =x \"y\"=1 '<'>",
            "<a href=>x",
            "<p>text\r\nmore\rend</p>",
            "\u{FEFF}<p>bom</p>",
            "<!-- c --><!-->x<!--->y<!--!>z-->w<!-- a --!>v<!---->u",
            "<!-- to the end",
            "<!x><!><?php echo 1 ?>after<![CDATA[x]]>",
            "<!DOCTYPE html><p>x",
            r#"<!doctype HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "http://www.w3.org/TR/html4/loose.dtd">x"#,
            "<!DOCTYPE",
            "<!DOCTYPE html",
            "<title>a &amp; <b>b</b></TITLE >x",
            "<textarea>&lt;</textarea/>",
            "<style>p > a { x: '</sty' }</style x=1>y",
            "<script>if (a<b && c>d) x = '</scr' + 'ipt>';</script>z",
            "<script><!-- document.write('<script>x</script>'); --></script>after",
            "<script><!--<script></script>x</script>still--></script>out",
            "<script>never closed",
            "<title>never closed &amp;",
            "<script></script",
            "<div class=\"cut",
            "<div a=b",
            "<p>中文&nbsp;😀<b>粗</b>&#x1F600;</p>",
            "<xmp><b>&amp;</b></xmp><noscript><p></noscript>",
        ] {
            same_tokens(html);
        }
    }

    #[test]
    fn a_page_with_nul_is_left_to_html5ever() {
        assert_eq!(scanned_tokens("<p>a\0b</p>"), Err(Refused::Nul));
    }

    #[test]
    fn every_character_reference_resolves_as_in_html5ever() {
        let mut page = String::new();
        for (name, v) in web_atoms::NAMED_ENTITIES.entries() {
            if v.0 == 0 {
                continue;
            }
            for tail in ["", "=", "x", "1", "-", ";", "<b>"] {
                page.push_str(&format!("<a title=\"&{name}{tail}\" alt=&{name}{tail}>&{name}{tail}</a>"));
            }
        }
        same_tokens(&page);
    }

    /// Every page of the fixture forums (home, boards, threads; plain and
    /// hostile: lying charsets, invalid bytes, padded pages), decoded as
    /// extract decodes them, whole and cut short at a few places.
    #[test]
    fn every_fixture_page_tokenizes_as_in_html5ever() {
        use luntan_fixture::{Fixture, FixtureConfig, ForumKind, Hostility};
        let hostility = Hostility { mislabel_percent: 10, invalid_bytes_percent: 10, big_percent: 10, big_bytes: 100 << 10, ..Hostility::percent(5) };
        let mut pages = 0;
        for cfg in [
            FixtureConfig { threads: 60, boards: 3, forums: [&ForumKind::ALL[..], &ForumKind::EXTRA[..]].concat(), ..FixtureConfig::default() },
            FixtureConfig {
                threads: 60,
                boards: 3,
                seed: 7,
                forums: [&ForumKind::ALL[..], &ForumKind::EXTRA[..]].concat(),
                hostility,
                ..FixtureConfig::default()
            },
        ] {
            let fixture = Fixture::new(cfg);
            for forum in fixture.truth().forums {
                let kind = ForumKind::from_site_id(&forum.site).unwrap();
                let paths = std::iter::once(kind.home_path().to_owned())
                    .chain(forum.boards.iter().map(|b| b.url_path.clone()))
                    .chain(forum.threads.iter().map(|t| t.url_path.clone()));
                for path in paths {
                    let resp = fixture.get(&path);
                    if resp.status != 200 {
                        continue;
                    }
                    let text = luntan_text::encoding::detect_and_decode(&resp.body, Some(resp.content_type), None, None).1.text;
                    pages += 1;
                    same_tokens(&text);
                    for cut in [1, 3, 7, 11, 13] {
                        let mut at = text.len() * cut / 17;
                        while !text.is_char_boundary(at) {
                            at -= 1;
                        }
                        same_tokens(&text[..at]);
                    }
                }
            }
        }
        assert!(pages > 300, "{pages} pages");
    }

    /// Random markup built from the pieces the tokenizer's states turn on.
    #[test]
    fn tokenizer_soup_tokenizes_as_in_html5ever() {
        const PIECES: &[&str] = &[
            "<",
            ">",
            "</",
            "/",
            "/>",
            "<!",
            "<!--",
            "-->",
            "--!>",
            "-",
            "--",
            "<!-->",
            "<?",
            "<!DOCTYPE html>",
            "<!doctype",
            "\"",
            "'",
            "=",
            " ",
            "\n",
            "\r\n",
            "\r",
            "\t",
            "&",
            "&amp;",
            "&amp",
            "&lt",
            "&#",
            "&#x",
            "&#38;",
            "&#x26",
            "&notit;",
            "&copy=",
            ";",
            "a",
            "B",
            "1",
            "字",
            "😀",
            "<div",
            "<DIV",
            "</div>",
            "<a href=",
            "<p class=\"x\"",
            "<br/>",
            "<script>",
            "</script>",
            "<SCRIPT>",
            "</script ",
            "<script",
            "<style>",
            "</style>",
            "<title>",
            "</title>",
            "<textarea>",
            "</textarea>",
            "<xmp>",
            "</xmp>",
            "<noscript>",
            "</noscript>",
            "<iframe>",
            "</iframe>",
            "<![CDATA[",
            "]]>",
            " x=1",
            " y='2'",
            " z=\"&amp;\"",
            " data-Q",
            "\u{FEFF}",
        ];
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let rounds = std::env::var("LUNTAN_SOUP_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(20_000);
        for _ in 0..rounds {
            let html: String = (0..next(40) + 1).map(|_| PIECES[next(PIECES.len())]).collect();
            same_tokens(&html);
        }
    }
}
