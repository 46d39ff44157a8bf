//! The call layer, above the subsystems: one call's context and its span, and the
//! [`Sequences`](crate::Sequences) handle's registry (the allocators, frontiers and writes
//! left running it keeps, found by the call's route), the writes a cancelled caller left
//! behind.

pub(crate) mod context;
pub(crate) mod pending;
pub(crate) mod registry;
pub(crate) mod span;
