// `.time_budget(..)` bounds the optimistic loop: an insert of any other strategy does not
// offer it.
use seqid::Document;
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("userid", strategy = "block")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

async fn run(db: &mongodb::Database) {
    let _ = User { id: 0 }
        .insert(db)
        .time_budget(std::time::Duration::from_secs(1))
        .await;
}

fn main() {}
