//! The gate every call passes first: a sequence whose promises would not hold on the
//! sharded cluster it writes to is refused before anything is read or taken, and what
//! holds at a cost is logged once. Once the deployment is known, decided without a round
//! trip ([`crate::state::known`]); the decision is [`crate::base::sharding`]'s.

use mongodb::Database;

use crate::base::error::Error;
use crate::base::future::BoxFuture;
use crate::base::once::{Warning, first_time};
use crate::base::sequence::Sequence;
use crate::base::sharding::{Finding, Refusal, assess};
use crate::round_trip::deployment::{shard_keys, topology};
use crate::state::known::{Known, Topology};
use crate::state::registry::Route;

/// The gate every insert passes before its context is made (`state::context::Context::of`
/// asks it, with this): a sequence whose promises would not hold on the deployment `route`
/// goes to is refused ([`ErrorKind::Sharded`](crate::error::ErrorKind::Sharded)), and what holds at a cost is logged once. Called
/// only while the deployment is not known yet: once it is, the context decides without a
/// round trip (`state::known`), and on a sharded cluster keeps the decision per sequence.
pub(crate) fn read_and_pass<'r>(
    route: Route<'r>,
    seq: &'static Sequence,
) -> BoxFuture<'r, Result<(), Error>> {
    Box::pin(decide(route.known(), route.db, seq))
}

/// [`read_and_pass`]: what is not known read, and the decision kept.
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
                if first_time(Warning::ShardedAtACost(collection, cost), seq) {
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
