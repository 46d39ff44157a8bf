//! An append's rounds: the pipeline where the server takes it, else a read and a
//! conditional update, again while other writers move the mark first, each wait learned
//! as the optimistic loop's (`base::retry`), within the call's budget.
//!
//! Per array, the appends of one process to one document's array that go the conditional
//! way (a server without update pipelines: a read of the mark, then an update conditional
//! on it) take turns, each its read and its update, so that none reads a mark another
//! appender of the process is about to move: racing, 16 appenders of one document lost
//! 3 rounds in 4 and sent 8 commands per append instead of 2 (BENCHMARKS.md, *Item
//! appends*). Other processes still race, and the condition on the mark settles it. The
//! one-round-trip pipeline takes no turn: the server numbers its appends one at a time.

use std::time::Duration;

use mongodb::bson::{Bson, Document as BsonDocument};
use mongodb::{ClientSession, Collection, Database};
use tokio::sync::Semaphore;

use crate::base::error::{Error, ErrorKind};
use crate::base::retry::{Budget, Tries};
use crate::base::server::noted;
use crate::deployment::known::Known;
use crate::fields::items::unnumberable;
use crate::items::commands::{self, Append, Seen};
use crate::round_trip::write::not_written;
use crate::schema::item::{Unnumberable, numbers_after};
use crate::schema::sequence::Sequence;
use crate::state::turns::Lines;

/// How long a conditional append waits for the append of this process ahead of it on the
/// same array before it goes on without its turn (a write that hangs holds the others back
/// no longer; the condition on the mark still lets one of two through).
const TURN_PATIENCE: Duration = Duration::from_secs(2);

/// A document's array: the database's name, the collection, the array's field, and the
/// filter that finds the document as BSON bytes.
type ArrayLine = (String, String, &'static str, Vec<u8>);

/// The lines of conditional appends.
static ARRAYS: Lines<ArrayLine, Semaphore> = Lines::new();

/// One append on its way, with what its rounds need, owned: outside a transaction it ends
/// in a task of its own when its caller goes away.
pub(crate) struct Rounds {
    pub seq: &'static Sequence,
    pub append: Append,
    pub db: Database,
    pub known: Known,
    pub budget: Budget,
    /// The filter as the caller gave it, for the errors.
    pub shown: String,
}

impl Rounds {
    /// The collection the document is in.
    pub(crate) fn collection(&self) -> Collection<BsonDocument> {
        self.db.collection(self.seq.collection)
    }

    /// Whether the server takes update pipelines, as far as this handle and the process
    /// know.
    pub(crate) fn pipelines(&self) -> bool {
        let db = &self.db;
        !self.known.refuses_pipelines(db) && !Known::of_process().refuses_pipelines(db)
    }

    /// The rounds, until the append lands (the mark it set: its numbers are the last ones
    /// up to it), is refused, or gives up. In a transaction (`in_transaction`), an error
    /// is the transaction's; outside, one that leaves the append unknown is
    /// [`ErrorKind::ItemsOutcomeUnknown`], for [`settle`](Self::settle).
    pub(crate) async fn run(
        &self,
        mut session: Option<&mut ClientSession>,
        in_transaction: bool,
    ) -> Result<i64, Error> {
        let (append, spec) = (&self.append, self.append.spec);
        let coll = self.collection();
        let mut tries = Tries::start(self.budget);
        let mut last_seen = spec.number.none_yet();
        // The error of a `$push` the server refused because the field is no longer an
        // array: the read that follows says what it holds, or, if it fails, this error.
        let mut refused = None;
        loop {
            if !tries.next().await {
                return Err(tries.exhausted(self.seq, Some(spec), last_seen));
            }
            if self.pipelines() {
                match commands::pipeline(&coll, append, session.as_deref_mut()).await {
                    Ok(Some(mark)) => return Ok(mark),
                    // Matched nothing: the read below tells why.
                    Ok(None) => {}
                    // The conditional way, in this same round.
                    Err(error) if commands::refuses_pipelines(&error) => {
                        self.known.keep_no_pipelines(&self.db);
                    }
                    Err(error) => return Err(self.failed(error, in_transaction)),
                }
            }
            let pipelines = self.pipelines();
            // The conditional way: the appends of this process to this array take turns,
            // each its read and its update, released before a lost race's wait.
            let _turn = match pipelines {
                true => None,
                false => {
                    let bytes = mongodb::bson::to_vec(&append.filter).unwrap_or_default();
                    let line = (self.db.name().into(), coll.name().into(), spec.field, bytes);
                    ARRAYS.turn(line, TURN_PATIENCE.min(tries.patience())).await
                }
            };
            // Read when the pipeline matched nothing, or before the conditional update:
            // this append has written nothing yet.
            let seen = match commands::read(&coll, append, session.as_deref_mut()).await {
                Ok(seen) => seen,
                Err(error) => return Err(self.driver(refused.take().unwrap_or(error))),
            };
            refused = None;
            let (base, numbered) = match &seen {
                Seen::Missing => return Err(self.not_found()),
                Seen::Several => {
                    let counted = commands::count(&coll, &append.filter, session.as_deref_mut());
                    return Err(self.several(counted.await.ok()));
                }
                Seen::NotArray(found) => return Err(self.not_array(found)),
                Seen::Landed(mark) => return Ok(*mark),
                // The pipeline matched nothing, yet the document is there: changed between
                // the two (its array made one, say); the next round sees it as it is.
                Seen::Open { .. } if pipelines => {
                    tries.lost();
                    continue;
                }
                Seen::Open { mark, largest, .. } => {
                    // As the pipeline's: the mark, "none yet", the largest stored number.
                    let none_yet = spec.number.none_yet();
                    let base = mark.unwrap_or(none_yet).max(none_yet);
                    let base = base.max(largest.unwrap_or(i64::MIN));
                    let numbers = numbers_after(&spec.number, base, append.items.len())
                        .map_err(|why| self.unnumberable(why))?;
                    let numbered: Vec<BsonDocument> = append
                        .items
                        .iter()
                        .zip(&numbers)
                        .map(|(item, &number)| {
                            let mut item = item.clone();
                            item.insert(spec.number.key, number);
                            item
                        })
                        .collect();
                    (numbers.last().copied().unwrap_or(base), numbered)
                }
            };
            last_seen = base;
            let sent = session.as_deref_mut();
            match commands::conditional(&coll, append, &seen, numbered, base, sent).await {
                Ok(true) => return Ok(base),
                Ok(false) => tries.lost(),
                Err(error) if commands::not_an_array(&error, spec) => {
                    refused = Some(error);
                    tries.lost();
                }
                Err(error) => return Err(self.failed(error, in_transaction)),
            }
        }
    }

    /// An append that ended unknown, outside a transaction: the document read to tell
    /// whether it landed (its token among the recent appends).
    pub(crate) async fn settle(&self, ended: Result<i64, Error>) -> Result<i64, Error> {
        match ended {
            Err(error) if matches!(error.kind(), ErrorKind::ItemsOutcomeUnknown { .. }) => {
                match commands::read(&self.collection(), &self.append, None).await {
                    Ok(Seen::Landed(mark)) => Ok(mark),
                    _ => Err(error),
                }
            }
            ended => ended,
        }
    }

    /// An error of a command of the append: refused (nothing written), the caller's
    /// transaction's, or not answered.
    fn failed(&self, error: mongodb::error::Error, in_transaction: bool) -> Error {
        if in_transaction || not_written(&error) {
            return self.driver(error);
        }
        let (items, token) = (self.append.spec, self.append.token);
        let source = Box::new(error);
        self.error(ErrorKind::ItemsOutcomeUnknown {
            items,
            token,
            source,
        })
    }

    fn error(&self, kind: ErrorKind) -> Error {
        Error::new(self.seq, kind)
    }

    /// The filter finds no document.
    pub(crate) fn not_found(&self) -> Error {
        let (items, filter) = (self.append.spec, self.shown.clone().into());
        self.error(ErrorKind::ItemsNotFound { items, filter })
    }

    /// The filter finds several documents: how many, if counting them answered.
    pub(crate) fn several(&self, matched: Option<u64>) -> Error {
        let (items, filter) = (self.append.spec, self.shown.clone().into());
        self.error(ErrorKind::ItemsAmbiguous {
            items,
            filter,
            matched,
        })
    }

    fn not_array(&self, found: &Bson) -> Error {
        self.error(ErrorKind::ItemsNotArray {
            items: self.append.spec,
            found: found.to_string().into(),
            filter: self.shown.clone().into(),
        })
    }

    /// The numbers after the mark do not fit.
    pub(crate) fn unnumberable(&self, why: Unnumberable) -> Error {
        unnumberable(self.seq, self.append.spec, why)
    }

    /// A command refused, never sent, or failed where nothing of this append was written.
    pub(crate) fn driver(&self, error: mongodb::error::Error) -> Error {
        let (field, collection) = (self.append.spec.field, self.seq.collection);
        let action = format!("appending items to `{field}` in `{collection}`");
        Error::driver(self.seq, action, noted(error))
    }
}
