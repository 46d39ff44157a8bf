// A named #[seq_id] on the struct already puts the sequence on `_id`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("badge")]
    badge: i64,
}

fn main() {}
