//! A write whose caller went away before its answer came, as the handle's registry keeps
//! it for `resume_insert` (see [`crate::call::pending`], which hands it over).

use std::sync::Arc;

use futures_util::future::Shared;
use mongodb::bson::RawDocument;

use crate::base::fate::Fate;
use crate::base::future::BoxFuture;

/// The fates of a write whose caller went away, once they come (`None`: its task ended
/// without them).
pub(crate) type Outcome = Shared<BoxFuture<'static, Option<Arc<Vec<Fate>>>>>;

/// A write whose caller went away, as the registry keeps it: its fates, the place of one
/// document among them, and that document's [`fingerprint`].
pub(crate) struct Orphan {
    pub outcome: Outcome,
    pub index: usize,
    pub fingerprint: u64,
}

impl Orphan {
    /// What became of the document, once the write ends; `None` if its task ended
    /// without an answer.
    pub(crate) async fn fate(&self) -> Option<Fate> {
        let fates = self.outcome.clone().await?;
        fates.get(self.index).cloned()
    }
}

/// The fingerprint of a document as serialized for a write: a resumed document is
/// matched to the write this handle sent of it by its key and by this, so that when the
/// handle sent two writes under one key (an optimistic candidate taken again after a
/// write refused), each resume learns the fate of its own. Two equal documents written
/// under one key are two callers' equal inserts: whichever fate each learns, each is
/// stored once.
pub(crate) fn fingerprint(document: &RawDocument) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0).hash_one(document.as_bytes())
}
