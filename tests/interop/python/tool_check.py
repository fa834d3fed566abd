#!/usr/bin/python3
"""Interoperability check of a python3-pmix tool (PMIxTool, OpenPMIx 4.2's Cython binding).

The steps of tests/interop/c/tool_check.c. Run as a process of a job under `pmixrun` (it
reads the job's namespace and the server's URI from the environment the launcher gave
it), it then forgets that it is a client and connects to the same server as a
self-started tool, the way a debugger does:

    tool_check.py uri    connects with PMIX_SERVER_URI
    tool_check.py pid    connects with PMIX_SERVER_PIDINFO = the launcher's pid, which
                         makes the library look for the launcher's rendezvous file

Steps: tool init (the server assigns the tool an identifier: it brings none); the servers
it is attached to (the launcher's, named as its URI names it); the job's size by
namespace; finalize. One line per step,
`ok <step> ...` or `FAIL <step>: <reason>`; exit status 0 only if every step passed.
CHECK_EXPECTED_SIZE=N makes the job size a checked value.

Facts about the binding this script is written around: `PMIxTool.init` returns (status,
{'nspace', 'rank'}); `get_servers` returns (status, list of the same dicts).
"""

import os
import sys

from checks import fail, forget_client, launcher_pid, ok, text, tool_finalize, tool_init
import pmix


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "uri"
    job = os.environ.get("PMIX_NAMESPACE")
    uri = os.environ.get("PMIX_SERVER_URI41")
    if job is None or uri is None:
        fail("setup", "run me under a PMIx launcher (PMIX_NAMESPACE, PMIX_SERVER_URI41)")
        return 1
    # A tool started by hand has none of the client's variables.
    forget_client()

    if mode == "pid":
        where = launcher_pid()
    else:
        where = {"key": pmix.PMIX_SERVER_URI, "value": uri, "val_type": pmix.PMIX_STRING}
    tool, me = tool_init(where)
    if tool is None:
        return 1
    if not text(me["nspace"]) or text(me["nspace"]) == job:
        fail("tool-init", f"assigned namespace {me['nspace']!r} is not a tool's own")
    else:
        ok("tool-init", f"{text(me['nspace'])}:{me['rank']} ({mode})")

    # The server's identifier is the URI's first part, `nspace.rank`.
    ns, _, rank = uri.split(";", 1)[0].rpartition(".")
    rc, servers = tool.get_servers()
    if rc != pmix.PMIX_SUCCESS:
        fail("get-servers", tool.error_string(rc))
    elif len(servers) != 1:
        fail("get-servers", f"{servers}, expected the launcher's server alone")
    elif (text(servers[0]["nspace"]), str(servers[0]["rank"])) != (ns, rank):
        fail("get-servers", f"{servers[0]}, expected {ns}:{rank} (the URI's)")
    else:
        ok("get-servers", f"{text(servers[0]['nspace'])}:{servers[0]['rank']}")

    rc, val = tool.get({"nspace": job, "rank": pmix.PMIX_RANK_WILDCARD}, pmix.PMIX_JOB_SIZE, [])
    expected = os.environ.get("CHECK_EXPECTED_SIZE")
    if rc != pmix.PMIX_SUCCESS:
        fail("get-job-size", tool.error_string(rc))
    elif expected is not None and int(val["value"]) != int(expected):
        fail("get-job-size", f"{val['value']}, expected {expected}")
    else:
        ok("get-job-size", str(val["value"]))

    return tool_finalize(tool)


if __name__ == "__main__":
    sys.exit(main())
