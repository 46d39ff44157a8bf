// serde's rename_all turns `_id` into `id`: the error points at the field.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[serde(rename_all = "camelCase")]
#[seq_id("userid")]
struct User {
    _id: i64,
    user_name: String,
}

fn main() {}
