// An item is a struct with named fields.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
enum Line {
    A { no: i64 },
}

fn main() {}
