// strategy takes a string literal.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = block)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
