// #[serde(transparent)] writes the single field, not a document.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[serde(transparent)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
