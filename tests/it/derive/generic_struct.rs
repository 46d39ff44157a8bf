//! Generics, lifetimes and where clauses pass through to the impl.
use seqid::{Document, IdField, Model};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("pageid", collection = "pages")]
struct Page<'a, T>
where
    T: Serialize + Send + Sync,
{
    #[serde(rename = "_id")]
    id: i64,
    items: Vec<T>,
    title: &'a str,
}

// The id type itself may be a parameter.
#[derive(Serialize, Document)]
#[seq_id("anyid")]
struct AnyId<I: IdField + Serialize> {
    _id: I,
}

fn sequence_of<D: Document>(_: &D) -> seqid::Sequence {
    D::SEQUENCE
}

#[test]
fn generic_struct_is_accepted() {
    let page = Page {
        id: 9,
        items: vec![1_u8],
        title: "home",
    };
    assert_eq!(*page.sequence_id(), 9);
    assert_eq!(sequence_of(&page).collection, "pages");
    let _ = (page.items, page.title);

    let any = AnyId { _id: Some(3_u32) };
    assert_eq!(*any.sequence_id(), Some(3));
    assert_eq!(AnyId::<i64>::SEQUENCE.collection, "any_id");
}
