//! The in-process cost of handing out one id from a live block: no database involved.
//!
//! `cargo bench -p seqid --bench handout`

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use seqid::__private::LiveBlock;

/// Refills far apart, so that the measurement is the hand-out itself.
const BLOCK: u64 = 1 << 40;

fn uncontended(c: &mut Criterion) {
    let block = LiveBlock::new();
    block.refill(1, BLOCK);
    c.bench_function("block handout, 1 thread", |b| {
        b.iter(|| black_box(block.take_one()))
    });
}

fn contended(c: &mut Criterion) {
    const THREADS: usize = 8;
    c.bench_function("block handout, 8 threads (time per id)", |b| {
        b.iter_custom(|iters| {
            let block = Arc::new(LiveBlock::new());
            block.refill(1, BLOCK);
            let per_thread = iters.div_ceil(THREADS as u64);
            let start = Arc::new(Barrier::new(THREADS + 1));
            let workers: Vec<_> = (0..THREADS)
                .map(|_| {
                    let (block, start) = (block.clone(), start.clone());
                    thread::spawn(move || {
                        start.wait();
                        for _ in 0..per_thread {
                            black_box(block.take_one());
                        }
                    })
                })
                .collect();
            start.wait();
            let began = Instant::now();
            for worker in workers {
                worker.join().unwrap();
            }
            // Total wall time over all ids handed out: throughput cost per id.
            began
                .elapsed()
                .mul_f64(iters as f64 / (per_thread * THREADS as u64) as f64)
        })
    });
}

criterion_group! {
    name = handout;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = uncontended, contended
}
criterion_main!(handout);
