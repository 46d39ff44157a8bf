// A flattened scope field is not written as itself.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(flatten)]
    owner: Owner,
    #[seq_id("ticket", scope = "owner")]
    number: i64,
}

#[derive(Serialize)]
struct Owner {
    team: String,
}

fn main() {}
