//! Presenting the server as a mongos
//! ([`present_as_mongos`](FaultProxy::present_as_mongos)): its `hello`
//! replies rewritten, and `config.collections` reads answered from the
//! entries of [`shard_collection`](FaultProxy::shard_collection), and counted.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mongodb::bson::{Bson, Document, RawDocument, doc};

use super::wire::{CHECKSUM_PRESENT, Message, OP_MSG};
use super::{FaultProxy, lock};

/// The fields of a replica set member's `hello` reply that a mongos never
/// sends: with any of them the driver would not take the server for a mongos
/// (`setName`, `isreplicaset`), or would try to discover the set's members.
const REPLICA_SET_HELLO_FIELDS: [&str; 14] = [
    "setName",
    "setVersion",
    "hosts",
    "passives",
    "arbiters",
    "primary",
    "me",
    "secondary",
    "electionId",
    "lastWrite",
    "isreplicaset",
    "tags",
    "arbiterOnly",
    "hidden",
];

/// The mongos presentation's state, shared by the proxy handle and its tasks.
#[derive(Default)]
pub(super) struct Mongos {
    /// [`FaultProxy::present_as_mongos`].
    pub(super) on: AtomicBool,
    /// The `config.collections` documents served while presenting as a
    /// mongos, by namespace.
    sharded: Mutex<BTreeMap<String, Document>>,
    /// `config.collections` reads answered by the proxy.
    config_reads: AtomicUsize,
}

impl Mongos {
    /// The proxy's own answer to a `config.collections` read: the configured
    /// documents that `read` selects, as a whole cursor.
    pub(super) fn answer_config_read(&self, read: &ConfigRead) -> Document {
        let sharded = lock(&self.sharded);
        let mut batch: Vec<Bson> = sharded
            .values()
            .filter(|entry| read.selects(entry))
            .map(|entry| Bson::Document(entry.clone()))
            .collect();
        if let Some(limit) = read.limit {
            batch.truncate(limit);
        }
        self.config_reads.fetch_add(1, Ordering::SeqCst);
        doc! {
            "cursor": { "firstBatch": batch, "id": 0_i64, "ns": "config.collections" },
            "ok": 1.0,
        }
    }
}

impl FaultProxy {
    /// While `on`, presents the server as a `mongos` (a sharded cluster's
    /// router) to the clients of the proxy; off by default, when everything is
    /// forwarded unchanged. Takes effect for the next message on every
    /// connection: the driver learns of it at its next handshake or
    /// monitoring check, so turn it on before the client connects.
    ///
    /// While on:
    ///
    /// - every reply to `hello` / `isMaster` (recognized by its content, a
    ///   top-level `isWritablePrimary` or `ismaster` field, whether an
    ///   `OP_MSG`, a streamed monitoring reply flagged `moreToCome`, or the
    ///   legacy `OP_REPLY` to a first handshake sent as `OP_QUERY`) gets
    ///   `msg: "isdbgrid"`, and loses the replica-set fields a mongos never
    ///   sends (`setName`, `setVersion`, `hosts`, `passives`, `arbiters`,
    ///   `primary`, `me`, `secondary`, `electionId`, `lastWrite`,
    ///   `isreplicaset`, `tags`, `arbiterOnly`, `hidden`); the rest is kept
    ///   (`isWritablePrimary`, `maxWireVersion`,
    ///   `logicalSessionTimeoutMinutes`, `topologyVersion`, `$clusterTime`,
    ///   ...). A rewritten `OP_MSG` drops its checksum, if it had one (the
    ///   checksum is optional). Compressed replies (`OP_COMPRESSED`) pass
    ///   unchanged: do not enable compression on a client of the proxy.
    /// - a `find` on `config.collections` (`find: "collections"`,
    ///   `$db: "config"`) is answered by the proxy and never forwarded: one
    ///   batch (cursor id 0) of the [`shard_collection`](FaultProxy::shard_collection)
    ///   entries its `filter` selects, in namespace order. The filters
    ///   understood are none or `{}` (all), `{ _id: <ns> }` and
    ///   `{ _id: { $in: [<ns>, ...] } }`; any other filter answers all the
    ///   entries. A positive `limit` is applied; `projection`, `sort` and
    ///   `skip` are ignored. [`config_reads`](FaultProxy::config_reads) counts
    ///   the answers. Such a read is counted by [`requests`](FaultProxy::requests)
    ///   and matched against the rules; one that a rule catches is never
    ///   answered and its connection is closed, whatever the rule (nothing of it
    ///   reaches the server in any case; a `deliver_late` counts as delivered at
    ///   once, so that waiting on [`late_deliveries`](FaultProxy::late_deliveries)
    ///   ends). Not for a read that starts a transaction: the server would never
    ///   see the transaction start.
    ///
    /// Everything else is forwarded as always: CRUD, sessions and transactions
    /// are the server's own.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// use mongodb::bson::doc;
    /// let proxy = seqid_harness::FaultProxy::for_server().await?;
    /// proxy.present_as_mongos(true);
    /// let client = mongodb::Client::with_uri_str(proxy.uri()).await?;
    /// let hello = client.database("admin").run_command(doc! { "hello": 1 }).await?;
    /// assert_eq!(hello.get_str("msg")?, "isdbgrid");
    /// # Ok(()) }
    /// ```
    pub fn present_as_mongos(&self, on: bool) {
        self.shared.mongos.on.store(on, Ordering::SeqCst);
    }

    /// Whether the proxy presents the server as a mongos:
    /// [`present_as_mongos`](FaultProxy::present_as_mongos).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// if proxy.presents_as_mongos() {
    ///     println!("the clients of {} see a mongos", proxy.uri());
    /// }
    /// # }
    /// ```
    pub fn presents_as_mongos(&self) -> bool {
        self.shared.mongos.on.load(Ordering::SeqCst)
    }

    /// Serves `entry` as the `config.collections` document of the namespace
    /// `ns` (`"db.coll"`) while the proxy presents the server as a mongos
    /// ([`present_as_mongos`](FaultProxy::present_as_mongos)), replacing any
    /// entry of `ns` before. `_id: ns` is added if `entry` has no `_id`.
    /// Nothing is sharded on the server: only the proxy's answers to
    /// `config.collections` reads change.
    ///
    /// A real entry looks like `{ _id: "db.coll", lastmodEpoch: ObjectId,
    /// lastmod: Date, timestamp: Timestamp, uuid: Binary, key: { _id: "hashed" },
    /// unique: false, noBalance: false }`; give the fields the code under test
    /// reads.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// use mongodb::bson::doc;
    /// proxy.shard_collection("shop.orders", doc! { "key": { "customer": 1 }, "unique": false });
    /// # }
    /// ```
    pub fn shard_collection(&self, ns: &str, mut entry: Document) {
        if !entry.contains_key("_id") {
            // `_id` first, as in a real entry.
            let mut with_id = doc! { "_id": ns };
            with_id.extend(entry);
            entry = with_id;
        }
        lock(&self.shared.mongos.sharded).insert(ns.to_owned(), entry);
    }

    /// Stops serving a `config.collections` document for `ns`
    /// ([`shard_collection`](FaultProxy::shard_collection)); nothing if there
    /// was none.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.unshard_collection("shop.orders");
    /// # }
    /// ```
    pub fn unshard_collection(&self, ns: &str) {
        lock(&self.shared.mongos.sharded).remove(ns);
    }

    /// How many `config.collections` reads the proxy has answered itself
    /// while presenting the server as a mongos
    /// ([`present_as_mongos`](FaultProxy::present_as_mongos)).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// println!("{} reads of config.collections", proxy.config_reads());
    /// # }
    /// ```
    pub fn config_reads(&self) -> usize {
        self.shared.mongos.config_reads.load(Ordering::SeqCst)
    }
}

impl Message {
    /// This reply as a mongos would send it, if it answers `hello` /
    /// `isMaster` (see [`FaultProxy::present_as_mongos`]); `None` for any
    /// other message, which is forwarded as it is.
    pub(super) fn as_mongos_hello(&self) -> Option<Message> {
        let range = self.body_range()?;
        let body = RawDocument::from_bytes(&self.bytes[range.clone()]).ok()?;
        if !body
            .iter()
            .flatten()
            .any(|(key, _)| key == "isWritablePrimary" || key == "ismaster")
        {
            return None;
        }
        let mut hello = Document::try_from(body).ok()?;
        for field in REPLICA_SET_HELLO_FIELDS {
            hello.remove(field);
        }
        hello.insert("msg", "isdbgrid");
        let hello = mongodb::bson::to_vec(&hello).ok()?;
        let mut end = self.bytes.len();
        let mut bytes = Vec::with_capacity(end + 16);
        bytes.extend_from_slice(&self.bytes[..range.start]);
        bytes.extend_from_slice(&hello);
        if self.op_code() == OP_MSG {
            // The checksum covers the old bytes: drop it rather than compute
            // a CRC-32C (it is optional, and no test client asks for one).
            if self.flags() & CHECKSUM_PRESENT != 0 {
                end -= 4;
                let flags = self.flags() & !CHECKSUM_PRESENT;
                bytes[16..20].copy_from_slice(&flags.to_le_bytes());
            }
            // Sections after the body, if any (a reply has none in practice).
            bytes.extend_from_slice(&self.bytes[range.end..end]);
        }
        let len = i32::try_from(bytes.len()).ok()?;
        bytes[0..4].copy_from_slice(&len.to_le_bytes());
        Some(Message { bytes })
    }

    /// The `config.collections` read this request is, if it is one.
    pub(super) fn config_read(&self) -> Option<ConfigRead> {
        if self.op_code() != OP_MSG {
            return None;
        }
        let body = self.body()?;
        let (name, value) = body.iter().next()?.ok()?;
        if name != "find"
            || value.as_str() != Some("collections")
            || body.get_str("$db").ok() != Some("config")
        {
            return None;
        }
        let filter = match body.get_document("filter") {
            Ok(filter) => Some(Document::try_from(filter).ok()?),
            Err(_) => None,
        };
        let limit = body
            .get("limit")
            .ok()
            .flatten()
            .and_then(
                |limit| match limit.as_i64().or(limit.as_i32().map(i64::from)) {
                    Some(n) => Some(n),
                    None => limit.as_f64().map(|n| n as i64),
                },
            )
            .map(|n| n.unsigned_abs())
            .filter(|&n| n > 0)
            .and_then(|n| usize::try_from(n).ok());
        Some(ConfigRead { filter, limit })
    }
}

/// A `find` on `config.collections`, as the proxy understands it.
#[derive(Debug)]
pub(super) struct ConfigRead {
    filter: Option<Document>,
    /// A positive `limit` (a negative one, a single batch, taken as positive).
    limit: Option<usize>,
}

impl ConfigRead {
    /// Whether the filter selects `entry`: no filter or `{}`, `{ _id: <ns> }`
    /// and `{ _id: { $in: [...] } }` are understood; any other filter selects
    /// everything.
    fn selects(&self, entry: &Document) -> bool {
        let Some(filter) = &self.filter else {
            return true;
        };
        let (Some(wanted), 1) = (filter.get("_id"), filter.len()) else {
            return true;
        };
        let id = entry.get("_id");
        match wanted {
            Bson::Document(op) => match (op.get_array("$in"), op.len()) {
                (Ok(any_of), 1) => any_of.iter().any(|ns| Some(ns) == id),
                _ => true,
            },
            ns => Some(ns) == id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::wire::{MORE_TO_COME, OP_REPLY, OP_REPLY_DOCUMENTS};

    /// A message of `op_code` with `prefix` after the header, then `docs`.
    fn message(op_code: i32, prefix: &[u8], docs: &[&Document]) -> Message {
        let mut bytes = vec![0u8; 16];
        bytes.extend_from_slice(prefix);
        for doc in docs {
            bytes.extend_from_slice(&mongodb::bson::to_vec(doc).unwrap());
        }
        let len = bytes.len() as i32;
        bytes[0..4].copy_from_slice(&len.to_le_bytes());
        bytes[4..8].copy_from_slice(&7_i32.to_le_bytes());
        bytes[8..12].copy_from_slice(&5_i32.to_le_bytes());
        bytes[12..16].copy_from_slice(&op_code.to_le_bytes());
        Message { bytes }
    }

    fn replica_set_hello() -> Document {
        use mongodb::bson::oid::ObjectId;
        doc! {
            "helloOk": true,
            "ismaster": true,
            "topologyVersion": { "processId": ObjectId::new(), "counter": 0_i64 },
            "hosts": ["127.0.0.1:5"],
            "setName": "rs0",
            "setVersion": 1,
            "secondary": false,
            "primary": "127.0.0.1:5",
            "me": "127.0.0.1:5",
            "electionId": ObjectId::new(),
            "lastWrite": { "opTime": { "ts": 1_i64 } },
            "isreplicaset": false,
            "maxWireVersion": 21,
            "logicalSessionTimeoutMinutes": 30,
            "ok": 1.0,
        }
    }

    fn as_mongos_checks(rewritten: &Message, original: &Message, at: usize) {
        assert_eq!(
            rewritten.i32_at(0) as usize,
            rewritten.bytes.len(),
            "length fixed"
        );
        assert_eq!(rewritten.request_id(), original.request_id());
        assert_eq!(rewritten.response_to(), original.response_to());
        assert_eq!(rewritten.op_code(), original.op_code());
        assert_eq!(&rewritten.bytes[16..at], &original.bytes[16..at]);
        let hello = Document::try_from(rewritten.body().unwrap()).unwrap();
        assert_eq!(hello.get_str("msg"), Ok("isdbgrid"));
        for field in REPLICA_SET_HELLO_FIELDS {
            assert!(!hello.contains_key(field), "{field} in {hello}");
        }
        assert!(hello.contains_key("ismaster") || hello.contains_key("isWritablePrimary"));
        for kept in [
            "helloOk",
            "topologyVersion",
            "maxWireVersion",
            "logicalSessionTimeoutMinutes",
            "ok",
        ] {
            assert!(hello.contains_key(kept), "{kept} missing from {hello}");
        }
    }

    #[test]
    fn as_mongos_rewrites_an_op_reply() {
        // responseFlags, cursorID, startingFrom, numberReturned.
        let mut prefix = Vec::new();
        prefix.extend_from_slice(&8_i32.to_le_bytes());
        prefix.extend_from_slice(&0_i64.to_le_bytes());
        prefix.extend_from_slice(&0_i32.to_le_bytes());
        prefix.extend_from_slice(&1_i32.to_le_bytes());
        let original = message(OP_REPLY, &prefix, &[&replica_set_hello()]);
        let rewritten = original.as_mongos_hello().unwrap();
        as_mongos_checks(&rewritten, &original, OP_REPLY_DOCUMENTS);
        assert!(rewritten.bytes.len() < original.bytes.len());
    }

    #[test]
    fn as_mongos_rewrites_a_streamed_op_msg_and_drops_its_checksum() {
        let flags = MORE_TO_COME | CHECKSUM_PRESENT;
        let mut prefix = flags.to_le_bytes().to_vec();
        prefix.push(0);
        let mut hello = replica_set_hello();
        hello.remove("ismaster");
        hello.insert("isWritablePrimary", true);
        let mut original = message(OP_MSG, &prefix, &[&hello]);
        original.bytes.extend_from_slice(&[1, 2, 3, 4]);
        let len = original.bytes.len() as i32;
        original.bytes[0..4].copy_from_slice(&len.to_le_bytes());
        let rewritten = original.as_mongos_hello().unwrap();
        assert_eq!(rewritten.flags(), MORE_TO_COME);
        assert!(rewritten.more_to_come());
        // The kind-0 section byte is kept.
        assert_eq!(rewritten.bytes[20], 0);
        let body = Document::try_from(rewritten.body().unwrap()).unwrap();
        assert_eq!(body.get_bool("isWritablePrimary"), Ok(true));
        assert_eq!(
            rewritten.body_range().unwrap().end,
            rewritten.bytes.len(),
            "no checksum left"
        );
        as_mongos_checks(&rewritten, &original, 16);
    }

    #[test]
    fn as_mongos_leaves_other_replies_alone() {
        let mut prefix = 0u32.to_le_bytes().to_vec();
        prefix.push(0);
        let reply = message(OP_MSG, &prefix, &[&doc! { "n": 1, "ok": 1.0 }]);
        assert!(reply.as_mongos_hello().is_none());
        // A failed hello carries no role: nothing to present.
        let failed = message(OP_MSG, &prefix, &[&doc! { "ok": 0.0, "errmsg": "x" }]);
        assert!(failed.as_mongos_hello().is_none());
    }

    #[test]
    fn as_mongos_config_collections_reads_and_their_filters() {
        let read = |body: Document| {
            let mut prefix = 0u32.to_le_bytes().to_vec();
            prefix.push(0);
            message(OP_MSG, &prefix, &[&body]).config_read()
        };
        assert!(read(doc! { "find": "collections", "$db": "other" }).is_none());
        assert!(read(doc! { "find": "chunks", "$db": "config" }).is_none());
        assert!(read(doc! { "aggregate": "collections", "$db": "config" }).is_none());

        let entries = [doc! { "_id": "a.x" }, doc! { "_id": "b.y" }];
        let selected = |body: Document| {
            let read = read(body).unwrap();
            entries
                .iter()
                .filter(|e| read.selects(e))
                .map(|e| e.get_str("_id").unwrap())
                .collect::<Vec<_>>()
        };
        let all = vec!["a.x", "b.y"];
        assert_eq!(
            selected(doc! { "find": "collections", "$db": "config" }),
            all
        );
        assert_eq!(
            selected(doc! { "find": "collections", "filter": {}, "$db": "config" }),
            all
        );
        assert_eq!(
            selected(doc! { "find": "collections", "filter": { "_id": "b.y" }, "$db": "config" }),
            vec!["b.y"]
        );
        assert_eq!(
            selected(doc! {
                "find": "collections",
                "filter": { "_id": { "$in": ["a.x", "c.z"] } },
                "$db": "config",
            }),
            vec!["a.x"]
        );
        // Filters not understood select everything.
        assert_eq!(
            selected(doc! { "find": "collections", "filter": { "key": 1 }, "$db": "config" }),
            all
        );
        let limited = read(doc! { "find": "collections", "limit": 1_i64, "$db": "config" });
        assert_eq!(limited.unwrap().limit, Some(1));
    }
}
