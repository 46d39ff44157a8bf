// A tuple struct has no field that can be named `_id`.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User(i64, String);

fn main() {}
