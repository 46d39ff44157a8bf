// A scope field serde does not write cannot scope the sequence.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(skip_serializing)]
    project: String,
    #[seq_id("ticket", scope = "project")]
    number: i64,
}

fn main() {}
