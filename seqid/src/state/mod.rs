//! What calls share and keep, below every subsystem: the allocator that shares round trips
//! between the tasks of a handle (the counters' and the optimistic frontier's), the writes
//! left running by cancelled callers, the process's turns. State only: the round trips
//! that fill it are above.

pub(crate) mod allocator;
pub(crate) mod orphan;
pub(crate) mod turns;
