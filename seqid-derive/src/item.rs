//! `#[derive(Item)]`: an item type of a document's array, numbered inside its document.
//! Its own small pipeline: the number field is found and checked here (one integer field
//! marked `#[seq_no]`), and the impl is the number's key, start and step and the field's
//! accessors; on error, a stand-in impl beside the errors.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Type};

use crate::attr::seq_no::SeqNo;
use crate::attr::serde::{SerdeContainer, SerdeField};
use crate::ctxt::Ctxt;
use crate::tokens::{bounded, call_site_ident, wrap_in_const};
use crate::types::{is_option, number_type};

/// The number field as found: its member, type, serialized key and attribute.
struct NumberField<'a> {
    member: &'a Ident,
    ty: &'a Type,
    key: String,
    seq_no: SeqNo,
}

/// The impl of `seqid::Item` for `input`, or the errors and a stand-in impl.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let field = number_field(&cx, input);
    match (cx.check(), field) {
        (Ok(()), Some(field)) => expand(input, &field),
        (Err(errors), _) => fallback(input, errors),
        (Ok(()), None) => fallback(
            input,
            syn::Error::new_spanned(&input.ident, "internal error in #[derive(Item)]"),
        ),
    }
}

/// The one field marked `#[seq_no]`, checked; every mistake reported to `cx`.
fn number_field<'a>(cx: &Ctxt, input: &'a DeriveInput) -> Option<NumberField<'a>> {
    if let Some(attr) = input
        .attrs
        .iter()
        .find(|attr| attr.path().is_ident("seq_no"))
    {
        cx.error_spanned_by(attr, ON_STRUCT);
    }
    let serde = SerdeContainer::from_attrs(&input.attrs);
    for refused in &serde.refused {
        cx.error_spanned_by(&refused.span_of, refused.why);
    }
    let syn::Data::Struct(syn::DataStruct {
        fields: syn::Fields::Named(fields),
        ..
    }) = &input.data
    else {
        cx.error_spanned_by(&input.ident, NAMED_FIELDS);
        return None;
    };
    let mut found: Option<NumberField> = None;
    for field in &fields.named {
        let Some(seq_no) = SeqNo::from_attrs(cx, &field.attrs) else {
            continue;
        };
        let member = field.ident.as_ref()?;
        if found.is_some() {
            cx.error_spanned_by(&seq_no.attr, TWICE);
            continue;
        }
        let field_serde = SerdeField::from_attrs(&field.attrs);
        let key = match (&field_serde.rename, serde.rename_all) {
            (Some(lit), _) => lit.value(),
            (None, Some(rule)) => rule.apply_to_field(&member.unraw().to_string()),
            (None, None) => member.unraw().to_string(),
        };
        if let Some(word) = field_serde
            .not_serialized
            .iter()
            .chain(&field_serde.custom_serialized)
            .next()
        {
            cx.error_spanned_by(word, SERDE);
        }
        if number_type(&field.ty).is_none() {
            cx.error_spanned_by(&field.ty, NOT_INTEGER);
        } else if seq_no.start() == 0 && !is_option(&field.ty) {
            let at = seq_no.start.as_ref().map(|(_, expr)| expr);
            cx.error_spanned_by(at, START_ZERO);
        }
        found = Some(NumberField {
            member,
            ty: &field.ty,
            key,
            seq_no,
        });
    }
    if found.is_none() {
        cx.error_spanned_by(&input.ident, MISSING);
    }
    found
}

fn expand(input: &DeriveInput, field: &NumberField) -> TokenStream {
    let ident = call_site_ident(&input.ident);
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let (member, ty, key) = (field.member, field.ty, &field.key);
    let start = field.seq_no.start_literal();
    let step = field.seq_no.step();
    let no = quote_spanned!(ty.span()=> type No = #ty;);
    wrap_in_const(quote! {
        #[automatically_derived]
        impl #impl_generics ::seqid::Item for #ident #ty_generics #where_clause {
            const NUMBER: ::seqid::__private::ItemNumber = ::seqid::__private::ItemNumber {
                key: #key,
                start: #start,
                step: #step,
            };
            #no
            fn item_no(&self) -> &Self::No {
                &self.#member
            }
            fn item_no_mut(&mut self) -> &mut Self::No {
                &mut self.#member
            }
        }
    })
}

/// The errors, and a stand-in impl so that the type's uses as an item add none.
fn fallback(input: &DeriveInput, errors: syn::Error) -> TokenStream {
    let errors = errors.to_compile_error();
    let ident = call_site_ident(&input.ident);
    let (_, ty_generics, _) = input.generics.split_for_impl();
    let generics = bounded(
        &input.generics,
        &ident,
        quote!(::seqid::__private::DocumentBounds),
    );
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let unreachable = quote!(::seqid::__private::core::unreachable!());
    let stand_in = wrap_in_const(quote! {
        #[automatically_derived]
        impl #impl_generics ::seqid::Item for #ident #ty_generics #where_clause {
            const NUMBER: ::seqid::__private::ItemNumber = ::seqid::__private::ItemNumber { key: "", start: 1, step: 1 };
            type No = ::seqid::__private::core::primitive::i64;
            fn item_no(&self) -> &Self::No {
                #unreachable
            }
            fn item_no_mut(&mut self) -> &mut Self::No {
                #unreachable
            }
        }
    });
    quote! {
        #errors
        #stand_in
    }
}

const NAMED_FIELDS: &str = "`Item` can only be derived for a struct with named fields, one of \
                            them marked #[seq_no]";

const MISSING: &str = "an item needs a number field: mark one integer field #[seq_no] (e.g. \
                       `#[seq_no] no: i64`)";

const TWICE: &str = "#[seq_no] on a second field: an item has one number field; remove this one";

const ON_STRUCT: &str = "#[seq_no] goes on the item's integer number field, not on the struct";

const NOT_INTEGER: &str = "the #[seq_no] field must be `i32`, `i64`, `u32`, `u64`, or an \
                           `Option` of one (0 or None: not numbered yet)";

const START_ZERO: &str = "`start = 0` needs an `Option` number field: in a plain integer field \
                          0 means \"not numbered yet\"";

const SERDE: &str = "seqid writes the #[seq_no] field's number under its key: this serde \
                     attribute would write something else, or nothing";
