//! Load on the example service over real HTTP, and the check of what it stored.
//!
//! Shared by the benchmark's `service` part and `tests/service.rs`. [`drive`] runs N
//! concurrent clients against one route for a while; a share of their requests hang up
//! after a short random delay: the request future is dropped, which closes its
//! connection, so hyper drops the handler future on the server (real cancellation, as
//! a browser or a proxy giving up does). [`check_tickets`] and [`check_invoices`] then
//! read what the database holds and hold it against what the clients were told.
#![allow(dead_code)] // the benchmark and the test each use their own part

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

/// Which route the clients drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// `POST /projects/{project}/tickets`, projects taken at random.
    Tickets,
    /// `POST /invoices`.
    Invoices,
}

impl Route {
    /// A short name, for tables.
    pub fn label(self) -> &'static str {
        match self {
            Route::Tickets => "tickets",
            Route::Invoices => "invoices",
        }
    }
}

/// How hard, and how rudely.
#[derive(Clone, Debug)]
pub struct Load {
    /// Concurrent clients, each with a connection pool of its own.
    pub clients: usize,
    /// How long each client keeps sending (each stops after its last answer).
    pub duration: Duration,
    /// At most this many requests per client (the test bounds its work with it).
    pub per_client: usize,
    /// The share of requests that hang up.
    pub hangup_share: f64,
    /// A hang-up happens after a delay drawn uniformly from zero to this.
    pub hangup_within: Duration,
    /// Tickets go to projects `p0`, `p1`, ..., this many.
    pub projects: usize,
    /// Distinguishes the request ids of one run from another's.
    pub tag: String,
}

/// An acknowledged write: 201 and what the answer said.
#[derive(Clone, Debug)]
pub struct Ack {
    /// The project (tickets only).
    pub project: Option<String>,
    /// The number the service gave.
    pub number: i64,
    /// The request id sent.
    pub request: String,
}

/// What the clients sent and were told.
#[derive(Debug, Default)]
pub struct Sent {
    /// Every request id sent, answered or not.
    pub requests: HashSet<String>,
    /// 201s.
    pub acks: Vec<Ack>,
    /// Requests the client hung up on (the answer had not come).
    pub hung_up: usize,
    /// Answers other than 201, by status, with one message each.
    pub refused: BTreeMap<u16, (usize, String)>,
    /// Requests that failed without an answer, not hung up on (connection errors).
    pub failed: Vec<String>,
    /// Latency of every request answered without hanging up, whatever the status.
    pub latencies: Vec<Duration>,
    /// From the first request to the last answer.
    pub elapsed: Duration,
}

impl Sent {
    /// 201s per second.
    pub fn throughput(&self) -> f64 {
        self.acks.len() as f64 / self.elapsed.as_secs_f64()
    }

    /// The latency at quantile `q` (0..=1) of the answered requests.
    pub fn quantile(&self, q: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        if sorted.is_empty() {
            return Duration::ZERO;
        }
        let at = ((sorted.len() - 1) as f64 * q).round() as usize;
        sorted[at]
    }

    fn merge(&mut self, other: Sent) {
        self.requests.extend(other.requests);
        self.acks.extend(other.acks);
        self.hung_up += other.hung_up;
        for (status, (count, message)) in other.refused {
            self.refused.entry(status).or_insert((0, message)).0 += count;
        }
        self.failed.extend(other.failed);
        self.latencies.extend(other.latencies);
    }
}

/// What one request came to.
enum Outcome {
    Answered(u16, Value),
    HungUp,
    Failed(String),
}

/// Drives `route` of the service at `base` (`http://127.0.0.1:port`) with `load`.
pub async fn drive(base: &str, route: Route, load: &Load) -> Sent {
    let began = Instant::now();
    let deadline = began + load.duration;
    let clients: Vec<_> = (0..load.clients)
        .map(|client| {
            let (base, load) = (base.to_owned(), load.clone());
            tokio::spawn(async move { run_client(&base, route, &load, client, deadline).await })
        })
        .collect();
    let mut sent = Sent::default();
    for client in clients {
        match client.await {
            Ok(one) => sent.merge(one),
            Err(error) => sent.failed.push(format!("a client task failed: {error}")),
        }
    }
    sent.elapsed = began.elapsed();
    sent
}

async fn run_client(
    base: &str,
    route: Route,
    load: &Load,
    client: usize,
    deadline: Instant,
) -> Sent {
    let http = reqwest::Client::new();
    let mut rng = SmallRng::seed_from_u64(client as u64 ^ 0x5e91d);
    let mut sent = Sent::default();
    for n in 0..load.per_client {
        if Instant::now() >= deadline {
            break;
        }
        let request = format!("{}-{client}-{n}", load.tag);
        sent.requests.insert(request.clone());
        let project = format!("p{}", rng.random_range(0..load.projects.max(1)));
        let post = match route {
            Route::Tickets => http
                .post(format!("{base}/projects/{project}/tickets"))
                .json(&json!({ "title": format!("ticket {n} of client {client}"), "request": request })),
            Route::Invoices => http.post(format!("{base}/invoices")).json(
                &json!({ "customer": format!("c{client}"), "amount_cents": 100 + n, "request": request }),
            ),
        };
        let call = async move {
            match post.send().await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    match response.json::<Value>().await {
                        Ok(body) => Outcome::Answered(status, body),
                        Err(error) => {
                            Outcome::Answered(status, json!({ "unreadable": error.to_string() }))
                        }
                    }
                }
                Err(error) => Outcome::Failed(error.to_string()),
            }
        };
        let start = Instant::now();
        let outcome = if rng.random_bool(load.hangup_share) {
            let after = rng.random_range(Duration::ZERO..=load.hangup_within);
            // Dropping the future closes its connection mid-request.
            tokio::time::timeout(after, call)
                .await
                .unwrap_or(Outcome::HungUp)
        } else {
            call.await
        };
        match outcome {
            Outcome::HungUp => sent.hung_up += 1,
            Outcome::Failed(error) => sent.failed.push(error),
            Outcome::Answered(status, body) => {
                sent.latencies.push(start.elapsed());
                if status == 201 {
                    let number = body.get("number").and_then(Value::as_i64);
                    let echoed = body.get("request").and_then(Value::as_str);
                    match (number, echoed) {
                        (Some(number), Some(echoed)) if echoed == request => sent.acks.push(Ack {
                            project: (route == Route::Tickets).then(|| project.clone()),
                            number,
                            request,
                        }),
                        _ => sent
                            .failed
                            .push(format!("a 201 without its number or request: {body}")),
                    }
                } else {
                    let message = body.to_string();
                    sent.refused.entry(status).or_insert((0, message)).0 += 1;
                }
            }
        }
    }
    sent
}

/// What a check found: counts, and every invariant broken (none, if all is well).
#[derive(Debug, Default)]
pub struct Checked {
    /// Documents stored.
    pub stored: usize,
    /// Of the hung-up requests (and the others not acknowledged), how many were stored.
    pub stored_unacknowledged: usize,
    /// Every invariant broken, in words.
    pub problems: Vec<String>,
}

impl Checked {
    /// `ok`, or the first problem and how many there are.
    pub fn verdict(&self) -> String {
        match self.problems.as_slice() {
            [] => "ok".into(),
            [first, rest @ ..] => format!("**{} problem(s)**: {first}", rest.len() + 1),
        }
    }
}

/// An integer stored as Int32, Int64 or a whole Double (nx-27017 returns small Int64 as
/// Int32).
fn integer(value: Option<&Bson>) -> Option<i64> {
    match value? {
        Bson::Int32(v) => Some((*v).into()),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) if v.fract() == 0.0 => Some(*v as i64),
        _ => None,
    }
}

async fn all(
    db: &mongodb::Database,
    collection: &str,
) -> mongodb::error::Result<Vec<BsonDocument>> {
    let mut cursor = db
        .collection::<BsonDocument>(collection)
        .find(doc! {})
        .await?;
    let mut docs = Vec::new();
    while cursor.advance().await? {
        docs.push(cursor.deserialize_current()?);
    }
    Ok(docs)
}

/// The tickets invariant: every ticket acknowledged with 201 is stored exactly once,
/// under the number it was told, holding its request id; no request id is stored twice
/// and none that was not sent; no number twice in a project; every number from 1000 on.
/// Hung-up tickets may be stored or not, never twice.
pub async fn check_tickets(db: &mongodb::Database, sent: &Sent) -> mongodb::error::Result<Checked> {
    let docs = all(db, "tickets").await?;
    let mut checked = Checked {
        stored: docs.len(),
        ..Checked::default()
    };
    let problems = &mut checked.problems;
    let mut at: HashMap<(String, i64), &str> = HashMap::new();
    let mut requests: HashMap<&str, usize> = HashMap::new();
    for doc in &docs {
        let project = doc
            .get_str("project")
            .unwrap_or("(not a string)")
            .to_owned();
        let request = doc.get_str("request").unwrap_or("(none)");
        let Some(number) = integer(doc.get("number")) else {
            problems.push(format!(
                "ticket of request {request} has number {:?}",
                doc.get("number")
            ));
            continue;
        };
        if number < 1000 {
            problems.push(format!("ticket {project}/{number} is below 1000"));
        }
        if let Some(other) = at.insert((project.clone(), number), request) {
            problems.push(format!(
                "{project}/{number} stored twice: requests {other} and {request}"
            ));
        }
        *requests.entry(request).or_default() += 1;
        if !sent.requests.contains(request) {
            problems.push(format!(
                "{project}/{number} holds request {request}, never sent"
            ));
        }
    }
    for ack in &sent.acks {
        let project = ack.project.clone().unwrap_or_default();
        match at.get(&(project.clone(), ack.number)) {
            Some(request) if *request == ack.request => {}
            Some(other) => problems.push(format!(
                "{project}/{} was acknowledged to request {} but holds request {other}",
                ack.number, ack.request
            )),
            None => problems.push(format!(
                "{project}/{} was acknowledged to request {} but is not stored",
                ack.number, ack.request
            )),
        }
    }
    checked.stored_unacknowledged = tally_requests(&requests, sent, problems);
    Ok(checked)
}

/// The invariant of tickets stored with no number (the ObjectId mode, in `plain_tickets`):
/// every ticket acknowledged with 201 is stored exactly once, holding its request id and
/// project; no request id is stored twice and none that was not sent. Hung-up tickets may
/// be stored or not, never twice.
pub async fn check_plain_tickets(
    db: &mongodb::Database,
    sent: &Sent,
) -> mongodb::error::Result<Checked> {
    let docs = all(db, "plain_tickets").await?;
    let mut checked = Checked {
        stored: docs.len(),
        ..Checked::default()
    };
    let problems = &mut checked.problems;
    let mut requests: HashMap<&str, usize> = HashMap::new();
    let mut projects: HashMap<&str, Option<&str>> = HashMap::new();
    for doc in &docs {
        let request = doc.get_str("request").unwrap_or("(none)");
        *requests.entry(request).or_default() += 1;
        projects.insert(request, doc.get_str("project").ok());
        if !sent.requests.contains(request) {
            problems.push(format!("a ticket holds request {request}, never sent"));
        }
    }
    for ack in &sent.acks {
        match projects.get(ack.request.as_str()) {
            Some(project) if *project == ack.project.as_deref() => {}
            Some(project) => problems.push(format!(
                "request {} was acknowledged in project {:?} but is stored in {project:?}",
                ack.request, ack.project
            )),
            None => problems.push(format!(
                "request {} was acknowledged but is not stored",
                ack.request
            )),
        }
    }
    checked.stored_unacknowledged = tally_requests(&requests, sent, problems);
    Ok(checked)
}

/// The invoices invariant: the numbers stored are exactly 1..=n (n the number stored),
/// each holding a request id sent, none twice; every invoice acknowledged with 201 is
/// among them under its number, holding its request id.
pub async fn check_invoices(
    db: &mongodb::Database,
    sent: &Sent,
) -> mongodb::error::Result<Checked> {
    let docs = all(db, "invoices").await?;
    let mut checked = Checked {
        stored: docs.len(),
        ..Checked::default()
    };
    let problems = &mut checked.problems;
    let mut at: BTreeMap<i64, &str> = BTreeMap::new();
    let mut requests: HashMap<&str, usize> = HashMap::new();
    for doc in &docs {
        let request = doc.get_str("request").unwrap_or("(none)");
        let Some(number) = integer(doc.get("_id")) else {
            problems.push(format!(
                "invoice of request {request} has _id {:?}",
                doc.get("_id")
            ));
            continue;
        };
        at.insert(number, request);
        *requests.entry(request).or_default() += 1;
        if !sent.requests.contains(request) {
            problems.push(format!(
                "invoice {number} holds request {request}, never sent"
            ));
        }
    }
    let numbers: Vec<i64> = at.keys().copied().collect();
    let expected: Vec<i64> = (1..=docs.len() as i64).collect();
    if numbers != expected {
        let missing: Vec<i64> = expected
            .iter()
            .filter(|n| !at.contains_key(n))
            .copied()
            .collect();
        problems.push(format!(
            "invoice numbers are not 1..={}: missing {missing:?}, largest {:?}",
            docs.len(),
            numbers.last()
        ));
    }
    for ack in &sent.acks {
        match at.get(&ack.number) {
            Some(request) if *request == ack.request => {}
            other => problems.push(format!(
                "invoice {} was acknowledged to request {} but holds {other:?}",
                ack.number, ack.request
            )),
        }
    }
    checked.stored_unacknowledged = tally_requests(&requests, sent, problems);
    Ok(checked)
}

/// The checks every route shares on the request ids stored (`requests`, with how many times
/// each): a problem for each stored more than once; returns how many stored request ids no
/// 201 acknowledged (hung up on, or timed out).
fn tally_requests(
    requests: &HashMap<&str, usize>,
    sent: &Sent,
    problems: &mut Vec<String>,
) -> usize {
    for (request, count) in requests {
        if *count > 1 {
            problems.push(format!("request {request} stored {count} times"));
        }
    }
    let acknowledged: HashSet<&str> = sent.acks.iter().map(|ack| ack.request.as_str()).collect();
    requests
        .keys()
        .filter(|request| !acknowledged.contains(*request))
        .count()
}

/// Whether the server isolates transactions: a document inserted in a transaction must
/// not be seen outside it before the commit. nx-27017 shows it (its transactions roll
/// back, but isolate nothing and never conflict), so concurrent gapless invoices cannot
/// be checked there; the callers say so rather than pass on a server bug.
pub async fn transactions_isolated(
    client: &mongodb::Client,
    db: &mongodb::Database,
) -> mongodb::error::Result<bool> {
    let coll = db.collection::<BsonDocument>("isolation_probe");
    let mut session = client.start_session().await?;
    session.start_transaction().await?;
    coll.insert_one(doc! { "_id": 1 })
        .session(&mut session)
        .await?;
    let seen_outside = coll.find_one(doc! { "_id": 1 }).await?.is_some();
    session.abort_transaction().await?;
    coll.drop().await?;
    Ok(!seen_outside)
}
