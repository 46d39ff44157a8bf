//! No #[seq_id] on the struct: the collection is the struct name in snake_case. An
//! `Option<u32>` field, left out while unset (`skip_serializing_if`), and no `_id` field.
use seqid::{Document, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
struct SupportCase {
    customer: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[seq_id("case", scope = "customer")]
    case_number: Option<u32>,
}

#[test]
fn field_option_no_container_is_accepted() {
    let s = SupportCase::SEQUENCE;
    assert_eq!(s.collection, "support_case");
    assert_eq!(s.name, "case");
    assert_eq!(s.field, "case_number");
    assert_eq!(s.scope, &["customer"]);
    assert_eq!(s.start, seqid::Sequence::DEFAULT_START);

    let mut case = SupportCase {
        customer: "acme".into(),
        case_number: None,
    };
    let _: &Option<u32> = case.sequence_id();
    *case.sequence_id_mut() = Some(5);
    assert_eq!(case.case_number, Some(5));
    let _ = case.customer;
}
