#![deny(warnings, deprecated, unused_qualifications, unused_attributes)]
#![deny(non_upper_case_globals, missing_docs, unreachable_pub)]
//! The code the derive generates raises no warning, even on a deprecated type, in a crate
//! that denies warnings and strict lints at its root (a crate of its own: these lints
//! look at what a crate makes public).

use serde::Serialize;

/// A deprecated document.
#[deprecated = "use Account"]
#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
pub struct User {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_display("U{id}")]
    code: String,
}

/// A generic document.
#[derive(Serialize, seqid::Document)]
#[seq_id("accountid", strategy = "block")]
pub struct Account<'a, T: Serialize + Send + Sync> {
    _id: u64,
    name: &'a str,
    extra: T,
    #[seq_display("A-{_id:06}")]
    code: String,
}

/// A deprecated item.
#[deprecated = "use Entry"]
#[derive(Serialize, seqid::Item)]
pub struct Line {
    #[seq_no]
    no: i64,
}

/// A generic item.
#[derive(Serialize, seqid::Item)]
pub struct Entry<T: Serialize + Send + Sync> {
    #[seq_no(start = 0, step = 2)]
    no: Option<u32>,
    value: T,
}

/// A generic document with items.
#[derive(Serialize, seqid::Document)]
#[seq_id("orderid")]
pub struct Order<T: Serialize + Send + Sync> {
    _id: i64,
    #[seq_items(last = "last")]
    entries: Vec<Entry<T>>,
    last: i64,
}

#[test]
#[allow(deprecated)]
fn generated_code_raises_no_warning() {
    use seqid::Model;
    let user = User {
        id: 1,
        code: String::new(),
    };
    assert_eq!(*user.sequence_id(), 1);
    let account = Account {
        _id: 2,
        name: "a",
        extra: (),
        code: String::new(),
    };
    assert_eq!(*account.sequence_id(), 2);
    let mut code = String::new();
    account.write_code(0, &mut code).unwrap();
    assert_eq!(code, "A-000002");
    let _ = (account.name, account.extra, user.code);
    use seqid::Item;
    assert_eq!(Line::NUMBER.key, "no");
    let order = Order {
        _id: 1,
        entries: vec![Entry {
            no: Some(0),
            value: (),
        }],
        last: 0,
    };
    assert_eq!(Order::<()>::ITEMS[0].number.start, 0);
    assert_eq!(order.entries[0].item_no(), &Some(0));
    let _ = (order.last, &order.entries[0].value);
}
