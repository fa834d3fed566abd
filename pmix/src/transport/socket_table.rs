//! Who owns the other end of a loopback TCP connection, read from the kernel's socket table.
//!
//! OpenPMIx clients and tools connect over TCP, where the kernel hands the accepting side no
//! credentials (`SO_PEERCRED` is for Unix sockets): the uid and gid a peer writes in its
//! connect message are only a claim. On loopback, though, both ends live in this kernel,
//! which lists every TCP socket of this network namespace with the uid that created it in
//! `/proc/self/net/tcp` and `/proc/self/net/tcp6`. The peer's socket is the entry whose local
//! address is the peer's address and whose remote address is ours: its uid is the peer's,
//! whatever the peer says.
//!
//! What this deliberately does not trust:
//! - an entry in `TIME_WAIT`: the kernel prints uid 0 for those, so a peer that connected and
//!   closed at once would otherwise pass for root;
//! - a peer that is not on loopback: its socket lives in another kernel, and this one knows
//!   nothing of its owner ([`loopback_peer_uid`] answers `None`).
//!
//! The kernel is asked about the one socket first (`transport/sock_diag.rs`); the table, which
//! lists every socket and costs milliseconds per accept on a busy machine, is read only where
//! the kernel offers no socket diagnostics.
//!
//! The kernel prints addresses as the raw 32-bit words of the socket address in this
//! machine's byte order and ports in host order; both are read back the same way.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The table's state code of a socket in `TIME_WAIT` (`include/net/tcp_states.h`).
const TIME_WAIT: u8 = 0x06;

/// The uid of the process that owns the peer's end of the loopback TCP connection between
/// `ours` (the accepted socket's local address) and `peer`, or `None` when the peer is not on
/// loopback or its socket is not (or no longer) in the table.
pub fn loopback_peer_uid(ours: SocketAddr, peer: SocketAddr) -> io::Result<Option<u32>> {
    let (ours, peer) = (unmapped(ours), unmapped(peer));
    if !peer.ip().is_loopback() {
        return Ok(None);
    }
    match super::sock_diag::socket_owner(peer, ours) {
        Ok(owner) => Ok(owner),
        Err(e) => {
            tracing::debug!(
                "socket diagnostics cannot say who the peer is ({e}): reading the table"
            );
            let table = match peer {
                SocketAddr::V4(_) => "/proc/self/net/tcp",
                SocketAddr::V6(_) => "/proc/self/net/tcp6",
            };
            let text = std::fs::read_to_string(table)?;
            Ok(owner_in_table(&text, peer, ours))
        }
    }
}

/// The uid of the socket whose local address is `local` and remote address `remote`, in the
/// text of a `/proc/net/tcp{,6}` table; `TIME_WAIT` entries are passed over.
pub(crate) fn owner_in_table(text: &str, local: SocketAddr, remote: SocketAddr) -> Option<u32> {
    text.lines().skip(1).find_map(|line| {
        let entry = Entry::parse(line)?;
        (entry.local == local && entry.remote == remote && entry.state != TIME_WAIT)
            .then_some(entry.uid)
    })
}

/// One line of the table, the fields this module reads.
struct Entry {
    local: SocketAddr,
    remote: SocketAddr,
    state: u8,
    uid: u32,
}

impl Entry {
    /// `sl local remote st tx:rx tr:when retrnsmt uid ...`; `None` for a line of another shape.
    fn parse(line: &str) -> Option<Entry> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 8 {
            return None;
        }
        Some(Entry {
            local: address(fields[1])?,
            remote: address(fields[2])?,
            state: u8::from_str_radix(fields[3], 16).ok()?,
            uid: fields[7].parse().ok()?,
        })
    }
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6), as the table prints them.
fn address(field: &str) -> Option<SocketAddr> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(unmapped(SocketAddr::new(ip, port)))
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) as the IPv4 address it is.
fn unmapped(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), v6.port()),
            None => addr,
        },
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as an x86_64 kernel printed them: a listener, a connection to it seen from both
    /// ends (uids 1000 and 0), and a closed one in `TIME_WAIT`.
    #[cfg(target_endian = "little")]
    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1064 1 0 100 0 0 10 0
   1: 0100007F:D1F1 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 2211 1 0 20 4 30 10 -1
   2: 0100007F:1F90 0100007F:D1F1 01 00000000:00000000 00:00000000 00000000     0        0 2212 1 0 20 4 30 10 -1
   3: 0100007F:D200 0100007F:1F90 06 00000000:00000000 03:00001454 00000000     0        0 0 3 0
";

    fn at(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn the_peers_end_is_the_entry_seen_from_its_side() {
        assert_eq!(owner_in_table(TABLE, at(0xD1F1), at(0x1F90)), Some(1000));
        assert_eq!(owner_in_table(TABLE, at(0x1F90), at(0xD1F1)), Some(0));
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn a_closed_socket_in_time_wait_proves_no_one() {
        assert_eq!(owner_in_table(TABLE, at(0xD200), at(0x1F90)), None);
        assert_eq!(owner_in_table(TABLE, at(0xD1F2), at(0x1F90)), None);
    }

    #[test]
    fn lines_of_another_shape_are_passed_over() {
        for text in [
            "",
            "header only",
            "h\n  0: zz:1 00:00 01 0 0 0 1000",
            "h\n 0: 0100007F",
        ] {
            assert_eq!(owner_in_table(text, at(1), at(2)), None);
        }
    }

    #[test]
    fn ipv6_loopback_and_mapped_addresses_read_back() {
        let v6 = address("00000000000000000000000001000000:1F90").unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(v6, "[::1]:8080".parse().unwrap());
        }
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:80".parse().unwrap();
        assert_eq!(unmapped(mapped), at(80));
    }

    #[test]
    fn a_live_loopback_connection_is_owned_by_this_process_user() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        let ours = accepted.local_addr().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let (uid, _) = super::super::uid_gid();
        assert_eq!(loopback_peer_uid(ours, peer).unwrap(), Some(uid));
    }

    #[test]
    fn a_peer_off_loopback_has_no_owner_here() {
        let peer = SocketAddr::from(([192, 0, 2, 1], 4000));
        assert_eq!(loopback_peer_uid(at(1), peer).unwrap(), None);
    }
}
