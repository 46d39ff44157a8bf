//! The public API: what a user does with a model. [`Document`](crate::Document)'s methods and
//! the actions they return ([`action`](crate::action)), the [`Sequences`](crate::Sequences)
//! handle and its databases, and one sequence of several ([`SequenceOf`](crate::SequenceOf)).
//! The top layer: it builds on every layer below, and nothing below
//! builds on it.

pub mod action;
pub(crate) mod document;
pub(crate) mod sequence_of;
pub(crate) mod sequences;
