//! The tokens that both the valid impl (`expand`) and the stand-in (`fallback`) write: the
//! anonymous const around the items, the type's name, `type Id` and `type Kind`, a
//! sequence's constant. It imports neither of them, so that
//! neither needs the other.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Generics, Ident, LitStr, parse_quote};

use crate::ast::{Container, Field};
use crate::attr::kind::{CounterWrite, HoldsKind, StrategyKind};
use crate::attr::seq_id::{SeqId, Setting, value};
use crate::declaration::{Declaration, Declared};

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
/// site instead, for the reason given in `expand`.
pub fn call_site_ident(ident: &Ident) -> Ident {
    let mut ident = ident.clone();
    ident.set_span(ident.span().resolved_at(Span::call_site()));
    ident
}

/// `generics` with the bound `for<'__seqid> Type<..>: bound` on the type `ident` itself
/// added: the `for<'__seqid>` keeps it from being a trivial bound, which stable Rust
/// refuses, so that an impl on a type that does not meet it costs no error of its own.
pub fn bounded(generics: &Generics, ident: &Ident, bound: TokenStream) -> Generics {
    let (_, ty_generics, _) = generics.split_for_impl();
    let mut bounded = generics.clone();
    bounded.make_where_clause().predicates.push(parse_quote! {
        for<'__seqid> #ident #ty_generics: #bound
    });
    bounded
}

/// `type Id = ...;`, spanned at the field type so that an unsupported type is reported
/// there, by `IdField`'s `on_unimplemented` message.
pub fn id_type(field: &Field) -> TokenStream {
    let ty = field.ty;
    quote_spanned!(ty.span()=> type Id = #ty;)
}

/// `type Kind = ...;`: the primary's strategy as a type.
pub fn kind_type(decl: &Declaration) -> TokenStream {
    let marker = kind_marker(decl.strategy());
    quote!(type Kind = #marker;)
}

/// A strategy as a type.
pub fn kind_marker(strategy: StrategyKind) -> TokenStream {
    match strategy {
        StrategyKind::Counters => quote!(::seqid::kind::Counters),
        StrategyKind::Optimistic => quote!(::seqid::kind::Optimistic),
        StrategyKind::Block => quote!(::seqid::kind::Block),
        StrategyKind::Gapless => quote!(::seqid::kind::Gapless),
    }
}

/// A sequence's constant (`declared`: `None` when none is declared). Anything absent or
/// invalid takes its default, which is only a placeholder when an error was reported.
pub fn sequence(cont: &Container, declared: Option<&Declared>) -> TokenStream {
    let settings = declared.map(|declared| declared.attr);

    let name = match settings.and_then(SeqId::name) {
        Some(name) => name.clone(),
        None => LitStr::new("", cont.ident.span()),
    };
    let collection = cont.collection();
    let preset = settings.and_then(|s| value(&s.layout)).copied();
    // What is not given is the preset's tool's own, as the runtime's `Layout` holds it.
    let preset_constant = preset.map(|preset| Ident::new(preset.constant(), Span::call_site()));
    let counters = match (settings.and_then(|s| value(&s.counters)), &preset_constant) {
        (Some(lit), _) => quote!(#lit),
        (None, Some(constant)) => quote!(::seqid::layout::Layout::#constant.counters),
        (None, None) => quote!(::seqid::Sequence::DEFAULT_COUNTERS),
    };
    let layout = settings.map_or_else(|| quote!(::seqid::layout::Layout::TUTORIAL), layout);
    let strategy = match declared.map_or(StrategyKind::Counters, Declared::strategy) {
        StrategyKind::Counters => quote!(::seqid::__private::counters()),
        StrategyKind::Optimistic => {
            let attempts = optional(settings.and_then(|s| value(&s.max_attempts)));
            let budget = optional(settings.and_then(|s| value(&s.time_budget_ms)));
            quote!(::seqid::__private::optimistic(#attempts, #budget))
        }
        StrategyKind::Block => {
            let n = count(
                settings.and_then(|s| value(&s.block_size)),
                quote!(::seqid::Sequence::DEFAULT_BLOCK_SIZE),
            );
            let prefetch = settings
                .and_then(|s| value(&s.prefetch))
                .is_none_or(|&prefetch| prefetch);
            quote!(::seqid::__private::block(#n, #prefetch))
        }
        StrategyKind::Gapless => quote!(::seqid::__private::gapless()),
    };
    let counter_write_concern = match settings.and_then(|s| value(&s.counter_write_concern)) {
        Some(CounterWrite::Database) => quote!(::seqid::layout::CounterWriteConcern::Database),
        Some(CounterWrite::Majority) | None => {
            quote!(::seqid::layout::CounterWriteConcern::Majority)
        }
    };
    let start = match (settings.and_then(|s| value(&s.start)), &preset_constant) {
        (Some(&n), _) => Literal::i64_suffixed(n).into_token_stream(),
        (None, Some(constant)) => quote!(::seqid::layout::Layout::#constant.first_id),
        (None, None) => quote!(::seqid::Sequence::DEFAULT_START),
    };
    let field = declared.map_or("_id", Declared::key);
    let scope_fields = declared.map_or(&[][..], |declared| &declared.scope[..]);
    let scope = scope_fields.iter().map(|field| &field.ser_name);
    let scope_types = scope_fields.iter().map(|field| scope_type_name(field));
    // `Sequence` is `#[non_exhaustive]`, so no struct literal: a copy of the runtime's blank
    // one, each field assigned (its fields are public; all of this is const).
    quote! {{
        let mut sequence = ::seqid::__private::BLANK;
        sequence.name = #name;
        sequence.collection = #collection;
        sequence.counters = #counters;
        sequence.layout = #layout;
        sequence.strategy = #strategy;
        sequence.counter_write_concern = #counter_write_concern;
        sequence.start = #start;
        sequence.field = #field;
        sequence.scope = &[#(#scope),*];
        sequence.scope_types = &[#(#scope_types),*];
        sequence
    }}
}

/// The counter's layout: a tool's preset, or the one the `counter_*` keys describe, with
/// the step if one is given.
fn layout(settings: &SeqId) -> TokenStream {
    let given = |setting: &Option<Setting<LitStr>>| value(setting).map(LitStr::value);
    let preset = value(&settings.layout).copied();
    let by_hand = [
        &settings.counter_name,
        &settings.counter_field,
        &settings.counter_value,
    ]
    .iter()
    .any(|setting| setting.is_some())
        || settings.counter_holds.is_some();
    let layout = match preset {
        Some(preset) => {
            let constant = Ident::new(preset.constant(), Span::call_site());
            quote!(::seqid::layout::Layout::#constant)
        }
        None if by_hand => {
            let name = given(&settings.counter_name).unwrap_or_else(|| "_id".to_owned());
            let field = given(&settings.counter_field);
            let value_key = given(&settings.counter_value).unwrap_or_else(|| "seq".to_owned());
            let next = value(&settings.counter_holds) == Some(&HoldsKind::Next);
            let field_tokens = match &field {
                Some(field) => quote!(::seqid::__private::core::option::Option::Some(#field)),
                None => quote!(::seqid::__private::core::option::Option::None),
            };
            // The unique index on the fields that find the counter, in the order declared.
            let index = std::iter::once(&name).chain(field.as_ref());
            quote! {
                ::seqid::__private::custom(#name, #field_tokens, #value_key, #next, &[#(#index),*])
            }
        }
        None => quote!(::seqid::layout::Layout::TUTORIAL),
    };
    match value(&settings.step) {
        Some(&step) => {
            let step = Literal::u32_suffixed(step);
            quote!(::seqid::__private::stepped(#layout, #step))
        }
        None => layout,
    }
}

/// A scope field's Rust type as `Sequence::scope_types` holds it, which a scope named at
/// run time is checked against: its last path segment (`i32`, `String`, `ObjectId`),
/// `Option<...>` around one, `&` before one; empty where the type does not say what is
/// stored (a field written by other code) or is none of these shapes.
fn scope_type_name(field: &Field) -> String {
    fn name(ty: &syn::Type) -> Option<String> {
        match ty {
            syn::Type::Reference(reference) => Some(format!("&{}", name(&reference.elem)?)),
            syn::Type::Group(group) => name(&group.elem),
            syn::Type::Paren(paren) => name(&paren.elem),
            syn::Type::Path(path) if path.qself.is_none() => {
                let last = path.path.segments.last()?;
                let ident = last.ident.unraw().to_string();
                match &last.arguments {
                    syn::PathArguments::None => Some(ident),
                    syn::PathArguments::AngleBracketed(args) if ident == "Option" => {
                        match args.args.first()? {
                            syn::GenericArgument::Type(inner) => {
                                Some(format!("Option<{}>", name(inner)?))
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
    match field.serde.custom_serialized.is_empty() {
        true => name(field.ty).unwrap_or_default(),
        false => String::new(),
    }
}

/// A `max_attempts` or `time_budget_ms` value as an `Option<u32>`: `None` leaves the
/// runtime's default.
fn optional(value: Option<&u32>) -> TokenStream {
    match value {
        Some(&n) => {
            let n = Literal::u32_suffixed(n);
            quote!(::seqid::__private::core::option::Option::Some(#n))
        }
        None => quote!(::seqid::__private::core::option::Option::None),
    }
}

/// A `block_size` value, or the runtime's default constant.
fn count(value: Option<&u32>, default: TokenStream) -> TokenStream {
    match value {
        Some(&n) => Literal::u32_suffixed(n).into_token_stream(),
        None => default,
    }
}
