// `find_or_insert` reads the stored document back: a type that is not Deserialize gets
// seqid's message at the call, and none at its `.await`.
use seqid::Document;
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("customer", collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_key]
    email: String,
}

async fn run(db: &mongodb::Database) -> Result<(), seqid::Error> {
    let mut customer = Customer { id: 0, email: "ada@example.com".into() };
    customer.find_or_insert(db).await?;
    Ok(())
}

fn main() {
    let _ = run;
}
