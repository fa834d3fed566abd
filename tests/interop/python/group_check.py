#!/usr/bin/python3
"""Process groups from python3-pmix clients (OpenPMIx 4.2's binding) under a PMIx server:
every rank constructs the group of the whole job, named rank by rank, asking for a context
id (v5.0 §14.2.6); each must get the same id, which it prints. The group's id then stands
for its members in a fence, and the group is destructed. One line per step,
`ok <step>` or `FAIL <step>: <reason>`.
"""

import sys

from checks import emit, init, job_size, pmix, text


def main():
    client, me = init()
    if client is None:
        return 1
    size = job_size(client, me["nspace"])
    members = [{"nspace": me["nspace"], "rank": r} for r in range(size)]
    want_id = [{"key": pmix.PMIX_GROUP_ASSIGN_CONTEXT_ID, "value": True,
                "val_type": pmix.PMIX_BOOL}]
    failed = False
    rc, results = client.group_construct("pygroup", members, want_id)
    if rc != pmix.PMIX_SUCCESS:
        emit(f"FAIL construct: {client.error_string(rc)}")
        client.finalize([])
        return 1
    key = text(pmix.PMIX_GROUP_CONTEXT_ID)
    ids = [r["value"] for r in results or [] if text(r["key"]) == key]
    if ids:
        emit(f"ok construct with context id {ids[0]}")
    else:
        emit(f"FAIL construct: no context id among {results}")
        failed = True
    group = [{"nspace": "pygroup", "rank": pmix.PMIX_RANK_WILDCARD}]
    rc = client.fence(group, [])
    if rc == pmix.PMIX_SUCCESS:
        emit("ok fence by group id")
    else:
        emit(f"FAIL fence by group id: {client.error_string(rc)}")
        failed = True
    rc = client.group_destruct("pygroup", [])
    if rc == pmix.PMIX_SUCCESS:
        emit("ok destruct")
    else:
        emit(f"FAIL destruct: {client.error_string(rc)}")
        failed = True
    client.finalize([])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
