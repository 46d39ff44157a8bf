// The code must be stored as it is, where the unique index and `find_by_code` look.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{year}-{number:04}")]
    #[serde(skip_serializing)]
    code: String,
}

fn main() {}
