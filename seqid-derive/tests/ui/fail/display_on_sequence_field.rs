// The number is the sequence's field; the code goes in a field of its own.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    #[seq_display("INV-{year}-{number:04}")]
    number: i64,
}

fn main() {}
