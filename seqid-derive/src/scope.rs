//! `scope = ...` of a sequence on a field: the fields named, each checked to be one serde
//! writes as itself and that can tell documents apart, resolved to the field it names.

use std::ptr;

use syn::LitStr;
use syn::ext::IdentExt;

use crate::ast::{Container, Field};
use crate::closest;
use crate::ctxt::Ctxt;

/// The fields `names` refer to, by Rust name, in order; each one that cannot scope the
/// sequence on `filled` is reported at its literal and left out.
pub fn resolve<'c>(
    cx: &Ctxt,
    cont: &'c Container<'c>,
    filled: &Field,
    names: &[LitStr],
) -> Vec<&'c Field<'c>> {
    let fields = cont.fields();
    let mut scope: Vec<&Field> = Vec::new();
    for lit in names {
        let name = lit.value();
        let Some(field) = fields.iter().find(|field| field.ident.unraw() == name) else {
            cx.error_spanned_by(lit, no_such_field(cont, filled, &name));
            continue;
        };
        let problem = if ptr::eq(field, filled) {
            format!("`{name}` is the field the sequence fills: it cannot be its own scope")
        } else if field.is_id() {
            format!(
                "`{name}` is serialized as `_id`, unique already: each document would be \
                 alone in its scope, so scoping by it adds nothing; remove it from `scope`"
            )
        } else if scope.iter().any(|seen| ptr::eq(*seen, field)) {
            format!("`{name}` is already in `scope`")
        } else if let Some(word) = field.serde.not_serialized.first() {
            format!(
                "`{name}` cannot scope the sequence: #[serde({word})] keeps it from being \
                 written into the document as `{key}`",
                key = field.ser_name
            )
        } else {
            scope.push(field);
            continue;
        };
        cx.error_spanned_by(lit, problem);
    }
    scope
}

/// Why no field named `name` scopes the sequence on `filled`: it names one by the key serde
/// writes, or mistypes one, or names none.
fn no_such_field(cont: &Container, filled: &Field, name: &str) -> String {
    let fields = cont.fields();
    // `scope` names fields as the code does, whatever serde writes them as.
    if let Some(field) = fields.iter().find(|field| field.ser_name == name) {
        return format!(
            "`scope` names fields by their Rust names: write \"{}\" for the field \
             serialized as `{name}`",
            field.ident.unraw()
        );
    }
    let others = fields.iter().filter(|field| !ptr::eq(*field, filled));
    if let Some(meant) = closest::field_name(name, others) {
        return format!(
            "`{}` has no field `{name}`; did you mean `{meant}`?",
            cont.ident.unraw()
        );
    }
    let known: Vec<String> = fields
        .iter()
        .map(|field| format!("`{}`", field.ident.unraw()))
        .collect();
    format!(
        "`{}` has no field `{name}` to scope the sequence by; its fields are {}",
        cont.ident.unraw(),
        known.join(", ")
    )
}
