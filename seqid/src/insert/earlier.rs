//! What became of a document sent before under the id it carries, for `resume_insert`
//! and `resume_insert_many`.

use crate::base::fate::Fate;
use crate::base::model::Model;
use crate::base::scope::Key;
use crate::state::orphan::fingerprint;
use crate::state::registry::Route;

/// What became of the write of `document` at `key`, sent by an insert through this handle
/// whose caller went away before the answer came (see [`crate::state::pending`]): waited for if
/// it is still under way. `None` when there is none, or its outcome is unknown too: then
/// the document is sent again.
pub(crate) async fn left_behind<T: Model>(
    route: Route<'_>,
    key: &Key,
    document: &T,
) -> Option<Fate> {
    let registry = route.registry?;
    let fingerprint = fingerprint(&mongodb::bson::to_raw_document_buf(document).ok()?);
    let orphan = registry.take_orphan(route.db.name(), &T::SEQUENCE, key, fingerprint)?;
    match orphan.fate().await? {
        Fate::Unknown(_) => None,
        fate => Some(fate),
    }
}
