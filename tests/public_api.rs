//! The public API of seqid, listed in `seqid/public-api.txt` and checked against the source
//! (issue 56): every change of the public surface, a name added, moved or removed, a
//! signature, a field, a variant or an impl changed, shows in review as a diff of that file.
//! After such a change, regenerate it and read the diff:
//!
//! ```text
//! SEQID_PUBLIC_API=overwrite cargo test --workspace --test public_api
//! ```
//!
//! cargo-public-api reads rustdoc's JSON, which needs a nightly toolchain; this reads the
//! source instead. It parses every module of `seqid/src` with syn, from `lib.rs` through its
//! `mod` items (`#[cfg(test)]` items left out), expands the crate's own `macro_rules!` (the
//! actions' setters and several of their types are macro-made), resolves what each module
//! names (`use` chains, globs, renames, `crate::`, `self::` and `super::` paths, the
//! workspace's proc-macro crates for the derives), and walks the public paths from the crate
//! root. Each item is listed once, at its shortest public path (its other paths point
//! there), with the impls found for it anywhere in the crate, each impl's self type read
//! through its own module's names; the paths in signatures are rewritten to the public ones,
//! so that moving a type shows wherever it is named.
//!
//! What the walk cannot follow fails the test with a message naming it, rather than being
//! left out: a `use` (public or not) it cannot resolve, a `macro_rules!` invocation it
//! cannot expand, a `#[path]` module, a glob re-export of another crate. Another crate's
//! macros among a public module's items are listed as not seen: what they make is not
//! known. The walk is not a compiler: it trusts that the crate builds (the test links it).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{
    Attribute, Fields, ImplItem, Item, ItemImpl, Meta, Token, TraitItem, Type, UseTree, Visibility,
};

/// What `SEQID_PUBLIC_API` is set to for the test to write the listing instead of checking it.
const OVERWRITE: &str = "overwrite";

/// The command that regenerates the listing, as the header and the failures say it.
const REGENERATE: &str = "SEQID_PUBLIC_API=overwrite cargo test --workspace --test public_api";

/// The module whose items are the derive's plumbing: listed by path only.
const PRIVATE: &str = "__private";

/// The module of documentation chapters: its path only.
const GUIDE: &str = "guide";

#[test]
fn listing_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = read_sources(&root.join("seqid/src"));
    let proc_macros = proc_macro_crates(root);
    let listing = generate("seqid", &files, &proc_macros).unwrap_or_else(|problems| {
        panic!(
            "the public API cannot be listed: the walk of tests/public_api.rs cannot follow \
             what these name (extend the walk, or write them in a way it follows):\n{}",
            problems.join("\n")
        )
    });
    println!(
        "names at the root: {}, public items in all: {}, methods of the trait Document: {}",
        listing.root_names, listing.items, listing.document_methods
    );
    // The bounds issue 56 set for the first publish: raising one is a decision to make in
    // review, not a side effect of a change.
    assert!(
        listing.root_names <= 25 && listing.items <= 55 && listing.document_methods <= 14,
        "the public surface outgrew its bounds (names at the root ≤ 25, public items ≤ 55, \
         methods of Document ≤ 14): {} names, {} items, {} methods",
        listing.root_names,
        listing.items,
        listing.document_methods
    );
    let path = root.join("seqid/public-api.txt");
    if std::env::var("SEQID_PUBLIC_API").as_deref() == Ok(OVERWRITE) {
        std::fs::write(&path, &listing.text).unwrap();
        return;
    }
    let Ok(current) = std::fs::read_to_string(&path) else {
        panic!("seqid/public-api.txt cannot be read; generate it:\n    {REGENERATE}");
    };
    if let Some(difference) = differences(&current, &listing.text) {
        panic!(
            "seqid/public-api.txt is not the public API of the source:\n{difference}\n\
             If the change is meant, regenerate the file and review its diff:\n    {REGENERATE}"
        );
    }
}

/// Every `.rs` file under `dir`, by its path relative to `dir` (`/`-separated).
fn read_sources(dir: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &str, found: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            if path.is_dir() {
                walk(&path, &format!("{relative}/"), found);
            } else if name.ends_with(".rs") {
                found.insert(relative, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(dir, "", &mut found);
    found
}

/// The workspace's proc-macro crates (a `Cargo.toml` with `proc-macro = true` in a folder of
/// the root), by crate name: their `lib.rs`, read for the macros they define, so that a
/// `pub use` of one is listed as the derive it is.
fn proc_macro_crates(root: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let proc_macro = manifest
            .lines()
            .any(|line| line.replace(' ', "") == "proc-macro=true");
        if let (true, Ok(lib)) = (proc_macro, std::fs::read_to_string(dir.join("src/lib.rs"))) {
            let name = dir.file_name().unwrap().to_string_lossy().replace('-', "_");
            found.insert(name, lib);
        }
    }
    found
}

/// Where the listing and the file differ, for the failure: the first line that differs, and
/// the lines found only in one of them (by line number, at most 40 a side); `None` when they
/// are the same.
fn differences(file: &str, source: &str) -> Option<String> {
    if file == source {
        return None;
    }
    let (file_lines, source_lines): (Vec<&str>, Vec<&str>) =
        (file.lines().collect(), source.lines().collect());
    let first = (0..file_lines.len().max(source_lines.len()))
        .find(|&i| file_lines.get(i) != source_lines.get(i))
        .unwrap_or(0);
    let mut out = format!(
        "first difference at line {}:\n  file:   {}\n  source: {}\n",
        first + 1,
        file_lines.get(first).unwrap_or(&"(end of file)"),
        source_lines.get(first).unwrap_or(&"(end of listing)"),
    );
    let mut moved_only = true;
    for (label, ours, theirs) in [
        (
            "only in the file (gone from the source)",
            &file_lines,
            &source_lines,
        ),
        ("only in the source (new)", &source_lines, &file_lines),
    ] {
        let only = only_in(ours, theirs);
        if only.is_empty() {
            continue;
        }
        moved_only = false;
        let _ = writeln!(out, "lines {label}: {}", only.len());
        for (number, line) in only.iter().take(40) {
            let _ = writeln!(out, "  {:>5} {line}", number + 1);
        }
        if only.len() > 40 {
            let _ = writeln!(out, "  ...");
        }
    }
    if moved_only {
        out.push_str("the same lines, in another order\n");
    }
    Some(out)
}

/// The lines of `ours` that `theirs` does not hold (as many times), with their indices: what
/// a diff would show removed or added, but for lines that only moved.
fn only_in<'a>(ours: &[&'a str], theirs: &[&str]) -> Vec<(usize, &'a str)> {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for line in theirs {
        *left.entry(line).or_default() += 1;
    }
    ours.iter()
        .enumerate()
        .filter(|(_, line)| match left.get_mut(**line) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .map(|(i, line)| (i, *line))
        .collect()
}

/// The listing of a crate's public API, and its three counts.
struct Listing {
    text: String,
    /// The distinct names `lib.rs` makes public at the crate root.
    root_names: usize,
    /// The items at a public, non-hidden path, each once.
    items: usize,
    /// The methods of the trait at the root named `Document`.
    document_methods: usize,
}

/// The listing of the crate whose `src` files are `files` (by relative path, `lib.rs` the
/// root), named `name` in public paths; `proc_macros` are the proc-macro crates it may
/// re-export from. Every name the walk cannot resolve is a problem: all of them, or the
/// listing.
fn generate(
    name: &str,
    files: &BTreeMap<String, String>,
    proc_macros: &BTreeMap<String, String>,
) -> Result<Listing, Vec<String>> {
    let mut krate = Crate::load(name, files, proc_macros)?;
    krate.check_uses()?;
    krate.walk();
    krate.list()
}

type ModId = usize;
type DefId = usize;

/// One module: its items (those `#[cfg(test)]` leaves out dropped, its macro invocations
/// expanded), and the names they declare.
struct Module {
    /// Its path from the crate root, the root's empty.
    path: Vec<String>,
    parent: Option<ModId>,
    /// The file that holds it, for messages.
    file: String,
    items: Vec<Item>,
    /// The `macro_rules!` it defines, visible in it and its descendants (textual scope,
    /// taken as the whole module).
    macros: BTreeMap<String, Rules>,
    names: BTreeMap<String, Vec<Binding>>,
    globs: Vec<Glob>,
}

/// A name a module declares: an item of its own, or a `use`.
#[derive(Clone)]
struct Binding {
    vis: Vis,
    /// `#[doc(hidden)]` on the `use`.
    hidden: bool,
    /// The module whose item made it (a `#[macro_export]` macro's own module, not the root).
    origin: ModId,
    to: Bound,
}

#[derive(Clone)]
enum Bound {
    Def(DefId),
    /// A `use` of this path, resolved when asked (`leading_colon`: `use ::other_crate::...`).
    Use {
        path: Vec<String>,
        leading_colon: bool,
    },
}

/// A public name of a module, and what it names.
struct Public {
    hidden: bool,
    origin: ModId,
    targets: Result<Vec<Target>, String>,
}

/// A `use path::*`.
#[derive(Clone)]
struct Glob {
    vis: Vis,
    hidden: bool,
    path: Vec<String>,
    leading_colon: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Vis {
    /// `pub`.
    Public,
    /// `pub(crate)`, `pub(super)`, `pub(in ...)`, `pub(self)`: not public.
    Restricted,
    Private,
}

fn vis_of(vis: &Visibility) -> Vis {
    match vis {
        Visibility::Public(_) => Vis::Public,
        Visibility::Restricted(_) => Vis::Restricted,
        Visibility::Inherited => Vis::Private,
    }
}

/// An item the crate defines.
struct Def {
    name: String,
    kind: Kind,
    /// The module it is defined in.
    module: ModId,
    item: Option<Item>,
    /// `#[doc(hidden)]` on it.
    hidden: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Mod(ModId),
    Struct,
    Enum,
    Union,
    Trait,
    TraitAlias,
    Fn,
    Const,
    Static,
    Type,
    Macro,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Mod(_) => "mod",
            Kind::Struct => "struct",
            Kind::Enum => "enum",
            Kind::Union => "union",
            Kind::Trait => "trait",
            Kind::TraitAlias => "trait alias",
            Kind::Fn => "fn",
            Kind::Const => "const",
            Kind::Static => "static",
            Kind::Type => "type",
            Kind::Macro => "macro",
        }
    }

    /// Whether a name of this kind can be a type, or a trait, in a signature.
    fn is_type(self) -> bool {
        matches!(
            self,
            Kind::Struct | Kind::Enum | Kind::Union | Kind::Trait | Kind::TraitAlias | Kind::Type
        )
    }
}

/// What a path resolves to.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
enum Target {
    Def(DefId),
    /// A path into another crate (or the prelude: a name no module declares), as written.
    External(String),
    /// An enum's variant (`use Enum::Variant`): nothing to list.
    Variant,
}

/// A macro a proc-macro crate defines.
#[derive(Clone)]
struct ProcMacro {
    /// `derive`, `macro` (function-like) or `attribute`.
    kind: &'static str,
    /// A derive's helper attributes.
    helpers: Vec<String>,
}

/// One public path of an item, found by the walk.
#[derive(Clone)]
struct Record {
    path: Vec<String>,
    target: Target,
    /// `#[doc(hidden)]`, on the item, its `use` or a module on the way, or under `__private`.
    hidden: bool,
}

struct Crate {
    name: String,
    modules: Vec<Module>,
    defs: Vec<Def>,
    /// The `Def` of each module, by its id.
    module_defs: Vec<DefId>,
    /// Every `impl` of the crate, with its module.
    impls: Vec<(ModId, ItemImpl)>,
    /// Another crate's macros invoked among a module's items: what they make is not seen.
    unseen: Vec<(ModId, String)>,
    /// `#[macro_export]` macros, by name.
    exported: BTreeMap<String, Rules>,
    proc_macros: BTreeMap<String, BTreeMap<String, ProcMacro>>,
    /// `lookup`'s answers, but those cut short by a cycle of globs.
    lookups: RefCell<HashMap<(ModId, String), Vec<Target>>>,
    /// The lookups under way, and whether one met itself again.
    looking: RefCell<HashSet<(ModId, String)>>,
    cycle: Cell<bool>,
    records: Vec<Record>,
    /// Each item's path in signatures: its shortest non-hidden public path, else its
    /// shortest hidden one (no entry: not public).
    shown_at: HashMap<Target, Vec<String>>,
    problems: Vec<String>,
}

impl Crate {
    fn load(
        name: &str,
        files: &BTreeMap<String, String>,
        proc_macros: &BTreeMap<String, String>,
    ) -> Result<Crate, Vec<String>> {
        let mut krate = Crate {
            name: name.to_string(),
            modules: Vec::new(),
            defs: Vec::new(),
            module_defs: Vec::new(),
            impls: Vec::new(),
            unseen: Vec::new(),
            exported: BTreeMap::new(),
            proc_macros: BTreeMap::new(),
            lookups: Default::default(),
            looking: Default::default(),
            cycle: Cell::new(false),
            records: Vec::new(),
            shown_at: HashMap::new(),
            problems: Vec::new(),
        };
        for (crate_name, lib) in proc_macros {
            match proc_macros_of(lib) {
                Ok(macros) => {
                    krate.proc_macros.insert(crate_name.clone(), macros);
                }
                Err(error) => krate.problems.push(format!("{crate_name}: {error}")),
            }
        }
        match files.get("lib.rs").map(|text| syn::parse_file(text)) {
            Some(Ok(file)) => {
                let root = krate.new_module(Vec::new(), None, "lib.rs", name, false);
                if cfg_enabled(&file.attrs) {
                    krate.load_items(root, file.items, "", files);
                }
            }
            Some(Err(error)) => krate.problems.push(format!("lib.rs: {error}")),
            None => krate.problems.push("no lib.rs".to_string()),
        }
        // The macros are all known now: their invocations can be expanded, in every
        // module, before any name is declared.
        for module in 0..krate.modules.len() {
            let items = std::mem::take(&mut krate.modules[module].items);
            let expanded = krate.expand_items(module, items, 0);
            krate.modules[module].items = expanded;
        }
        for module in 0..krate.modules.len() {
            krate.declare(module);
        }
        if krate.problems.is_empty() {
            Ok(krate)
        } else {
            Err(krate.problems)
        }
    }

    fn new_module(
        &mut self,
        path: Vec<String>,
        parent: Option<ModId>,
        file: &str,
        name: &str,
        hidden: bool,
    ) -> ModId {
        let id = self.modules.len();
        self.modules.push(Module {
            path,
            parent,
            file: file.to_string(),
            items: Vec::new(),
            macros: BTreeMap::new(),
            names: BTreeMap::new(),
            globs: Vec::new(),
        });
        self.module_defs.push(self.defs.len());
        self.defs.push(Def {
            name: name.to_string(),
            kind: Kind::Mod(id),
            module: parent.unwrap_or(id),
            item: None,
            hidden,
        });
        id
    }

    /// Takes in `module`'s items, `dir` the folder of its children's files (`a/b/` for
    /// `a/b.rs`, `a/b/mod.rs` and an inline `mod b` in `a`): its modules are loaded, its
    /// macros recorded, everything else kept for `expand_items` and `declare`.
    fn load_items(
        &mut self,
        module: ModId,
        items: Vec<Item>,
        dir: &str,
        files: &BTreeMap<String, String>,
    ) {
        for item in items {
            if !cfg_enabled(attrs_of(&item)) {
                continue;
            }
            match item {
                Item::Mod(item_mod) => self.load_mod(module, item_mod, dir, files),
                Item::Macro(mac) if mac.ident.is_some() && mac.mac.path.is_ident("macro_rules") => {
                    let name = mac.ident.as_ref().unwrap().unraw().to_string();
                    match Rules::parse(mac.mac.tokens.clone()) {
                        Ok(rules) => {
                            if has_attr(&mac.attrs, "macro_export") {
                                self.exported.insert(name.clone(), rules.clone());
                            }
                            self.modules[module].macros.insert(name, rules);
                        }
                        Err(error) => self.problems.push(format!(
                            "{}: macro_rules! {name}: {error}",
                            self.modules[module].file
                        )),
                    }
                    self.modules[module].items.push(Item::Macro(mac));
                }
                other => self.modules[module].items.push(other),
            }
        }
    }

    fn load_mod(
        &mut self,
        parent: ModId,
        item_mod: syn::ItemMod,
        dir: &str,
        files: &BTreeMap<String, String>,
    ) {
        let name = item_mod.ident.unraw().to_string();
        let parent_file = self.modules[parent].file.clone();
        if has_attr(&item_mod.attrs, "path") {
            self.problems.push(format!(
                "{parent_file}: mod {name}: #[path] is not followed by this walk"
            ));
            return;
        }
        let mut path = self.modules[parent].path.clone();
        path.push(name.clone());
        let child_dir = format!("{dir}{name}/");
        let (file, items, inner_attrs) = match item_mod.content {
            Some((_, items)) => (parent_file, items, Vec::new()),
            None => {
                let candidates = [format!("{dir}{name}.rs"), format!("{dir}{name}/mod.rs")];
                let Some(file) = candidates.iter().find(|file| files.contains_key(*file)) else {
                    self.problems.push(format!(
                        "{parent_file}: mod {name}: neither {} nor {} found",
                        candidates[0], candidates[1]
                    ));
                    return;
                };
                match syn::parse_file(&files[file]) {
                    Ok(parsed) => (file.clone(), parsed.items, parsed.attrs),
                    Err(error) => {
                        self.problems.push(format!("{file}: {error}"));
                        return;
                    }
                }
            }
        };
        // An inline module's inner attributes are among the `mod` item's own.
        if !cfg_enabled(&inner_attrs) {
            return;
        }
        let hidden = is_hidden(&item_mod.attrs) || is_hidden(&inner_attrs);
        let id = self.new_module(path, Some(parent), &file, &name, hidden);
        let def = self.module_defs[id];
        self.bind(
            parent,
            &name,
            vis_of(&item_mod.vis),
            false,
            parent,
            Bound::Def(def),
        );
        self.load_items(id, items, &child_dir, files);
    }

    fn bind(
        &mut self,
        module: ModId,
        name: &str,
        vis: Vis,
        hidden: bool,
        origin: ModId,
        to: Bound,
    ) {
        self.modules[module]
            .names
            .entry(name.to_string())
            .or_default()
            .push(Binding {
                vis,
                hidden,
                origin,
                to,
            });
    }

    /// The macro a path names from `module`: the nearest `macro_rules!` of that name in the
    /// module or an ancestor, or a `#[macro_export]` one (`crate::name`, `$crate::name`).
    fn find_macro(&self, module: ModId, path: &syn::Path) -> Option<Rules> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        match segments.as_slice() {
            [name] => {
                let mut at = Some(module);
                while let Some(m) = at {
                    if let Some(rules) = self.modules[m].macros.get(name) {
                        return Some(rules.clone());
                    }
                    at = self.modules[m].parent;
                }
                self.exported.get(name).cloned()
            }
            [root, name] if root == "crate" || root == "$crate" => self.exported.get(name).cloned(),
            _ => None,
        }
    }

    /// `items` with the invocations of the crate's own macros expanded (and theirs, to a
    /// depth of 16); another crate's macros are kept as they are, unseen.
    fn expand_items(&mut self, module: ModId, items: Vec<Item>, depth: usize) -> Vec<Item> {
        let mut out = Vec::new();
        for item in items {
            let Item::Macro(mac) = &item else {
                out.push(item);
                continue;
            };
            if mac.ident.is_some() {
                out.push(item);
                continue;
            }
            let Some(rules) = self.find_macro(module, &mac.mac.path) else {
                self.unseen.push((module, path_text(&mac.mac.path)));
                out.push(item);
                continue;
            };
            let what = format!(
                "{}: {}!",
                self.modules[module].file,
                path_text(&mac.mac.path)
            );
            let expanded = rules.expand(&mac.mac.tokens).and_then(|tokens| {
                syn::parse2::<syn::File>(tokens).map_err(|error| error.to_string())
            });
            match expanded {
                Ok(_) if depth >= 16 => self.problems.push(format!("{what}: expands too deep")),
                Ok(file) => {
                    let items: Vec<Item> = file
                        .items
                        .into_iter()
                        .filter(|item| cfg_enabled(attrs_of(item)))
                        .collect();
                    if items.iter().any(|item| matches!(item, Item::Mod(_))) {
                        self.problems
                            .push(format!("{what}: a module made by a macro is not followed"));
                    }
                    out.extend(self.expand_items(module, items, depth + 1));
                }
                Err(error) => self
                    .problems
                    .push(format!("{what}: cannot expand: {error}")),
            }
        }
        out
    }

    /// The items of an impl or a trait with the crate's own macros expanded (to a depth of
    /// 16), and those `#[cfg(test)]` leaves out dropped.
    fn expand_nested<T: Nested>(&self, module: ModId, items: &[T]) -> Result<Vec<T>, String> {
        let mut pending: Vec<(T, usize)> =
            items.iter().rev().map(|item| (item.clone(), 0)).collect();
        let mut out = Vec::new();
        while let Some((item, depth)) = pending.pop() {
            let (attrs, mac) = item.parts();
            if !cfg_enabled(attrs) {
                continue;
            }
            let Some((mac, rules)) = mac.and_then(|m| Some((m, self.find_macro(module, &m.path)?)))
            else {
                out.push(item);
                continue;
            };
            let what = format!("{}: {}!", self.modules[module].file, path_text(&mac.path));
            if depth >= 16 {
                return Err(format!("{what}: expands too deep"));
            }
            let tokens = rules
                .expand(&mac.tokens)
                .map_err(|error| format!("{what}: {error}"))?;
            let parsed = (|input: ParseStream| {
                let mut items = Vec::new();
                while !input.is_empty() {
                    items.push(input.parse::<T>()?);
                }
                Ok(items)
            })
            .parse2(tokens)
            .map_err(|error| format!("{what}: cannot expand: {error}"))?;
            pending.extend(parsed.into_iter().rev().map(|item| (item, depth + 1)));
        }
        Ok(out)
    }

    /// Declares the names `module`'s items make, and records its impls.
    fn declare(&mut self, module: ModId) {
        let items = self.modules[module].items.clone();
        for item in items {
            let (kind, ident, vis) = match &item {
                Item::Struct(i) => (Kind::Struct, &i.ident, &i.vis),
                Item::Enum(i) => (Kind::Enum, &i.ident, &i.vis),
                Item::Union(i) => (Kind::Union, &i.ident, &i.vis),
                Item::Trait(i) => (Kind::Trait, &i.ident, &i.vis),
                Item::TraitAlias(i) => (Kind::TraitAlias, &i.ident, &i.vis),
                Item::Fn(i) => (Kind::Fn, &i.sig.ident, &i.vis),
                Item::Const(i) => (Kind::Const, &i.ident, &i.vis),
                Item::Static(i) => (Kind::Static, &i.ident, &i.vis),
                Item::Type(i) => (Kind::Type, &i.ident, &i.vis),
                Item::Macro(mac) if mac.ident.is_some() => {
                    let name = mac.ident.as_ref().unwrap().unraw().to_string();
                    let def = self.add_def(&name, Kind::Macro, module, &item);
                    // A `#[macro_export]` macro is public at the crate root; any other is
                    // named only by a `use` of it in its own module's scope.
                    if has_attr(&mac.attrs, "macro_export") {
                        self.bind(0, &name, Vis::Public, false, module, Bound::Def(def));
                    } else {
                        self.bind(module, &name, Vis::Private, false, module, Bound::Def(def));
                    }
                    continue;
                }
                Item::Use(item_use) => {
                    let vis = vis_of(&item_use.vis);
                    let hidden = is_hidden(&item_use.attrs);
                    let mut leaves = Vec::new();
                    flatten_use(&item_use.tree, &mut Vec::new(), &mut leaves);
                    for leaf in leaves {
                        let leading_colon = item_use.leading_colon.is_some();
                        match leaf.name {
                            Some(name) => self.bind(
                                module,
                                &name,
                                vis,
                                hidden,
                                module,
                                Bound::Use {
                                    path: leaf.path,
                                    leading_colon,
                                },
                            ),
                            None => self.modules[module].globs.push(Glob {
                                vis,
                                hidden,
                                path: leaf.path,
                                leading_colon,
                            }),
                        }
                    }
                    continue;
                }
                Item::ExternCrate(extern_crate) => {
                    let name = match &extern_crate.rename {
                        Some((_, rename)) => rename.unraw().to_string(),
                        None => extern_crate.ident.unraw().to_string(),
                    };
                    let path = vec![extern_crate.ident.unraw().to_string()];
                    let to = Bound::Use {
                        path,
                        leading_colon: true,
                    };
                    self.bind(module, &name, vis_of(&extern_crate.vis), false, module, to);
                    continue;
                }
                Item::Impl(item_impl) => {
                    self.impls.push((module, item_impl.clone()));
                    continue;
                }
                _ => continue,
            };
            let (name, vis) = (ident.unraw().to_string(), vis_of(vis));
            let def = self.add_def(&name, kind, module, &item);
            self.bind(module, &name, vis, false, module, Bound::Def(def));
        }
    }

    fn add_def(&mut self, name: &str, kind: Kind, module: ModId, item: &Item) -> DefId {
        self.defs.push(Def {
            name: name.to_string(),
            kind,
            module,
            item: Some(item.clone()),
            hidden: is_hidden(attrs_of(item)),
        });
        self.defs.len() - 1
    }

    /// What `name` is in `module`: its own bindings of that name, or else what its glob
    /// imports bring of it; every namespace at once, as a `use` imports them.
    fn lookup(&self, module: ModId, name: &str) -> Result<Vec<Target>, String> {
        let key = (module, name.to_string());
        if let Some(found) = self.lookups.borrow().get(&key) {
            return Ok(found.clone());
        }
        // Globs of two modules may import each other: a name met again on the way is not
        // there, and an answer found through such a cut is not kept for later.
        if !self.looking.borrow_mut().insert(key.clone()) {
            self.cycle.set(true);
            return Ok(Vec::new());
        }
        let outer_cycle = self.cycle.replace(false);
        let found = self.lookup_uncached(module, name);
        self.looking.borrow_mut().remove(&key);
        let cut = self.cycle.replace(outer_cycle);
        self.cycle.set(outer_cycle || cut);
        let found = found?;
        if !cut {
            self.lookups.borrow_mut().insert(key, found.clone());
        }
        Ok(found)
    }

    fn lookup_uncached(&self, module: ModId, name: &str) -> Result<Vec<Target>, String> {
        let mut found = Vec::new();
        if let Some(bindings) = self.modules[module].names.get(name) {
            for binding in bindings {
                found.extend(self.targets(module, binding)?);
            }
        } else {
            for glob in &self.modules[module].globs {
                for target in self.resolve(module, &glob.path, glob.leading_colon)? {
                    let Target::Def(def) = target else { continue };
                    match self.defs[def].kind {
                        Kind::Mod(from) => {
                            // A glob brings what the importer may see: a private name of
                            // the module only into its own descendants (`use super::*`). A
                            // name the module does not bind itself is its globs' business.
                            let visible = self.is_within(module, from)
                                || self.modules[from].names.get(name).is_none_or(|bindings| {
                                    bindings.iter().any(|b| b.vis != Vis::Private)
                                });
                            if visible {
                                found.extend(self.lookup(from, name)?);
                            }
                        }
                        Kind::Enum if self.has_variant(def, name) => found.push(Target::Variant),
                        _ => {}
                    }
                }
            }
        }
        found.sort();
        found.dedup();
        Ok(found)
    }

    /// Whether `module` is `ancestor` or inside it.
    fn is_within(&self, module: ModId, ancestor: ModId) -> bool {
        let mut at = Some(module);
        while let Some(m) = at {
            if m == ancestor {
                return true;
            }
            at = self.modules[m].parent;
        }
        false
    }

    fn has_variant(&self, def: DefId, name: &str) -> bool {
        matches!(&self.defs[def].item, Some(Item::Enum(e)) if e.variants.iter().any(|v| v.ident == name))
    }

    fn targets(&self, module: ModId, binding: &Binding) -> Result<Vec<Target>, String> {
        match &binding.to {
            Bound::Def(def) => Ok(vec![Target::Def(*def)]),
            Bound::Use {
                path,
                leading_colon,
            } => self.resolve(module, path, *leading_colon),
        }
    }

    /// What `path` names from `module`: `crate::`, `self::`, `super::`, a name in the
    /// module's scope, or else another crate's path (a name no module declares: the extern
    /// prelude or the standard one).
    fn resolve(
        &self,
        module: ModId,
        path: &[String],
        leading_colon: bool,
    ) -> Result<Vec<Target>, String> {
        let Some((first, rest)) = path.split_first() else {
            return Err("an empty path".to_string());
        };
        let module_target = |m: ModId| vec![Target::Def(self.module_defs[m])];
        let mut current = if leading_colon {
            vec![Target::External(first.clone())]
        } else {
            match first.as_str() {
                "crate" | "$crate" => module_target(0),
                "self" => module_target(module),
                "super" => match self.modules[module].parent {
                    Some(parent) => module_target(parent),
                    None => return Err("`super` at the crate root".to_string()),
                },
                _ => {
                    let found = self.lookup(module, first)?;
                    if found.is_empty() {
                        vec![Target::External(first.clone())]
                    } else {
                        found
                    }
                }
            }
        };
        for (i, segment) in rest.iter().enumerate() {
            let mut next = Vec::new();
            for target in &current {
                match target {
                    Target::Def(def) => match self.defs[*def].kind {
                        Kind::Mod(m) => match segment.as_str() {
                            "self" => next.extend(module_target(m)),
                            "super" => next.extend(
                                self.modules[m]
                                    .parent
                                    .map(module_target)
                                    .unwrap_or_default(),
                            ),
                            _ => next.extend(self.lookup(m, segment)?),
                        },
                        Kind::Enum if self.has_variant(*def, segment) => next.push(Target::Variant),
                        _ => {}
                    },
                    Target::External(prefix) => {
                        next.push(Target::External(format!("{prefix}::{segment}")))
                    }
                    Target::Variant => {}
                }
            }
            next.sort();
            next.dedup();
            if next.is_empty() {
                return Err(format!(
                    "`{segment}` not found in `{}`",
                    path[..=i].join("::")
                ));
            }
            current = next;
        }
        Ok(current)
    }

    /// Resolves every `use` of the crate: one this walk cannot follow is a problem, whether
    /// it makes a public name or not (a private one may name a type of a signature).
    fn check_uses(&mut self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        for (id, module) in self.modules.iter().enumerate() {
            for (name, bindings) in &module.names {
                for binding in bindings {
                    if let Bound::Use {
                        path,
                        leading_colon,
                    } = &binding.to
                    {
                        let problem = match self.resolve(id, path, *leading_colon) {
                            Ok(found) if found.is_empty() => Some("nothing found".to_string()),
                            Ok(_) => None,
                            Err(error) => Some(error),
                        };
                        if let Some(problem) = problem {
                            let vis = if binding.vis == Vis::Public {
                                "pub "
                            } else {
                                ""
                            };
                            problems.push(format!(
                                "{}: {vis}use {} (as `{name}`) cannot be resolved: {problem}",
                                module.file,
                                path.join("::")
                            ));
                        }
                    }
                }
            }
            for glob in &module.globs {
                if let Err(error) = self.resolve(id, &glob.path, glob.leading_colon) {
                    problems.push(format!(
                        "{}: use {}::* cannot be resolved: {error}",
                        module.file,
                        glob.path.join("::")
                    ));
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    /// The names `module` makes public, each with what it names: its `pub` bindings, and
    /// the public names of the modules its `pub` globs import (but those it binds itself).
    fn public_names(&self, module: ModId, seen: &mut Vec<ModId>) -> BTreeMap<String, Vec<Public>> {
        let mut names: BTreeMap<String, Vec<Public>> = BTreeMap::new();
        for (name, bindings) in &self.modules[module].names {
            for binding in bindings.iter().filter(|b| b.vis == Vis::Public) {
                names.entry(name.clone()).or_default().push(Public {
                    hidden: binding.hidden,
                    origin: binding.origin,
                    targets: self.targets(module, binding),
                });
            }
        }
        if seen.contains(&module) {
            return names;
        }
        seen.push(module);
        for glob in self.modules[module]
            .globs
            .iter()
            .filter(|g| g.vis == Vis::Public)
        {
            let Ok(targets) = self.resolve(module, &glob.path, glob.leading_colon) else {
                continue; // `check_uses` tells
            };
            for target in targets {
                let Target::Def(def) = target else { continue };
                let Kind::Mod(from) = self.defs[def].kind else {
                    continue;
                };
                for (name, publics) in self.public_names(from, seen) {
                    if self.modules[module].names.contains_key(&name) {
                        continue; // a name bound explicitly shadows the glob's
                    }
                    names
                        .entry(name)
                        .or_default()
                        .extend(publics.into_iter().map(|p| Public {
                            hidden: p.hidden || glob.hidden,
                            origin: module,
                            ..p
                        }));
                }
            }
        }
        seen.pop();
        names
    }

    /// Finds every public path from the crate root, and the path each item is shown by.
    fn walk(&mut self) {
        let mut records = Vec::new();
        let mut problems = Vec::new();
        let root = vec![self.name.clone()];
        self.walk_module(0, &root, false, &mut vec![0], &mut records, &mut problems);
        for (id, module) in self.modules.iter().enumerate() {
            for glob in module.globs.iter().filter(|g| g.vis == Vis::Public) {
                let targets = self
                    .resolve(id, &glob.path, glob.leading_colon)
                    .unwrap_or_default();
                if let Some(Target::External(path)) = targets.first() {
                    problems.push(format!(
                        "{}: pub use {path}::* re-exports another crate's names, which this walk cannot list",
                        module.file
                    ));
                }
            }
        }
        // One record per path and item, hidden only if every way there is.
        records.sort_by(|a: &Record, b: &Record| {
            (&a.path, &a.target, a.hidden).cmp(&(&b.path, &b.target, b.hidden))
        });
        records.dedup_by(|later, kept| later.path == kept.path && later.target == kept.target);
        let mut shown_at: HashMap<Target, (bool, usize, Vec<String>)> = HashMap::new();
        for record in &records {
            let key = (record.hidden, record.path.len(), record.path.clone());
            let best = shown_at
                .entry(record.target.clone())
                .or_insert_with(|| key.clone());
            if key < *best {
                *best = key;
            }
        }
        self.shown_at = shown_at
            .into_iter()
            .map(|(target, (_, _, path))| (target, path))
            .collect();
        self.records = records;
        self.problems.extend(problems);
    }

    fn walk_module(
        &self,
        module: ModId,
        prefix: &[String],
        hidden: bool,
        stack: &mut Vec<ModId>,
        records: &mut Vec<Record>,
        problems: &mut Vec<String>,
    ) {
        for (name, publics) in self.public_names(module, &mut Vec::new()) {
            let path = [prefix, std::slice::from_ref(&name)].concat();
            for public in publics {
                let targets = match public.targets {
                    Ok(targets) => targets,
                    Err(error) => {
                        problems.push(format!(
                            "{}: the public name `{name}` cannot be resolved: {error}",
                            self.modules[module].file
                        ));
                        continue;
                    }
                };
                for target in targets {
                    let mut hidden = hidden || public.hidden || name == PRIVATE;
                    if let Target::Def(def) = &target {
                        hidden |= self.defs[*def].hidden;
                    }
                    records.push(Record {
                        path: path.clone(),
                        target: target.clone(),
                        hidden,
                    });
                    // The guide's chapters are documentation, not items.
                    if let Target::Def(def) = target
                        && let Kind::Mod(child) = self.defs[def].kind
                        && self.defs[def].name != GUIDE
                        && !stack.contains(&child)
                    {
                        stack.push(child);
                        self.walk_module(child, &path, hidden, stack, records, problems);
                        stack.pop();
                    }
                }
            }
        }
    }

    /// Whether the walk found `target` at a public path, hidden or not.
    fn is_public(&self, target: &Target) -> bool {
        self.shown_at.contains_key(target)
    }

    /// The path `target` is shown by in signatures: its public path, or for an item with
    /// none, `crate::` and its module's path.
    fn shown_path(&self, target: &Target) -> Option<Vec<String>> {
        match target {
            Target::Def(def) => Some(self.shown_at.get(target).cloned().unwrap_or_else(|| {
                let def = &self.defs[*def];
                [
                    vec!["crate".to_string()],
                    self.modules[def.module].path.clone(),
                    vec![def.name.clone()],
                ]
                .concat()
            })),
            Target::External(path) => Some(path.split("::").map(str::to_string).collect()),
            Target::Variant => None,
        }
    }

    /// The item a type or trait path names from `module`, if the crate defines it.
    fn type_def(
        &self,
        module: ModId,
        path: &syn::Path,
        generics: &HashSet<String>,
    ) -> Option<Target> {
        let segments: Vec<String> = path
            .segments
            .iter()
            .map(|s| s.ident.unraw().to_string())
            .collect();
        if generics.contains(&segments[0]) || segments[0] == "Self" {
            return None;
        }
        let targets = self
            .resolve(module, &segments, path.leading_colon.is_some())
            .ok()?;
        targets
            .iter()
            .find(|t| matches!(t, Target::Def(d) if self.defs[*d].kind.is_type()))
            .or_else(|| targets.iter().find(|t| matches!(t, Target::External(_))))
            .cloned()
    }

    /// The item an impl is for: its self type's (through references), or a trait object's
    /// trait.
    fn self_type(&self, module: ModId, imp: &ItemImpl) -> Option<Target> {
        let generics = generic_names(&imp.generics);
        let mut ty = &*imp.self_ty;
        loop {
            match ty {
                Type::Reference(r) => ty = &r.elem,
                Type::Paren(p) => ty = &p.elem,
                Type::Group(g) => ty = &g.elem,
                Type::Path(p) if p.qself.is_none() => {
                    return self.type_def(module, &p.path, &generics);
                }
                Type::TraitObject(object) => {
                    return object.bounds.iter().find_map(|bound| match bound {
                        syn::TypeParamBound::Trait(t) => self.type_def(module, &t.path, &generics),
                        _ => None,
                    });
                }
                _ => return None,
            }
        }
    }

    /// The listing, from the walk's records.
    fn list(mut self) -> Result<Listing, Vec<String>> {
        if !self.problems.is_empty() {
            return Err(self.problems);
        }
        let impls = self.attach_impls();
        let mut entries: BTreeMap<(Vec<String>, &'static str), String> = BTreeMap::new();
        let mut hidden: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
        let mut counted: BTreeSet<Target> = BTreeSet::new();
        for record in &self.records {
            let kind = self.kind_word(&record.target);
            let path = record.path.join("::");
            let shown = self.shown_at.get(&record.target);
            let also = match shown {
                Some(shown) if *shown != record.path => format!(" = {}", shown.join("::")),
                _ => match &record.target {
                    Target::External(external) if !self.is_proc_macro(external) => {
                        format!(" = {external}")
                    }
                    _ => String::new(),
                },
            };
            if record.hidden {
                let line = format!("{kind} {path}{also}");
                hidden.entry(record.path.clone()).or_default().insert(line);
                continue;
            }
            if self.is_item(&record.target) {
                counted.insert(record.target.clone());
            }
            let mut text = format!("{kind} {path}{also}\n");
            // The item's signature once, at the path it is shown by.
            if also.is_empty() {
                match self.render(&record.target, &impls) {
                    Ok(body) => {
                        for line in body.lines() {
                            let _ = writeln!(text, "    {line}");
                        }
                    }
                    Err(error) => self.problems.push(format!("{path}: {error}")),
                }
            }
            entries.insert((record.path.clone(), kind), text);
        }
        let document_methods = self.document_methods().map_err(|error| vec![error])?;
        if !self.problems.is_empty() {
            return Err(self.problems);
        }
        let (root_names, items) = (self.root_names(), counted.len());
        let mut text = header(&self.name, root_names, items, document_methods);
        for entry in entries.values() {
            text.push('\n');
            text.push_str(entry);
        }
        let unseen = self.unseen_lines();
        if !unseen.is_empty() {
            text.push_str(
                "\nNot seen (another crate's macros among a public module's items: what they \
                 make is not listed)\n",
            );
            for line in &unseen {
                let _ = writeln!(text, "    {line}");
            }
        }
        text.push_str("\nHidden (the derive's plumbing, outside the semver promise)\n");
        for line in hidden.values().flatten() {
            let _ = writeln!(text, "    {line}");
        }
        Ok(Listing {
            text,
            root_names,
            items,
            document_methods,
        })
    }

    /// Whether the public items count `target`: not a module, nor another crate's item but
    /// a derive (or another proc macro) of the workspace.
    fn is_item(&self, target: &Target) -> bool {
        match target {
            Target::Def(def) => !matches!(self.defs[*def].kind, Kind::Mod(_)),
            Target::External(external) => self.is_proc_macro(external),
            Target::Variant => false,
        }
    }

    /// The impls of each public item: its inherent impls, and the headers of the trait
    /// impls for it (a type) or of it (a trait). An impl of a trait the crate keeps
    /// private, or for a type it keeps private, is no part of the surface.
    fn attach_impls(&mut self) -> Impls {
        let mut impls = Impls::default();
        for (module, imp) in &self.impls {
            let self_def = match self.self_type(*module, imp) {
                Some(Target::Def(def)) => Some(def),
                _ => None,
            };
            let Some((trait_path, _)) = &imp.trait_ else {
                if let Some(def) = self_def.filter(|d| self.is_public(&Target::Def(*d))) {
                    impls
                        .inherent
                        .entry(def)
                        .or_default()
                        .push((*module, imp.clone()));
                }
                continue;
            };
            let trait_def = match self.type_def(*module, trait_path, &generic_names(&imp.generics))
            {
                Some(Target::Def(def)) => Some(def),
                _ => None,
            };
            let shown = |def: Option<DefId>| def.is_none_or(|d| self.is_public(&Target::Def(d)));
            if !(shown(trait_def) && shown(self_def)) {
                continue;
            }
            let header = self.impl_header(*module, imp);
            for def in [self_def, trait_def].into_iter().flatten() {
                impls.traits.entry(def).or_default().insert(header.clone());
            }
        }
        impls
    }

    /// Another crate's macros invoked among the items of a public module (or the root):
    /// what they make could be public, and is not listed. (A `pub use` of something they
    /// make fails the walk, unresolved.)
    fn unseen_lines(&self) -> BTreeSet<String> {
        let mut lines = BTreeSet::new();
        for (module, mac) in &self.unseen {
            let path = if *module == 0 {
                Some(vec![self.name.clone()])
            } else {
                self.shown_at
                    .get(&Target::Def(self.module_defs[*module]))
                    .cloned()
            };
            if let Some(path) = path {
                lines.insert(format!("{mac}! in {}", path.join("::")));
            }
        }
        lines
    }

    fn is_proc_macro(&self, external: &str) -> bool {
        self.proc_macro(external).is_some()
    }

    fn proc_macro(&self, external: &str) -> Option<&ProcMacro> {
        let (krate, name) = external.split_once("::")?;
        self.proc_macros.get(krate)?.get(name)
    }

    fn kind_word(&self, target: &Target) -> &'static str {
        match target {
            Target::Def(def) => self.defs[*def].kind.word(),
            Target::External(external) => match self.proc_macro(external) {
                Some(mac) => mac.kind,
                None => "re-export",
            },
            Target::Variant => "variant",
        }
    }

    /// The distinct names `lib.rs`'s own items make public at the root.
    fn root_names(&self) -> usize {
        self.public_names(0, &mut Vec::new())
            .iter()
            .filter(|(_, publics)| publics.iter().any(|p| p.origin == 0))
            .count()
    }

    /// The fns of the trait at the crate root named `Document`.
    fn document_methods(&self) -> Result<usize, String> {
        let path = vec![self.name.clone(), "Document".to_string()];
        let Some(def) = self.records.iter().find_map(|r| match r.target {
            Target::Def(d) if r.path == path && self.defs[d].kind == Kind::Trait => Some(d),
            _ => None,
        }) else {
            return Ok(0);
        };
        let Some(Item::Trait(item)) = &self.defs[def].item else {
            return Ok(0);
        };
        let items = self.expand_nested(self.defs[def].module, &item.items)?;
        Ok(items
            .iter()
            .filter(|i| matches!(i, TraitItem::Fn(_)))
            .count())
    }

    /// An entry's body: the item's signature, its inherent impls' public items, and the
    /// headers of its trait impls.
    fn render(&self, target: &Target, impls: &Impls) -> Result<String, String> {
        let def = match target {
            Target::Def(def) => *def,
            Target::External(external) => {
                return Ok(match self.proc_macro(external) {
                    Some(mac) if mac.kind == "derive" => {
                        let name = external.rsplit("::").next().unwrap();
                        let helpers: Vec<String> =
                            mac.helpers.iter().map(|h| format!("#[{h}]")).collect();
                        match helpers.is_empty() {
                            true => format!("#[derive({name})]\n"),
                            false => format!(
                                "#[derive({name})], helper attributes {}\n",
                                helpers.join(", ")
                            ),
                        }
                    }
                    Some(_) => String::new(),
                    None => format!("= {external}\n"),
                });
            }
            Target::Variant => return Ok(String::new()),
        };
        let module = self.defs[def].module;
        let Some(item) = self.defs[def].item.clone() else {
            return Ok(String::new()); // a module: its items are entries of their own
        };
        let mut out = self.render_item(module, item)?;
        // Blocks of one header are one block, their items by name: a method moved from one
        // to another of them is no change.
        let mut blocks: BTreeMap<String, Block> = BTreeMap::new();
        for (impl_module, imp) in impls.inherent.get(&def).into_iter().flatten() {
            let block = self.inherent_block(*impl_module, imp)?;
            if block.members.is_empty() {
                continue;
            }
            match blocks.get_mut(&block.header) {
                Some(same) => same.members.extend(block.members),
                None => {
                    blocks.insert(block.header.clone(), block);
                }
            }
        }
        for (_, mut block) in blocks {
            block
                .members
                .sort_by(|a, b| (&a.name, &a.text).cmp(&(&b.name, &b.text)));
            block.shell.items = block.members.into_iter().map(|m| m.item).collect();
            out.push_str(&unparse(Item::Impl(block.shell)));
        }
        for header in impls.traits.get(&def).into_iter().flatten() {
            let _ = writeln!(out, "{header}");
        }
        for derived in self.derived(def) {
            let _ = writeln!(out, "{derived}");
        }
        Ok(out)
    }

    fn rewriter(&self, module: ModId) -> Rewriter<'_> {
        Rewriter {
            krate: self,
            module,
            generics: HashSet::new(),
        }
    }

    /// An item's signature, with the paths of its types made public ones, without docs,
    /// bodies, private fields or attributes but `#[derive]`, `#[non_exhaustive]` and
    /// `#[doc(hidden)]`.
    fn render_item(&self, module: ModId, mut item: Item) -> Result<String, String> {
        if let Item::Trait(t) = &mut item {
            t.items = self.expand_nested(module, &t.items)?;
        }
        self.rewriter(module).visit_item_mut(&mut item);
        let text = match item {
            Item::Struct(mut s) => {
                s.attrs = kept_attrs(&s.attrs);
                let private = strip_fields(&mut s.fields);
                return Ok(with_private_fields(unparse(Item::Struct(s)), private));
            }
            Item::Union(mut u) => {
                u.attrs = kept_attrs(&u.attrs);
                let mut fields = Fields::Named(u.fields.clone());
                let private = strip_fields(&mut fields);
                if let Fields::Named(named) = fields {
                    u.fields = named;
                }
                return Ok(with_private_fields(unparse(Item::Union(u)), private));
            }
            Item::Enum(mut e) => {
                e.attrs = kept_attrs(&e.attrs);
                e.variants = e
                    .variants
                    .iter()
                    .filter(|v| cfg_enabled(&v.attrs))
                    .cloned()
                    .collect();
                for variant in &mut e.variants {
                    drop_test_fields(&mut variant.fields);
                    variant.attrs = kept_attrs(&variant.attrs);
                    for field in variant.fields.iter_mut() {
                        field.attrs = kept_attrs(&field.attrs);
                    }
                }
                unparse(Item::Enum(e))
            }
            Item::Trait(mut t) => {
                t.attrs = kept_attrs(&t.attrs);
                let mut provided = false;
                t.items = std::mem::take(&mut t.items)
                    .into_iter()
                    .map(|item| match item {
                        TraitItem::Fn(mut f) => {
                            f.attrs = kept_attrs(&f.attrs);
                            if f.default.take().is_some() {
                                provided = true;
                                f.attrs.insert(0, syn::parse_quote!(#[__provided]));
                            }
                            f.sig = bare_signature(f.sig);
                            f.semi_token = Some(Default::default());
                            TraitItem::Fn(f)
                        }
                        TraitItem::Const(mut c) => {
                            c.attrs = kept_attrs(&c.attrs);
                            c.default = None;
                            TraitItem::Const(c)
                        }
                        TraitItem::Type(mut ty) => {
                            ty.attrs = kept_attrs(&ty.attrs);
                            TraitItem::Type(ty)
                        }
                        other => other,
                    })
                    .collect();
                let text = unparse(Item::Trait(t));
                if provided { mark_provided(&text) } else { text }
            }
            Item::Fn(f) => {
                let attrs = kept_attrs(&f.attrs);
                let (vis, sig) = (f.vis, bare_signature(f.sig));
                unparse(Item::Verbatim(quote!(#(#attrs)* #vis #sig;)))
            }
            Item::Const(c) => {
                let (vis, ident, ty) = (c.vis, c.ident, c.ty);
                unparse(Item::Verbatim(quote!(#vis const #ident: #ty;)))
            }
            Item::Static(s) => {
                let (vis, mutability, ident, ty) = (s.vis, s.mutability, s.ident, s.ty);
                unparse(Item::Verbatim(quote!(#vis static #mutability #ident: #ty;)))
            }
            Item::Type(mut t) => {
                t.attrs = kept_attrs(&t.attrs);
                unparse(Item::Type(t))
            }
            Item::TraitAlias(mut t) => {
                t.attrs = kept_attrs(&t.attrs);
                unparse(Item::TraitAlias(t))
            }
            Item::Macro(mac) => render_macro_rules(&mac)?,
            other => return Err(format!("cannot list {}", other.to_token_stream())),
        };
        Ok(text)
    }

    /// An inherent impl as the listing shows it: its public items, without bodies.
    fn inherent_block(&self, module: ModId, imp: &ItemImpl) -> Result<Block, String> {
        let mut imp = imp.clone();
        imp.items = self.expand_nested(module, &imp.items)?;
        self.rewriter(module).visit_item_impl_mut(&mut imp);
        imp.attrs = kept_attrs(&imp.attrs);
        let mut members = Vec::new();
        for item in std::mem::take(&mut imp.items) {
            let (name, item) = match item {
                ImplItem::Fn(f) if vis_of(&f.vis) == Vis::Public => {
                    let attrs = kept_attrs(&f.attrs);
                    let name = f.sig.ident.to_string();
                    let (vis, sig) = (f.vis, bare_signature(f.sig));
                    (name, ImplItem::Verbatim(quote!(#(#attrs)* #vis #sig;)))
                }
                ImplItem::Const(c) if vis_of(&c.vis) == Vis::Public => {
                    let attrs = kept_attrs(&c.attrs);
                    let (vis, ident, ty) = (c.vis, c.ident, c.ty);
                    (
                        ident.to_string(),
                        ImplItem::Verbatim(quote!(#(#attrs)* #vis const #ident: #ty;)),
                    )
                }
                ImplItem::Type(mut t) if vis_of(&t.vis) == Vis::Public => {
                    t.attrs = kept_attrs(&t.attrs);
                    (t.ident.to_string(), ImplItem::Type(t))
                }
                _ => continue,
            };
            let text = item.to_token_stream().to_string();
            members.push(Member { name, text, item });
        }
        Ok(Block {
            header: one_line(&unparse(Item::Impl(imp.clone()))),
            shell: imp,
            members,
        })
    }

    /// A trait impl's header on one line, with its generics and where clause.
    fn impl_header(&self, module: ModId, imp: &ItemImpl) -> String {
        let mut imp = imp.clone();
        imp.items.clear();
        self.rewriter(module).visit_item_impl_mut(&mut imp);
        let hidden = is_hidden(&imp.attrs);
        imp.attrs.clear();
        let line = one_line(&unparse(Item::Impl(imp)));
        if hidden {
            format!("#[doc(hidden)] {line}")
        } else {
            line
        }
    }

    /// The trait impls `#[derive(...)]` makes for an item, as headers.
    fn derived(&self, def: DefId) -> Vec<String> {
        let Some(item) = &self.defs[def].item else {
            return Vec::new();
        };
        let generics = match item {
            Item::Struct(s) => &s.generics,
            Item::Enum(e) => &e.generics,
            Item::Union(u) => &u.generics,
            _ => return Vec::new(),
        };
        let args: Vec<TokenStream> = generics
            .params
            .iter()
            .map(|param| match param {
                syn::GenericParam::Lifetime(l) => l.lifetime.to_token_stream(),
                syn::GenericParam::Type(t) => t.ident.to_token_stream(),
                syn::GenericParam::Const(c) => c.ident.to_token_stream(),
            })
            .collect();
        let path = self
            .shown_path(&Target::Def(def))
            .unwrap_or_default()
            .join("::");
        let self_ty = if args.is_empty() {
            path
        } else {
            let args = quote!(<#(#args),*>).to_string();
            format!("{path}{}", tidy_tokens(&args))
        };
        let mut out = Vec::new();
        for attr in attrs_of(item)
            .iter()
            .filter(|a| a.path().is_ident("derive"))
        {
            let Ok(paths) =
                attr.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)
            else {
                continue;
            };
            for mut path in paths {
                self.rewriter(self.defs[def].module)
                    .visit_path_mut(&mut path);
                let path = tidy_tokens(&path.to_token_stream().to_string());
                out.push(format!("impl {path} for {self_ty} (derived)"));
            }
        }
        out.sort();
        out
    }
}

/// An item of an impl or a trait: its attributes, and for a macro invocation, the macro.
trait Nested: syn::parse::Parse + Clone {
    fn parts(&self) -> (&[Attribute], Option<&syn::Macro>);
}

impl Nested for ImplItem {
    fn parts(&self) -> (&[Attribute], Option<&syn::Macro>) {
        match self {
            ImplItem::Const(i) => (&i.attrs, None),
            ImplItem::Fn(i) => (&i.attrs, None),
            ImplItem::Type(i) => (&i.attrs, None),
            ImplItem::Macro(i) => (&i.attrs, Some(&i.mac)),
            _ => (&[], None),
        }
    }
}

impl Nested for TraitItem {
    fn parts(&self) -> (&[Attribute], Option<&syn::Macro>) {
        match self {
            TraitItem::Const(i) => (&i.attrs, None),
            TraitItem::Fn(i) => (&i.attrs, None),
            TraitItem::Type(i) => (&i.attrs, None),
            TraitItem::Macro(i) => (&i.attrs, Some(&i.mac)),
            _ => (&[], None),
        }
    }
}

/// The impls the listing shows, by the item they are listed with.
#[derive(Default)]
struct Impls {
    inherent: HashMap<DefId, Vec<(ModId, ItemImpl)>>,
    /// Trait impls' headers: under the type, and under the trait.
    traits: HashMap<DefId, BTreeSet<String>>,
}

/// An inherent impl block of the listing.
struct Block {
    /// Its header on one line: blocks of one header are shown as one.
    header: String,
    /// The impl without its items.
    shell: ItemImpl,
    members: Vec<Member>,
}

/// A public item of an inherent impl, without its body.
struct Member {
    name: String,
    /// Its tokens, to order two members of one name.
    text: String,
    item: ImplItem,
}

/// Rewrites the paths of types and traits in a signature to the path the listing shows
/// each by: an item of the crate by its public path, an import of another crate's by that
/// crate's path. Generic parameters, `Self`, and names no module declares (the prelude's)
/// stay as written.
struct Rewriter<'a> {
    krate: &'a Crate,
    module: ModId,
    /// The generic parameters met so far (those of an item are visited before its types).
    generics: HashSet<String>,
}

impl Rewriter<'_> {
    fn rewrite(&self, path: &mut syn::Path) {
        if path.leading_colon.is_some() {
            return; // another crate's, written in full
        }
        let Some(target) = self.krate.type_def(self.module, path, &self.generics) else {
            return;
        };
        let Some(shown) = self.krate.shown_path(&target) else {
            return;
        };
        let written: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if shown == written {
            return;
        }
        let arguments = path
            .segments
            .last()
            .map(|s| s.arguments.clone())
            .unwrap_or_default();
        let mut segments: Punctuated<syn::PathSegment, Token![::]> = Punctuated::new();
        for (i, name) in shown.iter().enumerate() {
            let mut segment = syn::PathSegment::from(Ident::new(name, Span::call_site()));
            if i + 1 == shown.len() {
                segment.arguments = arguments.clone();
            }
            segments.push(segment);
        }
        path.segments = segments;
    }
}

impl VisitMut for Rewriter<'_> {
    fn visit_generics_mut(&mut self, generics: &mut syn::Generics) {
        self.generics.extend(generic_names(generics));
        visit_mut::visit_generics_mut(self, generics);
    }

    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        self.rewrite(path);
        visit_mut::visit_path_mut(self, path);
    }

    fn visit_type_path_mut(&mut self, type_path: &mut syn::TypePath) {
        let Some(qself) = &mut type_path.qself else {
            return self.visit_path_mut(&mut type_path.path);
        };
        // `<T as Trait>::Name`: the trait's path is the segments before `position`.
        self.visit_type_mut(&mut qself.ty);
        let position = qself.position;
        let segments: Vec<syn::PathSegment> = type_path.path.segments.iter().cloned().collect();
        let mut trait_path = syn::Path {
            leading_colon: type_path.path.leading_colon,
            segments: segments[..position].iter().cloned().collect(),
        };
        if position > 0 {
            self.visit_path_mut(&mut trait_path);
        }
        let mut rest: Vec<syn::PathSegment> = segments[position..].to_vec();
        for segment in &mut rest {
            visit_mut::visit_path_arguments_mut(self, &mut segment.arguments);
        }
        qself.position = trait_path.segments.len();
        type_path.path.leading_colon = trait_path.leading_colon;
        type_path.path.segments = trait_path.segments.into_iter().chain(rest).collect();
    }

    // Attributes, patterns, expressions and macros keep their paths: no type is named
    // there but in a const generic argument.
    fn visit_attribute_mut(&mut self, _: &mut Attribute) {}
    fn visit_pat_mut(&mut self, _: &mut syn::Pat) {}
    fn visit_expr_mut(&mut self, _: &mut syn::Expr) {}
    fn visit_macro_mut(&mut self, _: &mut syn::Macro) {}
    fn visit_block_mut(&mut self, _: &mut syn::Block) {}
}

/// The names of a `Generics`' type and const parameters.
fn generic_names(generics: &syn::Generics) -> HashSet<String> {
    generics
        .params
        .iter()
        .filter_map(|param| match param {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            syn::GenericParam::Const(c) => Some(c.ident.to_string()),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect()
}

/// A signature as the listing shows it: the binding modes of its arguments (`mut self`,
/// `mut x`) are the body's business.
fn bare_signature(mut sig: syn::Signature) -> syn::Signature {
    for input in &mut sig.inputs {
        match input {
            // `mut self`; `&mut self`'s `mut` is the reference's.
            syn::FnArg::Receiver(receiver) => receiver.mutability = None,
            syn::FnArg::Typed(typed) => {
                if let syn::Pat::Ident(ident) = &mut *typed.pat {
                    ident.mutability = None;
                }
            }
        }
    }
    sig
}

/// Drops the fields that are not `pub` from `fields`, a tuple struct's replaced by `_` so
/// that the positions stay; whether any was dropped from named fields.
fn strip_fields(fields: &mut Fields) -> bool {
    drop_test_fields(fields);
    let mut private = false;
    match fields {
        Fields::Named(named) => {
            let kept: Punctuated<syn::Field, Token![,]> = named
                .named
                .iter()
                .filter(|f| {
                    let public = vis_of(&f.vis) == Vis::Public;
                    private |= !public;
                    public
                })
                .cloned()
                .map(|mut f| {
                    f.attrs = kept_attrs(&f.attrs);
                    f
                })
                .collect();
            named.named = kept;
        }
        Fields::Unnamed(unnamed) => {
            for field in unnamed.unnamed.iter_mut() {
                field.attrs = kept_attrs(&field.attrs);
                if vis_of(&field.vis) != Vis::Public {
                    field.vis = Visibility::Inherited;
                    field.ty = syn::parse_quote!(_);
                }
            }
        }
        Fields::Unit => {}
    }
    private
}

/// Drops the fields `#[cfg(test)]` leaves out.
fn drop_test_fields(fields: &mut Fields) {
    match fields {
        Fields::Named(named) => {
            named.named = named
                .named
                .iter()
                .filter(|f| cfg_enabled(&f.attrs))
                .cloned()
                .collect();
        }
        Fields::Unnamed(unnamed) => {
            unnamed.unnamed = unnamed
                .unnamed
                .iter()
                .filter(|f| cfg_enabled(&f.attrs))
                .cloned()
                .collect();
        }
        Fields::Unit => {}
    }
}

/// A struct's text with `/* private fields */` where its private named fields were.
fn with_private_fields(text: String, private: bool) -> String {
    if !private {
        return text;
    }
    if let Some(head) = text.strip_suffix("{}\n") {
        return format!("{head}{{\n    /* private fields */\n}}\n");
    }
    match text.rfind("}\n") {
        Some(end) => format!("{}    /* private fields */\n{}", &text[..end], &text[end..]),
        None => text,
    }
}

/// A trait's text with each `#[__provided]` method shown with a body, `{ ... }`, as rustdoc
/// shows a provided method.
fn mark_provided(text: &str) -> String {
    let mut out = Vec::new();
    let mut pending = None;
    for line in text.lines() {
        if line.trim() == "#[__provided]" {
            pending = Some(line.len() - line.trim_start().len());
            continue;
        }
        match (pending, line.strip_suffix(';')) {
            (Some(indent), Some(head)) => {
                let in_where = out.last().is_some_and(|l: &String| l.trim() == "where")
                    || line.len() - line.trim_start().len() > indent;
                if in_where {
                    out.push(format!("{head},"));
                    out.push(format!("{}{{ ... }}", " ".repeat(indent)));
                } else {
                    out.push(format!("{head} {{ ... }}"));
                }
                pending = None;
            }
            _ => out.push(line.to_string()),
        }
    }
    out.join("\n") + "\n"
}

/// A `macro_rules!` as its rules' matchers.
fn render_macro_rules(mac: &syn::ItemMacro) -> Result<String, String> {
    let name = mac
        .ident
        .as_ref()
        .map(|i| i.to_string())
        .unwrap_or_default();
    let rules = Rules::parse(mac.mac.tokens.clone())?;
    let mut out = format!("macro_rules! {name} {{\n");
    for matcher in &rules.matchers_text {
        let _ = writeln!(out, "    {matcher} => {{ ... }};");
    }
    out.push_str("}\n");
    Ok(out)
}

/// Attributes the listing shows: `#[derive]`, `#[non_exhaustive]` and `#[doc(hidden)]`.
fn kept_attrs(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .filter_map(|attr| {
            if attr.path().is_ident("derive") || attr.path().is_ident("non_exhaustive") {
                Some(attr.clone())
            } else if is_hidden(std::slice::from_ref(attr)) {
                Some(syn::parse_quote!(#[doc(hidden)]))
            } else {
                None
            }
        })
        .collect()
}

fn attrs_of(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn has_attr(attrs: &[Attribute], name: &str) -> bool {
    attrs.iter().any(|attr| attr.path().is_ident(name))
}

/// Whether `attrs` hold `#[doc(hidden)]` (or `#![doc(hidden)]`).
fn is_hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("doc")
            && matches!(&attr.meta, Meta::List(list) if list.tokens.clone().into_iter().any(
                |token| matches!(&token, TokenTree::Ident(i) if i == "hidden")
            ))
    })
}

/// Whether an item with these attributes is compiled outside tests: `#[cfg(...)]` with
/// `test` false and every other predicate true.
fn cfg_enabled(attrs: &[Attribute]) -> bool {
    fn holds(meta: &Meta) -> bool {
        let nested = |list: &syn::MetaList| {
            list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                .map(|metas| metas.into_iter().collect::<Vec<_>>())
                .unwrap_or_default()
        };
        match meta {
            Meta::Path(path) => !path.is_ident("test"),
            Meta::List(list) if list.path.is_ident("not") => !nested(list).iter().all(holds),
            Meta::List(list) if list.path.is_ident("all") => nested(list).iter().all(holds),
            Meta::List(list) if list.path.is_ident("any") => nested(list).iter().any(holds),
            _ => true,
        }
    }
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"))
        .all(|attr| attr.parse_args::<Meta>().is_ok_and(|meta| holds(&meta)))
}

/// One name a `use` item makes (`None`: a glob), with the path it names.
struct UseLeaf {
    name: Option<String>,
    path: Vec<String>,
}

fn flatten_use(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.unraw().to_string());
            flatten_use(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let ident = n.ident.unraw().to_string();
            if ident == "self" {
                out.push(UseLeaf {
                    name: prefix.last().cloned(),
                    path: prefix.clone(),
                });
            } else {
                out.push(UseLeaf {
                    name: Some(ident.clone()),
                    path: [prefix.clone(), vec![ident]].concat(),
                });
            }
        }
        UseTree::Rename(r) => {
            let ident = r.ident.unraw().to_string();
            let path = if ident == "self" {
                prefix.clone()
            } else {
                [prefix.clone(), vec![ident]].concat()
            };
            let rename = r.rename.unraw().to_string();
            // `use Trait as _` brings no name.
            if rename != "_" {
                out.push(UseLeaf {
                    name: Some(rename),
                    path,
                });
            }
        }
        UseTree::Glob(_) => out.push(UseLeaf {
            name: None,
            path: prefix.clone(),
        }),
        UseTree::Group(g) => {
            for tree in &g.items {
                flatten_use(tree, prefix, out);
            }
        }
    }
}

/// The macros a proc-macro crate's `lib.rs` defines, by name.
fn proc_macros_of(lib: &str) -> Result<BTreeMap<String, ProcMacro>, String> {
    let file = syn::parse_file(lib).map_err(|error| error.to_string())?;
    let mut found = BTreeMap::new();
    for item in &file.items {
        let Item::Fn(f) = item else { continue };
        for attr in &f.attrs {
            let name = attr
                .path()
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            match name.as_str() {
                "proc_macro_derive" => {
                    let (name, helpers) = attr
                        .parse_args_with(|input: ParseStream| {
                            let name: Ident = input.parse()?;
                            let mut helpers = Vec::new();
                            if input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
                                let _attributes: Ident = input.parse()?;
                                let content;
                                syn::parenthesized!(content in input);
                                let list =
                                    Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
                                helpers = list.iter().map(|i| i.to_string()).collect();
                            }
                            let _ = input.parse::<Option<Token![,]>>()?;
                            Ok((name.to_string(), helpers))
                        })
                        .map_err(|error| error.to_string())?;
                    found.insert(
                        name,
                        ProcMacro {
                            kind: "derive",
                            helpers,
                        },
                    );
                }
                "proc_macro" | "proc_macro_attribute" => {
                    let kind = if name == "proc_macro" {
                        "macro"
                    } else {
                        "attribute"
                    };
                    found.insert(
                        f.sig.ident.to_string(),
                        ProcMacro {
                            kind,
                            helpers: Vec::new(),
                        },
                    );
                }
                _ => {}
            }
        }
    }
    Ok(found)
}

/// A path as written, `a::b`.
fn path_text(path: &syn::Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let lead = if path.leading_colon.is_some() {
        "::"
    } else {
        ""
    };
    format!("{lead}{}", segments.join("::"))
}

/// prettyplease's text of one item.
fn unparse(item: Item) -> String {
    prettyplease::unparse(&syn::File {
        shebang: None,
        frontmatter: None,
        attrs: Vec::new(),
        items: vec![item],
    })
}

/// prettyplease's text of an item without items (an impl's header) on one line: its lines
/// joined, without the breaks and trailing commas of the lists it broke, and without `{}`.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with(['>', ')', ']']) {
            if out.ends_with(',') {
                out.pop();
            }
        } else if !out.is_empty() && !out.ends_with(['<', '(', '[']) {
            out.push(' ');
        }
        out.push_str(line);
    }
    let out = out.strip_suffix("{}").unwrap_or(&out).trim_end();
    out.strip_suffix(',').unwrap_or(out).to_string()
}

/// quote's token text, spaced as code is: `Foo<'a, T>`, not `Foo < 'a , T >`.
fn tidy_tokens(text: &str) -> String {
    let item: Result<syn::Type, _> = syn::parse_str(&format!("X{text}"));
    match item {
        Ok(ty) => {
            let text = unparse(Item::Verbatim(quote!(type __T = #ty;)));
            let text = one_line(&text);
            let text = text.trim_start_matches("type __T = ").trim_end_matches(';');
            text.strip_prefix('X').unwrap_or(text).to_string()
        }
        Err(_) => text.to_string(),
    }
}

/// A `macro_rules!`'s rules: what each matches, and what it makes of it.
#[derive(Clone)]
struct Rules {
    rules: Vec<(Vec<Matcher>, Vec<Transcriber>)>,
    /// Each rule's matcher as text, for the listing.
    matchers_text: Vec<String>,
}

#[derive(Clone, Debug)]
enum Matcher {
    Token(TokenTree),
    Fragment(String, String),
    Group(Delimiter, Vec<Matcher>),
    Repeat(Vec<Matcher>, Option<TokenTree>, char),
}

#[derive(Clone, Debug)]
enum Transcriber {
    Token(TokenTree),
    Var(String),
    Crate,
    Group(Delimiter, Vec<Transcriber>),
    /// A `$(...)` and its separator (its operator matters to the matcher only).
    Repeat(Vec<Transcriber>, Option<TokenTree>),
}

/// What a fragment captured: one fragment's tokens, or a repetition's captures.
#[derive(Clone, Debug)]
enum Capture {
    One(TokenStream),
    Many(Vec<Capture>),
}

impl Rules {
    fn parse(tokens: TokenStream) -> Result<Rules, String> {
        let mut rules = Vec::new();
        let mut matchers_text = Vec::new();
        let mut tokens = tokens.into_iter().peekable();
        while let Some(token) = tokens.next() {
            let TokenTree::Group(matcher) = token else {
                return Err(format!("a rule starts with `{token}`"));
            };
            let arrow: Vec<String> = tokens.by_ref().take(2).map(|t| t.to_string()).collect();
            if arrow != ["=", ">"] {
                return Err("a rule without `=>`".to_string());
            }
            let Some(TokenTree::Group(transcriber)) = tokens.next() else {
                return Err("a rule without its expansion".to_string());
            };
            if matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
                tokens.next();
            }
            matchers_text.push(matcher_text(&TokenTree::Group(matcher.clone())));
            rules.push((
                parse_matcher(matcher.stream())?,
                parse_transcriber(transcriber.stream())?,
            ));
        }
        Ok(Rules {
            rules,
            matchers_text,
        })
    }

    /// The tokens of the first rule that matches `input`.
    fn expand(&self, input: &TokenStream) -> Result<TokenStream, String> {
        let mut last_error = String::from("no rules");
        for (matcher, transcriber) in &self.rules {
            let matched = (|stream: ParseStream| {
                let mut captures = HashMap::new();
                match_sequence(stream, matcher, &mut captures)?;
                if !stream.is_empty() {
                    return Err(stream.error("tokens left over"));
                }
                Ok(captures)
            })
            .parse2(input.clone());
            match matched {
                Ok(captures) => {
                    let mut out = TokenStream::new();
                    transcribe(transcriber, &captures, &mut Vec::new(), &mut out)?;
                    return Ok(out);
                }
                Err(error) => last_error = format!("no rule matches: {error}"),
            }
        }
        Err(last_error)
    }
}

fn is_punct(token: &TokenTree, c: char) -> bool {
    matches!(token, TokenTree::Punct(p) if p.as_char() == c)
}

/// A `$(...)`'s separator and operator, after its group.
fn repetition_tail(
    tokens: &mut std::iter::Peekable<proc_macro2::token_stream::IntoIter>,
) -> Result<(Option<TokenTree>, char), String> {
    let operator = |token: &TokenTree| match token {
        TokenTree::Punct(p) if matches!(p.as_char(), '*' | '+' | '?') => Some(p.as_char()),
        _ => None,
    };
    let first = tokens.next().ok_or("a repetition without its operator")?;
    if let Some(op) = operator(&first) {
        return Ok((None, op));
    }
    let second = tokens.next().ok_or("a repetition without its operator")?;
    match operator(&second) {
        Some(op) => Ok((Some(first), op)),
        None => Err(format!("a repetition ends with `{first} {second}`")),
    }
}

fn parse_matcher(tokens: TokenStream) -> Result<Vec<Matcher>, String> {
    let mut out = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        if is_punct(&token, '$') {
            match tokens.next() {
                Some(TokenTree::Ident(name)) => {
                    let colon = tokens.next();
                    let kind = tokens.next();
                    match (colon, kind) {
                        (Some(colon), Some(TokenTree::Ident(kind))) if is_punct(&colon, ':') => {
                            out.push(Matcher::Fragment(name.to_string(), kind.to_string()));
                        }
                        _ => return Err(format!("`${name}` without its fragment kind")),
                    }
                }
                Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Parenthesis => {
                    let inner = parse_matcher(group.stream())?;
                    let (separator, op) = repetition_tail(&mut tokens)?;
                    out.push(Matcher::Repeat(inner, separator, op));
                }
                other => return Err(format!("`$` followed by {other:?}")),
            }
        } else if let TokenTree::Group(group) = &token {
            out.push(Matcher::Group(
                group.delimiter(),
                parse_matcher(group.stream())?,
            ));
        } else {
            out.push(Matcher::Token(token));
        }
    }
    Ok(out)
}

fn parse_transcriber(tokens: TokenStream) -> Result<Vec<Transcriber>, String> {
    let mut out = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        if is_punct(&token, '$') {
            match tokens.peek().cloned() {
                Some(TokenTree::Ident(name)) => {
                    tokens.next();
                    out.push(if name == "crate" {
                        Transcriber::Crate
                    } else {
                        Transcriber::Var(name.to_string())
                    });
                }
                Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Parenthesis => {
                    tokens.next();
                    let inner = parse_transcriber(group.stream())?;
                    let (separator, _) = repetition_tail(&mut tokens)?;
                    out.push(Transcriber::Repeat(inner, separator));
                }
                _ => out.push(Transcriber::Token(token)),
            }
        } else if let TokenTree::Group(group) = &token {
            out.push(Transcriber::Group(
                group.delimiter(),
                parse_transcriber(group.stream())?,
            ));
        } else {
            out.push(Transcriber::Token(token));
        }
    }
    Ok(out)
}

fn same_token(a: &TokenTree, b: &TokenTree) -> bool {
    match (a, b) {
        (TokenTree::Ident(a), TokenTree::Ident(b)) => a == b,
        (TokenTree::Punct(a), TokenTree::Punct(b)) => a.as_char() == b.as_char(),
        (TokenTree::Literal(a), TokenTree::Literal(b)) => a.to_string() == b.to_string(),
        _ => false,
    }
}

fn expect_token(input: ParseStream, expected: &TokenTree) -> syn::Result<()> {
    input.step(|cursor| match cursor.token_tree() {
        Some((found, next)) if same_token(&found, expected) => Ok(((), next)),
        _ => Err(cursor.error(format!("expected `{expected}`"))),
    })
}

fn fragment(input: ParseStream, kind: &str) -> syn::Result<TokenStream> {
    Ok(match kind {
        "ident" => Ident::parse_any(input)?.to_token_stream(),
        "lifetime" => input.parse::<syn::Lifetime>()?.to_token_stream(),
        "tt" => input.parse::<TokenTree>()?.to_token_stream(),
        "ty" => input.parse::<Type>()?.to_token_stream(),
        "path" => input.parse::<syn::Path>()?.to_token_stream(),
        "expr" => input.parse::<syn::Expr>()?.to_token_stream(),
        "literal" => input.parse::<syn::Lit>()?.to_token_stream(),
        "meta" => input.parse::<Meta>()?.to_token_stream(),
        "vis" => input.parse::<Visibility>()?.to_token_stream(),
        "block" => input.parse::<syn::Block>()?.to_token_stream(),
        "item" => input.parse::<Item>()?.to_token_stream(),
        "stmt" => input.parse::<syn::Stmt>()?.to_token_stream(),
        "pat" => syn::Pat::parse_multi(input)?.to_token_stream(),
        "pat_param" => syn::Pat::parse_single(input)?.to_token_stream(),
        other => {
            return Err(input.error(format!(
                "fragment kind `{other}` is not matched by this walk"
            )));
        }
    })
}

fn matcher_vars(matchers: &[Matcher], out: &mut Vec<String>) {
    for matcher in matchers {
        match matcher {
            Matcher::Fragment(name, _) => out.push(name.clone()),
            Matcher::Group(_, inner) | Matcher::Repeat(inner, _, _) => matcher_vars(inner, out),
            Matcher::Token(_) => {}
        }
    }
}

/// Matches `matchers` at the start of `input`, as macro_rules does: fragments parsed
/// greedily, a repetition taken as long as its next round matches.
fn match_sequence(
    input: ParseStream,
    matchers: &[Matcher],
    captures: &mut HashMap<String, Capture>,
) -> syn::Result<()> {
    for matcher in matchers {
        match matcher {
            Matcher::Token(token) => expect_token(input, token)?,
            Matcher::Fragment(name, kind) => {
                captures.insert(name.clone(), Capture::One(fragment(input, kind)?));
            }
            Matcher::Group(delimiter, inner) => {
                let stream = input.step(|cursor| match cursor.token_tree() {
                    Some((TokenTree::Group(group), next)) if group.delimiter() == *delimiter => {
                        Ok((group.stream(), next))
                    }
                    _ => Err(cursor.error("expected a group")),
                })?;
                let inner_captures = (|stream: ParseStream| {
                    let mut found = HashMap::new();
                    match_sequence(stream, inner, &mut found)?;
                    if !stream.is_empty() {
                        return Err(stream.error("tokens left over in a group"));
                    }
                    Ok(found)
                })
                .parse2(stream)?;
                captures.extend(inner_captures);
            }
            Matcher::Repeat(inner, separator, op) => {
                let mut rounds: Vec<HashMap<String, Capture>> = Vec::new();
                loop {
                    if *op == '?' && rounds.len() == 1 {
                        break;
                    }
                    let fork = input.fork();
                    if let (false, Some(separator)) = (rounds.is_empty(), separator)
                        && expect_token(&fork, separator).is_err()
                    {
                        break;
                    }
                    let mut round = HashMap::new();
                    if match_sequence(&fork, inner, &mut round).is_err()
                        || fork.cursor() == input.cursor()
                    {
                        break;
                    }
                    input.advance_to(&fork);
                    rounds.push(round);
                }
                if *op == '+' && rounds.is_empty() {
                    return Err(input.error("expected at least one repetition"));
                }
                let mut names = Vec::new();
                matcher_vars(inner, &mut names);
                for name in names {
                    let each = rounds
                        .iter()
                        .map(|round| {
                            round
                                .get(&name)
                                .cloned()
                                .unwrap_or(Capture::Many(Vec::new()))
                        })
                        .collect();
                    captures.insert(name, Capture::Many(each));
                }
            }
        }
    }
    Ok(())
}

fn transcriber_vars(transcribers: &[Transcriber], out: &mut Vec<String>) {
    for transcriber in transcribers {
        match transcriber {
            Transcriber::Var(name) => out.push(name.clone()),
            Transcriber::Group(_, inner) | Transcriber::Repeat(inner, _) => {
                transcriber_vars(inner, out)
            }
            Transcriber::Token(_) | Transcriber::Crate => {}
        }
    }
}

/// A capture at the repetition rounds `indices` (outer first); one captured outside a
/// repetition is the same in every round.
fn capture_at<'c>(capture: &'c Capture, indices: &[usize]) -> Option<&'c Capture> {
    let mut at = capture;
    for &index in indices {
        match at {
            Capture::Many(rounds) => at = rounds.get(index)?,
            Capture::One(_) => break,
        }
    }
    Some(at)
}

fn transcribe(
    transcribers: &[Transcriber],
    captures: &HashMap<String, Capture>,
    indices: &mut Vec<usize>,
    out: &mut TokenStream,
) -> Result<(), String> {
    for transcriber in transcribers {
        match transcriber {
            Transcriber::Token(token) => out.extend([token.clone()]),
            Transcriber::Crate => {
                out.extend([TokenTree::Ident(Ident::new("crate", Span::call_site()))])
            }
            Transcriber::Var(name) => match captures.get(name).and_then(|c| capture_at(c, indices))
            {
                Some(Capture::One(tokens)) => out.extend(tokens.clone()),
                Some(Capture::Many(_)) => return Err(format!("`${name}` is still repeating here")),
                // Not a capture: `$` and the name, as written.
                None => {
                    out.extend(quote!($));
                    out.extend([TokenTree::Ident(Ident::new(name, Span::call_site()))]);
                }
            },
            Transcriber::Group(delimiter, inner) => {
                let mut stream = TokenStream::new();
                transcribe(inner, captures, indices, &mut stream)?;
                out.extend([TokenTree::Group(Group::new(*delimiter, stream))]);
            }
            Transcriber::Repeat(inner, separator) => {
                let mut names = Vec::new();
                transcriber_vars(inner, &mut names);
                let rounds: BTreeSet<usize> = names
                    .iter()
                    .filter_map(|name| {
                        match captures.get(name).and_then(|c| capture_at(c, indices)) {
                            Some(Capture::Many(rounds)) => Some(rounds.len()),
                            _ => None,
                        }
                    })
                    .collect();
                let rounds = match rounds.len() {
                    1 => *rounds.first().unwrap(),
                    0 => return Err("a repetition repeats no capture".to_string()),
                    _ => return Err("a repetition's captures repeat unevenly".to_string()),
                };
                for round in 0..rounds {
                    if round > 0 {
                        out.extend(separator.clone());
                    }
                    indices.push(round);
                    transcribe(inner, captures, indices, out)?;
                    indices.pop();
                }
            }
        }
    }
    Ok(())
}

/// A macro rule's matcher as written, near enough: `($name:ident($inner:ty))`.
fn matcher_text(token: &TokenTree) -> String {
    let mut out = String::new();
    write_tokens(std::slice::from_ref(token), &mut out);
    out
}

fn write_tokens(tokens: &[TokenTree], out: &mut String) {
    for (i, token) in tokens.iter().enumerate() {
        if i > 0 && !glued(&tokens[..i], token) {
            out.push(' ');
        }
        match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                out.push_str(open);
                let inner: Vec<TokenTree> = group.stream().into_iter().collect();
                write_tokens(&inner, out);
                out.push_str(close);
            }
            other => out.push_str(&other.to_string()),
        }
    }
}

/// Whether `token` follows `before` (the tokens before it in its group) without a space:
/// after `$` (`$name`, `$(`) and joint punctuation (`=>`, `::`), before separators and
/// repetition operators, around a fragment's colon (`$name:kind`), and between a name and
/// its parenthesis or bracket.
fn glued(before: &[TokenTree], token: &TokenTree) -> bool {
    let n = before.len();
    let is_fragment_name = |at: usize| at >= 1 && is_punct(&before[at - 1], '$');
    match (&before[n - 1], token) {
        (previous, _) if is_punct(previous, '$') => true,
        (TokenTree::Punct(p), _) if p.spacing() == proc_macro2::Spacing::Joint => true,
        (_, TokenTree::Punct(p)) if matches!(p.as_char(), ',' | ';' | '?' | '*' | '+') => true,
        (TokenTree::Ident(_), colon) if is_punct(colon, ':') => is_fragment_name(n - 1),
        (colon, TokenTree::Ident(_)) if is_punct(colon, ':') => n >= 2 && is_fragment_name(n - 2),
        (TokenTree::Ident(_), TokenTree::Group(g)) => g.delimiter() != Delimiter::Brace,
        _ => false,
    }
}

/// The listing's header: what it is, how to regenerate it, and its counts, each defined.
fn header(name: &str, root_names: usize, items: usize, document_methods: usize) -> String {
    format!(
        "\
// The public API of {name}, listed by tests/public_api.rs from the source (seqid/src, read
// with syn) and checked by it: every change of the public surface shows here, in review, as
// a diff of this file. Not to be edited by hand: after a change of the surface, regenerate
// it and read the diff:
//
//     {REGENERATE}
//
// Each entry is a heading, `<kind> <public path>`, and the item under it: its signature
// without docs, bodies or private fields (and no attributes but #[derive], #[non_exhaustive]
// and #[doc(hidden)]), then its inherent impls' public items and the headers of its trait
// impls, wherever in the crate they are (`(derived)`: made by #[derive]). An item reachable
// at several public paths is listed at the shortest, and its other paths say where
// (`= path`). In signatures the crate's types are named by their public paths (`crate::...`:
// a type with none), other crates' by the paths their imports give; `{{ ... }}` marks a
// trait's provided methods. The guide's chapters are documentation: its path only. Last,
// the hidden paths: #[doc(hidden)] items and everything under `{PRIVATE}`, by path only (a
// hidden method, field, variant or trait item stays in its item's entry, marked).
//
// names at the root: {root_names} (the distinct names lib.rs's `pub use` and `pub mod` items
//   bring into the crate root, `{PRIVATE}` and `{GUIDE}` included; a name brought twice, as
//   the derive macro and the trait `Document` are, counted once; a #[macro_export] macro of
//   another file, public at the root too, is not lib.rs's)
// public items in all: {items} (structs, enums, unions, traits, fns, consts, statics, types,
//   macros and derive macros at a public path that is not hidden, outside `{PRIVATE}` and
//   `{GUIDE}`, each once however many paths reach it; not modules, methods, fields,
//   variants or associated items)
// methods of the trait Document: {document_methods} (its fns, hidden ones included)
"
    )
}

#[cfg(test)]
mod walker {
    //! The walk itself, on small crates written here: what it must list, and leave out.

    use super::*;

    fn listing(files: &[(&str, &str)]) -> Listing {
        try_listing(files).unwrap_or_else(|problems| panic!("{}", problems.join("\n")))
    }

    fn try_listing(files: &[(&str, &str)]) -> Result<Listing, Vec<String>> {
        let files = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let derive = BTreeMap::from([(
            "demo_derive".to_string(),
            "#[proc_macro_derive(Thing, attributes(thing))]\n\
             pub fn thing(input: TokenStream) -> TokenStream { input }"
                .to_string(),
        )]);
        generate("demo", &files, &derive)
    }

    /// The listing's lines after its header.
    fn body(listing: &Listing) -> Vec<&str> {
        listing
            .text
            .lines()
            .skip_while(|l| l.starts_with("//"))
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn a_pub_use_chain_through_two_modules_is_listed_at_its_public_path() {
        let listing = listing(&[
            ("lib.rs", "mod a;\npub use a::Thing;\n"),
            ("a/mod.rs", "mod b;\npub use self::b::Thing;\n"),
            (
                "a/b.rs",
                "pub struct Thing { pub x: u32, y: u32 }\nimpl Thing { pub fn new() -> Self { todo!() } fn hidden() {} }\n",
            ),
        ]);
        assert_eq!(
            body(&listing),
            [
                "struct demo::Thing",
                "    pub struct Thing {",
                "        pub x: u32,",
                "        /* private fields */",
                "    }",
                "    impl demo::Thing {",
                "        pub fn new() -> Self;",
                "    }",
                "Hidden (the derive's plumbing, outside the semver promise)",
            ]
        );
        assert_eq!((listing.root_names, listing.items), (1, 1));
    }

    #[test]
    fn crate_private_and_test_only_items_are_not_listed() {
        let listing = listing(&[(
            "lib.rs",
            "pub(crate) struct Inner;\n\
             #[cfg(test)] pub struct OnlyInTests;\n\
             #[cfg(test)] mod tests;\n\
             pub mod m { pub(super) fn f() {} pub fn g(x: crate::Inner) {} #[cfg(test)] pub fn t() {} }\n\
             pub struct Open { pub(crate) inner: u32, #[cfg(test)] pub probe: u32 }\n\
             impl Open { pub(crate) fn internal(&self) {} #[cfg(test)] pub fn probe(&self) {} }\n\
             impl Open { fn private(&self) {} }\n\
             trait Private {}\n\
             impl Private for Open {}\n\
             impl Clone for Inner { fn clone(&self) -> Self { Inner } }\n",
        )]);
        assert_eq!(
            body(&listing),
            [
                "struct demo::Open",
                "    pub struct Open {",
                "        /* private fields */",
                "    }",
                "mod demo::m",
                "fn demo::m::g",
                "    pub fn g(x: crate::Inner);",
                "Hidden (the derive's plumbing, outside the semver promise)",
            ]
        );
    }

    #[test]
    fn globs_renames_and_relative_paths_are_followed() {
        let listing = listing(&[
            (
                "lib.rs",
                "mod a { pub struct A; pub(crate) struct B; }\n\
                 pub mod g { pub use super::a::*; }\n\
                 pub mod n;\n",
            ),
            (
                "n/mod.rs",
                "pub mod deep { pub use crate::g::A as Renamed; pub(crate) use super::super::a::B; }\n",
            ),
        ]);
        assert_eq!(
            body(&listing),
            [
                "mod demo::g",
                "struct demo::g::A",
                "    pub struct A;",
                "mod demo::n",
                "mod demo::n::deep",
                "struct demo::n::deep::Renamed = demo::g::A",
                "Hidden (the derive's plumbing, outside the semver promise)",
            ]
        );
    }

    #[test]
    fn hidden_items_are_listed_by_path_in_the_hidden_section() {
        let listing = listing(&[(
            "lib.rs",
            "#[doc(hidden)] pub fn plumbing() {}\n\
             #[doc(hidden)] pub mod __private { pub use crate::Open; pub fn made() {} pub use ::core; }\n\
             pub struct Open;\n\
             mod t { pub trait Thing { fn open(&self); #[doc(hidden)] fn __made(&self); } }\n\
             pub use t::Thing;\n\
             pub use demo_derive::Thing;\n\
             #[non_exhaustive] pub enum Kind { A, #[non_exhaustive] B { #[doc(hidden)] x: u32 } }\n",
        )]);
        assert_eq!(
            body(&listing),
            [
                "enum demo::Kind",
                "    #[non_exhaustive]",
                "    pub enum Kind {",
                "        A,",
                "        #[non_exhaustive]",
                "        B { #[doc(hidden)] x: u32 },",
                "    }",
                "struct demo::Open",
                "    pub struct Open;",
                "derive demo::Thing",
                "    #[derive(Thing)], helper attributes #[thing]",
                "trait demo::Thing",
                "    pub trait Thing {",
                "        fn open(&self);",
                "        #[doc(hidden)]",
                "        fn __made(&self);",
                "    }",
                "Hidden (the derive's plumbing, outside the semver promise)",
                "    mod demo::__private",
                "    struct demo::__private::Open = demo::Open",
                "    re-export demo::__private::core = core",
                "    fn demo::__private::made",
                "    fn demo::plumbing",
            ]
        );
        // `Thing` twice (the derive and the trait) is one name at the root, two items.
        assert_eq!((listing.root_names, listing.items), (5, 4));
    }

    #[test]
    fn another_crates_macros_in_a_public_module_are_said_unseen() {
        let listing = listing(&[(
            "lib.rs",
            "pub mod m { thread_local! { pub static X: u32 = 1; } }\n\
             mod private { thread_local! { static Y: u32 = 1; } }\n",
        )]);
        assert_eq!(
            body(&listing),
            [
                "mod demo::m",
                "Not seen (another crate's macros among a public module's items: what they make is not listed)",
                "    thread_local! in demo::m",
                "Hidden (the derive's plumbing, outside the semver promise)",
            ]
        );
    }

    #[test]
    fn an_unresolved_pub_use_fails_naming_it() {
        let problems = try_listing(&[("lib.rs", "mod a { pub struct B; }\npub use a::Missing;\n")])
            .err()
            .expect("a pub use of nothing is a problem");
        assert_eq!(
            problems,
            [
                "lib.rs: pub use a::Missing (as `Missing`) cannot be resolved: `Missing` not found in `a`"
            ]
        );
    }

    #[test]
    fn macro_made_items_and_impls_are_listed() {
        let listing = listing(&[(
            "lib.rs",
            "macro_rules! setter { ($name:ident: $ty:ty) => { pub fn $name(self, $name: $ty) -> Self { self } }; }\n\
             macro_rules! make { ($($name:ident),*) => { $(pub struct $name; impl $name { setter!(size: u32); })* }; }\n\
             make!(One, Two);\n\
             pub trait Shape { fn area(&self) -> u32; fn twice(&self) -> u32 { 2 * self.area() } }\n\
             impl Shape for One { fn area(&self) -> u32 { 1 } }\n\
             #[macro_export] macro_rules! shape { ($t:ty) => {}; }\n",
        )]);
        assert_eq!(
            body(&listing),
            [
                "struct demo::One",
                "    pub struct One;",
                "    impl demo::One {",
                "        pub fn size(self, size: u32) -> Self;",
                "    }",
                "    impl demo::Shape for demo::One",
                "trait demo::Shape",
                "    pub trait Shape {",
                "        fn area(&self) -> u32;",
                "        fn twice(&self) -> u32 { ... }",
                "    }",
                "    impl demo::Shape for demo::One",
                "struct demo::Two",
                "    pub struct Two;",
                "    impl demo::Two {",
                "        pub fn size(self, size: u32) -> Self;",
                "    }",
                "macro demo::shape",
                "    macro_rules! shape {",
                "        ($t:ty) => { ... };",
                "    }",
                "Hidden (the derive's plumbing, outside the semver promise)",
            ]
        );
    }

    #[test]
    fn an_impl_is_the_type_its_own_module_names() {
        // Two types named `Handle`: each impl is for the one its file's `use` names.
        let listing = listing(&[
            (
                "lib.rs",
                "mod a;\nmod b;\nmod c;\npub use a::Handle;\npub mod other { pub use crate::b::Handle; }\n",
            ),
            ("a.rs", "pub struct Handle;\n"),
            ("b.rs", "pub struct Handle;\n"),
            (
                "c.rs",
                "use crate::b::Handle;\nimpl Handle { pub fn of_b(&self) {} }\nimpl Clone for Handle { fn clone(&self) -> Self { Handle } }\n",
            ),
        ]);
        assert_eq!(
            body(&listing),
            [
                "struct demo::Handle",
                "    pub struct Handle;",
                "mod demo::other",
                "struct demo::other::Handle",
                "    pub struct Handle;",
                "    impl demo::other::Handle {",
                "        pub fn of_b(&self);",
                "    }",
                "    impl Clone for demo::other::Handle",
                "Hidden (the derive's plumbing, outside the semver promise)",
            ]
        );
    }

    #[test]
    fn the_differences_name_the_lines_on_each_side() {
        let difference = differences("a\nb\nc\n", "a\nc\nd\n").unwrap();
        assert!(
            difference.starts_with("first difference at line 2:\n  file:   b\n  source: c\n"),
            "{difference}"
        );
        assert!(
            difference.contains("lines only in the file (gone from the source): 1\n      2 b\n"),
            "{difference}"
        );
        assert!(
            difference.contains("lines only in the source (new): 1\n      3 d\n"),
            "{difference}"
        );
        assert!(
            differences("a\nb\n", "b\na\n")
                .unwrap()
                .ends_with("the same lines, in another order\n")
        );
        assert_eq!(differences("a\n", "a\n"), None);
    }
}
