//! The environment a client needs to find and join its server (`PMIx_server_setup_fork`).
//!
//! OpenPMIx 4.2 clients read `PMIX_NAMESPACE` and `PMIX_RANK`, then the first of
//! `PMIX_SERVER_URI41`, `…URI4`, `…URI3`, `…URI21`, `…URI2` to find the server and pick the
//! encoding (WIRE.md §5.1); `PMIX_SECURITY_MODE`, `PMIX_BFROP_BUFFER_TYPE` and
//! `PMIX_GDS_MODULE` choose security, buffer type and store. The server sets the store to
//! `hash`: OpenPMIx's shared-memory store (`ds21`) is an mmap layout this server does not
//! implement, and with `hash` clients get everything through the job-info reply and gets.
//!
//! `PMIX_RS_SERVER_USOCK` is this implementation's own addition: the path of the server's Unix
//! socket, which Rust clients prefer (the kernel vouches for their uid and gid).
//!
//! OpenPMIx 6.1 clients look further: `PMIX_SERVER_URI61`, `…URI51`, then 4.2's list with
//! `…URI20` and `…URI12` in place of `…URI2`, the first one set deciding server and encoding
//! (6.1 `mca/ptl/base/ptl_base_fns.c:83-131`; 5.0 reads 4.2's list). This server sets none of
//! 6.1's additions: `URI61` or `URI51` would make a 6.1 client speak `v61`, whose new types
//! this server cannot read, and `URI20` and `URI12` come after `URI41`, which a 6.1 client
//! always finds first. A launcher must instead keep an outer server's values of them from
//! its children ([`inherited_server_vars`]): one inherited `URI61` would take a 6.1 child to
//! the outer server.

use std::path::Path;

use crate::model::Proc;

/// The environment variables a client process needs.
pub(crate) fn client_env(
    proc: &Proc,
    uri: &str,
    unix_socket: Option<&Path>,
    tmpdir: &Path,
    hostname: &str,
    version: &str,
) -> Vec<(String, String)> {
    let mut env = vec![
        ("PMIX_NAMESPACE".to_owned(), proc.nspace.as_str().to_owned()),
        ("PMIX_RANK".to_owned(), proc.rank.0.to_string()),
    ];
    for var in [
        "PMIX_SERVER_URI41",
        "PMIX_SERVER_URI4",
        "PMIX_SERVER_URI3",
        "PMIX_SERVER_URI21",
        "PMIX_SERVER_URI2",
    ] {
        env.push((var.to_owned(), uri.to_owned()));
    }
    let tmp = tmpdir.display().to_string();
    env.extend([
        ("PMIX_SECURITY_MODE".to_owned(), "native".to_owned()),
        (
            "PMIX_BFROP_BUFFER_TYPE".to_owned(),
            "PMIX_BFROP_BUFFER_NON_DESC".to_owned(),
        ),
        ("PMIX_GDS_MODULE".to_owned(), "hash".to_owned()),
        ("PMIX_MCA_gds".to_owned(), "hash".to_owned()),
        ("PMIX_SERVER_TMPDIR".to_owned(), tmp.clone()),
        ("PMIX_SYSTEM_TMPDIR".to_owned(), tmp),
        ("PMIX_HOSTNAME".to_owned(), hostname.to_owned()),
        ("PMIX_VERSION".to_owned(), version.to_owned()),
    ]);
    if let Some(path) = unix_socket {
        env.push((
            "PMIX_RS_SERVER_USOCK".to_owned(),
            path.display().to_string(),
        ));
    }
    env
}

/// The variables of an environment a launched process must not inherit, because they point
/// at another server: every `PMIX_SERVER_URI*` (an outer OpenPMIx 6.1 server's `URI61`,
/// which 6.1 clients read before this server's `URI41`), the generic `PMIX_SERVER_URI` and
/// `PMIX_TCP_URI`, the rendezvous an outer launcher gives its tools
/// (`PMIX_LAUNCHER_RNDZ_URI`, `PMIX_LAUNCHER_RNDZ_FILE`) and this crate's
/// `PMIX_RS_SERVER_USOCK`; but not those of `set`, the environment `client_env` gives,
/// which replaces them. `inherited` are the names of the launcher's own variables.
pub fn inherited_server_vars<'a>(
    inherited: impl IntoIterator<Item = &'a str>,
    set: &[(String, String)],
) -> Vec<String> {
    let points_elsewhere = |name: &str| {
        name.starts_with("PMIX_SERVER_URI")
            || matches!(
                name,
                "PMIX_TCP_URI"
                    | "PMIX_LAUNCHER_RNDZ_URI"
                    | "PMIX_LAUNCHER_RNDZ_FILE"
                    | "PMIX_RS_SERVER_USOCK"
            )
    };
    (inherited.into_iter())
        .filter(|name| points_elsewhere(name) && !set.iter().any(|(k, _)| k == name))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outer_servers_uris_are_not_inherited_and_this_servers_replace_the_rest() {
        let proc = Proc::try_new("job", 0).unwrap();
        let uri = "srv.0;tcp4://127.0.0.1:5";
        let set = client_env(&proc, uri, None, Path::new("/t"), "n0", "4.2.2");
        let get = |k: &str| set.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        // What 4.2 and 5.0 read first, and 6.1 right after the two it must not find.
        assert_eq!(get("PMIX_SERVER_URI41"), Some(uri));
        assert_eq!(get("PMIX_SERVER_URI61"), None);
        let outer = [
            "PMIX_SERVER_URI61",
            "PMIX_SERVER_URI51",
            "PMIX_SERVER_URI41",
            "PMIX_SERVER_URI20",
            "PMIX_SERVER_URI12",
            "PMIX_SERVER_URI",
            "PMIX_LAUNCHER_RNDZ_URI",
            "PMIX_RS_SERVER_USOCK",
            "PMIX_NAMESPACE",
            "PMIX_MCA_ptl_base_verbose",
            "HOME",
        ];
        assert_eq!(
            inherited_server_vars(outer, &set),
            [
                "PMIX_SERVER_URI61",
                "PMIX_SERVER_URI51",
                "PMIX_SERVER_URI20",
                "PMIX_SERVER_URI12",
                "PMIX_SERVER_URI",
                "PMIX_LAUNCHER_RNDZ_URI",
                "PMIX_RS_SERVER_USOCK",
            ]
        );
        // A server with a socket of its own sets that variable, which then stays.
        let with_socket = client_env(
            &proc,
            uri,
            Some(Path::new("/t/s")),
            Path::new("/t"),
            "n0",
            "4.2.2",
        );
        assert!(inherited_server_vars(["PMIX_RS_SERVER_USOCK"], &with_socket).is_empty());
    }
}
