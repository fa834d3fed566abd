//! A peer that tries to get into a PMIx server under a false or borrowed identity: the
//! security test runs it as a second user (and as the owner, to take over a live rank).
//!
//! `pmix_intruder (--tcp HOST:PORT | --unix PATH) ATTEMPT`, where ATTEMPT is one of
//!
//! - `tool-none UID GID`: a tool with security mode `none` and no credential, stating a uid;
//! - `tool-native UID GID`: a tool with a `native` credential of that uid and gid (stating
//!   root's, or replaying the owner's, which is the same bytes);
//! - `client NSPACE RANK UID GID`: a client of that rank, with a `native` credential;
//! - `client-flood NSPACE RANK UID GID MIB SECONDS`: that client, accepted, then writes MIB
//!   mebibytes of requests (a command no server knows, each answered) without reading a
//!   reply, for at most SECONDS, and says how many it wrote: a legitimate rank that
//!   never reads, against the server's limits (docs/hostile-input.md).
//!
//! Prints one line: `accepted`, `refused <status>` (the server's answer), or `unreachable
//! <error>` (the connection itself failed, e.g. the socket's permissions); exits 0 either
//! way, so that the test reads the verdict. The connection closes at once afterwards.

use std::io::{Read, Write};
use std::process::ExitCode;

use pmix::codec::BufferType;
use pmix::model::{Proc, Rank, Status};
use pmix::wire::PeerType;
use pmix::wire::handshake::{ConnectRequest, OPENPMIX_VERSION, decode_status, native_credential};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(verdict) => {
            println!("{verdict}");
            ExitCode::SUCCESS
        }
        Err(usage) => {
            eprintln!("pmix_intruder: {usage}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<String, String> {
    let [how, address, attempt, rest @ ..] = args else {
        return Err("usage: (--tcp HOST:PORT | --unix PATH) ATTEMPT ARGS...".into());
    };
    let number = |i: usize| -> Result<u32, String> {
        rest.get(i)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{attempt}: argument {} is not a number", i + 1))
    };
    let request = match attempt.as_str() {
        "tool-none" | "tool-native" => {
            let (uid, gid) = (number(0)?, number(1)?);
            let native = attempt == "tool-native";
            ConnectRequest {
                psec: if native { "native" } else { "none" }.into(),
                credential: if native {
                    native_credential(uid, gid)
                } else {
                    Vec::new()
                },
                peer_type: PeerType::TOOL_NEEDS_ID,
                uid_gid: Some((uid, gid)),
                proc: None,
                version: OPENPMIX_VERSION.into(),
                bfrops: "v41".into(),
                buffer_type: BufferType::NonDescribed,
                gds: "hash".into(),
                info: Vec::new(),
            }
        }
        "client" | "client-flood" => {
            let nspace = rest.first().ok_or("client: no namespace")?;
            let proc = Proc::try_new(nspace, Rank(number(1)?)).map_err(|e| e.to_string())?;
            ConnectRequest::simple_client(proc, number(2)?, number(3)?, BufferType::NonDescribed)
        }
        other => return Err(format!("unknown attempt {other}")),
    };
    let bytes = request.encode().map_err(|e| e.to_string())?;
    if attempt == "client-flood" {
        let (mib, seconds) = (number(4)?, number(5)?);
        return flood(address, &bytes, mib, seconds);
    }
    let answer = match how.as_str() {
        "--tcp" => std::net::TcpStream::connect(address.as_str())
            .and_then(|mut s| exchange(&mut s, &bytes)),
        "--unix" => std::os::unix::net::UnixStream::connect(address)
            .and_then(|mut s| exchange(&mut s, &bytes)),
        other => return Err(format!("unknown transport {other}")),
    };
    Ok(match answer {
        Ok(status) if status == Status::SUCCESS => "accepted".to_owned(),
        Ok(status) => format!("refused {}", status.0),
        Err(e) => format!("unreachable {e}"),
    })
}

/// Send the connect message and read the status word of the answer.
fn exchange(stream: &mut (impl Read + Write), message: &[u8]) -> std::io::Result<Status> {
    stream.write_all(message)?;
    let mut word = [0u8; 4];
    stream.read_exact(&mut word)?;
    Ok(decode_status(word))
}

/// Connect over TCP as the client of `hello`, then write `mib` MiB of requests without
/// reading, for at most `seconds`; the verdict says how much went in.
fn flood(address: &str, hello: &[u8], mib: u32, seconds: u32) -> Result<String, String> {
    let mut stream = std::net::TcpStream::connect(address).map_err(|e| e.to_string())?;
    let status = exchange(&mut stream, hello).map_err(|e| e.to_string())?;
    if status != Status::SUCCESS {
        return Ok(format!("refused {}", status.0));
    }
    // The client's handshake answer is eight bytes; the status word was four of them.
    let mut index = [0u8; 4];
    stream.read_exact(&mut index).map_err(|e| e.to_string())?;
    let request = pmix::wire::Frame {
        pindex: 0,
        tag: pmix::wire::Tag(101),
        payload: vec![2, 200],
    }
    .encode()
    .map_err(|e| e.to_string())?;
    let chunk = request.repeat((64 << 10) / request.len());
    let total = u64::from(mib) << 20;
    let written = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = written.clone();
    std::thread::spawn(move || {
        while counter.load(std::sync::atomic::Ordering::Relaxed) < total {
            if stream.write_all(&chunk).is_err() {
                return;
            }
            counter.fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
    });
    std::thread::sleep(std::time::Duration::from_secs(u64::from(seconds)));
    let written = written.load(std::sync::atomic::Ordering::Relaxed);
    Ok(format!("accepted; wrote {} KiB unread", written >> 10))
}
