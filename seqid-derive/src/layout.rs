//! Checks of how a sequence's counter is laid out: `layout = "..."` (a tool's preset),
//! the `counter_*` keys that describe a layout by hand, `step`, and the first id. Each
//! refuses, at its key, what the layout cannot hold: a scope where the tool has none, a
//! step where the tool always adds 1, a first id of 0 in a field that reads 0 as unset.

use syn::ext::IdentExt;
use syn::{Ident, LitStr};

use crate::attr::kind::{LayoutKind, StrategyKind};
use crate::attr::seq_id::{SeqId, value};
use crate::ctxt::Ctxt;
use crate::declaration::Declared;
use crate::types::is_option;

pub fn check(cx: &Ctxt, declared: &Declared) {
    let attr = declared.attr;
    if declared.strategy() == StrategyKind::Optimistic {
        refuse_counter_keys(cx, attr);
    } else {
        match value(&attr.layout) {
            Some(_) => check_preset(cx, attr),
            None => check_by_hand(cx, attr),
        }
    }
    check_first_id(cx, declared);
}

/// The keys that describe a layout by hand, those given.
fn by_hand(attr: &SeqId) -> impl Iterator<Item = &Ident> {
    [
        attr.counter_name.as_ref().map(|s| &s.key),
        attr.counter_field.as_ref().map(|s| &s.key),
        attr.counter_value.as_ref().map(|s| &s.key),
        attr.counter_holds.as_ref().map(|s| &s.key),
    ]
    .into_iter()
    .flatten()
}

/// The optimistic loop keeps no counter: every key about one is refused, in the order
/// written.
fn refuse_counter_keys(cx: &Ctxt, attr: &SeqId) {
    const ABOUT_THE_COUNTER: [&str; 6] = [
        "counters",
        "layout",
        "counter_name",
        "counter_field",
        "counter_value",
        "counter_holds",
    ];
    for key in &attr.keys {
        let name = key.unraw().to_string();
        if name == "step" {
            cx.error_spanned_by(
                key,
                "`step` spaces the ids a counter hands out, and strategy = \"optimistic\" keeps \
                 no counter: its next id is one above the largest stored, whoever stored it; \
                 remove `step`, or use strategy = \"counters\", \"block\" or \"gapless\"",
            );
        } else if ABOUT_THE_COUNTER.contains(&name.as_str()) {
            cx.error_spanned_by(
                key,
                format!(
                    "`{name}` describes the sequence's counter, and strategy = \"optimistic\" \
                     keeps none (its ids are one above the largest stored): remove `{name}`, or \
                     use strategy = \"counters\", \"block\" or \"gapless\" to share a counter"
                ),
            );
        }
    }
}

/// A tool's preset: the tool's layout whole, with what the tool lets vary.
fn check_preset(cx: &Ctxt, attr: &SeqId) {
    let Some(&preset) = value(&attr.layout) else {
        return;
    };
    let tool = preset.tool();
    for key in by_hand(attr) {
        cx.error_spanned_by(
            key,
            format!(
                "`{key}` describes a counter by hand, and layout = \"{name}\" lays it out as \
                 {tool} does: remove `{key}`, or `layout` to describe the counter key by key",
                key = key.unraw(),
                name = preset.name(),
            ),
        );
    }
    if let (Some(step), Some(why)) = (&attr.step, preset.without_step()) {
        cx.error_spanned_by(
            &step.key,
            format!(
                "{tool} {why}, so ids a step apart would not be its ids: remove `step`, or \
                 keep this sequence out of the tool's counter"
            ),
        );
    }
    if let (Some(counters), LayoutKind::MongooseAutoIncrement) = (&attr.counters, preset) {
        cx.error_spanned_by(
            &counters.key,
            "mongoose-auto-increment keeps its counters in `identitycounters`, which it has \
             no option to change: remove `counters`",
        );
    }
    if let (Some(scope), Some(why)) = (&attr.scope, preset.without_scope()) {
        cx.error_spanned_by(
            &scope.key,
            format!(
                "{tool} {why}, so a scoped sequence and the tool would never count in the same \
                 counter: remove `scope`, or use layout = \"tutorial\" (seqid's own) or \
                 \"mongoose-sequence\" (whose `reference_fields` are a scope)"
            ),
        );
    }
}

/// A layout described key by key: a counter found by `_id` (the sequence name), or by
/// `counter_name` (and `counter_field`), whose value is in `counter_value`.
fn check_by_hand(cx: &Ctxt, attr: &SeqId) {
    let name = value(&attr.counter_name);
    let by_id = name.is_none_or(|name| name.value() == "_id");
    if let (Some(field), true) = (&attr.counter_field, by_id) {
        cx.error_spanned_by(
            &field.key,
            "`counter_field` goes with `counter_name`: a counter found by its `_id` (the \
             sequence name) needs no other field to be found; add counter_name = \"...\", the \
             field that holds the sequence name, or remove `counter_field`",
        );
    }
    if let Some(value_key) = value(&attr.counter_value)
        && value_key.value() == "_id"
    {
        cx.error_spanned_by(
            value_key,
            "the counter's value cannot be its `_id`, which never changes: name the field \
             that holds the number",
        );
    }
    // One field, one role: the later key is refused.
    let keys: [(&str, Option<&LitStr>); 3] = [
        ("counter_name", name),
        ("counter_field", value(&attr.counter_field)),
        ("counter_value", value(&attr.counter_value)),
    ];
    for (at, (key, lit)) in keys.iter().enumerate() {
        let Some(lit) = lit else { continue };
        if let Some((earlier, _)) = keys[..at]
            .iter()
            .find(|(_, other)| other.is_some_and(|other| other.value() == lit.value()))
        {
            cx.error_spanned_by(
                lit,
                format!(
                    "`{key}` and `{earlier}` name the same field, {:?}: each names a field of \
                     its own in the counter",
                    lit.value()
                ),
            );
        }
    }
    if let (Some(scope), false) = (&attr.scope, by_id) {
        cx.error_spanned_by(
            &scope.key,
            "a counter found by `counter_name` has no place for a scope (seqid keeps a scope \
             in the `_id` of its own layout, and mongoose-sequence's in `reference_value`): \
             remove `scope`, or `counter_name`, or use layout = \"mongoose-sequence\"",
        );
    }
}

/// A first id of 0 (`start = 0`, or a tool that counts from 0) needs a field where 0 is
/// an id: an `Option`, since 0 in a plain integer means "unset" to seqid.
fn check_first_id(cx: &Ctxt, declared: &Declared) {
    let attr = declared.attr;
    let preset = value(&attr.layout).copied();
    let from_zero = match value(&attr.start) {
        Some(&start) => start == 0,
        None => preset.is_some_and(LayoutKind::counts_from_zero),
    };
    let Some(field) = declared.field else { return };
    if !from_zero || is_option(field.ty) {
        return;
    }
    let ty = field.ty;
    let ty = quote::quote!(#ty).to_string().replace(' ', "");
    match (&attr.start, preset) {
        (Some(start), _) => cx.error_spanned_by(
            &start.key,
            format!(
                "`start = 0` makes 0 the first id, and seqid reads 0 in `{ty}` as unset: make \
                 the field `Option<{ty}>`, where 0 is an id"
            ),
        ),
        (None, Some(preset)) => cx.error_spanned_by(
            attr.layout.as_ref().map_or(field.ident, |s| &s.key),
            format!(
                "{tool} hands out 0 first (its `startAt`), and seqid reads 0 in `{ty}` as \
                 unset: make the field `Option<{ty}>`, where 0 is an id, or start both at 1 \
                 (`startAt: 1` in the plugin's options and `start = 1` here)",
                tool = preset.tool(),
            ),
        ),
        (None, None) => {}
    }
}
