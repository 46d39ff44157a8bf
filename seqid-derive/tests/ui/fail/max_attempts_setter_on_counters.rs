// `.max_attempts(n)` tunes the optimistic loop: an insert of any other strategy does not
// offer it.
use seqid::Document;
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

async fn insert(db: &mongodb::Database) {
    let _ = User { id: 0 }.insert(db).max_attempts(3).await;
}

fn main() {
    let _ = insert;
}
