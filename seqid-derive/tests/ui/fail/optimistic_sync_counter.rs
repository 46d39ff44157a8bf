// The optimistic strategy keeps no counter: `sync_counter` and the counter's other
// operations are refused for it with seqid's own words (no trait to import, none to
// implement).
use seqid::{CounterBacked, Document};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("ticket", strategy = "optimistic")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

async fn adopt(db: &mongodb::Database) {
    let _ = Ticket::sync_counter(db).await;
    let _ = Ticket::last_reserved(db).await;
}

fn sync_any<T: CounterBacked>() {}

fn main() {
    let _ = adopt;
    sync_any::<Ticket>();
}
