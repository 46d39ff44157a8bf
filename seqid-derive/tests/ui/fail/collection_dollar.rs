// Collection names must not contain `$`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", collection = "users$old")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
