// The optimistic strategy keeps no counter: no ids to reserve before the document.
use seqid::Document;

#[derive(serde::Serialize, Document)]
#[seq_id("ticket", strategy = "optimistic")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

async fn reserve(db: mongodb::Database) {
    let _ = Ticket::reserve_ids(&db, 3).await;
}

fn main() {}
