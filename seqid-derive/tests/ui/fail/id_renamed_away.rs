// A field named `_id` renamed to something else is not the id.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "id")]
    _id: i64,
}

fn main() {}
