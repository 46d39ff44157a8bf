// A key given twice: error at the second.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", collection = "users", collection = "people")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
