//! Which `#[seq_id]` attributes declare the struct's sequences, the fields they fill, and
//! which one is primary.
//!
//! `#[seq_id("name", ...)]` on the struct puts a sequence on `_id`; on a field, it puts
//! one on that field, and the struct's `#[seq_id(...)]` without a name then only sets the
//! collection. Any number of sequences, each on a field of its own, with a name of its
//! own, one of them `optimistic` at most: every attribute that breaks a rule is an error
//! here, at that attribute.
//!
//! What follows from the declaration is answered here too, in one place for the later
//! stages: the primary's strategy, the sequence that fills a field, whether the insert
//! fills `_id` with an ObjectId.

use std::ptr;

use syn::ext::IdentExt;

use crate::ast::{Container, Field};
use crate::attr::kind::StrategyKind;
use crate::attr::seq_id::{Name, SeqId};
use crate::ctxt::Ctxt;
use crate::scope;
use crate::types::is_option_of_object_id;

/// Every sequence the struct declares, and which one is primary.
pub struct Declaration<'c> {
    /// The struct's `_id` sequence first, if it names one, then the fields', in order.
    pub sequences: Vec<Declared<'c>>,
    /// The index in `sequences` of the primary sequence: the one `SEQUENCE` and
    /// `sequence_id` are, whose write the insert retries (see [`primary_of`]).
    pub primary: usize,
}

/// One `#[seq_id("name", ...)]` that declares a sequence.
pub struct Declared<'c> {
    pub attr: &'c SeqId,
    /// The field the sequence fills; `None` for `_id` when no field is serialized as
    /// `_id` (reported by `valid`).
    pub field: Option<&'c Field<'c>>,
    /// Declared on the struct: the sequence fills `_id`.
    pub on_id: bool,
    /// The scope fields in the declared order, the valid ones only (the others are
    /// reported). Empty unless the sequence is on a field.
    pub scope: Vec<&'c Field<'c>>,
}

impl Declared<'_> {
    /// The key the sequence fills, as serialized.
    pub fn key(&self) -> &str {
        match (self.on_id, self.field) {
            (false, Some(field)) => &field.ser_name,
            _ => "_id",
        }
    }

    /// The strategy the sequence declares (the default when absent).
    pub fn strategy(&self) -> StrategyKind {
        self.attr
            .strategy
            .as_ref()
            .and_then(|setting| setting.value)
            .unwrap_or(StrategyKind::Counters)
    }

    /// The Rust name of the field the sequence fills, for messages.
    pub fn field_name(&self) -> String {
        match self.field {
            Some(field) if !self.on_id => field.ident.unraw().to_string(),
            _ => "_id".to_owned(),
        }
    }
}

impl<'c> Declaration<'c> {
    /// Finds every sequence, reporting to `cx` every attribute out of its place and every
    /// pair of sequences that cannot go together.
    pub fn from_container(cx: &Ctxt, cont: &'c Container<'c>) -> Declaration<'c> {
        let fields = cont.fields();
        let mut sequences = Vec::new();
        // The struct's attribute first, then the fields': errors in the order of the source.
        if let Some(attr) = &cont.seq_id
            && attr.names_a_sequence()
        {
            refuse_scope_on_id(cx, attr);
            sequences.push(Declared {
                attr,
                field: cont.id_field(),
                on_id: true,
                scope: Vec::new(),
            });
        }
        // With the sequences on fields, the struct's attribute is checked before them.
        let first_on_a_field = fields
            .iter()
            .find(|field| field.seq_id.is_some() && !field.is_id());
        if let (true, Some(container), Some(first)) =
            (sequences.is_empty(), &cont.seq_id, first_on_a_field)
        {
            refuse_sequence_keys(cx, container, first);
        }
        for field in fields {
            let Some(attr) = &field.seq_id else { continue };
            if field.is_id() {
                cx.error_spanned_by(&attr.attr, ON_ID_FIELD);
                continue;
            }
            check_field_attr(cx, attr);
            let scope = match attr.scope.as_ref().and_then(|s| s.value.as_ref()) {
                Some(names) => scope::resolve(cx, cont, field, names),
                None => Vec::new(),
            };
            sequences.push(Declared {
                attr,
                field: Some(field),
                on_id: false,
                scope,
            });
        }
        // A `#[seq_id]` on `_id` is reported already, and says what to do.
        if sequences.is_empty() && !fields.iter().any(|field| field.seq_id.is_some()) {
            report_undeclared(cx, cont, cont.seq_id.as_ref());
        }
        refuse_a_name_twice(cx, &sequences);
        refuse_a_second_optimistic(cx, &sequences);
        let primary = primary_of(&sequences);
        Declaration { sequences, primary }
    }

    /// The primary sequence, if any is declared.
    pub fn primary(&self) -> Option<&Declared<'c>> {
        self.sequences.get(self.primary)
    }

    /// The other sequences, in the order of the source.
    pub fn others(&self) -> impl Iterator<Item = &Declared<'c>> {
        let primary = self.primary;
        self.sequences
            .iter()
            .enumerate()
            .filter(move |(index, _)| *index != primary)
            .map(|(_, declared)| declared)
    }

    /// The field the primary sequence fills, if known.
    pub fn field(&self) -> Option<&'c Field<'c>> {
        self.primary().and_then(|declared| declared.field)
    }

    /// Whether a sequence fills `_id`.
    pub fn on_id(&self) -> bool {
        self.sequences.iter().any(|declared| declared.on_id)
    }

    /// The strategy the primary sequence declares (the default when absent).
    pub fn strategy(&self) -> StrategyKind {
        self.primary()
            .map_or(StrategyKind::Counters, Declared::strategy)
    }

    /// The sequence that fills `field`, if one does.
    pub fn filling(&self, field: &Field) -> Option<&Declared<'c>> {
        self.sequences
            .iter()
            .find(|declared| declared.field.is_some_and(|f| ptr::eq(f, field)))
    }

    /// Whether the insert fills `id`, the field serialized as `_id`, with an `ObjectId`: no
    /// sequence fills `_id`, and the field is written `Option<ObjectId>`. Asked of each
    /// field serialized as `_id`, since two may claim it (an error).
    pub fn fills_object_id(&self, id: &Field) -> bool {
        !self.on_id() && is_option_of_object_id(id.ty)
    }
}

/// The primary sequence: the optimistic one if there is one (its loop retries the write,
/// and the others' ids are reserved once and kept across its retries), else the `_id`
/// one, else the first field's.
fn primary_of(sequences: &[Declared]) -> usize {
    sequences
        .iter()
        .position(|declared| declared.strategy() == StrategyKind::Optimistic)
        .or_else(|| sequences.iter().position(|declared| declared.on_id))
        .unwrap_or(0)
}

/// One name, one sequence: refused at the second declaration of a name.
fn refuse_a_name_twice(cx: &Ctxt, sequences: &[Declared]) {
    for (index, declared) in sequences.iter().enumerate() {
        let Some(name) = declared.attr.name() else {
            continue;
        };
        let first = sequences[..index].iter().find(|earlier| {
            earlier
                .attr
                .name()
                .is_some_and(|n| n.value() == name.value())
        });
        if let Some(first) = first {
            cx.error_spanned_by(
                name,
                format!(
                    "the sequence {name:?} is declared on `{first}` already: a sequence \
                     numbers one field of a document (one counter for two fields would give \
                     them two different numbers, and two declarations could set it up \
                     differently); give this one a name of its own",
                    name = name.value(),
                    first = first.field_name(),
                ),
            );
        }
    }
}

/// One optimistic sequence per document at most: refused at the second.
fn refuse_a_second_optimistic(cx: &Ctxt, sequences: &[Declared]) {
    let mut optimistic = sequences
        .iter()
        .filter(|declared| declared.strategy() == StrategyKind::Optimistic);
    let Some(first) = optimistic.next() else {
        return;
    };
    for declared in optimistic {
        let Some(strategy) = &declared.attr.strategy else {
            continue;
        };
        cx.error_spanned_by(
            &strategy.key,
            format!(
                "`{first}` has the document's optimistic sequence already, and a document \
                 has one at most: the optimistic loop writes a candidate and retries when \
                 another writer took it, and two loops in one write could not tell whose \
                 number was taken; use strategy = \"counters\" or \"block\" here",
                first = first.field_name(),
            ),
        );
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

/// With the sequences on fields, the struct's attribute only names the collection.
fn refuse_sequence_keys(cx: &Ctxt, container: &SeqId, first: &Field) {
    let Some(attr) = &first.seq_id else { return };
    let name = name_or_placeholder(attr);
    for key in container
        .keys
        .iter()
        .filter(|key| key.unraw() != "collection")
    {
        cx.error_spanned_by(
            key,
            format!(
                "`{key}` sets up a sequence, so it goes in the field's \
                 #[seq_id({name}, ...)] on `{field}`; the struct's #[seq_id] without a name \
                 only sets `collection`",
                key = key.unraw(),
                field = first.ident.unraw(),
            ),
        );
    }
}

/// The sequence name as written, for messages that show the attribute.
pub fn name_or_placeholder(attr: &SeqId) -> String {
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
