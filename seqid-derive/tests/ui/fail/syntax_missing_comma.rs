// Arguments are separated by commas.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid" collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
