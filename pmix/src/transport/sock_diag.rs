//! Who owns one TCP socket of this kernel, asked of the kernel's socket diagnostics
//! (`NETLINK_SOCK_DIAG`, `sock_diag(7)`): one request naming the socket by its four
//! addresses, one answer, whatever the number of sockets the machine has.
//!
//! [`super::socket_table`] reads the same fact from `/proc/self/net/tcp`, which lists every
//! TCP socket of the network namespace: on each accept the server read the whole table on
//! its one thread, 7.7 ms on an idle machine and 27 ms once another user had left 20,000
//! sockets in `TIME_WAIT`, so a connect flood slowed every legitimate connect. The table
//! stays the fallback where the kernel offers no socket diagnostics.
//!
//! The messages are built and read as bytes, in the layouts of `linux/netlink.h`,
//! `linux/sock_diag.h` and `linux/inet_diag.h`: a 16-byte `nlmsghdr`, then an
//! `inet_diag_req_v2` (request) or an `inet_diag_msg` (answer), or a `nlmsgerr` whose
//! negative errno says why there is no answer.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;

use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto, socket,
};

/// `SOCK_DIAG_BY_FAMILY`, the request's and the answer's message type.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `NLMSG_ERROR`: the kernel's refusal, or its acknowledgement.
const NLMSG_ERROR: u16 = 2;
/// `NLM_F_REQUEST`: a request, here for one socket (no `NLM_F_DUMP`).
const NLM_F_REQUEST: u16 = 1;
/// `IPPROTO_TCP`.
const IPPROTO_TCP: u8 = 6;
/// `TCP_TIME_WAIT`: the kernel reports uid 0 for such a socket, which proves no one.
const TCP_TIME_WAIT: u8 = 6;
/// The length of a `nlmsghdr`.
const HEADER: usize = 16;
/// The length of an `inet_diag_sockid`: ports, two 16-byte addresses, interface, cookie.
const SOCKID: usize = 48;
/// Where `idiag_uid` is in an `inet_diag_msg`: after family, state, timer, retransmits, the
/// socket id, and expires, rqueue and wqueue.
const UID_AT: usize = 4 + SOCKID + 12;
/// The sequence number of the one request a socket carries.
const SEQ: u32 = 1;

/// The uid owning the TCP socket whose local address is `local` and remote address
/// `remote`: `Ok(None)` when the kernel has no such live socket (or only one in
/// `TIME_WAIT`), an error when it cannot be asked (no socket diagnostics here).
pub(crate) fn socket_owner(local: SocketAddr, remote: SocketAddr) -> io::Result<Option<u32>> {
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkSockDiag,
    )?;
    let request = request(local, remote);
    sendto(
        fd.as_raw_fd(),
        &request,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )?;
    // The kernel answers within the send; not waiting guards against one that does not.
    let mut answer = [0u8; 1024];
    let n = recv(fd.as_raw_fd(), &mut answer, MsgFlags::MSG_DONTWAIT)?;
    read_answer(&answer[..n], local, remote)
}

/// The request for the one socket `local` → `remote`.
fn request(local: SocketAddr, remote: SocketAddr) -> Vec<u8> {
    let family = match local {
        SocketAddr::V4(_) => libc_family(AddressFamily::Inet),
        SocketAddr::V6(_) => libc_family(AddressFamily::Inet6),
    };
    let len = HEADER + 8 + SOCKID;
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    m.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    m.extend_from_slice(&SEQ.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    // inet_diag_req_v2: family, protocol, extensions (none), pad, the states to match (all).
    m.extend_from_slice(&[family, IPPROTO_TCP, 0, 0]);
    m.extend_from_slice(&u32::MAX.to_ne_bytes());
    m.extend_from_slice(&sockid(local, remote));
    m
}

/// An `inet_diag_sockid`: ports and addresses in network order, any interface, and the
/// cookie that asks for no cookie check (`INET_DIAG_NOCOOKIE`).
fn sockid(local: SocketAddr, remote: SocketAddr) -> [u8; SOCKID] {
    let mut id = [0u8; SOCKID];
    id[0..2].copy_from_slice(&local.port().to_be_bytes());
    id[2..4].copy_from_slice(&remote.port().to_be_bytes());
    id[4..20].copy_from_slice(&address(local.ip()));
    id[20..36].copy_from_slice(&address(remote.ip()));
    id[40..48].fill(0xff);
    id
}

/// An address as the 16 bytes of a sockid's field (an IPv4 address in its first four).
fn address(ip: IpAddr) -> [u8; 16] {
    let mut field = [0u8; 16];
    match ip {
        IpAddr::V4(v4) => field[..4].copy_from_slice(&v4.octets()),
        IpAddr::V6(v6) => field.copy_from_slice(&v6.octets()),
    }
    field
}

fn libc_family(family: AddressFamily) -> u8 {
    // AF_INET and AF_INET6 are 2 and 10: they fit a byte.
    family as i32 as u8
}

/// The owner the kernel's answer names, if it is about the socket asked for and the socket
/// is live.
fn read_answer(answer: &[u8], local: SocketAddr, remote: SocketAddr) -> io::Result<Option<u32>> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let u16_at = |at: usize| {
        answer
            .get(at..at + 2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        answer
            .get(at..at + 4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (Some(len), Some(kind), Some(seq)) = (u32_at(0), u16_at(4), u32_at(8)) else {
        return Err(bad("a socket diagnostics answer shorter than its header"));
    };
    if len as usize > answer.len() || seq != SEQ {
        return Err(bad(
            "a socket diagnostics answer that is not the one asked for",
        ));
    }
    match kind {
        NLMSG_ERROR => {
            let errno = u32_at(HEADER).ok_or_else(|| bad("a short netlink error"))? as i32;
            match -errno {
                0 => Err(bad("an acknowledgement where an answer was expected")),
                // No such socket.
                e if e == nix::errno::Errno::ENOENT as i32 => Ok(None),
                e => Err(io::Error::from_raw_os_error(e)),
            }
        }
        SOCK_DIAG_BY_FAMILY => {
            let msg = answer.get(HEADER..).unwrap_or_default();
            let state = *msg.get(1).ok_or_else(|| bad("a short socket answer"))?;
            let id = msg
                .get(4..4 + SOCKID)
                .ok_or_else(|| bad("a short socket answer"))?;
            if id[..36] != sockid(local, remote)[..36] {
                return Err(bad("a socket diagnostics answer about another socket"));
            }
            let uid = u32_at(HEADER + UID_AT).ok_or_else(|| bad("a short socket answer"))?;
            Ok((state != TCP_TIME_WAIT).then_some(uid))
        }
        other => Err(bad(&format!("a socket diagnostics answer of type {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// An answer as the kernel writes it, about `local` → `remote`, in `state`, for `uid`.
    fn answer(local: SocketAddr, remote: SocketAddr, state: u8, uid: u32) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&((HEADER + UID_AT + 8) as u32).to_ne_bytes());
        m.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&SEQ.to_ne_bytes());
        m.extend_from_slice(&4242u32.to_ne_bytes());
        m.extend_from_slice(&[2, state, 0, 0]);
        m.extend_from_slice(&sockid(local, remote));
        m.extend_from_slice(&[0; 12]);
        m.extend_from_slice(&uid.to_ne_bytes());
        m.extend_from_slice(&77u32.to_ne_bytes());
        m
    }

    #[test]
    fn the_request_names_one_tcp_socket_in_network_order() {
        let r = request(at(0xD1F1), at(0x1F90));
        assert_eq!(r.len(), 72);
        assert_eq!(&r[..4], &72u32.to_ne_bytes());
        assert_eq!(&r[4..6], &20u16.to_ne_bytes());
        assert_eq!(&r[6..8], &1u16.to_ne_bytes(), "a request, not a dump");
        assert_eq!(&r[16..18], &[2, 6], "AF_INET, TCP");
        assert_eq!(&r[24..28], &[0xD1, 0xF1, 0x1F, 0x90]);
        assert_eq!(&r[28..32], &[127, 0, 0, 1]);
        assert_eq!(&r[44..48], &[127, 0, 0, 1]);
        assert_eq!(&r[64..72], &[0xff; 8]);
        let v6: SocketAddr = "[::1]:80".parse().unwrap();
        assert_eq!(request(v6, v6)[16], 10, "AF_INET6");
    }

    #[test]
    fn an_answer_names_its_owner_unless_in_time_wait_or_about_another_socket() {
        let (l, r) = (at(0xD1F1), at(0x1F90));
        assert_eq!(
            read_answer(&answer(l, r, 1, 1000), l, r).unwrap(),
            Some(1000)
        );
        assert_eq!(
            read_answer(&answer(l, r, TCP_TIME_WAIT, 0), l, r).unwrap(),
            None
        );
        assert!(read_answer(&answer(l, at(1), 1, 0), l, r).is_err());
        let full = answer(l, r, 1, 1000);
        for cut in [0, 3, HEADER, HEADER + 10, HEADER + UID_AT] {
            assert!(read_answer(&full[..cut], l, r).is_err(), "{cut}");
        }
    }

    #[test]
    fn a_missing_socket_is_no_owner_and_other_errors_are_errors() {
        let error = |errno: i32| {
            let mut m = Vec::new();
            m.extend_from_slice(&36u32.to_ne_bytes());
            m.extend_from_slice(&NLMSG_ERROR.to_ne_bytes());
            m.extend_from_slice(&0u16.to_ne_bytes());
            m.extend_from_slice(&SEQ.to_ne_bytes());
            m.extend_from_slice(&0u32.to_ne_bytes());
            m.extend_from_slice(&(-errno).to_ne_bytes());
            m.extend_from_slice(&[0; 16]);
            m
        };
        let (l, r) = (at(1), at(2));
        assert_eq!(read_answer(&error(2), l, r).unwrap(), None);
        assert!(read_answer(&error(1), l, r).is_err());
        assert!(read_answer(&error(0), l, r).is_err());
    }

    #[test]
    fn the_kernel_names_the_owner_of_a_live_loopback_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        let ours = accepted.local_addr().unwrap();
        let (uid, _) = super::super::uid_gid();
        assert_eq!(socket_owner(peer, ours).unwrap(), Some(uid));
        drop(client);
        // A port nothing uses: no such socket.
        assert_eq!(socket_owner(at(1), ours).unwrap(), None);
    }
}
