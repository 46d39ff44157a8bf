//! The span of each insert, so that a service's log shows where its time goes: what the
//! insert is (sequence, collection, strategy, documents, scopes) and, once it ends, what
//! it did (the display code it wrote, reservation round trips waited for, and the
//! outcome). Retries of the loop and
//! of a counter's first use are events inside it. Numbers taken with no document (`next`,
//! `reserve_ids`) have a span of their own, `seqid.numbers`, alike.
//!
//! At `debug` level: a service that logs at `info` pays one atomic load per insert for it.

use std::collections::HashSet;

use tracing::Span;
use tracing::field::{Empty, display};

use crate::base::error::Error;
use crate::fields::code;
use crate::fields::scope::Scope;
use crate::schema::item::ItemsField;
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;

/// The span of an insert of `documents` for `seq`, the primary sequence of their type,
/// and `others`, the type's other sequences (listed with it in `sequences` when there
/// are any); `operation` is `insert`, `insert_many`, `resume_insert` or
/// `resume_insert_many`.
pub(crate) fn of(
    seq: &Sequence,
    others: &[Sequence],
    operation: &'static str,
    documents: usize,
) -> Span {
    let span = tracing::debug_span!(
        "seqid.insert",
        sequence = seq.name,
        sequences = Empty,
        collection = seq.collection,
        strategy = seq.strategy_name(),
        operation,
        documents,
        scopes = Empty,
        code = Empty,
        reservations = Empty,
        outcome = Empty,
    );
    if !others.is_empty() && !span.is_disabled() {
        let names: Vec<&str> = [seq].into_iter().chain(others).map(|s| s.name).collect();
        span.record("sequences", names.join(", "));
    }
    span
}

/// The span of a call that takes numbers with no document for `seq` (a sequence named at
/// run time, or a type's for ids reserved before their documents): `operation` is
/// `next`, `next_n` or `reserve_ids`, and `numbers` how many it asks for. It records, as
/// an insert's does, its reservation round trips and its outcome (`handed out`, or the
/// error).
pub(crate) fn of_numbers(
    seq: &Sequence,
    operation: &'static str,
    numbers: u64,
    scoped: bool,
) -> Span {
    tracing::debug_span!(
        "seqid.numbers",
        sequence = seq.name,
        counters = seq.counters,
        strategy = seq.strategy_name(),
        operation,
        numbers,
        scopes = u32::from(scoped),
        reservations = Empty,
        outcome = Empty,
    )
}

/// The span of an append of `items` items to the array `spec` of a document of `seq`'s
/// collection: it records, as an insert's does, its outcome (`appended`, or the error).
pub(crate) fn of_append(seq: &Sequence, spec: &ItemsField, items: usize) -> Span {
    tracing::debug_span!(
        "seqid.append",
        sequence = seq.name,
        collection = seq.collection,
        field = spec.field,
        items,
        outcome = Empty,
    )
}

/// Records on the current insert's span how many distinct scopes its documents fall in
/// (none for an unscoped sequence). For many documents: one document's is known before
/// it runs.
pub(crate) fn scopes(seq: &Sequence, scopes: &[Scope]) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    let distinct = match seq.scope.is_empty() {
        true => 0,
        false => scopes.iter().collect::<HashSet<_>>().len(),
    };
    span.record("scopes", distinct);
}

/// Records on the current insert's span the display code its documents were sent with
/// (the first and the last, for many), if their type has one: what a service's users
/// quote when they ask about a document.
pub(crate) fn codes<T: Model>(docs: &[T]) {
    if T::DISPLAYS.is_empty() {
        return;
    }
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    if let Some(shown) = code::shown(docs) {
        span.record("code", shown);
    }
}

/// What an insert answers, and what it did for its span.
pub(crate) struct Traced<O> {
    pub output: O,
    /// Reservation round trips the call waited for (shared with the callers waiting with
    /// it), or made itself in its transaction.
    pub reservations: u32,
}

impl<O> From<O> for Traced<O> {
    /// The answer of a call that ended before it waited for anything.
    fn from(output: O) -> Self {
        Traced {
            output,
            reservations: 0,
        }
    }
}

impl<V> Traced<Result<V, Error>> {
    /// Records on `span` what the insert did: its reservation round trips, and its
    /// outcome (`stored`, or the error's message); returns its answer.
    pub(crate) fn record(self, span: &Span) -> Result<V, Error> {
        self.record_as(span, "stored")
    }

    /// [`record`](Self::record), the outcome of a call that succeeded being `done`.
    pub(crate) fn record_as(self, span: &Span, done: &'static str) -> Result<V, Error> {
        if !span.is_disabled() {
            span.record("reservations", self.reservations);
            match &self.output {
                Ok(_) => span.record("outcome", done),
                Err(error) => span.record("outcome", display(error)),
            };
        }
        self.output
    }
}
