//! `seqid-server`: a MongoDB-compatible server for your own program, in one
//! command. It starts the server the tests use (see [`USAGE`]), prints its
//! `MONGODB_URI`, and runs until Ctrl-C or SIGTERM.

use std::ffi::OsString;
use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use seqid_harness::TestServer;

const USAGE: &str = "\
seqid-server: a MongoDB-compatible server for your program, until Ctrl-C

Usage: seqid-server [--port N] [--data DIR]

  --port N     listen on 127.0.0.1:N (default 27017, so that a program's default
               mongodb://localhost:27017 reaches it); `--port 0` for any free port
  --data DIR   keep the data in DIR (created if missing) across runs; without it
               the data is in memory and gone when the server stops
  -h, --help   print this help

It prints the server's kind and a line MONGODB_URI=<uri> (to `export`), then runs
until Ctrl-C or SIGTERM, and stops the server (which also stops if seqid-server is
killed). The server is the one seqid's tests use: `mongod` if on PATH, else
SecantusDB, installed on first use with `python3 -m pip` into the user's cache.
Neither embedded server is MongoDB (see seqid's guide, the test server).

Environment:
  SEQID_TEST_SERVER    secantus (SecantusDB only), nx (nx-27017 only), mongod
                       (mongod from PATH only), or auto (the default)
  SEQID_HARNESS_CACHE  where servers are installed (default: the user's cache
                       directory + /seqid-harness, e.g. ~/.cache/seqid-harness)
  SEQID_NX_VERBOSE=1   keep nx-27017's log line per command
  SEQID_HARNESS_DEBUG=1  say how long the server took to start
";

/// The port a program's default `mongodb://localhost:27017` reaches.
const DEFAULT_PORT: u16 = 27017;

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Command {
    Help,
    Serve { port: u16, data: Option<PathBuf> },
}

fn main() -> ExitCode {
    let command = match parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(problem) => {
            eprintln!("seqid-server: {problem}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Command::Serve { port, data } = command else {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(serve(port, data))
}

fn parse(args: impl Iterator<Item = OsString>) -> Result<Command, String> {
    let mut port = DEFAULT_PORT;
    let mut data = None;
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|arg| format!("unexpected argument {arg:?}"))?;
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_owned(), Some(value.into())),
            _ => (arg, None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--port" | "-p" => {
                let text = value("--port")?;
                port = text
                    .to_str()
                    .and_then(|text| text.parse().ok())
                    .ok_or_else(|| {
                        format!("--port takes a port number (0 to 65535), not {text:?}")
                    })?;
            }
            "--data" => data = Some(PathBuf::from(value("--data")?)),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok(Command::Serve { port, data })
}

async fn serve(port: u16, data: Option<PathBuf>) -> ExitCode {
    if port != 0 && TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_err() {
        eprintln!(
            "seqid-server: port {port} of 127.0.0.1 is in use (another MongoDB?): stop what \
             listens there, or choose another port with `--port N`, or `--port 0` for any free one"
        );
        return ExitCode::FAILURE;
    }
    if let Ok(uri) = std::env::var("MONGODB_URI")
        && !uri.trim().is_empty()
    {
        eprintln!(
            "seqid-server: note: MONGODB_URI is set in this shell; seqid-server starts a server of \
             its own all the same, and programs run from this shell keep the old MONGODB_URI until \
             you export the one below"
        );
    }
    let started = Instant::now();
    let mut builder = TestServer::builder().port(port);
    if let Some(dir) = &data {
        builder = builder.data_dir(dir);
    }
    let server = match builder.start().await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let port = server.port().expect("a local server has a port");
    let data = match &data {
        Some(dir) => format!("data in {}", dir.display()),
        None => "data in memory, gone when it stops".to_owned(),
    };
    println!("{} ({data})", server.kind());
    // The server advertises 127.0.0.1:PORT (SecantusDB as a one-member
    // replica set), so a plain URI works: the driver's discovery reaches it.
    println!("MONGODB_URI=mongodb://127.0.0.1:{port}");
    eprintln!(
        "seqid-server: ready after {:.1} s; Ctrl-C stops it",
        started.elapsed().as_secs_f64()
    );
    let outcome = tokio::select! {
        signal = stop_requested() => {
            eprintln!("seqid-server: {signal}: stopping the server");
            ExitCode::SUCCESS
        }
        () = gone(port) => {
            eprintln!("seqid-server: the server on port {port} has stopped (see above)");
            ExitCode::FAILURE
        }
    };
    drop(server);
    outcome
}

/// Waits for Ctrl-C or SIGTERM; returns which.
///
/// signal-hook's handlers set a flag, read here every 100 ms: tokio's own
/// (its `signal` feature) would make a program's `cargo test`, which adds
/// this crate, build tokio, mongodb and seqid a second time (see Cargo.toml).
/// The handlers stay, as tokio's did: a second Ctrl-C while the server stops
/// does not kill seqid-server.
async fn stop_requested() -> &'static str {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let caught = Arc::new(AtomicUsize::new(0));
    for signal in [SIGINT, SIGTERM] {
        // The signal's number, nonzero, tells which came.
        signal_hook::flag::register_usize(signal, Arc::clone(&caught), signal as usize)
            .expect("a Ctrl-C and SIGTERM handler");
    }
    loop {
        match caught.load(Ordering::SeqCst) {
            0 => tokio::time::sleep(Duration::from_millis(100)).await,
            signal if signal == SIGTERM as usize => return "SIGTERM",
            _ => return "Ctrl-C",
        }
    }
}

/// Returns once nothing listens on `port` any more: the server died (the
/// watchdog has said why on stderr).
async fn gone(port: u16) {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port))
            .await
            .is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn arguments() {
        let serve = |port, data: Option<&str>| Command::Serve {
            port,
            data: data.map(PathBuf::from),
        };
        assert_eq!(parsed(&[]), Ok(serve(27017, None)));
        assert_eq!(parsed(&["--port", "0"]), Ok(serve(0, None)));
        assert_eq!(
            parsed(&["--port=27018", "--data", "d"]),
            Ok(serve(27018, Some("d")))
        );
        assert_eq!(parsed(&["--data=a=b"]), Ok(serve(27017, Some("a=b"))));
        assert_eq!(parsed(&["--port", "1", "-h"]), Ok(Command::Help));
        assert!(
            parsed(&["--port"])
                .unwrap_err()
                .contains("--port needs a value")
        );
        assert!(parsed(&["--port", "x"]).unwrap_err().contains("not \"x\""));
        assert!(parsed(&["--port", "70000"]).is_err());
        assert!(
            parsed(&["serve"])
                .unwrap_err()
                .contains("unexpected argument \"serve\"")
        );
    }
}
