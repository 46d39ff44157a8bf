//! Which call gave up in [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted), and what its message says of it.

use std::time::Duration;

use crate::base::item::ItemsField;
use crate::base::sequence::Sequence;

/// Which call gave up in [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted).
///
/// ```
/// # #[derive(serde::Serialize, seqid::Document)]
/// # #[seq_id("userid", collection = "users")]
/// # struct User { #[serde(rename = "_id")] id: i64 }
/// # fn run(error: seqid::Error) {
/// use seqid::error::{ErrorKind, RetriedCall};
///
/// if let ErrorKind::RetriesExhausted { call: RetriedCall::Insert, last_id, .. } = error.kind() {
///     eprintln!("every id up to {last_id} was taken by another writer");
/// }
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetriedCall {
    /// An insert's optimistic loop (`insert`, `insert_many`, `find_or_insert`, ...).
    Insert,
    /// An append of items to the array `items` (`append_<field>`), on the conditional way.
    Append {
        /// The array.
        items: &'static ItemsField,
    },
}

/// The message of [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted): what the call was doing, what beat it, the
/// bound that ended it, what to do.
pub(crate) fn gave_up(
    seq: &Sequence,
    call: RetriedCall,
    attempts: u32,
    elapsed: Duration,
    time_budget: Option<Duration>,
    last_id: i64,
) -> String {
    let (name, ms, collection) = (seq.name, elapsed.as_millis(), seq.collection);
    match call {
        RetriedCall::Insert => format!(
            "sequence `{name}`: gave up after {attempts} attempts in {ms} ms to insert into \
             `{collection}`: every {} tried was taken by another writer (last: {last_id}); {}",
            seq.field,
            match time_budget {
                Some(budget) => format!(
                    "its time budget of {} ms is spent (`.time_budget(..)`, `time_budget_ms`)",
                    budget.as_millis()
                ),
                None => format!("its max_attempts = {attempts} are made"),
            }
        ),
        RetriedCall::Append { items } => format!(
            "sequence `{name}`: gave up after {attempts} attempts in {ms} ms to append items \
             to `{}` of the document in `{collection}`: every time, another writer moved the \
             mark `{}` first (last seen: {last_id}); {}: nothing was appended, the items are \
             unnumbered. Append again; on a server without update pipelines the appenders of \
             one document in several processes race (those of one process take turns), where \
             MongoDB 4.2+ appends in one atomic update that loses no race",
            items.field,
            items.last,
            match time_budget {
                Some(budget) => format!("the append's budget of {} s is spent", budget.as_secs()),
                None => format!("its {attempts} attempts are made"),
            }
        ),
    }
}
