//! The host calls and answers through their byte form, both ways, and what the byte form
//! refuses.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use super::*;
use crate::model::{Key, Nspace, Rank, Value, attr};

fn proc(rank: u32) -> Proc {
    Proc::new(Nspace::new("upcalljob").unwrap(), Rank(rank))
}

fn info() -> Vec<Info> {
    vec![
        Info::new(attr::TIMEOUT, 5),
        Info::with_key("site.key", "text").unwrap(),
    ]
}

/// One call of every kind, with every field holding something.
fn every_call() -> Vec<HostCall> {
    let keys = vec!["k1".to_owned(), "k2".to_owned()];
    vec![
        HostCall::ClientConnected { proc: proc(0) },
        HostCall::ClientFinalized { proc: proc(1) },
        HostCall::ClientLost { proc: proc(2) },
        HostCall::Abort {
            proc: proc(0),
            status: Status::ERR_TIMEOUT,
            message: Some("bye".into()),
            procs: vec![proc(1), proc(2)],
        },
        HostCall::Fence {
            procs: vec![proc(0), proc(1)],
            info: info(),
            data: vec![0, 1, 255],
        },
        HostCall::DirectModex {
            proc: proc(3),
            info: info(),
        },
        HostCall::Publish {
            proc: proc(0),
            info: info(),
        },
        HostCall::Lookup {
            proc: proc(0),
            keys: keys.clone(),
            info: info(),
        },
        HostCall::Unpublish {
            proc: proc(0),
            keys,
            info: vec![],
        },
        HostCall::ToolConnected { info: info() },
        HostCall::RegisterEvents {
            codes: vec![Status(-100), Status(5101)],
            info: info(),
        },
        HostCall::DeregisterEvents {
            codes: vec![Status(5101)],
        },
        HostCall::NotifyEvent {
            status: Status(5101),
            source: proc(2),
            range: DataRange::SESSION,
            info: info(),
        },
        HostCall::Spawn {
            proc: proc(0),
            job_info: info(),
            apps: vec![App {
                cmd: Some("a.out".into()),
                argv: vec![Some("a.out".into()), None],
                maxprocs: 2,
                info: info(),
                ..App::default()
            }],
        },
        HostCall::Log {
            proc: proc(0),
            timestamp: -7,
            data: info(),
            directives: vec![],
        },
        HostCall::Allocate {
            proc: proc(0),
            directive: AllocDirective::EXTEND,
            info: info(),
        },
        HostCall::JobControl {
            proc: proc(0),
            targets: vec![proc(1)],
            directives: info(),
        },
        HostCall::Monitor {
            proc: proc(0),
            monitor: Info::new(attr::TIMEOUT, 9),
            error: Status(-1),
            directives: info(),
        },
        HostCall::Connect {
            procs: vec![proc(0), proc(1)],
            info: info(),
        },
        HostCall::Disconnect {
            procs: vec![proc(0)],
            info: vec![],
        },
        HostCall::Group {
            op: GroupOperation(1),
            group: "g".into(),
            procs: vec![proc(0), proc(1)],
            directives: info(),
        },
        HostCall::Fabric {
            proc: proc(0),
            op: FabricOperation::UPDATE_INFO,
            directives: info(),
        },
        HostCall::Query {
            proc: proc(0),
            queries: vec![Query {
                keys: vec![Some("pmix.qry.ns".into())],
                qualifiers: info(),
            }],
        },
        HostCall::GetCredential {
            proc: proc(0),
            info: info(),
        },
        HostCall::ValidateCredential {
            proc: proc(0),
            credential: b"sealed".to_vec(),
            directives: info(),
        },
        HostCall::IofPull {
            procs: vec![proc(1)],
            directives: info(),
            channels: IofChannel::STDOUT_CHANNEL,
        },
        HostCall::PushStdin {
            source: proc(0),
            targets: vec![proc(1)],
            directives: info(),
            data: Some(b"input".to_vec()),
        },
        HostCall::PushStdin {
            source: proc(0),
            targets: vec![],
            directives: vec![],
            data: None,
        },
    ]
}

fn every_answer() -> Vec<HostResult> {
    let found = PData {
        proc: proc(1),
        key: Key::new("k1").unwrap(),
        value: Value::Uint32(3),
    };
    vec![
        HostResult::Status(Status::SUCCESS),
        HostResult::Status(Status::ERR_NOT_SUPPORTED),
        HostResult::Data(Ok(vec![1, 2, 3])),
        HostResult::Data(Err(Status::ERR_TIMEOUT)),
        HostResult::Lookup(Ok(vec![found])),
        HostResult::Lookup(Err(Status::ERR_NOT_FOUND)),
        HostResult::Proc(Ok(proc(4))),
        HostResult::Infos(Ok(info())),
        HostResult::Infos(Ok(vec![])),
        HostResult::Infos(Err(Status::ERR_BAD_PARAM)),
        HostResult::Nspace(Ok(Nspace::new("spawned").unwrap())),
        HostResult::Credential(Ok((b"cred".to_vec(), info()))),
        HostResult::Credential(Err(Status::ERR_NOT_SUPPORTED)),
        // An error that claims success still crosses as what it is.
        HostResult::Proc(Err(Status::SUCCESS)),
    ]
}

#[test]
fn every_call_and_answer_crosses_as_bytes_unchanged() {
    for call in every_call() {
        let bytes = call.to_bytes().unwrap();
        assert_eq!(HostCall::from_bytes(&bytes), Ok(call));
    }
    for answer in every_answer() {
        let bytes = answer.to_bytes().unwrap();
        assert_eq!(HostResult::from_bytes(&bytes), Ok(answer));
    }
}

#[test]
fn truncated_padded_or_unknown_messages_are_errors() {
    for call in every_call() {
        let bytes = call.to_bytes().unwrap();
        for cut in 0..bytes.len() {
            assert!(
                HostCall::from_bytes(&bytes[..cut]).is_err(),
                "{call:?} cut at {cut}"
            );
        }
        let mut padded = bytes.clone();
        padded.push(0);
        assert!(HostCall::from_bytes(&padded).is_err(), "{call:?} padded");
    }
    for answer in every_answer() {
        let bytes = answer.to_bytes().unwrap();
        for cut in 0..bytes.len() {
            assert!(
                HostResult::from_bytes(&bytes[..cut]).is_err(),
                "{answer:?} cut"
            );
        }
    }
    let unknown = Out::new(200).unwrap().bytes();
    assert!(HostCall::from_bytes(&unknown).is_err());
    assert!(HostResult::from_bytes(&unknown).is_err());
}

#[test]
fn an_answer_is_read_as_the_data_the_call_wanted_by_one_rule() {
    // Of the kind wanted: its data, or its error.
    assert_eq!(HostResult::Status(Status::SUCCESS).output::<()>(), Ok(()));
    assert_eq!(
        HostResult::Status(Status::ERR_TIMEOUT).output::<()>(),
        Err(Status::ERR_TIMEOUT)
    );
    assert_eq!(
        HostResult::Data(Ok(vec![1, 2])).output::<Vec<u8>>(),
        Ok(vec![1, 2])
    );
    assert_eq!(HostResult::Infos(Ok(info())).output(), Ok(info()));
    assert_eq!(
        HostResult::Nspace(Err(Status::ERR_NOT_FOUND)).output::<Nspace>(),
        Err(Status::ERR_NOT_FOUND)
    );
    // An error that claims success is a bad answer.
    assert_eq!(
        HostResult::Proc(Err(Status::SUCCESS)).output::<Proc>(),
        Err(Status::ERR_BAD_PARAM)
    );
    // Of another kind: its error; its data, or a bare success where data was wanted, is bad.
    assert_eq!(
        HostResult::Infos(Err(Status::ERR_UNREACH)).output::<()>(),
        Err(Status::ERR_UNREACH)
    );
    assert_eq!(
        HostResult::Infos(Ok(info())).output::<()>(),
        Err(Status::ERR_BAD_PARAM)
    );
    assert_eq!(
        HostResult::Status(Status::SUCCESS).output::<Vec<u8>>(),
        Err(Status::ERR_BAD_PARAM)
    );
    assert_eq!(
        HostResult::Status(Status::ERR_NOT_SUPPORTED).output::<(Vec<u8>, Vec<Info>)>(),
        Err(Status::ERR_NOT_SUPPORTED)
    );
    assert_eq!(
        HostResult::Data(Ok(vec![1])).output::<Vec<Info>>(),
        Err(Status::ERR_BAD_PARAM)
    );
}

#[test]
fn a_method_output_answers_as_its_kind_and_reads_back_unchanged() {
    let spawned = Nspace::new("spawned").unwrap();
    assert_eq!(
        Ok::<(), Status>(()).into_host(),
        HostResult::Status(Status::SUCCESS)
    );
    assert_eq!(().into_host(), HostResult::Status(Status::SUCCESS));
    assert_eq!(
        Err::<(), Status>(Status::ERR_TIMEOUT).into_host(),
        HostResult::Status(Status::ERR_TIMEOUT)
    );
    let answer = Ok::<Nspace, Status>(spawned.clone()).into_host();
    assert_eq!(answer, HostResult::Nspace(Ok(spawned.clone())));
    assert_eq!(answer.output::<Nspace>(), Ok(spawned));
    let answer = Ok::<(Vec<u8>, Vec<Info>), Status>((b"c".to_vec(), info())).into_host();
    assert_eq!(answer.output(), Ok((b"c".to_vec(), info())));
}
