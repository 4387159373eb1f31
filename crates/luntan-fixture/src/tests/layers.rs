//! The modules stay in layers (see the crate doc): each names only modules
//! in layers below its own, so no two can import each other in a loop.
//! Read off the source text, so a new upward path fails here rather than in
//! a review: every `crate::` path outside comments counts, in a `use` or
//! inline, and a name the crate root re-exports counts as its module's.
//! Unit tests count too: a test that needs a higher layer belongs there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first, numbered from 1 as in the crate doc. Every file in `src/`
/// is listed, the crate root and the test modules at the top.
const LAYERS: &[&[&str]] = &[
    &["text", "corpus"],
    &["kind"],
    &["hostile", "topics"],
    &["config"],
    &["model"],
    &["growth", "pages", "search", "microblog", "news"],
    &["sites", "widget", "socket"],
    &["server"],
    &["politeness"],
    &["lib", "main", "tests"],
];

fn layer(module: &str) -> usize {
    1 + LAYERS.iter().position(|l| l.contains(&module)).unwrap_or_else(|| panic!("{module} has no layer"))
}

/// `src/<module>.rs` and, for a module with a directory, every file under `src/<module>/`.
fn sources(src: &Path, module: &str) -> Vec<PathBuf> {
    let mut out = vec![src.join(format!("{module}.rs"))];
    let mut dirs = vec![src.join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out
}

/// The source without comment lines (doc links may point anywhere).
fn code(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The first segment of every `crate::` path: `crate::model::Fixture` and
/// `crate::{model::Fixture, text}` name `model` (and `text`).
fn named(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, m) in code.match_indices("crate::") {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + m.len()..];
        let Some(group) = rest.strip_prefix('{') else {
            out.insert(ident(rest).to_owned());
            continue;
        };
        let mut depth = 0;
        let mut item = String::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.insert(ident(item.trim_start()).to_owned());
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        out.insert(ident(item.trim_start()).to_owned());
    }
    out.remove("");
    out
}

/// What the crate root re-exports, by name: `pub use model::{Fixture, Truth};`
/// maps `Fixture` and `Truth` to `model`.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in code(lib).lines() {
        let Some(path) = line.trim().strip_prefix("pub use ") else { continue };
        let Some((module, items)) = path.trim_end_matches(';').split_once("::") else { continue };
        for item in items.trim_start_matches('{').trim_end_matches('}').split(',') {
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if !name.is_empty() {
                out.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    out
}

#[test]
fn modules_name_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = LAYERS.iter().flat_map(|l| l.iter().map(|m| m.to_string())).collect();
    assert_eq!(files, listed, "every file in src/ needs a layer in LAYERS");
    let reexported = reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut wrong = Vec::new();
    let mut edges = 0;
    for module in &files {
        for file in sources(&src, module) {
            let shown = file.strip_prefix(&src).unwrap().display().to_string();
            for name in named(&code(&std::fs::read_to_string(&file).unwrap())) {
                let to = if files.contains(&name) {
                    name
                } else if let Some(owner) = reexported.get(&name) {
                    owner.clone()
                } else {
                    wrong.push(format!("{shown}: names {name} through crate::, neither a module nor re-exported by lib.rs"));
                    continue;
                };
                if to == *module {
                    continue;
                }
                edges += 1;
                if layer(&to) >= layer(module) {
                    wrong.push(format!("{shown}: {module} (layer {}) names {to} (layer {})", layer(module), layer(&to)));
                }
            }
        }
    }
    assert!(edges > 30, "only {edges} paths between modules found: is the scan still reading the source?");
    assert!(wrong.is_empty(), "a module names one in its own or a higher layer:\n{}", wrong.join("\n"));
}

#[test]
fn the_scan_sees_uses_inline_paths_and_groups_but_not_comments() {
    let src = "use crate::model::Fixture;\nlet x = crate::text::esc(y);\nuse crate::{kind::ForumKind, Truth, topics::{self, Topics}};\n  /// see crate::server\npub(crate) fn f() {}\n";
    let got: Vec<String> = named(&code(src)).into_iter().collect();
    assert_eq!(got, ["Truth", "kind", "model", "text", "topics"]);
    let lib = "pub use kind::ForumKind;\npub use model::{Fixture, Truth as T};\n";
    assert_eq!(
        reexports(lib).into_iter().collect::<Vec<_>>(),
        [("Fixture".to_owned(), "model".to_owned()), ("ForumKind".into(), "kind".into()), ("T".into(), "model".into())]
    );
}
