//! Code generation: the `Document` impl, or on error the messages plus the stand-in impl
//! of `fallback`.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, LitStr};

use crate::ast::{Container, Field};
use crate::attr::{CounterWrite, HoldsKind, SeqId, Setting, StrategyKind};
use crate::case::snake_case;
use crate::ctxt::Ctxt;
use crate::declaration::{Declaration, Declared};
use crate::display::{Display, Piece};
use crate::object_id::is_option_of_object_id;
use crate::{display, fallback, natural, valid};

pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    let decl = Declaration::from_container(&cx, &cont);
    valid::check(&cx, &cont, &decl);
    let displays = display::resolve(&cx, &cont, &decl);
    let keys = natural::resolve(&cx, &cont, &decl);
    match (cx.check(), decl.field()) {
        (Ok(()), Some(field)) => impl_document(&cont, &decl, &displays, &keys, field),
        // A missing sequence or `_id` field is reported, so this is not reached; stay
        // total anyway.
        (Ok(()), None) => fallback::expand(
            &cont,
            &decl,
            syn::Error::new(
                Span::call_site(),
                "internal error in #[derive(Document)]: no field for the sequence, yet no \
                 error",
            ),
        ),
        (Err(errors), _) => fallback::expand(&cont, &decl, errors),
    }
}

/// The impl of a valid input; `field` is the one the sequence fills, `keys` the fields of
/// the natural key.
fn impl_document(
    cont: &Container,
    decl: &Declaration,
    displays: &[Display],
    keys: &[&Field],
    field: &Field,
) -> TokenStream {
    // The self type at the call site, like the trait path: a struct that is not
    // `Serialize` then gets one error at the derive instead of a second one at its name.
    let mut ident = cont.ident.clone();
    ident.set_span(Span::call_site());
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    let sequence = sequence(cont, decl.primary());
    let id_type = id_type(field);
    let member = field.ident;
    let kind = kind_type(decl);
    let scope = scope_type(decl.primary());
    let object_id = object_id(cont, decl);
    let others = others(cont, decl);
    let handles = handles(cont, decl);
    let (codes, code_finders) = codes(decl, displays);
    let finders = finders(cont, number_finders(decl).chain(code_finders));
    let sequence_on_id = decl
        .primary()
        .is_some_and(|declared| declared.on_id)
        .then(|| sequence_on_id(cont));
    let (natural_key, natural_keyed) = natural_key(cont, keys);
    let (numbered_later, later_impl) = numbered_later(cont, decl);
    // Only sequences with a counter offer the counter's operations (`sync_counter`).
    // Bounded on `Model` (kept non-trivial with `for<'__seqid>`, as in `fallback`), so
    // that a struct that is not `Serialize` gets one error, at the `Model` impl.
    let counter_backed = match strategy_kind(decl) {
        StrategyKind::Optimistic => quote!(),
        StrategyKind::Counters | StrategyKind::Block | StrategyKind::Gapless => {
            let mut generics = cont.generics.clone();
            generics
                .make_where_clause()
                .predicates
                .push(syn::parse_quote! {
                    for<'__seqid> #ident #ty_generics: ::seqid::Model
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
        impl #impl_generics ::seqid::Model for #ident #ty_generics #where_clause {
            const SEQUENCE: ::seqid::Sequence = #sequence;
            #id_type
            #kind
            type Scope = #scope;
            fn sequence_id(&self) -> &Self::Id {
                &self.#member
            }
            fn sequence_id_mut(&mut self) -> &mut Self::Id {
                &mut self.#member
            }
            #object_id
            #others
            #codes
            #natural_key
            #numbered_later
        }
        #counter_backed
        #natural_keyed
        #later_impl
        #handles
        #finders
        #sequence_on_id
    })
}

/// The impl of `SequenceOnId`, which lets `find_by_id` be called: for a type whose
/// primary sequence numbers `_id`. A type whose sequence numbers a field finds by that
/// field, with its `find_by_<field>`.
pub fn sequence_on_id(cont: &Container) -> TokenStream {
    let mut ident = cont.ident.clone();
    ident.set_span(Span::call_site());
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    // `do_not_recommend`: the message of a type that is not one lists no other type
    // that is.
    quote! {
        #[automatically_derived]
        #[diagnostic::do_not_recommend]
        impl #impl_generics ::seqid::__private::SequenceOnId for #ident #ty_generics #where_clause {}
    }
}

/// The sequences on fields other than `_id`, each with its index in the declaration.
pub fn on_fields<'a>(
    decl: &'a Declaration,
) -> impl Iterator<Item = (usize, &'a Declared<'a>, &'a Field<'a>)> {
    decl.sequences
        .iter()
        .enumerate()
        .filter(|(_, declared)| !declared.on_id)
        .filter_map(|(index, declared)| Some((index, declared, declared.field?)))
}

/// One `find_by_<field>` function per sequence on a field other than `_id`: the call
/// names the field it looks in, where `find_by_id` would hide it.
fn number_finders<'a>(decl: &'a Declaration) -> impl Iterator<Item = TokenStream> + 'a {
    on_fields(decl).map(|(index, declared, field)| {
        let name = field.ident.unraw();
        let function = format_ident!("find_by_{}", name);
        let sequence = sequence_constant(decl, index);
        let scope_type = scope_type(Some(declared));
        let scope = match declared.scope.is_empty() {
            true => "",
            false => " in the scope named with `.scope(...)`",
        };
        let doc = format!(
            "The document whose `{name}` holds `number`, the number the sequence `{}` gave \
             it{scope}: await it for the document, or `None`.",
            declared.attr.name().map(LitStr::value).unwrap_or_default(),
        );
        // The bound as `find_by_code`'s (see `codes`). The number is any integer, as
        // `find_by_number` takes it: spelled as the field's `IdField::Value`, the type
        // would be refused a second time when it cannot hold a number.
        quote! {
            #[doc = #doc]
            pub fn #function<'__seqid>(
                db: &'__seqid impl ::seqid::AsDatabase,
                number: impl ::seqid::__private::core::convert::Into<
                    ::seqid::__private::core::primitive::i128,
                >,
            ) -> ::seqid::action::FindById<'__seqid, Self, #scope_type>
            where
                for<'__seqid_de> Self: ::seqid::__private::Deserializable,
            {
                ::seqid::__private::find_by_number(db, &#sequence, number)
            }
        }
    })
}

/// The derive's associated functions, in an inherent impl; nothing when there are none.
fn finders(cont: &Container, functions: impl Iterator<Item = TokenStream>) -> TokenStream {
    let functions: Vec<TokenStream> = functions.collect();
    if functions.is_empty() {
        return quote!();
    }
    let mut ident = cont.ident.clone();
    ident.set_span(Span::call_site());
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #ident #ty_generics #where_clause {
            #(#functions)*
        }
    }
}

/// `NATURAL_KEY`, and the impl of `NaturalKeyed` that lets `find_or_insert` be called;
/// nothing when no field is marked `#[seq_key]`.
fn natural_key(cont: &Container, keys: &[&Field]) -> (TokenStream, TokenStream) {
    if keys.is_empty() {
        return (quote!(), quote!());
    }
    let names = keys.iter().map(|field| &field.ser_name);
    let constant = quote! {
        const NATURAL_KEY: &'static [&'static str] = &[#(#names),*];
    };
    (
        constant,
        marker(cont, quote!(::seqid::__private::NaturalKeyed)),
    )
}

/// The impl of the marker trait `path` for the type, bounded on `Model` as `CounterBacked`
/// is (see `impl_document`), so that a struct that is not `Serialize` gets one error, at
/// the `Model` impl.
fn marker(cont: &Container, path: TokenStream) -> TokenStream {
    let mut ident = cont.ident.clone();
    ident.set_span(Span::call_site());
    let (_, ty_generics, _) = cont.generics.split_for_impl();
    let mut generics = cont.generics.clone();
    generics
        .make_where_clause()
        .predicates
        .push(syn::parse_quote! {
            for<'__seqid> #ident #ty_generics: ::seqid::Model
        });
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #path for #ident #ty_generics #where_clause {}
    }
}

/// `NUMBERED_LATER`, and the impl of `NumberedLater` that lets `number_draft` be called;
/// nothing unless the sequence says `numbered = "later"` (then it is the type's only one).
fn numbered_later(cont: &Container, decl: &Declaration) -> (TokenStream, TokenStream) {
    if !decl
        .primary()
        .is_some_and(|declared| declared.attr.numbered_later())
    {
        return (quote!(), quote!());
    }
    let constant = quote! {
        const NUMBERED_LATER: bool = true;
    };
    (
        constant,
        marker(cont, quote!(::seqid::__private::NumberedLater)),
    )
}

/// `DISPLAYS` and the functions that read, fill and write the display fields; and one
/// `find_by_<field>` function per display field.
fn codes(decl: &Declaration, displays: &[Display]) -> (TokenStream, Vec<TokenStream>) {
    if displays.is_empty() {
        return (quote!(), Vec::new());
    }
    let constants = displays.iter().map(|display| {
        let key = &display.field.ser_name;
        let format = display.format;
        let sequence = sequence_constant(decl, display.sequence);
        let checks_values = display.checks_values();
        quote!(::seqid::__private::display_code(#key, #format, &#sequence, #checks_values))
    });
    let index: Vec<Literal> = (0..displays.len()).map(Literal::usize_unsuffixed).collect();
    let members: Vec<&Ident> = displays.iter().map(|display| display.field.ident).collect();
    let writes = displays.iter().map(write_code);
    let option = quote!(::seqid::__private::core::option::Option);
    let usize = quote!(::seqid::__private::core::primitive::usize);
    let string = quote!(::seqid::__private::String);
    let codes = quote! {
        const DISPLAYS: &'static [::seqid::DisplayCode] = &[#(#constants),*];
        fn display_field(&self, index: #usize) -> #option<&#string> {
            match index {
                #(#index => #option::Some(&self.#members),)*
                _ => #option::None,
            }
        }
        fn display_field_mut(&mut self, index: #usize) -> #option<&mut #string> {
            match index {
                #(#index => #option::Some(&mut self.#members),)*
                _ => #option::None,
            }
        }
        fn write_code(
            &self,
            index: #usize,
            out: &mut #string,
        ) -> ::seqid::__private::core::result::Result<(), ::seqid::Unshowable> {
            match index {
                #(#index => { #writes })*
                _ => {}
            }
            ::seqid::__private::core::result::Result::Ok(())
        }
    };
    let functions = displays.iter().zip(&index).map(|(display, index)| {
        let field = display.field.ident.unraw();
        let function = format_ident!("find_by_{}", field);
        let doc = format!(
            "The document whose `{field}` holds `code`, a code written by \
             `{}`: await it for the document, or `None`.",
            display.format.value()
        );
        // The bound is on the function, not the struct, so that a type that is not
        // `Deserialize` is refused where it calls the find, in seqid's words. `for<'_>`
        // makes it a bound rustc checks at each call: a plain `Self: Deserializable` on the
        // method of a struct without type parameters is checked where it is written, and
        // would fail the derive itself.
        quote! {
            #[doc = #doc]
            pub fn #function<'__seqid>(
                db: &'__seqid impl ::seqid::AsDatabase,
                code: &'__seqid str,
            ) -> ::seqid::action::FindByCode<'__seqid, Self>
            where
                for<'__seqid_de> Self: ::seqid::__private::Deserializable,
            {
                ::seqid::__private::find_by_code(
                    db,
                    &<Self as ::seqid::Model>::DISPLAYS[#index],
                    code,
                )
            }
        }
    });
    (codes, functions.collect())
}

/// The body of `write_code` for one display field: its pieces in order.
fn write_code(display: &Display) -> TokenStream {
    let pieces = display.pieces.iter().map(|piece| match piece {
        Piece::Literal(text) => quote!(::seqid::__private::literal(out, #text);),
        Piece::Number { field, width } => {
            let (member, width) = (field.ident, Literal::usize_unsuffixed(*width));
            quote!(::seqid::__private::number(out, &self.#member, #width);)
        }
        Piece::Integer { field, width } => {
            let (member, width) = (field.ident, Literal::usize_unsuffixed(*width));
            quote!(::seqid::__private::integer(out, &self.#member, #width);)
        }
        Piece::Text { field, separator } => {
            let member = field.ident;
            let name = field.ident.unraw().to_string();
            let separator = match separator {
                Some(c) => quote!(::seqid::__private::core::option::Option::Some(#c)),
                None => quote!(::seqid::__private::core::option::Option::None),
            };
            quote!(::seqid::__private::text(out, &self.#member, #name, #separator)?;)
        }
    });
    quote!(#(#pieces)*)
}

/// The constant of the sequence at `index` in the declaration: `SEQUENCE` for the
/// primary, an element of `OTHERS` for another.
fn sequence_constant(decl: &Declaration, index: usize) -> TokenStream {
    match index.cmp(&decl.primary) {
        std::cmp::Ordering::Equal => quote!(<Self as ::seqid::Model>::SEQUENCE),
        order => {
            let other = Literal::usize_unsuffixed(index - usize::from(order.is_gt()));
            quote!(<Self as ::seqid::Model>::OTHERS[#other])
        }
    }
}

/// `OTHERS` and the accessors of their fields, for a struct with several sequences.
fn others(cont: &Container, decl: &Declaration) -> TokenStream {
    let others: Vec<&Declared> = decl.others().collect();
    if others.is_empty() {
        return quote!();
    }
    let sequences = others.iter().map(|declared| sequence(cont, Some(declared)));
    let fields: Vec<_> = others
        .iter()
        .filter_map(|declared| declared.field)
        .collect();
    let index = (0..fields.len()).map(Literal::usize_unsuffixed);
    // Through a function bounded on `IdField` and spanned at the field's type: a type
    // that cannot hold a number is reported there, with `IdField`'s message.
    let get = fields.iter().map(|field| {
        let (member, ty) = (field.ident, field.ty);
        quote_spanned!(ty.span()=> ::seqid::__private::any_id::<#ty>(&self.#member))
    });
    let get_mut = fields.iter().map(|field| {
        let (member, ty) = (field.ident, field.ty);
        quote_spanned!(ty.span()=> ::seqid::__private::any_id_mut::<#ty>(&mut self.#member))
    });
    let index_mut = index.clone();
    let option = quote!(::seqid::__private::core::option::Option);
    quote! {
        const OTHERS: &'static [::seqid::Sequence] = &[#(#sequences),*];
        fn other_id(
            &self,
            index: ::seqid::__private::core::primitive::usize,
        ) -> #option<&dyn ::seqid::AnyIdField> {
            match index {
                #(#index => #option::Some(#get),)*
                _ => #option::None,
            }
        }
        fn other_id_mut(
            &mut self,
            index: ::seqid::__private::core::primitive::usize,
        ) -> #option<&mut dyn ::seqid::AnyIdField> {
            match index {
                #(#index_mut => #option::Some(#get_mut),)*
                _ => #option::None,
            }
        }
    }
}

/// For a struct with several sequences, one associated function per sequence,
/// `<field>_sequence()`, that gives its [`SequenceOf`] handle.
fn handles(cont: &Container, decl: &Declaration) -> TokenStream {
    if decl.sequences.len() < 2 {
        return quote!();
    }
    let mut ident = cont.ident.clone();
    ident.set_span(Span::call_site());
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    let mut others = 0usize;
    let functions = decl
        .sequences
        .iter()
        .enumerate()
        .filter_map(|(index, declared)| {
            let field = declared.field?;
            let constant = match index == decl.primary {
                true => quote!(<Self as ::seqid::Model>::SEQUENCE),
                false => {
                    let other = Literal::usize_unsuffixed(others);
                    others += 1;
                    quote!(<Self as ::seqid::Model>::OTHERS[#other])
                }
            };
            let function = format_ident!("{}_sequence", field.ident.unraw());
            let kind = kind_marker(declared.strategy());
            let scope = scope_type(Some(declared));
            let name = declared.attr.name().map(LitStr::value).unwrap_or_default();
            let doc = format!(
                "The sequence `{name}`, which fills `{}`: to find a document by its number and \
             administer its counter.",
                field.ident.unraw()
            );
            Some(quote! {
                #[doc = #doc]
                pub const fn #function() -> ::seqid::SequenceOf<Self, #kind, #scope> {
                    ::seqid::SequenceOf::__new(&#constant)
                }
            })
        });
    let functions: Vec<TokenStream> = functions.collect();
    quote! {
        #[automatically_derived]
        impl #impl_generics #ident #ty_generics #where_clause {
            #(#functions)*
        }
    }
}

/// `object_id_mut`, when the sequence fills another field than `_id` and `_id` is written
/// `Option<ObjectId>` (by its last path segments): the insert fills it when `None`. The
/// type is spelled as seqid's in the body, so an `ObjectId` of another bson version is a
/// type error at the field's type.
fn object_id(cont: &Container, decl: &Declaration) -> TokenStream {
    let Some(id) = cont.id_field() else {
        return quote!();
    };
    if !fills_object_id(decl, id) {
        return quote!();
    }
    let member = id.ident;
    let ty = id.ty;
    quote_spanned! {ty.span()=>
        fn object_id_mut(
            &mut self,
        ) -> ::seqid::__private::core::option::Option<
            &mut ::seqid::__private::core::option::Option<::seqid::__private::ObjectId>,
        > {
            ::seqid::__private::core::option::Option::Some(&mut self.#member)
        }
    }
}

/// Whether the insert fills `id`, the field serialized as `_id`, with an `ObjectId`: no
/// sequence fills `_id`, and the field is written `Option<ObjectId>`.
pub fn fills_object_id(decl: &Declaration, id: &Field) -> bool {
    !decl.on_id() && is_option_of_object_id(id.ty)
}

/// The strategy the primary sequence declares (the default when absent).
pub fn strategy_kind(decl: &Declaration) -> StrategyKind {
    decl.primary()
        .map_or(StrategyKind::Counters, Declared::strategy)
}

/// `type Kind = ...;`: the primary's strategy as a type.
pub fn kind_type(decl: &Declaration) -> TokenStream {
    let marker = kind_marker(strategy_kind(decl));
    quote!(type Kind = #marker;)
}

/// A sequence's scope as a type, what `.scope(...)` takes on its finds and counter's
/// operations: the scope fields' Rust types, where they say what is stored.
pub fn scope_type(declared: Option<&Declared>) -> TokenStream {
    let scope = declared.map_or(&[][..], |declared| &declared.scope[..]);
    if scope.is_empty() {
        return quote!(::seqid::scoped::Unscoped);
    }
    // A field written by other code (`serialize_with`, `with`) stores what its type does
    // not say; past the tuples `Fields` spells, the values are checked when the call runs.
    let typed = scope.len() <= SCOPE_FIELDS_TYPED
        && scope
            .iter()
            .all(|field| field.serde.custom_serialized.is_empty());
    if !typed {
        return quote!(::seqid::scoped::Unchecked);
    }
    let types = scope.iter().map(|field| field.ty);
    quote!(::seqid::scoped::Fields<(#(#types,)*)>)
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

/// The most scope fields `seqid::scoped::Fields` is implemented for
/// (`seqid::scoped::MAX_FIELDS`).
const SCOPE_FIELDS_TYPED: usize = 6;

/// A strategy as a type.
fn kind_marker(strategy: StrategyKind) -> TokenStream {
    match strategy {
        StrategyKind::Counters => quote!(::seqid::kind::Counters),
        StrategyKind::Optimistic => quote!(::seqid::kind::Optimistic),
        StrategyKind::Block => quote!(::seqid::kind::Block),
        StrategyKind::Gapless => quote!(::seqid::kind::Gapless),
    }
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

/// A sequence's constant (`declared`: `None` when none is declared). Anything absent or
/// invalid takes its default, which is only a placeholder when an error was reported.
pub fn sequence(cont: &Container, declared: Option<&Declared>) -> TokenStream {
    let settings = declared.map(|declared| declared.attr);

    let name = match settings.and_then(SeqId::name) {
        Some(name) => name.clone(),
        None => LitStr::new("", cont.ident.span()),
    };
    let collection = collection(cont);
    let preset = settings.and_then(|s| value(&s.layout)).copied();
    let counters = match (settings.and_then(|s| value(&s.counters)), preset) {
        (Some(lit), _) => quote!(#lit),
        (None, Some(preset)) => {
            let name = preset.default_counters();
            quote!(#name)
        }
        (None, None) => quote!(::seqid::DEFAULT_COUNTERS),
    };
    let layout = settings.map_or_else(|| quote!(::seqid::Layout::TUTORIAL), layout);
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
                quote!(::seqid::DEFAULT_BLOCK_SIZE),
            );
            quote!(::seqid::__private::block(#n))
        }
        StrategyKind::Gapless => quote!(::seqid::__private::gapless()),
    };
    let counter_write_concern = match settings.and_then(|s| value(&s.counter_write_concern)) {
        Some(CounterWrite::Database) => quote!(::seqid::CounterWriteConcern::Database),
        Some(CounterWrite::Majority) | None => quote!(::seqid::CounterWriteConcern::Majority),
    };
    let start = match (settings.and_then(|s| value(&s.start)), preset) {
        (Some(&n), _) => Literal::i64_suffixed(n).into_token_stream(),
        (None, Some(preset)) => Literal::i64_suffixed(preset.first_id()).into_token_stream(),
        (None, None) => quote!(::seqid::DEFAULT_START),
    };
    let field = declared.map_or("_id", Declared::key);
    let scope_fields = declared.map_or(&[][..], |declared| &declared.scope[..]);
    let scope = scope_fields.iter().map(|field| &field.ser_name);
    let scope_types = scope_fields.iter().map(|field| scope_type_name(field));
    quote! {
        ::seqid::__private::sequence(::seqid::__private::Parts {
            name: #name,
            collection: #collection,
            counters: #counters,
            layout: #layout,
            strategy: #strategy,
            counter_write_concern: #counter_write_concern,
            start: #start,
            field: #field,
            scope: &[#(#scope),*],
            scope_types: &[#(#scope_types),*],
        })
    }
}

/// The collection the documents go into: the struct's, whichever attribute declares the
/// sequence, or its default (invalid: the default, the error reported already).
pub fn collection(cont: &Container) -> LitStr {
    match cont
        .seq_id
        .as_ref()
        .and_then(|attr| value(&attr.collection))
    {
        Some(lit) => lit.clone(),
        None => LitStr::new(
            &snake_case(&cont.ident.unraw().to_string()),
            cont.ident.span(),
        ),
    }
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
            quote!(::seqid::Layout::#constant)
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
        None => quote!(::seqid::Layout::TUTORIAL),
    };
    match value(&settings.step) {
        Some(&step) => {
            let step = Literal::u32_suffixed(step);
            quote!(::seqid::__private::stepped(#layout, #step))
        }
        None => layout,
    }
}

/// The value of a setting that was given and valid.
fn value<T>(setting: &Option<Setting<T>>) -> Option<&T> {
    setting.as_ref().and_then(|setting| setting.value.as_ref())
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
