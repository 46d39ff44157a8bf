//! Checks across the parsed input: names MongoDB would refuse, keys that belong to
//! another strategy, the `_id` fields, and serde attributes that change what is written
//! under the key the sequence fills.

use syn::Error;
use syn::LitStr;
use syn::ext::IdentExt;

use crate::ast::{Container, Data, Field};
use crate::attr::kind::StrategyKind;
use crate::attr::seq_id::{SeqId, Setting};
use crate::ctxt::Ctxt;
use crate::declaration::Declaration;
use crate::{later, layout, object_id};

pub fn check(cx: &Ctxt, cont: &Container, decl: &Declaration) {
    for refused in &cont.serde.refused {
        cx.error_spanned_by(&refused.span_of, refused.why);
    }
    // In the order of the source: the struct's sequence's name, its collection, then
    // the rest of each sequence.
    let mut collection = cont
        .seq_id
        .as_ref()
        .and_then(|attr| attr.collection.as_ref());
    let mut check_collection = |cx: &Ctxt| {
        if let Some(Setting {
            key,
            value: Some(lit),
        }) = collection.take()
        {
            check_collection_name(cx, key, lit);
        }
    };
    if !decl
        .sequences
        .first()
        .is_some_and(|declared| declared.on_id)
    {
        check_collection(cx);
    }
    for declared in &decl.sequences {
        check_names(cx, declared.attr);
        check_collection(cx);
        check_strategy_keys(cx, declared.attr);
        layout::check(cx, declared);
        later::check(cx, cont, decl, declared);
        if let Some(field) = declared.field {
            check_filled_field(cx, field, declared.on_id);
        }
        object_id::check(cx, cont, declared);
    }
    check_id_fields(cx, cont, decl);
}

/// A sequence's name and counters collection, where the sequence is declared.
fn check_names(cx: &Ctxt, settings: &SeqId) {
    if let Some(name) = settings.name() {
        if name.value().is_empty() {
            cx.error_spanned_by(name, "the sequence name must not be empty");
        } else if name.value().starts_with('[') {
            // The counter of a scope has the `_id` `["<name>",<values>...]`: a name of that
            // shape could be mistaken for one.
            cx.error_spanned_by(
                name,
                "a sequence name cannot start with `[`: seqid keeps that for the counters of \
                 scoped sequences, whose `_id` is `[\"<name>\",<scope values>...]`",
            );
        }
    }
    if let Some(Setting {
        key,
        value: Some(lit),
    }) = &settings.counters
    {
        check_collection_name(cx, key, lit);
    }
}

/// The rules MongoDB applies to collection names, caught at compile time.
fn check_collection_name(cx: &Ctxt, key: &syn::Ident, lit: &LitStr) {
    let name = lit.value();
    let problem = if name.is_empty() {
        "must not be empty"
    } else if name.contains('$') {
        "must not contain `$`: MongoDB collection names cannot"
    } else if name.contains('\0') {
        "must not contain a NUL character: MongoDB collection names cannot"
    } else if name.starts_with("system.") {
        "must not start with `system.`: MongoDB reserves that prefix"
    } else {
        return;
    };
    cx.error_spanned_by(lit, format!("`{}` {problem}", key.unraw()));
}

/// `max_attempts`, `time_budget_ms`, `block_size` and `prefetch` tune one strategy each; given with another strategy
/// they would be silently ignored, so they are refused.
fn check_strategy_keys(cx: &Ctxt, seq_id: &SeqId) {
    let (strategy, how) = match &seq_id.strategy {
        None => (StrategyKind::Counters, " (the default)"),
        Some(Setting {
            value: Some(kind), ..
        }) => (*kind, ""),
        // An unknown strategy is already reported; guessing further would mislead.
        Some(Setting { value: None, .. }) => return,
    };
    // The keys given, by what they tune (the values differ in type).
    let owned = [
        (
            seq_id.max_attempts.as_ref().map(|s| &s.key),
            StrategyKind::Optimistic,
        ),
        (
            seq_id.time_budget_ms.as_ref().map(|s| &s.key),
            StrategyKind::Optimistic,
        ),
        (
            seq_id.block_size.as_ref().map(|s| &s.key),
            StrategyKind::Block,
        ),
        (
            seq_id.prefetch.as_ref().map(|s| &s.key),
            StrategyKind::Block,
        ),
    ];
    // The counter's write concern applies where seqid writes the counter on its own:
    // the optimistic strategy has no counter, and the gapless one writes it inside the
    // caller's transaction, whose write concern is the transaction's.
    if let Some(setting) = &seq_id.counter_write_concern
        && matches!(strategy, StrategyKind::Optimistic | StrategyKind::Gapless)
    {
        let why = match strategy {
            StrategyKind::Optimistic => "keeps no counter",
            _ => {
                "writes its counter inside the caller's transaction, with the transaction's write concern"
            }
        };
        cx.error_spanned_by(
            &setting.key,
            format!(
                "`counter_write_concern` applies to strategy = \"counters\" and \"block\"; \
                 strategy = \"{used}\" {why}: remove `counter_write_concern`",
                used = strategy.name(),
            ),
        );
    }
    for (key, owner) in owned {
        let Some(key) = key else { continue };
        if owner != strategy {
            cx.error_spanned_by(
                key,
                format!(
                    "`{key}` belongs to strategy = \"{owner}\", but this sequence uses \
                     strategy = \"{used}\"{how}: set strategy = \"{owner}\" or remove `{key}`",
                    key = key.unraw(),
                    owner = owner.name(),
                    used = strategy.name(),
                ),
            );
        }
    }
}

/// The field the sequence fills must be written by serde as itself, with the value
/// seqid puts in it. `on_id`: the sequence is declared on the struct, for `_id`.
fn check_filled_field(cx: &Ctxt, field: &Field, on_id: bool) {
    let (the_field, number) = if on_id {
        ("the `_id` field".to_owned(), "id")
    } else {
        (
            format!("the sequence field `{}`", field.ident.unraw()),
            "sequence number",
        )
    };
    let key = &field.ser_name;
    for word in &field.serde.not_serialized {
        cx.error_spanned_by(
            word,
            format!(
                "{the_field} cannot be #[serde({word})]: seqid writes the {number} into the \
                 document as `{key}`"
            ),
        );
    }
    for word in &field.serde.custom_serialized {
        let (attribute, decider) = match word.to_string().as_str() {
            "serialize_with" => ("serialize_with = \"...\"", "the function"),
            "with" => ("with = \"...\"", "the module's `serialize`"),
            _ => ("getter = \"...\"", "the getter"),
        };
        cx.error_spanned_by(
            word,
            format!(
                "{the_field} cannot be #[serde({attribute})]: {decider} would decide what is \
                 written as `{key}`, not the {number} seqid fills"
            ),
        );
    }
}

/// One field at most is serialized as `_id`; with the sequence on the struct, one must.
fn check_id_fields(cx: &Ctxt, cont: &Container, decl: &Declaration) {
    // Any other shape is reported already, for want of named fields.
    let Data::Struct(fields) = &cont.data else {
        return;
    };
    let mut ids = fields.iter().filter(|field| field.is_id());
    let Some(id) = ids.next() else {
        if decl.on_id() {
            report_missing_id(cx, cont, fields);
        }
        return;
    };
    for other in ids {
        cx.syn_error(Error::new(
            other.ser_name_span,
            format!(
                "two fields are serialized as `_id`: `{}` and `{}`; keep one",
                id.ident.unraw(),
                other.ident.unraw()
            ),
        ));
    }
}

fn report_missing_id(cx: &Ctxt, cont: &Container, fields: &[Field]) {
    // A field named `_id` that serde renames through `rename_all`: point at it.
    let renamed = fields
        .iter()
        .find(|field| field.ident.unraw() == "_id" && field.serde.rename.is_none());
    match renamed {
        Some(field) => cx.error_spanned_by(
            field.ident,
            format!(
                "this field is serialized as `{}` because of #[serde(rename_all)] on the \
                 struct: add #[serde(rename = \"_id\")] to it",
                field.ser_name
            ),
        ),
        None => cx.error_spanned_by(
            cont.ident,
            "no field is serialized as `_id`: mark the id field with \
             #[serde(rename = \"_id\")], or name it `_id`",
        ),
    }
}
