//! Which encoding a saved page is in, and decoding it.
//!
//! Chinese forums serve GBK, Big5 and UTF-8, and their declarations are often
//! wrong (a template copied from a GB2312 site, a proxy that rewrote the
//! body but not the header). [`detect`] weighs the evidence in this order:
//!
//! 1. the site file's forced encoding (the user said so);
//! 2. a byte order mark (nothing else can produce one by accident);
//! 3. the HTTP `charset` parameter;
//! 4. a `<meta>` charset in the first 1024 bytes (WHATWG prescan);
//! 5. the site's cached encoding from earlier pages, if the bytes agree;
//! 6. the bytes themselves: UTF-8 if they are, chardetng's guess, trial decodes.
//!
//! A declaration (3–5) is checked against the bytes, and loses to them
//! ([`Detection::reason`] says so) when
//!
//! - the bytes are UTF-8 and the label names something else: at least six
//!   multi-byte characters and at most one malformed sequence per four of
//!   them, since a page can be damaged (a stray byte, a corrupt post) and
//!   still be UTF-8;
//! - more than one in twenty of the characters decoded under the label is a
//!   malformed sequence;
//! - another label on the page, or (for a damaged page or a single-byte
//!   label) another CJK encoding, fits the bytes as well, and chardetng,
//!   shown the page with the malformed sequences cut out, prefers it: Big5
//!   bytes decode "cleanly" as GBK and anything does as windows-1252.
//!
//! A refuted HTTP charset hands over to the `<meta>` label, checked the same
//! way; with every label refuted, or none, the bytes decide: UTF-8, then a
//! CJK encoding they fit, then whatever fits best, but never a single-byte
//! encoding while a CJK one fits nearly as well. Under a label that stands,
//! a few malformed sequences are a damaged page: they become U+FFFD and are
//! counted.
//!
//! The page is decoded once: each encoding tried is decoded with
//! replacement, counting the malformed sequences as it goes, and the text of
//! the one chosen is what [`detect_and_decode`] returns.
//!
//! GBK-family labels (`gb2312`, `gbk`, `x-gbk`, …) decode with GB18030, the
//! superset, so characters outside GB2312 and four-byte sequences survive;
//! encoding_rs's Big5 already is Big5-HKSCS.

use std::fmt;
use std::ops::Range;

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
/// Re-exported so callers can name encodings without depending on encoding_rs.
pub use encoding_rs::Encoding;
use encoding_rs::{DecoderResult, BIG5, GB18030, GBK, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// Where a [`Detection`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The site file's `<encoding>`.
    Forced,
    /// The HTTP `Content-Type` charset.
    Http,
    /// A byte order mark.
    Bom,
    /// A `<meta>` charset.
    Meta,
    /// The encoding cached for the site from earlier pages.
    Cached,
    /// chardetng's guess from the bytes.
    Sniffed,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Forced => "forced",
            Source::Http => "http",
            Source::Bom => "bom",
            Source::Meta => "meta",
            Source::Cached => "cached",
            Source::Sniffed => "sniffed",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The encoding chosen for one page, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// What to decode with (already widened: GBK family → GB18030).
    pub encoding: &'static Encoding,
    pub source: Source,
    /// One short human line, e.g. `meta charset "gb2312" (GBK family → GB18030)`.
    pub reason: String,
    /// The page's own evidence and its bytes agree, so the result is worth
    /// caching for the site. Never true for `Forced` or `Cached`, which
    /// would only cache what is already known.
    pub confident: bool,
}

/// A page's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    /// Malformed byte sequences, each replaced by U+FFFD.
    pub malformed: usize,
}

/// The decoder to use for what a label names: the GBK family widens to
/// GB18030 so that four-byte sequences decode too.
pub fn widen(encoding: &'static Encoding) -> &'static Encoding {
    if encoding == GBK {
        GB18030
    } else {
        encoding
    }
}

fn family_note(named: &'static Encoding) -> &'static str {
    if named == GBK {
        " (GBK family → GB18030)"
    } else {
        ""
    }
}

/// Chooses the encoding of `bytes`; see the module docs for the order.
///
/// `http_content_type` is the whole `Content-Type` header value as served.
/// `site_forced` comes from the site file, `site_cached` from the store.
pub fn detect(bytes: &[u8], http_content_type: Option<&str>, site_forced: Option<&'static Encoding>, site_cached: Option<&'static Encoding>) -> Detection {
    detect_inner(bytes, http_content_type, site_forced, site_cached).0
}

/// [`detect`] then [`decode`], decoding the page only once: the decode that
/// tested the chosen encoding against the bytes is the one returned.
pub fn detect_and_decode(
    bytes: &[u8],
    http_content_type: Option<&str>,
    site_forced: Option<&'static Encoding>,
    site_cached: Option<&'static Encoding>,
) -> (Detection, Decoded) {
    let (d, decoded) = detect_inner(bytes, http_content_type, site_forced, site_cached);
    let decoded = decoded.unwrap_or_else(|| decode(bytes, d.encoding));
    (d, decoded)
}

/// [`detect`], plus the page's text when a trial already decoded it with the
/// chosen encoding.
fn detect_inner(
    bytes: &[u8],
    http_content_type: Option<&str>,
    site_forced: Option<&'static Encoding>,
    site_cached: Option<&'static Encoding>,
) -> (Detection, Option<Decoded>) {
    if let Some(forced) = site_forced {
        let d = Detection {
            encoding: widen(forced),
            source: Source::Forced,
            reason: format!("site file says {}{}", forced.name(), family_note(forced)),
            confident: false,
        };
        return (d, None);
    }
    // A BOM outranks a header: a server cannot know what the file's author
    // wrote, and no legacy text starts with these bytes by accident.
    if let Some((enc, _)) = Encoding::for_bom(bytes) {
        let d = Detection { encoding: enc, source: Source::Bom, reason: format!("{} byte order mark", enc.name()), confident: true };
        return (d, None);
    }
    let mut ev = Evidence::new(bytes);
    let http = http_content_type.and_then(http_charset).and_then(|label| Some((label, Encoding::for_label_no_replacement(label.as_bytes())?)));
    let meta = prescan_meta(bytes).map(|(label, named)| (label, meta_named(named)));
    let mut lies: Vec<String> = Vec::new();
    if let Some((label, named)) = http {
        let rival = meta.as_ref().map(|(_, m)| widen(m));
        if ev.stands(widen(named), rival) {
            let d = ev.kept(named, Source::Http, format!("HTTP charset {label:?}"));
            return ev.finish(d);
        }
        lies.push(format!("HTTP says {label:?}"));
    }
    if let Some((label, named)) = &meta {
        // A header the bytes refute was written by something that never
        // looked at the page; the page's own meta is the next best witness.
        let refuted_http = http.map(|(_, h)| widen(h));
        if refuted_http != Some(widen(named)) && ev.stands(widen(named), None) {
            let mut says = format!("meta charset {label:?}");
            if let Some((h, _)) = http {
                says = format!("HTTP says {h:?} but bytes are not; {says}");
            }
            let d = ev.kept(named, Source::Meta, says);
            return ev.finish(d);
        }
        lies.push(format!("meta says {label:?}"));
    }
    if !lies.is_empty() {
        let (enc, how) = ev.decide();
        let d = Detection {
            encoding: enc,
            source: Source::Sniffed,
            reason: format!("{} but bytes are {}{}", lies.join(" and "), how.note(enc), ev.damage(enc)),
            confident: ev.confident(enc),
        };
        return ev.finish(d);
    }
    if let Some(cached) = site_cached {
        let enc = widen(cached);
        // A damaged page still fits a cached UTF-8 (nothing else passes for
        // it), but a damaged page fits GBK and Big5 alike: only clean ones
        // go by a cached legacy encoding.
        let fits = if enc == UTF_8 { ev.is_utf8() || ev.trial(UTF_8).malformed == 0 } else { !ev.is_utf8() && ev.trial(enc).malformed == 0 };
        if fits {
            let d = Detection {
                encoding: enc,
                source: Source::Cached,
                reason: format!("no charset declared; site's cached {}{}{}", cached.name(), family_note(cached), ev.damage(enc)),
                confident: false,
            };
            return ev.finish(d);
        }
        let (guess, how) = ev.decide();
        let d = Detection {
            encoding: guess,
            source: Source::Sniffed,
            reason: format!("no charset declared and bytes do not fit the site's cached {}; {}{}", cached.name(), how.says(guess), ev.damage(guess)),
            confident: ev.confident(guess),
        };
        return ev.finish(d);
    }
    let (guess, how) = ev.decide();
    let d = Detection {
        encoding: guess,
        source: Source::Sniffed,
        reason: format!("no charset declared; {}{}", how.says(guess), ev.damage(guess)),
        confident: ev.confident(guess),
    };
    ev.finish(d)
}

/// What a `<meta>` label means: a meta tag can only be read if the page is
/// ASCII-compatible, so a UTF-16 label there is wrong by construction
/// (WHATWG says UTF-8), and x-user-defined means windows-1252.
fn meta_named(named: &'static Encoding) -> &'static Encoding {
    if named == UTF_16LE || named == UTF_16BE {
        UTF_8
    } else if named == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        named
    }
}

/// How the bytes alone chose an encoding, for the reason line.
#[derive(Debug, Clone, Copy)]
enum How {
    /// chardetng guessed it from the whole page.
    Guess,
    /// chardetng guessed it once the malformed sequences were cut out.
    GuessWithoutDamage,
    /// It is the only candidate the bytes fit, or they fit it best.
    Fit,
}

impl How {
    /// The end of "…but bytes are …".
    fn note(self, enc: &'static Encoding) -> String {
        match self {
            How::Guess | How::Fit => enc.name().to_owned(),
            How::GuessWithoutDamage => format!("{} (chardetng, malformed sequences cut out)", enc.name()),
        }
    }

    /// The end of "no charset declared; …".
    fn says(self, enc: &'static Encoding) -> String {
        match self {
            How::Guess => format!("chardetng guess {}", enc.name()),
            How::GuessWithoutDamage => format!("chardetng guess {} with malformed sequences cut out", enc.name()),
            How::Fit => format!("bytes are {}", enc.name()),
        }
    }
}

/// Multi-byte encodings a Chinese page may be in besides UTF-8; each is
/// tried when the page's labels fail or a single-byte label is suspect.
const CJK: [&Encoding; 2] = [GB18030, BIG5];

/// UTF-8 fits a page with at most one malformed sequence per this many
/// multi-byte characters (see [`Trial::fits`]).
const UTF8_SHARE: usize = 4;

/// One encoding tried on the page.
struct Trial {
    encoding: &'static Encoding,
    /// The text with U+FFFD for each malformed sequence; dropped once the
    /// trial is hopeless, so that nobody pays for copying mojibake.
    text: Option<String>,
    malformed: usize,
    /// Non-ASCII characters decoded, replacements not counted.
    chars: usize,
    /// Where the malformed sequences are, to cut them out for chardetng.
    bad: Vec<Range<usize>>,
    /// False when the trial stopped early, knowing the bytes do not fit;
    /// the counts are then lower bounds.
    complete: bool,
}

impl Trial {
    fn run(bytes: &[u8], encoding: &'static Encoding) -> Trial {
        if encoding == UTF_8 {
            Trial::utf8(bytes, false)
        } else {
            Trial::decoder(bytes, encoding)
        }
    }

    /// UTF-8 through the standard library: `Utf8Chunks` replaces maximal
    /// subparts exactly as the WHATWG decoder does, and counts without
    /// building a text when the page is not UTF-8 at all.
    ///
    /// With `give_up`, stops as soon as the page cannot fit UTF-8 whatever
    /// follows (the non-ASCII bytes not yet reached make at most half as
    /// many characters): legacy CJK read as UTF-8 breaks on nearly every
    /// character, so this settles a GBK page a few lines in.
    fn utf8(bytes: &[u8], give_up: bool) -> Trial {
        let src = strip_bom(bytes, UTF_8);
        let mut at = bytes.len() - src.len();
        // Non-ASCII bytes not reached yet; counted at the first malformed
        // sequence, since before one there is nothing to give up on.
        let mut unseen: Option<usize> = None;
        let mut text = Some(String::with_capacity(src.len()));
        let (mut malformed, mut chars, mut bad) = (0, 0, Vec::new());
        for chunk in src.utf8_chunks() {
            let valid = chunk.valid();
            chars += valid.bytes().filter(|&b| b >= 0xC0).count();
            at += valid.len();
            if let Some(t) = text.as_mut() {
                t.push_str(valid);
            }
            if let Some(n) = unseen.as_mut() {
                *n -= valid.bytes().filter(|b| !b.is_ascii()).count();
            }
            let invalid = chunk.invalid().len();
            if invalid == 0 {
                continue;
            }
            malformed += 1;
            bad.push(at..at + invalid);
            at += invalid;
            if let Some(t) = text.as_mut() {
                t.push('\u{FFFD}');
            }
            if malformed > 64 && malformed * 20 > chars {
                text = None;
            }
            if give_up {
                let left = *unseen.get_or_insert_with(|| bytes[at..].iter().filter(|b| !b.is_ascii()).count());
                if malformed > ((chars + left / 2) / UTF8_SHARE).max(1) {
                    return Trial { encoding: UTF_8, text: None, malformed, chars, bad, complete: false };
                }
            }
        }
        Trial { encoding: UTF_8, text, malformed, chars, bad, complete: true }
    }

    fn decoder(bytes: &[u8], encoding: &'static Encoding) -> Trial {
        let src = strip_bom(bytes, encoding);
        let mut at = bytes.len() - src.len();
        let mut dec = encoding.new_decoder_without_bom_handling();
        let room = |dec: &encoding_rs::Decoder, n: usize| dec.max_utf8_buffer_length_without_replacement(n).unwrap_or(n.saturating_mul(3)).max(16);
        let mut text = String::with_capacity(room(&dec, src.len()));
        let mut rest = src;
        let (mut malformed, mut bad) = (0, Vec::new());
        loop {
            let (result, read) = dec.decode_to_string_without_replacement(rest, &mut text, true);
            rest = &rest[read..];
            at += read;
            match result {
                DecoderResult::InputEmpty => break,
                DecoderResult::OutputFull => {
                    let more = room(&dec, rest.len());
                    text.reserve(more);
                }
                DecoderResult::Malformed(len, extra) => {
                    // The sequence ends `extra` bytes before what was read.
                    let end = at - usize::from(extra);
                    bad.push(end - usize::from(len)..end);
                    malformed += 1;
                    text.push('\u{FFFD}');
                }
            }
        }
        let chars = text.bytes().filter(|&b| b >= 0xC0).count().saturating_sub(malformed);
        Trial { encoding, text: Some(text), malformed, chars, bad, complete: true }
    }

    /// A wrong label garbles most multi-byte characters; a right one on a
    /// damaged page (a truncated download, one corrupt post) only a few:
    /// at most one in twenty. UTF-8 is allowed one in four, because its
    /// structure is so strict that legacy CJK text read as UTF-8 has more
    /// malformed sequences than valid characters (at least three times as
    /// many on the fixture's GBK and Big5 pages), while a short UTF-8 page
    /// with one corrupt run of bytes can have one in twelve.
    fn fits(&self) -> bool {
        let share = if self.encoding == UTF_8 { UTF8_SHARE } else { 20 };
        self.complete && self.malformed <= (self.chars / share).max(1)
    }

    /// Fits, with enough text that fitting means something: a few
    /// high bytes pair up in any double-byte encoding.
    fn fits_text(&self) -> bool {
        self.chars >= 6 && self.fits()
    }
}

/// The page's bytes and the encodings tried on them so far.
struct Evidence<'a> {
    bytes: &'a [u8],
    trials: Vec<Trial>,
    guess: Option<&'static Encoding>,
}

impl<'a> Evidence<'a> {
    fn new(bytes: &'a [u8]) -> Evidence<'a> {
        Evidence { bytes, trials: Vec::with_capacity(3), guess: None }
    }

    fn trial(&mut self, encoding: &'static Encoding) -> &Trial {
        let at = match self.trials.iter().position(|t| t.encoding == encoding) {
            Some(at) if self.trials[at].complete => at,
            Some(at) => {
                self.trials[at] = Trial::run(self.bytes, encoding);
                at
            }
            None => {
                self.trials.push(Trial::run(self.bytes, encoding));
                self.trials.len() - 1
            }
        };
        &self.trials[at]
    }

    /// UTF-8 with a few multi-byte characters and at most a little damage:
    /// legacy CJK text of that length is practically never valid UTF-8, and
    /// multi-byte UTF-8 often decodes "cleanly" as GB18030 mojibake (any
    /// even-length run of high bytes pairs up), so this is asked first.
    fn is_utf8(&mut self) -> bool {
        if let Some(t) = self.trials.iter().find(|t| t.encoding == UTF_8) {
            return t.fits_text();
        }
        let t = Trial::utf8(self.bytes, true);
        let fits = t.fits_text();
        self.trials.push(t);
        fits
    }

    fn fits_text(&mut self, encoding: &'static Encoding) -> bool {
        self.trial(encoding).fits_text()
    }

    /// chardetng's guess from the whole page, widened.
    fn sniff(&mut self) -> &'static Encoding {
        if let Some(guess) = self.guess {
            return guess;
        }
        // chardetng answers UTF-8 for any valid UTF-8 before weighing
        // anything else; the standard library's check costs a small part of
        // chardetng's pass over the page.
        if std::str::from_utf8(self.bytes).is_ok() {
            self.guess = Some(UTF_8);
            return UTF_8;
        }
        let mut det = EncodingDetector::new(Iso2022JpDetection::Deny);
        det.feed(self.bytes, true);
        let guess = widen(det.guess(None, Utf8Detection::Allow));
        self.guess = Some(guess);
        guess
    }

    /// chardetng's guess once every sequence that is malformed in any of
    /// `among` is cut out: chardetng drops a candidate at its first error,
    /// so on a damaged page it would otherwise guess from what is left.
    fn sniff_without_damage(&mut self, among: &[&'static Encoding]) -> &'static Encoding {
        let mut cut: Vec<Range<usize>> = Vec::new();
        for &e in among {
            cut.extend(self.trial(e).bad.iter().cloned());
        }
        cut.sort_unstable_by_key(|r| r.start);
        let mut det = EncodingDetector::new(Iso2022JpDetection::Deny);
        let mut at = 0;
        for r in cut {
            if r.start > at {
                det.feed(&self.bytes[at..r.start], false);
            }
            at = at.max(r.end);
        }
        det.feed(&self.bytes[at.min(self.bytes.len())..], true);
        widen(det.guess(None, Utf8Detection::Deny))
    }

    /// Whether a declared encoding stands: the bytes fit it (a few
    /// malformed sequences are damage, not a lie), they are not UTF-8 when
    /// it says otherwise, and the text's statistics do not prefer `rival`
    /// (another label on the page) or, when the page is damaged or the label
    /// single-byte, another CJK encoding the bytes fit as well.
    fn stands(&mut self, named: &'static Encoding, rival: Option<&'static Encoding>) -> bool {
        if named == UTF_8 {
            return self.trial(UTF_8).fits();
        }
        if self.is_utf8() {
            return false;
        }
        let t = self.trial(named);
        if !t.fits() {
            return false;
        }
        let suspect = t.malformed > 0 || named.is_single_byte();
        let mut rivals: Vec<&'static Encoding> = rival.into_iter().filter(|&r| r != named && r != UTF_8).collect();
        if suspect {
            for c in CJK {
                if c != named && !rivals.contains(&c) {
                    rivals.push(c);
                }
            }
        }
        rivals.retain(|&r| self.fits_text(r));
        if rivals.is_empty() {
            return true;
        }
        // Nearly every Big5 pair is a GBK pair too, and windows-1252 takes
        // any byte: only the text's statistics tell these apart.
        let mut among = vec![named];
        among.extend(&rivals);
        let preferred = self.sniff_without_damage(&among);
        !rivals.contains(&preferred)
    }

    /// The bytes alone decide: UTF-8 if they are UTF-8 (a little damage
    /// allowed), else chardetng's guess if it is a multi-byte encoding they
    /// fit, else the CJK encoding they fit (chardetng choosing, with the
    /// damage cut out, when they fit several), else chardetng's guess if
    /// they fit it, else the fewest malformed sequences — but never a
    /// single-byte encoding when a CJK one is within one in twenty of it.
    fn decide(&mut self) -> (&'static Encoding, How) {
        let guess = self.sniff();
        if guess == UTF_8 {
            return (UTF_8, How::Guess);
        }
        if self.is_utf8() {
            return (UTF_8, How::Fit);
        }
        if !guess.is_single_byte() && self.fits_text(guess) {
            return (guess, How::Guess);
        }
        let fitting: Vec<&'static Encoding> = CJK.into_iter().filter(|&c| self.fits_text(c)).collect();
        match fitting.as_slice() {
            [] => {}
            [one] => return (one, How::Fit),
            several => {
                let preferred = self.sniff_without_damage(several);
                if several.contains(&preferred) {
                    return (preferred, How::GuessWithoutDamage);
                }
                return (self.fewest_malformed(several), How::Fit);
            }
        }
        if self.trial(guess).fits() {
            return (guess, How::Guess);
        }
        // Nothing fits: noise, or a page damaged past telling.
        let mut candidates = vec![UTF_8];
        candidates.extend(CJK);
        if !candidates.contains(&guess) {
            candidates.push(guess);
        }
        let best = self.fewest_malformed(&candidates);
        if best.is_single_byte() {
            let floor = self.trial(best).malformed;
            let close: Vec<&'static Encoding> = candidates
                .iter()
                .copied()
                .filter(|&c| {
                    !c.is_single_byte() && {
                        let t = self.trial(c);
                        t.malformed <= floor + (t.chars / 20).max(1)
                    }
                })
                .collect();
            if !close.is_empty() {
                return (self.fewest_malformed(&close), How::Fit);
            }
        }
        (best, How::Fit)
    }

    /// The first of `among` with the fewest malformed sequences.
    fn fewest_malformed(&mut self, among: &[&'static Encoding]) -> &'static Encoding {
        let mut best = among[0];
        let mut least = usize::MAX;
        for &e in among {
            let m = self.trial(e).malformed;
            if m < least {
                (best, least) = (e, m);
            }
        }
        best
    }

    /// A declared label that stands.
    fn kept(&mut self, named: &'static Encoding, source: Source, says: String) -> Detection {
        let enc = widen(named);
        let clean = self.trial(enc).malformed == 0;
        Detection { encoding: enc, source, reason: format!("{says}{}{}", family_note(named), self.damage(enc)), confident: clean }
    }

    /// " (N malformed sequences)" when there are any.
    fn damage(&mut self, encoding: &'static Encoding) -> String {
        match self.trial(encoding).malformed {
            0 => String::new(),
            n => format!(" ({n} malformed sequences)"),
        }
    }

    /// Enough non-ASCII text, decoded cleanly, to be worth caching for the site.
    fn confident(&mut self, encoding: &'static Encoding) -> bool {
        let non_ascii = self.bytes.iter().filter(|b| !b.is_ascii()).count();
        non_ascii >= 32 && self.trial(encoding).malformed == 0
    }

    /// The detection, with the text if its trial kept it.
    fn finish(mut self, d: Detection) -> (Detection, Option<Decoded>) {
        let decoded = self.trials.iter().position(|t| t.encoding == d.encoding).and_then(|at| {
            let t = self.trials.swap_remove(at);
            Some(Decoded { text: t.text?, malformed: t.malformed })
        });
        (d, decoded)
    }
}

fn strip_bom<'a>(bytes: &'a [u8], enc: &'static Encoding) -> &'a [u8] {
    match Encoding::for_bom(bytes) {
        Some((bom_enc, len)) if bom_enc == enc => &bytes[len..],
        _ => bytes,
    }
}

/// The `charset` parameter of a `Content-Type` value, unquoted.
pub fn http_charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let v = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        (!v.is_empty()).then_some(v)
    })
}

/// Decodes `bytes` with `encoding`, dropping a BOM that belongs to it.
/// Malformed sequences become U+FFFD and are counted; decoding never fails.
pub fn decode(bytes: &[u8], encoding: &'static Encoding) -> Decoded {
    let t = Trial::run(bytes, encoding);
    match t.text {
        Some(text) => Decoded { text, malformed: t.malformed },
        // Only a hopeless UTF-8 trial drops its text; build it after all.
        None => {
            let src = strip_bom(bytes, encoding);
            Decoded { text: String::from_utf8_lossy(src).into_owned(), malformed: t.malformed }
        }
    }
}

// ---------------------------------------------------------------- meta prescan

fn is_space(b: u8) -> bool {
    matches!(b, 0x09 | 0x0A | 0x0C | 0x0D | 0x20)
}

/// The charset a `<meta>` in the first 1024 bytes declares, following the
/// WHATWG "prescan a byte stream" algorithm: comments and other tags are
/// skipped, `<meta charset>` and `<meta http-equiv="Content-Type"
/// content="…charset=…">` are honoured, labels encoding_rs does not know are
/// passed over. Returns the label as written (lower-cased) and its encoding.
pub fn prescan_meta(bytes: &[u8]) -> Option<(String, &'static Encoding)> {
    let b = &bytes[..bytes.len().min(1024)];
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            // The dashes of "<!--" may close it too: "<!-->" is a whole comment.
            i += 2 + find(&rest[2..], b"-->")? + 3;
            continue;
        }
        if rest.len() > 5 && rest[..5].eq_ignore_ascii_case(b"<meta") && (is_space(rest[5]) || rest[5] == b'/') {
            i += 6;
            if let Some(found) = meta_charset(b, &mut i) {
                return Some(found);
            }
            continue;
        }
        if rest.len() > 1 && rest[0] == b'<' && (rest[1].is_ascii_alphabetic() || (rest[1] == b'/' && rest.get(2).is_some_and(u8::is_ascii_alphabetic))) {
            i += 1;
            while i < b.len() && !is_space(b[i]) && b[i] != b'>' {
                i += 1;
            }
            while get_attribute(b, &mut i).is_some() {}
            i += 1;
            continue;
        }
        if rest.len() > 1 && rest[0] == b'<' && matches!(rest[1], b'!' | b'/' | b'?') {
            i += find(rest, b">")? + 1;
            continue;
        }
        i += 1;
    }
    None
}

/// The attributes of one `<meta>`; `i` is just past `<meta `.
fn meta_charset(b: &[u8], i: &mut usize) -> Option<(String, &'static Encoding)> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset: Option<(String, Option<&'static Encoding>)> = None;
    while let Some((name, value)) = get_attribute(b, i) {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        match name.as_slice() {
            b"http-equiv" => got_pragma |= value.as_slice() == b"content-type",
            b"content" if charset.is_none() => {
                if let Some(label) = charset_from_content(&value) {
                    let label = String::from_utf8_lossy(label).into_owned();
                    let enc = meta_label(&label);
                    charset = Some((label, enc));
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                let label = String::from_utf8_lossy(&value).trim().to_owned();
                let enc = meta_label(&label);
                charset = Some((label, enc));
                need_pragma = Some(false);
            }
            _ => {}
        }
    }
    match need_pragma {
        None => return None,
        Some(true) if !got_pragma => return None,
        _ => {}
    }
    match charset {
        Some((label, Some(enc))) => Some((label, enc)),
        _ => None,
    }
}

/// A label's encoding, forgiving the `<meta charset=gbk/>` that the WHATWG
/// prescan reads as "gbk/".
fn meta_label(label: &str) -> Option<&'static Encoding> {
    Encoding::for_label_no_replacement(label.as_bytes()).or_else(|| Encoding::for_label_no_replacement(label.trim_end_matches('/').as_bytes()))
}

/// WHATWG "extract a character encoding from a meta element" on a `content` value.
fn charset_from_content(v: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    loop {
        let pos = at + find_ci(&v[at..], b"charset")?;
        let mut j = pos + 7;
        while j < v.len() && is_space(v[j]) {
            j += 1;
        }
        if v.get(j) != Some(&b'=') {
            at = pos + 7;
            continue;
        }
        j += 1;
        while j < v.len() && is_space(v[j]) {
            j += 1;
        }
        return match v.get(j) {
            None => None,
            Some(&q) if q == b'"' || q == b'\'' => {
                let end = v[j + 1..].iter().position(|&c| c == q)?;
                Some(&v[j + 1..j + 1 + end])
            }
            Some(_) => {
                let end = v[j..].iter().position(|&c| is_space(c) || c == b';').unwrap_or(v.len() - j);
                (end > 0).then(|| &v[j..j + end])
            }
        };
    }
}

/// WHATWG "get an attribute": name and value lower-cased; `None` at `>` or
/// at the end of input.
fn get_attribute(b: &[u8], i: &mut usize) -> Option<(Vec<u8>, Vec<u8>)> {
    while *i < b.len() && (is_space(b[*i]) || b[*i] == b'/') {
        *i += 1;
    }
    if *i >= b.len() || b[*i] == b'>' {
        return None;
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    loop {
        let c = *b.get(*i)?;
        if c == b'=' && !name.is_empty() {
            *i += 1;
            break;
        }
        if is_space(c) {
            while *i < b.len() && is_space(b[*i]) {
                *i += 1;
            }
            if b.get(*i) != Some(&b'=') {
                return Some((name, value));
            }
            *i += 1;
            break;
        }
        if c == b'/' || c == b'>' {
            return Some((name, value));
        }
        name.push(c.to_ascii_lowercase());
        *i += 1;
    }
    while *i < b.len() && is_space(b[*i]) {
        *i += 1;
    }
    let c = *b.get(*i)?;
    if c == b'"' || c == b'\'' {
        *i += 1;
        loop {
            let d = *b.get(*i)?;
            *i += 1;
            if d == c {
                return Some((name, value));
            }
            value.push(d.to_ascii_lowercase());
        }
    }
    if c == b'>' {
        return Some((name, value));
    }
    loop {
        let d = *b.get(*i)?;
        if is_space(d) || d == b'>' {
            return Some((name, value));
        }
        value.push(d.to_ascii_lowercase());
        *i += 1;
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{BIG5, GBK};

    fn page(meta: &str, body: &str) -> String {
        format!("<!DOCTYPE html><html><head>{meta}<title>test</title></head><body><div>{body}</div></body></html>")
    }

    #[test]
    fn gbk_page_with_meta_gb2312_decodes_beyond_gb2312() {
        // 镕 is GBK but not GB2312; 😀 needs GB18030's four-byte form.
        let text = page(r#"<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=gb2312">"#, "朱镕基说：你好😀");
        let (bytes, _, unmappable) = GB18030.encode(&text);
        assert!(!unmappable);
        let (d, out) = detect_and_decode(&bytes, None, None, None);
        assert_eq!((d.encoding, d.source), (GB18030, Source::Meta));
        assert_eq!(d.reason, r#"meta charset "gb2312" (GBK family → GB18030)"#);
        assert!(d.confident);
        assert_eq!(out.malformed, 0);
        assert_eq!(out.text, text);
    }

    #[test]
    fn big5_page_with_http_charset() {
        let text = page("", "臺灣的論壇，繁體中文內容");
        let (bytes, _, _) = BIG5.encode(&text);
        let (d, out) = detect_and_decode(&bytes, Some("text/html; Charset=\"BIG5\""), None, None);
        assert_eq!((d.encoding, d.source), (BIG5, Source::Http));
        assert_eq!(d.reason, r#"HTTP charset "BIG5""#);
        assert_eq!(out.text, text);
    }

    #[test]
    fn undeclared_utf8_is_sniffed() {
        let text = page("", "没有声明编码的页面，但内容是 UTF-8 的中文。");
        let (d, out) = detect_and_decode(text.as_bytes(), Some("text/html"), None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Sniffed));
        assert!(d.reason.contains("chardetng"), "{}", d.reason);
        assert_eq!(out.text, text);
    }

    #[test]
    fn undeclared_gbk_is_sniffed() {
        let text = page("", "这是一个没有声明编码的简体中文页面，内容足够长，让检测器有把握地判断它的编码。");
        let (bytes, _, _) = GBK.encode(&text);
        let (d, out) = detect_and_decode(&bytes, None, None, None);
        assert_eq!((d.encoding, d.source), (GB18030, Source::Sniffed));
        assert!(d.confident);
        assert_eq!(out.text, text);
    }

    #[test]
    fn bom_wins_and_is_dropped() {
        let text = page(r#"<meta charset="gbk">"#, "带 BOM 的页面");
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(text.as_bytes());
        let (d, out) = detect_and_decode(&bytes, Some("text/html; charset=gbk"), None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Bom));
        assert_eq!(out.text, text);

        // encoding_rs does not encode UTF-16, so build it by hand.
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let (d, out) = detect_and_decode(&utf16, None, None, None);
        assert_eq!(d.encoding, UTF_16LE);
        assert_eq!(out.text, text);
    }

    #[test]
    fn meta_that_lies_loses_to_the_bytes() {
        let text = page(r#"<meta http-equiv=content-type content='text/html;charset=gb2312'>"#, "这个页面声称是 GB2312，其实是 UTF-8。中文");
        let d = detect(text.as_bytes(), None, None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Sniffed));
        assert_eq!(d.reason, r#"meta says "gb2312" but bytes are UTF-8"#);

        // And a UTF-8 label on GBK bytes: invalid UTF-8, chardetng knows better.
        let text = page(r#"<meta charset="utf-8">"#, "这个页面声称是 UTF-8，其实是 GBK 编码的简体中文内容，足够长。");
        let (bytes, _, _) = GBK.encode(&text);
        let (d, out) = detect_and_decode(&bytes, None, None, None);
        assert_eq!(d.encoding, GB18030);
        assert_eq!(d.reason, r#"meta says "utf-8" but bytes are gb18030"#);
        assert_eq!(out.text, text);
    }

    #[test]
    fn cached_encoding_only_without_evidence_and_only_if_it_fits() {
        let gbk_text = page("", "论坛");
        let (gbk, _, _) = GBK.encode(&gbk_text);
        // Too little text for chardetng to be sure; the site's history decides.
        let d = detect(&gbk, None, None, Some(GBK));
        assert_eq!((d.encoding, d.source), (GB18030, Source::Cached));

        // The page declares otherwise: the cache is ignored.
        let big5_text = page(r#"<meta charset="big5">"#, "繁體中文的論壇頁面");
        let (big5, _, _) = BIG5.encode(&big5_text);
        let d = detect(&big5, None, None, Some(GBK));
        assert_eq!((d.encoding, d.source), (BIG5, Source::Meta));

        // No declaration, but the bytes are not the cached encoding's.
        let utf8 = page("", "这个站点改成了 UTF-8");
        let d = detect(utf8.as_bytes(), None, None, Some(GBK));
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Sniffed));
        assert!(d.reason.contains("cached"), "{}", d.reason);
    }

    #[test]
    fn forced_encoding_wins_over_everything() {
        let text = page(r#"<meta charset="utf-8">"#, "强制");
        let d = detect(text.as_bytes(), Some("text/html; charset=utf-8"), Some(GBK), Some(UTF_8));
        assert_eq!((d.encoding, d.source), (GB18030, Source::Forced));
        assert!(!d.confident);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters_and_are_counted() {
        // A UTF-8 page with a corrupt post and a cut-off end: still UTF-8.
        let good = page(r#"<meta charset="utf-8">"#, &"正常的中文内容。".repeat(20));
        let mut bytes = good.as_bytes().to_vec();
        let at = good.find("</div>").unwrap();
        bytes.splice(at..at, b"\xFF\xFE\xC3".iter().copied());
        bytes.extend_from_slice(b"\xE4\xB8");
        let (d, out) = detect_and_decode(&bytes, None, None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Meta));
        assert!(!d.confident, "a damaged page is not cached for the site");
        assert!(d.reason.contains("malformed"), "{}", d.reason);
        assert_eq!(out.malformed, 4);
        assert_eq!(out.text.matches('\u{FFFD}').count(), 4);
        assert!(out.text.starts_with("<!DOCTYPE html>") && out.text.contains("正常的中文内容。"));

        // Garbage with no declaration decodes as something, without panicking.
        let noise: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let (_, out) = detect_and_decode(&noise, None, None, None);
        assert!(!out.text.is_empty());

        // A truncated GBK page: one bad trailing byte, the rest intact.
        let mut gbk = GBK.encode("<meta charset=gbk>中文内容").0.into_owned();
        gbk.push(0xD6);
        let out = decode(&gbk, GB18030);
        assert_eq!((out.text.as_str(), out.malformed), ("<meta charset=gbk>中文内容\u{FFFD}", 1));
        assert_eq!(decode(b"", GB18030), Decoded { text: String::new(), malformed: 0 });
    }

    #[test]
    fn prescan_follows_whatwg() {
        let enc = |s: &str| prescan_meta(s.as_bytes()).map(|(l, e)| (l, e.name()));
        assert_eq!(enc(r#"<meta charset="GB2312">"#), Some(("gb2312".into(), "GBK")));
        assert_eq!(enc("<meta charset = ' big5 ' >"), Some(("big5".into(), "Big5")));
        assert_eq!(enc("<meta charset=GBK/>"), Some(("gbk/".into(), "GBK")));
        assert_eq!(enc("<Meta\tContent=\"text/html; charset = gbk\" http-equiv=\"content-type\">"), Some(("gbk".into(), "GBK")));
        // content without http-equiv does not count; a comment hides a meta.
        assert_eq!(enc(r#"<meta content="text/html; charset=gbk">"#), None);
        assert_eq!(enc(r#"<!-- <meta charset="big5"> --><meta charset="utf-8">"#), Some(("utf-8".into(), "UTF-8")));
        // An attribute value that looks like a tag is not one.
        assert_eq!(enc(r#"<a title="<meta charset=big5>"><meta charset=gbk>"#), Some(("gbk".into(), "GBK")));
        // Unknown labels are passed over; UTF-16 in a meta means UTF-8.
        assert_eq!(enc(r#"<meta charset="klingon"><meta charset="utf-16le">"#), Some(("utf-16le".into(), "UTF-16LE")));
        let d = detect(br#"<meta charset="utf-16le"><p>x</p>"#, None, None, None);
        assert_eq!(d.encoding, UTF_8);
        // Only the first 1024 bytes are looked at.
        let late = format!("{}<meta charset=gbk>", " ".repeat(1024));
        assert_eq!(enc(&late), None);
    }

    #[test]
    fn http_charset_parameter() {
        assert_eq!(http_charset("text/html; charset=GBK"), Some("GBK"));
        assert_eq!(http_charset("text/html;charset=\"utf-8\"; foo=bar"), Some("utf-8"));
        assert_eq!(http_charset("text/html"), None);
        assert_eq!(http_charset("text/html; charset="), None);
        // Unknown labels are no evidence at all.
        let d = detect("中文内容，足够长的一段中文内容".as_bytes(), Some("text/html; charset=x-nonsense"), None, None);
        assert_eq!(d.source, Source::Sniffed);
    }

    const SIMPLIFIED: &str = "这是一个简体中文论坛的帖子，大家在这里讨论电脑、手机和各种数码产品的使用心得。\
        楼主说他的笔记本电脑用了三年，最近开机越来越慢，想换一块固态硬盘，问大家有什么推荐。\
        有人回复说现在的固态硬盘价格已经很便宜了，五百多块钱就能买到一个不错的，装上以后速度会快很多。";
    const TRADITIONAL: &str = "這是一個繁體中文論壇的文章，大家在這裡討論唐詩宋詞與古典文學的閱讀心得。\
        樓主說他最近讀了杜甫的詩集，覺得其中描寫戰亂與離別的作品特別感人，想請教各位應該從哪裡開始研究。\
        有人回覆說可以先讀仇兆鰲的詳註，再參考近代學者的評論，這樣比較容易掌握詩人的生平與時代背景。";

    fn encoded(enc: &'static Encoding, text: &str) -> Vec<u8> {
        let (bytes, _, unmappable) = enc.encode(text);
        assert!(!unmappable, "{} cannot encode the sample", enc.name());
        bytes.into_owned()
    }

    /// `bytes` with `noise` spliced in just before `</div>`.
    fn damaged(mut bytes: Vec<u8>, noise: &[u8]) -> Vec<u8> {
        let at = bytes.windows(6).rposition(|w| w == b"</div>").unwrap();
        bytes.splice(at..at, noise.iter().copied());
        bytes
    }

    #[test]
    fn utf8_page_with_one_stray_byte_stays_utf8() {
        let bytes = damaged(page("", SIMPLIFIED).into_bytes(), b"\xFF");
        for header in [None, Some("text/html"), Some("text/html; charset=gbk"), Some("text/html; charset=iso-8859-1")] {
            let (d, out) = detect_and_decode(&bytes, header, None, None);
            assert_eq!(d.encoding, UTF_8, "{header:?}: {}", d.reason);
            assert!(!d.confident, "a damaged page is not cached for the site");
            assert_eq!(out.malformed, 1);
            assert!(out.text.contains(SIMPLIFIED), "{header:?}");
        }
        let d = detect(&bytes, Some("text/html; charset=gbk"), None, None);
        assert_eq!(d.reason, r#"HTTP says "gbk" but bytes are UTF-8 (1 malformed sequences)"#);
    }

    #[test]
    fn short_utf8_page_with_a_corrupt_run_stays_utf8() {
        // A lone continuation byte, an overlong '/', a surrogate half: six
        // malformed sequences against some seventy characters.
        let text = page("", &SIMPLIFIED[..SIMPLIFIED.find('楼').unwrap()]);
        let bytes = damaged(text.into_bytes(), b"\x80 \xC0\xAF \xED\xA0\x80");
        let (d, out) = detect_and_decode(&bytes, Some("text/html; charset=gbk"), None, Some(GBK));
        assert_eq!(d.encoding, UTF_8, "{}", d.reason);
        assert_eq!(out.malformed, 6);
    }

    #[test]
    fn legacy_cjk_text_never_passes_for_damaged_utf8() {
        for (enc, text) in [(GBK, SIMPLIFIED), (BIG5, TRADITIONAL)] {
            let bytes = encoded(enc, &page("", text));
            let t = Trial::run(&bytes, UTF_8);
            assert!(t.malformed > 2 * t.chars, "{}: {} malformed, {} characters", enc.name(), t.malformed, t.chars);
            assert!(!Evidence::new(&bytes).is_utf8(), "{}", enc.name());
            // Even when it says so.
            let d = detect(&bytes, Some("text/html; charset=utf-8"), None, None);
            assert_eq!(d.encoding, widen(enc), "{}", d.reason);
        }
    }

    #[test]
    fn refuted_http_charset_falls_back_to_the_meta_label() {
        let text = page(r#"<meta http-equiv="Content-Type" content="text/html; charset=gb2312">"#, SIMPLIFIED);
        let bytes = encoded(GBK, &text);
        let (d, out) = detect_and_decode(&bytes, Some("text/html; charset=utf-8"), None, None);
        assert_eq!((d.encoding, d.source), (GB18030, Source::Meta));
        assert_eq!(d.reason, r#"HTTP says "utf-8" but bytes are not; meta charset "gb2312" (GBK family → GB18030)"#);
        assert!(d.confident);
        assert_eq!(out.text, text);

        // The same with a few bytes GBK has no character for: chardetng gives
        // up on GBK at the first of them, the meta label does not.
        let bytes = damaged(bytes, b"\x81\x7F \xFF \x81");
        let (d, out) = detect_and_decode(&bytes, Some("text/html; charset=utf-8"), None, None);
        assert_eq!((d.encoding, d.source), (GB18030, Source::Meta), "{}", d.reason);
        assert_eq!(out.malformed, 3);
        assert!(out.text.contains(SIMPLIFIED));
    }

    #[test]
    fn big5_called_gb2312_is_told_apart_by_its_statistics() {
        // Nearly every Big5 pair is a GBK pair too: GB18030 decodes these
        // bytes without a single error, into nonsense.
        let text = page(r#"<meta charset="big5">"#, TRADITIONAL);
        let bytes = encoded(BIG5, &text);
        assert_eq!(decode(&bytes, GB18030).malformed, 0);
        let (d, out) = detect_and_decode(&bytes, Some("text/html; charset=gb2312"), None, None);
        assert_eq!((d.encoding, d.source), (BIG5, Source::Meta), "{}", d.reason);
        assert_eq!(out.text, text);

        let bytes = damaged(bytes, b"\x80 \xFF \xA1\x30");
        let (d, out) = detect_and_decode(&bytes, Some("text/html; charset=gb2312"), None, None);
        assert_eq!((d.encoding, d.source), (BIG5, Source::Meta), "{}", d.reason);
        assert!(out.text.contains(TRADITIONAL));

        // With no meta to fall back on, the bytes decide the same way.
        let bytes = damaged(encoded(BIG5, &page("", TRADITIONAL)), b"\x80 \xFF \xA1\x30");
        let d = detect(&bytes, Some("text/html; charset=gb2312"), None, None);
        assert_eq!(d.encoding, BIG5, "{}", d.reason);
        assert!(d.reason.starts_with(r#"HTTP says "gb2312" but bytes are Big5"#), "{}", d.reason);
    }

    #[test]
    fn damaged_cjk_page_without_a_label_is_never_windows_1252() {
        for (enc, text, noise) in [(GBK, SIMPLIFIED, &b"\x81\x7F \xFF \x81"[..]), (BIG5, TRADITIONAL, &b"\x80 \xFF \xA1\x30"[..])] {
            let bytes = damaged(encoded(enc, &page("", text)), noise);
            // What chardetng alone would say: it drops a candidate at its first error.
            let mut det = EncodingDetector::new(Iso2022JpDetection::Deny);
            det.feed(&bytes, true);
            assert_ne!(widen(det.guess(None, Utf8Detection::Allow)), widen(enc));
            let (d, out) = detect_and_decode(&bytes, None, None, None);
            assert_eq!((d.encoding, d.source), (widen(enc), Source::Sniffed), "{}", d.reason);
            assert!(!d.confident);
            assert!(out.text.contains(text), "{}", enc.name());
        }
    }

    #[test]
    fn single_byte_label_loses_to_cjk_text_but_not_to_latin_text() {
        let bytes = encoded(GBK, &page("", SIMPLIFIED));
        let d = detect(&bytes, Some("text/html; charset=iso-8859-1"), None, None);
        assert_eq!(d.encoding, GB18030, "{}", d.reason);

        let latin =
            page("", "Le théâtre était plein, et la pièce a été très appréciée par le public. À la fin, élèves et professeurs ont applaudi longuement.");
        let bytes = encoded(WINDOWS_1252, &latin);
        let (d, out) = detect_and_decode(&bytes, Some("text/html; charset=iso-8859-1"), None, None);
        assert_eq!((d.encoding, d.source), (WINDOWS_1252, Source::Http), "{}", d.reason);
        assert_eq!(out.text, latin);
    }

    #[test]
    fn cached_utf8_survives_damage_but_cached_gbk_needs_clean_bytes() {
        let utf8 = damaged(page("", SIMPLIFIED).into_bytes(), b"\xFF");
        let d = detect(&utf8, None, None, Some(UTF_8));
        assert_eq!((d.encoding, d.source), (UTF_8, Source::Cached), "{}", d.reason);

        // A damaged Big5 page fits a cached GBK as well as Big5.
        let big5 = damaged(encoded(BIG5, &page("", TRADITIONAL)), b"\x80 \xFF \xA1\x30");
        let d = detect(&big5, None, None, Some(GBK));
        assert_eq!((d.encoding, d.source), (BIG5, Source::Sniffed), "{}", d.reason);
    }

    #[test]
    fn utf8_verdict_is_the_same_when_the_trial_gives_up_early() {
        let gbk = encoded(GBK, &page("", SIMPLIFIED));
        let early = Trial::utf8(&gbk, true);
        assert!(!early.complete && early.malformed < Trial::utf8(&gbk, false).malformed / 2, "{} malformed", early.malformed);
        let pages = [
            gbk,
            encoded(BIG5, &page("", TRADITIONAL)),
            page("", SIMPLIFIED).into_bytes(),
            damaged(page("", SIMPLIFIED).into_bytes(), b"\x80 \xC0\xAF \xED\xA0\x80"),
            damaged(page("", "短").into_bytes(), b"\xFF\xFF"),
            (0..=255u8).cycle().take(3000).collect(),
        ];
        for bytes in &pages {
            let (early, full) = (Trial::utf8(bytes, true), Trial::utf8(bytes, false));
            assert_eq!(early.fits_text(), full.fits_text(), "{} malformed, {} characters", full.malformed, full.chars);
            assert!(full.complete);
        }
    }

    #[test]
    fn utf8_trial_replaces_exactly_like_the_whatwg_decoder() {
        let inputs: [&[u8]; 8] = [
            b"",
            b"plain ascii",
            "中文".as_bytes(),
            b"\xEF\xBB\xBFbom",
            b"a\x80b\xC0\xAFc\xED\xA0\x80d",
            b"\xF0\x9F\x98",
            b"\xE4\xB8\xE4\xB8\xAD\xFF\xFE",
            b"\xF4\x90\x80\x80 \xC2",
        ];
        for bytes in inputs {
            let (want, had_errors) = UTF_8.decode_with_bom_removal(bytes);
            let t = Trial::run(bytes, UTF_8);
            assert_eq!(t.text.as_deref(), Some(&*want), "{bytes:x?}");
            assert_eq!(t.malformed, want.matches('\u{FFFD}').count(), "{bytes:x?}");
            assert_eq!(t.malformed > 0, had_errors);
            for r in &t.bad {
                assert!(std::str::from_utf8(&bytes[r.clone()]).is_err(), "{bytes:x?} {r:?}");
            }
        }
    }

    #[test]
    fn detect_and_decode_gives_the_text_decode_gives() {
        let pages: Vec<(Vec<u8>, Option<&str>)> = vec![
            (encoded(GBK, &page(r#"<meta charset="gbk">"#, SIMPLIFIED)), None),
            (encoded(BIG5, &page("", TRADITIONAL)), Some("text/html; charset=big5")),
            (damaged(encoded(BIG5, &page(r#"<meta charset="big5">"#, TRADITIONAL)), b"\x80 \xFF"), Some("text/html; charset=gb2312")),
            (damaged(page("", SIMPLIFIED).into_bytes(), b"\xC0\xAF"), Some("text/html; charset=gbk")),
            ((0..=255u8).cycle().take(3000).collect(), None),
        ];
        for (bytes, header) in pages {
            let (d, out) = detect_and_decode(&bytes, header, None, None);
            assert_eq!(out, decode(&bytes, d.encoding), "{}", d.reason);
        }
    }

    /// Every thread page the hostile fixture serves, lying labels and
    /// invalid bytes included, under several seeds: the one the integration
    /// test uses happens to have no short UTF-8 page with invalid bytes.
    /// Each page is tried with its own header, with page 1's (extract uses
    /// the row's), and with the site's encoding cached.
    #[test]
    fn every_hostile_fixture_page_is_read_in_its_real_encoding() {
        use luntan_fixture::{Fixture, FixtureConfig, ForumKind, Hostility};
        let mut wrong = Vec::new();
        let mut traps = 0;
        for seed in 11..14 {
            let hostility = Hostility { seed, mislabel_percent: 30, invalid_bytes_percent: 30, ..Hostility::default() };
            for kind in ForumKind::ALL {
                let fx =
                    Fixture::new(FixtureConfig { seed, threads: 40, boards: 2, forums: vec![kind], hostility: hostility.clone(), ..FixtureConfig::default() });
                for t in fx.truth().forums.iter().flat_map(|f| f.threads.iter()).filter(|t| t.servable()) {
                    let first = fx.get(&t.url_path);
                    for n in 1..=t.pages as usize {
                        let path = match (kind, n) {
                            (_, 1) => t.url_path.clone(),
                            (ForumKind::Discuz, _) => format!("{}&page={n}", t.url_path),
                            (ForumKind::Phpbb, _) => format!("{}&start={}", t.url_path, (n - 1) * kind.thread_page_size()),
                            (ForumKind::Bbs, _) => format!("{}?page={n}", t.url_path),
                            (other, _) => unreachable!("{other:?} is not one of the default forums"),
                        };
                        let page = fx.get(&path);
                        assert_eq!(page.status, 200, "{path}");
                        traps += usize::from(!fx.content_traps(&path).is_empty());
                        for (header, cached) in [(page.content_type, None), (first.content_type, None), (first.content_type, Some(kind.encoding()))] {
                            let d = detect(&page.body, Some(header), None, cached);
                            if d.encoding != widen(kind.encoding()) {
                                wrong.push(format!("{path} {:?} [{header}, cached {:?}]: {}", fx.content_traps(&path), cached.map(Encoding::name), d.reason));
                            }
                        }
                    }
                }
            }
        }
        assert!(traps > 100, "only {traps} pages with traps");
        assert!(wrong.is_empty(), "{} wrong, e.g.:\n{}", wrong.len(), wrong[..wrong.len().min(10)].join("\n"));
    }

    #[test]
    fn valid_utf8_is_what_chardetng_would_say_without_asking_it() {
        let chardetng = |b: &[u8]| {
            let mut det = EncodingDetector::new(Iso2022JpDetection::Deny);
            det.feed(b, true);
            det.guess(None, Utf8Detection::Allow)
        };
        let inputs: [&[u8]; 6] = [
            b"plain ASCII, no markup at all",
            b"",
            "<p>\u{80}\u{9f} C1 controls and \u{fffe} a noncharacter</p>".as_bytes(),
            "<title>清水河畔</title><p>萬里長城 😀</p>".as_bytes(),
            b"\x1b$B escape bytes as in ISO-2022-JP",
            "ÿþ looks like a UTF-16 BOM when encoded in windows-1252".as_bytes(),
        ];
        for b in inputs {
            assert_eq!(Evidence::new(b).sniff(), widen(chardetng(b)), "{:?}", String::from_utf8_lossy(b));
        }
    }
}
