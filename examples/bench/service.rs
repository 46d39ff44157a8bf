//! Part `service`: the example service (`examples/service`) under load over HTTP, seqid
//! next to the same service numbering with the tutorial's two calls by hand (issue 20).
//!
//! Each round starts the service in this process on a free port, on a fresh database
//! and a client and `Sequences` handle of its own, and drives it with N concurrent HTTP
//! clients (each with its own connection pool), a share of whose requests hang up after
//! a random delay; first tickets (8 projects), then invoices. Then it shuts the service
//! down gracefully, waits for the invoice transactions still running, and checks what
//! was stored against what the clients were told (`load::check_tickets`,
//! `load::check_invoices`). The contenders alternate within each round; the third,
//! the ObjectId mode (tickets stored under an ObjectId, numbered nothing: what ids cost),
//! runs tickets only (`load::check_plain_tickets`).

use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::Config;
use crate::app::{self, App, Mode};
use crate::load::{self, Load, Route, Sent};
use crate::model::BoxError;

/// The contenders: seqid, the tutorial's two calls by hand, and no sequence at all.
const MODES: [Mode; 3] = [Mode::Seqid, Mode::ByHand, Mode::ObjectId];

/// Projects the tickets go to.
const PROJECTS: usize = 8;
/// The share of requests that hang up, and within how long.
pub const HANGUP_SHARE: f64 = 0.1;
pub const HANGUP_WITHIN: Duration = Duration::from_millis(5);

/// One contender on one route, over all rounds.
pub struct Row {
    mode: Mode,
    route: Route,
    /// 201s per second, per round.
    throughputs: Vec<f64>,
    /// Every round's clients' record, merged.
    sent: Sent,
    stored: usize,
    unacknowledged: usize,
    problems: Vec<String>,
    /// Why the route was not run, if it was not.
    skipped: Option<String>,
}

impl Row {
    fn new(mode: Mode, route: Route) -> Row {
        Row {
            mode,
            route,
            throughputs: Vec::new(),
            sent: Sent::default(),
            stored: 0,
            unacknowledged: 0,
            problems: Vec::new(),
            skipped: None,
        }
    }

    fn add(&mut self, sent: Sent, checked: load::Checked) {
        self.throughputs.push(sent.throughput());
        self.stored += checked.stored;
        self.unacknowledged += checked.stored_unacknowledged;
        self.problems.extend(checked.problems);
        self.sent.hung_up += sent.hung_up;
        self.sent.acks.extend(sent.acks);
        self.sent.latencies.extend(sent.latencies);
        self.sent.failed.extend(sent.failed);
        for (status, (count, message)) in sent.refused {
            self.sent.refused.entry(status).or_insert((0, message)).0 += count;
        }
    }

    /// The slowest and fastest round, in 201/s.
    fn spread(&self) -> String {
        let min = self
            .throughputs
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let max = self.throughputs.iter().copied().fold(0.0, f64::max);
        format!("{min:.0}–{max:.0}")
    }

    fn median(&self) -> f64 {
        let mut sorted = self.throughputs.clone();
        sorted.sort_by(f64::total_cmp);
        sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
    }
}

/// The settings of this part.
pub struct Settings {
    pub clients: usize,
    pub duration: Duration,
    pub rounds: usize,
}

impl Settings {
    pub fn of(config: &Config) -> Settings {
        Settings {
            clients: config.service_clients,
            duration: config.service_trial,
            rounds: config.rounds.min(3),
        }
    }
}

/// One round of one contender: tickets, then invoices if the server isolates
/// transactions.
async fn round(
    mode: Mode,
    settings: &Settings,
    round: usize,
    rows: &mut [Row],
) -> Result<(), BoxError> {
    let name = "seqid_bench_service";
    // A server of the round's own (the `MONGODB_URI` server, if one is set, with a fresh
    // database): SecantusDB slows as its data and its retryable-write records accumulate,
    // so that one server for every round made the later contenders' figures the server's.
    let database_server = seqid_harness::TestServer::start().await?;
    let client = database_server.client().await?;
    client.database(name).drop().await?;
    let sequences = seqid::Sequences::new(&client);
    let app = App::new(&sequences, name, mode);
    app.prepare().await?;
    let isolated = load::transactions_isolated(&client, app.db()).await?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(app::serve(
        listener,
        app.router(&app::Config::default()),
        async {
            let _ = stopped.await;
        },
    ));
    let load = |route: Route| Load {
        clients: settings.clients,
        duration: settings.duration,
        per_client: usize::MAX,
        hangup_share: HANGUP_SHARE,
        hangup_within: HANGUP_WITHIN,
        projects: PROJECTS,
        tag: format!("{}{round}{}", route.label(), mode.label()),
    };
    let tickets = load::drive(&base, Route::Tickets, &load(Route::Tickets)).await;
    let invoices = if isolated && mode != Mode::ObjectId {
        Some(load::drive(&base, Route::Invoices, &load(Route::Invoices)).await)
    } else {
        None
    };
    let _ = stop.send(());
    server.await??;
    app.drain().await;
    let row = |rows: &[Row], route| {
        rows.iter()
            .position(|r| r.mode == mode && r.route == route)
            .unwrap()
    };
    let checked = match mode {
        Mode::ObjectId => load::check_plain_tickets(app.db(), &tickets).await?,
        _ => load::check_tickets(app.db(), &tickets).await?,
    };
    rows[row(rows, Route::Tickets)].add(tickets, checked);
    let at = row(rows, Route::Invoices);
    match invoices {
        None if mode == Mode::ObjectId => {
            rows[at].skipped = Some("not run: the ObjectId mode numbers nothing".into());
        }
        Some(invoices) => {
            let checked = load::check_invoices(app.db(), &invoices).await?;
            rows[at].add(invoices, checked);
        }
        None => {
            rows[at].skipped = Some(format!(
                "not run: {} shows uncommitted writes outside their transaction (checked), so \
                 concurrent gapless invoices cannot be held to 1..=n there",
                seqid_harness::server_kind()?
            ))
        }
    }
    app.db().drop().await?;
    Ok(())
}

pub async fn run(config: &Config) -> Result<Vec<Row>, BoxError> {
    let settings = Settings::of(config);
    let mut rows = Vec::new();
    for mode in MODES {
        for route in [Route::Tickets, Route::Invoices] {
            rows.push(Row::new(mode, route));
        }
    }
    for r in 0..settings.rounds {
        // Each contender first in turn.
        for k in 0..MODES.len() {
            let mode = MODES[(k + r) % MODES.len()];
            eprintln!("  round {}, {} ...", r + 1, mode.label());
            round(mode, &settings, r, &mut rows).await?;
        }
    }
    Ok(rows)
}

pub fn print(rows: &[Row]) {
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    println!(
        "| service | route | 201/s (rounds min–max) | × by hand | × ObjectId | p50 | p99 | max | hung up | other answers | stored (unacknowledged) | check |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for row in rows {
        if let Some(why) = &row.skipped {
            println!(
                "| {} | {} | {why} | | | | | | | | | |",
                row.mode.label(),
                row.route.label()
            );
            continue;
        }
        let by_hand = rows
            .iter()
            .find(|r| r.mode == Mode::ByHand && r.route == row.route && r.skipped.is_none())
            .map(Row::median);
        let ratio = match (row.mode, by_hand) {
            (Mode::Seqid, Some(by_hand)) if by_hand > 0.0 => {
                format!("{:.2}", row.median() / by_hand)
            }
            _ => String::new(),
        };
        let object_id = rows
            .iter()
            .find(|r| r.mode == Mode::ObjectId && r.route == row.route && r.skipped.is_none())
            .map(Row::median);
        let against_object_id = match (row.mode, object_id) {
            (Mode::Seqid | Mode::ByHand, Some(plain)) if plain > 0.0 => {
                format!("{:.2}", row.median() / plain)
            }
            _ => String::new(),
        };
        let mut other: Vec<String> = row
            .sent
            .refused
            .iter()
            .map(|(status, (count, _))| format!("{count} × {status}"))
            .collect();
        if !row.sent.failed.is_empty() {
            other.push(format!("{} failed", row.sent.failed.len()));
        }
        let check = match row.problems.as_slice() {
            [] => "ok".to_string(),
            [first, rest @ ..] => format!("**{} problem(s)**: {first}", rest.len() + 1),
        };
        let sent = &row.sent;
        println!(
            "| {} | {} | {:.0} ({}) | {ratio} | {against_object_id} | {} | {} | {} | {} | {} | {} ({}) | {check} |",
            row.mode.label(),
            row.route.label(),
            row.median(),
            row.spread(),
            ms(sent.quantile(0.5)),
            ms(sent.quantile(0.99)),
            ms(sent.quantile(1.0)),
            sent.hung_up,
            if other.is_empty() {
                "none".into()
            } else {
                other.join(", ")
            },
            row.stored,
            row.unacknowledged,
        );
    }
    println!();
    for row in rows {
        for (status, (count, message)) in &row.sent.refused {
            println!(
                "- {} {}: {count} answered {status}, e.g. `{message}`",
                row.mode.label(),
                row.route.label()
            );
        }
        if let Some(error) = row.sent.failed.first() {
            println!(
                "- {} {}: failed, e.g. `{error}`",
                row.mode.label(),
                row.route.label()
            );
        }
    }
}
