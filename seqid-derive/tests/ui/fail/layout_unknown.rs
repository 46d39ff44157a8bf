// An unknown layout names the presets there are.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("users.id", collection = "users", layout = "mongo-engine")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
