// Each field in a `scope` array is a string literal; the others are still checked.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = ["project", 2025])]
    number: i64,
}

fn main() {}
