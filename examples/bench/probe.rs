//! What the benchmark measures besides wall time: commands (counted by the harness's
//! `CommandCounter` from the driver's command monitoring), the driver-side duration of
//! every command, and the CPU time of this process and of the server process.

use std::collections::HashMap;
use std::fs;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mongodb::bson::{Bson, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use seqid::Database;
use seqid_harness::CommandCounter;

/// Commands counted by name, and the summed `duration` of their succeeded/failed
/// events: the time from sending the command to reading its reply, as the driver sees it.
#[derive(Default)]
pub struct Monitor {
    pub counter: Arc<CommandCounter>,
    durations: Mutex<HashMap<String, (u64, Duration)>>,
}

/// A point in time of everything [`Monitor`] and the CPU clocks accumulate.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// `CommandCounter::total()`: all commands but the driver's housekeeping.
    pub commands: u64,
    /// Summed command durations (housekeeping excluded, like `total()`).
    pub command_time: Duration,
    pub by_name: HashMap<String, u64>,
    /// Summed durations of finished commands, by name.
    pub time_by_name: HashMap<String, (u64, Duration)>,
    pub server_cpu: Option<Duration>,
    pub client_cpu: Option<Duration>,
    /// Busy CPU time of the whole machine.
    pub machine_cpu: Option<Duration>,
}

/// Commands the driver sends on its own; also left out by `CommandCounter::total()`.
const HOUSEKEEPING: &[&str] = &["hello", "ismaster", "ping", "endsessions", "buildinfo"];

impl Monitor {
    pub fn new() -> Arc<Monitor> {
        Arc::new(Monitor {
            counter: CommandCounter::new(),
            durations: Mutex::default(),
        })
    }

    /// One handler for the client: the harness's counter, plus the durations.
    pub fn handler(self: &Arc<Self>) -> EventHandler<CommandEvent> {
        let EventHandler::Callback(count) = self.counter.handler() else {
            unreachable!("CommandCounter::handler is a plain callback")
        };
        let this = Arc::clone(self);
        EventHandler::callback(move |event: CommandEvent| {
            let finished = match &event {
                CommandEvent::Succeeded(e) => Some((&e.command_name, e.duration)),
                CommandEvent::Failed(e) => Some((&e.command_name, e.duration)),
                _ => None,
            };
            if let Some((name, duration)) = finished {
                let mut map = this.durations.lock().unwrap();
                let entry = map.entry(name.clone()).or_default();
                entry.0 += 1;
                entry.1 += duration;
            }
            count(event);
        })
    }

    pub fn snapshot(&self, server_pid: Option<u32>) -> Snapshot {
        let time_by_name = self.durations.lock().unwrap().clone();
        let command_time = time_by_name
            .iter()
            .filter(|(name, _)| !HOUSEKEEPING.contains(&name.to_ascii_lowercase().as_str()))
            .map(|(_, (_, d))| *d)
            .sum();
        Snapshot {
            commands: self.counter.total(),
            command_time,
            by_name: self.counter.snapshot(),
            time_by_name,
            server_cpu: server_pid.and_then(process_cpu),
            client_cpu: process_cpu(std::process::id()),
            machine_cpu: machine_busy(),
        }
    }
}

impl Snapshot {
    /// What happened between `self` (earlier) and `later`.
    pub fn delta(&self, later: &Snapshot) -> Snapshot {
        let mut by_name = HashMap::new();
        for (name, &n) in &later.by_name {
            let d = n - self.by_name.get(name).copied().unwrap_or(0);
            if d > 0 {
                by_name.insert(name.clone(), d);
            }
        }
        let mut time_by_name = HashMap::new();
        for (name, &(n, d)) in &later.time_by_name {
            let (n0, d0) = self.time_by_name.get(name).copied().unwrap_or_default();
            if n > n0 {
                time_by_name.insert(name.clone(), (n - n0, d.saturating_sub(d0)));
            }
        }
        Snapshot {
            commands: later.commands - self.commands,
            time_by_name,
            command_time: later.command_time.saturating_sub(self.command_time),
            by_name,
            server_cpu: later
                .server_cpu
                .zip(self.server_cpu)
                .map(|(b, a)| b.saturating_sub(a)),
            client_cpu: later
                .client_cpu
                .zip(self.client_cpu)
                .map(|(b, a)| b.saturating_sub(a)),
            machine_cpu: later
                .machine_cpu
                .zip(self.machine_cpu)
                .map(|(b, a)| b.saturating_sub(a)),
        }
    }

    /// CPU time of processes other than this one and the server (e.g. other builds).
    pub fn others_cpu(&self) -> Option<Duration> {
        let (m, s, c) = (self.machine_cpu?, self.server_cpu?, self.client_cpu?);
        Some(m.saturating_sub(s + c))
    }

    /// Commands by name with their mean duration, e.g. `findAndModify 12 × 610 µs`.
    pub fn commands_by_name(&self) -> String {
        let mut names: Vec<_> = self
            .by_name
            .iter()
            .filter(|(name, _)| !HOUSEKEEPING.contains(&name.to_ascii_lowercase().as_str()))
            .collect();
        names.sort();
        names
            .iter()
            .map(|(name, n)| match self.time_by_name.get(*name) {
                Some(&(finished, d)) if finished > 0 => format!(
                    "{name} {n} × {:.0} µs",
                    d.as_secs_f64() * 1e6 / finished as f64
                ),
                _ => format!("{name} {n}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The server's process id, if the server runs on this machine and says which it is.
pub async fn server_pid(db: &Database) -> Option<u32> {
    let status = db
        .client()
        .database("admin")
        .run_command(doc! { "serverStatus": 1 })
        .await
        .ok()?;
    let pid = match status.get("pid")? {
        Bson::Int32(n) => u32::try_from(*n).ok()?,
        Bson::Int64(n) => u32::try_from(*n).ok()?,
        Bson::Double(n) => *n as u32,
        _ => return None,
    };
    // A remote server's pid means nothing here: only trust a local python or mongod.
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    (comm.contains("python") || comm.contains("mongod") || comm.contains("nx")).then_some(pid)
}

/// Clock ticks per second of /proc/*/stat times (`getconf CLK_TCK`, 100 nearly everywhere).
fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100)
    })
}

/// User + system CPU time of a process (all its threads), from /proc/PID/stat.
pub fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    let ticks = clock_ticks();
    Some(Duration::from_secs_f64(
        (utime + stime) as f64 / ticks as f64,
    ))
}

/// The CPU model and the number of logical CPUs, from /proc/cpuinfo.
pub fn machine() -> String {
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).trim().to_owned())
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map(|kb| format!(", {:.1} GiB RAM", kb as f64 / 1024.0 / 1024.0))
        .unwrap_or_default();
    format!("{model}, {cores} logical CPUs{memory}, {}", os())
}

fn os() -> String {
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("Linux {}", kernel.trim())
}

/// CPU time used by the whole machine (all CPUs, busy time only), from /proc/stat.
pub fn machine_busy() -> Option<Duration> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
    let v: Vec<u64> = cpu
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
    let busy = v.iter().take(8).sum::<u64>() - v.get(3)? - v.get(4)?;
    Some(Duration::from_secs_f64(busy as f64 / clock_ticks() as f64))
}

/// The 1-minute load average.
pub fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// One fixed trial of a part that counts what it did (numbers taken, items appended): how
/// many, in how long, and what the process, the server and the machine did meanwhile.
pub struct Trial {
    pub count: u64,
    pub elapsed: Duration,
    pub usage: Snapshot,
}

impl Trial {
    pub fn per_second(&self) -> f64 {
        self.count as f64 / self.elapsed.as_secs_f64()
    }

    /// Commands sent per thing counted.
    pub fn round_trips(&self) -> f64 {
        self.usage.commands as f64 / self.count as f64
    }

    /// This process's CPU per thing counted, in µs.
    pub fn client_cpu_us(&self) -> f64 {
        self.usage
            .client_cpu
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e6 / self.count as f64)
    }

    /// Other processes' CPU, in cores, over the trial.
    pub fn others_busy(&self) -> f64 {
        self.usage
            .others_cpu()
            .map_or(f64::NAN, |d| d.as_secs_f64() / self.elapsed.as_secs_f64())
    }
}
