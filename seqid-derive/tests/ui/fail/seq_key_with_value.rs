// #[seq_key] takes no value.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("customer", collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_key = "email"]
    email: String,
}

fn main() {}
