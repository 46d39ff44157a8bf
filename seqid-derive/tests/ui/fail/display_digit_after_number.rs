// A digit right after a number could be the number's own: `{number}0` writes 1 + "0" as
// 10 would be written.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{year}-{number}0")]
    code: String,
}

fn main() {}
