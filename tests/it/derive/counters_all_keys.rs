//! Every key the counters strategy accepts, given explicitly.
use seqid::{Document, Model, Strategy};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
#[seq_id(
    "userid",
    collection = "users",
    counters = "my_counters",
    strategy = "counters"
)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[test]
fn counters_all_keys_is_accepted() {
    let s = User::SEQUENCE;
    assert_eq!(s.name, "userid");
    assert_eq!(s.collection, "users");
    assert_eq!(s.counters, "my_counters");
    assert!(matches!(s.strategy, Strategy::Counters));
    let _ = User {
        id: 0,
        name: String::new(),
    }
    .name;
}
