//! The leaves: what every layer builds on. What a model and its sequence are (the model's
//! trait, ids, layouts, scopes, display codes, natural keys), the error type, the server's
//! constants and numbers, a batch's and a write's pure bookkeeping, and small tools (a
//! detached round trip, a transaction's end that survives a cut, a warning once, the
//! backoff). They import nothing above.

pub(crate) mod backoff;
pub(crate) mod batch;
pub(crate) mod bulk_error;
pub(crate) mod code;
pub(crate) mod companions;
pub(crate) mod declared;
pub(crate) mod detach;
pub(crate) mod display;
pub(crate) mod ending;
pub(crate) mod error;
pub(crate) mod fate;
pub(crate) mod fields;
pub(crate) mod future;
pub(crate) mod id;
pub(crate) mod item;
pub(crate) mod item_fields;
pub mod kind;
pub mod layout;
pub(crate) mod message;
pub(crate) mod model;
pub(crate) mod named;
pub(crate) mod natural;
pub(crate) mod next_step;
pub(crate) mod numeric;
pub(crate) mod once;
pub(crate) mod picked;
pub(crate) mod replaced;
pub(crate) mod reserved;
pub(crate) mod retried;
pub(crate) mod retry;
pub(crate) mod scope;
pub mod scoped;
pub(crate) mod sequence;
pub(crate) mod server;
pub(crate) mod session;
pub(crate) mod sharding;
pub(crate) mod span;
