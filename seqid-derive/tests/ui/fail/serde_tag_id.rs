// An internally tagged struct whose tag is `_id` writes its name as `_id`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[serde(tag = "_id")]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
