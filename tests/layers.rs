//! The house keeps its shape (issue 48). The runtime's layers are the folders of
//! `seqid/src` (`guide::architecture` draws them), from the top down: `api`, `insert`,
//! `source`, `items`, `round_trip`, `call`, `counter`, `optimistic`, `state`, `deployment`,
//! `fields`, `base`, `schema`. A module imports only from its own folder and the folders below
//! it, and names every item by the module that defines it: a path
//! `crate::X` names a folder, never a name `lib.rs` re-exports for users. The derive is a
//! pipeline whose modules import one another without a circle.
//!
//! Read from the source text, as `python3 ../shared/tools/modgraph.py` reads it: every
//! `crate::...` path outside comments, in `use` items and in code alike.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The runtime's layer folders, from the bottom up.
const LAYERS: [&str; 14] = [
    "schema",
    "base",
    "named",
    "fields",
    "deployment",
    "state",
    "optimistic",
    "counter",
    "call",
    "round_trip",
    "items",
    "source",
    "insert",
    "api",
];

/// Every `.rs` file under `dir`, but the guide's chapters (documentation only).
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "guide") {
                found.extend(sources(&path));
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// `source` without its comments (a `//` inside a string literal is kept).
fn code_of(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    for line in source.lines() {
        let mut in_string = false;
        let mut previous = ' ';
        let mut cut = line.len();
        for (at, c) in line.char_indices() {
            if c == '"' && previous != '\\' {
                in_string = !in_string;
            }
            if !in_string && c == '/' && previous == '/' {
                cut = at - 1;
                break;
            }
            previous = c;
        }
        code.push_str(&line[..cut]);
        code.push('\n');
    }
    code
}

/// The first segment of every path `crate::...` in `code`, flattening `use crate::{a, b}`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        // `$crate::` is a macro's path to the crate, for users.
        if before.is_some_and(|c| c == '$' || c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let head: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    heads.push(head);
                }
            }
            continue;
        }
        let head: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        heads.push(head);
    }
    heads
}

#[test]
fn each_runtime_folder_imports_only_from_the_folders_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seqid/src");
    let rank: BTreeMap<&str, usize> = LAYERS.iter().enumerate().map(|(r, l)| (*l, r)).collect();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for path in sources(&root) {
        let relative = path.strip_prefix(&root).unwrap();
        let folder = relative.iter().next().unwrap().to_str().unwrap();
        let Some(&own) = rank.get(folder) else {
            // `lib.rs` declares the layers and re-exports for users; `__private.rs` holds
            // the paths the derive's expansion names, above every layer.
            assert!(
                ["lib.rs", "__private.rs"].contains(&folder),
                "a file outside the layer folders: {relative:?}"
            );
            continue;
        };
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        for head in crate_paths(&code) {
            checked += 1;
            match rank.get(head.as_str()) {
                Some(&target) if target <= own => {}
                Some(_) => wrong.push(format!("{relative:?} imports from the higher `{head}`")),
                None => wrong.push(format!(
                    "{relative:?} names `crate::{head}`, not a layer folder: import it from \
                     the module that defines it"
                )),
            }
        }
    }
    assert!(
        checked > 300,
        "only {checked} paths read: the reading went wrong"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_derive_s_modules_import_one_another_without_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seqid-derive/src");
    // Each top-level module (a file, or a folder with its files) and what it imports.
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in sources(&root) {
        let relative = path.strip_prefix(&root).unwrap();
        let module = relative.iter().next().unwrap().to_str().unwrap();
        let module = module.trim_end_matches(".rs").to_owned();
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        let imports = edges.entry(module.clone()).or_default();
        for head in crate_paths(&code) {
            if head != module {
                imports.insert(head);
            }
        }
    }
    assert!(edges.len() > 10, "only {} modules read", edges.len());
    // A depth-first search: a module met again on the way down closes a circle.
    fn visit<'a>(
        module: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|m| *m == module) {
            panic!(
                "a circle of modules: {}",
                path[at..].join(" -> ") + " -> " + module
            );
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for next in edges.get(module).into_iter().flatten() {
            visit(next, edges, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in edges.keys() {
        visit(module, &edges, &mut Vec::new(), &mut done);
    }
}
