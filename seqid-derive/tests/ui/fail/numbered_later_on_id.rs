// A draft is stored before it has its number, and needs an `_id` to be stored and found
// by: the `_id` sequence cannot be numbered later.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("invoice", collection = "invoices", numbered = "later")]
struct Invoice {
    #[serde(rename = "_id")]
    id: Option<i64>,
    total: u64,
}

fn main() {}
