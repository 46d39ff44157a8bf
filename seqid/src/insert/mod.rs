//! The insert orchestration: the only place where documents meet writes. An insert makes
//! the call's [`Context`](crate::call::context::Context), checks the id fields and reads the
//! scopes, then for each round takes ids from the strategy's id source
//! ([`counted`](crate::source::counted) or [`optimistic`](crate::source::optimistic)), fills them in,
//! writes the documents ([`write`](crate::round_trip::write)), and hands what the server answered back
//! to the source (stored, or taken by another writer) and to the caller.
//!
//! [`one`] serves `insert` and `resume_insert`; [`many`] serves `insert_many` and
//! `resume_insert_many`, whose path its module docs follow.
//!
//! **The size of an insert's state.** An `insert` is one boxed future, whose size is that
//! of the largest state any of its paths can reach: every `async fn` awaited inline adds
//! its own, and every value held across an await. A block insert's common path (an id
//! from the live block, one `insert`) would otherwise carry the states of the optimistic
//! loop, of a reservation and of the lookups after an error, over 13 KB, allocated and
//! copied on every call. So the paths that are rare, or that already cost a round trip,
//! are boxed where they start: the optimistic branch, a reservation in the allocator, the
//! gapless reservation, a write in the caller's session and what follows a write's error
//! in [`write`](crate::round_trip::write), and `resume`; the call's parts travel as one `Context`
//! borrowed by each step, and a `Fate`'s reasons are boxed. `tests/state.rs` bounds the
//! state of every strategy, and BENCHMARKS.md (*The client's own cost*) prints it.

pub(crate) mod items;
pub(crate) mod later;
pub(crate) mod many;
pub(crate) mod natural;
pub(crate) mod natural_many;
pub(crate) mod one;
pub(crate) mod replace;
