//! Code generation: the `Document` impl, or on error the messages plus the stand-in impl
//! of `fallback`.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, LitStr};

use crate::ast::{Container, Field};
use crate::attr::{CounterWrite, SeqId, Setting, StrategyKind};
use crate::case::snake_case;
use crate::ctxt::Ctxt;
use crate::{fallback, valid};

pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    valid::check(&cx, &cont);
    match (cx.check(), cont.id_field()) {
        (Ok(()), Some(id)) => impl_document(&cont, id),
        // `valid` reports a missing id field, so this is not reached; stay total anyway.
        (Ok(()), None) => fallback::expand(
            &cont,
            syn::Error::new(
                Span::call_site(),
                "internal error in #[derive(Document)]: no `_id` field, yet no error",
            ),
        ),
        (Err(errors), _) => fallback::expand(&cont, errors),
    }
}

/// The impl of a valid input.
fn impl_document(cont: &Container, id: &Field) -> TokenStream {
    // The self type at the call site, like the trait path: a struct that is not
    // `Serialize` then gets one error at the derive instead of a second one at its name.
    let mut ident = cont.ident.clone();
    ident.set_span(Span::call_site());
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    let sequence = sequence(cont);
    let id_type = id_type(id);
    let member = id.ident;
    let kind = kind_type(cont);
    // Only sequences with a counter offer the counter's operations (`sync_counter`).
    // Bounded on `Document` (kept non-trivial with `for<'__seqid>`, as in `fallback`), so
    // that a struct that is not `Serialize` gets one error, at the `Document` impl.
    let counter_backed = match strategy_kind(cont) {
        StrategyKind::Optimistic => quote!(),
        StrategyKind::Counters | StrategyKind::Block | StrategyKind::Gapless => {
            let mut generics = cont.generics.clone();
            generics
                .make_where_clause()
                .predicates
                .push(syn::parse_quote! {
                    for<'__seqid> #ident #ty_generics: ::seqid::Document
                });
            let (impl_generics, _, where_clause) = generics.split_for_impl();
            quote! {
                #[automatically_derived]
                impl #impl_generics ::seqid::CounterBacked for #ident #ty_generics #where_clause {}
            }
        }
    };
    wrap_in_const(quote! {
        #[automatically_derived]
        impl #impl_generics ::seqid::Document for #ident #ty_generics #where_clause {
            const SEQUENCE: ::seqid::Sequence = #sequence;
            #id_type
            #kind
            fn sequence_id(&self) -> &Self::Id {
                &self.#member
            }
            fn sequence_id_mut(&mut self) -> &mut Self::Id {
                &mut self.#member
            }
        }
        #counter_backed
    })
}

/// The strategy the attribute declares (the default when absent).
pub fn strategy_kind<'a>(cont: &'a Container<'a>) -> &'a StrategyKind {
    cont.seq_id
        .as_ref()
        .and_then(|seq_id| value(&seq_id.strategy))
        .unwrap_or(&StrategyKind::Counters)
}

/// `type Kind = ...;`: the strategy as a type.
pub fn kind_type(cont: &Container) -> TokenStream {
    let marker = match strategy_kind(cont) {
        StrategyKind::Counters => quote!(Counters),
        StrategyKind::Optimistic => quote!(Optimistic),
        StrategyKind::Block => quote!(Block),
        StrategyKind::Gapless => quote!(Gapless),
    };
    quote!(type Kind = ::seqid::kind::#marker;)
}

/// The generated items go in an anonymous const, under the lint allowances of serde's
/// `dummy.rs`: the code spells every path in full, which the user's lints need not judge.
pub fn wrap_in_const(code: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(
            non_upper_case_globals,
            unused_attributes,
            unused_qualifications,
            clippy::absolute_paths,
        )]
        const _: () = {
            #code
        };
    }
}

/// For the stand-in impl: the type's name where the user wrote it, but resolved at the
/// call site like the rest of the impl, so that a `#[deprecated]` type is not warned
/// about (thiserror's `call_site_ident`). The valid impl puts the whole name at the call
/// site instead, for the reason given there.
pub fn call_site_ident(ident: &Ident) -> Ident {
    let mut ident = ident.clone();
    ident.set_span(ident.span().resolved_at(Span::call_site()));
    ident
}

/// `type Id = ...;`, spanned at the field type so that an unsupported type is reported
/// there, by `IdField`'s `on_unimplemented` message.
pub fn id_type(field: &Field) -> TokenStream {
    let ty = field.ty;
    quote_spanned!(ty.span()=> type Id = #ty;)
}

/// The `SEQUENCE` constant. Anything absent or invalid takes its default, which is only
/// a placeholder when an error was reported.
pub fn sequence(cont: &Container) -> TokenStream {
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
    let strategy = match strategy_kind(cont) {
        StrategyKind::Counters => quote!(::seqid::__private::counters()),
        StrategyKind::Optimistic => {
            let n = count(&seq_id.max_attempts, quote!(::seqid::DEFAULT_MAX_ATTEMPTS));
            quote!(::seqid::__private::optimistic(#n))
        }
        StrategyKind::Block => {
            let n = count(&seq_id.block_size, quote!(::seqid::DEFAULT_BLOCK_SIZE));
            quote!(::seqid::__private::block(#n))
        }
        StrategyKind::Gapless => quote!(::seqid::__private::gapless()),
    };
    let counter_write_concern = match value(&seq_id.counter_write_concern) {
        Some(CounterWrite::Database) => quote!(::seqid::CounterWriteConcern::Database),
        Some(CounterWrite::Majority) | None => quote!(::seqid::CounterWriteConcern::Majority),
    };
    let start = match value(&seq_id.start) {
        Some(&n) => Literal::i64_suffixed(n).into_token_stream(),
        None => quote!(::seqid::DEFAULT_START),
    };
    quote! {
        ::seqid::__private::sequence(
            #name,
            #collection,
            #counters,
            #strategy,
            #counter_write_concern,
            #start,
            "_id",
            &[],
        )
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
