//! The document's own round trips: its write, the reads of stored documents, the indexes,
//! a replace's read and write; one kind of command each, and what its answer means. They
//! work in a call's context; they know nothing of the orchestration above.

pub(crate) mod indexes;
pub(crate) mod replace;
pub(crate) mod stored;
pub(crate) mod write;
