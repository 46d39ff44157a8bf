//! The client's own work per insert in instructions, counted by valgrind's callgrind:
//! unlike CPU time, the count is the same from run to run whatever else the machine does,
//! so a difference of a few percent between two contenders is a fact, not noise.
//!
//! For each contender, this benchmark runs itself twice under callgrind (`--only cost`
//! with that contender alone, on this run's server), with `FEW` and then `MANY` inserts,
//! and divides the difference of the two totals by the difference of the inserts: what
//! starting the process, the runtime and the client cost cancels out. Counted: every
//! instruction this process executes in user space (the driver's background tasks
//! included), not the kernel's (system calls) and not the server's.

use std::process::Command;

use crate::Config;
use crate::cost::Contender;
use crate::model::BoxError;
use crate::stats::Table;

/// The database the runs under callgrind use, apart from this run's.
const DATABASE: &str = "seqid_bench_instructions";

pub struct Row {
    label: &'static str,
    per_insert: f64,
}

/// `None` when valgrind is not installed: the part is then skipped, and says so.
pub fn run(config: &Config) -> Result<Option<Vec<Row>>, BoxError> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        return Ok(None);
    }
    let (few, many) = if config.rounds > 1 {
        (200, 1200)
    } else {
        (50, 150)
    };
    let uri = seqid_harness::server_uri()?;
    let exe = std::env::current_exe()?;
    let mut rows = Vec::new();
    for contender in Contender::ALL {
        let name = contender.short();
        let count = |inserts: u32| -> Result<u64, BoxError> {
            let output = Command::new("valgrind")
                .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
                .arg(&exe)
                .args(["--only", "cost", "--rounds", "1", "--cost-contenders", name])
                .args(["--cost-inserts", &inserts.to_string()])
                .env("MONGODB_URI", &uri)
                .env("SEQID_BENCH_DATABASE", DATABASE)
                .output()?;
            let stderr = String::from_utf8_lossy(&output.stderr);
            if !output.status.success() {
                return Err(format!("callgrind run of {name} failed:\n{stderr}").into());
            }
            collected(&stderr)
                .ok_or_else(|| format!("no `Collected` line from callgrind:\n{stderr}").into())
        };
        let (at_few, at_many) = (count(few)?, count(many)?);
        rows.push(Row {
            label: contender.label(),
            per_insert: (at_many as f64 - at_few as f64) / f64::from(many - few),
        });
    }
    Ok(Some(rows))
}

/// The total callgrind prints last: `==123== Collected : 86665530`.
fn collected(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .filter_map(|line| line.split_once("Collected :"))
        .filter_map(|(_, count)| count.trim().parse().ok())
        .next_back()
}

pub fn print(rows: &[Row]) {
    let driver = rows[0].per_insert;
    let tutorial = rows[1].per_insert;
    let mut table = Table::new(&[
        "contender",
        "instructions/insert",
        "× driver",
        "+ over driver",
        "× tutorial",
    ]);
    for row in rows {
        table.row(vec![
            row.label.into(),
            format!("{:.0}", row.per_insert),
            format!("{:.3}", row.per_insert / driver),
            format!("{:+.0}", row.per_insert - driver),
            format!("{:.3}", row.per_insert / tutorial),
        ]);
    }
    table.print();
}
