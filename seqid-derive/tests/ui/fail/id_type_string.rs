// A String id: one error, at the type.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}
