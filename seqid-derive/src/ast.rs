//! The derive input as seqid sees it: the container, its fields, and the `_id` field.
//! Each `#[seq_id]` is read where it is written; `declaration` decides which one
//! declares the sequence.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{DeriveInput, Generics, Ident, LitStr, Type};

use crate::attr::seq_display::SeqDisplay;
use crate::attr::seq_id::{SeqId, value};
use crate::attr::seq_items::SeqItems;
use crate::attr::seq_key::SeqKey;
use crate::attr::serde::{SerdeContainer, SerdeField};
use crate::case::snake_case;
use crate::ctxt::Ctxt;

pub struct Container<'a> {
    pub ident: &'a Ident,
    pub generics: &'a Generics,
    /// The struct's `#[seq_id]`, if any.
    pub seq_id: Option<SeqId>,
    pub serde: SerdeContainer,
    pub data: Data<'a>,
}

pub enum Data<'a> {
    /// A struct with named fields, the only shape a document can have.
    Struct(Vec<Field<'a>>),
    /// A tuple or unit struct, an enum or a union: rejected (the stand-in impl of
    /// `fallback` still keeps uses of the type from failing).
    Other,
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub serde: SerdeField,
    /// The key serde writes the field under.
    pub ser_name: String,
    /// What decides that key: the `rename` literal if any, else the field name.
    pub ser_name_span: Span,
    /// The field's `#[seq_id]`, if any.
    pub seq_id: Option<SeqId>,
    /// The field's `#[seq_display]`, if any.
    pub display: Option<SeqDisplay>,
    /// The field's `#[seq_key]`, if any: the field is part of the natural key.
    pub key: Option<SeqKey>,
    /// The field's `#[seq_items]`, if any: an array of items numbered in the document.
    pub items: Option<SeqItems>,
}

impl<'a> Container<'a> {
    /// Reads the input, reporting the errors found on the way to `cx`.
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Container<'a> {
        let seq_id = SeqId::from_attrs(cx, &input.attrs);
        // `#[seq_display]` and `#[seq_key]` go on fields: on the struct, the first of each
        // is reported.
        for (name, misplaced) in [
            (
                "seq_display",
                "#[seq_display] goes on the `String` field that holds the code, not on the \
                 struct",
            ),
            (
                "seq_items",
                "#[seq_items(last = \"...\")] goes on the `Vec` field that holds the items, \
                 not on the struct",
            ),
            (
                "seq_key",
                "#[seq_key] goes on the fields that identify a document, not on the struct: \
                 mark each field of the natural key with #[seq_key]",
            ),
        ] {
            if let Some(attr) = input.attrs.iter().find(|attr| attr.path().is_ident(name)) {
                cx.error_spanned_by(attr, misplaced);
            }
        }
        let serde = SerdeContainer::from_attrs(&input.attrs);
        let data = match &input.data {
            syn::Data::Struct(data) => match &data.fields {
                syn::Fields::Named(fields) => Data::Struct(
                    fields
                        .named
                        .iter()
                        .filter_map(|field| Field::from_ast(cx, field, &serde))
                        .collect(),
                ),
                syn::Fields::Unnamed(fields) => {
                    cx.error_spanned_by(fields, NAMED_FIELDS);
                    Data::Other
                }
                syn::Fields::Unit => {
                    cx.error_spanned_by(&input.ident, NAMED_FIELDS);
                    Data::Other
                }
            },
            syn::Data::Enum(data) => {
                cx.error_spanned_by(data.enum_token, NAMED_FIELDS);
                Data::Other
            }
            syn::Data::Union(data) => {
                cx.error_spanned_by(data.union_token, NAMED_FIELDS);
                Data::Other
            }
        };
        Container {
            ident: &input.ident,
            generics: &input.generics,
            seq_id,
            serde,
            data,
        }
    }

    /// The named fields; none when the input is not a struct with named fields.
    pub fn fields(&self) -> &[Field<'a>] {
        match &self.data {
            Data::Struct(fields) => fields,
            Data::Other => &[],
        }
    }

    /// The field serialized as `_id`: the first one, if several claim it (an error).
    pub fn id_field(&self) -> Option<&Field<'a>> {
        self.fields().iter().find(|field| field.is_id())
    }

    /// The collection the documents go into: the struct's, whichever attribute declares
    /// the sequence, or its default (invalid: the default, the error reported already).
    pub fn collection(&self) -> LitStr {
        match self
            .seq_id
            .as_ref()
            .and_then(|attr| value(&attr.collection))
        {
            Some(lit) => lit.clone(),
            None => LitStr::new(
                &snake_case(&self.ident.unraw().to_string()),
                self.ident.span(),
            ),
        }
    }
}

const NAMED_FIELDS: &str = "`Document` can only be derived for a struct with named fields, \
                            one of them serialized as `_id`";

impl<'a> Field<'a> {
    fn from_ast(cx: &Ctxt, field: &'a syn::Field, container: &SerdeContainer) -> Option<Field<'a>> {
        // Named fields always have an ident; the filter only keeps this total.
        let ident = field.ident.as_ref()?;
        let seq_id = SeqId::from_attrs(cx, &field.attrs);
        let display = SeqDisplay::from_attrs(cx, &field.attrs);
        let key = SeqKey::from_attrs(cx, &field.attrs);
        let items = SeqItems::from_attrs(cx, &field.attrs);
        let serde = SerdeField::from_attrs(&field.attrs);
        let (ser_name, ser_name_span) = match &serde.rename {
            Some(lit) => (lit.value(), lit.span()),
            None => {
                let name = ident.unraw().to_string();
                let name = match container.rename_all {
                    Some(rule) => rule.apply_to_field(&name),
                    None => name,
                };
                (name, ident.span())
            }
        };
        Some(Field {
            ident,
            ty: &field.ty,
            serde,
            ser_name,
            ser_name_span,
            seq_id,
            display,
            key,
            items,
        })
    }

    pub fn is_id(&self) -> bool {
        self.ser_name == "_id"
    }

    /// Whether serde writes this field's own value under its key (an error is reported
    /// otherwise, when a sequence fills it).
    pub fn writes_its_value(&self) -> bool {
        self.serde.not_serialized.is_empty() && self.serde.custom_serialized.is_empty()
    }
}
