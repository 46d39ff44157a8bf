// #[seq_no] goes once on its field.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, seqid::Item)]
struct Line {
    #[seq_no]
    #[seq_no]
    no: i64,
}

fn main() {}
