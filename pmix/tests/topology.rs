//! The server's topology reaching its clients: a server shares the topology it was given
//! (`PMIX_TOPOLOGY2`, `PMIX_SERVER_SHARE_TOPOLOGY`), and a client loads that one instead of
//! discovering the machine; the server's locality and cpuset strings read back on the client.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use pmix::model::topology::{parse_cpuset_string, relative_locality};
use pmix::model::{Cpuset, Locality, Nspace, Proc, Rank, Value};
use pmix::server::NoHost;
use pmix::topology::{HWLOC_XML_V2, Machine};

mod common;

use common::{memory_clients, server_configured};

fn cpus(list: &str) -> Cpuset {
    Cpuset {
        source: Some("hwloc".into()),
        bitmap: Some(list.into()),
    }
}

/// Eight hardware threads in two packages: a machine no test host has, so a client that
/// sees it got it from the server.
fn synthetic() -> pmix::model::Topology {
    Machine::synthetic("pack:2 core:2 pu:2")
        .unwrap()
        .to_topology()
        .unwrap()
}

#[tokio::test]
async fn a_client_loads_the_topology_its_server_shares() {
    let (server, ns) = server_configured(NoHost, false, 2, |c| {
        c.topology = Some(synthetic());
        c.share_topology = true;
    })
    .await;
    let clients = memory_clients(&server, &ns, 2).await;
    let machine = clients[0].load_topology().await.unwrap();
    assert_eq!(machine.all().bitmap.as_deref(), Some("0-7"));
    // Loaded once: the second call is the same machine.
    let again = clients[0].load_topology().await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&machine, &again));
    // A named source: hwloc's (in any case) is the one this crate has.
    let named = clients[0].load_topology_of("HWLOC").await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&machine, &named));
    assert_eq!(
        clients[0]
            .load_topology_of("another")
            .await
            .unwrap_err()
            .status(),
        pmix::model::Status::ERR_NOT_SUPPORTED
    );

    let a = server.generate_locality_string(&cpus("0")).unwrap();
    let b = server.generate_locality_string(&cpus("1")).unwrap();
    let far = server.generate_locality_string(&cpus("7")).unwrap();
    let core = relative_locality(&a, &b).unwrap();
    assert_eq!(
        core.0,
        Locality::SHARE_NODE.0
            | Locality::SHARE_PACKAGE.0
            | Locality::SHARE_CORE.0
            | Locality::SHARE_NUMA.0
    );
    let other = relative_locality(&a, &far).unwrap();
    assert_eq!(other.0, Locality::SHARE_NODE.0 | Locality::SHARE_NUMA.0);

    let s = server.generate_cpuset_string(&cpus("0-3,6")).unwrap();
    assert_eq!(s, "hwloc:0-3,6");
    assert_eq!(parse_cpuset_string(&s).unwrap(), cpus("0-3,6"));
    assert!(server.generate_locality_string(&cpus("8-9")).is_err());
}

#[tokio::test]
async fn a_server_that_does_not_share_leaves_its_clients_to_discover() {
    let (server, ns) = server_configured(NoHost, false, 1, |c| {
        c.topology = Some(synthetic());
    })
    .await;
    let clients = memory_clients(&server, &ns, 1).await;
    let job = Proc::new(Nspace::new("testjob").unwrap(), Rank::WILDCARD);
    let shared = clients[0].get(Some(&job), HWLOC_XML_V2, &[]).await;
    assert!(!matches!(shared, Ok(Value::String(_))), "{shared:?}");
    let machine = clients[0].load_topology().await.unwrap();
    assert_eq!(machine.all(), Machine::discover().unwrap().all());
}
