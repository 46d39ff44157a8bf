//! Several scope fields: their keys in the declared order, not the fields' order; a raw
//! identifier is named without `r#`.
use seqid::{Document, Model};
use serde::Serialize;

#[derive(Serialize, Document)]
struct Invoice {
    year: i32,
    tenant: String,
    r#type: String,
    #[seq_id("invoice", scope = ["tenant", "year", "type"])]
    number: u64,
}

// One field in an array is the same as the string alone.
#[derive(Serialize, Document)]
struct Line {
    invoice: u64,
    #[seq_id("line", scope = ["invoice"])]
    position: u32,
}

#[test]
fn field_scope_several_is_accepted() {
    assert_eq!(Invoice::SEQUENCE.scope, &["tenant", "year", "type"]);
    assert_eq!(Invoice::SEQUENCE.field, "number");
    assert_eq!(Line::SEQUENCE.scope, &["invoice"]);
    assert_eq!(Line::SEQUENCE.field, "position");
    let invoice = Invoice {
        year: 2025,
        tenant: String::new(),
        r#type: String::new(),
        number: 4,
    };
    assert_eq!(*invoice.sequence_id(), 4);
    let _ = (invoice.year, invoice.tenant, invoice.r#type);
    let line = Line {
        invoice: 4,
        position: 2,
    };
    assert_eq!(*line.sequence_id(), 2);
    let _ = line.invoice;
}
