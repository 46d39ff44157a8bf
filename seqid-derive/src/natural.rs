//! `#[seq_key]`: the fields of the document's natural key, each checked to hold a value the
//! document has before it is stored, written by serde as itself: `find_or_insert` looks
//! the document up by those values before the insert takes any number.

use syn::ext::IdentExt;

use crate::ast::{Container, Field};
use crate::ctxt::Ctxt;
use crate::declaration::Declaration;

/// What to do instead, after each reason a field cannot be in the key.
const MARK_OTHERS: &str = "mark the fields whose values identify a document (an email, a \
                           SKU) with #[seq_key]";

/// The fields marked `#[seq_key]`, in the order of the fields; each that cannot be in the
/// key is reported at its `#[seq_key]` and left out.
pub fn resolve<'c>(cx: &Ctxt, cont: &'c Container<'c>, decl: &Declaration) -> Vec<&'c Field<'c>> {
    let mut keys = Vec::new();
    for field in cont.fields() {
        let Some(key) = &field.key else { continue };
        match problem(decl, field) {
            Some(problem) => cx.error_spanned_by(&key.attr, problem),
            None => keys.push(field),
        }
    }
    keys
}

/// Why `field` cannot be in the natural key, if it cannot: the first reason only.
fn problem(decl: &Declaration, field: &Field) -> Option<String> {
    let name = field.ident.unraw();
    let filler = decl.filling(field);
    // A field's own `#[seq_id]` counts even where it is refused (on `_id`, reported).
    if filler.is_some() || field.seq_id.is_some() {
        let sequence = filler
            .and_then(|declared| declared.attr.name())
            .map(|lit| format!(" {:?}", lit.value()))
            .unwrap_or_default();
        let filled = match filler.is_some_and(|declared| declared.on_id) {
            true => format!("is the `_id` the sequence{sequence} fills"),
            false => format!("is filled by the sequence{sequence}"),
        };
        return Some(format!(
            "`{name}` {filled}: the insert takes that number, so it cannot identify the \
             document before it is stored; {MARK_OTHERS}"
        ));
    }
    if field.is_id() && decl.fills_object_id(field) {
        return Some(format!(
            "`{name}` is the `_id` the insert fills with a new ObjectId: the insert makes it, \
             so it cannot identify the document before it is stored; {MARK_OTHERS}"
        ));
    }
    if field.display.is_some() {
        return Some(format!(
            "`{name}` is a display field: the insert writes its code from the number it \
             takes, so it cannot identify the document before it is stored; {MARK_OTHERS}"
        ));
    }
    let key = &field.ser_name;
    if let Some(word) = field.serde.not_serialized.first() {
        return Some(format!(
            "`{name}` cannot be in the natural key: #[serde({word})] keeps it from being \
             written into the document as `{key}`, and the key is looked up by the value \
             stored under `{key}`; remove #[serde({word})] or this #[seq_key]"
        ));
    }
    if let Some(word) = field.serde.custom_serialized.first() {
        return Some(format!(
            "`{name}` cannot be in the natural key: #[serde({word} = \"...\")] lets other code \
             decide what is written as `{key}`, and the key is looked up by the field's own \
             value stored under `{key}`; remove #[serde({word} = \"...\")] or this #[seq_key]"
        ));
    }
    None
}
