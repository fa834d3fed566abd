//! Requests the server hands to its host and whose answer goes back to the requester:
//! publish, lookup and unpublish (v5.0 ch. 9), abort, spawn, log, allocation, job control,
//! monitoring, fabrics, and credentials, which the library mints and validates itself when
//! the host has no security system of its own (§16).

use std::collections::BTreeMap;

use crate::model::{ByteObject, Info, Nspace, PData, Proc, Status, attr};
use crate::server::credential;
use crate::store::jobinfo::job_info_kvals;
use crate::wire::{Command, OpReply, Reply, Tag};

use super::interface::ConnId;
use super::shared::Shared;
use super::upcall::{HostCall, HostResult};

/// What the requester is answered with once the host answers.
#[derive(Clone, Debug)]
pub(super) enum Answer {
    /// The host's status alone.
    Status,
    /// A client's finalize: success once the host has heard it, whatever it answers.
    Finalized,
    /// A lookup's finds, judged against the keys asked for.
    Lookup { keys: Vec<String> },
    /// A status and the host's infos, in the reply of `command`.
    Infos { command: Command },
    /// The spawned namespace and its job information.
    Spawn,
    /// `proc`'s credential, minted by the library if the host has none to give.
    Credential { proc: Proc },
    /// What `credential` of `proc` proves, checked by the library if the host does not.
    Validate { proc: Proc, credential: Vec<u8> },
}

/// A relayed request waiting for the host.
#[derive(Clone, Debug)]
struct Waiting {
    conn: ConnId,
    tag: Tag,
    answer: Answer,
}

/// The requests relayed to the host, and the key this server seals its credentials with.
#[derive(Debug, Default)]
pub(super) struct Relayed {
    /// The requests the host is answering, by the op of its call.
    at_host: BTreeMap<u64, Waiting>,
    /// The key that seals this server's credentials ([`credential`]).
    credential_key: [u8; 32],
}

impl Relayed {
    pub(super) fn with_credential_key(key: [u8; 32]) -> Self {
        Relayed {
            at_host: BTreeMap::new(),
            credential_key: key,
        }
    }

    /// Hand `call` to the host; its answer goes to the request `tag` of `conn` as `answer`
    /// says.
    pub(super) fn relay(
        &mut self,
        cx: &mut Shared,
        conn: ConnId,
        tag: Tag,
        call: HostCall,
        answer: Answer,
    ) {
        let op = cx.call_host(call);
        self.at_host.insert(op, Waiting { conn, tag, answer });
    }

    /// Whether the host call `op` is a relayed request's.
    pub(super) fn awaits_host(&self, op: u64) -> bool {
        self.at_host.contains_key(&op)
    }

    /// The host answered the call `op`: answer the requester.
    pub(super) fn host_answered(&mut self, cx: &mut Shared, op: u64, result: HostResult) {
        let Some(Waiting { conn, tag, answer }) = self.at_host.remove(&op) else {
            return;
        };
        let reply = match answer {
            Answer::Status => Reply::Status(result.output::<()>().err().unwrap_or(Status::SUCCESS)),
            Answer::Finalized => Reply::Status(Status::SUCCESS),
            Answer::Lookup { keys } => lookup_reply(&keys, result),
            Answer::Infos { command } => {
                let (status, info) = match result.output() {
                    Ok(info) => (Status::SUCCESS, info),
                    Err(s) => (s, Vec::new()),
                };
                Reply::Op(OpReply::Infos {
                    command,
                    status,
                    info,
                })
            }
            Answer::Spawn => {
                return spawned(cx, conn, tag, result.output());
            }
            Answer::Credential { proc } => self.credential_reply(cx, &proc, result),
            Answer::Validate { proc, credential } => {
                self.validation_reply(&proc, &credential, result)
            }
        };
        cx.send(conn, tag, &reply);
    }

    /// The host's credential for `proc`, or, when the host has no security system of its
    /// own, one this library seals for the identity it verified (registration and the
    /// socket's peer credentials).
    fn credential_reply(&self, cx: &Shared, proc: &Proc, result: HostResult) -> Reply {
        let result = match result.output() {
            Err(Status::ERR_NOT_SUPPORTED) => self.own_credential(cx, proc),
            r => r,
        };
        Reply::Op(match result {
            Ok((bytes, info)) => OpReply::Credential {
                status: Status::SUCCESS,
                credential: Some(ByteObject(bytes)),
                info,
            },
            Err(status) => OpReply::Credential {
                status,
                credential: None,
                info: Vec::new(),
            },
        })
    }

    fn own_credential(&self, cx: &Shared, proc: &Proc) -> Result<(Vec<u8>, Vec<Info>), Status> {
        // A tool's identity is not registered: nothing to vouch for.
        let r = cx.clients.get(proc).ok_or(Status::ERR_NOT_SUPPORTED)?;
        let who = credential::Identity {
            proc: proc.clone(),
            uid: r.uid,
            gid: r.gid,
        };
        let bytes = credential::mint(&self.credential_key, &who)?;
        let info = vec![Info::new(attr::CRED_TYPE, credential::CRED_TYPE.to_owned())];
        Ok((bytes, info))
    }

    /// What the host says a credential proves, or, when the host validates nothing itself,
    /// this library's check of a credential it sealed.
    fn validation_reply(&self, proc: &Proc, cred: &[u8], result: HostResult) -> Reply {
        let result = match result.output() {
            Err(Status::ERR_NOT_SUPPORTED) => credential::validate(&self.credential_key, cred)
                .map(|who| credential::validated_info(&who)),
            r => r,
        };
        let (status, info) = match result {
            Ok(info) => (Status::SUCCESS, info),
            Err(s) => {
                tracing::debug!(
                    "{proc}: a credential of {} bytes did not validate",
                    cred.len()
                );
                (s, Vec::new())
            }
        };
        Reply::Op(OpReply::Infos {
            command: Command::VALIDATE_CRED,
            status,
            info,
        })
    }
}

/// A lookup's reply: what the host found, with the status of how much (v5.0 §9.6), or the
/// host's error.
fn lookup_reply(keys: &[String], result: HostResult) -> Reply {
    match result.output::<Vec<PData>>() {
        Ok(data) => Reply::Lookup {
            status: PData::lookup_status(keys, &data),
            data,
        },
        Err(status) => Reply::Lookup {
            status,
            data: Vec::new(),
        },
    }
}

/// Answer a spawn: the new namespace and its job information as registered here.
pub(super) fn spawned(cx: &mut Shared, conn: ConnId, tag: Tag, result: Result<Nspace, Status>) {
    let reply = match result {
        Ok(nspace) => {
            let buffer_type = cx.conns.get(&conn).map(|c| c.buffer_type);
            let job_info = (cx.store.job_view(nspace.as_str()))
                .zip(buffer_type)
                .and_then(|(r, b)| job_info_kvals(&r, b, &cx.version).ok())
                .unwrap_or_default();
            OpReply::Spawn {
                status: Status::SUCCESS,
                nspace: Some(nspace.as_str().to_owned()),
                job_info,
            }
        }
        Err(status) => OpReply::Spawn {
            status,
            nspace: None,
            job_info: Vec::new(),
        },
    };
    cx.send(conn, tag, &Reply::Op(reply));
}
