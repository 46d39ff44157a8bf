//! Warnings logged once per process and sequence: a misuse or an anomaly that every call
//! would otherwise repeat, flooding the log of a busy service.
//!
//! A log's deduplication belongs to the process that writes the log, not to a deployment:
//! this is process-wide state, as is what calls through bare databases learn of their
//! deployment (`crate::deployment::facts`), which keep nothing else.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::schema::sequence::Sequence;

/// What is warned about; each is logged once per sequence.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Warning {
    /// A `block` or `optimistic` insert through a bare `mongodb::Database`.
    BareDatabase,
    /// The largest id read went backwards between two reads of the optimistic loop.
    MaximumBackwards,
    /// A collection of the sequence is sharded so that a promise holds at a cost: the
    /// collection and the cost, by name (the deployment's, which is above this layer).
    ShardedAtACost(&'static str, &'static str),
}

/// A warning, and the sequence (name and collection) it is about.
type Due = (Warning, &'static str, &'static str);

/// Whether `warning` about `seq` is due: `true` the first time in this process, `false`
/// after.
pub(crate) fn first_time(warning: Warning, seq: &Sequence) -> bool {
    static SEEN: OnceLock<Mutex<HashSet<Due>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Mutex::default);
    seen.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert((warning, seq.name, seq.collection))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::sequence::testing::counted;

    #[test]
    fn each_warning_is_due_once_per_sequence() {
        const A: Sequence = counted("once_a", "once");
        const B: Sequence = counted("once_b", "once");
        assert!(first_time(Warning::MaximumBackwards, &A));
        assert!(!first_time(Warning::MaximumBackwards, &A));
        assert!(first_time(Warning::BareDatabase, &A));
        assert!(first_time(Warning::MaximumBackwards, &B));
        assert!(!first_time(Warning::BareDatabase, &A));
    }
}
