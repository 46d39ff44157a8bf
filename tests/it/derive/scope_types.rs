//! Each sequence's scope as a type (issue 47): what `.scope(...)` takes, from the scope
//! fields' Rust types; what the derive cannot read the type of is checked at run time.
use std::any::TypeId;

use mongodb::bson::{Bson, bson, oid::ObjectId};
use seqid::scoped::{Fields, Names, Null, Unchecked, Unscoped};
use seqid::{Document, Model};
use serde::{Deserialize, Serialize};

fn same<A: 'static, B: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<B>()
}

/// The values `value` names as `S`'s: `.scope(value)` compiles only where this does.
fn values<S>(value: impl Names<S>) -> Result<Bson, String> {
    value.scope_values()
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Region {
    North,
}

mod year_as_text {
    pub fn serialize<S: serde::Serializer>(year: &i32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&year.to_string())
    }
}

#[derive(Serialize, Document)]
#[seq_id(collection = "orders")]
struct Order {
    shop: String,
    region: Region,
    owner: Option<ObjectId>,
    year: u16,
    #[seq_id("order", scope = ["shop", "region", "owner", "year"])]
    number: i64,
}

#[derive(Serialize, Document)]
#[seq_id(collection = "reports")]
struct Report {
    #[serde(serialize_with = "year_as_text::serialize")]
    year: i32,
    #[seq_id("report", scope = "year")]
    number: i64,
}

#[derive(Serialize, Document)]
#[seq_id("page", collection = "pages")]
struct Page {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, Document)]
#[seq_id(collection = "entries")]
struct Entry<T: Serialize + Send + Sync> {
    ledger: T,
    #[seq_id("entry", scope = "ledger")]
    number: i64,
}

#[test]
fn the_scope_type_is_the_scope_fields_types() {
    assert!(same::<
        <Order as Model>::Scope,
        Fields<(String, Region, Option<ObjectId>, u16)>,
    >());
    assert!(same::<<Page as Model>::Scope, Unscoped>());
    // Written by other code: its Rust type does not say what is stored.
    assert!(same::<<Report as Model>::Scope, Unchecked>());
    assert_eq!(Report::SEQUENCE.scope_types, [""]);
    assert!(same::<<Entry<u32> as Model>::Scope, Fields<(u32,)>>());
    assert_eq!(
        Order::SEQUENCE.scope_types,
        ["String", "Region", "Option<ObjectId>", "u16"]
    );
}

#[test]
fn a_scope_takes_values_of_its_fields_types() {
    type OrderScope = <Order as Model>::Scope;
    let owner = ObjectId::parse_str("65a1b2c3d4e5f60718293a4b").unwrap();
    let shop = String::from("north-1");
    assert_eq!(
        values::<OrderScope>(("north-1", Region::North, owner, 2026)),
        Ok(bson!(["north-1", "north", owner, 2026_i32]))
    );
    // A `&String`, `None`, `Null`, and an i64 that fits the u16.
    assert_eq!(
        values::<OrderScope>((&shop, &Region::North, None, 2026_i64)),
        Ok(bson!(["north-1", "north", null, 2026_i32]))
    );
    assert_eq!(
        values::<OrderScope>((Null, Region::North, Null, Null)),
        Ok(bson!([null, "north", null, null]))
    );
    // An integer that does not fit the field's type: refused when the call runs.
    let error = values::<OrderScope>(("north-1", Region::North, owner, 70_000)).unwrap_err();
    assert_eq!(error, "70000 does not fit the scope field's type u16");
    assert_eq!(
        values::<<Entry<u32> as Model>::Scope>(7_u8),
        Ok(Bson::Int64(7))
    );
    assert_eq!(values::<Unchecked>("2026"), Ok(Bson::String("2026".into())));
}
