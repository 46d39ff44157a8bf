//! The `Document` impl of a valid input: `Model`, with the constants and functions of
//! each sequence, display code and natural key, and the marker traits and finders that
//! go with them.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

use crate::ast::{Container, Field};
use crate::declaration::{Declaration, Declared};
use crate::display::{Display, Piece};
use crate::items::{self, Items};
use crate::tokens::{bounded, id_type, kind_marker, kind_type, sequence, wrap_in_const};

/// The impl of a valid input; `field` is the one the sequence fills, `keys` the fields of
/// the natural key.
pub fn impl_document(
    cont: &Container,
    decl: &Declaration,
    displays: &[Display],
    keys: &[&Field],
    items: &[Items],
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
    let appends = items::appends(
        items.iter().map(|items| (items.field, items.element)),
        false,
    );
    let finders = inherent_impl(cont, code_finders.into_iter().chain(appends));
    let model_items = items::model_items(items);
    let (natural_key, natural_keyed) = natural_key(cont, keys);
    let (numbered_later, later_impl) = numbered_later(cont, decl);
    let declared = declared(cont, decl, &ident);
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
            #model_items
        }
        #natural_keyed
        #later_impl
        #handles
        #finders
        #declared
    })
}

/// The type's sequences registered for the run time, under the type's path, so that a
/// sequence named at run time with a declared name takes the type's options
/// (`seqid::named::declared`). Written from the declaration's own constants, not through the
/// type's `Model` impl, so that a type the impl is refused for (not `Serialize`) gets no
/// second error here. A generic type has no one set of constants to register (a `static`
/// cannot name the type's parameters): none.
fn declared(cont: &Container, decl: &Declaration, ident: &Ident) -> TokenStream {
    if !cont.generics.params.is_empty() {
        return quote!();
    }
    let name = ident.unraw().to_string();
    let primary = sequence(cont, decl.primary());
    let others = decl.others().map(|declared| sequence(cont, Some(declared)));
    quote! {
        const __SEQID_PRIMARY: ::seqid::Sequence = #primary;
        const __SEQID_OTHERS: &[::seqid::Sequence] = &[#(#others),*];
        ::seqid::__private::inventory::submit! {
            ::seqid::__private::Declared::new(
                ::seqid::__private::core::concat!(
                    ::seqid::__private::core::module_path!(), "::", #name
                ),
                &__SEQID_PRIMARY,
                __SEQID_OTHERS,
            )
        }
    }
}

/// The derive's associated functions, in an inherent impl; nothing when there are none.
fn inherent_impl(cont: &Container, functions: impl Iterator<Item = TokenStream>) -> TokenStream {
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

/// The impl of the marker trait `path` for the type, bounded on `Model` ([`bounded`]), so
/// that a struct that is not `Serialize` gets one error, at the `Model` impl.
fn marker(cont: &Container, path: TokenStream) -> TokenStream {
    let mut ident = cont.ident.clone();
    ident.set_span(Span::call_site());
    let (_, ty_generics, _) = cont.generics.split_for_impl();
    let generics = bounded(cont.generics, &ident, quote!(::seqid::Model));
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
        const DISPLAYS: &'static [::seqid::__private::DisplayCode] = &[#(#constants),*];
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
        ) -> ::seqid::__private::core::result::Result<(), ::seqid::__private::Unshowable> {
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
            ) -> ::seqid::action::FindOne<'__seqid, Self, (), true>
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
        ) -> #option<&dyn ::seqid::__private::AnyIdField> {
            match index {
                #(#index => #option::Some(#get),)*
                _ => #option::None,
            }
        }
        fn other_id_mut(
            &mut self,
            index: ::seqid::__private::core::primitive::usize,
        ) -> #option<&mut dyn ::seqid::__private::AnyIdField> {
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
    let functions = decl
        .sequences
        .iter()
        .enumerate()
        .filter_map(|(index, declared)| {
            let field = declared.field?;
            let constant = sequence_constant(decl, index);
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
    inherent_impl(cont, functions)
}

/// `object_id_mut`, when the sequence fills another field than `_id` and `_id` is written
/// `Option<ObjectId>` (by its last path segments): the insert fills it when `None`. The
/// type is spelled as seqid's in the body, so an `ObjectId` of another bson version is a
/// type error at the field's type.
fn object_id(cont: &Container, decl: &Declaration) -> TokenStream {
    let Some(id) = cont.id_field() else {
        return quote!();
    };
    if !decl.fills_object_id(id) {
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

/// The most scope fields `seqid::scoped::Fields` is implemented for
/// (`seqid::scoped::MAX_FIELDS`).
const SCOPE_FIELDS_TYPED: usize = 6;
