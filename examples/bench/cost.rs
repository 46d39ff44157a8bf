//! The client's own cost: CPU time and heap allocations of this process per insert, for
//! each strategy next to the driver's own `insert_one` of the same document. A server
//! answers in hundreds of microseconds here and in tens on MongoDB, so what the client
//! spends matters more there than the ratios of the other parts show.
//!
//! One task inserts `n` documents per trial; the allocations are counted by the
//! benchmark's global allocator ([`Counting`]), the CPU time with
//! `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` (whole process: the driver's background tasks
//! included, as users pay them). Every figure is
//! a median over interleaved rounds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use seqid::{Document, Model};

use crate::Config;
use crate::app::Ticket;
use crate::model::{
    Block100Doc, BoxError, CodedDoc, CountersDoc, Make, OptimisticDoc, TutorialDoc,
    tutorial_next_id,
};
use crate::stats::{Table, median};

/// The CPU time this process has used, to the nanosecond.
fn process_cpu() -> Option<std::time::Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the call to fill.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    (status == 0).then(|| std::time::Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

/// `System`, counting what it hands out.
pub struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated and not yet freed.
static LIVE: AtomicU64 = AtomicU64::new(0);

/// The most bytes in use at once since [`reset_peak`].
static PEAK: AtomicU64 = AtomicU64::new(0);

/// The heap in use now, in bytes.
pub fn heap_in_use() -> u64 {
    LIVE.load(Ordering::Relaxed)
}

/// Starts measuring the peak heap from what is in use now.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// The most bytes in use at once since [`reset_peak`].
pub fn peak() -> u64 {
    PEAK.load(Ordering::Relaxed)
}

fn grew(by: u64) {
    let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; the counters are plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        grew(layout.size() as u64);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        grew(new_size as u64);
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The contenders of this part, which `--only instructions` runs one at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    Driver,
    Tutorial,
    Block100,
    Counters,
    Coded,
    Optimistic,
    TicketDriver,
    Ticket,
}

impl Contender {
    pub const ALL: [Contender; 8] = [
        Contender::Driver,
        Contender::Tutorial,
        Contender::Block100,
        Contender::Counters,
        Contender::Coded,
        Contender::Optimistic,
        Contender::TicketDriver,
        Contender::Ticket,
    ];

    /// The name `--cost-contenders` takes.
    pub fn short(self) -> &'static str {
        match self {
            Contender::Driver => "driver",
            Contender::Tutorial => "tutorial",
            Contender::Block100 => "block",
            Contender::Counters => "counters",
            Contender::Coded => "coded",
            Contender::Optimistic => "optimistic",
            Contender::TicketDriver => "ticket-driver",
            Contender::Ticket => "ticket",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Contender::Driver => "driver insert_one, integer _id from memory",
            Contender::Tutorial => "driver findAndModify + insert_one (the tutorial, by hand)",
            Contender::Block100 => "seqid block 100",
            Contender::Counters => "seqid counters",
            Contender::Coded => "seqid counters + display code",
            Contender::Optimistic => "seqid optimistic",
            Contender::TicketDriver => {
                "driver insert_one of the service's ticket, number from memory"
            }
            Contender::Ticket => "seqid, the service's ticket (block, scoped by project)",
        }
    }

    fn collection(self) -> &'static str {
        match self {
            Contender::Driver => "cost_driver",
            Contender::Tutorial => "cost_tutorial",
            Contender::Block100 => Block100Doc::SEQUENCE.collection,
            Contender::Counters => CountersDoc::SEQUENCE.collection,
            Contender::Coded => CodedDoc::SEQUENCE.collection,
            Contender::Optimistic => OptimisticDoc::SEQUENCE.collection,
            Contender::TicketDriver => "cost_tickets",
            Contender::Ticket => Ticket::SEQUENCE.collection,
        }
    }

    /// The driver's own insert of the document under an integer `_id`: the whole of the
    /// first contender, and the tutorial's second command.
    async fn insert_integer_id(
        self,
        db: &seqid::Database,
        id: i64,
        n: i32,
    ) -> Result<(), BoxError> {
        db.collection::<TutorialDoc>(self.collection())
            .insert_one(TutorialDoc {
                id,
                name: "cost".to_owned(),
                n,
            })
            .await?;
        Ok(())
    }

    async fn insert(self, db: &seqid::Database, id: i64, n: i32) -> Result<(), BoxError> {
        let name = "cost";
        match self {
            Contender::Driver => self.insert_integer_id(db, id, n).await?,
            Contender::Tutorial => {
                let id = tutorial_next_id(db, "cost_tutorial").await?;
                self.insert_integer_id(db, id, n).await?;
            }
            Contender::Block100 => {
                Block100Doc::make(name, n).insert(db).await?;
            }
            Contender::Counters => {
                CountersDoc::make(name, n).insert(db).await?;
            }
            Contender::Coded => {
                CodedDoc::make(name, n).insert(db).await?;
            }
            Contender::Optimistic => {
                OptimisticDoc::make(name, n).insert(db).await?;
            }
            Contender::TicketDriver => {
                let mut ticket = ticket(n);
                ticket.number = id;
                db.collection::<Ticket>(self.collection())
                    .insert_one(&ticket)
                    .await?;
            }
            Contender::Ticket => {
                ticket(n).insert(db).await?;
            }
        }
        Ok(())
    }
}

/// A ticket of the example service, in one of 8 projects, unnumbered.
fn ticket(n: i32) -> Ticket {
    Ticket {
        id: None,
        project: mongodb::bson::Bson::String(format!("project-{}", n % 8)),
        number: 0,
        title: "The printer is on fire".to_owned(),
        request: format!("request-{n}"),
    }
}

/// Per insert, for one contender: `[cpu µs, allocations, bytes, wall µs][round]`.
pub struct Row {
    contender: Contender,
    /// The bytes of the insert's boxed state (seqid's contenders only).
    state_bytes: Option<u64>,
    cpu_us: Vec<f64>,
    allocations: Vec<f64>,
    bytes: Vec<f64>,
    wall_us: Vec<f64>,
}

pub async fn run(database: &str, config: &Config) -> Result<Vec<Row>, BoxError> {
    // A client of its own, without a command monitor (which allocates per command).
    let client = seqid_harness::client().await?;
    let db = seqid::Sequences::new(&client).database(database);
    let per = i32::try_from(config.cost_inserts)?;
    let contenders: Vec<Contender> = Contender::ALL
        .into_iter()
        .filter(|c| {
            config.cost_contenders.is_empty()
                || config.cost_contenders.iter().any(|s| s == c.short())
        })
        .collect();
    if contenders.is_empty() {
        return Err(format!("no cost contender among {:?}", config.cost_contenders).into());
    }
    let mut rows: Vec<Row> = contenders
        .iter()
        .map(|&contender| Row {
            contender,
            state_bytes: state_bytes(contender, &db),
            cpu_us: Vec::new(),
            allocations: Vec::new(),
            bytes: Vec::new(),
            wall_us: Vec::new(),
        })
        .collect();
    let mut next_id = 1;
    for round in 0..config.rounds {
        for k in 0..contenders.len() {
            let at = (k + round) % contenders.len();
            let contender = contenders[at];
            // Fresh collections (SecantusDB slows as data accumulates), and a warm pool.
            db.collection::<mongodb::bson::Document>(contender.collection())
                .drop()
                .await?;
            contender.insert(&db, next_id, -1).await?;
            next_id += 1;
            let (db, first) = (db.clone(), next_id);
            next_id += i64::from(per);
            let trial = tokio::spawn(async move {
                let cpu = process_cpu();
                let (allocations, bytes) = (
                    ALLOCATIONS.load(Ordering::Relaxed),
                    BYTES.load(Ordering::Relaxed),
                );
                let start = Instant::now();
                for n in 0..per {
                    contender.insert(&db, first + i64::from(n), n).await?;
                }
                let wall = start.elapsed();
                let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
                let bytes = BYTES.load(Ordering::Relaxed) - bytes;
                let cpu = process_cpu()
                    .zip(cpu)
                    .map(|(after, before)| after.saturating_sub(before));
                Ok::<_, BoxError>((cpu, allocations, bytes, wall))
            });
            let (cpu, allocations, bytes, wall) = trial.await??;
            let per = f64::from(per);
            let row = &mut rows[at];
            row.cpu_us
                .push(cpu.map_or(f64::NAN, |d| d.as_secs_f64() * 1e6 / per));
            row.allocations.push(allocations as f64 / per);
            row.bytes.push(bytes as f64 / per);
            row.wall_us.push(wall.as_secs_f64() * 1e6 / per);
        }
    }
    for contender in contenders {
        db.collection::<mongodb::bson::Document>(contender.collection())
            .drop()
            .await?;
    }
    Ok(rows)
}

/// What `into_future` allocates for one insert of a seqid contender, before it runs: the
/// box holding the insert's whole state, as large as the largest state any of its paths
/// reaches. The least of a few tries, in case another thread allocated meanwhile.
fn state_bytes(contender: Contender, db: &seqid::Database) -> Option<u64> {
    use std::future::IntoFuture;
    fn measure<T: Document + Make>(db: &seqid::Database) -> u64 {
        (0..5)
            .map(|_| {
                let mut doc = T::make("cost", 0);
                let before = BYTES.load(Ordering::Relaxed);
                let future = doc.insert(db).into_future();
                let bytes = BYTES.load(Ordering::Relaxed) - before;
                drop(future);
                bytes
            })
            .min()
            .unwrap_or(0)
    }
    match contender {
        Contender::Driver | Contender::Tutorial | Contender::TicketDriver => None,
        Contender::Ticket => Some(
            (0..5)
                .map(|_| {
                    let mut ticket = ticket(0);
                    let before = BYTES.load(Ordering::Relaxed);
                    let future = ticket.insert(db).into_future();
                    let bytes = BYTES.load(Ordering::Relaxed) - before;
                    drop(future);
                    bytes
                })
                .min()
                .unwrap_or(0),
        ),
        Contender::Block100 => Some(measure::<Block100Doc>(db)),
        Contender::Counters => Some(measure::<CountersDoc>(db)),
        Contender::Coded => Some(measure::<CodedDoc>(db)),
        Contender::Optimistic => Some(measure::<OptimisticDoc>(db)),
    }
}

pub fn print(rows: &[Row]) {
    let of = |wanted: Contender| rows.iter().find(|r| r.contender == wanted);
    let alloc_tutorial = of(Contender::Tutorial).map(|r| median(&r.allocations));
    let (cpu0, alloc0, bytes0) =
        of(Contender::Driver).map_or((f64::NAN, f64::NAN, f64::NAN), |driver| {
            (
                median(&driver.cpu_us),
                median(&driver.allocations),
                median(&driver.bytes),
            )
        });
    let mut table = Table::new(&[
        "contender",
        "client CPU µs/insert",
        "× driver CPU",
        "allocations/insert",
        "+ over driver",
        "+ over tutorial",
        "bytes allocated/insert",
        "insert's state, bytes",
        "wall µs/insert",
    ]);
    for row in rows {
        let (cpu, allocations, bytes) = (
            median(&row.cpu_us),
            median(&row.allocations),
            median(&row.bytes),
        );
        table.row(vec![
            row.contender.label().into(),
            format!("{cpu:.0}"),
            format!("{:.2}", cpu / cpu0),
            format!("{allocations:.1}"),
            format!("{:+.1}", allocations - alloc0),
            match row.contender {
                Contender::Counters | Contender::Optimistic => alloc_tutorial
                    .map_or(String::new(), |tutorial| {
                        format!("{:+.1}", allocations - tutorial)
                    }),
                _ => String::new(),
            },
            format!("{bytes:.0} ({:+.0})", bytes - bytes0),
            row.state_bytes.map_or(String::new(), |b| b.to_string()),
            format!("{:.0}", median(&row.wall_us)),
        ]);
    }
    table.print();
}
