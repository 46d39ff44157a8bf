// #[seq_display] goes on the field that holds the code.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
#[seq_display("INV-{year}-{number:04}")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{year}-{number:04}")]
    code: String,
}

fn main() {}
