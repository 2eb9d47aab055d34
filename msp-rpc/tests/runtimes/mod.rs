//! Tasks on threads with tokio runtimes of their own, as a program with several runtimes shares
//! one connection (whose own tasks stay on the test's runtime).

use std::future::Future;

use tokio::sync::oneshot;

/// Runs `task(0)` to `task(count - 1)` at once on a new thread's current-thread runtime; their
/// outputs, in that order, once all are done (an error if one panicked).
pub fn on_own_runtime<T, F, Fut>(count: usize, task: F) -> oneshot::Receiver<Vec<T>>
where
    F: Fn(usize) -> Fut + Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let (done, outputs) = oneshot::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let all = runtime.block_on(async move {
            let tasks: Vec<_> = (0..count).map(|k| tokio::spawn(task(k))).collect();
            let mut all = Vec::with_capacity(count);
            for task in tasks {
                all.push(task.await.unwrap());
            }
            all
        });
        let _ = done.send(all);
    });
    outputs
}
