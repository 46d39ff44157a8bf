//! MongoDB's tutorial "Create an Auto-Incrementing Sequence Field", written by hand with
//! the driver, without seqid: the other writers the tests set beside seqid. Shared by
//! the tests and the worker processes (`tests/bin/worker.rs`, which also runs the
//! tutorial's optimistic loop).

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::ReturnDocument;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The tutorial's getNextSequence: `$inc: 1` on `counters.{ _id: name, seq }`, upserted.
pub async fn plain_increment(db: &mongodb::Database, name: &str) -> Result<i64, BoxError> {
    // SecantusDB 0.7.0b3 quirk: under concurrent use, a findAndModify upsert
    // with `new: true` sometimes answers `value: null` although it did apply the
    // `$inc` (MongoDB always returns the document). The value it took is then
    // unknown, and never used: this writer asks again, which leaves a gap in
    // the sequence but cannot create a duplicate, so the assertions on
    // distinct ids still hold. Bounded, so that a server that keeps answering
    // null fails the test.
    for _ in 0..10 {
        let counter = db
            .collection::<BsonDocument>("counters")
            .find_one_and_update(doc! { "_id": name }, doc! { "$inc": { "seq": 1 } })
            .upsert(true)
            .return_document(ReturnDocument::After)
            .await?;
        if let Some(counter) = counter {
            return match counter.get("seq") {
                Some(Bson::Int32(v)) => Ok((*v).into()),
                Some(Bson::Int64(v)) => Ok(*v),
                Some(Bson::Double(v)) if v.fract() == 0.0 => Ok(*v as i64),
                other => Err(format!("counter {name} holds {other:?}").into()),
            };
        }
    }
    Err(format!("the {name} upsert answered null ten times in a row").into())
}

/// The tutorial's counters, by hand: `count` documents `{ _id, writer }` inserted into
/// `collection` under ids from getNextSequence on counter `name`; returns the ids. A
/// duplicate key is an error: the counter hands each id out once.
pub async fn counter_loop(
    db: &mongodb::Database,
    name: &str,
    collection: &str,
    by: &str,
    count: u32,
) -> Result<Vec<i64>, BoxError> {
    by_hand(db, collection, by, count, false, false, || {
        plain_increment(db, name)
    })
    .await
}

/// `count` documents `{ _id, writer }` inserted into `collection` (with `n`, their
/// number, when `numbered`, as unique models hold it), each under the id `next` gives; on
/// a duplicate key, when `retry`, `next` is asked again (10,000 times at most).
pub async fn by_hand<F, Fut>(
    db: &mongodb::Database,
    collection: &str,
    by: &str,
    count: u32,
    retry: bool,
    numbered: bool,
    mut next: F,
) -> Result<Vec<i64>, BoxError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<i64, BoxError>>,
{
    let coll = db.collection::<BsonDocument>(collection);
    let mut ids = Vec::new();
    for n in 0..count {
        for tries in 1.. {
            let id = next().await?;
            let mut written = doc! { "_id": id, "writer": by };
            if numbered {
                written.insert("n", i64::from(n));
            }
            match coll.insert_one(written).await {
                Ok(_) => {
                    ids.push(id);
                    break;
                }
                Err(error) if retry && duplicate_key(&error) && tries < 10_000 => continue,
                Err(error) => return Err(format!("{by} #{n}, id {id}: {error}").into()),
            }
        }
    }
    Ok(ids)
}

/// Whether the driver's error is a duplicate key (11000).
pub fn duplicate_key(error: &mongodb::error::Error) -> bool {
    matches!(&*error.kind, ErrorKind::Write(WriteFailure::WriteError(e)) if e.code == 11000)
}
