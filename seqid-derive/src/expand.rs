//! Code generation: the `Document` impl, or on error the messages plus a stand-in impl.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{DeriveInput, LitStr};

use crate::ast::{Container, Data};
use crate::attr::{SeqId, Setting, StrategyKind};
use crate::case::snake_case;
use crate::ctxt::Ctxt;
use crate::valid;

pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    valid::check(&cx, &cont);
    match cx.check() {
        Ok(()) => impl_document(&cont, true),
        Err(errors) => {
            let mut tokens = errors.to_compile_error();
            // The stand-in impl keeps uses of the type elsewhere from failing with
            // "`Document` is not implemented", so the user sees only the real mistakes.
            // An enum or union can never be a document, and when it is not `Serialize`
            // (a union never is) the impl would only add errors.
            if !matches!(cont.data, Data::NotStruct) {
                tokens.extend(impl_document(&cont, false));
            }
            tokens
        }
    }
}

/// The impl; when `valid` is false, the accessors are never meant to run.
fn impl_document(cont: &Container, valid: bool) -> TokenStream {
    // The self type at the call site, like the trait path: a struct that is not
    // `Serialize` then gets one error at the derive instead of a second one at its name.
    let mut ident = cont.ident.clone();
    ident.set_span(Span::call_site());
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    let sequence = sequence(cont);
    let id = cont.id_field();

    // Spanned at the field type so that an unsupported type is reported there, by
    // `IdField`'s `on_unimplemented` message. A skipped or flattened id (an error
    // already) is usually not an integer: `i64` stands in rather than add a second error.
    let id_type = match id {
        Some(field) if field.serde.not_serialized.is_empty() => {
            let ty = field.ty;
            quote_spanned!(ty.span()=> type Id = #ty;)
        }
        _ => quote!(
            type Id = ::seqid::__private::core::primitive::i64;
        ),
    };
    let (get, get_mut) = match id {
        Some(field) if valid => {
            let member = field.ident;
            (quote!(&self.#member), quote!(&mut self.#member))
        }
        _ => {
            let unreachable = quote!(::seqid::__private::core::unreachable!());
            (unreachable.clone(), unreachable)
        }
    };

    quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::seqid::Document for #ident #ty_generics #where_clause {
                const SEQUENCE: ::seqid::Sequence = #sequence;
                #id_type
                fn sequence_id(&self) -> &Self::Id {
                    #get
                }
                fn sequence_id_mut(&mut self) -> &mut Self::Id {
                    #get_mut
                }
            }
        };
    }
}

/// The `SEQUENCE` constant. Anything absent or invalid takes its default, which is only
/// a placeholder when an error was reported.
fn sequence(cont: &Container) -> TokenStream {
    let empty = SeqId::default();
    let seq_id = cont.seq_id.as_ref().unwrap_or(&empty);

    let name = match &seq_id.name {
        Some(name) => name.clone(),
        None => LitStr::new("", cont.ident.span()),
    };
    let collection = match value(&seq_id.collection) {
        Some(lit) => lit.clone(),
        None => LitStr::new(
            &snake_case(&cont.ident.unraw().to_string()),
            cont.ident.span(),
        ),
    };
    let counters = match value(&seq_id.counters) {
        Some(lit) => quote!(#lit),
        None => quote!(::seqid::DEFAULT_COUNTERS),
    };
    let strategy = match value(&seq_id.strategy).unwrap_or(&StrategyKind::Counters) {
        StrategyKind::Counters => quote!(::seqid::__private::counters()),
        StrategyKind::Optimistic => {
            let n = count(&seq_id.max_attempts, quote!(::seqid::DEFAULT_MAX_ATTEMPTS));
            quote!(::seqid::__private::optimistic(#n))
        }
        StrategyKind::Block => {
            let n = count(&seq_id.block_size, quote!(::seqid::DEFAULT_BLOCK_SIZE));
            quote!(::seqid::__private::block(#n))
        }
    };
    quote! {
        ::seqid::__private::sequence(#name, #collection, #counters, #strategy)
    }
}

/// The value of a setting that was given and valid.
fn value<T>(setting: &Option<Setting<T>>) -> Option<&T> {
    setting.as_ref().and_then(|setting| setting.value.as_ref())
}

/// A `max_attempts` or `block_size` value, or the runtime's default constant.
fn count(setting: &Option<Setting<u32>>, default: TokenStream) -> TokenStream {
    match value(setting) {
        Some(&n) => Literal::u32_suffixed(n).into_token_stream(),
        None => default,
    }
}
