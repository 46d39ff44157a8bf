//! The strategy of a [`Document`](crate::Document) type, as a type: what an insert offers
//! depends on it, so that a setter that cannot apply to a strategy is a compile error
//! that says why (`max_attempts` is the optimistic loop's alone: [`Retrying`]).
//!
//! ```
//! use seqid::{Document, kind};
//! # use serde::Serialize;
//!
//! #[derive(Serialize, Document)]
//! #[seq_id("ticket", strategy = "optimistic")]
//! struct Ticket { _id: i64 }
//!
//! fn optimistic<T: Document<Kind = kind::Optimistic>>() {}
//! optimistic::<Ticket>();
//! ```

/// One of the markers below; implemented by them only.
pub trait Kind: sealed::Sealed + Send + Sync + 'static {}

/// `strategy = "counters"` (the default).
#[derive(Debug)]
pub enum Counters {}

/// `strategy = "block"`.
#[derive(Debug)]
pub enum Block {}

/// `strategy = "optimistic"`.
#[derive(Debug)]
pub enum Optimistic {}

/// `strategy = "gapless"`.
#[derive(Debug)]
pub enum Gapless {}

impl Kind for Counters {}
impl Kind for Block {}
impl Kind for Optimistic {}
impl Kind for Gapless {}

/// The strategies that keep a counter: all but [`Optimistic`]. A
/// [`SequenceOf`](crate::SequenceOf) offers the counter's operations for these only.
///
/// ```
/// use seqid::kind::{self, WithCounter};
///
/// fn has_a_counter<K: WithCounter>() {}
/// has_a_counter::<kind::Block>();
/// has_a_counter::<kind::Gapless>();
/// // has_a_counter::<kind::Optimistic>(); // does not compile: no counter
/// ```
pub trait WithCounter: Kind {}

impl WithCounter for Counters {}
impl WithCounter for Block {}
impl WithCounter for Gapless {}

/// The strategy whose insert retries with another id when its id was taken: only
/// [`Optimistic`]. Its loop is bounded per call with `max_attempts` and `time_budget`,
/// offered for it alone.
///
/// ```
/// use seqid::kind::{self, Retrying};
///
/// fn retries<K: Retrying>() {}
/// retries::<kind::Optimistic>();
/// // retries::<kind::Counters>(); // does not compile: a counter's id is taken once
/// ```
#[diagnostic::on_unimplemented(
    message = "`max_attempts` and `time_budget` bound the optimistic loop's retries, and this type's strategy, `{Self}`, has no loop",
    label = "a counter's id is taken once and never retried with another",
    note = "they apply to `strategy = \"optimistic\"`; for a call of a counter-backed type, there is nothing to bound"
)]
pub trait Retrying: Kind {}

impl Retrying for Optimistic {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Counters {}
    impl Sealed for super::Block {}
    impl Sealed for super::Optimistic {}
    impl Sealed for super::Gapless {}
}
