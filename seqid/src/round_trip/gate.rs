//! The gate every call passes first: a sequence whose promises would not hold on the
//! sharded cluster it writes to is refused before anything is read or taken, and what
//! holds at a cost is logged once. Once the deployment is known, decided without a round
//! trip ([`crate::state::known`]); the decision is [`crate::base::sharding`]'s.

use mongodb::Database;

use crate::base::error::Error;
use crate::base::once::{Warning, first_time};
use crate::base::sequence::Sequence;
use crate::base::sharding::{Finding, Refusal, assess};
use crate::round_trip::deployment::{shard_keys, topology};
use crate::state::context::{Call, Context};
use crate::state::known::{Known, Topology};
use crate::state::registry::Route;

/// The context of a call of `route` for `seq`, with the options of `call`, once the gate
/// lets it through.
pub(crate) async fn open<'a>(
    seq: &'static Sequence,
    route: Route<'a>,
    call: Call<'a>,
) -> Result<Context<'a>, Error> {
    // On a sharded cluster, a sequence whose promises would not hold is refused here,
    // before anything is read or taken (once known, without a round trip).
    require(route, seq).await?;
    Context::of(seq, route, call).await
}

/// What `route` keeps of its deployment: its handle's, or the process's.
pub(crate) fn known(route: Route<'_>) -> &Known {
    match route.registry {
        Some(registry) => registry.deployment(),
        None => Known::of_process(),
    }
}

/// Refuses, before any id is taken, a sequence whose promises would not hold on the
/// deployment `route` goes to ([`Error::Sharded`]), and says once in the log what holds
/// at a cost. Once the deployment is known, decided without a round trip or an
/// allocation off a sharded cluster (this is awaited inline by every insert, whose state
/// stays small: the reads are boxed); on one, the decision is kept per sequence.
pub(crate) async fn require(route: Route<'_>, seq: &'static Sequence) -> Result<(), Error> {
    let known = known(route);
    match known.decided(route.db, seq) {
        Some(decided) => decided.map_err(|refusal| refusal.error(seq)),
        None => Box::pin(decide(known, route.db, seq)).await,
    }
}

/// [`require`], reading what is not known yet, and keeping the decision.
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
