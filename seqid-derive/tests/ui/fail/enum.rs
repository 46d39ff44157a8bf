// An enum has no named fields to hold the id.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
enum User {
    Admin { _id: i64 },
    Guest { _id: i64 },
}

fn main() {}
