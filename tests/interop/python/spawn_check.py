#!/usr/bin/python3
"""Spawn from a python3-pmix client (OpenPMIx 4.2's binding) under a PMIx server.

Rank 0 spawns two copies of this script with the argument `child`; each child checks that it
was spawned (PMIX_SPAWNED) by rank 0 of the parent job (PMIX_PARENT_ID) and prints one line.
Rank 0 then reads the child job's size from the information the spawn brought back, and
asks for a job whose executable does not exist, which must fail with
PMIX_ERR_JOB_EXE_NOT_FOUND. One line per step, `ok <step> ...` or `FAIL <step>: <reason>`.

Each app carries one info (its working directory): the binding passes an empty info list
of an app so that OpenPMIx's client scans past its end and crashes (seen with python3-pmix
on Debian, whatever the server).
"""

import os
import sys

from checks import emit, init, pmix


def child(client, me):
    rc, spawned = client.get(me, pmix.PMIX_SPAWNED, [])
    rc2, parent = client.get(me, pmix.PMIX_PARENT_ID, [])
    if rc != pmix.PMIX_SUCCESS or not spawned["value"]:
        emit(f"FAIL child {me['rank']}: PMIX_SPAWNED {client.error_string(rc)} {spawned}")
        return 1
    if rc2 != pmix.PMIX_SUCCESS or parent["value"]["rank"] != 0:
        emit(f"FAIL child {me['rank']}: PMIX_PARENT_ID {client.error_string(rc2)} {parent}")
        return 1
    emit(f"ok child {me['rank']} of {parent['value']['nspace']}")
    return 0


def parent(client, me):
    script = os.path.abspath(__file__)
    wdir = [{"key": pmix.PMIX_WDIR, "value": os.getcwd(), "val_type": pmix.PMIX_STRING}]
    app = {"cmd": sys.executable, "argv": [sys.executable, script, "child"], "env": [],
           "maxprocs": 2, "info": wdir}
    rc, ns = client.spawn([], [app])
    if rc != pmix.PMIX_SUCCESS:
        emit(f"FAIL spawn: {client.error_string(rc)}")
        return 1
    rc, size = client.get({"nspace": ns, "rank": pmix.PMIX_RANK_WILDCARD}, pmix.PMIX_JOB_SIZE, [])
    if rc != pmix.PMIX_SUCCESS or int(size["value"]) != 2:
        emit(f"FAIL child job size: {client.error_string(rc)} {size}")
        return 1
    emit(f"ok spawned {ns} of 2")
    missing = {"cmd": "/nonexistent/pmix-spawn-check", "argv": ["/nonexistent/pmix-spawn-check"],
               "env": [], "maxprocs": 1, "info": wdir}
    rc, _ = client.spawn([], [missing])
    if rc != pmix.PMIX_ERR_JOB_EXE_NOT_FOUND:
        emit(f"FAIL missing executable: {client.error_string(rc)}")
        return 1
    emit("ok missing executable refused")
    return 0


def main():
    client, me = init()
    if client is None:
        return 1
    if sys.argv[1:] == ["child"]:
        result = child(client, me)
    elif me["rank"] == 0:
        result = parent(client, me)
    else:
        result = 0
    client.finalize([])
    return result


if __name__ == "__main__":
    sys.exit(main())
