//! The limits luntan's benchmarks compare against (see bench/run.py):
//!
//! - `tokenize LIST ENCODING`: every HTML file of LIST (one path a line) read,
//!   decoded with encoding_rs and run through html5ever's tokenizer with a
//!   sink that only counts tokens. No tree, no selectors, no output: the
//!   floor under any extraction of the same bytes.
//! - `dom LIST ENCODING`: the same, but parsed into scraper's DOM (the tree
//!   luntan-extract's selectors run on), still with no extraction.
//! - `jieba LIST THREADS`: every thread XML file of LIST read and its title
//!   and paragraphs collected (not timed), then segmented with jieba-rs in
//!   search mode (what luntan's index analyzer runs) on THREADS threads, and
//!   nothing else: the limit under any jieba-based indexer.
//!
//! Each prints one JSON line with what it processed and the seconds the
//! measured part took.

use std::cell::Cell;
use std::fs;
use std::time::Instant;

use encoding_rs::Encoding;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer};
use quick_xml::events::Event;

fn paths(list: &str) -> Vec<String> {
    fs::read_to_string(list).unwrap_or_else(|e| panic!("{list}: {e}")).lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect()
}

fn encoding(label: &str) -> &'static Encoding {
    Encoding::for_label(label.as_bytes()).unwrap_or_else(|| panic!("unknown encoding {label}"))
}

/// Counts tokens; switches the tokenizer into raw text where a tree builder
/// would (script, style, title…), so their content is not tag-tokenized.
struct Count {
    tokens: Cell<u64>,
}

impl TokenSink for Count {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        self.tokens.set(self.tokens.get() + 1);
        if let Token::TagToken(tag) = &token {
            if tag.kind == TagKind::StartTag {
                match &*tag.name {
                    "script" => return TokenSinkResult::RawData(RawKind::ScriptData),
                    "style" | "xmp" | "iframe" | "noembed" | "noframes" => return TokenSinkResult::RawData(RawKind::Rawtext),
                    "title" | "textarea" => return TokenSinkResult::RawData(RawKind::Rcdata),
                    "plaintext" => return TokenSinkResult::Plaintext,
                    _ => {}
                }
            }
        }
        TokenSinkResult::Continue
    }
}

fn tokenize(list: &str, label: &str) {
    let files = paths(list);
    let enc = encoding(label);
    let started = Instant::now();
    let (mut bytes, mut tokens, mut malformed) = (0u64, 0u64, 0u64);
    for p in &files {
        let raw = fs::read(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        bytes += raw.len() as u64;
        let (text, had_errors) = enc.decode_without_bom_handling(&raw);
        malformed += u64::from(had_errors);
        let tok = Tokenizer::new(Count { tokens: Cell::new(0) }, Default::default());
        let input = BufferQueue::default();
        input.push_back(StrTendril::from(&*text));
        let _ = tok.feed(&input);
        tok.end();
        tokens += tok.sink.tokens.get();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(r#"{{"files": {}, "bytes": {bytes}, "tokens": {tokens}, "malformed_files": {malformed}, "secs": {secs}}}"#, files.len());
}

fn dom(list: &str, label: &str) {
    let files = paths(list);
    let enc = encoding(label);
    let started = Instant::now();
    let (mut bytes, mut nodes) = (0u64, 0u64);
    for p in &files {
        let raw = fs::read(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        bytes += raw.len() as u64;
        let (text, _) = enc.decode_without_bom_handling(&raw);
        let doc = scraper::Html::parse_document(&text);
        nodes += doc.tree.values().count() as u64;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(r#"{{"files": {}, "bytes": {bytes}, "nodes": {nodes}, "secs": {secs}}}"#, files.len());
}

/// Title and paragraphs of one thread XML file, the text luntan indexes.
fn thread_text(xml: &str) -> String {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut out = String::with_capacity(xml.len());
    let mut inside = false;
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => inside = matches!(e.name().as_ref() as &str, "title" | "p"),
            Ok(Event::End(_)) => {
                if inside {
                    out.push('\n');
                }
                inside = false;
            }
            Ok(Event::Text(t)) if inside => out.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(g)) if inside => match g.resolve_char_ref() {
                Ok(Some(c)) => out.push(c),
                _ => out.push_str(match &*g.into_inner() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    _ => "",
                }),
            },
            Ok(Event::Eof) => break,
            Err(e) => panic!("bad XML: {e}"),
            _ => {}
        }
    }
    out
}

fn jieba(list: &str, threads: usize) {
    let files = paths(list);
    let load = Instant::now();
    let mut xml_bytes = 0u64;
    let texts: Vec<String> = files
        .iter()
        .map(|p| {
            let xml = fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
            xml_bytes += xml.len() as u64;
            thread_text(&xml)
        })
        .collect();
    let text_bytes: u64 = texts.iter().map(|t| t.len() as u64).sum();
    let jieba = jieba_rs::Jieba::new();
    // One warm-up call: the dictionary is built above, outside the timing.
    let _ = jieba.cut_for_search("预热", true);
    let load_secs = load.elapsed().as_secs_f64();
    let threads = threads.max(1);
    let started = Instant::now();
    let tokens: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let (texts, jieba) = (&texts, &jieba);
                s.spawn(move || texts.iter().skip(k).step_by(threads).map(|t| jieba.cut_for_search(t, true).len() as u64).sum::<u64>())
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("segmenting thread panicked")).sum()
    });
    let secs = started.elapsed().as_secs_f64();
    println!(
        r#"{{"files": {}, "xml_bytes": {xml_bytes}, "text_bytes": {text_bytes}, "tokens": {tokens}, "threads": {threads}, "load_secs": {load_secs}, "secs": {secs}}}"#,
        files.len()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: luntan-bench-floor (tokenize LIST ENCODING | dom LIST ENCODING | jieba LIST THREADS)";
    match args.get(1).map(String::as_str) {
        Some("tokenize") if args.len() == 4 => tokenize(&args[2], &args[3]),
        Some("dom") if args.len() == 4 => dom(&args[2], &args[3]),
        Some("jieba") if args.len() == 4 => jieba(&args[2], args[3].parse().expect(usage)),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
