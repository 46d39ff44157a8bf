//! What the errors of a replace (`doc.replace(&db)`) say, apart from `base::error`, which
//! declares them.

use crate::schema::item::ItemsField;
use crate::schema::sequence::Sequence;

/// [`ErrorKind::ItemsStale`](crate::base::error::Error::ItemsStale).
pub(crate) fn stale(
    seq: &Sequence,
    items: &ItemsField,
    stored: i64,
    written: i64,
    id: &str,
) -> String {
    let moved = match written >= stored {
        true => " (the stored mark moved after the replace read it)",
        false => "",
    };
    format!(
        "sequence `{}`: the replace of _id {id} in `{}` is refused, the document is stale: its \
         mark `{}` is {written}, the stored one {stored}{moved}: an append to `{}` landed after \
         the document was read, and writing it would drop the items appended since and hand \
         their numbers out again. Nothing was written: read the document again, apply the \
         change, and replace it again",
        seq.name, seq.collection, items.last, items.field
    )
}

/// [`ErrorKind::ReplaceNotFound`](crate::base::error::Error::ReplaceNotFound).
pub(crate) fn not_found(seq: &Sequence, id: &str) -> String {
    format!(
        "sequence `{}`: no document of `{}` has _id {id} to replace: replace writes back a \
         stored document (this one was deleted, or never inserted: insert it); nothing was \
         written",
        seq.name, seq.collection
    )
}

/// [`ErrorKind::ReplaceWithoutId`](crate::base::error::Error::ReplaceWithoutId).
pub(crate) fn without_id(seq: &Sequence, found: &str) -> String {
    format!(
        "sequence `{}`: the document cannot be replaced in `{}`: its _id is {found}, and replace \
         finds the stored document by its _id (insert a document that was never stored); \
         nothing was sent",
        seq.name, seq.collection
    )
}

/// [`ErrorKind::ReplaceOutcomeUnknown`](crate::base::error::Error::ReplaceOutcomeUnknown).
pub(crate) fn unknown(seq: &Sequence, id: &str, source: &mongodb::error::Error) -> String {
    format!(
        "sequence `{}`: the replace of _id {id} in `{}` was sent and no answer came ({source}); \
         it landed once or not at all: replace it again (it is checked against the stored \
         marks again, so it writes the document once more or is refused as stale)",
        seq.name, seq.collection
    )
}
