// A &str id: one error, at the type.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    _id: &'static str,
}

fn main() {}
