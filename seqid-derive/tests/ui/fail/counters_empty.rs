// The counters collection must not be empty.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", counters = "")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
