//! Models of a sequence numbered later (`numbered = "later"`): drafts stored without a
//! number, numbered when they are issued, per year, with a display code; and issuers racing
//! to number the same drafts, shared by `tests/it/later.rs` and `faults::later`.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Bson, doc};
use seqid::error::ErrorKind;
use seqid::kind::NumberedLater;
use seqid::{Document, Error, Numbered};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::writers::Via;

/// A model numbered later.
pub trait Drafted:
    Document + NumberedLater + DeserializeOwned + Clone + PartialEq + Debug + Send + Sync + 'static
{
    /// A draft of `year`, made at `created`.
    fn draft(year: i32, created: i64) -> Self;

    fn id(&self) -> Option<ObjectId>;

    fn number(&self) -> Option<i64>;

    fn code(&self) -> &str;

    fn year(&self) -> i32;

    fn created(&self) -> i64;
}

/// `drafted!(Name, [seq_id of the number])`: `{ _id: ObjectId, year, number, code, status,
/// created }`, its code `D-<year>-<number:04>`.
macro_rules! drafted {
    ($name:ident, $collection:literal, [$($attr:tt)*]) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
        #[seq_id(collection = $collection)]
        pub struct $name {
            #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
            pub id: Option<ObjectId>,
            pub year: i32,
            #[seq_id($($attr)*)]
            pub number: Option<i64>,
            #[seq_display("D-{year}-{number:04}")]
            pub code: String,
            pub status: String,
            pub created: i64,
        }

        impl Drafted for $name {
            fn draft(year: i32, created: i64) -> Self {
                $name {
                    id: None,
                    year,
                    number: None,
                    code: String::new(),
                    status: "draft".into(),
                    created,
                }
            }

            fn id(&self) -> Option<ObjectId> {
                self.id
            }

            fn number(&self) -> Option<i64> {
                self.number
            }

            fn code(&self) -> &str {
                &self.code
            }

            fn year(&self) -> i32 {
                self.year
            }

            fn created(&self) -> i64 {
                self.created
            }
        }
    };
}

drafted!(
    DraftCounted,
    "drafts_counted",
    ["draft_counted", scope = "year", numbered = "later"]
);
drafted!(
    DraftBlock,
    "drafts_block",
    [
        "draft_block",
        scope = "year",
        strategy = "block",
        block_size = 10,
        numbered = "later"
    ]
);
// Gapless on a counter found by fields (mongoose-sequence's layout, which seqid makes
// before its first `$inc`, as the tool's upsert would not): `tests/it/later.rs`.
drafted!(
    DraftGaplessTool,
    "drafts_gapless_tool",
    [
        "draft_gapless_tool",
        scope = "year",
        strategy = "gapless",
        numbered = "later",
        layout = "mongoose-sequence"
    ]
);
drafted!(
    DraftGapless,
    "drafts_gapless",
    [
        "draft_gapless",
        scope = "year",
        strategy = "gapless",
        numbered = "later"
    ]
);

/// Stores `count` drafts of `year` (made at `0..count` after `from`) with the driver, and
/// returns their `_id`s in that order.
pub async fn store_drafts<T: Drafted>(
    db: &mongodb::Database,
    year: i32,
    from: i64,
    count: i64,
) -> Vec<ObjectId> {
    let drafts: Vec<T> = (from..from + count).map(|at| T::draft(year, at)).collect();
    let inserted = T::collection(db).insert_many(&drafts).await.unwrap();
    (0..drafts.len())
        .map(|at| match &inserted.inserted_ids[&at] {
            Bson::ObjectId(id) => *id,
            other => panic!("an ObjectId _id, got {other}"),
        })
        .collect()
}

/// `number_draft` of the draft `id` through `via`, made again while its outcome is
/// unknown (or nothing was sent, during an outage): the call reads the draft first, so
/// that it never numbers it twice.
pub async fn issue<T: Drafted>(via: &Via, id: ObjectId) -> Result<(Numbered<T>, u32), Error> {
    let mut again = 0;
    loop {
        let call = match via {
            Via::Handle(db) => T::number_draft(db, doc! { "_id": id }).await,
            Via::Bare(db) => T::number_draft(db, doc! { "_id": id }).await,
        };
        match call {
            Err(error)
                if matches!(
                    error.kind(),
                    ErrorKind::OutcomeUnknown { .. } | ErrorKind::Driver { .. }
                ) && again < 200 =>
            {
                again += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other.map(|numbered| (numbered, again)),
        }
    }
}

/// What an issuer was told for a draft.
#[derive(Clone, Debug)]
pub struct Issued<T> {
    pub draft: ObjectId,
    pub issuer: usize,
    pub numbered: Numbered<T>,
}

/// `issuers` tasks number every draft of `drafts` at once (they wait for one another before
/// each). Returns every answer, and how many calls were made again.
pub async fn race_issuers<T: Drafted>(
    via: &Via,
    drafts: &[ObjectId],
    issuers: usize,
) -> (Vec<Issued<T>>, u32) {
    let barrier = Arc::new(tokio::sync::Barrier::new(issuers));
    let handles: Vec<_> = (0..issuers)
        .map(|issuer| {
            let (via, barrier, drafts) = (via.clone(), barrier.clone(), drafts.to_vec());
            tokio::spawn(async move {
                let mut answers = Vec::new();
                let mut again = 0;
                for draft in drafts {
                    barrier.wait().await;
                    let (numbered, made) = issue::<T>(&via, draft)
                        .await
                        .unwrap_or_else(|e| panic!("issuer {issuer}, draft {draft}: {e}"));
                    again += made;
                    answers.push(Issued {
                        draft,
                        issuer,
                        numbered,
                    });
                }
                (answers, again)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut again = 0;
    for (answers, made) in super::writers::joined(handles, "the issuers").await {
        all.extend(answers);
        again += made;
    }
    (all, again)
}

/// Every document of `T`'s collection, by `_id`.
pub async fn stored_drafts<T: Drafted>(
    db: &mongodb::Database,
) -> std::collections::BTreeMap<ObjectId, T> {
    // The cursor by hand: the worker processes build without `futures-util`.
    let mut cursor = T::collection(db).find(doc! {}).await.unwrap();
    let mut stored = std::collections::BTreeMap::new();
    while cursor.advance().await.unwrap() {
        let doc: T = cursor.deserialize_current().unwrap();
        stored.insert(doc.id().expect("an _id"), doc);
    }
    stored
}

/// What racing issuers left, checked answer by answer: every draft raced for has exactly
/// one number and its code; every issuer holds the stored document; at most one issuer per
/// draft was told it gave the number, and exactly one where no call was made again (a call
/// made again after a lost answer finds the draft numbered, by itself or another: it says
/// `by_this_call` only where it reads its own number back). Numbers are unique per year.
pub async fn check_issued<T: Drafted>(
    db: &mongodb::Database,
    answers: &[Issued<T>],
    drafts: &[ObjectId],
    again: u32,
    label: &str,
) -> std::collections::BTreeMap<ObjectId, T> {
    use std::collections::{BTreeMap, BTreeSet};
    let stored = stored_drafts::<T>(db).await;
    let mut per_year: BTreeMap<i32, BTreeSet<i64>> = BTreeMap::new();
    for draft in drafts {
        let doc = &stored[draft];
        let number = doc
            .number()
            .unwrap_or_else(|| panic!("{label}: draft {draft} not numbered"));
        assert_eq!(
            doc.code(),
            format!("D-{}-{number:04}", doc.year()),
            "{label}: the code shows the number"
        );
        assert!(
            per_year.entry(doc.year()).or_default().insert(number),
            "{label}: number {number} twice in {}",
            doc.year()
        );
        let told: Vec<&Issued<T>> = answers.iter().filter(|a| a.draft == *draft).collect();
        for answer in &told {
            assert_eq!(
                &answer.numbered.doc, doc,
                "{label}: issuer {} holds the stored draft",
                answer.issuer
            );
        }
        let gave = told.iter().filter(|a| a.numbered.by_this_call).count();
        assert!(
            gave <= 1,
            "{label}: draft {draft} numbered by {gave} issuers"
        );
        if again == 0 {
            assert_eq!(gave, 1, "{label}: draft {draft} numbered by no issuer");
        }
    }
    stored
}

/// Every draft's `_id` in `T`'s collection, in the order they were made.
pub async fn draft_ids<T: Drafted>(db: &mongodb::Database) -> Vec<ObjectId> {
    let mut drafts: Vec<T> = stored_drafts::<T>(db).await.into_values().collect();
    drafts.sort_by_key(Drafted::created);
    drafts.iter().filter_map(Drafted::id).collect()
}

/// An answer as a worker prints it: `issued <draft> <true|false> <the document's BSON, in
/// hex>`.
// Used by the worker processes only.
#[allow(dead_code)]
pub fn print<T: Drafted>(answer: &Issued<T>) -> String {
    let bytes = mongodb::bson::to_vec(&answer.numbered.doc).expect("a model serializes");
    let hex = super::writers::to_hex(&bytes);
    format!(
        "issued {} {} {hex}",
        answer.draft.to_hex(),
        answer.numbered.by_this_call
    )
}

/// A line [`print()`] wrote, read back (issuer `issuer`).
pub fn parse<T: Drafted>(line: &str, issuer: usize) -> Option<Issued<T>> {
    let mut parts = line.strip_prefix("issued ")?.splitn(3, ' ');
    let draft = ObjectId::parse_str(parts.next()?).ok()?;
    let by_this_call = parts.next()?.parse().ok()?;
    let hex = parts.next()?;
    let bytes = super::writers::from_hex(hex)?;
    let doc = mongodb::bson::from_slice(&bytes).ok()?;
    Some(Issued {
        draft,
        issuer,
        numbered: Numbered { doc, by_this_call },
    })
}

/// `T::create_indexes`, where the server has partial indexes. nx-27017 0.8.1 makes a partial
/// index a whole one (drafts, which hold no number and an empty code, then collide): there,
/// after checking that it still does, the drafts' indexes are not made, and this says so.
/// seqid needs neither index to number drafts (the counter hands each number out once);
/// MongoDB and SecantusDB keep the partial ones.
pub async fn create_indexes<T: seqid::Document>(db: &mongodb::Database) {
    if seqid_harness::server_flavor().unwrap() == seqid_harness::ServerFlavor::Nx {
        let probe = db.collection::<mongodb::bson::Document>("partial_probe");
        let partial = mongodb::IndexModel::builder()
            .keys(doc! { "code": 1 })
            .options(
                mongodb::options::IndexOptions::builder()
                    .unique(true)
                    .partial_filter_expression(doc! { "code": { "$gt": "" } })
                    .build(),
            )
            .build();
        probe.create_index(partial).await.unwrap();
        let two = [doc! { "code": "" }, doc! { "code": "" }];
        let whole = probe.insert_many(two).await.is_err();
        probe.drop().await.unwrap();
        assert!(
            whole,
            "nx-27017 now keeps partial indexes: make the drafts' indexes on it"
        );
        eprintln!("nx-27017 makes partial indexes whole ones: drafts' indexes not made");
        return;
    }
    T::create_indexes(db).await.unwrap();
}
