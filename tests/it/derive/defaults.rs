//! Only the name: collection from the struct name, default counters and strategy.
use seqid::{Document, Model, Strategy};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
#[seq_id("postid")]
struct BlogPost {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

#[test]
fn defaults_is_accepted() {
    let s = BlogPost::SEQUENCE;
    assert_eq!(s.name, "postid");
    assert_eq!(s.collection, "blog_post");
    assert_eq!(s.counters, seqid::Sequence::DEFAULT_COUNTERS);
    assert!(matches!(s.strategy, Strategy::Counters));
    assert_eq!(s.strategy_name(), "counters");

    let mut post = BlogPost {
        id: 7,
        title: "t".into(),
    };
    assert_eq!(*post.sequence_id(), 7);
    *post.sequence_id_mut() = 8;
    assert_eq!(post.id, 8);
    let _ = post.title;
}
