//! The processes' standard input. As with `mpirun`, the launcher's own input goes to the
//! ranks `--stdin` names (rank 0 by default, `all`, `none`), whose input is a pipe the
//! launcher writes; every other process reads an empty input (`/dev/null`). Tools and
//! clients push input to those same pipes with `PMIx_IOF_push` (the `push_stdin` upcall,
//! v5.0 §18.5.9); `PMIX_IOF_COMPLETE` closes them.
//!
//! Each pipe has a writer task that writes what it is handed, in order, and closes the
//! pipe at the end of the input or when the process stops reading.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read};
use std::sync::Mutex;

use pmix::model::{Proc, Rank};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc;

/// Which ranks of the launched job read the launcher's own input (`--stdin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StdinTarget {
    Rank(u32),
    All,
    None,
}

/// `--stdin`'s value: a rank, `all` or `none`.
pub(crate) fn stdin_target(v: &str) -> Result<StdinTarget, String> {
    match v {
        "all" => Ok(StdinTarget::All),
        "none" => Ok(StdinTarget::None),
        rank => rank
            .parse()
            .map(StdinTarget::Rank)
            .map_err(|_| format!("a rank, all or none, not {rank}")),
    }
}

impl StdinTarget {
    /// Whether `rank` reads the launcher's input.
    pub(crate) fn takes(self, rank: Rank) -> bool {
        match self {
            StdinTarget::Rank(r) => rank.0 == r,
            StdinTarget::All => true,
            StdinTarget::None => false,
        }
    }
}

/// A chunk of input, or the end of it.
type Chunk = Option<Vec<u8>>;

/// The input pipes of the processes that have one, by process.
#[derive(Default)]
pub(crate) struct Inputs(Mutex<BTreeMap<Proc, mpsc::UnboundedSender<Chunk>>>);

impl Inputs {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Proc, mpsc::UnboundedSender<Chunk>>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `proc`'s input is `pipe`: start the task that writes to it.
    pub(crate) fn add(&self, proc: Proc, mut pipe: ChildStdin) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Chunk>();
        self.lock().insert(proc.clone(), tx);
        tokio::spawn(async move {
            while let Some(Some(bytes)) = rx.recv().await {
                if let Err(e) = pipe.write_all(&bytes).await {
                    // The process closed its input or ended: what follows has no reader.
                    tracing::debug!("writing the input of {proc}: {e}");
                    return;
                }
            }
            // The end of the input: dropping the pipe closes it.
        });
    }

    /// Hand `data` to the input of each of `targets` that has one (a wildcard rank names
    /// every process of its namespace), then close those inputs when `complete`. How many
    /// inputs took it.
    pub(crate) fn push(&self, targets: &[Proc], data: Option<&[u8]>, complete: bool) -> usize {
        let mut inputs = self.lock();
        let chosen: Vec<Proc> = inputs
            .keys()
            .filter(|p| {
                targets
                    .iter()
                    .any(|t| t.nspace == p.nspace && (t.rank == Rank::WILDCARD || t.rank == p.rank))
            })
            .cloned()
            .collect();
        for proc in &chosen {
            let Some(tx) = inputs.get(proc) else { continue };
            let mut open = true;
            if let Some(bytes) = data.filter(|b| !b.is_empty()) {
                open = tx.send(Some(bytes.to_vec())).is_ok();
            }
            if complete || !open {
                let _ = tx.send(None);
                inputs.remove(proc);
            }
        }
        chosen.len()
    }
}

/// Forward the launcher's own input to `targets` until it ends, on a thread of its own (a
/// read of a terminal cannot be cancelled, and must not hold up the launcher's exit). A
/// terminal is read only while the launcher is in its foreground: a launcher started in
/// the background leaves it to the shell.
pub(crate) fn forward_own_input(inputs: std::sync::Arc<Inputs>, targets: Vec<Proc>) {
    let stdin = std::io::stdin();
    if stdin.is_terminal() && !in_foreground(&stdin) {
        inputs.push(&targets, None, true);
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("pmixrun-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if inputs.push(&targets, Some(&buf[..n]), false) == 0 {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        tracing::debug!("reading the launcher's input: {e}");
                        break;
                    }
                }
            }
            inputs.push(&targets, None, true);
        });
    if let Err(e) = spawned {
        eprintln!("pmixrun: cannot forward the input: {e}");
    }
}

/// Whether this process is in the foreground of the terminal `tty` (a background read of
/// it would stop the launcher).
fn in_foreground(tty: &std::io::Stdin) -> bool {
    nix::unistd::tcgetpgrp(tty).is_ok_and(|fg| fg == nix::unistd::getpgrp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_takes_a_rank_all_or_none() {
        assert_eq!(stdin_target("0"), Ok(StdinTarget::Rank(0)));
        assert_eq!(stdin_target("3"), Ok(StdinTarget::Rank(3)));
        assert_eq!(stdin_target("all"), Ok(StdinTarget::All));
        assert_eq!(stdin_target("none"), Ok(StdinTarget::None));
        assert!(stdin_target("-1").is_err());
        assert!(stdin_target("some").is_err());
        assert!(StdinTarget::Rank(1).takes(Rank(1)) && !StdinTarget::Rank(1).takes(Rank(0)));
        assert!(StdinTarget::All.takes(Rank(7)) && !StdinTarget::None.takes(Rank(0)));
    }
}
