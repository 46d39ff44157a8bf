// A code shows numbers and values, not another code.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("R{year}-{number}")]
    reference: String,
    #[seq_display("{reference}/{year}-{number}")]
    code: String,
}

fn main() {}
