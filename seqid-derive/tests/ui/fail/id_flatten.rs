// The id field cannot be flattened.
use serde::Serialize;

#[derive(Serialize)]
struct Inner {
    n: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id", flatten)]
    id: Inner,
}

fn main() {}
