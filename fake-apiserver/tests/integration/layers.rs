//! The source tree's layers import one way: `http` → `registry` → `rules` → `store` (see the crate
//! documentation). A module of a lower layer may not name a higher one (`crate::http::…` from
//! `src/registry/`, say), so the circle the flat modules had (server ↔ handlers ↔ list ↔ watch)
//! cannot come back. The shared foundation modules every layer uses (`error.rs`, `resource.rs`)
//! count as the bottom layer.
//!
//! The check reads the source files: every `crate::<name>` path outside comments, `use` lines and
//! inline paths alike, including `crate::{a, b}` groups. A name is resolved to a layer by its
//! first segment, or, for the items and old module paths that `lib.rs` re-exports at the crate
//! root (`pub use http::server::{FakeApiServerBuilder, …}`), by where `lib.rs` takes it from.
//! The old module paths (`crate::semantics`, `crate::list`, …) are kept in `lib.rs` only for code
//! outside the crate and for branches written before the move; inside the crate they are refused.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first; a module may name its own layer and those before it.
const LAYERS: &[&str] = &["store", "rules", "registry", "http"];

/// Root files that count as a layer: the foundation every layer uses sits at the bottom.
const ROOT_FILES: &[(&str, &str)] = &[("error.rs", "store"), ("resource.rs", "store")];

/// The imports against the direction that are accepted, each with its reason: (file under
/// `src/`, the `crate::` path it names, up to the second segment).
const ALLOWED: &[(&str, &str, &str)] = &[(
    "error.rs",
    "crate::rules::validation",
    "a 422 Status is built from validation causes (`Cause`, `InvalidError`); the causes are \
         the rules layer's vocabulary, the Status the answer every layer returns",
)];

/// The `.rs` files under `dir`, recursively, as paths relative to `root`.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(root).expect("under src").to_path_buf());
        }
    }
}

/// The file's layer, if it has one.
fn layer_of(file: &Path) -> Option<&'static str> {
    let first = file.components().next()?.as_os_str().to_str()?;
    if let Some(layer) = LAYERS.iter().find(|l| **l == first) {
        return Some(layer);
    }
    ROOT_FILES
        .iter()
        .find(|(name, _)| *name == first)
        .map(|(_, layer)| *layer)
}

fn rank(layer: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| *l == layer)
        .unwrap_or_else(|| panic!("{layer} is not a layer"))
}

/// The source without comments: `//` to the end of a line (doc comments included) and `/* */`.
/// String literals are skipped over, so a `//` inside one (a URL) does not end the line early.
fn strip_comments(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            b'r' if (i == 0 || !is_ident(char::from(bytes[i - 1])))
                && matches!(bytes.get(i + 1), Some(b'"' | b'#')) =>
            {
                // A raw string `r#"…"#`: it ends at a quote followed by as many `#`.
                let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
                if bytes.get(i + 1 + hashes) != Some(&b'"') {
                    out.push('r'); // `r#ident`
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                let end = source[body..]
                    .find(&close)
                    .map_or(bytes.len(), |at| body + at + close.len());
                out.push_str("\"\"");
                i = end;
            }
            b'"' => {
                // Keep the literal's quotes, drop its contents (no path is written in a string).
                out.push('"');
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                out.push('"');
                i += 1;
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') || bytes.get(i + 1) == Some(&b'\\') => {
                // A char literal ('"', '\n'); lifetimes ('a) are left alone.
                out.push_str("' '");
                i += 1;
                while i < bytes.len() && bytes[i] != b'\'' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => {
                let ch = source[i..].chars().next().expect("in bounds");
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths under `crate::` that `code` names, each as its first two segments
/// (`crate::registry::semantics`), with `crate::{a::b, c}` groups split.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let preceded_by_ident = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| is_ident(c) || c == '$');
        rest = &rest[at + "crate::".len()..];
        if preceded_by_ident {
            continue; // `$crate::` or part of a longer name
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                paths.push(segments(item.trim()));
            }
        } else {
            paths.push(segments(rest));
        }
    }
    paths.retain(|p| !p.is_empty());
    paths
}

/// Up to two `::`-separated identifiers at the start of `s`.
fn segments(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while out.len() < 2 {
        let len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if len == 0 {
            break;
        }
        out.push(rest[..len].to_string());
        match rest[len..].strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    out
}

/// The names `lib.rs` re-exports from a layer (`pub use http::{list, …}`,
/// `pub use rules::selectors as selector`), each with the layer it comes from.
fn root_reexports(lib: &str) -> BTreeMap<String, &'static str> {
    let mut names = BTreeMap::new();
    let code = strip_comments(lib);
    for statement in code.split(';') {
        // An attribute may come first (`#[allow(unused_imports)] pub(crate) use …`).
        let Some(path) = ["pub use ", "pub(crate) use "]
            .iter()
            .find_map(|lead| statement.find(lead).map(|at| &statement[at + lead.len()..]))
        else {
            continue;
        };
        let Some(layer) = LAYERS.iter().find(|l| path.starts_with(&format!("{l}::"))) else {
            continue;
        };
        let items = match (path.find('{'), path.rfind('}')) {
            (Some(open), Some(close)) => path[open + 1..close].to_string(),
            _ => path.rsplit("::").next().unwrap_or_default().to_string(),
        };
        for item in items.split(',') {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            let name = name.rsplit("::").next().unwrap_or(name);
            if !name.is_empty() && name != "self" {
                names.insert(name.to_string(), *layer);
            }
        }
    }
    names
}

/// Whether a root re-export is an old module path (a module's name is lower case).
fn is_old_module_path(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
}

struct Violation {
    file: PathBuf,
    path: String,
    why: String,
}

fn violations(src: &Path) -> Vec<Violation> {
    let lib = fs::read_to_string(src.join("lib.rs")).expect("read lib.rs");
    let reexports = root_reexports(&lib);

    let mut files = Vec::new();
    rust_files(src, src, &mut files);
    let mut found = Vec::new();
    for file in files {
        if file == Path::new("lib.rs") {
            continue;
        }
        let source = fs::read_to_string(src.join(&file)).expect("read source");
        let own_rank = layer_of(&file).map(rank);
        for path in crate_paths(&strip_comments(&source)) {
            let first = path[0].as_str();
            let shown = format!("crate::{}", path.join("::"));
            let target = if let Some(layer) = LAYERS.iter().find(|l| **l == first) {
                Some(*layer)
            } else if let Some(layer) = reexports.get(first) {
                if is_old_module_path(first) {
                    found.push(Violation {
                        file: file.clone(),
                        path: shown.clone(),
                        why: format!("old module path: write crate::{layer}::{first}"),
                    });
                }
                Some(*layer)
            } else {
                None
            };
            let (Some(own), Some(target)) = (own_rank, target) else {
                continue;
            };
            if rank(target) <= own {
                continue;
            }
            let allowed = ALLOWED.iter().any(|(f, p, _)| {
                Path::new(f) == file && (shown == *p || shown.starts_with(&format!("{p}::")))
            });
            if !allowed {
                found.push(Violation {
                    file: file.clone(),
                    path: shown,
                    why: format!(
                        "the {} layer may not import the {target} layer above it",
                        layer_of(&file).unwrap_or_default()
                    ),
                });
            }
        }
    }
    found
}

#[test]
fn lower_layers_do_not_import_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let reexports = root_reexports(&fs::read_to_string(src.join("lib.rs")).expect("read lib.rs"));
    assert!(
        reexports.get("semantics") == Some(&"registry")
            && reexports.get("handlers") == Some(&"http")
            && reexports.get("FakeApiServerBuilder") == Some(&"http"),
        "lib.rs's re-exports were not understood: {reexports:?}"
    );
    let found = violations(&src);
    let report: Vec<String> = found
        .iter()
        .map(|v| format!("src/{}: {} ({})", v.file.display(), v.path, v.why))
        .collect();
    assert!(
        report.is_empty(),
        "imports against the layers (http → registry → rules → store); move the code to the \
         right layer, or, if it must stay, add it to ALLOWED with the reason:\n{}",
        report.join("\n")
    );
}

#[test]
fn every_allowed_exception_is_still_needed() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (file, path, _) in ALLOWED {
        let source = fs::read_to_string(src.join(file)).expect("an allowed file exists");
        let named = crate_paths(&strip_comments(&source))
            .iter()
            .any(|p| format!("crate::{}", p.join("::")).starts_with(path));
        assert!(
            named,
            "src/{file} no longer names {path}: remove it from ALLOWED"
        );
    }
}

#[test]
fn the_layers_exist() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for layer in LAYERS {
        assert!(
            src.join(layer).join("mod.rs").is_file(),
            "src/{layer}/mod.rs is missing: the check would pass vacuously"
        );
    }
}

#[test]
fn the_scanner_sees_what_it_must() {
    let code = strip_comments(
        "use crate::http::list; // crate::store::x\n\
         /* crate::rules */ let s = \"crate::registry\";\n\
         use crate::{registry::semantics, store};\n\
         let x = crate::rules::validation::go_quote(c); let c = '\"'; $crate::http::x\n\
         let j = r#\"{\"a\": \"crate::http\"}\"#; let k: &'static str = crate::store::k;\n",
    );
    let paths: Vec<String> = crate_paths(&code).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "http::list",
            "registry::semantics",
            "store",
            "rules::validation",
            "store::k"
        ]
    );

    let lib =
        "pub use http::{list, request};\npub use rules::{selectors as selector, validation};\n\
               pub use http::server::{FakeApiServerBuilder, MAX_BODY_BYTES};\n\
               pub use context::FakeApiServer;\n#[allow(unused_imports)]\n\
               pub(crate) use store::value_eq;\n";
    let names = root_reexports(lib);
    assert_eq!(names.get("list"), Some(&"http"));
    assert_eq!(names.get("selector"), Some(&"rules"));
    assert_eq!(names.get("validation"), Some(&"rules"));
    assert_eq!(names.get("MAX_BODY_BYTES"), Some(&"http"));
    assert_eq!(names.get("value_eq"), Some(&"store"));
    assert_eq!(names.get("FakeApiServer"), None);
}

#[test]
fn a_lower_layer_naming_a_higher_one_is_found() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    for layer in LAYERS {
        fs::create_dir(src.join(layer)).expect("layer dir");
        fs::write(src.join(layer).join("mod.rs"), "").expect("mod.rs");
    }
    fs::write(
        src.join("lib.rs"),
        "pub use registry::semantics;\npub use http::server::FakeApiServerBuilder;\n",
    )
    .expect("lib.rs");
    fs::write(
        src.join("store/mod.rs"),
        "use crate::http::server::x;\nuse crate::store::y;\n",
    )
    .expect("store");
    fs::write(
        src.join("rules/mod.rs"),
        "fn f() { crate::semantics::g(); let b = crate::FakeApiServerBuilder::default(); }\n",
    )
    .expect("rules");
    fs::write(src.join("http/mod.rs"), "use crate::registry::semantics;\n").expect("http");
    let found: Vec<(String, String)> = violations(src)
        .into_iter()
        .map(|v| (v.file.display().to_string(), v.path))
        .collect();
    assert_eq!(
        found,
        [
            (
                "rules/mod.rs".to_string(),
                "crate::semantics::g".to_string()
            ),
            (
                "rules/mod.rs".to_string(),
                "crate::semantics::g".to_string()
            ),
            (
                "rules/mod.rs".to_string(),
                "crate::FakeApiServerBuilder::default".to_string()
            ),
            (
                "store/mod.rs".to_string(),
                "crate::http::server".to_string()
            ),
        ]
    );
}
