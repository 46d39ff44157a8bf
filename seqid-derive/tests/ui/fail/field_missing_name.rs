// A field's #[seq_id] needs the sequence name first.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id(scope = "project")]
    number: i64,
}

fn main() {}
