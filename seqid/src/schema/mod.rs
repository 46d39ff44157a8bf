//! The schema the derive targets, at the bottom of the house: what a model and its sequence
//! are (the model's trait, ids, the kinds a declaration makes, layouts, scopes as types,
//! display codes, items in arrays), as constants and accessors. What `#[derive(Document)]`
//! and `#[derive(Item)]` expand to names these; they import nothing but one another.

pub(crate) mod display;
pub(crate) mod id;
pub(crate) mod item;
pub mod kind;
pub mod layout;
pub(crate) mod model;
pub mod scoped;
pub(crate) mod sequence;
