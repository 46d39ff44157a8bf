// The sequence field cannot scope itself.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = ["project", "number"])]
    number: i64,
}

fn main() {}
