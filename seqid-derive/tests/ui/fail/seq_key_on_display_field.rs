// A display code is written from the number the insert takes.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    #[seq_id("invoice")]
    number: i64,
    #[seq_display("INV-{number:04}")]
    #[seq_key]
    code: String,
}

fn main() {}
