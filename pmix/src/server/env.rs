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
