//! The round trips: one kind of command each, and what its answer means (the document's
//! write, the counter's update, the largest id, the indexes, the reads of stored
//! documents). They work for a call's context and the shared state
//! below; they know nothing of the orchestration above.

pub(crate) mod counter;
pub(crate) mod indexes;
pub(crate) mod largest;
pub(crate) mod replace;
pub(crate) mod stored;
pub(crate) mod write;
