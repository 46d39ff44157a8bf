//! `#[seq_key]` on a field: the field is part of the document's natural key (`natural`
//! checks that it can be).

use syn::{Attribute, Meta};

use super::first;
use crate::ctxt::Ctxt;

/// `#[seq_key]` on a field: the field is part of the document's natural key. A bare path;
/// arguments are reported, and the field is still taken as marked.
pub struct SeqKey {
    /// The attribute, where errors about the field's place in the key point.
    pub attr: Attribute,
}

impl SeqKey {
    /// Reads the `#[seq_key]` of a field, if any; a second one is reported.
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<SeqKey> {
        let first = first(cx, attrs, "seq_key", REPEATED)?;
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

const REPEATED: &str =
    "duplicate #[seq_key] attribute: a field is in the natural key once; remove this one";

const KEY_ARGUMENTS: &str = "#[seq_key] takes no arguments: write #[seq_key] alone on each \
                             field of the natural key (a compound key is several marked \
                             fields)";
