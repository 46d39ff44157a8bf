// A scope field that does not exist, and none is near: the message lists the fields.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    project: String,
    #[seq_id("ticket", scope = "tenant")]
    number: i64,
}

fn main() {}
