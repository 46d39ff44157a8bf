// The mark is `i32`, `i64`, `u32`, `u64` or an `Option` of one: another integer is refused
// with what is wrong with it (too narrow, too wide, the platform's width), not as "not an
// integer".
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    no: i64,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("order", collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "lines_last")]
    lines: Vec<Line>,
    lines_last: u8,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("basket", collection = "baskets")]
struct Basket {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "lines_last")]
    lines: Vec<Line>,
    lines_last: Option<u16>,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("cart", collection = "carts")]
struct Cart {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "lines_last")]
    lines: Vec<Line>,
    lines_last: usize,
}

#[derive(Serialize, Deserialize, seqid::Document)]
#[seq_id("list", collection = "lists")]
struct List {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "lines_last")]
    lines: Vec<Line>,
    lines_last: i128,
}

fn main() {}
