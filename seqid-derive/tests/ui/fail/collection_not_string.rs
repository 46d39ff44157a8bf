// collection takes a string literal.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", collection = 5)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
