// `find_or_insert` on a type that declares no natural key: one error at the call, in
// seqid's words, saying how to declare one (or name it per call); `.by(...)`
// needs none.
use seqid::Document;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
#[seq_id("customer", collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    email: String,
}

async fn run(db: &mongodb::Database) -> Result<(), seqid::Error> {
    let mut customer = Customer { id: 0, email: "ada@example.com".into() };
    customer.find_or_insert(db).await?;
    customer.find_or_insert(db).by(&["email"]).await?;
    Ok(())
}

fn main() {
    let _ = run;
}
