//! Chinese text as every stage compares it: traditional and variant forms
//! folded to simplified, segmented by one jieba per process.

use std::collections::{HashMap, HashSet};
use std::ops::RangeInclusive;
use std::sync::OnceLock;

use ferrous_opencc::config::BuiltinConfig;
use ferrous_opencc::OpenCC;
use jieba_rs::Jieba;

/// `text` with traditional Chinese folded to simplified (fast2s's table),
/// then each variant form OpenCC knows folded to the form its tables give
/// ([`variant`]), so that a Big5 forum's `學習` meets a simplified `学习`
/// and a Hong Kong `綫` or Taiwan `羣` meets `线` and `群`. Everything
/// else, case included, is left as it is: crawl's focus lowercases the
/// whole text before segmenting, search lowercases each word after, and
/// each keeps its own way.
///
/// One char always becomes one char, but not always of the same UTF-8
/// length (a variant may fold to a char outside the BMP, or back into it);
/// a caller that needs offsets into the original maps them
/// (`luntan_search::analysis::fold`).
pub fn fold(text: &str) -> String {
    let folded = fast2s::convert(text);
    let table = variants();
    let Some(first) = folded.char_indices().find(|&(_, c)| table.get(c).is_some()).map(|(i, _)| i) else {
        return folded;
    };
    let mut out = String::with_capacity(folded.len() + 8);
    out.push_str(&folded[..first]);
    out.extend(folded[first..].chars().map(|c| table.get(c).unwrap_or(c)));
    out
}

/// What [`fold`] makes of `c` when fast2s leaves it alone, as it leaves
/// every char outside U+0800..=U+FFFF: its simplified form when `c` is a
/// variant or traditional form fast2s lacks, else `c`.
pub fn variant(c: char) -> char {
    variants().get(c).unwrap_or(c)
}

/// How many chars [`variant`] folds: the size of the table built from
/// OpenCC's.
pub fn variant_count() -> usize {
    variants().len
}

/// Where OpenCC's character tables have their keys (CJK ideographs, the
/// BMP's and the supplementary planes'); only these are probed.
const PROBED: [RangeInclusive<u32>; 3] = [0x3400..=0x4DBF, 0x4E00..=0x9FFF, 0x20000..=0x323AF];

/// The OpenCC conversions to simplified whose single-char results
/// [`variant`] takes, in order of precedence: mainland traditional
/// (TSCharacters), then Taiwan's and Hong Kong's variant forms
/// (TWVariantsRev, HKVariantsRev, each followed by TSCharacters). The
/// Japanese tables are left out: they fold chars that are distinct
/// words in Chinese (`芸` and `藝`, `欠` and `缺`).
const CONFIGS: [BuiltinConfig; 3] = [BuiltinConfig::T2s, BuiltinConfig::Tw2s, BuiltinConfig::Hk2s];

/// Chars mapped to the char they fold to: a dense table for the BMP,
/// where nearly all of them are, so [`fold`] pays one index per char.
struct Variants {
    bmp: Vec<char>,
    astral: HashMap<char, char>,
    len: usize,
}

/// Marks a BMP char with no entry.
const NONE: char = '\0';

impl Variants {
    fn get(&self, c: char) -> Option<char> {
        match self.bmp.get(c as usize) {
            Some(&NONE) => None,
            Some(&f) => Some(f),
            None => self.astral.get(&c).copied(),
        }
    }
}

fn variants() -> &'static Variants {
    static VARIANTS: OnceLock<Variants> = OnceLock::new();
    VARIANTS.get_or_init(|| {
        let mut v = Variants { bmp: vec![NONE; 0x10000], astral: HashMap::new(), len: 0 };
        for (c, f) in variant_pairs().pairs {
            match v.bmp.get_mut(c as usize) {
                Some(slot) => *slot = f,
                None => {
                    v.astral.insert(c, f);
                }
            }
            v.len += 1;
        }
        v
    })
}

/// What OpenCC's tables say, probed char by char, and what [`fold`] takes of it.
pub(crate) struct Probe {
    /// Every char a conversion changed to one other char: (config, char, result).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) opencc: Vec<(BuiltinConfig, char, char)>,
    /// The entries of the variant table: a char and the char it folds to.
    pub(crate) pairs: Vec<(char, char)>,
    /// The chars kept out of the table ([`protected`]).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) protected: HashSet<char>,
}

/// Runs each of [`CONFIGS`] over every [`PROBED`] char, one char a line
/// (no line holds two chars, so no phrase entry can apply), and keeps a
/// result for char `c` only when
///
/// - it is one char (the offsets of search's analysis count chars),
/// - fast2s leaves `c` alone (where both have a mapping fast2s's stands,
///   as it did before the variant table),
/// - `c` is not [protected](protected): never a char of GB2312, the set of
///   ordinary simplified text, nor a simplified form some table folds to.
///   OpenCC's variant tables map plain simplified chars too (Taiwan's
///   `著` to `着`, `么` to `幺`): folding those would merge distinct words.
///
/// The char kept is the result folded by fast2s, so that a variant and its
/// standard form fold to the same char whichever table knows them.
pub(crate) fn variant_pairs() -> Probe {
    let chars: Vec<char> = PROBED.iter().flat_map(|r| r.clone()).filter_map(char::from_u32).collect();
    let mut lines = String::with_capacity(chars.len() * 5);
    for &c in &chars {
        lines.push(c);
        lines.push('\n');
    }
    let mut opencc = Vec::new();
    for config in CONFIGS {
        // The configs and dictionaries are compiled into ferrous-opencc; a test loads each.
        let converter = OpenCC::from_config(config).expect("ferrous-opencc's built-in config loads");
        let converted = converter.convert(&lines);
        for (&c, line) in chars.iter().zip(converted.split('\n')) {
            let mut it = line.chars();
            if let (Some(f), None) = (it.next(), it.next()) {
                if f != c {
                    opencc.push((config, c, f));
                }
            }
        }
    }
    let protected = protected(&chars, &opencc);
    let mut pairs: Vec<(char, char)> = Vec::new();
    let mut seen: HashSet<char> = HashSet::new();
    // In CONFIGS order, so the first config with a result for a char decides.
    for &(_, c, f) in &opencc {
        if protected.contains(&c) || !seen.insert(c) || fast2s_char(c) != c {
            continue;
        }
        let f = fast2s_char(f);
        if f != c {
            pairs.push((c, f));
        }
    }
    Probe { opencc, pairs, protected }
}

/// The chars whose fold must stay themselves: GB2312's hanzi (decoded from
/// every code of its two hanzi levels) and every char a T→S table
/// (fast2s's, OpenCC's) gives as a result.
fn protected(chars: &[char], opencc: &[(BuiltinConfig, char, char)]) -> HashSet<char> {
    let mut set: HashSet<char> = gb2312_hanzi().collect();
    for &c in chars {
        let f = fast2s_char(c);
        if f != c {
            set.insert(f);
        }
    }
    set.extend(opencc.iter().map(|&(_, _, f)| fast2s_char(f)));
    set
}

/// GB2312's hanzi: rows 16–87 (lead bytes 0xB0–0xF7), 94 cells each.
pub(crate) fn gb2312_hanzi() -> impl Iterator<Item = char> {
    (0xB0u8..=0xF7).flat_map(|lead| (0xA1u8..=0xFE).map(move |trail| [lead, trail])).filter_map(|bytes| {
        let (text, had_errors) = encoding_rs::GBK.decode_without_bom_handling(&bytes);
        let mut it = text.chars();
        match (it.next(), it.next(), had_errors) {
            // The last cells of row 55 are unassigned in GB2312; GBK puts other chars there.
            (Some(c), None, false) if !(bytes[0] == 0xD7 && bytes[1] >= 0xFA) => Some(c),
            _ => None,
        }
    })
}

/// fast2s's fold of one char on its own.
fn fast2s_char(c: char) -> char {
    let mut buf = [0u8; 4];
    let folded = fast2s::convert(c.encode_utf8(&mut buf));
    let mut it = folded.chars();
    match (it.next(), it.next()) {
        (Some(f), None) => f,
        _ => c,
    }
}

/// jieba's default dictionary, shared by every caller in the process.
/// Building it costs about 0.1 s and 45 MB, so it is built once, on first
/// use: a crawl whose sites ask for no focus never builds it.
pub fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_folds_traditional_and_nothing_else() {
        assert_eq!(fold("電腦軟體很貴，學習資料"), "电脑软体很贵，学习资料");
        let other = "学习 iPhone15 ΣΟΦΙΑ 😀 カタカナ ";
        assert_eq!(fold(other), other);
    }

    #[test]
    fn variants_fold_with_their_standard_forms() {
        // Taiwan's and Hong Kong's forms fast2s lacks, both ways round.
        assert_eq!(fold("羣峯"), "群峰");
        assert_eq!(fold("群峰"), "群峰");
        assert_eq!((variant('羣'), variant('群'), variant('𠀀')), ('群', '群', '𠀀'));
        // Taiwan's 著 and 么 are OpenCC variants of 着 and 幺, but plain simplified words here.
        assert_eq!(fold("著作 什么"), "著作 什么");
    }

    /// Every single-char entry of the OpenCC conversions the table is made
    /// from, each checked against [`fold`]: the variant and the form OpenCC
    /// gives fold alike, unless the variant is a plain simplified char (kept,
    /// so that no two simplified words merge) or fast2s folds it otherwise.
    #[test]
    fn every_entry_of_opencc_s_tables_folds_with_its_standard_form() {
        let probe = variant_pairs();
        let gb2312: HashSet<char> = gb2312_hanzi().collect();
        assert_eq!(gb2312.len(), 6763);
        for config in CONFIGS {
            assert!(probe.opencc.iter().filter(|e| e.0 == config).count() > 30, "{config:?}");
        }
        let (mut simplified_kept, mut fast2s_kept, mut wrong) = (Vec::new(), Vec::new(), Vec::new());
        for &(config, c, f) in &probe.opencc {
            if fold(&c.to_string()) == fold(&f.to_string()) {
                continue;
            }
            if probe.protected.contains(&c) {
                simplified_kept.push(format!("{c}{f}"));
            } else if fast2s_char(c) != c {
                fast2s_kept.push(format!("{c}{f}"));
            } else {
                wrong.push(format!("{config:?} {c}→{f}"));
            }
        }
        eprintln!(
            "{} OpenCC entries, {} in the table; kept as simplified: {} {:?}; fast2s's fold kept: {} {:?}",
            probe.opencc.len(),
            probe.pairs.len(),
            simplified_kept.len(),
            simplified_kept,
            fast2s_kept.len(),
            fast2s_kept
        );
        assert!(wrong.is_empty(), "{wrong:?}");
        // The table is what fold applies, each entry idempotent, no entry a plain simplified char.
        assert_eq!(probe.pairs.len(), variant_count());
        assert!(variant_count() > 1000, "{}", variant_count());
        for &(c, f) in &probe.pairs {
            assert_eq!(fold(&c.to_string()), f.to_string(), "{c}");
            assert_eq!(fold(&f.to_string()), f.to_string(), "{c}→{f}");
            assert!(!gb2312.contains(&c), "{c}");
        }
    }

    #[test]
    fn plain_simplified_text_folds_as_before() {
        // GB2312's every hanzi, and real simplified reviews: the variant
        // table changes none of their plain simplified chars (fast2s alone
        // decides, as before).
        for c in gb2312_hanzi() {
            assert_eq!(variant(c), c, "{c}");
        }
        let reviews = include_str!("../../luntan-fixture/corpus/reviews.txt");
        let (before, after) = (fast2s::convert(reviews), fold(reviews));
        let mut changed: Vec<(char, char)> = before.chars().zip(after.chars()).filter(|(a, b)| a != b).collect();
        changed.sort_unstable();
        changed.dedup();
        // One variant a reviewer typed, 凈 for 净, is all that changes.
        assert_eq!(changed, [('凈', '净')], "{} chars", reviews.chars().count());
    }

    #[test]
    fn fold_is_idempotent_on_every_char() {
        let mut all = String::new();
        for c in (0..=0x323AFu32).filter_map(char::from_u32) {
            let once = fold(c.encode_utf8(&mut [0; 4]));
            assert_eq!(fold(&once), once, "{c:?}");
            assert_eq!(once.chars().count(), 1, "{c:?}");
            if c as u32 >= 0x3400 {
                all.push(c);
            }
        }
        let once = fold(&all);
        assert_eq!(fold(&once), once);
    }

    /// Fold throughput on the shared corpus (simplified reviews and
    /// traditional poems, 8.7 MB): `cargo test -p luntan-text --release --
    /// --ignored --nocapture fold_throughput`.
    #[test]
    #[ignore]
    fn fold_throughput() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
        let mut text = String::new();
        for name in ["reviews-simplified.txt", "tang-poems-traditional.tsv"] {
            text.push_str(&std::fs::read_to_string(dir.join(name)).unwrap());
        }
        let t = std::time::Instant::now();
        let _ = variants();
        eprintln!("variant table: {} entries, built in {:.0} ms", variant_count(), t.elapsed().as_secs_f64() * 1e3);
        let mb = text.len() as f64 / 1e6;
        let time = |name: &str, f: &dyn Fn(&str) -> String| {
            let t = std::time::Instant::now();
            let mut n = 0;
            for _ in 0..3 {
                n += f(&text).len();
            }
            let s = t.elapsed().as_secs_f64() / 3.0;
            eprintln!("{name}: {:.1} MB/s ({mb:.1} MB in {:.0} ms, {n} bytes out)", mb / s, s * 1e3);
        };
        time("fast2s alone (before)", &|t| fast2s::convert(t));
        time("fold (fast2s + variants)", &|t| fold(t));
        let reviews = std::fs::read_to_string(dir.join("reviews-simplified.txt")).unwrap();
        let (before, after) = (fast2s::convert(&reviews), fold(&reviews));
        let diff = |x: &str, y: &str| {
            let pairs: Vec<(char, char)> = x.chars().zip(y.chars()).filter(|(a, b)| a != b).collect();
            let mut distinct = pairs.clone();
            distinct.sort_unstable();
            distinct.dedup();
            (pairs.len(), distinct.into_iter().map(|(a, b)| format!("{a}{b}")).collect::<Vec<_>>().join(" "))
        };
        let ((by_fast2s, which_fast2s), (by_variants, which_variants)) = (diff(&reviews, &before), diff(&before, &after));
        eprintln!(
            "simplified reviews: {} chars; fast2s changes {by_fast2s} ({which_fast2s}); the variant table {by_variants} more ({which_variants})",
            reviews.chars().count()
        );
    }

    #[test]
    fn jieba_is_built_once() {
        assert!(std::ptr::eq(jieba(), jieba()));
        let words: Vec<&str> = jieba().cut("考研复试经验", true).iter().map(|t| t.word).collect();
        assert!(words.contains(&"考研"), "{words:?}");
    }
}
