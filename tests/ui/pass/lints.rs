// The generated code raises no warning, even on a deprecated type under strict lints.
#![deny(warnings, deprecated, unused_qualifications, unused_attributes)]
#![deny(non_upper_case_globals, missing_docs, unreachable_pub)]
//! A crate that documents everything.

use serde::Serialize;

/// A deprecated document.
#[deprecated = "use Account"]
#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
pub struct User {
    #[serde(rename = "_id")]
    id: i64,
}

/// A generic document.
#[derive(Serialize, seqid::Document)]
#[seq_id("accountid", strategy = "block")]
pub struct Account<'a, T: Serialize + Send + Sync> {
    _id: u64,
    name: &'a str,
    extra: T,
}

#[allow(deprecated)]
fn main() {
    use seqid::Model;
    let user = User { id: 1 };
    assert_eq!(*user.sequence_id(), 1);
    let account = Account {
        _id: 2,
        name: "a",
        extra: (),
    };
    assert_eq!(*account.sequence_id(), 2);
    let _ = (account.name, account.extra);
}
