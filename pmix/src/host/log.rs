//! `PMIx_Log`'s local channels (v5.0 §12.4), written by the server's library for hosts that
//! do not log themselves ([`crate::server::Host::log`]'s default).
//!
//! | channel | where |
//! |---|---|
//! | `PMIX_LOG_STDERR`, `PMIX_LOG_STDOUT` | the server process's stderr or stdout, one line per message |
//! | `PMIX_LOG_SYSLOG`, `PMIX_LOG_LOCAL_SYSLOG` | the local syslog socket (`/dev/log`), facility `user`, priority `PMIX_LOG_SYSLOG_PRI` (default `LOG_ERR`) |
//! | `PMIX_LOG_GLOBAL_SYSLOG` | the same: a single node is its own gateway |
//! | anything else (`PMIX_LOG_EMAIL`, `PMIX_LOG_JOB_RECORD`, …) | not supported here |
//!
//! A message is "logged" once handed to the write or the socket (§12.4.1: success does not
//! mean receipt). Like `syslog(3)`, a machine without a syslog socket drops syslog messages
//! silently (a warning is traced). Without `PMIX_LOG_ONCE`, every channel is tried: all
//! succeed is `PMIX_SUCCESS`, some is `PMIX_ERR_PARTIAL_SUCCESS`, none is the first failure.
//! With it, channels are tried in order until one succeeds. A channel whose value is not a
//! string is `PMIX_ERR_BAD_PARAM`.
//!
//! Directives: `PMIX_LOG_SOURCE` (the process named in the line; default the requester),
//! `PMIX_LOG_TAG_OUTPUT` (prefix the channel's name), `PMIX_LOG_TIMESTAMP_OUTPUT` (prefix the
//! timestamp: `PMIX_LOG_TIMESTAMP`, the request's, or the current time with
//! `PMIX_LOG_GENERATE_TIMESTAMP`), `PMIX_LOG_SYSLOG_PRI`, `PMIX_LOG_ONCE`.

use std::io::Write;

use crate::model::{Info, Proc, Status, attr};

/// `LOG_ERR`, the standard's default syslog priority.
const DEFAULT_PRIORITY: i64 = 3;
/// The `user` facility of syslog.
const FACILITY_USER: i64 = 1;

enum Channel {
    Stderr,
    Stdout,
    Syslog,
}

fn channel(key: &str) -> Option<Channel> {
    if key == attr::LOG_STDERR.wire_key() {
        Some(Channel::Stderr)
    } else if key == attr::LOG_STDOUT.wire_key() {
        Some(Channel::Stdout)
    } else if key == attr::LOG_SYSLOG.wire_key()
        || key == attr::LOG_LOCAL_SYSLOG.wire_key()
        || key == attr::LOG_GLOBAL_SYSLOG.wire_key()
    {
        Some(Channel::Syslog)
    } else {
        None
    }
}

fn flag(directives: &[Info], key: &str) -> bool {
    directives
        .iter()
        .any(|i| i.key.as_str() == key && i.value.as_bool().unwrap_or(true))
}

/// [`write_local`] at the wall-clock time: what [`crate::server::Host::log`]'s default does,
/// and what a host without channels of its own calls.
pub fn write_local_now(
    source: &Proc,
    timestamp: i64,
    data: &[Info],
    directives: &[Info],
) -> Result<(), Status> {
    // Hosts run under the tokio driver, never under the simulator, whose hosts log on their
    // own clock.
    #[allow(clippy::disallowed_methods)]
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    write_local(source, timestamp, now, data, directives)
}

/// Log `data` for `source` on the local channels, as [`crate::server::Host::log`]'s default
/// does. `timestamp` is the request's (0: none); `now` the wall-clock time in seconds, used
/// for `PMIX_LOG_GENERATE_TIMESTAMP` (the caller reads the clock, so this stays testable).
pub fn write_local(
    source: &Proc,
    timestamp: i64,
    now: i64,
    data: &[Info],
    directives: &[Info],
) -> Result<(), Status> {
    if data.is_empty() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let source = directives
        .iter()
        .find(|i| i.key.as_str() == attr::LOG_SOURCE.wire_key())
        .and_then(|i| i.value.as_proc().cloned())
        .unwrap_or_else(|| source.clone());
    let once = flag(directives, attr::LOG_ONCE.wire_key());
    let tag = flag(directives, attr::LOG_TAG_OUTPUT.wire_key());
    let stamp = flag(directives, attr::LOG_TIMESTAMP_OUTPUT.wire_key()).then(|| {
        directives
            .iter()
            .find(|i| i.key.as_str() == attr::LOG_TIMESTAMP.wire_key())
            .and_then(|i| i.value.to_i64())
            .filter(|t| *t != 0)
            .or((timestamp != 0).then_some(timestamp))
            .unwrap_or_else(|| {
                if flag(directives, attr::LOG_GENERATE_TIMESTAMP.wire_key()) {
                    now
                } else {
                    0
                }
            })
    });
    let priority = directives
        .iter()
        .find(|i| i.key.as_str() == attr::LOG_SYSLOG_PRI.wire_key())
        .and_then(|i| i.value.to_i64())
        .filter(|p| (0..8).contains(p))
        .unwrap_or(DEFAULT_PRIORITY);
    let mut done = 0usize;
    let mut first_failure = None;
    for item in data {
        let key = item.key.as_str();
        let result = match (channel(key), item.value.as_str()) {
            (Some(_), None) => Err(Status::ERR_BAD_PARAM),
            (None, _) => Err(Status::ERR_NOT_SUPPORTED),
            (Some(ch), Some(text)) => {
                let mut line = String::new();
                if let Some(t) = stamp {
                    line.push_str(&format!("[{t}] "));
                }
                if tag {
                    line.push_str(&format!("[{key}] "));
                }
                line.push_str(&format!("{source}: {text}"));
                write(&ch, &line, priority)
            }
        };
        match result {
            Ok(()) => {
                done += 1;
                if once {
                    return Ok(());
                }
            }
            Err(Status::ERR_BAD_PARAM) => return Err(Status::ERR_BAD_PARAM),
            Err(s) => {
                first_failure.get_or_insert(s);
            }
        }
    }
    match (done, first_failure) {
        (_, None) => Ok(()),
        (0, Some(s)) => Err(s),
        (_, Some(_)) => Err(Status::ERR_PARTIAL_SUCCESS),
    }
}

fn write(ch: &Channel, line: &str, priority: i64) -> Result<(), Status> {
    let written = match ch {
        Channel::Stderr => writeln!(std::io::stderr(), "{line}"),
        Channel::Stdout => writeln!(std::io::stdout(), "{line}"),
        Channel::Syslog => {
            syslog(line, priority);
            return Ok(());
        }
    };
    written.map_err(|_| Status::ERR_IOF_FAILURE)
}

/// Hand a message to the local syslog socket, dropping it (as `syslog(3)` does) when there is
/// none.
fn syslog(line: &str, priority: i64) {
    let message = format!("<{}>pmix: {line}", FACILITY_USER * 8 + priority);
    let sent = std::os::unix::net::UnixDatagram::unbound()
        .and_then(|s| s.send_to(message.as_bytes(), "/dev/log"));
    if let Err(e) = sent {
        tracing::warn!("no syslog to log to ({e}); the message is dropped: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> Proc {
        Proc::try_new("job", 0).unwrap()
    }

    fn line(key: &str) -> Info {
        Info::with_key(key, "conformance of a log line".to_owned()).unwrap()
    }

    #[test]
    fn every_channel_is_tried_and_the_status_says_how_many_took_it() {
        let stderr = line(attr::LOG_STDERR.wire_key());
        let email = line(attr::LOG_EMAIL_ADDR.wire_key());
        assert_eq!(
            write_local(&me(), 0, 0, std::slice::from_ref(&stderr), &[]),
            Ok(())
        );
        assert_eq!(
            write_local(&me(), 0, 0, &[stderr.clone(), email.clone()], &[]),
            Err(Status::ERR_PARTIAL_SUCCESS)
        );
        assert_eq!(
            write_local(&me(), 0, 0, std::slice::from_ref(&email), &[]),
            Err(Status::ERR_NOT_SUPPORTED)
        );
        // Once: the first channel that works is enough.
        let once = [Info::new(attr::LOG_ONCE, true)];
        assert_eq!(write_local(&me(), 0, 0, &[email, stderr], &once), Ok(()));
    }

    #[test]
    fn bad_requests_are_refused() {
        assert_eq!(
            write_local(&me(), 0, 0, &[], &[]),
            Err(Status::ERR_BAD_PARAM)
        );
        let not_text = Info::new(attr::LOG_STDERR, "x".to_owned());
        let not_text = Info {
            value: crate::model::Value::Uint32(7),
            ..not_text
        };
        assert_eq!(
            write_local(&me(), 0, 0, &[not_text], &[]),
            Err(Status::ERR_BAD_PARAM)
        );
    }

    #[test]
    fn syslog_channels_are_handed_to_syslog_or_dropped_as_syslog_3_does() {
        let pri = [Info::new(attr::LOG_SYSLOG_PRI, 7)];
        for key in [
            attr::LOG_SYSLOG.wire_key(),
            attr::LOG_LOCAL_SYSLOG.wire_key(),
            attr::LOG_GLOBAL_SYSLOG.wire_key(),
        ] {
            assert_eq!(write_local(&me(), 0, 0, &[line(key)], &pri), Ok(()));
        }
    }
}
