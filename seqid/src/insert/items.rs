//! Appending items to a stored document's array (`append_<field>`), in the call's
//! context: the items checked unset and serialized, the filter read down to its one
//! document unless it names `_id` by equality (a filter matching several is refused:
//! [`ErrorKind::ItemsAmbiguous`]), the append's rounds ([`crate::items::rounds`]: one
//! pipeline update, or a read and a conditional update, again on a lost race), and the
//! numbers it got written back into the caller's items.
//!
//! Outside a transaction the append is [`Finishing`]: a caller that goes away leaves it to
//! end in a task of its own, so that it lands once or not at all, never half. Its answer
//! lost (also after the driver's retry), the document is read: the append's token among its
//! recent appends says it landed, and with which numbers; else the outcome is unknown
//! ([`ErrorKind::ItemsOutcomeUnknown`], with the token: the same append sent again with it lands
//! at most once). In the caller's transaction, an error is the transaction's.

use mongodb::bson::{Document as BsonDocument, doc, oid::ObjectId};

use crate::base::detach::Finishing;
use crate::base::error::{Error, ErrorKind};
use crate::call::context::Context;
use crate::items::commands::{self, Append, Only};
use crate::items::rounds::Rounds;
use crate::schema::id::IdField;
use crate::schema::item::{Item, ItemsField, Unnumberable, numbers_after};

/// Appends `items` to the array `spec` of the one document `filter` finds, in the call's
/// context; numbers them in place; returns their numbers.
pub(crate) async fn append<I: Item>(
    spec: &'static ItemsField,
    filter: BsonDocument,
    items: &mut [I],
    token: Option<ObjectId>,
    cx: &mut Context<'_>,
) -> Result<Vec<i64>, Error> {
    let seq = cx.seq;
    let mut rounds = Rounds {
        seq,
        append: Append {
            spec,
            filter: BsonDocument::new(),
            items: Vec::new(),
            // `ObjectId::default()` is a new one.
            token: token.unwrap_or_default(),
        },
        db: cx.route.db.clone(),
        known: cx.route.known().clone(),
        budget: cx.budget,
        shown: filter.to_string(),
    };
    for (position, item) in items.iter().enumerate() {
        if let Some(value) = item.item_no().get() {
            let value = value.into();
            return Err(rounds.unnumberable(Unnumberable::Set { position, value }));
        }
    }
    rounds.append.items = items
        .iter()
        .map(mongodb::bson::to_document)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            Error::new(
                seq,
                ErrorKind::InvalidOption {
                    option: "items",
                    value: error.to_string().into(),
                    reason: "each item must serialize as a document".into(),
                },
            )
        })?;
    // A filter that may match several documents is read down to one first (nothing is
    // written yet), except on the conditional way, whose own read tells.
    rounds.append.filter = match commands::names_one(&filter) || !rounds.pipelines() {
        true => filter,
        false => {
            let coll = rounds.collection();
            match commands::only(&coll, &filter, cx.session.join()).await {
                Ok(Only::One(id)) => doc! { "$and": [filter, { "_id": id }] },
                Ok(Only::None) => return Err(rounds.not_found()),
                Ok(Only::Several) => {
                    let counted = commands::count(&coll, &filter, cx.session.join()).await;
                    return Err(rounds.several(counted.ok()));
                }
                Err(error) => return Err(rounds.driver(error)),
            }
        }
    };
    let in_transaction = cx.session.in_transaction();
    let mark = match cx.session.join() {
        // In the caller's transaction: nothing is read on an error, which aborted it.
        Some(session) if in_transaction => rounds.run(Some(session), true).await?,
        Some(session) => {
            let ended = rounds.run(Some(session), false).await;
            rounds.settle(ended).await?
        }
        // The append goes to the task and comes back with its end: its items are not
        // copied for it.
        None => {
            Finishing::new(async move {
                let ended = rounds.run(None, false).await;
                rounds.settle(ended).await
            })
            .await?
        }
    };
    let unnumberable = |why| crate::fields::items::unnumberable(seq, spec, why);
    let step = spec.number.step;
    let n = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let base = mark.saturating_sub(n.saturating_mul(step));
    let numbers = numbers_after(&spec.number, base, items.len()).map_err(unnumberable)?;
    for (position, (item, &number)) in items.iter_mut().zip(&numbers).enumerate() {
        match I::No::from_seq(number).filter(|no| !no.is_unset()) {
            Some(no) => *item.item_no_mut() = no,
            None => {
                let value = number.into();
                return Err(unnumberable(Unnumberable::Overflow { position, value }));
            }
        }
    }
    Ok(numbers)
}
