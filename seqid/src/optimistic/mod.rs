//! The optimistic strategy's shared state and its query, one subsystem: the frontier of a
//! scope (the candidates out and the largest seen), and the largest stored id (the
//! maximum query, which a missing counter's check reads too). The loop itself is the
//! source's (`source::optimistic`).

pub(crate) mod frontier;
pub(crate) mod largest;
