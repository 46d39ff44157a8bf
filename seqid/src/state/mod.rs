//! What calls share and keep: a call's context and its span; the ids reserved for documents
//! built later; the [`Sequences`](crate::Sequences) handle's
//! registry and the allocators, frontiers and writes left running it holds; the process's
//! turns and gapless commit queues. State only: the round trips that fill it are above.

pub(crate) mod allocator;
pub(crate) mod commit_queue;
pub(crate) mod context;
pub(crate) mod frontier;
pub(crate) mod orphan;
pub(crate) mod pending;
pub(crate) mod registry;
pub(crate) mod reserved;
pub(crate) mod span;
pub(crate) mod tickets;
pub(crate) mod turns;
