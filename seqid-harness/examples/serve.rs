//! Starts the test server the way tests do, prints its URI, and keeps it
//! running until Enter is pressed (or stdin closes), e.g. to poke at it with
//! `mongosh` or to run a worker by hand:
//!
//! ```text
//! cargo run -p seqid-harness --example serve
//! ```

use std::time::Instant;

fn main() {
    let started = Instant::now();
    match seqid_harness::server_uri() {
        Ok(uri) => {
            println!("{}", seqid_harness::server_kind().unwrap_or_default());
            println!("MONGODB_URI={uri}");
            println!("(ready after {:?}; press Enter to stop)", started.elapsed());
            let _ = std::io::stdin().read_line(&mut String::new());
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
