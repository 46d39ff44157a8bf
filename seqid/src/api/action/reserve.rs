//! A model's next id before its document: [`Reserve`] takes ids of a type's sequence for
//! documents built later, each handed out as a [`Reserved`] token that
//! [`Insert::reserved`](crate::action::Insert::reserved) stores a document under. The ids are taken as an insert takes them: through the call's context
//! and the gate, from the strategy's source, sharing the handle's allocator (and live
//! block) with the type's inserts, and a caller cancelled before it has them gives them
//! back to the handle.

use std::fmt;
use std::future::IntoFuture;
use std::marker::PhantomData;

use crate::api::action::next::{counted_in_span, fits};
use crate::base::error::{Error, ErrorKind};
use crate::base::future::BoxFuture;
use crate::call::context::{Call, Context};
use crate::call::registry::Route;
use crate::counter::Counter;
use crate::counter::commit_queue::Line;
use crate::counter::gapless;
use crate::counter::reserved::{Origin, ReservedId};
use crate::counter::tickets;
use crate::fields::ids::{ensure_unset_or_reserved, fill, numbered_on_insert};
use crate::fields::scope::{GivenScope, Scope};
use crate::schema::model::Model;
use crate::source::counted;

/// An id of `T`'s sequence reserved for a document built later, from
/// [`Document::reserve_ids`](crate::Document::reserve_ids): give it to
/// [`insert(..).reserved(token)`](crate::action::Insert::reserved), which stores the
/// document under it. It holds the id and the scope it was taken for (and, for a gapless
/// sequence, the transaction it was taken in); seqid alone makes one, and an insert takes
/// it by value: a token inserts one document, once, in the database it was reserved in.
/// A number no document of this type carries is taken on its own instead
/// ([which call a number comes from](crate::guide::numbers)).
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("order", collection = "orders")]
/// # struct Order { #[serde(rename = "_id")] id: i64, total: i64 }
/// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
/// let token = Order::reserve_id(&db).await?;
/// println!("your order number is {}", token.id()); // before the order exists
/// let mut order = Order { id: 0, total: 4200 };
/// order.insert(&db).reserved(token).await?; // stored with _id = that number
/// # Ok(()) }
/// ```
///
/// A token never inserted is a gap in the sequence, as an insert that fails after taking
/// its id is; but a gapless token, which lives and dies with the transaction it was
/// reserved in: an aborted transaction takes its id back (and the token is then void).
pub struct Reserved<T: Model> {
    reserved: ReservedId,
    /// A gapless token's counter: its entry in the process's reservations goes when the
    /// token is dropped unused (`counter::tickets`).
    line: Option<Line>,
    _type: PhantomData<fn() -> T>,
}

impl<T: Model> Drop for Reserved<T> {
    fn drop(&mut self) {
        if let (Some(line), Some(gapless)) = (&self.line, &self.reserved.gapless) {
            tickets::release(line, self.reserved.id, gapless.ticket);
        }
    }
}

impl<T: Model> Reserved<T> {
    /// The id reserved.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("order", collection = "orders")]
    /// # struct Order { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let token = Order::reserve_id(&db).await?;
    /// let id: i64 = token.id();
    /// # Ok(()) }
    /// ```
    pub fn id(&self) -> i64 {
        self.reserved.id
    }

    /// Writes the reserved id into `doc`'s id field, and its display codes as the insert
    /// will write them (`#[seq_display]`, from the document's fields and this id): to show
    /// a code before the document is stored. The insert then takes `doc` as it is (an id
    /// equal to the token's, codes equal to those it writes). Refused, with `doc` left as
    /// it was, if `doc` is of another scope than the token's ([`ErrorKind::ReservedScope`]),
    /// carries another id ([`ErrorKind::IdAlreadySet`]) or a code that is not this id's
    /// ([`ErrorKind::InvalidCode`]), or if a value it shows would make the code ambiguous.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id(collection = "invoices")]
    /// # struct Invoice { year: i32, #[seq_id("invoice", scope = "year")] number: i64, #[seq_display("INV-{year}-{number:04}")] code: String }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let token = Invoice::reserve_id(&db).scope(2026).await?;
    /// let mut invoice = Invoice { year: 2026, number: 0, code: String::new() };
    /// token.fill(&mut invoice)?;
    /// println!("{}", invoice.code); // INV-2026-0001, before the invoice is stored
    /// invoice.insert(&db).reserved(token).await?;
    /// # Ok(()) }
    /// ```
    pub fn fill(&self, doc: &mut T) -> Result<(), Error> {
        let seq = &T::SEQUENCE;
        ensure_unset_or_reserved(doc, self.reserved.id)?;
        let scope = Scope::of(seq, doc)?;
        if scope != self.reserved.scope {
            return Err(Error::new(
                seq,
                ErrorKind::ReservedScope {
                    id: self.reserved.id,
                    reserved: self.reserved.scope.to_string().into(),
                    document: scope.to_string().into(),
                },
            ));
        }
        crate::fields::code::check(doc)?;
        fill(doc, self.reserved.id).map(drop)
    }

    /// What the insert reads of it.
    pub(crate) fn into_reserved_id(mut self) -> ReservedId {
        // The insert takes the entry (`counted::still_reserved`), not the drop.
        self.line = None;
        let void = ReservedId {
            id: 0,
            scope: Scope::NONE,
            origin: Origin::default(),
            gapless: None,
        };
        std::mem::replace(&mut self.reserved, void)
    }
}

/// The sequence, the id, the database and scope, and whether it was reserved in a
/// transaction.
impl<T: Model> fmt::Debug for Reserved<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reserved")
            .field("sequence", &T::SEQUENCE.name)
            .field("id", &self.reserved.id)
            .field("database", &self.reserved.origin.db)
            .field("scope", &format_args!("{}", self.reserved.scope))
            .field("in_transaction", &self.reserved.gapless.is_some())
            .finish()
    }
}

/// An id of a type's sequence reserved for a document built later, from
/// [`Document::reserve_id`](crate::Document::reserve_id): await it for one [`Reserved`]
/// token; or `n` ids (`MANY`), from [`Document::reserve_ids`](crate::Document::reserve_ids):
/// await them for `n` tokens, their ids increasing.
///
/// `S` is the sequence's scope as a type ([`scoped`](crate::scoped)): `.scope(...)` takes
/// a value of it, checked at compile time.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("ticket", collection = "tickets")]
/// # struct Ticket { #[serde(rename = "_id")] id: i64 }
/// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
/// let token: seqid::Reserved<Ticket> = Ticket::reserve_id(&db).await?;
/// let tokens: Vec<seqid::Reserved<Ticket>> = Ticket::reserve_ids(&db, 3).await?;
/// # Ok(()) }
/// ```
#[must_use = "ids are reserved only when the action is awaited"]
pub struct Reserve<'a, T: Model, S = <T as Model>::Scope, const MANY: bool = false> {
    db: Route<'a>,
    scope: GivenScope,
    call: Call<'a>,
    n: u64,
    _type: PhantomData<fn() -> (T, S)>,
}

impl<'a, T: Model, S, const MANY: bool> Reserve<'a, T, S, MANY> {
    pub(crate) fn new(db: Route<'a>, n: u64) -> Self {
        Reserve {
            db,
            scope: GivenScope::default(),
            call: Call::default(),
            n,
            _type: PhantomData,
        }
    }

    scope_setters! {
        scope,
        scope {
            /// The scope the ids are reserved for, for a scoped sequence: a value of its scope
            /// field's type, or a tuple of values in the declared order; a value of another type
            /// does not compile ([`scoped`](crate::scoped)). Required for a scoped sequence
            /// ([`ErrorKind::InvalidScope`] without it); an unscoped one takes none. Each token is
            /// inserted with a document of that scope ([`ErrorKind::ReservedScope`] otherwise).
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, Document)]
            /// # #[seq_id(collection = "tickets")]
            /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
            /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
            /// let tokens = Ticket::reserve_ids(&db, 3).scope("apollo").await?;
            /// # Ok(()) }
            /// ```
        }
        unchecked {
            /// [`scope`](Self::scope) for a scope known only at run time: any serializable value,
            /// checked when the call runs against the scope fields' Rust types
            /// ([`ErrorKind::InvalidScope`] for a value none of the type's documents can hold).
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, Document)]
            /// # #[seq_id(collection = "tickets")]
            /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
            /// # async fn run(db: mongodb::Database, project: mongodb::bson::Bson) -> Result<(), seqid::Error> {
            /// let tokens = Ticket::reserve_ids(&db, 3).scope_unchecked(project).await?;
            /// # Ok(()) }
            /// ```
        }
    }

    session!(
        /// The caller's session. A gapless sequence reserves its ids in the transaction
        /// running in it (required: [`ErrorKind::TransactionRequired`] without one), and
        /// each token is then inserted in that same transaction
        /// ([`ErrorKind::ReservedTransaction`] otherwise); an aborted transaction takes the
        /// ids back, and its tokens are void. Counters and block reserve theirs outside
        /// any transaction, as inserts take theirs.
        ///
        /// ```no_run
        /// # use seqid::Document;
        /// # #[derive(serde::Serialize, Document)]
        /// # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
        /// # struct Invoice { #[serde(rename = "_id")] id: i64, total: i64 }
        /// # async fn run(db: mongodb::Database, mut session: mongodb::ClientSession) -> Result<(), Box<dyn std::error::Error>> {
        /// session.start_transaction().await?;
        /// let token = Invoice::reserve_id(&db).session(&mut session).await?;
        /// let mut invoice = Invoice { id: 0, total: 4200 };
        /// invoice.insert(&db).reserved(token).session(&mut session).await?;
        /// session.commit_transaction().await?;
        /// # Ok(()) }
        /// ```
    );
}

impl<'a, T: Model + 'a, S> IntoFuture for Reserve<'a, T, S, true> {
    type Output = Result<Vec<Reserved<T>>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(take(self.db, self.scope, self.call, self.n))
    }
}

impl<'a, T: Model + 'a, S> IntoFuture for Reserve<'a, T, S, false> {
    type Output = Result<Reserved<T>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        let Reserve {
            db, scope, call, ..
        } = self;
        Box::pin(async move {
            let mut tokens = take::<T>(db, scope, call, 1).await?;
            Ok(tokens.pop().expect("one id reserved"))
        })
    }
}

/// `n` tokens of `T`'s sequence in `scope`, every option checked first, in a
/// `seqid.numbers` span.
async fn take<T: Model>(
    db: Route<'_>,
    scope: GivenScope,
    call: Call<'_>,
    n: u64,
) -> Result<Vec<Reserved<T>>, Error> {
    let names = ("reserve_ids", "reserved");
    let scope = checked::<T>(scope, n);
    counted_in_span(
        &T::SEQUENCE,
        (db, call),
        names,
        n,
        scope,
        move |scope, cx| Box::pin(async move { tokens::<T>(&scope, n, cx).await }),
    )
    .await
}

/// The scope `scope` names, if `T`'s sequence may reserve `n` ids in it.
fn checked<T: Model>(scope: GivenScope, n: u64) -> Result<Scope, Error> {
    let seq = &T::SEQUENCE;
    // A sequence numbered later is numbered by `number_draft`, never by `insert`.
    numbered_on_insert::<T>("reserve_ids")?;
    super::counter::no_counter_for_optimistic(seq, "reserve ids from")?;
    let scope = scope.resolve(seq)?;
    fits(seq, "reserve_ids", n)?;
    Ok(scope)
}

/// `n` tokens of `T`'s sequence in `scope`, taken in the call's context.
async fn tokens<T: Model>(
    scope: &Scope,
    n: u64,
    cx: &mut Context<'_>,
) -> Result<Vec<Reserved<T>>, Error> {
    let seq = &T::SEQUENCE;
    let ids = counted::take_n(scope, n, cx).await?;
    let (counter, origin) = (Counter { seq, scope }, cx.route.origin());
    let reserved = gapless::reserved_ids(cx.route.db, counter, &ids, origin, &cx.session);
    let tokens = reserved.into_iter().map(|(reserved, line)| Reserved {
        reserved,
        line,
        _type: PhantomData,
    });
    Ok(tokens.collect())
}
