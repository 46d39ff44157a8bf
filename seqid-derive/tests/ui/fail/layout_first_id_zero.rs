// A first id of 0 needs an Option field: 0 in a plain integer means "unset".
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("Book", layout = "mongoose-auto-increment")]
struct Book {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "orders")]
struct Order {
    #[seq_id("order", start = 0)]
    number: u32,
}

fn main() {}
