// time_budget_ms must leave the first attempt some time.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "optimistic", time_budget_ms = 0)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
