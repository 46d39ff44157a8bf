//! [`FindOrInsert`]: the document with a natural key, inserted with the next id only
//! when no document holds that key.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::find::Deserializable;
use super::future::InsertFuture;
use crate::base::error::Error;
use crate::call::context::Call;
use crate::call::registry::Route;
use crate::fields::natural::{Entry, NaturalKey};
use crate::insert::{natural, natural_many};
use crate::schema::kind::NaturalKeyed;
use crate::schema::model::Model;

/// The natural key a find-or-insert of a `T` finds by: the one the type declares (`()`, the
/// default, for a type that declares one), or the fields named for the call with
/// `.by(...)`. Not public: a [`FindOrInsert`] is a future by one impl bounded on it, whose
/// refusal then names what is missing ([`NaturalKeyed`]'s message, where an `IntoFuture`
/// bound would be reported as "not a future").
pub trait Key<T> {
    /// The fields named for the call; `None` for the type's own.
    #[doc(hidden)]
    fn named(self) -> Option<&'static [&'static str]>;
}

impl<T: Model + NaturalKeyed> Key<T> for () {
    fn named(self) -> Option<&'static [&'static str]> {
        None
    }
}

impl<T: Model> Key<T> for &'static [&'static str] {
    fn named(self) -> Option<&'static [&'static str]> {
        Some(self)
    }
}

/// The key `key` names, checked for `T`.
fn resolve<T: Model>(key: impl Key<T>) -> Result<NaturalKey, Error> {
    match key.named() {
        None => Ok(NaturalKey::declared::<T>()),
        Some(fields) => NaturalKey::named::<T>(fields),
    }
}

/// Finds the document with the natural key of the one given, or inserts it with the next
/// id, from [`Document::find_or_insert`](crate::Document::find_or_insert): await it for
/// the [`Entry`], the document now holding the stored one either way. With `MANY`, from
/// [`Document::find_or_insert_many`](crate::Document::find_or_insert_many), for many
/// documents: await it for an [`Entry`] per document, in order, each document now holding
/// the stored one. `K` is the key it finds by: the type's own (`#[seq_key]`, the default:
/// awaiting it needs the type to declare one, [`NaturalKeyed`]), or the fields named for
/// the call with [`by`](FindOrInsert::by). Options are set by method, as an
/// [`Insert`](super::Insert)'s.
#[must_use = "a find_or_insert does nothing until it is awaited"]
pub struct FindOrInsert<'a, T: Model, K = (), const MANY: bool = false> {
    pub(super) call: Call<'a>,
    /// Taken at the first poll: one document (`MANY` false) or many.
    docs: Option<&'a mut [T]>,
    db: Route<'a>,
    key: K,
    // The call itself, set by `new`, which requires `T: Deserializable`, so that polling
    // requires nothing more than the key (see `Deserializable`). An entry per document.
    run: fn(&'a mut [T], Route<'a>, Call<'a>, Result<NaturalKey, Error>) -> Running<'a>,
    running: Option<Running<'a>>,
}

/// A find-or-insert's future once started: an entry per document.
type Running<'a> = InsertFuture<'a, Vec<Entry>>;

impl<'a, T: Model> FindOrInsert<'a, T> {
    pub(crate) fn new(doc: &'a mut T, db: Route<'a>) -> Self
    where
        T: Deserializable,
    {
        FindOrInsert::with(std::slice::from_mut(doc), db, |docs, db, call, key| {
            // `new` gives one document: `from_mut` above.
            let doc = &mut docs[0];
            let insert = InsertFuture::run::<T>("find_or_insert", 1, db, call, |cx| {
                Box::pin(async move {
                    let entry = natural::find_or_insert(doc, key, cx).await?;
                    Ok(vec![entry])
                })
            });
            insert.scoped(&T::SEQUENCE)
        })
    }
}

impl<'a, T: Model> FindOrInsert<'a, T, (), true> {
    pub(crate) fn new_many(docs: &'a mut [T], db: Route<'a>) -> Self
    where
        T: Deserializable,
    {
        FindOrInsert::with(docs, db, |docs, db, call, key| {
            let count = docs.len();
            InsertFuture::run::<T>("find_or_insert_many", count, db, call, |cx| {
                Box::pin(natural_many::find_or_insert_many(docs, key, cx))
            })
        })
    }
}

impl<'a, T: Model, const MANY: bool> FindOrInsert<'a, T, (), MANY> {
    fn with(
        docs: &'a mut [T],
        db: Route<'a>,
        run: fn(&'a mut [T], Route<'a>, Call<'a>, Result<NaturalKey, Error>) -> Running<'a>,
    ) -> Self {
        FindOrInsert {
            call: Call::default(),
            docs: Some(docs),
            db,
            key: (),
            run,
            running: None,
        }
    }

    /// Finds by the natural key `key`, named for this call (the fields as serialized),
    /// instead of the type's own: for a type that declares none, or to find by another.
    /// A unique index on the key's fields (or on some of them) must exist
    /// ([`ErrorKind::MissingIndex`](crate::error::ErrorKind::MissingIndex)); a key that is empty or names a field the insert fills is
    /// [`ErrorKind::InvalidNaturalKey`](crate::error::ErrorKind::InvalidNaturalKey), both before any id is taken.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, login: String }
    /// # async fn run(db: mongodb::Database, mut users: Vec<User>) -> Result<(), Box<dyn std::error::Error>> {
    /// use mongodb::IndexModel;
    /// use mongodb::bson::doc;
    /// use mongodb::options::IndexOptions;
    ///
    /// let unique = IndexOptions::builder().unique(true).build();
    /// let index = IndexModel::builder().keys(doc! { "login": 1 }).options(unique).build();
    /// User::collection(&db).create_index(index).await?;
    /// let mut ada = User { id: 0, login: "ada".into() };
    /// let entry = ada.find_or_insert(&db).by(&["login"]).await?;
    /// let entries = User::find_or_insert_many(&mut users, &db).by(&["login"]).await?;
    /// # Ok(()) }
    /// ```
    pub fn by(
        self,
        key: &'static [&'static str],
    ) -> FindOrInsert<'a, T, &'static [&'static str], MANY> {
        let FindOrInsert {
            call,
            docs,
            db,
            run,
            running,
            ..
        } = self;
        FindOrInsert {
            call,
            docs,
            db,
            key,
            run,
            running,
        }
    }
}

impl<T: Model, K: Key<T> + Copy + Unpin, const MANY: bool> FindOrInsert<'_, T, K, MANY> {
    /// Polls the call, started at the first poll with the options set and the key.
    fn poll_entries(&mut self, cx: &mut Context<'_>) -> Poll<Result<Vec<Entry>, Error>> {
        if self.running.is_none() {
            let docs = self
                .docs
                .take()
                .expect("a find-or-insert polled after it completed");
            let call = std::mem::take(&mut self.call);
            self.running = Some((self.run)(docs, self.db, call, resolve(self.key)));
        }
        let running = self.running.as_mut().expect("started above");
        Pin::new(running).poll(cx)
    }
}

impl<T: Model, K: Key<T> + Copy + Unpin> Future for FindOrInsert<'_, T, K> {
    type Output = Result<Entry, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let entries = std::task::ready!(self.get_mut().poll_entries(cx));
        // One document, one entry (`new`).
        Poll::Ready(entries.map(|entries| entries[0]))
    }
}

impl<T: Model, K: Key<T> + Copy + Unpin> Future for FindOrInsert<'_, T, K, true> {
    type Output = Result<Vec<Entry>, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_entries(cx)
    }
}
