// Two values: "majority" (the default) and "database".
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", counter_write_concern = "w1")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("orderid", strategy = "block", counter_write_concern = 1)]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
