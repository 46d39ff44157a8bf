// An Option of an unsupported type: one error, at the type.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    _id: Option<String>,
}

fn main() {}
