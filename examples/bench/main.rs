//! seqid's benchmark: every strategy side by side with a plain insert and with the
//! hand-written tutorial code, in one run, on one server, through one client.
//!
//! ```sh
//! cargo run --release --example bench             # every part
//! cargo run --release --example bench -- --quick  # a smoke run
//! cargo run --release --example bench -- --help
//! ```
//!
//! How long each takes depends on the server, so BENCHMARKS.md says it for its runs.
//!
//! The server is the one the tests use (`seqid-harness`: `MONGODB_URI`, else `mongod` on
//! PATH, else SecantusDB; `SEQID_TEST_SERVER=nx` for nx-27017). Round trips are the
//! commands counted by the harness's `CommandCounter` from the driver's command
//! monitoring. The output is Markdown, to be pasted into BENCHMARKS.md as is.

mod bare;
mod bulk;
mod cancel;
mod ceiling;
mod chart;
mod contention;
mod cost;
mod drafts;
mod first_use;
mod instructions;
mod items;
mod latency;
mod maxq;
mod model;
mod natural;
mod numbers;
mod one;
mod probe;
mod scopes;
mod service;
mod single;
mod stats;
mod ticket;
mod txn;

// The example service and its load generator (`--only service`), as the example and
// `tests/service.rs` run them.
#[path = "../service/app.rs"]
mod app;
#[path = "../service/load.rs"]
mod load;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use model::BoxError;

/// Counts heap allocations, for the client's own cost (`--only cost`).
#[global_allocator]
static ALLOCATOR: cost::Counting = cost::Counting;
use probe::Monitor;

const USAGE: &str = "\
usage: cargo run --release --example bench -- [options]

  --quick            short smoke run: 1 round of 0.15 s trials, 1 bulk round, 10 query runs
  --rounds N         interleaved rounds of single-insert trials (default 7; env SEQID_BENCH_ROUNDS)
  --secs S           seconds per single-insert trial (default 0.6; env SEQID_BENCH_SECS)
  --tasks LIST       comma-separated task counts of the single and ceiling parts (default 1,16,64)
  --chart PATH       the single part's SVG chart, inserts/s against tasks (default target/throughput.svg)
  --bulk-rounds N    interleaved rounds of bulk trials (default 5)
  --bulk-docs N      documents per bulk call (default 10000)
  --query-runs N     runs of each maximum query (default 100, fewer if slow)
  --only LIST        comma-separated parts to run: one,bare,cost,instructions,single,ceiling,bulk,maxq,txn,scopes,natural,drafts,numbers,items,first-use,cancel,service,ticket,contention,latency
                     (default all; instructions needs valgrind)
  --cost-contenders LIST  the cost part's contenders: driver,tutorial,block,counters,coded,optimistic (default all)
  --cost-inserts N   inserts per cost trial (default 1000; 100 with --quick)
  --service-clients N  concurrent HTTP clients of the service part (default 16)
  --service-secs S   seconds of load per route, contender and round in the service part (default 5; 1 with --quick)
  --latencies LIST   the latency part's delays added to each round trip, in ms (default 0,1,5,20)
  --latency-tasks LIST  its task counts (default 1,4,16,64,256)
  --latency-secs S   seconds per trial of the latency part (default 2; 0.2 with --quick)
  --latency-rounds N its interleaved rounds (default 3; 1 with --quick)
  --latency-chart PATH  its SVG chart, a panel per latency (default target/latency.svg)

env SEQID_BENCH_TRACE=FILTER  log to stderr with that filter (e.g. seqid=debug: each optimistic retry)
";

/// What to run, and how long.
pub struct Config {
    pub rounds: usize,
    pub trial: Duration,
    /// The concurrencies of the single and ceiling parts, ascending.
    pub tasks: Vec<usize>,
    /// Where the single part draws its chart.
    pub chart: PathBuf,
    pub bulk_rounds: usize,
    pub bulk_docs: usize,
    pub maxq_runs: usize,
    pub maxq_inserts: usize,
    pub parts: Vec<String>,
    /// The cost part's contenders, by short name; empty: all.
    pub cost_contenders: Vec<String>,
    pub cost_inserts: u32,
    pub service_clients: usize,
    pub service_trial: Duration,
    /// The latency part's added round trips in ms, its task counts (ascending), trial,
    /// rounds and chart.
    pub latencies: Vec<f64>,
    pub latency_tasks: Vec<usize>,
    pub latency_trial: Duration,
    pub latency_rounds: usize,
    pub latency_chart: PathBuf,
    /// `--quick`: the smoke run's sizes.
    pub quick: bool,
}

impl Config {
    fn from_args() -> Result<Config, BoxError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let mut config = Config {
            rounds: env("SEQID_BENCH_ROUNDS").map_or(Ok(7), |v| v.parse())?,
            trial: Duration::from_secs_f64(env("SEQID_BENCH_SECS").map_or(Ok(0.6), |v| v.parse())?),
            tasks: vec![1, 16, 64],
            chart: Path::new(env!("CARGO_MANIFEST_DIR")).join("target/throughput.svg"),
            bulk_rounds: 5,
            bulk_docs: 10_000,
            maxq_runs: 100,
            maxq_inserts: 50,
            parts: [
                "one",
                "bare",
                "cost",
                "instructions",
                "single",
                "ceiling",
                "bulk",
                "maxq",
                "txn",
                "scopes",
                "natural",
                "drafts",
                "numbers",
                "items",
                "first-use",
                "cancel",
                "service",
                "ticket",
                "contention",
                "latency",
            ]
            .map(String::from)
            .to_vec(),
            cost_contenders: Vec::new(),
            cost_inserts: 1000,
            service_clients: 16,
            service_trial: Duration::from_secs(5),
            latencies: vec![0.0, 1.0, 5.0, 20.0],
            latency_tasks: vec![1, 4, 16, 64, 256],
            latency_trial: Duration::from_secs(2),
            latency_rounds: 3,
            latency_chart: Path::new(env!("CARGO_MANIFEST_DIR")).join("target/latency.svg"),
            quick: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or(format!("{arg} needs a value\n{USAGE}"));
            match arg.as_str() {
                "--quick" => {
                    config.quick = true;
                    config.rounds = 1;
                    config.trial = Duration::from_millis(150);
                    config.bulk_rounds = 1;
                    config.maxq_runs = 10;
                    config.maxq_inserts = 10;
                    config.cost_inserts = 100;
                    config.service_trial = Duration::from_secs(1);
                    config.latency_trial = Duration::from_millis(200);
                    config.latency_rounds = 1;
                }
                "--rounds" => config.rounds = value()?.parse()?,
                "--secs" => config.trial = Duration::from_secs_f64(value()?.parse()?),
                "--tasks" => config.tasks = list(&value()?)?,
                "--latencies" => config.latencies = list(&value()?)?,
                "--latency-tasks" => config.latency_tasks = list(&value()?)?,
                "--latency-secs" => {
                    config.latency_trial = Duration::from_secs_f64(value()?.parse()?)
                }
                "--latency-rounds" => config.latency_rounds = value()?.parse()?,
                "--latency-chart" => config.latency_chart = value()?.into(),
                "--chart" => config.chart = value()?.into(),
                "--bulk-rounds" => config.bulk_rounds = value()?.parse()?,
                "--bulk-docs" => config.bulk_docs = value()?.parse()?,
                "--query-runs" => config.maxq_runs = value()?.parse()?,
                "--only" => config.parts = value()?.split(',').map(String::from).collect(),
                "--cost-contenders" => {
                    config.cost_contenders = value()?.split(',').map(String::from).collect()
                }
                "--cost-inserts" => config.cost_inserts = value()?.parse()?,
                "--service-clients" => config.service_clients = value()?.parse()?,
                "--service-secs" => {
                    config.service_trial = Duration::from_secs_f64(value()?.parse()?)
                }
                "-h" | "--help" => {
                    print!("{USAGE}");
                    std::process::exit(0);
                }
                other => return Err(format!("unknown argument {other:?}\n{USAGE}").into()),
            }
        }
        if config.rounds == 0 || config.bulk_rounds == 0 || config.bulk_docs == 0 {
            return Err("rounds and documents must be at least 1".into());
        }
        config.tasks.sort_unstable();
        config.tasks.dedup();
        if config.tasks.first().is_none_or(|&tasks| tasks == 0) {
            return Err("--tasks needs task counts of at least 1".into());
        }
        config.latency_tasks.sort_unstable();
        config.latency_tasks.dedup();
        if config.latency_tasks.first().is_none_or(|&tasks| tasks == 0)
            || config.latency_rounds == 0
            || config
                .latencies
                .iter()
                .any(|&ms| !(0.0..=10_000.0).contains(&ms))
        {
            return Err("the latency part needs tasks and rounds of at least 1, and delays of 0 to 10,000 ms".into());
        }
        Ok(config)
    }

    fn runs(&self, part: &str) -> bool {
        self.parts.iter().any(|p| p == part)
    }
}

/// A comma-separated list of values.
fn list<T: std::str::FromStr>(values: &str) -> Result<Vec<T>, BoxError>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    Ok(values
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(contention::CHILD) {
        return contention::child_main(&args[1..]).await;
    }
    if std::env::var_os("SEQID_BENCH_TRACE").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("SEQID_BENCH_TRACE"))
            .with_writer(std::io::stderr)
            .init();
    }
    let config = Config::from_args()?;
    let began = Instant::now();
    let load_before = probe::load_average();

    // One server, one database, one client with command monitoring, for everything.
    // The runs of `--only instructions` use a database of their own.
    let name = std::env::var("SEQID_BENCH_DATABASE").unwrap_or_else(|_| "seqid_bench".into());
    let name = name.as_str();
    seqid_harness::fresh_database(name).await?;
    let monitor = Monitor::new();
    let client = seqid_harness::client_with(|o| {
        o.command_event_handler = Some(monitor.handler());
        o.app_name = Some("seqid-bench".into());
    })
    .await?;
    // seqid's inserts share state through a handle, as an application's would.
    let db = seqid::Sequences::new(&client).database(name);
    let server_pid = probe::server_pid(&db).await;
    let usage_before = monitor.snapshot(server_pid);

    println!("# seqid benchmark\n");
    println!(
        "- command: `cargo run --release --example bench{}`",
        if args.is_empty() {
            String::new()
        } else {
            format!(" -- {}", args.join(" "))
        }
    );
    println!("- machine: {}", probe::machine());
    println!(
        "- server: {} (pid {}; {})",
        seqid_harness::server_kind()?,
        server_pid.map_or("unknown".into(), |p| p.to_string()),
        if server_pid.is_some() {
            "its CPU time is read from /proc"
        } else {
            "its CPU time is not available"
        }
    );
    println!(
        "- driver: mongodb crate, default pool (max 10 connections), one client for all trials; \
         tokio multi-thread runtime, {} worker threads",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "- single inserts: {} interleaved rounds × {} concurrencies × {} contenders (a reference among them), {:.2} s per trial; \
         bulk: {} rounds of {} documents",
        config.rounds,
        config.tasks.len(),
        model::Contender::ALL.len(),
        config.trial.as_secs_f64(),
        config.bulk_rounds,
        config.bulk_docs
    );

    let one = if config.runs("one") {
        eprintln!("one task, as users run it ...");
        Some(one::run(name, &config).await?)
    } else {
        None
    };
    let bared = if config.runs("bare") {
        eprintln!("a bare optimistic insert, step by step ...");
        Some(bare::run(&db, &monitor, &config).await?)
    } else {
        None
    };
    let cost = if config.runs("cost") {
        eprintln!("the client's own cost ...");
        Some(cost::run(name, &config).await?)
    } else {
        None
    };
    let instructions = if config.runs("instructions") {
        eprintln!("the client's own work, in instructions (callgrind) ...");
        Some(instructions::run(&config)?)
    } else {
        None
    };
    let single = if config.runs("single") {
        eprintln!("single inserts ...");
        Some(single::run(&db, &monitor, server_pid, &config).await?)
    } else {
        None
    };
    let ceiling = if config.runs("ceiling") {
        eprintln!("server ceiling (ping) ...");
        Some((
            ceiling::run(&db, server_pid, &config).await?,
            ceiling::command_costs(&db, server_pid, &config).await?,
        ))
    } else {
        None
    };
    let bulk = if config.runs("bulk") {
        eprintln!("bulk ...");
        Some(bulk::run(&db, &monitor, server_pid, &config).await?)
    } else {
        None
    };
    let maxq = if config.runs("maxq") {
        eprintln!("optimistic maximum query ...");
        Some(maxq::run(&db, &monitor, &config).await?)
    } else {
        None
    };

    let txn = if config.runs("txn") {
        eprintln!("transactions ...");
        Some(txn::run(&db, &config).await?)
    } else {
        None
    };

    let scoped = if config.runs("scopes") {
        eprintln!("scoped sequences ...");
        Some(scopes::run(name, &monitor, &config).await?)
    } else {
        None
    };

    let natural = if config.runs("natural") {
        eprintln!("find-or-insert by a natural key ...");
        Some(natural::run(&db, &config).await?)
    } else {
        None
    };

    let drafted = if config.runs("drafts") {
        eprintln!("numbering stored drafts ...");
        Some(drafts::run(&db, &config).await?)
    } else {
        None
    };

    let numbered = if config.runs("numbers") {
        eprintln!("numbers on their own ...");
        Some(numbers::run(&db, &monitor, server_pid, &config).await?)
    } else {
        None
    };

    let appended = if config.runs("items") {
        eprintln!("item appends ...");
        Some(items::run(&db, &monitor, server_pid, &config).await?)
    } else {
        None
    };

    let first_used = if config.runs("first-use") {
        eprintln!("a counter's first use ...");
        Some(first_use::run(name, &config).await?)
    } else {
        None
    };

    let cancel = if config.runs("cancel") {
        eprintln!("cancellation storms ...");
        Some(cancel::run(&config).await?)
    } else {
        None
    };

    let served = if config.runs("service") {
        eprintln!("the example service over HTTP ...");
        Some(service::run(&config).await?)
    } else {
        None
    };

    let ticketed = if config.runs("ticket") {
        eprintln!("where a ticket's time goes ...");
        Some(ticket::run(&monitor, &config).await?)
    } else {
        None
    };

    let contended = if config.runs("contention") {
        eprintln!("uncoordinated optimistic writers ...");
        Some(contention::run(name, &config).await?)
    } else {
        None
    };

    let far = if config.runs("latency") {
        eprintln!("across a slow network ...");
        Some(latency::run(name, &config).await?)
    } else {
        None
    };

    let usage = usage_before.delta(&monitor.snapshot(server_pid));
    let wall = began.elapsed().as_secs_f64();
    let share = |d: Option<Duration>| {
        d.map_or("?".into(), |d| {
            format!("{:.0} %", d.as_secs_f64() / wall * 100.0)
        })
    };
    println!(
        "- CPU during the run (100 % = one core): server {}, benchmark {}, other processes {}; \
         load average {load_before} before, {} after",
        share(usage.server_cpu),
        share(usage.client_cpu),
        share(usage.others_cpu()),
        probe::load_average()
    );
    println!();

    if let Some(results) = &one {
        println!("## One task, as users run it\n");
        println!(
            "Each contender in a task of its own, on a client of its own without a command \
             monitor; {} rounds of {} inserts per trial, contenders rotated each round. \
             Inserts/s are medians over rounds; `× tutorial` is the median of the per-round \
             ratios, min–max over rounds in parentheses.\n",
            config.rounds,
            if config.rounds > 1 { 300 } else { 60 }
        );
        one::print(results);
    }
    if let Some(rows) = &cost {
        println!("## The client's own cost\n");
        println!(
            "One task, {} inserts per trial, {} interleaved rounds, fresh collections; medians. \
             CPU is this process's (the driver's background tasks included), from \
             `clock_gettime`; allocations are counted by the benchmark's global allocator. The \
             first row is the driver's own `insert_one` of the same document with an integer \
             `_id` taken from memory: what any insert costs the client.\n",
            config.cost_inserts, config.rounds
        );
        cost::print(rows);
    }
    match &instructions {
        Some(Some(rows)) => {
            println!(
                "## The client's own work, in instructions
"
            );
            println!(
                "Each contender alone, one task, under valgrind's callgrind (`--only cost`, this \
                 run's server): the instructions this process executes in user space per \
                 insert, the difference of two runs of different lengths divided by the \
                 difference of their inserts. Unlike CPU time, the same from run to run. \
                 System calls (the kernel's work) are not counted.\n"
            );
            instructions::print(rows);
        }
        Some(None) => println!(
            "## The client's own work, in instructions\n\nvalgrind is not installed: not measured.\n"
        ),
        None => {}
    }
    if let Some(results) = &single {
        println!("## Single inserts\n");
        println!(
            "Inserts/s and round trips/insert are medians over rounds; `× plain` and `× tutorial` \
             are medians of the per-round ratios (min–max over rounds in parentheses), each ratio \
             taken between trials of the same round and concurrency.\n"
        );
        single::print(results, &config);
        let server = seqid_harness::server_kind()?.to_string();
        chart::draw(results, &config, &server)?;
        println!(
            "Chart of inserts/s against tasks: `{}`.\n",
            config.chart.display()
        );
    }
    if let Some((rows, costs)) = &ceiling {
        println!("## Server ceiling: a trivial command\n");
        ceiling::print(rows);
        println!("## What one command costs on this server\n");
        println!(
            "Medians over interleaved rounds of {} calls, one task.\n",
            if config.rounds > 1 { 300 } else { 50 }
        );
        ceiling::print_costs(costs);
    }
    if let Some(results) = &single {
        println!("## Where the time goes (single inserts)\n");
        println!(
            "Medians over rounds. `Σ command time` is the sum of the driver's command durations \
             (send to reply, summed over concurrent commands) per insert; server and client CPU \
             are the CPU time of the server process and of this process per insert; `busy` is \
             server CPU time / wall time (100 % = one core).\n"
        );
        single::print_profile(results, &config);
    }
    if let Some(results) = &bulk {
        println!("## Bulk: {} documents in one call\n", config.bulk_docs);
        println!("Medians over rounds; every trial starts with an empty collection.\n");
        bulk::print(results, &config);
    }
    if let Some(results) = &maxq {
        println!("## The optimistic loop's maximum query\n");
        maxq::print(results);
    }
    if let Some(rows) = &txn {
        println!("## Inserts in transactions\n");
        println!(
            "Each insert in a transaction of its own, run with seqid's `Transaction`, which \
             runs the body again after a write conflict (the driver's rules). Medians over interleaved rounds, \
             fresh collections and counters per trial; ratios per round (min–max). At 16 \
             tasks gapless also runs with half the tasks through each of two handles made \
             from two clients of the process, and through each of two bare databases of \
             them.\n"
        );
        txn::print(rows);
    }
    if let Some(rows) = &scoped {
        println!("## Scoped sequences: live blocks per scope\n");
        println!(
            "The block strategy (blocks of 100) numbering per project, 16 tasks through one \
             handle, documents spread round-robin over the projects. Round trips are every \
             command sent during the trial; the heap held is what the handle's state adds, \
             measured by the benchmark's counting allocator once the inserts are done.\n"
        );
        scopes::print(rows);
    }
    if let Some(rows) = &natural {
        println!("## Find-or-insert by a natural key\n");
        println!(
            "16 tasks, 10,000 calls over 200 keys (1,000 with `--quick`), each task drawing \
             keys at random (a seeded sequence of its own), through one handle per trial, fresh collection and \
             counter per trial; {} interleaved rounds, medians (min–max over rounds for the \
             ids). `ids taken per document stored` is the counter's value (optimistic: the \
             largest id) over the 200 documents; for block, the ids the handle handed out (the \
             rest of its last block is the next inserts'). `× by hand` is per round.\n",
            config.rounds.min(3)
        );
        natural::print(rows);
    }
    if let Some(rows) = &drafted {
        println!("## Numbering stored drafts\n");
        println!(
            "1,000 drafts stored per trial (100 with `--quick`) before the clock starts, each \
             issued once: its number (and code) set with `status: issued` by `number_draft`, \
             against a plain `update_one` of the status alone. Gapless in a transaction of its \
             own per draft, run again on a write conflict. {} interleaved rounds, medians; \
             ratios per round (min–max).\n",
            config.rounds.min(3)
        );
        drafts::print(rows);
    }
    if let Some(results) = &numbered {
        println!("## Numbers on their own\n");
        println!(
            "Numbers with no document, `db.sequence(name).next()` and its kin, against the \
             tutorial's `getNextSequence` by hand (the driver's `find_one_and_update`, \
             `$inc: {{seq: 1}}`, upsert, the document after, per number) and the Go post's \
             `GetNextId` by hand (a block of 25 reserved with one `$inc: {{sequence: 25}}` \
             when the last is spent, handed out from memory under a `tokio::sync::Mutex` \
             shared by the tasks). Each contender on a counter of its own, its state (the \
             handle, the Go post's block) kept for the whole part; {} interleaved rounds of \
             {:.2} s trials at each task count, contenders rotated each round. Numbers/s and \
             round trips/number are medians over rounds, the ratios medians of the per-round \
             ratios (min–max over rounds). Every number taken is checked at the end: none \
             twice, within the counter, and for the counters contenders exactly 1 to the \
             counter's value.\n",
            config.rounds,
            config.trial.as_secs_f64()
        );
        numbers::print(results);
    }
    if let Some(results) = &appended {
        println!("## Item appends\n");
        println!(
            "Items appended to a stored document with the next numbers, \
             `Order::append_lines(&db, filter, &mut [line])`, against a plain `$push` of the \
             same line with the driver's `update_one`, which numbers nothing; 1 and 16 \
             appenders on one document. {} interleaved rounds, contenders rotated each round; \
             appends/s and round trips/append are medians over rounds, the ratio the median \
             of the per-round ratios (min–max over rounds). Every document is read back after \
             its trial: all items there, the appended ones numbered exactly 1 to n.\n",
            config.rounds,
        );
        items::print(results);
    }
    if let Some(rows) = &first_used {
        println!("## A counter's first use\n");
        println!(
            "One task, 1,000 new scopes of a counters sequence (200 with `--quick`): the first \
             insert into each makes its counter, after the check that no number of the \
             sequence is stored without one (the first `$inc` sent without the upsert finds \
             none; the counter and the collection are read; the upsert makes it); then the \
             next insert into each, through the same handle; then the first through a fresh \
             handle, the counters existing (the `$inc` finds each at once); against the \
             tutorial's upsert by hand, which makes a counter without looking. Commands sent \
             per insert, and the median latency of one insert; {} rounds, medians.\n",
            config.rounds.min(3)
        );
        first_use::print(rows);
    }
    if let Some(rows) = &cancel {
        println!(
            "## Cancellation storms
"
        );
        println!(
            "Each contender on a client of its own: rounds of 64 tasks, 62 inserts cancelled \
             after 300 µs (`tokio::time::timeout`) and 2 normal inserts with a 10 s limit; \
             then one plain `insert_one` (5 s limit) right after the last round, 2 s and 7 s \
             later. `× driver in spawn` divides the slowest normal insert by that of the \
             driver's `insert_one` run in a task of its own (whose cancellation drops only \
             the wait), the best the driver alone can do under cancellation.\n"
        );
        cancel::print(rows);
    }
    if let Some(rows) = &served {
        let settings = service::Settings::of(&config);
        println!("## The example service over HTTP\n");
        println!(
            "`examples/service` started in this process on a free port, {} rounds per \
             contender (alternating), each on a fresh database with a client and a \
             `Sequences` handle of its own: {} concurrent HTTP clients for {:.0} s on \
             `POST /projects/{{p}}/tickets` (8 projects), then {:.0} s on `POST /invoices`; \
             {:.0} % of the requests hang up after a random delay of up to {} ms (the \
             connection is closed, so the server drops the handler). The service, its \
             clients and the database server share this machine. `201/s` is the median over \
             rounds; latencies are those of the requests answered (not hung up), over all \
             rounds. `check`: every 201 stored once under its number with its request id, no \
             number twice in a project, no request id twice, tickets from 1000, invoices \
             exactly 1..=n (ObjectId: every 201 stored once with its request id and project, \
             no request id twice). Three contenders: seqid; the tutorial's two calls by hand; \
             and the ObjectId mode, the same tickets stored under an ObjectId with no number \
             (what ids cost: `× ObjectId`), tickets only.\n",
            settings.rounds,
            settings.clients,
            settings.duration.as_secs_f64(),
            settings.duration.as_secs_f64(),
            service::HANGUP_SHARE * 100.0,
            service::HANGUP_WITHIN.as_millis()
        );
        service::print(rows);
        println!();
    }
    if let Some(rows) = &bared {
        println!("## A bare optimistic insert, step by step\n");
        println!(
            "The optimistic strategy through a `Sequences` handle and through a bare \
             `mongodb::Database`, each trial {} documents from an empty collection by 1 task \
             and by 16, {} rounds alternating; `ms per insert` is one task's mean (median \
             over tasks and rounds), `× handle` the bare call's over the handle's at the \
             same task count; the commands are counted by the client's command monitor, \
             with the mean time of each.\n",
            480,
            config.rounds.min(3)
        );
        bare::print(rows);
    }
    if let Some(rows) = &ticketed {
        println!("## Where a ticket's time goes\n");
        println!(
            "The example service's tickets without HTTP: {} tasks insert tickets (8 \
             projects) for {:.1} s per trial, {} rounds, contenders rotated, every trial on \
             a server of its own: the service's `objectid` mode (no number, no index but \
             `_id`'s); the same ticket with a number counted in this process (no round trip) \
             and the service's unique `{{ project, number }}` index, nothing of seqid; and \
             the service's seqid ticket (block, through the handle). `× ObjectId` per round \
             (min–max); latencies over all rounds; CPU per insert, this process's (the \
             client: driver and seqid) and the server's. From the first row to the second \
             is the server's price of a number tickets are found by; from the second to \
             the third, seqid's.\n",
            16,
            config.trial.max(Duration::from_secs(1)).as_secs_f64(),
            config.rounds
        );
        ticket::print(rows);
    }
    if let Some(results) = &far {
        println!("## Across a slow network\n");
        println!(
            "Every contender through the harness's proxy, which holds each request for the \
             delay added to a round trip before sending it on (tokio's timer rounds a delay \
             up to the next millisecond: the pings below are the round trips it made). Each \
             latency on a fresh database, client (the driver's default pool of 10 \
             connections) and `Sequences` handle; {} interleaved rounds × {} task counts × \
             the contenders, rotated, {:.1} s per trial. `calls/s` is the median over rounds \
             (min–max); the `×` columns are medians of per-round ratios against the \
             baselines of the same kind (inserts, or numbers on their own); p50 / p99 / p99.9 \
             are each call's time over every round. Every number taken is checked: none \
             twice, none below 1.\n",
            config.latency_rounds,
            config.latency_tasks.len(),
            config.latency_trial.as_secs_f64()
        );
        latency::print(results);
        let server = seqid_harness::server_kind()?.to_string();
        latency::draw(results, &config.latency_chart, &server)?;
        println!(
            "Chart of calls/s against tasks, a panel per latency: `{}`.\n",
            config.latency_chart.display()
        );
    }
    println!(
        "Absolute figures depend on the server; the ratios are what this run shows. \
         Whole run: {:.0} s.",
        began.elapsed().as_secs_f64()
    );
    // A long run can outlast the idle connection this client began with; the database
    // is dropped again at the next run's start anyway.
    if let Err(error) = db.drop().await {
        eprintln!("warning: dropping the benchmark's database failed: {error}");
    }
    if let Some(rows) = &contended {
        println!("## Uncoordinated optimistic writers\n");
        println!(
            "`strategy = \"optimistic\"` with the type's defaults. Writers are tasks inserting \
             through a bare `mongodb::Database`, or OS processes with a `Sequences` handle each, \
             {} inserts per writer, one after the other; another OS process runs the tutorial's \
             loop by hand on the same collection for as long as they write. Latency is each \
             successful insert's; `stored` is the collection's count afterwards, which must be \
             the inserts acknowledged plus the tutorial's.\n",
            if config.rounds > 1 { 40 } else { 10 }
        );
        contention::print(rows);
    }
    Ok(())
}
