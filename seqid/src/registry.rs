//! (in progress)
use mongodb::Database;
use crate::Sequence;

/// Stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Round trips.
    pub reservations: u64,
    /// Ids.
    pub ids: u64,
    /// Retries.
    pub retries: u64,
}

pub(crate) fn stats(_db: &Database, _seq: &Sequence) -> Stats { Stats::default() }
