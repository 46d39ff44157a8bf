// No field is serialized as `_id`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    id: i64,
}

fn main() {}
