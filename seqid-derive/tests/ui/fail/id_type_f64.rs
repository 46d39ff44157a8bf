// A float id: one error, at the type.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    _id: f64,
}

fn main() {}
