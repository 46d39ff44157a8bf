// time_budget_ms bounds the optimistic loop; the counters strategy has no loop.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", time_budget_ms = 2000)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
