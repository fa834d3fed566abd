//! Realm resolution (RG-*, RS-*, RJ-*, RA-*, RP-*, RN-*): which session, job, application,
//! process or node a reserved key answers for.

use super::*;

#[test]
fn rg_01_multi_realm_key_defaults_to_the_job_realm() {
    assert_eq!(
        get_reserved(attr::NUM_NODES.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(2))
    );
}

#[test]
fn rg_02_realm_directive_selects_the_realm() {
    let v = get_reserved(
        attr::NUM_NODES.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::SESSION_INFO, true)],
    );
    assert_eq!(v, Some(Value::Uint32(16)));
}

#[test]
fn rg_03_process_level_value_wins_for_a_real_rank() {
    assert_eq!(
        get_reserved(attr::APPNUM.wire_key(), Rank(3), &[]),
        Some(Value::Uint32(1))
    );
}

#[test]
fn rs_01_session_key_answers_the_callers_session() {
    assert_eq!(
        get_reserved(attr::UNIV_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(8))
    );
}

#[test]
fn rs_02_session_request_ignores_the_proc() {
    let a = get_reserved(attr::UNIV_SIZE.wire_key(), Rank(2), &[]);
    let b = get_reserved(attr::UNIV_SIZE.wire_key(), Rank::WILDCARD, &[]);
    assert_eq!(a, b);
}

#[test]
fn rs_05_num_nodes_of_session_differs_from_job() {
    let session = get_reserved(
        attr::NUM_NODES.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::SESSION_INFO, true)],
    );
    let job = get_reserved(attr::NUM_NODES.wire_key(), Rank::WILDCARD, &[]);
    assert_ne!(session, job);
}

#[test]
fn rj_01_job_key_with_wildcard_answers_the_job() {
    assert_eq!(
        get_reserved(attr::JOB_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(4))
    );
}

#[test]
fn ra_01_app_key_with_appnum_qualifier() {
    let v = get_reserved(
        attr::APP_SIZE.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::APPNUM, 1)],
    );
    assert_eq!(v, Some(Value::Uint32(2)));
}

#[test]
fn ra_02_app_key_with_real_rank_answers_its_application() {
    let s = store();
    let r = s.realms("job").unwrap();
    assert!(
        r.lookup(
            attr::APP_SIZE.wire_key(),
            Rank(3),
            &Qualifiers::default(),
            None,
            None
        )
        .is_some()
    );
    assert_eq!(r.appnum_of(3), Some(1));
}

#[test]
fn ra_03_wildcard_app_request_uses_the_callers_app() {
    let mut r = realms();
    r.apps
        .get_mut(&1)
        .unwrap()
        .push(info(attr::APP_ARGV.wire_key(), Value::string("b")));
    let v = r.lookup(
        attr::APP_ARGV.wire_key(),
        Rank::WILDCARD,
        &Qualifiers::default(),
        Some(Rank(2)),
        None,
    );
    assert_eq!(v, Some(&Value::string("b")));
}

#[test]
fn ra_04_wildcard_app_request_for_another_job_uses_app_zero() {
    let mut r = realms();
    r.apps
        .get_mut(&0)
        .unwrap()
        .push(info(attr::APP_ARGV.wire_key(), Value::string("a")));
    let v = r.lookup(
        attr::APP_ARGV.wire_key(),
        Rank::WILDCARD,
        &Qualifiers::default(),
        None,
        None,
    );
    assert_eq!(v, Some(&Value::string("a")));
}

#[test]
fn ra_04_an_answer_for_another_application_is_not_kept_as_the_plain_value() {
    // The server answered a get of another job's application 1: kept under {other,
    // wildcard}, it would answer the next get without PMIX_APPNUM, which means application 0.
    let other = Proc::try_new("other", Rank::WILDCARD).unwrap();
    let me = p("job", 0);
    let appnum_1 = dir(&[Info::new(attr::APP_INFO, true), Info::new(attr::APPNUM, 1)]);
    let mut c = cache();
    c.store_answer(
        &other,
        vec![kv(attr::APP_ARGV.wire_key(), Value::string("b"))],
        attr::APP_ARGV.wire_key(),
        &appnum_1.qualifiers,
    );
    let app_0 = dir(&[Info::new(attr::APP_INFO, true)]);
    assert_eq!(
        client_get(&c, &me, &other, attr::APP_ARGV.wire_key(), &app_0),
        ClientStep::AskServer {
            add_immediate: false
        }
    );
    // A plain answer is kept, and answers a plain get; a get that selects a realm still
    // asks, as the plain value need not be that realm's.
    c.store_answer(
        &other,
        vec![kv(attr::JOB_SIZE.wire_key(), Value::Uint32(3))],
        attr::JOB_SIZE.wire_key(),
        &Qualifiers::default(),
    );
    assert_eq!(
        client_get(&c, &me, &other, attr::JOB_SIZE.wire_key(), &dir(&[])),
        ClientStep::Done(Ok(Value::Uint32(3)))
    );
    assert_eq!(
        client_get(&c, &me, &other, attr::JOB_SIZE.wire_key(), &app_0),
        ClientStep::AskServer {
            add_immediate: false
        }
    );
}

#[test]
fn ra_05_app_info_directive_gives_the_application_value() {
    let v = get_reserved(
        attr::NUM_NODES.wire_key(),
        Rank(0),
        &[Info::new(attr::APP_INFO, true)],
    );
    assert_eq!(v, Some(Value::Uint32(1)));
}

#[test]
fn rp_01_process_key_answers_the_process() {
    assert_eq!(
        get_reserved(attr::LOCAL_RANK.wire_key(), Rank(3), &[]),
        Some(Value::Uint16(1))
    );
}

#[test]
fn rp_02_procid_ignores_the_proc() {
    let c = ClientCache::default();
    let me = p("job", 2);
    let step = client_get(&c, &me, &p("job", 0), attr::PROCID.wire_key(), &dir(&[]));
    assert_eq!(step, ClientStep::Done(Ok(Value::Proc(me))));
}

#[test]
fn the_rank_of_the_callers_namespace_with_an_invalid_rank_is_the_callers_own() {
    // OpenPMIx's form, on which the standard is silent (OpenPMIx 6.1's client4 example).
    let c = ClientCache::default();
    let me = p("job", 2);
    let asked = p("job", Rank::INVALID.0);
    let step = client_get(&c, &me, &asked, attr::RANK.wire_key(), &dir(&[]));
    assert_eq!(step, ClientStep::Done(Ok(Value::Rank(Rank(2)))));
}

#[test]
fn rp_06_spawned_for_a_process_not_spawned_is_not_found() {
    assert_eq!(get_reserved(attr::SPAWNED.wire_key(), Rank(0), &[]), None);
}

#[test]
fn rn_01_node_key_without_qualifier_answers_the_targets_node() {
    assert_eq!(
        get_reserved(attr::NODE_SIZE.wire_key(), Rank(3), &[]),
        Some(Value::Uint32(3))
    );
    assert_eq!(
        get_reserved(attr::NODE_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(2))
    );
}

#[test]
fn rn_02_node_qualifier_selects_the_node() {
    let v = get_reserved(
        attr::NODE_SIZE.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::HOSTNAME, "n1".to_string())],
    );
    assert_eq!(v, Some(Value::Uint32(3)));
    let v = get_reserved(
        attr::NODE_SIZE.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::NODEID, 1)],
    );
    assert_eq!(v, Some(Value::Uint32(3)));
}

#[test]
fn rn_04_local_job_keys_registered_per_node_answer_for_the_callers_node() {
    // OpenPMIx (the v4.x placement) registers PMIX_LOCAL_SIZE and PMIX_LOCAL_PEERS only inside
    // the node arrays; a job-level request answers with the caller's node.
    let mut r = realms();
    for (node, size, peers) in [(0u32, 2u32, "0,1"), (1, 3, "2,3,4")] {
        r.register(&[info(
            attr::NODE_INFO_ARRAY.wire_key(),
            info_array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(format!("n{node}"))),
                info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(size)),
                info(attr::LOCAL_PEERS.wire_key(), Value::string(peers)),
            ]),
        )]);
    }
    let q = Qualifiers::default();
    let local_size = |caller: u32| {
        r.lookup(
            attr::LOCAL_SIZE.wire_key(),
            Rank::WILDCARD,
            &q,
            Some(Rank(caller)),
            None,
        )
        .cloned()
    };
    assert_eq!(local_size(0), Some(Value::Uint32(2)));
    assert_eq!(local_size(2), Some(Value::Uint32(3)));
    // Without a caller of this job, the node this lookup runs on answers.
    let peers = r.lookup(
        attr::LOCAL_PEERS.wire_key(),
        Rank::WILDCARD,
        &q,
        None,
        Some("n1"),
    );
    assert_eq!(peers, Some(&Value::string("2,3,4")));
    // Other job keys do not fall back to a node's value.
    r.register(&[info(
        attr::NODE_INFO_ARRAY.wire_key(),
        info_array(vec![
            info(attr::HOSTNAME.wire_key(), Value::string("n0")),
            info(attr::MAX_PROCS.wire_key(), Value::Uint32(9)),
        ]),
    )]);
    assert_eq!(
        r.lookup(
            attr::MAX_PROCS.wire_key(),
            Rank::WILDCARD,
            &q,
            Some(Rank(0)),
            None
        ),
        None
    );
}

#[test]
fn rn_06_nodeid_is_the_index_of_the_node() {
    assert_eq!(
        get_reserved(attr::NODEID.wire_key(), Rank(2), &[]),
        Some(Value::Uint32(1))
    );
}

#[test]
fn rs_03_session_id_selects_the_session() {
    let q = [
        Info::new(attr::SESSION_INFO, true),
        Info::new(attr::SESSION_ID, 7u32),
    ];
    assert_eq!(
        get_reserved(attr::NUM_NODES.wire_key(), Rank::WILDCARD, &q),
        Some(Value::Uint32(16))
    );
    let other = [
        Info::new(attr::SESSION_INFO, true),
        Info::new(attr::SESSION_ID, 9u32),
    ];
    assert_eq!(
        get_reserved(attr::NUM_NODES.wire_key(), Rank::WILDCARD, &other),
        None
    );
}

#[test]
fn rs_04_universe_size_is_the_sessions() {
    assert_eq!(
        get_reserved(attr::UNIV_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(8))
    );
}

#[test]
fn rs_04_universe_size_max_procs_and_slots_are_one_value_in_a_realm() {
    // v5.0 §6.1.1: PMIX_UNIV_SIZE is the session's PMIX_MAX_PROCS, and PMIX_NUM_SLOTS the
    // equivalent of PMIX_MAX_PROCS; only PMIX_UNIV_SIZE (8) is registered for the session.
    let session = [Info::new(attr::SESSION_INFO, true)];
    for key in [attr::MAX_PROCS.wire_key(), attr::NUM_SLOTS.wire_key()] {
        assert_eq!(
            get_reserved(key, Rank::WILDCARD, &session),
            Some(Value::Uint32(8))
        );
        // Without the directive they are the job's (RG-01), which registered neither.
        assert_eq!(get_reserved(key, Rank::WILDCARD, &[]), None);
    }
    let mut r = realms();
    r.register(&[info(attr::MAX_PROCS.wire_key(), Value::Uint32(6))]);
    assert_eq!(
        get_with(r, attr::NUM_SLOTS.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(6))
    );
}

#[test]
fn rs_06_session_request_by_id_ignores_the_proc() {
    // PMIx_Get(NULL, ...): the target is the caller, rank 0.
    let q = [
        Info::new(attr::SESSION_INFO, true),
        Info::new(attr::SESSION_ID, 7u32),
    ];
    assert_eq!(
        get_reserved(attr::NUM_NODES.wire_key(), Rank(0), &q),
        Some(Value::Uint32(16))
    );
}

#[test]
fn rj_02_job_level_keys_answer_for_the_job() {
    let keys = [
        (attr::JOBID.wire_key(), Value::string("j1")),
        (attr::NPROC_OFFSET.wire_key(), Value::Rank(Rank(0))),
        (attr::MAX_PROCS.wire_key(), Value::Uint32(4)),
        (attr::NUM_SLOTS.wire_key(), Value::Uint32(4)),
        (attr::NSDIR.wire_key(), Value::string("/tmp/j1")),
        (attr::JOB_NUM_APPS.wire_key(), Value::Uint32(2)),
    ];
    let mut r = realms();
    r.register(
        &keys
            .iter()
            .map(|(k, v)| info(k, v.clone()))
            .collect::<Vec<_>>(),
    );
    for (a, v) in keys {
        assert_eq!(get_with(r.clone(), a, Rank::WILDCARD, &[]), Some(v));
    }
    // PMIX_JOB_INFO forces the job realm for a key that defaults elsewhere.
    r.register(&[info(
        attr::JOB_INFO_ARRAY.wire_key(),
        info_array(vec![info(attr::UNIV_SIZE.wire_key(), Value::Uint32(5))]),
    )]);
    let v = get_with(
        r,
        attr::UNIV_SIZE.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::JOB_INFO, true)],
    );
    assert_eq!(v, Some(Value::Uint32(5)));
}

#[test]
fn rj_03_a_job_of_another_session_needs_its_session_id() {
    assert_eq!(
        get_reserved(
            attr::JOB_SIZE.wire_key(),
            Rank::WILDCARD,
            &[Info::new(attr::SESSION_ID, 7u32)]
        ),
        Some(Value::Uint32(4))
    );
    // Named with another session, "job" is not this session's job.
    assert_eq!(
        get_reserved(
            attr::JOB_SIZE.wire_key(),
            Rank::WILDCARD,
            &[Info::new(attr::SESSION_ID, 9u32)]
        ),
        None
    );
}

#[test]
fn rj_04_nproc_offset_is_the_global_rank_of_rank_0() {
    let mut r = realms();
    r.register(&[info(
        attr::PROC_INFO_ARRAY.wire_key(),
        info_array(vec![
            info(attr::RANK.wire_key(), Value::Rank(Rank(0))),
            info(attr::GLOBAL_RANK.wire_key(), Value::Rank(Rank(10))),
        ]),
    )]);
    assert_eq!(
        get_with(r, attr::NPROC_OFFSET.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Rank(Rank(10)))
    );
}

fn with_local_leaders() -> JobRealms {
    let mut r = realms();
    for (node, ldr, size) in [(0u32, 0u32, 2u32), (1, 2, 2)] {
        r.register(&[info(
            attr::NODE_INFO_ARRAY.wire_key(),
            info_array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(format!("n{node}"))),
                info(attr::LOCALLDR.wire_key(), Value::Rank(Rank(ldr))),
                info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(size)),
            ]),
        )]);
    }
    r
}

#[test]
fn rj_05_local_leader_of_the_callers_node_or_of_the_named_node() {
    let r = with_local_leaders();
    let q = Qualifiers::default();
    let ldr = |caller: u32, q: &Qualifiers| {
        r.lookup(
            attr::LOCALLDR.wire_key(),
            Rank::WILDCARD,
            q,
            Some(Rank(caller)),
            None,
        )
        .cloned()
    };
    assert_eq!(ldr(1, &q), Some(Value::Rank(Rank(0))));
    assert_eq!(ldr(3, &q), Some(Value::Rank(Rank(2))));
    let on_n0 = Qualifiers::from_info(&[Info::new(attr::HOSTNAME, "n0".to_string())]);
    assert_eq!(ldr(3, &on_n0), Some(Value::Rank(Rank(0))));
}

#[test]
fn rj_06_local_size_is_the_callers_node_unless_an_application_is_named() {
    let mut r = with_local_leaders();
    r.register(&[info(
        attr::APP_INFO_ARRAY.wire_key(),
        info_array(vec![
            info(attr::APPNUM.wire_key(), Value::Uint32(1)),
            info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(1)),
        ]),
    )]);
    assert_eq!(
        get_with(r.clone(), attr::LOCAL_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(2))
    );
    let app = [
        Info::new(attr::APP_INFO, true),
        Info::new(attr::APPNUM, 1u32),
    ];
    assert_eq!(
        get_with(r, attr::LOCAL_SIZE.wire_key(), Rank::WILDCARD, &app),
        Some(Value::Uint32(1))
    );
}

#[test]
fn rj_09_job_information_of_an_unknown_namespace_follows_r_03_to_r_07() {
    let s = store();
    let ask = |dmodex| {
        server_get(
            &s,
            &p("job", 0),
            &Proc::try_new("unknown", Rank::WILDCARD).unwrap(),
            Some(attr::JOB_SIZE.wire_key()),
            &dir(&[]),
            dmodex,
        )
    };
    assert_eq!(ask(true), ServerStep::AskHost);
    assert_eq!(
        reply_value(ask(false), attr::JOB_SIZE.wire_key()),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn ra_06_app_size_is_what_the_host_registered_whatever_the_process_states() {
    let mut s = store();
    s.gone.insert(p("job", 0));
    s.gone.insert(p("job", 1));
    let step = server_get(
        &s,
        &p("job", 0),
        &job_wild(),
        Some(attr::APP_SIZE.wire_key()),
        &dir(&[Info::new(attr::APPNUM, 0u32)]),
        false,
    );
    assert_eq!(
        reply_value(step, attr::APP_SIZE.wire_key()),
        Ok(Value::Uint32(2))
    );
}

#[test]
fn ra_07_appnum_as_a_key_is_the_processs_application() {
    assert_eq!(
        get_reserved(attr::APPNUM.wire_key(), Rank(2), &[]),
        Some(Value::Uint32(1))
    );
    assert_eq!(
        get_reserved(attr::APPNUM.wire_key(), Rank(1), &[]),
        Some(Value::Uint32(0))
    );
}

#[test]
fn rp_03_nspace_of_the_caller() {
    let me = p("job", 1);
    assert_eq!(
        client_get(
            &ClientCache::default(),
            &me,
            &me,
            attr::NSPACE.wire_key(),
            &dir(&[])
        ),
        ClientStep::Done(Ok(Value::string("job")))
    );
    assert_eq!(
        client_get(
            &ClientCache::default(),
            &me,
            &me,
            attr::RANK.wire_key(),
            &dir(&[])
        ),
        ClientStep::Done(Ok(Value::Rank(Rank(1))))
    );
}

#[test]
fn rp_04_a_process_of_another_session_needs_its_session_id() {
    let key = attr::LOCAL_RANK.wire_key();
    assert_eq!(
        get_reserved(key, Rank(3), &[Info::new(attr::SESSION_ID, 7u32)]),
        Some(Value::Uint16(1))
    );
    assert_eq!(
        get_reserved(key, Rank(3), &[Info::new(attr::SESSION_ID, 8u32)]),
        None
    );
}

#[test]
fn rp_05_process_keys_answer_for_the_named_process() {
    for rank in 0..4u32 {
        assert_eq!(
            get_reserved(attr::LOCAL_RANK.wire_key(), Rank(rank), &[]),
            Some(Value::Uint16((rank % 2) as u16))
        );
        assert_eq!(
            get_reserved(attr::APPNUM.wire_key(), Rank(rank), &[]),
            Some(Value::Uint32(rank / 2))
        );
    }
}

#[test]
fn rp_05_device_distances_narrowed_to_a_device_type_or_a_device() {
    // v5.0 §12.4.11: PMIX_DEVICE_TYPE (a mask) and PMIX_DEVICE_ID (UUID or OS name) select
    // the devices whose distances a get of PMIX_DEVICE_DISTANCES answers, at the server and
    // from a client's cache alike.
    use crate::model::{DataArray, DataType, DeviceDistance, DeviceType};
    let dist = |uuid: &str, osname: &str, t: DeviceType, d: u16| {
        Value::DeviceDist(Box::new(DeviceDistance {
            uuid: Some(uuid.into()),
            osname: Some(osname.into()),
            device_type: t,
            mindist: d,
            maxdist: d,
        }))
    };
    let nic = dist("ipv4://10.0.0.1", "eth0", DeviceType::NETWORK, 2);
    let gpu = dist("gpu-5f2c", "card0", DeviceType::GPU, 1);
    let array = |e: Vec<Value>| {
        Value::DataArray(Box::new(DataArray::new(DataType::DEVICE_DIST, e).unwrap()))
    };
    let mut r = realms();
    r.procs.get_mut(&1).unwrap().push(info(
        attr::DEVICE_DISTANCES.wire_key(),
        array(vec![nic.clone(), gpu.clone()]),
    ));
    let key = attr::DEVICE_DISTANCES.wire_key();
    let gpus = [Info::new(attr::DEVICE_TYPE, DeviceType::GPU)];
    let both = [Info::new(
        attr::DEVICE_TYPE,
        DeviceType(DeviceType::GPU.0 | DeviceType::NETWORK.0),
    )];
    let eth0 = [Info::new(attr::DEVICE_ID, "eth0".to_owned())];
    let by_uuid = [Info::new(attr::DEVICE_ID, "gpu-5f2c".to_owned())];
    assert_eq!(
        get_with(r.clone(), key, Rank(1), &[]),
        Some(array(vec![nic.clone(), gpu.clone()]))
    );
    assert_eq!(
        get_with(r.clone(), key, Rank(1), &gpus),
        Some(array(vec![gpu.clone()]))
    );
    assert_eq!(
        get_with(r.clone(), key, Rank(1), &both),
        Some(array(vec![nic.clone(), gpu.clone()]))
    );
    assert_eq!(
        get_with(r.clone(), key, Rank(1), &eth0),
        Some(array(vec![nic.clone()]))
    );
    assert_eq!(
        get_with(r.clone(), key, Rank(1), &by_uuid),
        Some(array(vec![gpu.clone()]))
    );
    let mut c = ClientCache::default();
    c.realms.insert(Nspace::new("job").unwrap(), r);
    assert_eq!(
        client_get(&c, &p("job", 0), &p("job", 1), key, &dir(&gpus)),
        ClientStep::Done(Ok(array(vec![gpu])))
    );
}

#[test]
fn rp_07_parent_id_of_a_process_not_spawned_is_not_found() {
    assert_eq!(get_reserved(attr::PARENT_ID.wire_key(), Rank(0), &[]), None);
}

#[test]
fn rn_03_local_procs_ignores_the_proc() {
    let mut r = realms();
    for node in 0..2u32 {
        let procs = Value::string(format!("procs of n{node}"));
        r.register(&[info(
            attr::NODE_INFO_ARRAY.wire_key(),
            info_array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(format!("n{node}"))),
                info(attr::LOCAL_PROCS.wire_key(), procs),
            ]),
        )]);
    }
    // Asked about rank 3 (on n1), the server on n0 answers with its own node.
    assert_eq!(
        get_with(r, attr::LOCAL_PROCS.wire_key(), Rank(3), &[]),
        Some(Value::string("procs of n0"))
    );
}

#[test]
fn rn_05_node_size_is_the_hosts_count_for_the_node() {
    let q = [Info::new(attr::HOSTNAME, "n1".to_string())];
    assert_eq!(
        get_reserved(attr::NODE_SIZE.wire_key(), Rank::WILDCARD, &q),
        Some(Value::Uint32(3))
    );
}
