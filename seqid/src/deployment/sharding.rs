//! What a sharded cluster does to each promise of a sequence, decided from how its two
//! collections are sharded: pure, no I/O ([`crate::deployment::facts`] reads the facts).
//!
//! From MongoDB's manual and tracker (the guide's *sharded clusters* chapter has the
//! references):
//!
//! - a unique index is enforced across shards only when the shard key is a prefix of it
//!   (`_id`'s own only when `_id` is the shard key, ranged or hashed): the optimistic
//!   strategy's whole promise rests on the index on its field (and scope), and the other
//!   strategies' safety net (a duplicate refused) too;
//! - an upsert, and a `findAndModify` that must reach one document, must carry the whole
//!   shard key in its filter (SERVER-14491, SERVER-14813): a counter found by fields that
//!   are not the counters collection's shard key cannot be updated (or made) safely;
//! - a transaction whose writes go to several shards commits in two phases: gapless costs
//!   that when its counter and its documents live on different shards;
//! - a ranged shard key whose first field grows with every insert sends every insert to
//!   the shard holding the last chunk.

use mongodb::bson::{Bson, Document as BsonDocument};

use crate::base::error::{Error, ErrorKind};
use crate::schema::layout::ScopeEncoding;
use crate::schema::sequence::{Sequence, Strategy};

/// How a collection is sharded: its shard key (`{ _id: "hashed" }`, `{ tenant: 1, n: 1
/// }`), and whether the key was declared unique.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ShardKey {
    pub key: BsonDocument,
    pub unique: bool,
}

impl ShardKey {
    /// The key's fields, in order.
    fn fields(&self) -> Vec<&str> {
        self.key.keys().map(String::as_str).collect()
    }

    /// Whether a unique index on `keys` (in order) is enforced across shards: the shard
    /// key's fields are a prefix of it.
    fn prefixes(&self, keys: &[&str]) -> bool {
        let fields = self.fields();
        !fields.is_empty() && keys.starts_with(&fields)
    }

    /// Whether every field of the key is one of `fields` (a filter's equalities).
    fn within(&self, fields: &[&str]) -> bool {
        self.fields().iter().all(|field| fields.contains(field))
    }

    /// Whether the key is ranged on `field` first (not hashed).
    fn ranged_first_on(&self, field: &str) -> bool {
        let first = self.key.iter().next();
        first.is_some_and(|(first, kind)| first == field && !matches!(kind, Bson::String(_)))
    }

    /// As shown in messages: `{ "_id": "hashed" }`.
    pub(crate) fn shown(&self) -> String {
        self.key.to_string()
    }
}

/// What a promise that holds costs: each is said once in the log per sequence and
/// collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cost {
    /// The unique index on the sequence's field is enforced on each shard alone.
    SafetyNetPerShard,
    /// A ranged key on the growing field: every insert to the last chunk's shard.
    LastChunk,
    /// Each counter lives on one shard.
    CounterOnOneShard,
    /// Counter and document apart: a two-phase commit.
    TwoPhaseCommit,
}

impl Cost {
    /// The cost's name, for the warning logged once per sequence, collection and cost.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Cost::SafetyNetPerShard => "safety net per shard",
            Cost::LastChunk => "last chunk",
            Cost::CounterOnOneShard => "counter on one shard",
            Cost::TwoPhaseCommit => "two-phase commit",
        }
    }
}

/// What was found of one promise.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Finding {
    /// The promise does not hold: refused before any id is taken.
    Refused {
        /// The collection (`db.coll`'s `coll`) and its shard key.
        collection: &'static str,
        shard_key: String,
        /// Why, and what would make it hold.
        why: String,
    },
    /// The promise holds, at a cost said once in the log.
    Costs {
        cost: Cost,
        collection: &'static str,
        shard_key: String,
        what: String,
    },
}

/// The promises of `seq` on a cluster whose target collection is sharded on `target`
/// and whose counters collection on `counters` (`None`: unsharded). Empty: every promise
/// holds as on a replica set.
pub(crate) fn assess(
    seq: &'static Sequence,
    target: Option<&ShardKey>,
    counters: Option<&ShardKey>,
) -> Vec<Finding> {
    let mut found = Vec::new();
    let identity = identity_fields(seq);
    let counted = !matches!(seq.strategy, Strategy::Optimistic { .. });
    if let Some(key) = target {
        if !key.prefixes(&identity) {
            let index = index_shown(&identity);
            match counted {
                false => found.push(Finding::Refused {
                    collection: seq.collection,
                    shard_key: key.shown(),
                    why: format!(
                        "the optimistic strategy relies on the unique index on {index} to \
                         refuse a number another writer took, and a unique index is enforced \
                         across shards only when the shard key is a prefix of it; shard the \
                         collection on {index} (ranged or hashed), leave it unsharded, or \
                         use the counters or block strategy, whose counter hands each \
                         number out once"
                    ),
                }),
                true => found.push(Finding::Costs {
                    cost: Cost::SafetyNetPerShard,
                    collection: seq.collection,
                    shard_key: key.shown(),
                    what: format!(
                        "the unique index on {index} is enforced on each shard alone: the \
                         counter still hands each number out once, but a number stored by \
                         another writer on another shard would not be refused (a counter \
                         set back by hand, a tool that numbers by itself)"
                    ),
                }),
            }
        }
        if key.ranged_first_on(seq.field) {
            found.push(Finding::Costs {
                cost: Cost::LastChunk,
                collection: seq.collection,
                shard_key: key.shown(),
                what: format!(
                    "a ranged shard key on `{}`, which grows with every insert, sends every \
                     insert to the shard that holds the last chunk; a hashed key spreads them",
                    seq.field
                ),
            });
        }
    }
    if counted && let Some(key) = counters {
        let finding = counter_keys(seq);
        let index_ok = seq.layout.by_id() || key.prefixes(seq.layout.unique_index);
        if !key.within(&finding) || !index_ok {
            let layout = seq.layout.tool;
            found.push(Finding::Refused {
                collection: seq.counters,
                shard_key: key.shown(),
                why: format!(
                    "the counter is found by {} ({layout}'s layout), and its update (an \
                     upsert, a findAndModify that must reach one document) must carry the \
                     whole shard key{}; shard the counters collection on {} (ranged or \
                     hashed), or leave it unsharded (a counters collection is small)",
                    index_shown(&finding),
                    match index_ok {
                        true => String::new(),
                        false => format!(
                            ", and the unique index on {} that keeps one counter per \
                             sequence must start with it",
                            index_shown(seq.layout.unique_index)
                        ),
                    },
                    index_shown(&finding[..1]),
                ),
            });
        } else {
            found.push(Finding::Costs {
                cost: Cost::CounterOnOneShard,
                collection: seq.counters,
                shard_key: key.shown(),
                what: match seq.strategy {
                    Strategy::Block { block_size, .. } => format!(
                        "each counter lives on one shard; the block strategy writes it once \
                         per {block_size} ids"
                    ),
                    _ => "each counter lives on one shard, which takes every one of its \
                          updates: a busy sequence's is a hot document there; the block \
                          strategy writes it once per block"
                        .to_owned(),
                },
            });
        }
    }
    // The collection a gapless insert's two-phase commit is said of: the target, else
    // the counters collection.
    let sharded = (target.map(|key| (seq.collection, key)))
        .or_else(|| counters.map(|key| (seq.counters, key)));
    if seq.strategy == Strategy::Gapless
        && let Some((collection, key)) = sharded
    {
        found.push(Finding::Costs {
            cost: Cost::TwoPhaseCommit,
            collection,
            shard_key: key.shown(),
            what: "a gapless insert writes its counter and its document in one transaction: \
                   where they live on different shards, it commits in two phases, a round \
                   trip or two more"
                .to_owned(),
        });
    }
    found
}

/// The fields of the unique index a sequence's numbers rest on: `_id`, or its scope
/// fields and its field.
fn identity_fields(seq: &Sequence) -> Vec<&str> {
    if seq.field == "_id" {
        return vec!["_id"];
    }
    seq.scope.iter().copied().chain([seq.field]).collect()
}

/// The fields a counter's filter holds, by equality: `_id`, or the layout's name (and
/// field, and scope) fields.
fn counter_keys(seq: &Sequence) -> Vec<&'static str> {
    let layout = &seq.layout;
    if layout.by_id() {
        return vec!["_id"];
    }
    let mut keys = vec![layout.name_key];
    keys.extend(layout.field_key);
    if let ScopeEncoding::InField(key) = layout.scope {
        keys.push(key);
    }
    keys
}

/// `{ project: 1, number: 1 }`, for messages.
fn index_shown(fields: &[&str]) -> String {
    let keys: Vec<String> = fields.iter().map(|field| format!("{field}: 1")).collect();
    format!("{{ {} }}", keys.join(", "))
}

/// Why a sequence is refused on a sharded cluster: what [`ErrorKind::Sharded`] says.
#[derive(Clone, Debug)]
pub(crate) struct Refusal {
    /// `db.coll`.
    pub collection: String,
    pub shard_key: String,
    pub why: String,
}

impl Refusal {
    /// The error that refuses `seq` for this.
    pub(crate) fn error(self, seq: &'static Sequence) -> Error {
        Error::new(
            seq,
            ErrorKind::Sharded {
                collection: self.collection.into(),
                shard_key: self.shard_key.into(),
                why: self.why.into(),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use mongodb::bson::doc;

    use super::*;
    use crate::schema::layout::Layout;
    use crate::schema::sequence::construct::{gapless, optimistic};
    use crate::schema::sequence::testing::{counted, on_field, on_id};

    fn key(key: BsonDocument) -> ShardKey {
        ShardKey { key, unique: false }
    }

    const COUNTERS: Sequence = counted("users", "users");
    const OPTIMISTIC: Sequence = on_id("users_o", "users_o", optimistic(None, None));
    const SCOPED_OPTIMISTIC: Sequence = on_field(
        "users_o",
        "users_o",
        optimistic(None, None),
        "number",
        &["project"],
    );
    const GAPLESS: Sequence = on_id("invoices", "invoices", gapless());
    const MONGOOSE: Sequence = Sequence {
        layout: Layout::MONGOOSE_SEQUENCE,
        ..counted("ticket_seq", "tickets")
    };

    fn refused(found: &[Finding]) -> Vec<&'static str> {
        found
            .iter()
            .filter_map(|f| match f {
                Finding::Refused { collection, .. } => Some(*collection),
                _ => None,
            })
            .collect()
    }

    fn costs(found: &[Finding]) -> usize {
        found
            .iter()
            .filter(|f| matches!(f, Finding::Costs { .. }))
            .count()
    }

    #[test]
    fn unsharded_collections_hold_everything_at_no_cost() {
        for seq in [
            &COUNTERS,
            &OPTIMISTIC,
            &SCOPED_OPTIMISTIC,
            &GAPLESS,
            &MONGOOSE,
        ] {
            assert_eq!(assess(seq, None, None), vec![], "{}", seq.name);
        }
    }

    #[test]
    fn optimistic_holds_only_where_the_shard_key_prefixes_its_index() {
        for holds in [doc! { "_id": 1 }, doc! { "_id": "hashed" }] {
            let found = assess(&OPTIMISTIC, Some(&key(holds.clone())), None);
            assert!(refused(&found).is_empty(), "{holds}: {found:?}");
        }
        let found = assess(&OPTIMISTIC, Some(&key(doc! { "email": 1 })), None);
        assert_eq!(refused(&found), vec!["users_o"]);
        let Finding::Refused { why, shard_key, .. } = &found[0] else {
            unreachable!()
        };
        assert!(why.contains("{ _id: 1 }"), "{why}");
        assert_eq!(shard_key, "{ \"email\": 1 }");
        // Scoped: the index is { project, number }.
        for holds in [
            doc! { "project": 1 },
            doc! { "project": "hashed" },
            doc! { "project": 1, "number": 1 },
        ] {
            let found = assess(&SCOPED_OPTIMISTIC, Some(&key(holds.clone())), None);
            assert!(refused(&found).is_empty(), "{holds}: {found:?}");
        }
        for breaks in [
            doc! { "number": 1 },
            doc! { "_id": "hashed" },
            doc! { "number": 1, "project": 1 },
        ] {
            let found = assess(&SCOPED_OPTIMISTIC, Some(&key(breaks.clone())), None);
            assert_eq!(refused(&found), vec!["users_o"], "{breaks}");
        }
    }

    #[test]
    fn counted_strategies_lose_only_their_safety_net_on_another_shard_key() {
        let found = assess(&COUNTERS, Some(&key(doc! { "email": 1 })), None);
        assert!(refused(&found).is_empty());
        assert_eq!(costs(&found), 1);
    }

    #[test]
    fn a_ranged_key_on_the_growing_field_costs_a_hot_shard() {
        let found = assess(&COUNTERS, Some(&key(doc! { "_id": 1 })), None);
        assert_eq!((refused(&found).len(), costs(&found)), (0, 1));
        let found = assess(&COUNTERS, Some(&key(doc! { "_id": "hashed" })), None);
        assert_eq!(found, vec![]);
    }

    #[test]
    fn a_counter_is_found_only_by_a_filter_carrying_the_shard_key() {
        // The tutorial's `{ _id }`.
        for holds in [doc! { "_id": 1 }, doc! { "_id": "hashed" }] {
            let found = assess(&COUNTERS, None, Some(&key(holds.clone())));
            assert!(refused(&found).is_empty(), "{holds}");
            assert_eq!(costs(&found), 1, "one shard per counter");
        }
        let found = assess(&COUNTERS, None, Some(&key(doc! { "seq": 1 })));
        assert_eq!(refused(&found), vec!["counters"]);
        // mongoose-sequence's `{ id, reference_value }`, unique on both.
        let found = assess(&MONGOOSE, None, Some(&key(doc! { "id": 1 })));
        assert!(refused(&found).is_empty(), "{found:?}");
        let found = assess(
            &MONGOOSE,
            None,
            Some(&key(doc! { "id": 1, "reference_value": 1 })),
        );
        assert!(refused(&found).is_empty(), "{found:?}");
        for breaks in [doc! { "_id": 1 }, doc! { "reference_value": 1 }] {
            let found = assess(&MONGOOSE, None, Some(&key(breaks.clone())));
            assert_eq!(refused(&found), vec!["counters"], "{breaks}");
        }
        // The optimistic strategy has no counter.
        assert_eq!(
            assess(&OPTIMISTIC, None, Some(&key(doc! { "seq": 1 }))),
            vec![]
        );
    }

    #[test]
    fn gapless_across_shards_costs_a_two_phase_commit() {
        let found = assess(&GAPLESS, Some(&key(doc! { "_id": "hashed" })), None);
        assert_eq!((refused(&found).len(), costs(&found)), (0, 1));
        let found = assess(&GAPLESS, None, Some(&key(doc! { "_id": "hashed" })));
        assert_eq!((refused(&found).len(), costs(&found)), (0, 2));
    }
}
