// `scope` names fields with string literals.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = project)]
    number: i64,
}

fn main() {}
