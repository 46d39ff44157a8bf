// `start` is the first id: an integer literal from 0 (0 only in an `Option` field) to i64::MAX.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("a", start = 0)]
struct A {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("b", start = -5)]
struct B {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("c", start = "1000")]
struct C {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("d", start = 9223372036854775808)]
struct D {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, seqid::Document)]
#[seq_id("e", start = 10u32)]
struct E {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
