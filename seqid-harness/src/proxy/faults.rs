//! The faults a [`FaultProxy`] injects: the rules armed through it and
//! matched against each request, pausing and severing, and the counters of
//! what fired and of the requests seen.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use super::{FaultProxy, lock};

/// The kinds of fault a [`FaultProxy`] injects, for [`FaultProxy::fired_of`].
///
/// ```no_run
/// # async fn f(proxy: &seqid_harness::FaultProxy) {
/// use seqid_harness::Fault;
/// proxy.lose_reply("insert", Some("c"), 1);
/// // ... an insert_one through the proxy fails ...
/// assert_eq!(proxy.fired_of(Fault::LoseReply), 1);
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// [`FaultProxy::lose_reply`]: executed, but the reply was lost.
    LoseReply,
    /// [`FaultProxy::deliver_late`]: delivered after the client gave up.
    DeliverLate,
    /// [`FaultProxy::cut_before_request`]: never delivered.
    CutBeforeRequest,
}

impl Fault {
    fn index(self) -> usize {
        match self {
            Fault::LoseReply => 0,
            Fault::DeliverLate => 1,
            Fault::CutBeforeRequest => 2,
        }
    }
}

/// What a rule does to a matching request.
#[derive(Clone, Copy, Debug)]
pub(super) enum Action {
    LoseReply,
    DeliverLate(Duration),
    CutBeforeRequest,
}

impl Action {
    fn fault(self) -> Fault {
        match self {
            Action::LoseReply => Fault::LoseReply,
            Action::DeliverLate(_) => Fault::DeliverLate,
            Action::CutBeforeRequest => Fault::CutBeforeRequest,
        }
    }
}

/// An armed rule: `action` for the next `remaining` matching requests.
#[derive(Debug)]
struct Rule {
    command: String,
    collection: Option<String>,
    remaining: usize,
    action: Action,
}

/// The armed rules, what they fired, the requests seen and the pause, shared
/// by the proxy handle and its tasks.
#[derive(Default)]
pub(super) struct Faults {
    rules: Mutex<Vec<Rule>>,
    fired: [AtomicUsize; 3],
    pub(super) late_delivered: AtomicUsize,
    /// Requests seen, by lower-cased command name.
    requests: Mutex<HashMap<String, usize>>,
    paused: watch::Sender<bool>,
}

impl Faults {
    /// The action for a request of `command` on `target`, consuming one
    /// `times` of the first armed rule that matches.
    /// Counts a request and takes the first rule it matches, if any, in one step
    /// under the rules' lock: whoever sees the rules (`armed`) or the count after it
    /// sees both, so a rule armed once a request was counted cannot catch that request.
    pub(super) fn admit(&self, command: &str, target: Option<&str>) -> Option<Action> {
        let mut rules = lock(&self.rules);
        *lock(&self.requests)
            .entry(command.to_ascii_lowercase())
            .or_default() += 1;
        let i = rules.iter().position(|rule| {
            rule.command.eq_ignore_ascii_case(command)
                && rule
                    .collection
                    .as_deref()
                    .is_none_or(|wanted| Some(wanted) == target)
        })?;
        let action = rules[i].action;
        rules[i].remaining -= 1;
        if rules[i].remaining == 0 {
            rules.remove(i);
        }
        self.fired[action.fault().index()].fetch_add(1, Ordering::SeqCst);
        Some(action)
    }

    /// Returns at once unless the proxy is paused, else when it is resumed.
    pub(super) async fn unpaused(&self) {
        let mut paused = self.paused.subscribe();
        // The sender lives in `self`, so this only ends by a resume.
        let _ = paused.wait_for(|paused| !*paused).await;
    }
}

impl FaultProxy {
    /// Loses the reply to the next `times` requests of `command` (e.g.
    /// `"insert"`, `"findAndModify"`; case-insensitive) on `collection` (any,
    /// if `None`): the request is forwarded, and when the server's reply
    /// arrives it is discarded and the client's connection closed. The client
    /// sees a network error although the server executed the command.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.lose_reply("findAndModify", Some("counters"), 1);
    /// # }
    /// ```
    pub fn lose_reply(&self, command: &str, collection: Option<&str>, times: usize) {
        self.arm(command, collection, times, Action::LoseReply);
    }

    /// Delivers the next `times` requests of `command` on `collection` (any,
    /// if `None`) late: the client's connection is closed at once, before any
    /// reply, and the request is sent to the server `delay` later on the same
    /// upstream connection (or a fresh one if that one broke meanwhile). Its
    /// reply is discarded; [`late_deliveries`](FaultProxy::late_deliveries)
    /// counts the replies received. A late delivery still waiting when the
    /// proxy is dropped is abandoned; [`sever_all`](FaultProxy::sever_all)
    /// does not cancel it.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// use std::time::Duration;
    /// proxy.deliver_late("insert", None, 1, Duration::from_millis(500));
    /// # }
    /// ```
    pub fn deliver_late(
        &self,
        command: &str,
        collection: Option<&str>,
        times: usize,
        delay: Duration,
    ) {
        self.arm(command, collection, times, Action::DeliverLate(delay));
    }

    /// Cuts the connection before the next `times` requests of `command` on
    /// `collection` (any, if `None`): the client's connection is closed and
    /// the request is never forwarded, so the server executes nothing.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.cut_before_request("update", Some("c"), 2);
    /// # }
    /// ```
    pub fn cut_before_request(&self, command: &str, collection: Option<&str>, times: usize) {
        self.arm(command, collection, times, Action::CutBeforeRequest);
    }

    fn arm(&self, command: &str, collection: Option<&str>, times: usize, action: Action) {
        if times == 0 {
            return;
        }
        lock(&self.shared.faults.rules).push(Rule {
            command: command.to_owned(),
            collection: collection.map(str::to_owned),
            remaining: times,
            action,
        });
    }

    /// Disarms every rule that has not fired its `times` yet.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.lose_reply("insert", None, 10);
    /// proxy.disarm_all();
    /// assert_eq!(proxy.armed(), 0);
    /// # }
    /// ```
    pub fn disarm_all(&self) {
        lock(&self.shared.faults.rules).clear();
    }

    /// How many more faults the armed rules will inject (the sum of their
    /// remaining `times`).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.cut_before_request("insert", None, 2);
    /// assert_eq!(proxy.armed(), 2);
    /// # }
    /// ```
    pub fn armed(&self) -> usize {
        lock(&self.shared.faults.rules)
            .iter()
            .map(|r| r.remaining)
            .sum()
    }

    /// Closes every current connection, client and server side, at once: a
    /// network blip. New connections are accepted as before. The connections
    /// are closed by their tasks, i.e. within moments rather than before this
    /// returns; late deliveries already scheduled still happen.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.sever_all();
    /// # }
    /// ```
    pub fn sever_all(&self) {
        self.events.send_modify(|epoch| *epoch += 1);
    }

    /// Stalls every request, on existing and new connections, until
    /// [`resume`](FaultProxy::resume) (or the proxy is dropped); replies
    /// already on their way still arrive. Requests are matched against the
    /// rules when they are released.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.pause();
    /// // ... operations through the proxy time out ...
    /// proxy.resume();
    /// # }
    /// ```
    pub fn pause(&self) {
        self.shared.faults.paused.send_replace(true);
    }

    /// Ends a [`pause`](FaultProxy::pause): stalled requests are forwarded.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.resume();
    /// # }
    /// ```
    pub fn resume(&self) {
        self.shared.faults.paused.send_replace(false);
    }

    /// How many faults the rules have injected in total.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// assert_eq!(proxy.fired(), 0);
    /// # }
    /// ```
    pub fn fired(&self) -> usize {
        self.shared
            .faults
            .fired
            .iter()
            .map(|n| n.load(Ordering::SeqCst))
            .sum()
    }

    /// How many faults of one kind the rules have injected.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// assert_eq!(proxy.fired_of(seqid_harness::Fault::DeliverLate), 0);
    /// # }
    /// ```
    pub fn fired_of(&self, fault: Fault) -> usize {
        self.shared.faults.fired[fault.index()].load(Ordering::SeqCst)
    }

    /// How many late deliveries ([`deliver_late`](FaultProxy::deliver_late))
    /// the server has answered so far: after that, the request is known to
    /// have been executed.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// while proxy.late_deliveries() < proxy.fired_of(seqid_harness::Fault::DeliverLate) {
    ///     tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    /// }
    /// # }
    /// ```
    pub fn late_deliveries(&self) -> usize {
        self.shared.faults.late_delivered.load(Ordering::SeqCst)
    }

    /// How many requests of `command` (case-insensitive) clients have sent
    /// through the proxy, faulted or not. A request is counted once it has been
    /// matched against the rules (a request stalled by [`pause`](FaultProxy::pause)
    /// when it is released), so a rule armed after the count has grown cannot
    /// catch the requests counted.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// println!("{} inserts", proxy.requests("insert"));
    /// # }
    /// ```
    pub fn requests(&self, command: &str) -> usize {
        lock(&self.shared.faults.requests)
            .get(&command.to_ascii_lowercase())
            .copied()
            .unwrap_or(0)
    }
}
