#!/usr/bin/python3
"""Input pushed by a python3-pmix tool (PMIxTool.iof_push, OpenPMIx 4.2's binding) reaches a
process's standard input.

Run as a job of two processes under `pmixrun --stdin 1`, whose own input stays open and
empty. Rank 1 reads one line of its standard input and reports it. Rank 0 forgets that it
is a client, connects to the launcher's server as a self-started tool (by the launcher's
pid) and pushes one line to rank 1's input, with PMIX_IOF_COMPLETE, which closes it. One
line per step, `ok <step> ...` or `FAIL <step>: <reason>`; exit status 0 only if every step
passed.

Facts about the binding and library this script is written around: `iof_push` sends
`sizeof` of the Python object holding the data, 8 bytes on a 64-bit machine, whatever the
data, so the line pushed is 8 bytes long; and OpenPMIx 4.2's blocking `PMIx_IOF_push`
frees the record its caller waits on as soon as the answer arrives, so on that library the
push hangs (measured: the caller blocks in `pthread_mutex_lock` inside `PMIx_IOF_push`).
"""

import os
import sys

from checks import (fail, failures, forget_client, launcher_pid, ok, text, tool_finalize,
                    tool_init)
import pmix

LINE = "pushed!\n"


def rank1():
    line = sys.stdin.readline()
    if line == LINE:
        ok("stdin-read", repr(line))
    else:
        fail("stdin-read", f"read {line!r}, expected {LINE!r}")
    rest = sys.stdin.read()
    if rest == "":
        ok("stdin-closed")
    else:
        fail("stdin-closed", f"more input after the line: {rest!r}")
    return 0 if failures() == 0 else 1


def main():
    job = os.environ.get("PMIX_NAMESPACE")
    rank = os.environ.get("PMIX_RANK")
    if job is None or rank is None:
        fail("setup", "run me under a PMIx launcher (PMIX_NAMESPACE, PMIX_RANK)")
        return 1
    if rank != "0":
        return rank1()
    forget_client()

    tool, me = tool_init(launcher_pid())
    if tool is None:
        return 1
    ok("tool-init", f"{text(me['nspace'])}:{me['rank']}")

    complete = {"key": pmix.PMIX_IOF_COMPLETE, "value": True, "val_type": pmix.PMIX_BOOL}
    rc = tool.iof_push([{"nspace": job, "rank": 1}], {"bytes": LINE}, [complete])
    if rc == pmix.PMIX_SUCCESS:
        ok("iof-push")
    else:
        fail("iof-push", tool.error_string(rc))

    return tool_finalize(tool)


if __name__ == "__main__":
    sys.exit(main())
