// #[seq_key] is a bare attribute: a compound key is several marked fields.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("customer", collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    tenant: String,
    #[seq_key(tenant, email)]
    email: String,
}

fn main() {}
