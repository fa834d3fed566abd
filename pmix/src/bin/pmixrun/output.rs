//! The processes' output: each process writes its stdout and stderr into pipes the launcher
//! reads. What comes out is written to the launcher's own stdout and stderr, as it comes,
//! and handed to the server (`Server::iof_deliver`, through the launcher's loop) for the
//! tools and clients that pull it (`PMIx_IOF_pull`, v5.0 §18.5.7): a tool attached to
//! `pmixrun` sees the job's output, even what was written before it attached (the server
//! keeps what no one pulled yet).
//!
//! A process's exit is reported once its pipes are drained, so its last words come before
//! the launcher's report of its end. A process that leaves its pipes open to a child of its
//! own (a daemon it forked) is not waited for past [`LINGER`].

use std::io::Write;
use std::time::Duration;

use pmix::model::{IofChannel, Proc};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long a process's pipes are read after it exited, for output still in them.
pub(crate) const LINGER: Duration = Duration::from_secs(2);

/// Output of one process on one channel, for the server.
pub(crate) type Output = (Proc, IofChannel, Vec<u8>);

/// Read `pipe` until it closes: each chunk to the launcher's own `channel` and to `to_server`.
pub(crate) fn relay<R>(
    pipe: Option<R>,
    proc: Proc,
    channel: IofChannel,
    to_server: mpsc::UnboundedSender<Output>,
) -> Option<JoinHandle<()>>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let mut pipe = pipe?;
    Some(tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match pipe.read(&mut buf).await {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) => {
                    tracing::debug!("reading the output of {proc}: {e}");
                    return;
                }
            };
            let chunk = &buf[..n];
            let written = if channel == IofChannel::STDOUT_CHANNEL {
                let mut out = std::io::stdout().lock();
                out.write_all(chunk).and_then(|()| out.flush())
            } else {
                std::io::stderr().lock().write_all(chunk)
            };
            if let Err(e) = written {
                tracing::debug!("writing the output of {proc}: {e}");
            }
            let _ = to_server.send((proc.clone(), channel, chunk.to_vec()));
        }
    }))
}

/// Wait until the relays of a process that exited have read everything, or [`LINGER`]
/// passed.
pub(crate) async fn drained(relays: Vec<JoinHandle<()>>) {
    for relay in relays {
        let abort = relay.abort_handle();
        if tokio::time::timeout(LINGER, relay).await.is_err() {
            abort.abort();
        }
    }
}
