//! The server URI a client finds its server by (`PMIX_SERVER_URI41` and the older names,
//! WIRE.md §5.1): `<nspace>.<rank>;tcp4://<ip>:<port>`, the server's identifier and its TCP
//! address.

use crate::model::Proc;

/// A server URI: `<nspace>.<rank>;tcp4://<ip>:<port>`.
pub fn server_uri(server: &Proc, addr: std::net::SocketAddr) -> String {
    let scheme = if addr.is_ipv4() { "tcp4" } else { "tcp6" };
    format!(
        "{}.{};{scheme}://{addr}",
        server.nspace.as_str(),
        server.rank.0
    )
}

/// Split a server URI into the server's identifier and its socket address. The identifier
/// ends at the last `.` before the `;`.
pub fn parse_uri(uri: &str) -> Option<(Proc, std::net::SocketAddr)> {
    let (id, addr) = uri.split_once(';')?;
    let (ns, rank) = id.rsplit_once('.')?;
    let proc = Proc::try_new(ns, rank.parse::<u32>().ok()?).ok()?;
    let addr = addr
        .strip_prefix("tcp4://")
        .or_else(|| addr.strip_prefix("tcp6://"))
        .or_else(|| addr.strip_prefix("tcp://"))?;
    Some((proc, addr.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_round_trips_and_splits_on_the_last_dot() {
        let p = Proc::try_new("pmix-server.4669", 0).unwrap();
        let addr = "127.0.0.1:46977".parse().unwrap();
        let uri = server_uri(&p, addr);
        assert_eq!(uri, "pmix-server.4669.0;tcp4://127.0.0.1:46977");
        assert_eq!(parse_uri(&uri), Some((p, addr)));
        assert_eq!(parse_uri("garbage"), None);
    }
}
