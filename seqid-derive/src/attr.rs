//! Reading `#[seq_id(...)]` (on the struct or on a field: one parser for both) and the few
//! `#[serde(...)]` keys that decide the serialized key of a field or what is written
//! under it, into typed values that keep their spans for error messages. Whether a key
//! is in its place is decided later, by `declaration`, which sees the whole struct.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, Ident, Lit, LitStr, Meta, Token, UnOp};

use crate::case::RenameRule;
use crate::ctxt::Ctxt;

/// The keys `#[seq_id]` accepts after the name, for the "unknown key" message.
const KEYS: &str = "`collection`, `counters`, `strategy`, `max_attempts`, `time_budget_ms`, \
                    `block_size`, `counter_write_concern`, `start`, `step`, `scope`, `layout`, \
                    `counter_name`, `counter_field`, `counter_value`, `counter_holds`, `numbered`";

/// A `key = value` setting. `value` is `None` when the value was invalid: that error is
/// already reported, and checks that depend on the value are skipped rather than piled on.
pub struct Setting<T> {
    pub key: Ident,
    pub value: Option<T>,
}

/// The `strategy = "..."` names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StrategyKind {
    Counters,
    Optimistic,
    Block,
    Gapless,
}

impl StrategyKind {
    const ALL: [StrategyKind; 4] = [Self::Counters, Self::Optimistic, Self::Block, Self::Gapless];

    pub fn name(self) -> &'static str {
        match self {
            Self::Counters => "counters",
            Self::Optimistic => "optimistic",
            Self::Block => "block",
            Self::Gapless => "gapless",
        }
    }
}

/// The `counter_write_concern = "..."` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CounterWrite {
    Majority,
    Database,
}

impl CounterWrite {
    const ALL: [CounterWrite; 2] = [Self::Majority, Self::Database];

    fn name(self) -> &'static str {
        match self {
            Self::Majority => "majority",
            Self::Database => "database",
        }
    }
}

/// The `layout = "..."` presets: the tools whose counters seqid shares, and what the
/// derive checks against each (the layouts themselves are the runtime's `Layout`
/// constants).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LayoutKind {
    Tutorial,
    MongoEngine,
    MongooseSequence,
    MongooseAutoIncrement,
    Typegoose,
    Go,
}

impl LayoutKind {
    const ALL: [LayoutKind; 6] = [
        Self::Tutorial,
        Self::MongoEngine,
        Self::MongooseSequence,
        Self::MongooseAutoIncrement,
        Self::Typegoose,
        Self::Go,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Tutorial => "tutorial",
            Self::MongoEngine => "mongoengine",
            Self::MongooseSequence => "mongoose-sequence",
            Self::MongooseAutoIncrement => "mongoose-auto-increment",
            Self::Typegoose => "typegoose",
            Self::Go => "go",
        }
    }

    /// The tool, for messages.
    pub fn tool(self) -> &'static str {
        match self {
            Self::Tutorial => "the MongoDB tutorial's layout",
            Self::MongoEngine => "MongoEngine's SequenceField",
            Self::MongooseSequence => "mongoose-sequence",
            Self::MongooseAutoIncrement => "mongoose-auto-increment",
            Self::Typegoose => "@typegoose/auto-increment",
            Self::Go => "the Go blog post's layout",
        }
    }

    /// The runtime's `Layout` constant.
    pub fn constant(self) -> &'static str {
        match self {
            Self::Tutorial => "TUTORIAL",
            Self::MongoEngine => "MONGOENGINE",
            Self::MongooseSequence => "MONGOOSE_SEQUENCE",
            Self::MongooseAutoIncrement => "MONGOOSE_AUTO_INCREMENT",
            Self::Typegoose => "TYPEGOOSE",
            Self::Go => "GO",
        }
    }

    /// The counters collection the tool uses unless told otherwise.
    pub fn default_counters(self) -> &'static str {
        match self {
            Self::MongoEngine => "mongoengine.counters",
            Self::MongooseAutoIncrement | Self::Typegoose => "identitycounters",
            Self::Tutorial | Self::MongooseSequence | Self::Go => "counters",
        }
    }

    /// The first id the tool hands out unless told otherwise (`startAt`, `start_seq`).
    pub fn first_id(self) -> i64 {
        match self {
            Self::MongooseAutoIncrement | Self::Typegoose => 0,
            _ => 1,
        }
    }

    /// Why the tool's counter cannot hold a scope, if it cannot.
    pub fn without_scope(self) -> Option<&'static str> {
        match self {
            Self::Tutorial | Self::MongooseSequence => None,
            Self::MongoEngine => {
                Some("finds its counter by `_id: \"<collection>.<field>\"` alone, with no scope")
            }
            Self::MongooseAutoIncrement => {
                Some("finds its counter by `model` and `field` alone, with no scope")
            }
            Self::Typegoose => {
                Some("finds its counter by `modelName` and `field` alone, with no scope")
            }
            Self::Go => Some("finds its counter by `_id` alone, with no scope"),
        }
    }

    /// Why the tool's ids cannot be a step apart, if they cannot.
    pub fn without_step(self) -> Option<&'static str> {
        match self {
            Self::MongoEngine => Some("always adds 1 to its counter (`$inc: { next: 1 }`)"),
            Self::Go => Some("adds 1 per id (`$inc: { sequence: 1 }`)"),
            _ => None,
        }
    }
}

/// The `numbered = "..."` values: when the sequence's number is taken.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NumberedKind {
    /// By `insert`, the default.
    Insert,
    /// By `number_draft`, when a stored draft is issued.
    Later,
}

/// The `counter_holds = "..."` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HoldsKind {
    Last,
    Next,
}

/// The first argument of `#[seq_id(...)]`.
pub enum Name {
    /// A string literal: the sequence name.
    Given(LitStr),
    /// Nothing before the keys (or no arguments): the attribute names no sequence.
    Absent,
    /// Something unreadable where the name goes, already reported: the attribute meant
    /// to name a sequence.
    Invalid,
}

/// `#[seq_id("name", key = value, ...)]`, each part as written. Absent keys take their
/// defaults at expansion.
pub struct SeqId {
    /// The whole attribute, where errors about the attribute itself point.
    pub attr: Attribute,
    pub name: Name,
    pub collection: Option<Setting<LitStr>>,
    pub counters: Option<Setting<LitStr>>,
    pub strategy: Option<Setting<StrategyKind>>,
    pub max_attempts: Option<Setting<u32>>,
    pub time_budget_ms: Option<Setting<u32>>,
    pub block_size: Option<Setting<u32>>,
    pub counter_write_concern: Option<Setting<CounterWrite>>,
    pub start: Option<Setting<i64>>,
    pub step: Option<Setting<u32>>,
    /// The fields, by Rust name, whose values the numbers are counted per.
    pub scope: Option<Setting<Vec<LitStr>>>,
    pub layout: Option<Setting<LayoutKind>>,
    pub counter_name: Option<Setting<LitStr>>,
    pub counter_field: Option<Setting<LitStr>>,
    pub counter_value: Option<Setting<LitStr>>,
    pub counter_holds: Option<Setting<HoldsKind>>,
    pub numbered: Option<Setting<NumberedKind>>,
    /// The keys stored (known ones, not repeated), in the order written, for checks that
    /// refuse keys by where the attribute is: their errors then come in source order.
    pub keys: Vec<Ident>,
}

impl SeqId {
    /// Reads the `#[seq_id]` of a struct or of a field, if any. Only the first counts: a
    /// second one is reported.
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<SeqId> {
        let mut found = attrs.iter().filter(|attr| attr.path().is_ident("seq_id"));
        let first = found.next()?;
        for repeated in found {
            cx.error_spanned_by(
                repeated,
                "duplicate #[seq_id] attribute: an item declares one sequence at most (a field \
                 holds one number); declare another sequence on a field of its own",
            );
        }
        let mut seq_id = SeqId {
            attr: first.clone(),
            name: Name::Absent,
            collection: None,
            counters: None,
            strategy: None,
            max_attempts: None,
            time_budget_ms: None,
            block_size: None,
            counter_write_concern: None,
            start: None,
            step: None,
            scope: None,
            layout: None,
            counter_name: None,
            counter_field: None,
            counter_value: None,
            counter_holds: None,
            numbered: None,
            keys: Vec::new(),
        };
        seq_id.parse(cx, first);
        Some(seq_id)
    }

    /// The sequence name, when one was written and is a string literal.
    pub fn name(&self) -> Option<&LitStr> {
        match &self.name {
            Name::Given(name) => Some(name),
            Name::Absent | Name::Invalid => None,
        }
    }

    /// Whether the attribute says `numbered = "later"`.
    pub fn numbered_later(&self) -> bool {
        matches!(
            self.numbered,
            Some(Setting {
                value: Some(NumberedKind::Later),
                ..
            })
        )
    }

    /// Whether the attribute names a sequence (its name may be invalid, and reported).
    pub fn names_a_sequence(&self) -> bool {
        !matches!(self.name, Name::Absent)
    }

    fn parse(&mut self, cx: &Ctxt, attr: &Attribute) {
        let list = match &attr.meta {
            // A bare `#[seq_id]` names nothing; whether that is an error depends on where
            // it is and what else the struct declares.
            Meta::Path(_) => return,
            Meta::List(list) => list,
            Meta::NameValue(meta) => {
                self.name = Name::Invalid;
                cx.error_spanned_by(
                    meta,
                    "the arguments of #[seq_id] go in parentheses: #[seq_id(\"name\", ...)]",
                );
                return;
            }
        };
        if let Err(err) = list.parse_args_with(|input: ParseStream| self.parse_args(cx, input)) {
            // The arguments stopped being readable: do not also report a missing name.
            if let Name::Absent = self.name {
                self.name = Name::Invalid;
            }
            cx.syn_error(err);
        }
    }

    /// Parses `"name", key = value, ...`.
    fn parse_args(&mut self, cx: &Ctxt, input: ParseStream) -> syn::Result<()> {
        let mut first = true;
        while !input.is_empty() {
            if input.peek(Ident::peek_any) && input.peek2(Token![=]) {
                let key = input.call(Ident::parse_any)?;
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                self.set(cx, key, &value);
            } else {
                let value: Expr = input.parse()?;
                if first {
                    self.name = match string(cx, &value, "the sequence name", "\"users\"") {
                        Some(name) => Name::Given(name),
                        None => Name::Invalid,
                    };
                } else {
                    cx.error_spanned_by(
                        &value,
                        "unexpected argument: after the sequence name, write `key = value`",
                    );
                }
            }
            first = false;
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(())
    }

    fn set(&mut self, cx: &Ctxt, key: Ident, value: &Expr) {
        let name = key.unraw().to_string();
        let known = match name.as_str() {
            "collection" => {
                let parsed = string(cx, value, "`collection`", "\"users\"");
                put(cx, &mut self.collection, key, parsed)
            }
            "counters" => {
                let parsed = string(cx, value, "`counters`", "\"counters\"");
                put(cx, &mut self.counters, key, parsed)
            }
            "strategy" => {
                let parsed = string(cx, value, "`strategy`", "\"block\"").and_then(|lit| {
                    let kind = StrategyKind::ALL
                        .into_iter()
                        .find(|kind| kind.name() == lit.value());
                    if kind.is_none() {
                        cx.error_spanned_by(
                            &lit,
                            format!(
                                "unknown strategy {:?}: expected \"counters\", \"optimistic\", \
                                 \"block\" or \"gapless\"",
                                lit.value()
                            ),
                        );
                    }
                    kind
                });
                put(cx, &mut self.strategy, key, parsed)
            }
            "start" => {
                // 0 is a first id for the tools that count from 0 (`valid` then asks for
                // an `Option` field, where 0 is not "unset").
                let parsed = bounded(cx, value, &name, "i64", "an i64", 0, i64::MAX as u128)
                    .map(|n| n as i64);
                put(cx, &mut self.start, key, parsed)
            }
            "step" => {
                let parsed = positive_u32(cx, value, &name);
                put(cx, &mut self.step, key, parsed)
            }
            "layout" => {
                let parsed = string(cx, value, "`layout`", "\"mongoengine\"").and_then(|lit| {
                    let kind = LayoutKind::ALL
                        .into_iter()
                        .find(|kind| kind.name() == lit.value());
                    if kind.is_none() {
                        let names: Vec<String> = LayoutKind::ALL
                            .iter()
                            .map(|kind| format!("{:?}", kind.name()))
                            .collect();
                        cx.error_spanned_by(
                            &lit,
                            format!(
                                "unknown layout {:?}: expected one of {}; for another tool's \
                                 counter, describe it with `counter_name`, `counter_field`, \
                                 `counter_value` and `counter_holds` instead",
                                lit.value(),
                                names.join(", ")
                            ),
                        );
                    }
                    kind
                });
                put(cx, &mut self.layout, key, parsed)
            }
            "counter_name" => {
                let parsed = counter_key(cx, value, &name, "\"model\"");
                put(cx, &mut self.counter_name, key, parsed)
            }
            "counter_field" => {
                let parsed = counter_key(cx, value, &name, "\"field\"");
                put(cx, &mut self.counter_field, key, parsed)
            }
            "counter_value" => {
                let parsed = counter_key(cx, value, &name, "\"count\"");
                put(cx, &mut self.counter_value, key, parsed)
            }
            "counter_holds" => {
                let parsed = string(cx, value, "`counter_holds`", "\"last\"").and_then(|lit| {
                    let holds = match lit.value().as_str() {
                        "last" => Some(HoldsKind::Last),
                        "next" => Some(HoldsKind::Next),
                        _ => None,
                    };
                    if holds.is_none() {
                        cx.error_spanned_by(
                            &lit,
                            format!(
                                "unknown counter_holds {:?}: expected \"last\" (the counter \
                                 holds the last id handed out, the default) or \"next\" (the \
                                 next id to hand out)",
                                lit.value()
                            ),
                        );
                    }
                    holds
                });
                put(cx, &mut self.counter_holds, key, parsed)
            }
            "numbered" => {
                let parsed = string(cx, value, "`numbered`", "\"later\"").and_then(|lit| {
                    let numbered = match lit.value().as_str() {
                        "insert" => Some(NumberedKind::Insert),
                        "later" => Some(NumberedKind::Later),
                        _ => None,
                    };
                    if numbered.is_none() {
                        cx.error_spanned_by(
                            &lit,
                            format!(
                                "unknown numbered {:?}: expected \"insert\" (`insert` numbers \
                                 the document, the default) or \"later\" (drafts are stored \
                                 without a number, and `number_draft` numbers each when it is \
                                 issued)",
                                lit.value()
                            ),
                        );
                    }
                    numbered
                });
                put(cx, &mut self.numbered, key, parsed)
            }
            "max_attempts" => {
                let parsed = positive_u32(cx, value, &name);
                put(cx, &mut self.max_attempts, key, parsed)
            }
            "time_budget_ms" => {
                let parsed = positive_u32(cx, value, &name);
                put(cx, &mut self.time_budget_ms, key, parsed)
            }
            "block_size" => {
                let parsed = positive_u32(cx, value, &name);
                put(cx, &mut self.block_size, key, parsed)
            }
            "counter_write_concern" => {
                let parsed =
                    string(cx, value, "`counter_write_concern`", "\"majority\"").and_then(|lit| {
                        let found = CounterWrite::ALL
                            .into_iter()
                            .find(|concern| concern.name() == lit.value());
                        if found.is_none() {
                            cx.error_spanned_by(
                                &lit,
                                format!(
                                    "unknown counter_write_concern {:?}: expected \"majority\" \
                                     (the default) or \"database\" (the database's own)",
                                    lit.value()
                                ),
                            );
                        }
                        found
                    });
                put(cx, &mut self.counter_write_concern, key, parsed)
            }
            "scope" => {
                let parsed = scope(cx, value);
                put(cx, &mut self.scope, key, parsed)
            }
            _ => {
                cx.error_spanned_by(
                    &key,
                    format!("unknown key `{name}` in #[seq_id]: expected one of {KEYS}"),
                );
                None
            }
        };
        self.keys.extend(known);
    }
}

/// Stores a setting, refusing a key given twice (the error points at the second).
/// Returns the key when stored.
fn put<T>(cx: &Ctxt, slot: &mut Option<Setting<T>>, key: Ident, value: Option<T>) -> Option<Ident> {
    if slot.is_some() {
        cx.error_spanned_by(
            &key,
            format!("duplicate key `{}` in #[seq_id]", key.unraw()),
        );
        None
    } else {
        *slot = Some(Setting {
            key: key.clone(),
            value,
        });
        Some(key)
    }
}

/// Strips the invisible groups `macro_rules!` wraps around fragments.
fn ungroup(mut expr: &Expr) -> &Expr {
    while let Expr::Group(group) = expr {
        expr = &group.expr;
    }
    expr
}

fn string(cx: &Ctxt, value: &Expr, what: &str, example: &str) -> Option<LitStr> {
    if let Expr::Lit(lit) = ungroup(value)
        && let Lit::Str(s) = &lit.lit
    {
        return Some(s.clone());
    }
    cx.error_spanned_by(
        value,
        format!("{what} must be a string literal, e.g. {example}"),
    );
    None
}

/// `scope = "field"` or `scope = ["field", ...]`: the string literals, or `None` when
/// there are none to check further (reported). In an array, the literals among other
/// things are kept, so that each is still checked against the fields.
fn scope(cx: &Ctxt, value: &Expr) -> Option<Vec<LitStr>> {
    const EXAMPLE: &str = "e.g. scope = \"project\" or scope = [\"tenant\", \"year\"]";
    match ungroup(value) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => Some(vec![lit.clone()]),
        Expr::Array(array) if array.elems.is_empty() => {
            cx.error_spanned_by(
                array,
                format!(
                    "`scope` needs at least one field; for a sequence that is not scoped, \
                     remove `scope` ({EXAMPLE})"
                ),
            );
            None
        }
        Expr::Array(array) => {
            let mut fields = Vec::new();
            for elem in &array.elems {
                match ungroup(elem) {
                    Expr::Lit(syn::ExprLit {
                        lit: Lit::Str(lit), ..
                    }) => fields.push(lit.clone()),
                    _ => cx.error_spanned_by(
                        elem,
                        "each field of `scope` must be a string literal naming a field of \
                         the struct, e.g. \"project\"",
                    ),
                }
            }
            Some(fields)
        }
        _ => {
            cx.error_spanned_by(
                value,
                format!(
                    "`scope` must be a string literal naming a field of the struct, or an \
                     array of them, {EXAMPLE}"
                ),
            );
            None
        }
    }
}

/// A field name of the counter document (`counter_name`, `counter_field`,
/// `counter_value`): a string literal MongoDB takes as a top-level field name.
fn counter_key(cx: &Ctxt, value: &Expr, key: &str, example: &str) -> Option<LitStr> {
    let lit = string(cx, value, &format!("`{key}`"), example)?;
    let name = lit.value();
    let why = if name.is_empty() {
        Some("must not be empty")
    } else if name.starts_with('$') {
        Some("must not start with `$`: MongoDB reads that as an operator")
    } else if name.contains('.') {
        Some("must not contain `.`: MongoDB reads that as a path into a subdocument")
    } else if name.contains('\0') {
        Some("must not contain a NUL character")
    } else {
        None
    };
    match why {
        Some(why) => {
            cx.error_spanned_by(
                &lit,
                format!("`{key}` names a field of the counter, so it {why}"),
            );
            None
        }
        None => Some(lit),
    }
}

/// An integer literal from 1 to `u32::MAX`, the range of `max_attempts`, `time_budget_ms`,
/// `block_size` and `step`.
fn positive_u32(cx: &Ctxt, value: &Expr, key: &str) -> Option<u32> {
    bounded(cx, value, key, "u32", "a u32", 1, u32::MAX.into()).map(|n| n as u32)
}

/// An integer literal from `min` to `max`, the range of the setting `key`, of type
/// `type_name` (`a_type` in messages: "an i64").
fn bounded(
    cx: &Ctxt,
    value: &Expr,
    key: &str,
    type_name: &str,
    a_type: &str,
    min: u128,
    max: u128,
) -> Option<u128> {
    match ungroup(value) {
        Expr::Lit(lit) => {
            if let Lit::Int(int) = &lit.lit {
                if !(int.suffix().is_empty() || int.suffix() == type_name) {
                    cx.error_spanned_by(int, format!("`{key}` is {a_type}: drop the suffix"));
                    return None;
                }
                return match int.base10_parse::<u128>() {
                    Ok(n) if n < min => {
                        cx.error_spanned_by(int, format!("`{key}` must be at least {min}"));
                        None
                    }
                    Ok(n) if n <= max => Some(n),
                    _ => {
                        cx.error_spanned_by(
                            int,
                            format!("`{key}` must fit in {a_type} (at most {max})"),
                        );
                        None
                    }
                };
            }
        }
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => {
            if let Expr::Lit(lit) = ungroup(&unary.expr)
                && let Lit::Int(_) = lit.lit
            {
                cx.error_spanned_by(value, format!("`{key}` must be at least {min}"));
                return None;
            }
        }
        _ => {}
    }
    cx.error_spanned_by(
        value,
        format!("`{key}` must be an integer literal, e.g. {key} = 100"),
    );
    None
}

/// A container `#[serde(...)]` key that changes what is written as `_id`, refused with `why`.
pub struct Refused {
    /// The key as written (`into`, `with`, ...), where the error points; for
    /// `tag = "_id"`, the literal.
    pub span_of: TokenStream,
    pub why: &'static str,
}

impl Refused {
    /// Records `path` in `into` if it is one of the `refused` keys.
    fn note(refused: &[(&str, &'static str)], path: &syn::Path, into: &mut Vec<Refused>) {
        if let Some(&(_, why)) = refused.iter().find(|(key, _)| path.is_ident(key)) {
            into.push(Refused {
                span_of: path.to_token_stream(),
                why,
            });
        }
    }
}

/// The container-level `#[serde(...)]` keys that change field names, and those that
/// would replace the document seqid fills with something else.
#[derive(Default)]
pub struct SerdeContainer {
    /// `rename_all`, or its `serialize` half: the rule for field names on the way out.
    pub rename_all: Option<RenameRule>,
    /// `into`, `transparent`, `remote`, `tag = "_id"`.
    pub refused: Vec<Refused>,
}

impl SerdeContainer {
    /// Tolerant: anything malformed or unknown is left for serde_derive to report.
    pub fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut this = SerdeContainer::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename_all") {
                    if let Some(rule) = serialize_name(&meta)? {
                        this.rename_all = RenameRule::from_str(&rule.value());
                    }
                } else if meta.path.is_ident("tag") && meta.input.peek(Token![=]) {
                    // An internally tagged struct writes `tag: "StructName"` first.
                    let value = meta.value()?;
                    if value.peek(LitStr) {
                        let tag: LitStr = value.parse()?;
                        if tag.value() == "_id" {
                            this.refused.push(Refused {
                                span_of: tag.into_token_stream(),
                                why: TAG_ID,
                            });
                        }
                    }
                    skip_value(meta.input)?;
                } else {
                    Refused::note(&CONTAINER_REFUSED, &meta.path, &mut this.refused);
                    skip_value(meta.input)?;
                }
                Ok(())
            });
        }
        this
    }
}

/// The container attributes that make serde write something other than this struct's
/// fields. `from` and `try_from` only change deserialization, and are fine.
const CONTAINER_REFUSED: [(&str, &str); 3] = [
    (
        "into",
        "#[serde(into = \"...\")] cannot be used on a `Document`: serde would serialize \
         the `into` type instead of this struct, so the id seqid fills would not be what \
         is written as `_id`",
    ),
    (
        "transparent",
        "#[serde(transparent)] cannot be used on a `Document`: the struct would be \
         serialized as its single field, not as a document with the `_id` seqid fills",
    ),
    (
        "remote",
        "#[serde(remote = \"...\")] cannot be used on a `Document`: serde would \
         serialize the remote type, and this struct would not be `Serialize` itself",
    ),
];

const TAG_ID: &str = "#[serde(tag = \"_id\")] cannot be used on a `Document`: serde \
                      would write the struct's name as `_id`, next to the id seqid fills; \
                      choose another tag";

/// `#[seq_display("format")]` on a field: the format of the display code seqid writes
/// into it. `format` is `None` when the attribute was malformed (reported).
pub struct SeqDisplay {
    pub attr: Attribute,
    pub format: Option<LitStr>,
}

impl SeqDisplay {
    /// Reads the `#[seq_display]` of a field, if any; a second one is reported.
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<SeqDisplay> {
        let mut found = attrs
            .iter()
            .filter(|attr| attr.path().is_ident("seq_display"));
        let first = found.next()?;
        for repeated in found {
            cx.error_spanned_by(
                repeated,
                "duplicate #[seq_display] attribute: a field holds one code; put another \
                 format on a `String` field of its own",
            );
        }
        let format = match &first.meta {
            Meta::List(list) => match list.parse_args::<LitStr>() {
                Ok(format) => Some(format),
                Err(_) => {
                    cx.error_spanned_by(&list.tokens, DISPLAY_ARGUMENT);
                    None
                }
            },
            meta => {
                cx.error_spanned_by(meta, DISPLAY_ARGUMENT);
                None
            }
        };
        Some(SeqDisplay {
            attr: first.clone(),
            format,
        })
    }
}

const DISPLAY_ARGUMENT: &str = "#[seq_display] takes the code's format, one string literal: \
                                #[seq_display(\"INV-{year}-{number:04}\")]";

/// `#[seq_key]` on a field: the field is part of the document's natural key. A bare path;
/// arguments are reported, and the field is still taken as marked.
pub struct SeqKey {
    /// The attribute, where errors about the field's place in the key point.
    pub attr: Attribute,
}

impl SeqKey {
    /// Reads the `#[seq_key]` of a field, if any; a second one is reported.
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<SeqKey> {
        let mut found = attrs.iter().filter(|attr| attr.path().is_ident("seq_key"));
        let first = found.next()?;
        for repeated in found {
            cx.error_spanned_by(
                repeated,
                "duplicate #[seq_key] attribute: a field is in the natural key once; remove \
                 this one",
            );
        }
        match &first.meta {
            Meta::Path(_) => {}
            Meta::List(list) => {
                cx.syn_error(syn::Error::new(list.delimiter.span().join(), KEY_ARGUMENTS))
            }
            Meta::NameValue(meta) => {
                let (eq_token, value) = (&meta.eq_token, &meta.value);
                cx.error_spanned_by(quote::quote!(#eq_token #value), KEY_ARGUMENTS);
            }
        }
        Some(SeqKey {
            attr: first.clone(),
        })
    }
}

const KEY_ARGUMENTS: &str = "#[seq_key] takes no arguments: write #[seq_key] alone on each \
                             field of the natural key (a compound key is several marked \
                             fields)";

/// The field-level `#[serde(...)]` keys that decide a field's serialized key, and those
/// that keep serde from writing the field's own value under it.
#[derive(Default)]
pub struct SerdeField {
    /// `rename = "..."` or `rename(serialize = "...")`.
    pub rename: Option<LitStr>,
    /// The words that keep the field out of the document as itself:
    /// `skip`, `skip_serializing`, `flatten`.
    pub not_serialized: Vec<Ident>,
    /// The words that let other code decide what is written under the field's key:
    /// `serialize_with`, `with`, `getter`. Refused on the field a sequence fills only.
    pub custom_serialized: Vec<Ident>,
}

impl SerdeField {
    /// Tolerant: anything malformed or unknown is left for serde_derive to report.
    pub fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut this = SerdeField::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    if let Some(name) = serialize_name(&meta)? {
                        this.rename = Some(name);
                    }
                    return Ok(());
                }
                let list = if NOT_SERIALIZED.iter().any(|word| meta.path.is_ident(word)) {
                    Some(&mut this.not_serialized)
                } else if CUSTOM_SERIALIZED
                    .iter()
                    .any(|word| meta.path.is_ident(word))
                {
                    Some(&mut this.custom_serialized)
                } else {
                    None
                };
                if let (Some(list), Some(word)) = (list, meta.path.get_ident()) {
                    list.push(word.clone());
                }
                skip_value(meta.input)
            });
        }
        this
    }
}

const NOT_SERIALIZED: [&str; 3] = ["skip", "skip_serializing", "flatten"];

/// `skip_serializing_if` only leaves out an unset number, and `default`, `alias` and
/// `deserialize_with` only change deserialization: those are not among these.
const CUSTOM_SERIALIZED: [&str; 3] = ["serialize_with", "with", "getter"];

/// The serialize-side string of `key = "..."` or `key(serialize = "...", ...)`.
fn serialize_name(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(Token![=]) {
        let value = meta.value()?;
        if value.peek(LitStr) {
            return Ok(Some(value.parse()?));
        }
        skip_value(value)?;
        return Ok(None);
    }
    let mut name = None;
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("serialize") && inner.input.peek(Token![=]) {
                let value = inner.value()?;
                if value.peek(LitStr) {
                    name = Some(value.parse()?);
                }
            }
            skip_value(inner.input)
        })?;
    }
    Ok(name)
}

/// Skips whatever follows a key, `= value` or `(...)`, up to the next comma.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    while !input.is_empty() && !input.peek(Token![,]) {
        input.parse::<TokenTree>()?;
    }
    Ok(())
}
