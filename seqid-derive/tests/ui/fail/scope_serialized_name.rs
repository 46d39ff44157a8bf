// `scope` names a field by its Rust name, not by the key serde writes.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct Ticket {
    #[serde(rename = "proj")]
    project: String,
    #[seq_id("ticket", scope = "proj")]
    number: i64,
}

fn main() {}
