#!/usr/bin/python3
"""Interoperability check of a python3-pmix host: OpenPMIx 4.2's Cython binding as the
server side (PMIxServer, whose module of upcalls is Python), with two clients of its own.

`server_check.py` is the host: it starts the server with upcalls for connection,
finalization, fence, publish and lookup, registers a job of two processes on this node
(PMIx_server_register_nspace, register_client, setup_fork for each), starts both as
`server_check.py client`, waits for them, checks which upcalls the library made, and
finalizes. A client: init; the job size its host registered; put and commit of its rank;
fence collecting data; get of the other rank's value; publish by rank 0, lookup by rank 1
between two fences; finalize.

One line per step from every process, `ok <step> ...` or `FAIL <step>: <reason>`; the
host's exit status is 0 only if every step of all three processes passed.

Facts about the binding (python3-pmix 4.2.2) this script is written around:
- An upcall returns a status (SUCCESS becomes PMIX_OPERATION_SUCCEEDED: the library
  completes the request itself); fence returns (status, bytes) and lookup (status, pdata
  list). The binding copies the fence's bytes with strdup(), so a host returning binary data
  would hand the library a short copy: this one-node host returns none (the library holds
  its own clients' data).
- setup_fork adds the library's variables to the dict it is given, splitting each at its
  first and second '=' only (values holding '=' are cut).
- Keys arrive as bytes or str depending on the path; `text()` compares them as str.
- OpenPMIx's server answers a registration without a callback PMIX_OPERATION_SUCCEEDED.
"""

import os
import socket
import subprocess
import sys
import threading

from checks import fail, failures, init, job_size, ok, text
import pmix

NSPACE = "pyhost-job"
NPROCS = 2
KEY = "pyhost.rank"
SERVICE = "pyhost.service"
WAIT_SECONDS = 120
# The binding registers without a callback: a library may answer PMIX_SUCCESS or, having
# done it at once, PMIX_OPERATION_SUCCEEDED (OpenPMIx 4.2 does).
DONE = (pmix.PMIX_SUCCESS, pmix.PMIX_OPERATION_SUCCEEDED)


# ---------- the host ----------

calls = {}
published = []
lock = threading.Lock()


def count(upcall):
    with lock:
        calls[upcall] = calls.get(upcall, 0) + 1


def client_connected(proc):
    count("clientconnected")
    return pmix.PMIX_SUCCESS


def client_finalized(proc):
    count("clientfinalized")
    return pmix.PMIX_SUCCESS


def fence(args):
    count("fencenb")
    return pmix.PMIX_SUCCESS, bytearray()


def publish(args):
    count("publish")
    with lock:
        for d in args["directives"]:
            published.append({"proc": args["proc"], "key": text(d["key"]),
                              "value": d["value"], "val_type": d["val_type"]})
    return pmix.PMIX_SUCCESS


def lookup(args):
    count("lookup")
    with lock:
        found = [d for d in published for k in args["keys"] if text(k) == d["key"]]
    return (pmix.PMIX_SUCCESS if found else pmix.PMIX_ERR_NOT_FOUND), found


def host():
    # Clients use OpenPMIx's hash store, which takes the job's information from their
    # connection's reply (tests/interop/c/host.c says why); another library ignores it.
    os.environ["PMIX_MCA_gds"] = "hash"
    server = pmix.PMIxServer()
    upcalls = {"clientconnected": client_connected, "clientfinalized": client_finalized,
               "fencenb": fence, "publish": publish, "lookup": lookup}
    rc = server.init([], upcalls)
    if rc != pmix.PMIX_SUCCESS:
        fail("host-init", server.error_string(rc))
        return 1
    ok("host-init", text(server.get_version()))

    # The maps of nodes and ranks, in the library's own form (OpenPMIx's hash store needs
    # them to file a job's information).
    rc, nodes = server.generate_regex([socket.gethostname()])
    if rc == pmix.PMIX_SUCCESS:
        rc, ranks = server.generate_ppn([",".join(str(r) for r in range(NPROCS))])
    if rc != pmix.PMIX_SUCCESS:
        fail("generate-maps", server.error_string(rc))
        return 1
    job = [{"key": pmix.PMIX_NODE_MAP, "value": nodes, "val_type": pmix.PMIX_REGEX},
           {"key": pmix.PMIX_PROC_MAP, "value": ranks, "val_type": pmix.PMIX_REGEX},
           {"key": pmix.PMIX_JOB_SIZE, "value": NPROCS, "val_type": pmix.PMIX_UINT32},
           {"key": pmix.PMIX_UNIV_SIZE, "value": NPROCS, "val_type": pmix.PMIX_UINT32},
           {"key": pmix.PMIX_LOCAL_SIZE, "value": NPROCS, "val_type": pmix.PMIX_UINT32}]
    rc = server.register_nspace(NSPACE, NPROCS, job)
    if rc not in DONE:
        fail("register-nspace", server.error_string(rc))
        return 1
    ok("register-nspace", NSPACE)

    children = []
    for rank in range(NPROCS):
        proc = {"nspace": NSPACE, "rank": rank}
        rc = server.register_client(proc, os.getuid(), os.getgid())
        if rc not in DONE:
            fail("register-client", f"rank {rank}: {server.error_string(rc)}")
            break
        env = os.environ.copy()
        rc = server.setup_fork(proc, env)
        if rc != pmix.PMIX_SUCCESS:
            fail("setup-fork", f"rank {rank}: {server.error_string(rc)}")
            break
        children.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "client"],
                                         env=env))
    ok("clients-started", str(len(children)))

    for rank, child in enumerate(children):
        try:
            status = child.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            fail("client-exit", f"rank {rank} still running after {WAIT_SECONDS} s")
            continue
        if status != 0:
            fail("client-exit", f"rank {rank} exited with {status}")
    if failures() == 0 and len(children) == NPROCS:
        ok("client-exit", "both clients passed")

    with lock:
        seen = dict(calls)
    expected = {"clientconnected": NPROCS, "clientfinalized": NPROCS, "publish": 1,
                "lookup": 1}
    for upcall, n in expected.items():
        if seen.get(upcall, 0) == n:
            ok("upcall", f"{upcall} x{n}")
        else:
            fail("upcall", f"{upcall}: {seen.get(upcall, 0)} calls, expected {n}")
    # A fence of local processes only may complete without the host (OpenPMIx's server
    # does so by default): how often it was asked is reported, not checked.
    ok("upcall", f"fencenb x{seen.get('fencenb', 0)} (not checked)")

    rc = server.finalize()
    if rc != pmix.PMIX_SUCCESS:
        fail("host-finalize", server.error_string(rc))
    else:
        ok("host-finalize")
    return 0 if failures() == 0 else 1


# ---------- a client ----------

def client():
    c, me = init()
    if c is None:
        return 1
    rank = me["rank"]
    ok("init", f"{text(me['nspace'])}:{rank}")

    size = job_size(c, me["nspace"])
    if size == NPROCS:
        ok("job-size", str(size))
    else:
        fail("job-size", f"{size}, expected {NPROCS}")

    rc = c.put(pmix.PMIX_GLOBAL, KEY, {"value": 100 + rank, "val_type": pmix.PMIX_UINT32})
    if rc == pmix.PMIX_SUCCESS:
        rc = c.commit()
    if rc != pmix.PMIX_SUCCESS:
        fail("put-commit", c.error_string(rc))
    else:
        ok("put-commit")

    everyone = [{"nspace": me["nspace"], "rank": pmix.PMIX_RANK_WILDCARD}]
    collect = [{"key": pmix.PMIX_COLLECT_DATA, "value": True, "val_type": pmix.PMIX_BOOL}]
    rc = c.fence(everyone, collect)
    if rc != pmix.PMIX_SUCCESS:
        fail("fence", c.error_string(rc))
    else:
        ok("fence", "collecting data")

    peer = 1 - rank
    rc, val = c.get({"nspace": me["nspace"], "rank": peer}, KEY, [])
    if rc != pmix.PMIX_SUCCESS:
        fail("get-peer", c.error_string(rc))
    elif int(val["value"]) != 100 + peer:
        fail("get-peer", f"rank {peer}'s value is {val['value']}, expected {100 + peer}")
    else:
        ok("get-peer", f"rank {peer} = {val['value']}")

    if rank == 0:
        rc = c.publish([{"key": SERVICE, "value": "port-7", "val_type": pmix.PMIX_STRING}])
        if rc != pmix.PMIX_SUCCESS:
            fail("publish", c.error_string(rc))
        else:
            ok("publish", SERVICE)
    rc = c.fence(everyone, [])
    if rc != pmix.PMIX_SUCCESS:
        fail("fence", c.error_string(rc))
    if rank == 1:
        rc, pdata = c.lookup([{"key": SERVICE}], [])
        values = [text(p.get("value")) for p in (pdata or []) if text(p.get("key")) == SERVICE]
        if rc != pmix.PMIX_SUCCESS:
            fail("lookup", c.error_string(rc))
        elif values != ["port-7"]:
            fail("lookup", f"found {values}, expected ['port-7']")
        else:
            ok("lookup", f"{SERVICE} = port-7")
    rc = c.fence(everyone, [])
    if rc != pmix.PMIX_SUCCESS:
        fail("fence", c.error_string(rc))

    rc = c.finalize([])
    if rc != pmix.PMIX_SUCCESS:
        fail("finalize", c.error_string(rc))
    else:
        ok("finalize")
    return 0 if failures() == 0 else 1


if __name__ == "__main__":
    sys.exit(client() if sys.argv[1:] == ["client"] else host())
