//! seqid: auto-incrementing sequence ids for MongoDB documents.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod allocator;
mod counter;
mod document;
mod error;
mod id;
mod insert;
mod numeric;
mod optimistic;
mod options;
mod registry;
mod sequence;
mod write;

pub use document::{Document, IdValue};
pub use error::{BulkError, Error, FailedInsert};
pub use id::IdField;
pub use options::InsertOptions;
pub use registry::Stats;
pub use seqid_derive::Document;
pub use sequence::{
    DEFAULT_BLOCK_SIZE, DEFAULT_COUNTERS, DEFAULT_MAX_ATTEMPTS, Sequence, Strategy,
};

/// Not public API: what `#[derive(Document)]` expands to refers to these paths.
#[doc(hidden)]
pub mod __private {
    pub use crate::allocator::LiveBlock;
    pub use crate::sequence::construct::{block, counters, optimistic, sequence};
    pub use ::core;
}
