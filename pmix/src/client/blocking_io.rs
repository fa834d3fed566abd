//! The blocking client's own I/O: a call reads and writes the socket on the calling thread.
//!
//! A blocking call queues its request in the client's core, writes the frame, and then
//! reads the socket itself until its reply has come, so no other thread stands between the
//! server's answer and the caller. When several threads call at once, one of them reads (the
//! reader of the moment) and files every reply it reads; the others wait to be woken with
//! theirs, and whoever finds the socket free when its reply is still missing reads next.
//!
//! While no call is in flight, a background thread waits for the socket to become readable
//! and reads what the server pushes on its own (event notifications), so an event does not
//! wait for the next call. It never reads while a call is in flight: the reply then goes
//! straight to the thread that asked. Nor does it watch the socket while calls follow each
//! other: each reply would wake it for nothing, on machines where every core is busy. It
//! watches again once no call has started for [`QUIET`]; until then the callers read what
//! the server pushes.

use std::collections::BTreeMap;
use std::io::{self, ErrorKind, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{MsgFlags, recv, send};
use tokio::sync::mpsc;

use crate::Error;
use crate::model::Status;
use crate::wire::{Reply, Request, Tag};

use super::core::{ClientCore, Pushed, cannot_send, lock};

/// The largest read at once.
const CHUNK: usize = 64 * 1024;

/// How long no call must have started before the background thread watches the socket.
pub(crate) const QUIET: std::time::Duration = std::time::Duration::from_millis(5);

/// A connected socket in blocking mode.
#[derive(Debug)]
pub(crate) enum SyncStream {
    Unix(std::os::unix::net::UnixStream),
    Tcp(std::net::TcpStream),
}

impl SyncStream {
    pub(crate) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            SyncStream::Unix(s) => (&*s).read(buf),
            SyncStream::Tcp(s) => (&*s).read(buf),
        }
    }

    pub(crate) fn read_exact(&self, buf: &mut [u8]) -> io::Result<()> {
        match self {
            SyncStream::Unix(s) => (&*s).read_exact(buf),
            SyncStream::Tcp(s) => (&*s).read_exact(buf),
        }
    }

    /// Write all of `buf`. A server gone raises no `SIGPIPE`, which would end a process
    /// that has not ignored it (a C program has not): the write fails with `EPIPE`.
    pub(crate) fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        let fd = self.fd().as_raw_fd();
        while !buf.is_empty() {
            match send(fd, buf, MsgFlags::MSG_NOSIGNAL) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => buf = buf.get(n..).unwrap_or_default(),
                Err(Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            SyncStream::Unix(s) => s.as_fd(),
            SyncStream::Tcp(s) => s.as_fd(),
        }
    }

    fn shutdown(&self) {
        let _ = match self {
            SyncStream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            SyncStream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }
}

/// The blocking side of a connection: the socket, and whose turn it is to read it.
#[derive(Debug)]
pub(crate) struct SyncIo {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    core: Arc<Mutex<ClientCore>>,
    socket: SyncStream,
    turn: Mutex<Turn>,
    /// Signalled when `turn` changes while callers sleep on it: a reply filed, the socket
    /// free.
    changed: Condvar,
    /// Signalled for the background thread only: the connection closed.
    closing: Condvar,
    /// Held while a frame is written, so frames never interleave.
    writing: Mutex<()>,
    /// The buffer of whoever reads now.
    chunk: Mutex<Vec<u8>>,
    events: mpsc::UnboundedSender<Pushed>,
}

#[derive(Debug, Default)]
struct Turn {
    /// A thread is reading the socket.
    reading: bool,
    /// Calls waiting for their reply.
    in_flight: usize,
    /// Callers asleep on `changed`.
    sleepers: usize,
    /// Calls started, ever: the background thread's sign that calls go on.
    started: u64,
    /// Replies read and not yet taken, by tag.
    done: BTreeMap<u32, Result<Reply, Status>>,
    /// This side closed the connection: the background thread ends.
    closed: bool,
}

impl SyncIo {
    /// Take over a socket whose handshake is done; events the server pushes go to `events`.
    pub(crate) fn start(
        socket: SyncStream,
        core: Arc<Mutex<ClientCore>>,
        events: mpsc::UnboundedSender<Pushed>,
    ) -> Result<SyncIo, Error> {
        let shared = Arc::new(Shared {
            core,
            socket,
            turn: Mutex::default(),
            changed: Condvar::new(),
            closing: Condvar::new(),
            writing: Mutex::new(()),
            chunk: Mutex::new(vec![0; CHUNK]),
            events,
        });
        let background = shared.clone();
        std::thread::Builder::new()
            .name("pmix-client-events".into())
            .spawn(move || background.listen())
            .map_err(|e| Error::Status(Status::ERR_INIT, format!("cannot start a thread: {e}")))?;
        Ok(SyncIo { shared })
    }

    /// Send a request and wait for its reply, reading the socket on this thread.
    pub(crate) fn request(&self, req: &Request) -> Result<Result<Reply, Status>, Error> {
        let shared = &self.shared;
        let (tag, frames) = {
            let mut core = lock(&shared.core);
            let tag = core.send_request(req).map_err(|s| cannot_send(s, req))?;
            (tag, core.drain_transmit())
        };
        // Counted before the frame leaves: from here the background thread does not read,
        // so the reply comes to this thread.
        {
            let mut turn = shared.turn();
            turn.in_flight += 1;
            turn.started += 1;
        }
        let reply = match shared.write(&frames) {
            Ok(()) => shared.wait_for(tag),
            Err(e) => {
                lock(&shared.core).handle_lost();
                shared.file_core_output();
                tracing::debug!("writing to the server: {e}");
                shared.wait_for(tag)
            }
        };
        shared.turn().in_flight -= 1;
        Ok(reply)
    }

    /// Let the core queue frames, under its lock, and write them; answers what `queue`
    /// answered (requests the server does not answer).
    pub(crate) fn send<T>(
        &self,
        queue: impl FnOnce(&mut ClientCore) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let (out, frames) = {
            let mut core = lock(&self.shared.core);
            let out = queue(&mut core)?;
            (out, core.drain_transmit())
        };
        (self.shared.write(&frames))
            .map_err(|e| Error::Status(Status::ERR_LOST_CONNECTION, e.to_string()))?;
        Ok(out)
    }

    /// Close the connection: the server sees it end and the background thread stops.
    pub(crate) fn close(&self) {
        self.shared.turn().closed = true;
        self.shared.changed.notify_all();
        self.shared.closing.notify_all();
        self.shared.socket.shutdown();
    }
}

impl Drop for SyncIo {
    fn drop(&mut self) {
        self.close();
    }
}

impl Shared {
    fn turn(&self) -> MutexGuard<'_, Turn> {
        self.turn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self, frames: &[Vec<u8>]) -> io::Result<()> {
        let _whole = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        frames.iter().try_for_each(|f| self.socket.write_all(f))
    }

    /// Wait for the reply under `tag`, reading the socket whenever no one else does.
    fn wait_for(&self, tag: Tag) -> Result<Reply, Status> {
        let mut turn = self.turn();
        loop {
            if let Some(reply) = turn.done.remove(&tag.0) {
                return reply;
            }
            if turn.reading {
                turn.sleepers += 1;
                turn = (self.changed.wait(turn)).unwrap_or_else(PoisonError::into_inner);
                turn.sleepers -= 1;
                continue;
            }
            turn.reading = true;
            drop(turn);
            self.read_once(|chunk| self.socket.read(chunk));
            turn = self.turn();
        }
    }

    /// One read by the thread whose turn it is: the bytes go through the core, the replies
    /// they complete are filed, the events queued, and the turn ends.
    fn read_once(&self, read: impl FnOnce(&mut [u8]) -> io::Result<usize>) {
        {
            let mut chunk = self.chunk.lock().unwrap_or_else(PoisonError::into_inner);
            let n = read(&mut chunk);
            let closed = self.turn().closed;
            let mut core = lock(&self.core);
            match n {
                Ok(n) if n > 0 => core.handle_bytes(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {}
                end => {
                    // The socket is done: every call still waiting fails. When this side
                    // closed it (finalize), that is no loss for the process to hear of.
                    if let Err(e) = end {
                        tracing::debug!("reading from the server: {e}");
                    }
                    core.handle_lost();
                    if closed {
                        drop(core.drain_pushed());
                    }
                }
            }
        }
        self.file_core_output();
        let mut turn = self.turn();
        turn.reading = false;
        self.wake(turn);
    }

    /// Wake the callers waiting for a change of `turn`, which the caller just made; none
    /// waiting, no system call.
    fn wake(&self, turn: MutexGuard<'_, Turn>) {
        let sleepers = turn.sleepers;
        drop(turn);
        if sleepers > 0 {
            self.changed.notify_all();
        }
    }

    /// Move the replies the core completed to `done`, and its events to the event queue.
    fn file_core_output(&self) {
        let (replies, pushed): (Vec<_>, Vec<_>) = {
            let mut core = lock(&self.core);
            (
                std::iter::from_fn(|| core.poll_reply()).collect(),
                core.drain_pushed(),
            )
        };
        for p in pushed {
            let _ = self.events.send(p);
        }
        if !replies.is_empty() {
            let mut turn = self.turn();
            for (tag, reply) in replies {
                turn.done.insert(tag.0, reply);
            }
        }
    }

    /// The background thread: read what the server sends while no call is in flight.
    fn listen(&self) {
        loop {
            if !self.wait_quiet() {
                return;
            }
            let mut fds = [PollFd::new(self.socket.fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(e) => {
                    tracing::debug!("waiting for the server: {e}");
                    return;
                }
            }
            let mut turn = self.turn();
            if turn.closed {
                return;
            }
            if turn.reading || turn.in_flight > 0 {
                // A call reads; watch again once calls pause.
                continue;
            }
            turn.reading = true;
            drop(turn);
            let fd = self.socket.fd().as_raw_fd();
            self.read_once(|chunk| {
                recv(fd, chunk, MsgFlags::MSG_DONTWAIT).map_err(io::Error::from)
            });
            if lock(&self.core).is_lost() {
                return;
            }
        }
    }

    /// Wait until no call is in flight and none has started for [`QUIET`]; false once the
    /// connection is closed.
    fn wait_quiet(&self) -> bool {
        let mut turn = self.turn();
        loop {
            if turn.closed {
                return false;
            }
            let started = turn.started;
            let (t, timeout) =
                (self.closing.wait_timeout(turn, QUIET)).unwrap_or_else(PoisonError::into_inner);
            turn = t;
            if timeout.timed_out() && turn.started == started && turn.in_flight == 0 {
                return !turn.closed;
            }
        }
    }
}
