#!/usr/bin/python3
"""Queries from a python3-pmix client (OpenPMIx 4.2's binding) under a PMIx server.

Each rank asks, in one PMIx_Query_info call, for the active namespaces and for its job's
process table, then asks a query that pairs PMIX_PROCID with PMIX_RANK. It checks that its
namespace is listed, that the table holds one entry per rank in rank order with this
process's own pid, and that the bad query is refused. OpenPMIx's client hands back the
answers as one flat list (the wire's shape), which is what is read here; with the argument
`standard`, the answers must come in the standard's form instead (v5.0 §7.1.2: one
PMIX_QUERY_RESULTS per query, in the queries' order, each holding that query's answers), as
this project's library gives them under PMIX_RS_STRICT=1. One line per step,
`ok <step> ...` or `FAIL <step>: <reason>`.
"""

import os
import sys

from checks import emit, init, job_size, pmix, text


def main():
    client, me = init()
    if client is None:
        return 1
    size = job_size(client, me["nspace"])
    mine = [{"key": pmix.PMIX_NSPACE, "value": me["nspace"], "val_type": pmix.PMIX_STRING}]
    rc, info = client.query([
        {"keys": [pmix.PMIX_QUERY_NAMESPACES], "qualifiers": []},
        {"keys": [pmix.PMIX_QUERY_PROC_TABLE], "qualifiers": mine},
    ])
    failed = False
    if rc != pmix.PMIX_SUCCESS:
        emit(f"FAIL query: {client.error_string(rc)}")
        client.finalize([])
        return 1
    if "standard" in sys.argv[1:]:
        answers = per_query(info, 2)
        if answers is None:
            client.finalize([])
            return 1
    else:
        answers = {text(i["key"]): i["value"] for i in info}
    names = text(answers.get(text(pmix.PMIX_QUERY_NAMESPACES), "")).split(",")
    if text(me["nspace"]) in names:
        emit("ok namespaces")
    else:
        emit(f"FAIL namespaces: {names}")
        failed = True
    table = answers.get(text(pmix.PMIX_QUERY_PROC_TABLE), {}).get("array", [])
    ranks = [e["proc"]["rank"] for e in table]
    own = [e for e in table if e["proc"]["rank"] == me["rank"]]
    if ranks == list(range(size)) and own and own[0]["pid"] == os.getpid():
        emit(f"ok proc table of {len(table)} with my pid")
    else:
        emit(f"FAIL proc table: {table}")
        failed = True
    bad = [{"key": pmix.PMIX_PROCID, "value": me, "val_type": pmix.PMIX_PROC},
           {"key": pmix.PMIX_RANK, "value": 0, "val_type": pmix.PMIX_PROC_RANK}]
    rc, _ = client.query([{"keys": [pmix.PMIX_JOB_SIZE], "qualifiers": bad}])
    if rc == pmix.PMIX_ERR_BAD_PARAM:
        emit("ok procid with rank refused")
    else:
        emit(f"FAIL procid with rank: {client.error_string(rc)}")
        failed = True
    client.finalize([])
    return 1 if failed else 0


def per_query(info, queries):
    """The answers of the standard's form, keyed by query key, or None after a FAIL."""
    results = [i for i in info if text(i["key"]) == text(pmix.PMIX_QUERY_RESULTS)]
    if len(results) != queries or len(info) != queries:
        emit(f"FAIL standard form: {queries} PMIX_QUERY_RESULTS expected, got {info}")
        return None
    answers = {}
    for r in results:
        for i in r["value"].get("array", []):
            answers[text(i["key"])] = i["value"]
    emit(f"ok standard form: {queries} PMIX_QUERY_RESULTS")
    return answers


if __name__ == "__main__":
    sys.exit(main())
