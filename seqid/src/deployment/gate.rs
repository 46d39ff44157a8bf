//! The gate every call passes first: a sequence whose promises would not hold on the
//! sharded cluster it writes to is refused before anything is read or taken, and what
//! holds at a cost is logged once. Once the deployment is known, decided without a round
//! trip ([`crate::deployment::known`]); the decision is [`crate::deployment::sharding`]'s.

use mongodb::Database;

use crate::base::error::Error;
use crate::base::future::BoxFuture;
use crate::base::once::{Warning, first_time};
use crate::deployment::facts::{shard_keys, topology};
use crate::deployment::known::{Known, Topology};
use crate::deployment::sharding::{Finding, Refusal, assess};
use crate::schema::sequence::Sequence;

/// The gate every call passes before its context is made (`call::context::Context::run`
/// asks it): a sequence whose promises would not hold on the deployment `db` lives on is
/// refused ([`ErrorKind::Sharded`](crate::error::ErrorKind::Sharded)), and what holds at a
/// cost is logged once. Once the deployment is known (`known`), decided without a round
/// trip, and on a sharded cluster kept per sequence; until then read, boxed, so that every
/// insert's state stays small.
pub(crate) async fn pass(
    known: &Known,
    db: &Database,
    seq: &'static Sequence,
) -> Result<(), Error> {
    match known.decided(db, seq) {
        Some(decided) => decided.map_err(|refusal| refusal.error(seq)),
        None => {
            let read: BoxFuture<'_, _> = Box::pin(decide(known, db, seq));
            read.await
        }
    }
}

/// [`pass`], the deployment not known yet: what is not known read, and the decision kept.
async fn decide(known: &Known, db: &Database, seq: &'static Sequence) -> Result<(), Error> {
    if topology(known, db, seq).await? != Topology::Sharded {
        return Ok(());
    }
    let (target, counters) = shard_keys(known, db, seq).await?;
    let mut refused = None;
    for finding in assess(seq, target.as_ref(), counters.as_ref()) {
        match finding {
            Finding::Refused {
                collection,
                shard_key,
                why,
            } => {
                refused.get_or_insert(Refusal {
                    collection: format!("{}.{collection}", db.name()),
                    shard_key,
                    why,
                });
            }
            Finding::Costs {
                cost,
                collection,
                shard_key,
                what,
            } => {
                if first_time(Warning::ShardedAtACost(collection, cost.name()), seq) {
                    tracing::warn!(
                        sequence = seq.name,
                        collection,
                        shard_key,
                        "seqid: `{}.{collection}` is sharded on {shard_key}: {what} (logged \
                         once per process and sequence)",
                        db.name(),
                    );
                }
            }
        }
    }
    let decided = refused.map_or(Ok(()), Err);
    known.decide(db, seq, decided.clone());
    decided.map_err(|refusal| refusal.error(seq))
}
