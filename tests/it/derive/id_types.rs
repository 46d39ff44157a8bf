//! Every supported id type, with Self::Id equal to the field type.
use seqid::{Document, IdField, Model};
use serde::Serialize;

macro_rules! doc {
    ($name:ident, $ty:ty) => {
        #[derive(Serialize, Document)]
        #[seq_id("seq")]
        struct $name {
            #[serde(rename = "_id")]
            id: $ty,
        }
    };
}

doc!(I32, i32);
doc!(I64, i64);
doc!(U32, u32);
doc!(U64, u64);
doc!(OptI32, Option<i32>);
doc!(OptI64, Option<i64>);
doc!(OptU32, Option<u32>);
doc!(OptU64, Option<u64>);

fn same<T>(_: &T, _: &T) {}

fn check<D: Document>(doc: &D, unset: D::Id) {
    same(doc.sequence_id(), &unset);
    assert!(doc.sequence_id().is_unset());
}

#[test]
fn id_types_is_accepted() {
    check(&I32 { id: 0 }, 0_i32);
    check(&I64 { id: 0 }, 0_i64);
    check(&U32 { id: 0 }, 0_u32);
    check(&U64 { id: 0 }, 0_u64);
    check(&OptI32 { id: None }, None::<i32>);
    check(&OptI64 { id: None }, None::<i64>);
    check(&OptU32 { id: None }, None::<u32>);
    check(&OptU64 { id: None }, None::<u64>);

    let value: <<OptU32 as Model>::Id as IdField>::Value = 5_u32;
    assert_eq!(value, 5);
    assert_eq!(U64::SEQUENCE.collection, "u64");
    assert_eq!(OptI64::SEQUENCE.collection, "opt_i64");
}
