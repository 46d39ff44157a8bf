// strategy = "optimistic", with and without max_attempts.
use seqid::{Document, Model, Strategy};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("ticket", strategy = "optimistic", max_attempts = 5)]
struct Ticket {
    _id: Option<i64>,
}

#[derive(Serialize, Document)]
#[seq_id("invoice", strategy = "optimistic")]
struct Invoice {
    _id: i64,
}

fn main() {
    assert!(matches!(
        Ticket::SEQUENCE.strategy,
        Strategy::Optimistic {
            max_attempts: 5,
            ..
        }
    ));
    assert_eq!(Ticket::SEQUENCE.collection, "ticket");
    assert_eq!(Ticket::SEQUENCE.strategy_name(), "optimistic");
    assert!(matches!(
        Invoice::SEQUENCE.strategy,
        Strategy::Optimistic { max_attempts, .. } if max_attempts == seqid::DEFAULT_MAX_ATTEMPTS
    ));
}
