// The counters collection follows the same rules.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", counters = "system.counters")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
