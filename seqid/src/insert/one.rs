//! One document: `insert` and `resume_insert`. The id comes from the strategy's source
//! (one id from a counter, or the optimistic loop's candidates, retried while another
//! writer takes them), is filled in, and the document is written once per id.

use std::sync::Arc;

use mongodb::bson::Document as BsonDocument;

use crate::base::error::Error;
use crate::base::fate::Fate;
use crate::base::future::BoxFuture;
use crate::call::context::Context;
use crate::call::pending::left_behind;
use crate::call::span::{self};
use crate::counter::reserved::ReservedId;
use crate::fields::code;
use crate::fields::companions::Companions;
use crate::fields::ids::{
    carried, ensure_companions_unset, ensure_unset, ensure_unset_or_reserved, fill,
    numbered_on_insert, unset,
};
use crate::fields::scope::{Key, Scope};
use crate::optimistic::frontier::InFlight;
use crate::round_trip::indexes;
use crate::round_trip::write;
use crate::schema::id::IdField;
use crate::schema::model::{IdValue, Model};
use crate::schema::sequence::Strategy;
use crate::source::optimistic::{self, Attempt};
use crate::source::others::{self, Wanted};
use crate::source::{self, counted};

/// `insert`: a new id for `doc`, whose id field is unset, and one write.
pub(crate) async fn one<T: Model>(doc: &mut T, cx: &mut Context<'_>) -> Result<IdValue<T>, Error> {
    numbered_on_insert::<T>("insert")?;
    ensure_unset(doc)?;
    let scope = Scope::of(cx.seq, doc)?;
    let mut ids = Companions::fill(doc);
    cx.content_is_unique |= ids.made_content_unique();
    let result = fresh(ids.doc(), scope, cx).await;
    span::codes(std::slice::from_ref(ids.doc()));
    result
}

/// `insert` with an id reserved before (`Document::reserve_ids`): `doc`, whose id field is
/// unset or that id already, takes it, after the reservation's database, handle, scope and
/// transaction are checked against the document's and the call's (a gapless id's with a read of the
/// counter in the caller's transaction); no id of the primary sequence is taken
/// (the others' are, as for any insert), and the write and what it answers are any
/// insert's, a lost answer left to `resume_insert`.
pub(crate) async fn reserved<T: Model>(
    doc: &mut T,
    reserved: ReservedId,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    numbered_on_insert::<T>("insert")?;
    ensure_unset_or_reserved(doc, reserved.id)?;
    let scope = Scope::of(cx.seq, doc)?;
    reserved.admits(cx.seq, &cx.route.origin(), &scope, &cx.session)?;
    // A gapless id: still this transaction's, the counter read in it says.
    counted::still_reserved(&reserved, cx).await?;
    let mut ids = Companions::fill(doc);
    cx.content_is_unique |= ids.made_content_unique();
    let result = with_reserved(ids.doc(), scope, reserved.id, cx).await;
    span::codes(std::slice::from_ref(ids.doc()));
    result
}

/// Inserts `doc` under `id`, reserved for it before (a first send).
async fn with_reserved<T: Model>(
    doc: &mut T,
    scope: Scope,
    id: i64,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    code::check(doc)?;
    if !T::OTHERS.is_empty() {
        Box::pin(fill_others(doc, cx)).await?;
    }
    let value = fill(doc, id)?;
    let key = Key { scope, id };
    let fate = write::insert_one(doc, &key, cx.first(), (), cx).await;
    conclude(doc, id, value, fate)
}

/// Inserts a document whose id field is unset under a new id (a first send).
pub(crate) async fn fresh<T: Model>(
    doc: &mut T,
    scope: Scope,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    // Before any id is taken: a value that would make a code ambiguous.
    code::check(doc)?;
    match cx.seq.strategy {
        // Boxed: the optimistic loop's state would otherwise make every counted insert's
        // as large as its own.
        Strategy::Optimistic { .. } => optimistic_one(doc, scope, cx).await,
        _ => counted_one(doc, scope, cx).await,
    }
}

/// One id from the counter of `scope`, filled in, and one write.
async fn counted_one<T: Model>(
    doc: &mut T,
    scope: Scope,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    let id = match T::OTHERS.is_empty() {
        true => counted::take_one(&scope, cx).await?,
        // Boxed: a document with several sequences costs a round trip per reservation.
        false => Box::pin(others::take_with_primary(doc, &scope, cx)).await?,
    };
    let value = fill(doc, id)?;
    let key = Key { scope, id };
    let fate = write::insert_one(doc, &key, cx.first(), (), cx).await;
    conclude(doc, id, value, fate)
}

/// The other sequences' ids of `doc` that are unset, reserved and filled in before the
/// optimistic loop's first attempt, and kept across its retries.
async fn fill_others<T: Model>(doc: &mut T, cx: &mut Context<'_>) -> Result<(), Error> {
    let wanted = Wanted::of(std::slice::from_ref(doc), &[0])?;
    if wanted.is_empty() {
        return Ok(());
    }
    let reserved = others::reserve_outside(cx.route, &wanted).await;
    others::finish(std::slice::from_mut(doc), &wanted, reserved, cx).await
}

/// The optimistic branch of [`fresh`], boxed apart (a box made inside `fresh` still
/// leaves room for the unboxed state in `fresh`'s own).
fn optimistic_one<'a, T: Model>(
    doc: &'a mut T,
    scope: Scope,
    cx: &'a mut Context<'_>,
) -> BoxFuture<'a, Result<IdValue<T>, Error>> {
    Box::pin(async move {
        indexes::require(cx.route, cx.seq, indexes::OPTIMISTIC).await?;
        if !T::OTHERS.is_empty() {
            fill_others(doc, cx).await?;
        }
        let max = cx.collection::<BsonDocument>();
        let mut filling = Filling { doc, value: None };
        let (id, fate) = optimistic::run(&scope, &max, &mut filling, cx).await?;
        let value = filling.value.expect("the loop writes at least once");
        conclude(filling.doc, id, value, fate)
    })
}

/// The answer for a single document written with `id`: a document known not to be
/// stored gets its id field unset; one of unknown fate keeps it.
fn conclude<T: Model>(
    doc: &mut T,
    id: i64,
    value: IdValue<T>,
    fate: Fate,
) -> Result<IdValue<T>, Error> {
    // A duplicate on another sequence's index is that sequence's number, read before
    // the ids are unset.
    let other = match &fate {
        Fate::Taken(rejection) | Fate::Refused(rejection) if rejection.is_duplicate_key() => {
            let index = rejection.index.as_deref();
            index.and_then(|index| others::on_index(doc, index))
        }
        _ => None,
    };
    if fate.unsets_the_id() {
        unset(doc);
    }
    let (seq, id) = other.unwrap_or((&T::SEQUENCE, id));
    fate.conclude(seq, id, value)
}

/// `resume_insert`: finishes an insert whose outcome was unknown.
pub(crate) async fn resume<T: Model>(
    doc: &mut T,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    numbered_on_insert::<T>("resume_insert")?;
    if doc.sequence_id().is_unset() {
        ensure_companions_unset(doc)?;
    }
    let mut ids = Companions::fill(doc);
    let result = resume_one(ids.doc(), cx).await;
    span::codes(std::slice::from_ref(ids.doc()));
    result
}

/// [`resume`], in its context.
pub(crate) async fn resume_one<T: Model>(
    doc: &mut T,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    let (seq, route) = (cx.seq, cx.route);
    let (keys, values) = carried(std::slice::from_ref(doc), &[0])?;
    let (Some(key), Some(&value)) = (keys.into_iter().next(), values.first()) else {
        let scope = Scope::of(seq, doc)?;
        return fresh(doc, scope, cx).await;
    };
    // The code its first send wrote, from the same ids and fields.
    code::fill(doc)?;
    indexes::require(route, seq, indexes::RESUME).await?;
    // The write of a cancelled insert through this handle says itself what became of it;
    // else the document is sent again.
    let (fate, sent) = match left_behind(route, &key, doc).await {
        Some(fate) => (fate, false),
        None => {
            let again = cx.again();
            (write::insert_one(doc, &key, again, (), cx).await, true)
        }
    };
    match fate {
        // Another writer's document held the id: as the insert itself would have. Sent
        // again, only where the caller asserted that equal content is its own: a different
        // document holds the id (see `write::classify`).
        Fate::Taken(_) if source::retakes_a_taken_id(seq) => {
            unset(doc);
            fresh(doc, key.scope, cx).await
        }
        // The id stays, so that this document is not stored a second time by mistake.
        Fate::Taken(rejection) if sent => Err(rejection.into_error(seq, key.id)),
        fate => conclude(doc, key.id, value, fate),
    }
}

/// The caller's document, filled with each candidate in turn.
struct Filling<'d, T: Model> {
    doc: &'d mut T,
    /// The id value of the last candidate filled in.
    value: Option<IdValue<T>>,
}

impl<T: Model> Attempt for Filling<'_, T> {
    async fn write(
        &mut self,
        key: &Key,
        guard: Arc<InFlight>,
        cx: &mut Context<'_>,
    ) -> Result<Fate, Error> {
        self.value = Some(fill(self.doc, key.id)?);
        let fate = write::insert_one(&*self.doc, key, cx.first(), guard, cx).await;
        if matches!(fate, Fate::Taken(_)) {
            unset(self.doc);
        }
        Ok(fate)
    }
}
