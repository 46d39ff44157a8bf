// #[seq_key] goes on the fields that identify a document.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("customer", collection = "customers")]
#[seq_key]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    email: String,
}

fn main() {}
