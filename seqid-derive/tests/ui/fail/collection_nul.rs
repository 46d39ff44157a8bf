// Collection names must not contain NUL.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", collection = "us\0ers")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
