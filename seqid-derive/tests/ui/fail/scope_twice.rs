// The same scope field twice: error at the second.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = ["project", "project"])]
    number: i64,
}

fn main() {}
