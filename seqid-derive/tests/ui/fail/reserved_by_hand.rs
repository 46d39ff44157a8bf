// A reserved id is seqid's to hand out, and inserts one document once: a token cannot be
// made by hand, read from a request (no `Deserialize`), or copied (no `Clone`).
use seqid::{Document, Reserved};

#[derive(serde::Serialize, Document)]
#[seq_id("order", collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
}

fn forged() -> Reserved<Order> {
    Reserved { id: 7 }
}

fn from_a_request(body: mongodb::bson::Bson) -> Reserved<Order> {
    mongodb::bson::from_bson(body).unwrap()
}

fn twice(token: Reserved<Order>) -> (Reserved<Order>, Reserved<Order>) {
    (token.clone(), token)
}

fn main() {}
