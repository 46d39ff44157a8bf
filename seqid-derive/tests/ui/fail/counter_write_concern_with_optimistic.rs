// The optimistic strategy keeps no counter, and a gapless one writes it inside the
// caller's transaction: neither takes a counter write concern.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("ticket", strategy = "optimistic", counter_write_concern = "majority")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("invoice", counter_write_concern = "database", strategy = "gapless")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
