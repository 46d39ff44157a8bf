// The format is a string literal, read at compile time to be checked.
use serde::Serialize;

const FORMAT: &str = "INV-{year}-{number:04}";

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display(FORMAT)]
    code: String,
}

fn main() {}
