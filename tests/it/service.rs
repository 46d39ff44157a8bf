//! The example service (`examples/service`), started in-process on free ports and driven
//! over real HTTP: concurrent clients, some hanging up mid-request, some requests timed
//! out by the service's own timeout, bad input; then what was stored is held against
//! what the clients were told, and the service is shut down gracefully.
//!
//! nx-27017 has no transaction isolation: there the concurrent invoice load is not run
//! (checked, not assumed, and said); invoices are sent one at a time and checked.

#[path = "../../examples/service/app.rs"]
mod app;
#[path = "../../examples/service/load.rs"]
mod load;

use std::time::Duration;

use app::{App, Config, Invoice, Mode, Ticket};
use load::{Load, Route, Sent};
use mongodb::bson::Bson;
use seqid::error::ErrorKind;
use seqid::{Document, Model};
use seqid_harness::ServerFlavor;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// A server of `app` with `config` on a free port: its base URL, the sender that stops it
/// and its task.
async fn start(
    app: &App,
    config: Config,
) -> (
    String,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let shutdown = async {
        let _ = stopped.await;
    };
    let server = tokio::spawn(app::serve(listener, app.router(&config), shutdown));
    (base, stop, server)
}

/// Stops a server and waits for its graceful shutdown.
async fn stop(stop: oneshot::Sender<()>, server: tokio::task::JoinHandle<std::io::Result<()>>) {
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(15), server)
        .await
        .expect("graceful shutdown within 15 s")
        .unwrap()
        .unwrap();
}

/// Sends `body` to `path` and returns the status and the JSON error message.
async fn post(http: &reqwest::Client, url: String, body: reqwest::Body) -> (u16, String) {
    let response = http
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let message = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(String::from))
        .unwrap_or(text);
    (status, message)
}

/// Bad input gets a 4xx with a message saying what is wrong (seqid's own when seqid
/// refused it), never a 500; nothing of it is stored (the check of what was stored finds
/// any stored request id that the load did not send).
async fn bad_input(base: &str, db: &mongodb::Database) {
    // A connection per request: the server answers an oversized body 413 and closes the
    // connection without reading the rest, and a pooled connection the client picked up
    // again before it saw the close failed the next request (`IncompleteMessage`), once in
    // CI on nx-27017; a service's real clients retry that, this one needs no pool.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let json = |v: Value| reqwest::Body::from(v.to_string());

    let (status, message) = post(
        &http,
        format!("{base}/projects/no%20spaces!/tickets"),
        json(json!({ "title": "t", "request": "bad-1" })),
    )
    .await;
    assert_eq!(status, 400, "{message}");
    assert!(
        message.contains("\"no spaces!\"") && message.contains("a project is a name"),
        "{message}"
    );

    let (status, message) = post(
        &http,
        format!("{base}/projects/p0/tickets"),
        json(json!({ "title": "x".repeat(64 * 1024), "request": "bad-2" })),
    )
    .await;
    assert_eq!(status, 413, "an oversized body: {message}");

    // A project seqid refuses as a scope: its message, word for word, as seqid gives it
    // for the same document inserted directly.
    let (status, message) = post(
        &http,
        format!("{base}/tickets"),
        json(json!({ "project": 1.5, "title": "t", "request": "bad-3" })),
    )
    .await;
    let mut direct = Ticket {
        id: None,
        project: Bson::Double(1.5),
        number: 0,
        title: "t".into(),
        request: "bad-3".into(),
    };
    let refused = direct.insert(db).await.unwrap_err();
    assert!(
        matches!(refused.kind(), ErrorKind::InvalidScope { .. }),
        "{refused}"
    );
    assert_eq!(
        (status, message),
        (422, refused.to_string()),
        "seqid's message"
    );

    let (status, message) = post(
        &http,
        format!("{base}/tickets"),
        json(json!({ "project": ["p0"], "title": "t", "request": "bad-4" })),
    )
    .await;
    assert_eq!(status, 400, "{message}");
    assert!(
        message.contains("a project is a name or a number"),
        "{message}"
    );

    let (status, message) = post(
        &http,
        format!("{base}/projects/p0/tickets"),
        reqwest::Body::from("{\"title\": "),
    )
    .await;
    assert_eq!(status, 400, "malformed JSON: {message}");
    let (status, message) = post(
        &http,
        format!("{base}/invoices"),
        json(json!({ "customer": "c", "amount_cents": "twelve", "request": "bad-5" })),
    )
    .await;
    assert_eq!(status, 422, "a field of the wrong type: {message}");
    assert!(message.contains("amount_cents"), "{message}");

    let get = |path: &str| http.get(format!("{base}{path}")).send();
    assert_eq!(get("/projects/p0/tickets/ten").await.unwrap().status(), 400);
    assert_eq!(
        get("/projects/p0/tickets/999999").await.unwrap().status(),
        404
    );
    assert_eq!(get("/invoices/999999").await.unwrap().status(), 404);
}

fn assert_answered(what: &str, sent: &Sent, allowed: &[u16]) {
    assert!(sent.failed.is_empty(), "{what}: failed: {:?}", sent.failed);
    for (status, (count, message)) in &sent.refused {
        assert!(
            allowed.contains(status),
            "{what}: {count} answered {status}, e.g. {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn the_service_stores_what_it_acknowledges_once_through_hang_ups_and_timeouts() {
    let test = seqid_harness::test_db("service").await;
    let sequences = seqid::Sequences::new(test.client());
    let app = App::new(&sequences, test.name(), Mode::Seqid);
    app.prepare().await.unwrap();
    let (base, stop_patient, patient) = start(
        &app,
        Config {
            request_timeout: Duration::from_secs(20),
            body_limit: 4096,
        },
    )
    .await;
    // The same service (same state, same handle) behind a timeout shorter than an insert
    // takes: its requests are answered 408 and their handlers dropped by the server.
    let (impatient_base, stop_impatient, impatient) = start(
        &app,
        Config {
            request_timeout: Duration::from_micros(300),
            body_limit: 4096,
        },
    )
    .await;

    bad_input(&base, app.db()).await;

    let isolated = load::transactions_isolated(test.client(), &test)
        .await
        .unwrap();
    let nx = seqid_harness::server_flavor().unwrap() == ServerFlavor::Nx;
    assert_eq!(
        isolated,
        !nx,
        "transaction isolation on {}",
        seqid_harness::server_kind().unwrap()
    );
    if nx {
        // nx-27017 begins no transaction on a `find` of a collection that does not exist:
        // the commit of the first invoice, whose transaction seqid begins with a read of its
        // counter, is then refused with "No session specified" (MongoDB begins a transaction
        // on any command that says `startTransaction`). The counters' collection made first.
        test.create_collection(Invoice::SEQUENCE.counters)
            .await
            .unwrap();
    }

    let projects = 6;
    let tickets_load = Load {
        clients: 32,
        duration: Duration::from_secs(25),
        per_client: 30,
        hangup_share: 0.25,
        hangup_within: Duration::from_millis(8),
        projects,
        tag: "t".into(),
    };
    let impatient_load = Load {
        clients: 4,
        per_client: 10,
        hangup_share: 0.0,
        tag: "late".into(),
        ..tickets_load.clone()
    };
    let invoices_load = if isolated {
        Load {
            clients: 8,
            per_client: 8,
            tag: "i".into(),
            ..tickets_load.clone()
        }
    } else {
        eprintln!(
            "nx-27017 shows uncommitted writes outside their transaction: concurrent invoices \
             not run (checked, not assumed); invoices are sent one at a time, without hang-ups"
        );
        Load {
            clients: 1,
            per_client: 6,
            hangup_share: 0.0,
            tag: "i".into(),
            ..tickets_load.clone()
        }
    };
    let (mut tickets, late, invoices) = tokio::join!(
        load::drive(&base, Route::Tickets, &tickets_load),
        load::drive(&impatient_base, Route::Tickets, &impatient_load),
        load::drive(&base, Route::Invoices, &invoices_load),
    );
    eprintln!(
        "tickets: {} acknowledged, {} hung up in {:.1} s; late: {} acknowledged, {:?}; \
         invoices: {} acknowledged, {} hung up; handlers cancelled: {}",
        tickets.acks.len(),
        tickets.hung_up,
        tickets.elapsed.as_secs_f64(),
        late.acks.len(),
        late.refused,
        invoices.acks.len(),
        invoices.hung_up,
        app.cancelled()
    );
    assert_answered("tickets", &tickets, &[]);
    assert_answered("tickets behind a short timeout", &late, &[408]);
    assert_answered("invoices", &invoices, &[]);
    assert!(tickets.hung_up > 0 && !tickets.acks.is_empty());
    assert!(late.refused.contains_key(&408), "no request timed out");
    if isolated {
        assert!(invoices.hung_up > 0);
    } else {
        assert_eq!(invoices.acks.len(), invoices_load.per_client);
    }
    // Hang-ups and timeouts cancelled handlers on the server, for real.
    assert!(
        app.cancelled() as usize > late.refused[&408].0,
        "{} handlers cancelled",
        app.cancelled()
    );

    // Acknowledged tickets read back over HTTP.
    let http = reqwest::Client::new();
    for ack in tickets.acks.iter().step_by(50) {
        let url = format!(
            "{base}/projects/{}/tickets/{}",
            ack.project.as_deref().unwrap(),
            ack.number
        );
        let found: Value = http.get(url).send().await.unwrap().json().await.unwrap();
        assert_eq!(found["request"], ack.request.as_str(), "{found}");
    }

    // What the handle holds: one live block per project, shared by every request.
    let held: Value = http
        .get(format!("{base}/sequences"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let stats = &held["sequences"]["ticket"]["stats"];
    let number = |v: &Value| v.as_u64().unwrap();
    let (reservations, ids, unused, retries) = (
        number(&stats["reservations"]),
        number(&stats["ids"]),
        number(&stats["unused"]),
        number(&stats["retries"]),
    );
    eprintln!("GET /sequences: {held}");
    assert_eq!(held["mode"], "seqid");
    assert!(number(&held["held"]) >= projects as u64, "{held}");
    // Each project reserved at least one block, and only as many as its ids filled and
    // one more reserved early: through a bare database every ticket would be a
    // reservation of its own.
    assert!(reservations >= projects as u64, "{held}");
    assert!(
        reservations <= 2 * projects as u64 + ids / 100 + retries,
        "a block per ticket? {held}"
    );
    assert!(ids + unused <= 100 * reservations, "{held}");
    assert!(
        ids >= (tickets.acks.len() + late.acks.len()) as u64,
        "{held}"
    );
    let invoice_stats = &held["sequences"]["invoice"]["stats"];
    assert!(number(&invoice_stats["ids"]) >= invoices.acks.len() as u64);
    // Every counter, listed: one per project that has tickets, each reserved past the
    // numbers stored in it, and what the handle holds of them the rest of its block and
    // the next, reserved early: at most two blocks less one.
    let listed = held["sequences"]["ticket"]["counters"].as_array().unwrap();
    assert!(listed.len() >= projects, "{held}");
    for counter in listed {
        let (last, largest) = (
            counter["last_reserved"].as_i64().unwrap(),
            counter["largest_stored"].as_i64().unwrap(),
        );
        assert!(last >= largest && largest >= 1000, "{counter}");
        assert!(counter["scope"]["project"].is_string(), "{counter}");
        let held_here = number(&counter["held_here"]);
        assert!(held_here < 200, "{counter}");
        if held_here > 0 {
            let next = counter["next_held"].as_i64().unwrap();
            // Not always above the largest stored: a cancelled caller's ids go back.
            assert!(next >= 1000 && next <= last, "{counter}");
        }
    }
    // Gapless: one counter, nothing held (its ids are taken in the transactions).
    let invoice_counters = held["sequences"]["invoice"]["counters"].as_array().unwrap();
    assert_eq!(invoice_counters.len(), 1, "{held}");
    assert_eq!(number(&invoice_counters[0]["held_here"]), 0, "{held}");
    assert!(
        invoice_counters[0]["last_reserved"].as_i64().unwrap() >= 1,
        "{held}"
    );

    // Graceful shutdown, then the invoice transactions still running end.
    stop(stop_patient, patient).await;
    stop(stop_impatient, impatient).await;
    tokio::time::timeout(Duration::from_secs(30), app.drain())
        .await
        .expect("the invoice transactions end");

    // Hang-ups and timeouts: stored or not, never twice.
    let acknowledged = tickets.acks.len() + late.acks.len();
    let all_tickets = Sent {
        requests: tickets.requests.drain().chain(late.requests).collect(),
        acks: tickets.acks.drain(..).chain(late.acks).collect(),
        ..Sent::default()
    };
    let checked = load::check_tickets(&test, &all_tickets).await.unwrap();
    eprintln!(
        "tickets: {} stored, {} of them unacknowledged (hung up or timed out)",
        checked.stored, checked.stored_unacknowledged
    );
    assert_eq!(checked.problems, Vec::<String>::new());
    assert_eq!(
        checked.stored,
        acknowledged + checked.stored_unacknowledged,
        "every stored ticket is acknowledged or unacknowledged"
    );
    assert!(
        checked.stored as u64 <= ids,
        "stored more tickets than numbers handed out"
    );
    let checked = load::check_invoices(&test, &invoices).await.unwrap();
    eprintln!(
        "invoices: {} stored, {} of them unacknowledged",
        checked.stored, checked.stored_unacknowledged
    );
    assert_eq!(checked.problems, Vec::<String>::new());
    assert!(checked.stored >= invoices.acks.len());
}

/// The ObjectId mode, the yardstick of what ids cost (issue 40): the same service storing
/// its tickets under an ObjectId with no number, driven with hang-ups; every acknowledged
/// ticket is stored once, holding its request and project, none twice; invoices are refused
/// with a 404 that says why, and nothing is numbered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_object_id_mode_stores_each_acknowledged_ticket_once_unnumbered() {
    let test = seqid_harness::test_db("service_object_id").await;
    let sequences = seqid::Sequences::new(test.client());
    let app = App::new(&sequences, test.name(), Mode::ObjectId);
    app.prepare().await.unwrap();
    let (base, stop_server, server) = start(&app, Config::default()).await;
    let load = Load {
        clients: 8,
        duration: Duration::from_secs(20),
        per_client: 12,
        hangup_share: 0.25,
        hangup_within: Duration::from_millis(4),
        projects: 3,
        tag: "o".into(),
    };
    let tickets = load::drive(&base, Route::Tickets, &load).await;
    let http = reqwest::Client::new();
    let (status, message) = post(
        &http,
        format!("{base}/invoices"),
        json!({ "customer": "acme", "amount_cents": 100, "request": "o-invoice" })
            .to_string()
            .into(),
    )
    .await;
    stop(stop_server, server).await;
    app.drain().await;
    assert_answered("tickets", &tickets, &[]);
    assert!(!tickets.acks.is_empty(), "some tickets acknowledged");
    assert!(
        tickets.acks.iter().all(|ack| ack.number == 0),
        "numbered nothing"
    );
    let checked = load::check_plain_tickets(app.db(), &tickets).await.unwrap();
    assert_eq!(checked.problems, Vec::<String>::new());
    assert!(checked.stored >= tickets.acks.len());
    assert_eq!(
        (status, message.contains("ObjectId mode")),
        (404, true),
        "{message}"
    );
    for numbered in ["tickets", "invoices", "counters"] {
        let count = app
            .db()
            .collection::<mongodb::bson::Document>(numbered)
            .count_documents(mongodb::bson::doc! {})
            .await
            .unwrap();
        assert_eq!(count, 0, "nothing in {numbered}");
    }
}
