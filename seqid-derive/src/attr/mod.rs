//! The attributes the derive reads, one file each, into typed values that keep their
//! spans for error messages: `seq_id` reads `#[seq_id(...)]` (on the struct or on a field:
//! one parser for both), its keys' values through `literal` and the names some of them
//! choose among from `kind`; `seq_display` reads `#[seq_display("...")]`, `seq_key`
//! `#[seq_key]`, `seq_items` `#[seq_items(last = "...")]` and `seq_no` an item's `#[seq_no]`, and `serde` the few `#[serde(...)]` keys that decide the serialized key of
//! a field or what is written under it. Whether an attribute or a key is in its place is
//! decided later, by `declaration` and `valid`, which see the whole struct.

use syn::ext::IdentExt;
use syn::{Attribute, Expr, Meta, Path};

use crate::ctxt::Ctxt;

pub mod kind;
mod literal;
pub mod seq_display;
pub mod seq_id;
pub mod seq_items;
pub mod seq_key;
pub mod seq_no;
pub mod serde;

/// The first attribute named `name` among `attrs`, if any: each of seqid's attributes
/// goes once on an item, and every other one is reported at itself, with `repeated`.
fn first<'a>(
    cx: &Ctxt,
    attrs: &'a [Attribute],
    name: &str,
    repeated: &str,
) -> Option<&'a Attribute> {
    let mut found = attrs.iter().filter(|attr| attr.path().is_ident(name));
    let first = found.next()?;
    for again in found {
        cx.error_spanned_by(again, repeated);
    }
    Some(first)
}

/// Reads the `key = value` pairs of `attr`'s list, handing each to `each` with its key
/// (unraw, `None` for a path that is no identifier), its value and its path (where an
/// unknown key is reported); `false`, and reported, when the list does not parse.
fn each_setting(
    cx: &Ctxt,
    attr: &Attribute,
    mut each: impl FnMut(Option<&str>, Expr, &Path),
) -> bool {
    let parsed = attr.parse_nested_meta(|meta| {
        let key = meta.path.get_ident().map(|ident| ident.unraw().to_string());
        let value: Expr = meta.value()?.parse()?;
        each(key.as_deref(), value, &meta.path);
        Ok(())
    });
    match parsed {
        Ok(()) => true,
        Err(error) => {
            cx.syn_error(error);
            false
        }
    }
}

/// How an attribute that takes `key = value` settings was written.
#[derive(PartialEq)]
enum Form {
    /// `#[name]`: no settings.
    Bare,
    /// `#[name = ...]`, or a list that does not parse: reported.
    Refused,
    /// `#[name(key = value, ...)]`, each setting handed on.
    Listed,
}

/// The first `#[name(key = value, ...)]` among `attrs` (each other one reported with
/// `repeated`, a `#[name = ...]` with `arguments`), its settings handed to `each` as
/// [`each_setting`] does, and how it was written; `None` without one.
fn settings<'a>(
    cx: &Ctxt,
    attrs: &'a [Attribute],
    name: &str,
    (repeated, arguments): (&str, &str),
    each: impl FnMut(Option<&str>, Expr, &Path),
) -> Option<(&'a Attribute, Form)> {
    let attr = first(cx, attrs, name, repeated)?;
    let form = match &attr.meta {
        Meta::Path(_) => Form::Bare,
        Meta::NameValue(meta) => {
            cx.error_spanned_by(meta, arguments);
            Form::Refused
        }
        Meta::List(_) if each_setting(cx, attr, each) => Form::Listed,
        Meta::List(_) => Form::Refused,
    };
    Some((attr, form))
}
