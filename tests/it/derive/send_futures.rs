//! The futures of the provided methods are Send for a derived type. Checked at compile
//! time only: nothing here runs against a database.
use seqid::Document;
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("userid", collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn assert_send<T: Send>(_: T) {}

#[allow(dead_code)]
fn futures_are_send(db: &mongodb::Database, user: &mut User, users: &mut [User]) {
    assert_send(user.insert(db));
    assert_send(User::insert_many(users, db));
}

#[test]
fn send_futures_is_accepted() {
    let _ = User { id: 0 }.id;
}
