// max_attempts needs strategy = "optimistic", whatever the key order.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", max_attempts = 3, strategy = "block")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
