// A misspelt key; the message lists the valid ones.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", colection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
