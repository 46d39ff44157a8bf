// The key is looked up by the value stored under the field's key.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("customer", collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_key]
    #[serde(skip_serializing)]
    email: String,
}

fn main() {}
