// After the name, only `key = value`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
