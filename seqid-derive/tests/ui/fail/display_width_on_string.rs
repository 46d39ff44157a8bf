// A width pads a number with zeros; a string is shown as it is.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "orders")]
struct Order {
    shop: String,
    #[seq_id("order", scope = "shop")]
    number: i64,
    #[seq_display("{shop:08}-{number}")]
    code: String,
}

fn main() {}
