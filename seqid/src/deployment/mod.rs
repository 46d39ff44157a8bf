//! The deployment a database lives on: what seqid reads of it once (its topology, how each
//! collection a sequence writes is sharded, the unique indexes there), what it decides
//! from that without a round trip (whether each sequence's promises hold there), the gate
//! every call passes first, and the report [`check`] makes of it all, for a deploy script
//! or a health endpoint (the guide's [sharded clusters](crate::guide::sharded_clusters)).
//! Every insert checks the same on its own first call, refusing a sequence whose promise
//! would not hold before any id is taken.
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, Document)]
//! # #[seq_id("user")]
//! # struct User { #[serde(rename = "_id")] id: i64 }
//! # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
//! let report = seqid::deployment::check(&db).of::<User>().await?;
//! assert!(report.holds(), "{report}");
//! # Ok(()) }
//! ```

// Facts read once (`facts`), kept (`known`), decisions with no I/O (`sharding`), one gate
// (`gate`), the report (`report`).
pub(crate) mod facts;
pub(crate) mod gate;
pub(crate) mod known;
mod report;
pub(crate) mod sharding;

pub use known::Topology;
pub use report::{
    Check, CollectionReport, DeploymentReport, IndexReport, Note, SequenceReport, Verdict, check,
};
