// A step of 0 would hand out one id forever.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("odd", step = 0)]
struct Odd {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
