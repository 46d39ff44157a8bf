// max_attempts needs strategy = "optimistic"; the default is counters.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", max_attempts = 3)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
