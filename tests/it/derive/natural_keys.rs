//! `#[seq_key]`: the natural key's fields as serde writes them (`rename`, `rename_all`), in
//! the order of the fields, compound, on a generic struct, and on an `_id` the caller sets
//! beside a sequence on another field; a struct without one has an empty key.
use seqid::kind::NaturalKeyed;
use seqid::{Document, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Document)]
#[serde(rename_all = "camelCase")]
#[seq_id("member", collection = "members")]
struct Member<T: Serialize + Send + Sync> {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_key]
    tenant_id: u32,
    extra: T,
    #[seq_key]
    #[serde(rename = "mail")]
    email: String,
}

#[derive(Serialize, Deserialize, Document)]
#[seq_id(collection = "accounts")]
struct Account {
    #[serde(rename = "_id")]
    #[seq_key]
    login: String,
    #[seq_id("account_number")]
    number: i64,
}

#[derive(Serialize, Deserialize, Document)]
#[seq_id("plain", collection = "plain")]
struct Plain {
    #[serde(rename = "_id")]
    id: i64,
}

fn keyed<T: Model + NaturalKeyed>() -> &'static [&'static str] {
    T::NATURAL_KEY
}

// Not `Deserialize`: `find_or_insert` would refuse it at the call, but it declares a key.
fn key_of<T: Model>() -> &'static [&'static str] {
    T::NATURAL_KEY
}

#[test]
fn natural_keys_are_the_serialized_names_in_field_order() {
    assert_eq!(keyed::<Member<bool>>(), ["tenantId", "mail"]);
    assert_eq!(key_of::<Member<bool>>(), ["tenantId", "mail"]);
    assert_eq!(keyed::<Account>(), ["_id"]);
    assert!(Plain::NATURAL_KEY.is_empty());
    let _ = Member {
        id: 0,
        tenant_id: 1,
        extra: (),
        email: String::new(),
    };
    let _ = Account {
        login: String::new(),
        number: 0,
    };
}
