//! The few `#[serde(...)]` keys that decide the serialized key of a field or what is
//! written under it, and those on the struct that would replace the document seqid fills.
//! Tolerant: anything malformed or unknown is left for serde_derive to report.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::{Attribute, Ident, LitStr, Token};

use crate::case::RenameRule;

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
    /// Reads the struct's `#[serde(...)]` attributes.
    pub fn from_attrs(attrs: &[Attribute]) -> Self {
        let rename_all = |this: &mut Self, rule: LitStr| {
            this.rename_all = RenameRule::from_str(&rule.value());
        };
        read(attrs, "rename_all", rename_all, |this, meta| {
            if meta.path.is_ident("tag") && meta.input.peek(Token![=]) {
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
            } else {
                Refused::note(&CONTAINER_REFUSED, &meta.path, &mut this.refused);
            }
            Ok(())
        })
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
    /// Reads a field's `#[serde(...)]` attributes.
    pub fn from_attrs(attrs: &[Attribute]) -> Self {
        let rename = |this: &mut Self, name| this.rename = Some(name);
        read(attrs, "rename", rename, |this, meta| {
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
            Ok(())
        })
    }
}

const NOT_SERIALIZED: [&str; 3] = ["skip", "skip_serializing", "flatten"];

/// `skip_serializing_if` only leaves out an unset number, and `default`, `alias` and
/// `deserialize_with` only change deserialization: those are not among these.
const CUSTOM_SERIALIZED: [&str; 3] = ["serialize_with", "with", "getter"];

/// Reads each key of each `#[serde(...)]` among `attrs` into a `T::default()`: the
/// serialize-side string of `name_key` (`rename`, `rename_all`) with `named`, any other key
/// with `other`, and then skips the rest of its value. An attribute that stops being
/// readable is left there: serde_derive reports it.
fn read<T: Default>(
    attrs: &[Attribute],
    name_key: &str,
    named: fn(&mut T, LitStr),
    mut other: impl FnMut(&mut T, &ParseNestedMeta) -> syn::Result<()>,
) -> T {
    let mut this = T::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident(name_key) {
                other(&mut this, &meta)?;
                return skip_value(meta.input);
            }
            if let Some(name) = serialize_name(&meta)? {
                named(&mut this, name);
            }
            Ok(())
        });
    }
    this
}

/// The serialize-side string of `key = "..."` or `key(serialize = "...", ...)`.
fn serialize_name(meta: &ParseNestedMeta) -> syn::Result<Option<LitStr>> {
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
