// Collection names must not be empty.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", collection = "")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
