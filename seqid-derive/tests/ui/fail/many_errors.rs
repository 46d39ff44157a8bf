// Every mistake is reported in one build, each at its own token.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(
    "",
    collection = "system.users",
    strategy = "optimistic",
    block_size = 0,
    colour = "red"
)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    #[serde(rename = "_id")]
    other: i64,
}

fn main() {}
