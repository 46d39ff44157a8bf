// The `system.` prefix is reserved.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", collection = "system.users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
