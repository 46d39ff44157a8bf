//! strategy = "optimistic", with and without max_attempts and time_budget_ms.
use std::time::Duration;

use seqid::{Document, Model, Strategy};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id(
    "ticket",
    strategy = "optimistic",
    max_attempts = 5,
    time_budget_ms = 2500
)]
struct Ticket {
    _id: Option<i64>,
}

#[derive(Serialize, Document)]
#[seq_id("invoice", strategy = "optimistic")]
struct Invoice {
    _id: i64,
}

#[test]
fn optimistic_is_accepted() {
    assert!(matches!(
        Ticket::SEQUENCE.strategy,
        Strategy::Optimistic {
            max_attempts: Some(5),
            time_budget,
            ..
        } if time_budget == Duration::from_millis(2500)
    ));
    assert_eq!(Ticket::SEQUENCE.collection, "ticket");
    assert_eq!(Ticket::SEQUENCE.strategy_name(), "optimistic");
    assert!(matches!(
        Invoice::SEQUENCE.strategy,
        Strategy::Optimistic {
            max_attempts: None,
            time_budget,
            ..
        } if time_budget == seqid::Sequence::DEFAULT_TIME_BUDGET
    ));
}
