//! What the message of [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted) says of the call that gave up: an
//! insert's optimistic loop, or an append of items.

use std::time::Duration;

use crate::schema::item::ItemsField;
use crate::schema::sequence::Sequence;

/// The message of [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted): what the call was doing, what beat it, the
/// bound that ended it, what to do.
pub(crate) fn gave_up(
    seq: &Sequence,
    items: Option<&ItemsField>,
    attempts: u32,
    elapsed: Duration,
    time_budget: Option<Duration>,
    last_id: i64,
) -> String {
    let (name, ms, collection) = (seq.name, elapsed.as_millis(), seq.collection);
    match items {
        None => format!(
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
        Some(items) => format!(
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
