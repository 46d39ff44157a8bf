// The optimistic strategy keeps no counter: `sync_counter` and the counter's other
// operations are refused for it with seqid's own words (no trait to import, none to
// implement), and so is code generic over the strategies that keep one.
use seqid::Document;
use seqid::kind::WithCounter;
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("ticket", strategy = "optimistic")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

async fn adopt(db: &mongodb::Database) {
    let _ = Ticket::sequence().sync_counter(db).await;
    let _ = Ticket::sequence().last_reserved(db).await;
}

fn sync_any<T: Document<Kind: WithCounter>>() {}

fn main() {
    let _ = adopt;
    sync_any::<Ticket>();
}
