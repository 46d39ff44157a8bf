// The `_id` sequence cannot be scoped: `_id` must be unique.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", scope = "team")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    team: String,
}

fn main() {}
