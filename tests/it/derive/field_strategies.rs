//! Every strategy, and every key of a sequence, on a field.
use seqid::layout::CounterWriteConcern;
use seqid::{Document, Model, Strategy, kind};
use serde::Serialize;

#[derive(Serialize, Document)]
struct A {
    #[seq_id(
        "a",
        strategy = "counters",
        counters = "seqs",
        counter_write_concern = "database"
    )]
    number: i64,
}

#[derive(Serialize, Document)]
struct B {
    group: String,
    #[seq_id("b", strategy = "optimistic", max_attempts = 3, scope = "group")]
    number: i64,
}

#[derive(Serialize, Document)]
struct C {
    #[seq_id("c", strategy = "block", block_size = 50, start = 7)]
    number: i64,
}

#[derive(Serialize, Document)]
struct D {
    #[seq_id("d", strategy = "gapless")]
    number: i64,
}

fn counter_backed<T: Document<Kind: kind::WithCounter>>() {}

#[test]
fn field_strategies_is_accepted() {
    assert_eq!(A::SEQUENCE.counters, "seqs");
    assert!(matches!(A::SEQUENCE.strategy, Strategy::Counters));
    assert_eq!(
        A::SEQUENCE.counter_write_concern,
        CounterWriteConcern::Database
    );
    assert!(matches!(
        B::SEQUENCE.strategy,
        Strategy::Optimistic {
            max_attempts: Some(3),
            ..
        }
    ));
    assert_eq!(B::SEQUENCE.scope, &["group"]);
    assert!(matches!(
        C::SEQUENCE.strategy,
        Strategy::Block { block_size: 50, .. }
    ));
    assert_eq!(C::SEQUENCE.start, 7);
    assert!(matches!(D::SEQUENCE.strategy, Strategy::Gapless));
    for field in [
        A::SEQUENCE.field,
        B::SEQUENCE.field,
        C::SEQUENCE.field,
        D::SEQUENCE.field,
    ] {
        assert_eq!(field, "number");
    }

    let _: fn() = counter_backed::<A>;
    let _: fn() = counter_backed::<C>;
    let _: fn() = counter_backed::<D>;
    fn kind_of<T: Document<Kind = K>, K>() {}
    kind_of::<A, kind::Counters>();
    kind_of::<B, kind::Optimistic>();
    kind_of::<C, kind::Block>();
    kind_of::<D, kind::Gapless>();
    let _ = B {
        group: String::new(),
        number: 0,
    }
    .group;
}
