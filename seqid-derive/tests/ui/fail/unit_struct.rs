// A unit struct has no fields at all.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User;

fn main() {}
