//! A document's arrays of numbered items: each `#[seq_items(last = "...")]` field checked
//! against the struct (a `Vec`, written by serde as itself, with a mark that is another
//! integer field of the struct, named by one array only), and the pieces of the impl:
//! `ITEMS`, the accessors of each array and its mark, and one `append_<field>` function per
//! array. That the element type is a `seqid::Item` is left to rustc, at the type, with
//! `Item`'s message.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Type;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::ast::{Container, Field};
use crate::closest;
use crate::ctxt::Ctxt;
use crate::types::{number_type, refused_integer, vec_element};

/// One array of items, checked.
pub struct Items<'a> {
    /// The `Vec` field.
    pub field: &'a Field<'a>,
    /// Its element type, the item type.
    pub element: &'a Type,
    /// The mark's field.
    pub last: &'a Field<'a>,
}

/// Every `#[seq_items]` field of `cont`, checked; every mistake reported to `cx` (the
/// arrays with one are left out).
pub fn resolve<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<Items<'a>> {
    let fields = cont.fields();
    let mut resolved: Vec<Items<'a>> = Vec::new();
    for field in fields {
        let Some(attr) = &field.items else {
            continue;
        };
        let element = vec_element(field.ty);
        if element.is_none() {
            cx.error_spanned_by(field.ty, NOT_VEC);
        }
        if !field.writes_its_value() {
            cx.error_spanned_by(&attr.attr, SERDE);
        }
        if field.seq_id.is_some() || field.display.is_some() || field.key.is_some() || field.is_id()
        {
            cx.error_spanned_by(&attr.attr, OTHER_ROLE);
        }
        let Some(lit) = &attr.last else {
            continue;
        };
        let name = lit.value();
        let Some(last) = fields.iter().find(|other| other.ident.unraw() == name) else {
            let others = fields.iter().filter(|other| !std::ptr::eq(*other, field));
            let message = match closest::field_name(&name, others) {
                Some(meant) => format!(
                    "`{}` has no field `{name}`; did you mean `{meant}`?",
                    cont.ident.unraw()
                ),
                None => format!(
                    "`last = {name:?}` names no field of the struct: add a field `{name}: i64` to keep the array's last number"
                ),
            };
            cx.error_spanned_by(lit, message);
            continue;
        };
        if std::ptr::eq(last, field) {
            cx.error_spanned_by(lit, "`last` names the array itself: it names another field, an integer that keeps the array's last number");
            continue;
        }
        if number_type(last.ty).is_none() {
            let what = match refused_integer(last.ty) {
                Some(refused) => format!("a field of type {refused}"),
                None => "a field that is not an integer".to_owned(),
            };
            cx.error_spanned_by(lit, format!("`last = {name:?}` names {what}: the mark is `i32`, `i64`, `u32`, `u64` or an `Option` of one"));
            continue;
        }
        if last.seq_id.is_some() || last.items.is_some() || last.is_id() || !last.writes_its_value()
        {
            cx.error_spanned_by(lit, format!("`last = {name:?}` names a field that holds something else (a sequence's number, `_id`, an array, or a value serde does not write as itself): the mark is a field of its own"));
            continue;
        }
        if resolved.iter().any(|other| std::ptr::eq(other.last, last)) {
            cx.error_spanned_by(lit, format!("`last = {name:?}` is the mark of another #[seq_items] array already: each array keeps its own mark, in a field of its own"));
            continue;
        }
        if let Some(element) = element {
            resolved.push(Items {
                field,
                element,
                last,
            });
        }
    }
    resolved
}

/// `ITEMS` and the accessors of every array and its mark, for the `Model` impl; nothing
/// without arrays.
pub fn model_items(items: &[Items]) -> TokenStream {
    if items.is_empty() {
        return quote!();
    }
    let constants = items.iter().map(|items| {
        let (key, last, element) = (&items.field.ser_name, &items.last.ser_name, items.element);
        let number = quote_spanned!(element.span()=> <#element as ::seqid::Item>::NUMBER);
        quote!(::seqid::__private::ItemsField { field: #key, last: #last, number: #number })
    });
    let index: Vec<Literal> = (0..items.len()).map(Literal::usize_unsuffixed).collect();
    // Spanned at the element type, as the constant is: an element that is not an `Item`
    // is reported there.
    let get = items.iter().map(|items| {
        let (member, last, element) = (items.field.ident, items.last.ident, items.element);
        quote_spanned!(element.span()=> ::seqid::__private::items::<#element, _>(&self.#member, &self.#last))
    });
    let get_mut = items.iter().map(|items| {
        let (member, last, element) = (items.field.ident, items.last.ident, items.element);
        quote_spanned!(element.span()=> ::seqid::__private::items_mut::<#element, _>(&mut self.#member, &mut self.#last))
    });
    let option = quote!(::seqid::__private::core::option::Option);
    let usize = quote!(::seqid::__private::core::primitive::usize);
    let index_mut = index.clone();
    quote! {
        const ITEMS: &'static [::seqid::__private::ItemsField] = &[#(#constants),*];
        fn items(
            &self,
            index: #usize,
        ) -> #option<(&dyn ::seqid::__private::AnyItems, &dyn ::seqid::__private::AnyIdField)> {
            match index {
                #(#index => #option::Some(#get),)*
                _ => #option::None,
            }
        }
        fn items_mut(
            &mut self,
            index: #usize,
        ) -> #option<(&mut dyn ::seqid::__private::AnyItems, &mut dyn ::seqid::__private::AnyIdField)> {
            match index {
                #(#index_mut => #option::Some(#get_mut),)*
                _ => #option::None,
            }
        }
    }
}

/// One `append_<field>` function per array, or its stand-in (`stand_in`: the body never
/// runs, for the impl beside errors).
pub fn appends<'a>(
    fields: impl Iterator<Item = (&'a Field<'a>, &'a Type)> + 'a,
    stand_in: bool,
) -> impl Iterator<Item = TokenStream> + 'a {
    fields.enumerate().map(move |(index, (field, element))| {
        let name = field.ident.unraw();
        let function = format_ident!("append_{}", name);
        let index = Literal::usize_unsuffixed(index);
        let doc = format!(
            "Appends `items` to `{name}` of the one stored document `filter` finds, numbered \
             after the array's mark, in place: await it for their numbers. A filter that \
             finds no document, or more than one, is refused before anything is written; \
             name the document by its `_id` (any other filter costs a read first)."
        );
        let body = match stand_in {
            true => quote! {
                let _ = (db, filter, items);
                ::seqid::__private::core::unreachable!()
            },
            false => quote! {
                ::seqid::__private::append_items(
                    db,
                    &<Self as ::seqid::Model>::ITEMS[#index],
                    filter,
                    items,
                )
            },
        };
        // `for<'_>` makes the bound one rustc checks at each call, not at the derive: an
        // element type that is not an `Item` is reported once, at the field's type.
        quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            pub fn #function<'__seqid>(
                db: &'__seqid impl ::seqid::AsDatabase,
                filter: ::seqid::__private::BsonDocument,
                items: &'__seqid mut [#element],
            ) -> ::seqid::action::AppendItems<'__seqid, Self, #element>
            where
                for<'__seqid_item> #element: ::seqid::Item,
            {
                #body
            }
        }
    })
}

const NOT_VEC: &str = "#[seq_items] goes on a `Vec` of items (`Vec<Line>`, where `Line` derives \
                       `seqid::Item`)";

const SERDE: &str = "seqid numbers the items of the array serde writes under the field's key: \
                     this field is skipped, flattened or written by other code";

const OTHER_ROLE: &str = "#[seq_items] goes on a field of its own: not `_id`, a sequence's \
                          number, a display code or a natural key";
