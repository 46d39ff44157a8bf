// mongoose-auto-increment's collection is always `identitycounters`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("Book", layout = "mongoose-auto-increment", counters = "counters")]
struct Book {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

fn main() {}
