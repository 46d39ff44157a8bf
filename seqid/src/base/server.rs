//! What seqid knows of the server: its error codes and messages, where reads that decide
//! ids go, the unique index that holds a sequence's numbers, and the unique indexes seqid
//! asks it to make.

use std::sync::atomic::{AtomicU64, Ordering};

use mongodb::IndexModel;
use mongodb::bson::{Bson, Document as BsonDocument};
use mongodb::options::{IndexOptions, ReadPreference, SelectionCriteria};

use crate::schema::sequence::Sequence;

/// A unique index refused a write.
pub(crate) const DUPLICATE_KEY: i32 = 11000;

/// Reads that decide ids go to the primary, whatever the database's read preference:
/// a secondary may not have the latest writes yet.
pub(crate) const PRIMARY: SelectionCriteria =
    SelectionCriteria::ReadPreference(ReadPreference::Primary);

/// Codes of errors that say a sharded cluster's routing changed: StaleShardVersion (63),
/// StaleEpoch (150), StaleDbVersion (249), StaleConfig (13388).
const ROUTING_CHANGED: [i32; 4] = [63, 150, 249, 13388];

/// Bumped when a command answers that the routing changed.
static ROUTING_EPOCH: AtomicU64 = AtomicU64::new(0);

/// Notes a driver error's code: one that says the routing changed makes what was read of
/// every deployment stale (`crate::deployment::facts` reads it again).
pub(crate) fn routing_changed(code: Option<i32>) {
    if code.is_some_and(|code| ROUTING_CHANGED.contains(&code)) {
        ROUTING_EPOCH.fetch_add(1, Ordering::Relaxed);
    }
}

/// The driver's error `error`, noted first: one that says the routing changed makes what
/// was read of every deployment stale. Every driver error seqid reports is noted so, where
/// it is met (`Doing::doing`, or by name where an error is made by hand).
pub(crate) fn noted(error: mongodb::error::Error) -> mongodb::error::Error {
    routing_changed(server_code(&error));
    error
}

/// How many times a command has answered that the routing changed.
pub(crate) fn routing_epoch() -> u64 {
    ROUTING_EPOCH.load(Ordering::Relaxed)
}

/// The server's error code, whichever way the driver reports it.
pub(crate) fn server_code(error: &mongodb::error::Error) -> Option<i32> {
    use mongodb::error::{ErrorKind, WriteFailure};
    match &*error.kind {
        ErrorKind::Command(command) => Some(command.code),
        ErrorKind::Write(WriteFailure::WriteError(write)) => Some(write.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(concern)) => Some(concern.code),
        _ => None,
    }
}

/// The index a duplicate key message names, in MongoDB's format
/// `E11000 duplicate key error collection: db.users index: email_1 dup key: { ... }`.
pub(crate) fn duplicate_index(message: &str) -> Option<&str> {
    let rest = &message[message.find(" index: ")? + " index: ".len()..];
    rest.split_whitespace().next()
}

/// The name of the unique index that holds a sequence's ids: `_id`'s own, or the one
/// [`create_indexes`](crate::Document::create_indexes) makes on the scope fields and the
/// field, named as MongoDB names an index by default (`project_1_number_1`).
pub(crate) fn identity_index(seq: &Sequence) -> String {
    if seq.field == "_id" {
        return "_id_".into();
    }
    default_name(identity_fields(seq))
}

/// The keys of that index: `{ <scope fields>: 1, <field>: 1 }`.
pub(crate) fn identity_keys(seq: &Sequence) -> BsonDocument {
    keys(identity_fields(seq))
}

/// The fields of that index, when it is not `_id`'s: the scope fields, then the field.
fn identity_fields(seq: &Sequence) -> impl Iterator<Item = &'static str> {
    seq.scope.iter().copied().chain([seq.field])
}

/// The unique index that keeps one counter per sequence in a layout found by fields (the
/// tool's own: same keys, same name): its keys and its name.
pub(crate) fn counter_index(layout: &crate::schema::layout::Layout) -> (BsonDocument, String) {
    ascending(layout.unique_index)
}

/// An ascending index on `fields`, in order: its keys `{ <field>: 1, ... }`, and the name
/// MongoDB gives it by default.
pub(crate) fn ascending(fields: &[&str]) -> (BsonDocument, String) {
    let fields = fields.iter().copied();
    (keys(fields.clone()), default_name(fields))
}

/// The keys of an ascending index on `fields`: `{ project: 1, number: 1 }`.
fn keys<'a>(fields: impl IntoIterator<Item = &'a str>) -> BsonDocument {
    let key = |field: &str| (field.to_owned(), Bson::Int32(1));
    fields.into_iter().map(key).collect()
}

/// The name MongoDB gives an ascending index on `fields` by default: `project_1_number_1`.
fn default_name<'a>(fields: impl IntoIterator<Item = &'a str>) -> String {
    let named: Vec<String> = fields.into_iter().map(|f| format!("{f}_1")).collect();
    named.join("_")
}

/// A unique index on `keys` named `name`, as seqid makes one: the index that holds a
/// sequence's ids (see [`identity_index`]), and a tool's on the fields that find its
/// counter.
pub(crate) fn unique_index(keys: BsonDocument, name: &str) -> IndexModel {
    let options = IndexOptions::builder()
        .unique(true)
        .name(name.to_owned())
        .build();
    IndexModel::builder().keys(keys).options(options).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_index_reads_mongodb_messages() {
        let id = "E11000 duplicate key error collection: app.users index: _id_ dup key: { _id: 5 }";
        assert_eq!(duplicate_index(id), Some("_id_"));
        let email = "E11000 duplicate key error collection: app.users index: email_1 dup key: { email: \"a\" }";
        assert_eq!(duplicate_index(email), Some("email_1"));
        assert_eq!(duplicate_index("UNIQUE constraint failed: users._id"), None);
    }
}
