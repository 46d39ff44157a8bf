//! The fault rig: a SecantusDB of the test's own (restartable), a checking client, the
//! application's client (through a fault proxy or not), and `failCommand` faults.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection};
use seqid::Error;
use seqid::error::ErrorKind;
use seqid_harness::{FaultProxy, RestartableServer};

/// The application name the fault points match, so that the checking client is spared.
pub const APP: &str = "seqid-faults";

/// The name of an error's variant, for the tests' tallies; panics on an error no fault
/// should cause, and on one whose predicates say otherwise than its variant: every error
/// the fault suite meets checks `is_outcome_unknown`, `is_invalid_input` and `driver_error`.
pub fn variant(error: &Error) -> &'static str {
    let unknown = match error.kind() {
        ErrorKind::OutcomeUnknown { .. } => true,
        ErrorKind::Bulk(bulk) => !bulk.unknown.is_empty(),
        _ => false,
    };
    assert_eq!(error.is_outcome_unknown(), unknown, "{error}");
    assert!(
        !error.is_invalid_input(),
        "a fault is no caller's mistake: {error}"
    );
    let driver = matches!(
        error.kind(),
        ErrorKind::Driver { .. } | ErrorKind::OutcomeUnknown { .. }
    );
    assert_eq!(error.driver_error().is_some(), driver, "{error}");
    match error.kind() {
        ErrorKind::Driver { .. } => "Driver",
        ErrorKind::OutcomeUnknown { .. } => "OutcomeUnknown",
        ErrorKind::Bulk(_) => "Bulk",
        ErrorKind::DuplicateKey { .. } => "DuplicateKey",
        ErrorKind::Refused { .. } => "Refused",
        ErrorKind::NoCounter { .. } => "NoCounter",
        ErrorKind::RetriesExhausted { .. } => "RetriesExhausted",
        _ => panic!("an error no fault should cause: {error}"),
    }
}

/// Backoff between the application's own attempts: 20 ms, growing to 500 ms.
pub fn pause(attempt: u32) -> Duration {
    Duration::from_millis((20 << attempt.min(5)).min(500))
}

/// Counts, per command name, the commands that failed as the workload client saw them.
#[derive(Default)]
pub struct Failures(std::sync::Mutex<BTreeMap<String, usize>>);

impl Failures {
    pub fn handler(self: &Arc<Self>) -> EventHandler<CommandEvent> {
        let this = self.clone();
        EventHandler::callback(move |event| {
            if let CommandEvent::Failed(failed) = event {
                *this
                    .0
                    .lock()
                    .unwrap()
                    .entry(failed.command_name)
                    .or_default() += 1;
            }
        })
    }

    pub fn total(&self, command: &str) -> usize {
        self.0.lock().unwrap().get(command).copied().unwrap_or(0)
    }

    pub fn all(&self) -> usize {
        self.0.lock().unwrap().values().sum()
    }

    pub fn reset(&self) {
        self.0.lock().unwrap().clear();
    }
}

/// A SecantusDB of the test's own, a client that checks it directly, and the
/// application's client, through a fault proxy or not.
pub struct Rig {
    pub server: RestartableServer,
    pub checker: Client,
    pub proxy: Option<FaultProxy>,
    pub failures: Arc<Failures>,
    pub app: seqid::Sequences,
}

/// How long the application's client looks for its server after losing it.
#[derive(Clone, Copy, Debug)]
pub enum Selection {
    /// 2 s: calls fail in the application while a planned outage lasts longer (and the
    /// driver's retry does not reach a restarted server: see [`crash_once`]).
    Quick,
    /// 30 s, the driver's default: a "shutting down" answer (`failCommand` errors 91, 11600)
    /// marks the server unknown, and the driver's retry waits for the monitor to find it
    /// again, which took over 2 s once on a loaded machine (CI, stop 45).
    Patient,
}

impl Selection {
    fn timeout(self) -> Duration {
        match self {
            Selection::Quick => Duration::from_secs(2),
            Selection::Patient => Duration::from_secs(30),
        }
    }
}

impl Rig {
    /// A rig whose application client selects its server quickly ([`Selection::Quick`]).
    pub async fn start(through_proxy: bool) -> Rig {
        Rig::start_with(through_proxy, Selection::Quick).await
    }

    pub async fn start_with(through_proxy: bool, selection: Selection) -> Rig {
        let server = RestartableServer::start_async()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let checker = server.client().await.unwrap();
        let proxy = match through_proxy {
            true => {
                let upstream = std::net::SocketAddr::from(([127, 0, 0, 1], server.port()));
                Some(FaultProxy::start(upstream).await.unwrap())
            }
            false => None,
        };
        let uri = proxy.as_ref().map_or_else(|| server.uri(), FaultProxy::uri);
        let failures = Arc::new(Failures::default());
        let app = seqid::Sequences::new(&app_client(&uri, &failures, selection).await);
        Rig {
            server,
            checker,
            proxy,
            failures,
            app,
        }
    }

    pub fn proxy(&self) -> &FaultProxy {
        self.proxy.as_ref().expect("a rig with a proxy")
    }
}

/// The application's client: retryable writes as by default, quick rediscovery after a
/// "shutting down" error, and a short connect timeout; `selection` says how long a call
/// looks for the server.
pub async fn app_client(uri: &str, failures: &Arc<Failures>, selection: Selection) -> Client {
    let mut options = ClientOptions::parse(uri).await.unwrap();
    options.app_name = Some(APP.into());
    options.heartbeat_freq = Some(Duration::from_millis(500));
    options.server_selection_timeout = Some(selection.timeout());
    options.connect_timeout = Some(Duration::from_secs(2));
    options.command_event_handler = Some(failures.handler());
    Client::with_options(options).unwrap()
}

/// A `failCommand` fault.
#[derive(Clone, Debug)]
pub struct FailCommand {
    pub name: String,
    pub times: u32,
    pub data: BsonDocument,
    /// The driver's own retry absorbs it: the application sees no error.
    pub absorbed: bool,
    pub call_timeout: Option<Duration>,
}

pub fn fail_commands(command: &str) -> Vec<FailCommand> {
    let fault = |name: &str, times: u32, data: BsonDocument, absorbed: bool| FailCommand {
        name: format!("{name} x{times}"),
        times,
        data,
        absorbed,
        call_timeout: None,
    };
    let mut all = vec![
        fault("closeConnection", 1, doc! { "closeConnection": true }, true),
        fault(
            "closeConnection",
            2,
            doc! { "closeConnection": true },
            false,
        ),
    ];
    for code in [91, 189, 11600] {
        all.push(fault(
            &format!("error {code}"),
            1,
            doc! { "errorCode": code },
            true,
        ));
        all.push(fault(
            &format!("error {code}"),
            2,
            doc! { "errorCode": code },
            false,
        ));
    }
    all.push(fault(
        "error 50 (not retryable)",
        1,
        doc! { "errorCode": 50 },
        false,
    ));
    all.push(fault(
        "error 112 WriteConflict",
        1,
        doc! { "errorCode": 112 },
        false,
    ));
    all.push(FailCommand {
        call_timeout: Some(Duration::from_millis(150)),
        ..fault(
            "blockConnection 600 ms, caller gives up at 150 ms",
            1,
            doc! { "blockConnection": true, "blockTimeMS": 600 },
            false,
        )
    });
    // `find` is a read: the driver retries reads too, and `absorbed` holds for it.
    let _ = command;
    all
}

/// A counter upsert that does not take the counter, once. `failCommand` cannot make a
/// duplicate key error (it lacks the key's details, a refusal as on MongoDB), so the
/// stand-in is TypeMismatch, the other answer seqid reads as "the upsert did not take
/// the counter".
pub fn unmatched_upsert() -> FailCommand {
    FailCommand {
        name: "error 14".into(),
        times: 1,
        data: doc! { "errorCode": 14 },
        absorbed: false,
        call_timeout: None,
    }
}

pub async fn configure(checker: &Client, command: &str, fault: Option<&FailCommand>) {
    let admin = checker.database("admin");
    let command = match fault {
        Some(fault) => {
            let mut data = fault.data.clone();
            data.insert("failCommands", vec![Bson::from(command)]);
            data.insert("appName", APP);
            doc! {
                "configureFailPoint": "failCommand",
                "mode": { "times": fault.times as i32 },
                "data": data,
            }
        }
        None => doc! { "configureFailPoint": "failCommand", "mode": "off" },
    };
    admin.run_command(command).await.unwrap();
}

/// Loses the replies to `command` (or, `late`, delivers its requests 3 s late, after the
/// client has given up), two in a row, three times, while a workload runs: matching
/// requests, whoever sends them, so that some attempt and its retry are both lost.
pub async fn twice_in_a_row_three_times(proxy: &FaultProxy, command: &str, late: bool) {
    for _ in 0..3 {
        if late {
            proxy.deliver_late(command, None, 2, Duration::from_secs(3));
        } else {
            proxy.lose_reply(command, None, 2);
        }
        for _ in 0..400 {
            if proxy.armed() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    proxy.disarm_all();
}

/// Loses a reply to `command` now and then, five times: one at a time, re-armed only
/// once the lost request's retry has passed, so that each retry gets through.
///
/// The proxy counts a request and matches it against the rules in one step, so once the
/// rule is seen spent the count includes the lost request, and the next request counted
/// (its retry: one task sends them one at a time) went by with no rule armed.
pub async fn lose_one_reply_at_a_time(proxy: &FaultProxy, command: &str) {
    async fn until(mut done: impl FnMut() -> bool) {
        for _ in 0..2000 {
            if done() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    for _ in 0..5 {
        proxy.lose_reply(command, None, 1);
        until(|| proxy.armed() == 0).await;
        let with_lost = proxy.requests(command);
        until(|| proxy.requests(command) > with_lost).await;
    }
    proxy.disarm_all();
}

/// Waits until `docs` holds `threshold` documents (or 6 s); returns how many it saw.
pub async fn until_stored(docs: &Collection<BsonDocument>, threshold: usize) -> usize {
    let mut stored = 0;
    for _ in 0..600 {
        stored = docs.estimated_document_count().await.unwrap_or(0) as usize;
        if stored >= threshold {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stored
}

/// Once `docs` holds `threshold` documents (or after 6 s), kills the server (SIGKILL)
/// and restarts it on the same port and data; returns how many documents it had seen.
pub async fn crash_once(
    server: &RestartableServer,
    docs: &Collection<BsonDocument>,
    threshold: usize,
) -> usize {
    let stored = until_stored(docs, threshold).await;
    // Down longer than the client's server selection timeout (2 s): calls fail in the
    // application, not only inside the driver's retry. It also keeps the driver's retry from
    // reaching the restarted server, a work-around for SecantusDB 0.7.0b3, which forgets
    // its retryable writes' records when restarted and would run the retry again against
    // the first attempt's own copy (`faults::a_retried_insert_meets_its_own_first_attempt_
    // after_a_restart_on_secantusdb`; MongoDB answers it from the record). The writers
    // resume instead, as the guide says.
    server.kill().unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    server.restart_async().await.unwrap();
    stored
}
