// The optimistic loop keeps no counter: layout, counters, step and the counter_* keys
// are refused.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(
    "tickets",
    strategy = "optimistic",
    layout = "go",
    counters = "counters",
    step = 2,
    counter_value = "n"
)]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
