// An ObjectId `_id` written by its full path, not in an `Option`, with a defaulted
// collection and other keys: the hint names the default collection, and leaves the keys
// to move with the name.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("invoice", strategy = "block", block_size = 50)]
struct BlogInvoice {
    _id: mongodb::bson::oid::ObjectId,
}

fn main() {}
