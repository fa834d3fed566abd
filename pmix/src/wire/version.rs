//! The OpenPMIx release a peer runs, and the few message layouts that depend on it.
//!
//! A connecting peer states its library's version in its connect message; a client learns
//! its server's from `PMIX_VERSION`, which every OpenPMIx server (and this crate's) puts in
//! the environment of the processes it launches, and a tool from the second line of the
//! server's rendezvous file. OpenPMIx reads the string as three numbers, each with
//! `strtoul`, so `5.0.9a1` is 5.0.9 and a string that starts with no digit is 0.0.0
//! (OpenPMIx 6.1 `ptl_base_connection_hdlr.c:326-335`); [`PeerVersion::parse`] does the same.
//!
//! The framing, the handshake's fields and the encoding of every type 4.2 knows are the same
//! in 4.2, 5.0 and 6.1. What differs is a handful of layouts, chosen by [`Dialect`]:
//!
//! | what | 4.x | 5.0 | 6.x |
//! |---|---|---|---|
//! | a singleton's handshake reply (flag 9) | the tool form | the client form | the client form |
//! | `GROUP_DESTRUCT` request | STRING group, SIZE ninfo, INFO\[ninfo\] | STRING group, SIZE n, PROC\[n\], SIZE ninfo, INFO\[ninfo\] | as 5.0 |
//! | `GROUP_CONSTRUCT` reply, on success | STATUS, SIZE context id | STATUS, SIZE n, PROC\[n\], SIZE context id | STATUS, SIZE n, PROC\[n\], BOOL id given, \[SIZE context id\], SIZE ninfo, INFO… |
//! | data types 61–64 (statistics) | known | known | unknown, even in `v41` |
//!
//! (OpenPMIx 4.2.2 `client/pmix_client_group.c:312-365`, `server/pmix_server_ops.c:4036-4050`;
//! 5.0.9 `client/pmix_client_group.c:330-395`, `server/pmix_server_ops.c:3950-4035`; 6.1.0
//! `client/pmix_client_group.c:445-521,1192-1330`, `server/pmix_server_group.c:528-578`,
//! `include/pmix_common.h.in:1760-1831`.) This crate's own peers speak the 4.x layouts.

use crate::model::{DataType, Value};

/// A peer's library version: major, minor and release numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PeerVersion {
    pub major: u32,
    pub minor: u32,
    pub release: u32,
}

impl PeerVersion {
    /// OpenPMIx 4.2.2, whose layouts this crate speaks with its own peers.
    pub const OPENPMIX_4_2: PeerVersion = PeerVersion {
        major: 4,
        minor: 2,
        release: 2,
    };

    /// A version string read as OpenPMIx reads it: the leading digits of each of its first
    /// three dot-separated parts, a part without any being 0 (`strtoul`). A `v` before the
    /// major number is skipped, as in a rendezvous file's second line.
    pub fn parse(text: &str) -> PeerVersion {
        let text = text.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        let mut parts = text.split('.').map(|part| {
            let digits = part.bytes().take_while(u8::is_ascii_digit).count();
            // More digits than a u32 holds: strtoul saturates too.
            part[..digits]
                .parse::<u32>()
                .unwrap_or(if digits > 0 { u32::MAX } else { 0 })
        });
        let mut next = || parts.next().unwrap_or(0);
        PeerVersion {
            major: next(),
            minor: next(),
            release: next(),
        }
    }

    /// The layouts a peer of this version reads and writes.
    pub fn dialect(self) -> Dialect {
        match self.major {
            5 => Dialect::V5,
            m if m >= 6 => Dialect::V6,
            // 4.x, and anything older or unreadable: the layouts this crate knows best.
            _ => Dialect::V4,
        }
    }
}

impl std::fmt::Display for PeerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.release)
    }
}

/// Which release series' message layouts a peer speaks (see the module's table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dialect {
    /// OpenPMIx 4.x (and older), and this crate's own clients and servers.
    #[default]
    V4,
    /// OpenPMIx 5.0.
    V5,
    /// OpenPMIx 6.x.
    V6,
}

impl Dialect {
    /// The dialect of a peer that states `version`.
    pub fn of(version: &str) -> Dialect {
        PeerVersion::parse(version).dialect()
    }

    /// Whether a singleton (connect flag 9) reads the client form of the handshake reply:
    /// 5.0 and 6.1 serve it on the client path (6.1 `ptl_base_connection_hdlr.c:360-361`,
    /// `ptl_base_fns.c:521-525`); 4.2 on the tool path.
    pub fn singleton_reads_client_reply(self) -> bool {
        self >= Dialect::V5
    }

    /// Whether a `GROUP_DESTRUCT` request carries the group's members: from 5.0 on the
    /// client sends them because its server does not keep them.
    pub fn destruct_lists_members(self) -> bool {
        self >= Dialect::V5
    }

    /// Whether the peer can decode the statistics types 61–64, which 6.1 removed from every
    /// encoding module.
    pub fn knows_statistics_types(self) -> bool {
        self <= Dialect::V5
    }

    /// Whether the peer can decode `value` whole: a 6.1 peer fails the whole message that
    /// holds a statistics value anywhere (6.1 has no unpack function for 61–64).
    pub fn can_read(self, value: &Value) -> bool {
        self.knows_statistics_types() || !value.holds_type(&is_statistics)
    }
}

/// `PMIX_PROC_STATS`, `PMIX_DISK_STATS`, `PMIX_NET_STATS`, `PMIX_NODE_STATS`: gone in 6.1
/// (`include/pmix_common.h.in:1760-1831`), whose statistics are data arrays of infos.
fn is_statistics(t: DataType) -> bool {
    matches!(
        t,
        DataType::PROC_STATS | DataType::DISK_STATS | DataType::NET_STATS | DataType::NODE_STATS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32, release: u32) -> PeerVersion {
        PeerVersion {
            major,
            minor,
            release,
        }
    }

    #[test]
    fn versions_read_as_openpmix_reads_them() {
        assert_eq!(PeerVersion::parse("4.2.2rc2"), v(4, 2, 2));
        assert_eq!(PeerVersion::parse("5.0.9a1"), v(5, 0, 9));
        assert_eq!(PeerVersion::parse("6.1.0"), v(6, 1, 0));
        assert_eq!(PeerVersion::parse("v4.2.2\n"), v(4, 2, 2));
        assert_eq!(PeerVersion::parse("7"), v(7, 0, 0));
        assert_eq!(PeerVersion::parse(""), v(0, 0, 0));
        assert_eq!(PeerVersion::parse("garbage"), v(0, 0, 0));
        assert_eq!(PeerVersion::parse("99999999999.1"), v(u32::MAX, 1, 0));
        assert_eq!(v(5, 0, 9).to_string(), "5.0.9");
    }

    #[test]
    fn each_series_has_its_dialect_and_unknown_ones_speak_4x() {
        assert_eq!(Dialect::of("4.2.2rc2"), Dialect::V4);
        assert_eq!(Dialect::of("3.2.3"), Dialect::V4);
        assert_eq!(Dialect::of(""), Dialect::V4);
        assert_eq!(Dialect::of("5.0.9a1"), Dialect::V5);
        assert_eq!(Dialect::of("6.1.0"), Dialect::V6);
        assert_eq!(Dialect::of("7.0.0"), Dialect::V6);
        assert!(!Dialect::V4.singleton_reads_client_reply());
        assert!(Dialect::V5.singleton_reads_client_reply() && Dialect::V6.destruct_lists_members());
        assert!(Dialect::V5.knows_statistics_types() && !Dialect::V6.knows_statistics_types());
    }

    #[test]
    fn a_6_1_peer_cannot_read_statistics_wherever_they_are() {
        use crate::model::{DataArray, Info, attr};
        let stats = Value::ProcStats(Box::default());
        let nested = Value::DataArray(Box::new(DataArray::of_infos(vec![Info::new(
            attr::TIMEOUT,
            1,
        )])));
        let hidden = Value::DataArray(Box::new(DataArray::of_infos(vec![
            Info::with_key("x", stats.clone()).unwrap(),
        ])));
        let empty = Value::DataArray(Box::new(
            DataArray::new(DataType::NODE_STATS, vec![]).unwrap(),
        ));
        for v in [&stats, &hidden, &empty] {
            assert!(!Dialect::V6.can_read(v), "{v:?}");
            assert!(Dialect::V5.can_read(v) && Dialect::V4.can_read(v));
        }
        assert!(Dialect::V6.can_read(&nested));
    }
}
