#!/usr/bin/python3
"""Job management from python3-pmix clients (OpenPMIx 4.2's binding) under a PMIx server.

Rank 0 logs a line to stderr (PMIx_Log), asks for an allocation of one node
(PMIx_Allocation_request, which must come back with PMIX_ALLOC_ID), then asks the host to
terminate rank 1 (PMIx_Job_control with PMIX_JOB_CTRL_TERMINATE). Rank 1 must receive
SIGTERM: it then finalizes and exits cleanly. One line per step, `ok <step> ...` or
`FAIL <step>: <reason>`.
"""

import signal
import sys
import time

from checks import emit, init, pmix, text


terminated = False


def on_term(signum, frame):
    global terminated
    terminated = True


def rank0(client, me):
    line = [{"key": pmix.PMIX_LOG_STDERR, "value": "job_check: a log line",
             "val_type": pmix.PMIX_STRING}]
    rc = client.log(line, [])
    if rc != pmix.PMIX_SUCCESS:
        emit(f"FAIL log: {client.error_string(rc)}")
        return 1
    emit("ok log")
    nodes = [{"key": pmix.PMIX_ALLOC_NUM_NODES, "value": 1, "val_type": pmix.PMIX_UINT64}]
    rc, info = client.allocation_request(pmix.PMIX_ALLOC_NEW, nodes)
    keys = [text(i["key"]) for i in info or []]
    if rc != pmix.PMIX_SUCCESS or text(pmix.PMIX_ALLOC_ID) not in keys:
        emit(f"FAIL allocation: {client.error_string(rc)} {info}")
        return 1
    emit("ok allocation")
    target = [{"nspace": me["nspace"], "rank": 1}]
    term = [{"key": pmix.PMIX_JOB_CTRL_TERMINATE, "value": True, "val_type": pmix.PMIX_BOOL}]
    rc, _ = client.job_control(target, term)
    if rc != pmix.PMIX_SUCCESS:
        emit(f"FAIL job control: {client.error_string(rc)}")
        return 1
    emit("ok job control")
    return 0


def main():
    signal.signal(signal.SIGTERM, on_term)
    client, me = init()
    if client is None:
        return 1
    rc = client.fence([], [])
    if rc != pmix.PMIX_SUCCESS:
        emit(f"FAIL fence: {client.error_string(rc)}")
        return 1
    result = 0
    if me["rank"] == 0:
        result = rank0(client, me)
    elif me["rank"] == 1:
        deadline = time.monotonic() + 60
        while not terminated and time.monotonic() < deadline:
            time.sleep(0.05)
        if terminated:
            emit("ok terminated by the host")
        else:
            emit("FAIL terminate: no SIGTERM within 60 s")
            result = 1
    client.finalize([])
    return result


if __name__ == "__main__":
    sys.exit(main())
