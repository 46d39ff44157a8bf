// One display field per sequence: `find_by_...` and the unique index each name one code.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("{year}/{number}")]
    short: String,
    #[seq_display("INV-{year}-{number:04}")]
    code: String,
}

fn main() {}
