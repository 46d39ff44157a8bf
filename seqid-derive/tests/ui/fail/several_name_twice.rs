// One name, one sequence: the `_id` sequence "issue" and a field's "issue" would share a
// counter between two fields. Error at the second name.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("issue")]
struct Issue {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_id("issue")]
    number: i64,
}

fn main() {}
