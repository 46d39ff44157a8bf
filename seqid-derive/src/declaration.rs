//! Which `#[seq_id]` declares the struct's sequence, and the field the sequence fills.
//!
//! Two forms. `#[seq_id("name", ...)]` on the struct puts the sequence on `_id`. On a
//! field, it puts the sequence on that field, and the struct's `#[seq_id(...)]`, without
//! a name, only sets the collection. A struct has one sequence: every other attribute
//! that would declare one is an error here, at that attribute.

use std::ptr;

use syn::ext::IdentExt;

use crate::ast::{Container, Field};
use crate::attr::{Name, SeqId};
use crate::ctxt::Ctxt;
use crate::scope;

pub struct Declaration<'c> {
    pub form: Form<'c>,
    /// The scope fields in the declared order, the valid ones only (the others are
    /// reported). Empty unless the sequence is on a field.
    pub scope: Vec<&'c Field<'c>>,
}

pub enum Form<'c> {
    /// `#[seq_id("name", ...)]` on the struct: the sequence fills `_id`.
    Id {
        attr: &'c SeqId,
        /// `None` when no field is serialized as `_id` (reported by `valid`).
        field: Option<&'c Field<'c>>,
    },
    /// `#[seq_id("name", ...)]` on a field, which the sequence fills.
    Field {
        attr: &'c SeqId,
        field: &'c Field<'c>,
    },
    /// Nothing declares a sequence (reported).
    Undeclared,
}

impl<'c> Declaration<'c> {
    /// Finds the declaration, reporting to `cx` every attribute out of its place.
    pub fn from_container(cx: &Ctxt, cont: &'c Container<'c>) -> Declaration<'c> {
        let fields = cont.fields();
        let marked = || {
            fields
                .iter()
                .filter_map(|field| Some((field, field.seq_id.as_ref()?)))
        };
        let form = match &cont.seq_id {
            Some(attr) if attr.names_a_sequence() => Form::Id {
                attr,
                field: cont.id_field(),
            },
            // A `#[seq_id]` on the `_id` field declares nothing (it is reported below).
            _ => match marked().find(|(field, _)| !field.is_id()) {
                Some((field, attr)) => Form::Field { attr, field },
                None => Form::Undeclared,
            },
        };

        // The struct's attribute first, then the fields': errors in the order of the source.
        match (&form, &cont.seq_id) {
            (Form::Id { attr, .. }, _) => refuse_scope_on_id(cx, attr),
            (Form::Field { attr, field }, Some(container)) => {
                refuse_sequence_keys(cx, container, attr, field);
            }
            (Form::Field { .. }, None) => {}
            (Form::Undeclared, container) => {
                // A `#[seq_id]` on `_id` is reported already, and says what to do.
                if marked().next().is_none() {
                    report_undeclared(cx, cont, container.as_ref());
                }
            }
        }
        let mut scope = Vec::new();
        for (field, attr) in marked() {
            match &form {
                _ if field.is_id() => cx.error_spanned_by(&attr.attr, ON_ID_FIELD),
                Form::Id { attr: declared, .. } => cx.error_spanned_by(
                    &attr.attr,
                    format!(
                        "the struct's #[seq_id({name}, ...)] already puts a sequence on `_id`, \
                         and a struct has one sequence: remove this #[seq_id], or the name \
                         from the struct's to put the sequence on `{field}`",
                        name = name_or_placeholder(declared),
                        field = field.ident.unraw(),
                    ),
                ),
                Form::Field { field: first, .. } if ptr::eq(*first, field) => {
                    check_field_attr(cx, attr);
                    if let Some(names) = attr.scope.as_ref().and_then(|s| s.value.as_ref()) {
                        scope = scope::resolve(cx, cont, field, names);
                    }
                }
                Form::Field { field: first, .. } => cx.error_spanned_by(
                    &attr.attr,
                    format!(
                        "a struct has one sequence, and `{}` already carries it: remove \
                         this #[seq_id]",
                        first.ident.unraw()
                    ),
                ),
                // Not reached: a marked field is `_id` (above) or makes the `Field` form.
                Form::Undeclared => {}
            }
        }
        Declaration { form, scope }
    }

    /// The attribute that names the sequence and sets it up, if any.
    pub fn settings(&self) -> Option<&'c SeqId> {
        match self.form {
            Form::Id { attr, .. } | Form::Field { attr, .. } => Some(attr),
            Form::Undeclared => None,
        }
    }

    /// The field the sequence fills, if known.
    pub fn field(&self) -> Option<&'c Field<'c>> {
        match self.form {
            Form::Id { field, .. } => field,
            Form::Field { field, .. } => Some(field),
            Form::Undeclared => None,
        }
    }

    /// The key the sequence fills, as serialized.
    pub fn key(&self) -> &'c str {
        match self.form {
            Form::Field { field, .. } => &field.ser_name,
            Form::Id { .. } | Form::Undeclared => "_id",
        }
    }
}

const ON_ID_FIELD: &str = "the `_id` sequence is declared on the struct: #[seq_id(\"name\")]; \
                           a field's #[seq_id] puts a sequence on another field";

/// A scoped number repeats from one scope to the next: it cannot be the `_id`.
fn refuse_scope_on_id(cx: &Ctxt, attr: &SeqId) {
    if let Some(scope) = &attr.scope {
        cx.error_spanned_by(
            &scope.key,
            "the `_id` sequence cannot be scoped: a scoped number repeats from one scope \
             to the next, and `_id` must be unique; put the sequence on a field of its \
             own, #[seq_id(\"name\", scope = ...)] on that field, and let the driver fill \
             `_id` with an ObjectId",
        );
    }
}

/// With the sequence on a field, the struct's attribute only names the collection.
fn refuse_sequence_keys(cx: &Ctxt, container: &SeqId, declared: &SeqId, field: &Field) {
    let name = name_or_placeholder(declared);
    for key in container
        .keys
        .iter()
        .filter(|key| key.unraw() != "collection")
    {
        cx.error_spanned_by(
            key,
            format!(
                "`{key}` sets up the sequence, so it goes in the field's \
                 #[seq_id({name}, ...)] on `{field}`; the struct's #[seq_id] without a name \
                 only sets `collection`",
                key = key.unraw(),
                field = field.ident.unraw(),
            ),
        );
    }
}

/// The sequence name as written, for messages that show the attribute.
fn name_or_placeholder(attr: &SeqId) -> String {
    match &attr.name {
        Name::Given(name) => format!("{:?}", name.value()),
        Name::Absent | Name::Invalid => "\"name\"".to_owned(),
    }
}

/// The field's own attribute: a name, and no collection.
fn check_field_attr(cx: &Ctxt, attr: &SeqId) {
    if let Name::Absent = attr.name {
        cx.error_spanned_by(
            &attr.attr.meta,
            "missing sequence name: write #[seq_id(\"name\", ...)], the name first, as a \
             string literal",
        );
    }
    if let Some(collection) = &attr.collection {
        cx.error_spanned_by(
            &collection.key,
            "`collection` belongs on the struct, #[seq_id(collection = \"...\")]: a field's \
             #[seq_id] sets up its sequence, not where the documents go",
        );
    }
}

fn report_undeclared(cx: &Ctxt, cont: &Container, container: Option<&SeqId>) {
    let ident = cont.ident;
    match container {
        None => cx.error_spanned_by(
            ident,
            format!(
                "missing #[seq_id(...)] on `{ident}`: add #[seq_id(\"name\")] to the struct \
                 to take its `_id` from a sequence, or to the field a sequence fills"
            ),
        ),
        // The keys are left alone: once the name is written, they may be in their place.
        Some(attr) => cx.error_spanned_by(
            &attr.attr.meta,
            "missing sequence name: for a sequence on `_id`, write the name first, as a \
             string literal: #[seq_id(\"name\", ...)]; for a sequence on another field, \
             put #[seq_id(\"name\", ...)] on that field",
        ),
    }
}
