// The only format a placeholder takes is a zero-padded width, `:0N`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{year}-{number:6}")]
    code: String,
}

fn main() {}
