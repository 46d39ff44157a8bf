//! A field literally named `_id` needs no serde attribute.
use seqid::{Document, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
#[seq_id("noteid", collection = "notes")]
struct Note {
    _id: Option<i64>,
    #[serde(rename = "id")]
    external_id: String,
}

#[test]
fn field_named_id_is_accepted() {
    let mut note = Note {
        _id: None,
        external_id: "x".into(),
    };
    *note.sequence_id_mut() = Some(3);
    assert_eq!(note._id, Some(3));
    assert_eq!(note.external_id, "x");
}
