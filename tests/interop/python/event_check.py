#!/usr/bin/python3
"""Events for a python3-pmix client (OpenPMIx 4.2's binding) under a PMIx server.

The steps of tests/src/bin/rust_event_check.rs, with one difference: only rank 0 registers
its handler (for PMIX_EVENT_PROC_TERMINATED and an application code, 4242). The ranks fence,
rank 1 notifies 4242 to the namespace, and all but rank 0 finalize and exit. Rank 0 must hear
of each of them from the host, with the rank as the affected process and exit code 0, and of
rank 1's own event. One line per step, `ok <step> ...` or `FAIL <step>: <reason>`.

Why only rank 0: the binding hands a handler's answer back to the library through a queue
that a Python thread drains, and a process whose handler ran while it was finalizing was
seen to hang in `finalize` (once, on a loaded 2-core machine). The other ranks are
finalizing while the events fly, so they register nothing.

The binding calls the handler as hdlr(ref, status, source, info, results) and expects
(status, results) back; info entries are dicts with 'key' (str), 'value' and 'val_type'.
"""

import queue
import sys

from checks import emit, init, job_size, pmix

HELLO = 4242


seen = queue.Queue()


def handler(ref, status, source, info, results):
    affected = None
    code = None
    for i in info:
        key = i["key"].decode() if isinstance(i["key"], bytes) else str(i["key"])
        if key == pmix.PMIX_EVENT_AFFECTED_PROC.decode():
            affected = i["value"]
        elif key == pmix.PMIX_EXIT_CODE.decode():
            code = i["value"]
    seen.put((status, source, affected, code))
    return pmix.PMIX_SUCCESS, []


def main():
    client, me = init()
    if client is None:
        return 1
    size = job_size(client, me["nspace"])
    if me["rank"] == 0:
        rc, ref = client.register_event_handler([pmix.PMIX_EVENT_PROC_TERMINATED, HELLO], [],
                                                handler)
        if rc != pmix.PMIX_SUCCESS:
            emit(f"FAIL register: {client.error_string(rc)}")
            return 1
        emit("ok register")
    rc = client.fence([], [])
    if rc != pmix.PMIX_SUCCESS:
        emit(f"FAIL fence: {client.error_string(rc)}")
        return 1
    if me["rank"] == 1:
        rc = client.notify_event(HELLO, me, pmix.PMIX_RANGE_NAMESPACE, [])
        if rc != pmix.PMIX_SUCCESS:
            emit(f"FAIL notify: {client.error_string(rc)}")
            return 1
    if me["rank"] != 0:
        client.finalize([])
        emit("ok leave")
        return 0
    ended = set()
    hello = False
    failed = False
    while len(ended) + 1 < size or (size > 1 and not hello):
        try:
            status, source, affected, code = seen.get(timeout=30)
        except queue.Empty:
            emit(f"FAIL events: only {sorted(ended)} ended and hello={hello} within 30 s")
            return 1
        if status == HELLO:
            hello = source["rank"] == 1
            if not hello:
                emit(f"FAIL hello: from {source}")
                failed = True
            continue
        if affected is not None and code == 0 and affected["nspace"] == me["nspace"]:
            ended.add(affected["rank"])
        else:
            emit(f"FAIL termination event: {affected} {code}")
            failed = True
    emit(f"ok events {len(ended)} terminations and hello={hello}")
    client.finalize([])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
