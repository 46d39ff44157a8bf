//! The public API: what a user does with a model. [`Document`](crate::Document)'s methods and
//! the actions they return ([`action`](crate::action)), the [`Sequences`](crate::Sequences)
//! handle and its databases, one sequence of several ([`SequenceOf`](crate::SequenceOf)), and
//! the deployment report. The top layer: it builds on every layer below, and nothing below
//! builds on it.

pub mod action;
pub mod check;
pub(crate) mod document;
pub(crate) mod sequence_of;
pub(crate) mod sequences;
