use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("[\"ticket\",\"apollo\"]")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
