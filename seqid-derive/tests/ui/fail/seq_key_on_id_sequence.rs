// The struct's sequence fills `_id`: the insert takes that number.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("customer", collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    #[seq_key]
    id: i64,
    email: String,
}

fn main() {}
