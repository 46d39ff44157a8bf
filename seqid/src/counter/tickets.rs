//! The gapless ids this process has reserved for documents built later
//! (`T::reserve_ids` in the caller's transaction) and not inserted yet: for each counter
//! and id, the ticket of the latest reservation that took it. A transaction that aborts
//! takes its ids back, and the next reservation hands them out again under a new ticket:
//! a token of the aborted transaction then no longer holds its ticket, and its insert is
//! refused before anything is written, while the new token's goes on. The driver keeps a
//! transaction's number to itself, so this, with the counter read in the inserting
//! transaction (`source::counted::still_reserved`), is how seqid tells a token's transaction
//! from the next one. Reservations of other processes are not here: the unique index on
//! the sequence's field lets one document only store an id.
//!
//! An entry lives while its token does: the token's insert takes it, and a token dropped
//! unused removes its own (never a later reservation's).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::base::lock;
use crate::counter::commit_queue::Line;

/// The latest reservation's ticket, by counter and id.
fn latest() -> &'static Mutex<HashMap<(Line, i64), u64>> {
    static HELD: OnceLock<Mutex<HashMap<(Line, i64), u64>>> = OnceLock::new();
    HELD.get_or_init(Mutex::default)
}

/// Records `ids`, just reserved from the counter `line` names, as this reservation's, and
/// returns their tickets: an earlier token of one of them no longer holds it.
pub(crate) fn issue(line: &Line, ids: &[i64]) -> Vec<u64> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let mut held = lock(latest());
    let tickets = ids.iter().map(|&id| {
        let ticket = NEXT.fetch_add(1, Ordering::Relaxed);
        held.insert((line.clone(), id), ticket);
        ticket
    });
    tickets.collect()
}

/// Whether `ticket` is still the latest reservation of `id` at the counter `line` names;
/// if it is, its entry goes (the token is being inserted).
pub(crate) fn take(line: &Line, id: i64, ticket: u64) -> bool {
    let mut held = lock(latest());
    let key = (line.clone(), id);
    let holds = held.get(&key) == Some(&ticket);
    if holds {
        held.remove(&key);
    }
    holds
}

/// A token dropped unused: its entry goes, if it is still its own.
pub(crate) fn release(line: &Line, id: i64, ticket: u64) {
    let mut held = lock(latest());
    let key = (line.clone(), id);
    if held.get(&key) == Some(&ticket) {
        held.remove(&key);
    }
}

#[cfg(test)]
mod tests {
    use mongodb::bson::doc;

    use super::*;

    #[test]
    fn a_later_reservation_of_an_id_voids_the_earlier_token() {
        let line = Line::of("reservations_unit", "counters", &doc! { "_id": "ledger" });
        let first = issue(&line, &[3, 4]);
        let again = issue(&line, &[3]);
        // The first token of 3 is void; its release leaves the later one's entry.
        release(&line, 3, first[0]);
        assert!(!take(&line, 3, first[0]));
        assert!(take(&line, 3, again[0]));
        assert!(!take(&line, 3, again[0]), "a ticket is taken once");
        // 4 was reserved once: its token holds it, until it is dropped.
        release(&line, 4, first[1]);
        assert!(!take(&line, 4, first[1]));
        let other = Line::of("reservations_unit", "counters", &doc! { "_id": "other" });
        let elsewhere = issue(&other, &[3]);
        assert!(
            take(&other, 3, elsewhere[0]),
            "another counter's 3 is its own"
        );
    }
}
