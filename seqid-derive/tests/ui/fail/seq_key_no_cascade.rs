// With a mistake in #[seq_key], the type still declares a natural key: `find_or_insert`
// elsewhere adds no error of its own.
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
#[seq_id("customer", collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_key(email)]
    email: String,
}

fn find(db: &mongodb::Database, customer: &mut Customer) {
    let _ = customer.find_or_insert(db);
}

fn main() {
    let _ = find;
}
