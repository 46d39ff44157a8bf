// `{year}{number}` writes 2026 + 11 and 20261 + 1 alike: two placeholders need a
// separator between them.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{year}{number}")]
    code: String,
}

fn main() {}
