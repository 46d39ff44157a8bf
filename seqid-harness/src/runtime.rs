//! Running async driver code from sync code, on a runtime of its own.

use std::future::Future;
use std::thread;

/// Runs `future` to completion on a new current-thread runtime in a new
/// thread, so that this works from sync code and from inside any runtime
/// (including one that is shutting down or blocked). `Err` if the thread
/// panicked.
pub(crate) fn on_own_runtime<T: Send + 'static>(
    future: impl Future<Output = Result<T, String>> + Send + 'static,
) -> thread::Result<Result<T, String>> {
    thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(future)
    })
    .join()
}
