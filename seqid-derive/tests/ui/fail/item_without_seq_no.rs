// An item needs a number field marked #[seq_no].
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    no: i64,
    sku: String,
}

fn main() {}
