//! [`CommandCounter`]: counting the commands a client sends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;

/// Counts the commands a client sends, by name, through command monitoring.
///
/// Attach [`handler`](CommandCounter::handler) as the client's
/// `command_event_handler` (see [`client_with`](crate::client_with),
/// [`test_db_with`](crate::test_db_with)); every `CommandStarted` event is
/// counted. Commands are counted synchronously, so a count is up to date as
/// soon as the operation's future has completed.
///
/// ```no_run
/// # async fn f() {
/// use mongodb::bson::doc;
/// let counter = seqid_harness::CommandCounter::new();
/// let db = seqid_harness::test_db_with("c", |o| {
///     o.command_event_handler = Some(counter.handler())
/// })
/// .await;
/// let coll = db.collection::<mongodb::bson::Document>("c");
/// coll.find_one_and_update(doc! {}, doc! { "$inc": { "n": 1 } }).await.unwrap();
/// assert_eq!(counter.count("findAndModify"), 1);
/// assert_eq!(counter.total(), 1);
/// counter.reset();
/// # }
/// ```
#[derive(Debug, Default)]
pub struct CommandCounter {
    counts: Mutex<HashMap<String, u64>>,
}

/// Commands that drivers send on their own (handshake, monitoring, auth,
/// session cleanup) and that [`CommandCounter::total`] leaves out.
const NOISE_COMMANDS: &[&str] = &[
    "hello",
    "ismaster",
    "ping",
    "endsessions",
    "buildinfo",
    "saslstart",
    "saslcontinue",
    "authenticate",
    "getnonce",
    "killallsessions",
];

impl CommandCounter {
    /// A new counter with all counts at zero.
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// assert_eq!(counter.total(), 0);
    /// ```
    pub fn new() -> Arc<CommandCounter> {
        Arc::new(CommandCounter::default())
    }

    /// An event handler counting into this counter, for
    /// [`ClientOptions::command_event_handler`].
    ///
    /// [`ClientOptions::command_event_handler`]: mongodb::options::ClientOptions::command_event_handler
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let counter = seqid_harness::CommandCounter::new();
    /// let client = seqid_harness::client_with(|o| {
    ///     o.command_event_handler = Some(counter.handler())
    /// })
    /// .await?;
    /// # Ok(()) }
    /// ```
    pub fn handler(self: &Arc<Self>) -> EventHandler<CommandEvent> {
        let this = Arc::clone(self);
        EventHandler::callback(move |event| {
            if let CommandEvent::Started(started) = event {
                *this.lock().entry(started.command_name).or_insert(0) += 1;
            }
        })
    }

    /// How many commands named `command_name` (e.g. `"findAndModify"`,
    /// `"insert"`, `"update"`, `"find"`) were started. Any command counts here,
    /// including the ones [`total`](CommandCounter::total) leaves out.
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// assert_eq!(counter.count("findAndModify"), 0);
    /// ```
    pub fn count(&self, command_name: &str) -> u64 {
        self.lock().get(command_name).copied().unwrap_or(0)
    }

    /// All commands started, except driver housekeeping: `hello`/`isMaster`,
    /// `ping`, `endSessions`, `buildInfo` and authentication commands.
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// assert_eq!(counter.total(), 0);
    /// ```
    pub fn total(&self) -> u64 {
        self.lock()
            .iter()
            .filter(|(name, _)| !NOISE_COMMANDS.contains(&name.to_ascii_lowercase().as_str()))
            .map(|(_, n)| n)
            .sum()
    }

    /// Every count so far, by command name (housekeeping included).
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// for (name, n) in counter.snapshot() {
    ///     println!("{name}: {n}");
    /// }
    /// ```
    pub fn snapshot(&self) -> HashMap<String, u64> {
        self.lock().clone()
    }

    /// Sets all counts back to zero.
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// counter.reset();
    /// ```
    pub fn reset(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }
}
