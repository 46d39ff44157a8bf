//! What the derive emits when the input has mistakes, as thiserror's `fallback.rs`: the
//! errors, and a stand-in impl of `Document` so that uses of the type as a document
//! elsewhere still compile, and the user sees only the real mistakes rather than a
//! cascade of "`Document` is not implemented".

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;

use crate::ast::Container;
use crate::attr::seq_id::SeqId;
use crate::declaration::Declaration;
use crate::items;
use crate::tokens::{bounded, call_site_ident, id_type, kind_type, sequence, wrap_in_const};
use crate::types::{is_object_id, vec_element};

pub fn expand(cont: &Container, decl: &Declaration, errors: syn::Error) -> TokenStream {
    let errors = errors.to_compile_error();
    let ident = call_site_ident(cont.ident);
    let (_, ty_generics, _) = cont.generics.split_for_impl();
    // The supertraits (`Serialize + Send + Sync`) as a bound, so that a type that is not
    // `Serialize` (an enum, a union, a `remote` shim, or a struct that simply lacks the
    // derive) costs no second error here.
    let generics = bounded(
        cont.generics,
        &ident,
        quote!(::seqid::__private::DocumentBounds),
    );
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let sequence = sequence(cont, decl.primary());
    let kind = kind_type(decl);

    // The type of the field the sequence fills, when known, so that an unsupported type
    // is still reported; a skipped, flattened or custom-serialized one (an error already)
    // is usually not an integer, an ObjectId (reported by `object_id`) never is, and `i64`
    // stands in rather than add a second error.
    let id_type = match decl.field() {
        Some(field) if field.writes_its_value() && !is_object_id(field.ty) => id_type(field),
        _ => quote!(
            type Id = ::seqid::__private::core::primitive::i64;
        ),
    };
    let unreachable = quote!(::seqid::__private::core::unreachable!());

    // The finders a `#[seq_display]` field gets, so that calls to them elsewhere add no
    // error of their own either.
    let finders = cont
        .fields()
        .iter()
        .filter(|field| field.display.is_some())
        .map(|field| {
            let function = format_ident!("find_by_{}", field.ident.unraw());
            quote! {
                #[allow(dead_code)]
                pub fn #function<'__seqid>(
                    db: &'__seqid impl ::seqid::AsDatabase,
                    code: &'__seqid str,
                ) -> ::seqid::action::FindOne<'__seqid, Self, (), true> {
                    let _ = (db, code);
                    #unreachable
                }
            }
        });
    // And the appends of the arrays of items, so that calls to them add no error either.
    let arrays = cont
        .fields()
        .iter()
        .filter(|field| field.items.is_some())
        .filter_map(|field| Some((field, vec_element(field.ty)?)));
    let finders = finders.chain(items::appends(arrays, true));
    // `NaturalKeyed` when a field is marked `#[seq_key]`, so that calls to
    // `find_or_insert` elsewhere add no error of their own either.
    let natural_keyed = cont
        .fields()
        .iter()
        .any(|field| field.key.is_some())
        .then(|| {
            quote! {
                #[automatically_derived]
                impl #impl_generics ::seqid::__private::NaturalKeyed
                    for #ident #ty_generics #where_clause {}
            }
        });
    // `NumberedLater` when a field's `#[seq_id]` says `numbered = "later"`, so that calls
    // to `number_draft` elsewhere add no error of their own either.
    let numbered_later = cont
        .fields()
        .iter()
        .any(|field| field.seq_id.as_ref().is_some_and(SeqId::numbered_later))
        .then(|| {
            quote! {
                #[automatically_derived]
                impl #impl_generics ::seqid::__private::NumberedLater
                    for #ident #ty_generics #where_clause {}
            }
        });
    let stand_in = wrap_in_const(quote! {
        #[automatically_derived]
        impl #impl_generics ::seqid::Model for #ident #ty_generics #where_clause {
            const SEQUENCE: ::seqid::Sequence = #sequence;
            #id_type
            #kind
            // Any scope, so that the calls given `.scope(...)` add no error of their own.
            type Scope = ::seqid::scoped::Unchecked;
            fn sequence_id(&self) -> &Self::Id {
                #unreachable
            }
            fn sequence_id_mut(&mut self) -> &mut Self::Id {
                #unreachable
            }
        }
        #[automatically_derived]
        impl #impl_generics #ident #ty_generics #where_clause {
            #(#finders)*
        }
        #natural_keyed
        #numbered_later
    });
    quote! {
        #errors
        #stand_in
    }
}
