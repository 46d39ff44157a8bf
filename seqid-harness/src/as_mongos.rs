//! `SEQID_TEST_AS_MONGOS`: the harness's clients see every test server through
//! a [`FaultProxy`] that presents it as a mongos.

use std::sync::OnceLock;
use std::sync::mpsc;

use tokio::runtime::Runtime;

use crate::{FaultProxy, HarnessError};

/// Whether `SEQID_TEST_AS_MONGOS` is on (`1` or `true`), read once per
/// process: the harness's clients of test databases then see their server as
/// a mongos, through a [`FaultProxy`] per server (see the crate docs).
///
/// ```no_run
/// # async fn f() {
/// let db = seqid_harness::test_db("sharded").await;
/// if seqid_harness::as_mongos() {
///     let proxy = seqid_harness::mongos_proxy_for(&db).unwrap();
///     assert!(proxy.presents_as_mongos());
/// }
/// # }
/// ```
pub fn as_mongos() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("SEQID_TEST_AS_MONGOS")
            .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true"))
    })
}

/// The proxy in front of one server, and its URI.
pub(crate) struct MongosFront {
    pub(crate) proxy: FaultProxy,
    pub(crate) uri: String,
}

/// Starts a proxy presenting the server at `uri` as a mongos, on the
/// harness's own runtime: a server (and so its proxy) outlives the tests'
/// runtimes (one per `#[tokio::test]`), whose end would stop a proxy's tasks.
/// Works from sync code and from inside any runtime.
pub(crate) fn start_front(uri: &str) -> Result<MongosFront, HarnessError> {
    let upstream = crate::proxy::addr_of_uri(uri).map_err(|e| {
        HarnessError::other(format!(
            "seqid-harness: SEQID_TEST_AS_MONGOS: cannot proxy the test server: {e}"
        ))
    })?;
    let cannot = |e: String| {
        HarnessError::other(format!(
            "seqid-harness: SEQID_TEST_AS_MONGOS: cannot start the mongos proxy: {e}"
        ))
    };
    // `block_on` would panic inside a runtime: hand the start over instead,
    // and wait for it on this thread (a bind, microseconds).
    let (tx, rx) = mpsc::channel();
    runtime().map_err(cannot)?.spawn(async move {
        let _ = tx.send(FaultProxy::start(upstream).await);
    });
    let proxy = rx
        .recv()
        .map_err(|e| cannot(e.to_string()))?
        .map_err(|e| cannot(e.to_string()))?;
    proxy.present_as_mongos(true);
    let uri = proxy.uri();
    Ok(MongosFront { proxy, uri })
}

/// The runtime the mongos proxies run on, for the life of the process.
fn runtime() -> Result<&'static Runtime, String> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("seqid-harness-mongos")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}
