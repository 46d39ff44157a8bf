//! The messages of seqid's errors: what [`Error`](crate::Error)'s `Display` writes for
//! each kind, naming the sequence, the value, the true cause and the fix.

use std::fmt;

use crate::base::error::ErrorKind;
use crate::base::retried::gave_up;
use crate::schema::sequence::{Sequence, Strategy};

impl ErrorKind {
    /// The message of a failure that served no one sequence: a transaction's own commands
    /// (its body's may serve several), the deployment's check.
    pub(crate) fn unsequenced(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Driver { action, source, .. } => write!(f, "{action} failed: {source}"),
            ErrorKind::TransactionOutcomeUnknown {
                commits,
                elapsed,
                source,
                ..
            } => write!(
                f,
                "the transaction's commit was sent {commits} times in {} ms and no answer said \
                 whether it committed ({source}); it committed whole or not at all: read what \
                 it wrote to learn which, before running it again",
                elapsed.as_millis()
            ),
            // No other kind is made without a sequence.
            other => write!(f, "{other:?}"),
        }
    }

    /// The message, for the sequence `seq` the failed call was serving.
    pub(crate) fn describe(
        &self,
        seq: &'static Sequence,
        f: &mut fmt::Formatter<'_>,
    ) -> fmt::Result {
        match self {
            ErrorKind::Driver { action, source, .. } => {
                write!(f, "sequence `{}`: {action} failed: {source}", seq.name)
            }
            ErrorKind::CounterNotNumeric { counter, value, .. } => write!(
                f,
                "sequence `{}`: the counter {{ {counter} }} in `{}` holds {}: {}, {}; \
         it was left as it is",
                seq.name,
                seq.counters,
                seq.layout.value_key,
                crate::base::numeric::shown(value),
                crate::base::numeric::not_countable(value)
            ),
            ErrorKind::CounterContended {
                counter, attempts, ..
            } => write!(
                f,
                "sequence `{}`: the counter {{ {counter} }} in `{}` changed between \
         reading it and updating it as read, {attempts} times in a row (other writers kept \
         taking ids from it); no id was taken",
                seq.name, seq.counters
            ),
            ErrorKind::CounterBelowStored {
                scope,
                value,
                largest,
                ..
            } => write!(
                f,
                "sequence `{}`: the counter would be set to {value}, below the largest {} \
         stored in `{}`{}, {largest}: the ids between are taken, and inserts would \
         fail until the counter passed them; nothing was changed (`.below_stored()` sets it \
         all the same)",
                seq.name,
                seq.field,
                seq.collection,
                if scope.is_empty() {
                    String::new()
                } else {
                    format!(" in scope {scope}")
                }
            ),
            ErrorKind::CounterMissing {
                counter,
                scope,
                largest,
                ..
            } => write!(
                f,
                "sequence `{}`: there is no counter {{ {counter} }} in `{}`, but `{}` already holds \
         {} up to {}{}, at or above the sequence's first id {}: a counter made now would hand \
         those numbers out again, so none was made and no id was taken. Check the sequence's \
         name, `counters` and `layout` against the counter that numbered them ({}); \
         to start above the numbers stored on purpose, call `sync_counter` first",
                seq.name,
                seq.counters,
                seq.collection,
                seq.field,
                crate::base::numeric::shown(largest),
                if scope.is_empty() {
                    String::new()
                } else {
                    format!(" in scope {scope}")
                },
                seq.start,
                crate::schema::layout::naming_hint(&seq.layout)
            ),
            ErrorKind::TransactionRequired { has_session, .. } => write!(
                f,
                "sequence `{}` is gapless: its inserts (and numbers on their own) must run in a \
         transaction, and {}; run them in one (`Transaction::new(&mut session).run(...)`, or \
         the driver's) and pass the session with `.session(session)`. Nothing was written",
                seq.name,
                if *has_session {
                    "the session given has none running"
                } else {
                    "no session was given"
                }
            ),
            ErrorKind::NoCounter {
                counter, attempts, ..
            } => write!(
                f,
                "sequence `{}`: the server answered the update of the counter {{ {counter} }} \
         in `{}` with no document (null), {attempts} times in a row, though the counter \
         exists or was just made; a MongoDB server returns the counter or an error",
                seq.name, seq.counters
            ),
            ErrorKind::OutcomeUnknown {
                id, reason, source, ..
            } => write!(
                f,
                "sequence `{}`: the outcome of inserting {field} {id} into `{}` is unknown: \
         {reason} ({source}); the document keeps {field} {id}: call resume_insert to finish without \
         storing it twice",
                seq.name,
                seq.collection,
                field = seq.field
            ),
            ErrorKind::Overflow {
                value,
                target,
                origin,
                ..
            } => write!(
                f,
                "sequence `{}`: id {value} does not fit {target} ({origin}); nothing was inserted",
                seq.name
            ),
            ErrorKind::ZeroId { target, origin, .. } => write!(
                f,
                "sequence `{}`: the sequence handed out id 0 ({origin}), but a plain {target} id \
         field reads 0 as unset; nothing was inserted (move the sequence above 0, or make the \
         field an Option<{target}>)",
                seq.name
            ),
            ErrorKind::DuplicateKey {
                id, index, message, ..
            } => write!(
                f,
                "sequence `{}`: inserting {} {id} into `{}` violates unique index {}: {message}{}",
                seq.name,
                seq.field,
                seq.collection,
                index.as_deref().unwrap_or("(unnamed)"),
                behind_stored(seq, index.as_deref())
            ),
            ErrorKind::Refused {
                id, code, message, ..
            } => write!(
                f,
                "sequence `{}`: the server refused {} {id} in `{}`{}: {message}",
                seq.name,
                seq.field,
                seq.collection,
                code.map(|c| format!(" (code {c})")).unwrap_or_default()
            ),
            ErrorKind::IdAlreadySet { value, unset, .. } => write!(
                f,
                "sequence `{}`: the document already has {} {value}; insert fills only an unset \
         id ({unset}). For an id this program gives the document, reserve it with \
         reserve_id and insert with .reserved(token) (the insert fills in the rest: codes, \
         items); for an id from elsewhere (an import), insert with the driver, then call \
         sync_counter so that the sequence goes on above it; resume_insert is only for a \
         document whose insert ended in OutcomeUnknown or was cancelled (it stores the \
         document under the id it carries)",
                seq.name, seq.field
            ),
            ErrorKind::ReservedScope {
                id,
                reserved,
                document,
                ..
            } => write!(
                f,
                "sequence `{}`: id {id} was reserved for the scope {reserved}, and the document \
         is of the scope {document}: a reserved id is inserted in the scope its counter \
         handed it out for. Nothing was written",
                seq.name
            ),
            ErrorKind::ReservedElsewhere {
                id,
                reserved,
                insert,
                ..
            } => write!(
                f,
                "sequence `{}`: id {id} was reserved in {reserved}, and this insert goes to \
         {insert}: a reserved id is inserted where its counter handed it out, since the \
         counter there hands {id} out too. Nothing was written; {id} is a gap in \
         {reserved} unless a document is stored under it there: reserve this document's \
         id where it is inserted",
                seq.name
            ),
            ErrorKind::ReservedTransaction { id, reason, .. } => write!(
                f,
                "sequence `{}` is gapless: id {id} was reserved in a transaction and lives and dies \
         with it, and {reason}: insert it with the session that reserved it, in the \
         transaction that reserved it. Nothing was written",
                seq.name
            ),
            ErrorKind::InvalidCode {
                display,
                value,
                reason,
                ..
            } => write!(
                f,
                "sequence `{}`: the code {:?} cannot be written into `{}`: {value} {reason}",
                seq.name, display.format, display.field
            ),
            ErrorKind::RetriesExhausted {
                items,
                attempts,
                elapsed,
                time_budget,
                last_id,
                ..
            } => write!(
                f,
                "{}",
                gave_up(seq, *items, *attempts, *elapsed, *time_budget, *last_id)
            ),
            ErrorKind::InvalidOption {
                option,
                value,
                reason,
                ..
            } => write!(
                f,
                "sequence `{}`: {option} = {value} is invalid: {reason}",
                seq.name
            ),
            ErrorKind::InvalidScope { scope, reason, .. } => write!(
                f,
                "sequence `{}`: invalid scope {scope}: {reason}; nothing was written",
                seq.name
            ),
            ErrorKind::MissingIndex { keys, why, .. } => write!(
                f,
                "sequence `{}`: `{}` has no unique index on {keys}, which {why}; \
         nothing was written: create it with `create_indexes` (or by hand)",
                seq.name, seq.collection
            ),
            ErrorKind::Sharded {
                collection,
                shard_key,
                why,
                ..
            } => write!(
                f,
                "sequence `{}`: `{collection}` is sharded on {shard_key}: {why}; nothing was \
         written (see seqid's guide, sharded clusters)",
                seq.name
            ),
            ErrorKind::InvalidNaturalKey { key, reason, .. } => write!(
                f,
                "sequence `{}`: cannot find or insert in `{}` by the natural key {key}: {reason}; \
         nothing was written",
                seq.name, seq.collection
            ),
            ErrorKind::NumberedLater { operation, .. } => write!(
                f,
                "sequence `{}`: `{}` is numbered later (numbered = \"later\"), so {operation} does not \
         number it: store the draft as it is with the driver (T::collection(&db).insert_one), \
         and give it its number with number_draft when it is issued; nothing was written",
                seq.name, seq.field
            ),
            ErrorKind::DraftNotFound { filter, .. } => write!(
                f,
                "sequence `{}`: no document of `{}` matches {filter} to number; nothing was reserved \
         or written",
                seq.name, seq.collection
            ),
            ErrorKind::DraftAmbiguous {
                filter, matched, ..
            } => write!(
                f,
                "sequence `{}`: {filter} matches {} of `{}`, and number_draft numbers one: name the \
         draft by a filter only it matches (its `_id`), or number them all with \
         number_drafts; nothing was reserved or written",
                seq.name,
                match matched {
                    Some(count) => format!("{count} documents"),
                    None => "more than one document (counting them failed)".to_owned(),
                },
                seq.collection
            ),
            ErrorKind::TransactionOutcomeUnknown { .. } => self.unsequenced(f),
            ErrorKind::ItemNumberSet {
                items,
                position,
                value,
                ..
            } => write!(
                f,
                "sequence `{}`: `{}`: item {}[{position}].{} is {value}, set already: items are \
         numbered by seqid, leave the number unset (0 or None); nothing was written",
                seq.name, seq.collection, items.field, items.number.key
            ),
            ErrorKind::ItemNumberOverflow {
                items,
                position,
                value,
                ..
            } => write!(
                f,
                "sequence `{}`: `{}`: item number {value} for {}[{position}].{} (or the mark `{}`) \
         does not fit its field's type",
                seq.name, seq.collection, items.field, items.number.key, items.last
            ),
            ErrorKind::ItemsNotFound { items, filter, .. } => write!(
                f,
                "sequence `{}`: no document of `{}` matches {filter} to append items to `{}`; nothing \
         was written",
                seq.name, seq.collection, items.field
            ),
            ErrorKind::ItemsNotArray {
                items,
                found,
                filter,
                ..
            } => write!(
                f,
                "sequence `{}`: the document of `{}` matching {filter} holds {found} in `{}`, not an \
         array: items are appended to an array only; nothing was written",
                seq.name, seq.collection, items.field
            ),
            ErrorKind::ItemsAmbiguous {
                items,
                filter,
                matched,
                ..
            } => write!(
                f,
                "sequence `{}`: {filter} matches {} of `{}`, and an append of items to `{}` goes to \
         one: name the document by a filter only it matches (its `_id`); nothing was written",
                seq.name,
                match matched {
                    Some(count) => format!("{count} documents"),
                    None => "more than one document (counting them failed)".to_owned(),
                },
                seq.collection,
                items.field
            ),
            ErrorKind::ItemsOutcomeUnknown {
                items,
                token,
                source,
                ..
            } => write!(
                f,
                "sequence `{}`: the append to `{}` in `{}` (token {token}) was sent and no answer came \
         ({source}); append again with .token({token}): it appends at most once",
                seq.name, items.field, seq.collection
            ),
            ErrorKind::ItemsStale {
                items,
                stored,
                written,
                id,
                ..
            } => write!(
                f,
                "{}",
                crate::base::replaced::stale(seq, items, *stored, *written, id)
            ),
            ErrorKind::ReplaceNotFound { id, .. } => {
                write!(f, "{}", crate::base::replaced::not_found(seq, id))
            }
            ErrorKind::ReplaceWithoutId { found, .. } => {
                write!(f, "{}", crate::base::replaced::without_id(seq, found))
            }
            ErrorKind::ReplaceOutcomeUnknown { id, source, .. } => {
                write!(f, "{}", crate::base::replaced::unknown(seq, id, source))
            }
            ErrorKind::Bulk(inner) => inner.describe(seq, f),
        }
    }
}

/// For a duplicate of the sequence's own field, from a counter: the likely cause, ids
/// stored by other means (an import, another tool) at or above the counter, and the fix.
/// A server that does not name the index (nx-27017) leaves which field it was open.
fn behind_stored(sequence: &Sequence, index: Option<&str>) -> &'static str {
    match index {
        _ if matches!(sequence.strategy, Strategy::Optimistic { .. }) => "",
        Some(index) if index.contains(sequence.field) => {
            " (the counter handed out an id a document already has: ids stored by other \
             means, an import or another tool, are at or above the counter; sync_counter \
             raises it above the ids stored)"
        }
        Some(_) => "",
        None => {
            " (if the duplicate is the sequence's id: ids stored by other means, an import or \
             another tool, are at or above the counter; sync_counter raises it above the ids \
             stored)"
        }
    }
}
