// A field is in the natural key once.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("customer", collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_key]
    #[seq_key]
    email: String,
}

fn main() {}
