// The sequence name must be a string literal.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(userid)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
