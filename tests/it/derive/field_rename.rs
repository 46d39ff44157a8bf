//! The constant holds the keys serde writes: `rename` and `rename_all` apply to the
//! sequence field and to the scope fields, which `scope` names by their Rust names.
use seqid::{Document, Model};
use serde::Serialize;

#[derive(Serialize, Document)]
#[serde(rename_all = "camelCase")]
#[seq_id(collection = "work_orders")]
struct WorkOrder {
    site_code: String,
    #[serde(rename = "dept")]
    department: String,
    #[seq_id("workorder", scope = ["department", "site_code"])]
    order_number: i64,
}

#[derive(Serialize, Document)]
struct Entry {
    #[serde(rename(serialize = "ledgerId", deserialize = "ledger"))]
    ledger: String,
    #[serde(rename = "seq")]
    #[seq_id("entry", scope = "ledger")]
    sequence: Option<u32>,
}

#[test]
fn field_rename_is_accepted() {
    assert_eq!(WorkOrder::SEQUENCE.field, "orderNumber");
    assert_eq!(WorkOrder::SEQUENCE.scope, &["dept", "siteCode"]);
    assert_eq!(WorkOrder::SEQUENCE.collection, "work_orders");
    assert_eq!(Entry::SEQUENCE.field, "seq");
    assert_eq!(Entry::SEQUENCE.scope, &["ledgerId"]);
    assert_eq!(Entry::SEQUENCE.collection, "entry");
    let order = WorkOrder {
        site_code: String::new(),
        department: String::new(),
        order_number: 1,
    };
    assert_eq!(*order.sequence_id(), 1);
    let _ = (order.site_code, order.department);
    let entry = Entry {
        ledger: String::new(),
        sequence: None,
    };
    assert_eq!(*entry.sequence_id(), None);
    let _ = entry.ledger;
}
