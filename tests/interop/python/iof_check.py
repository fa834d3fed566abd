#!/usr/bin/python3
"""I/O forwarding through a python3-pmix tool (PMIxTool.iof_pull, OpenPMIx 4.2's binding).

Run as a job of two processes under `pmixrun`. Rank 1 writes one line to stdout and one to
stderr and exits. Rank 0 forgets that it is a client, connects to the launcher's server as a
self-started tool (by the launcher's pid, as a debugger does), pulls rank 1's output on
stdout and stderr, and waits until its handler has been handed both of rank 1's lines (written before or after the pull: the server keeps output no one pulled
yet), each from rank 1 on its own channel; then it finalizes. One line per
step, `ok <step> ...` or `FAIL <step>: <reason>`; exit status 0 only if every step passed.

Facts about the binding this script is written around: the handler is called as
handler(id, channel, source {'nspace', 'rank'}, {'bytes', 'size'}, infos), `bytes` read
as a C string (up to a NUL byte: the check looks for the line inside what it got); output
that arrives before `iof_pull` has returned is copied and handed over again from a timer
thread, the copy without a NUL, so garbage may follow it;
`iof_pull(procs, channel, directives, handler)` blocks and returns (status, id).
"""

import os
import sys
import threading
import time

from checks import (emit, fail, forget_client, launcher_pid, ok, text, tool_finalize,
                    tool_init)
import pmix

OUT = "iof-check says hello on stdout"
ERR = "iof-check says hello on stderr"
WAIT_S = 60


def rank1():
    emit(OUT)
    os.write(sys.stderr.fileno(), (ERR + "\n").encode())
    return 0


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

    got = []
    arrived = threading.Condition()

    def handler(hid, channel, source, payload, info):
        data = payload.get("bytes", b"")
        if isinstance(data, bytes):
            # Bytes past the output may follow (the binding's copy of early output is not
            # NUL-terminated): they must not make the line unreadable.
            data = data.decode(errors="replace")
        with arrived:
            got.append((channel, text(source["nspace"]), source["rank"], data))
            arrived.notify_all()

    # Rank 1's alone: this process's own lines would come back to it, and a handler still
    # waiting for the interpreter's lock when finalize holds it deadlocks the binding.
    writer = {"nspace": job, "rank": 1}
    channels = pmix.PMIX_FWD_STDOUT_CHANNEL | pmix.PMIX_FWD_STDERR_CHANNEL
    rc, hid = tool.iof_pull([writer], channels, [], handler)
    if rc != pmix.PMIX_SUCCESS:
        fail("iof-pull", tool.error_string(rc))
        tool.finalize()
        return 1
    ok("iof-pull", f"handler {hid}")

    def seen(line, channel):
        return any(c == channel and ns == job and r == 1 and line in data
                   for (c, ns, r, data) in got)

    def both():
        return seen(OUT, pmix.PMIX_FWD_STDOUT_CHANNEL) and seen(ERR, pmix.PMIX_FWD_STDERR_CHANNEL)

    deadline = time.monotonic() + WAIT_S
    with arrived:
        while not both() and time.monotonic() < deadline:
            arrived.wait(timeout=1)
        done = both()
        summary = [(c, r, d[:40]) for (c, ns, r, d) in got]
    if done:
        ok("iof-output", "rank 1's stdout and stderr lines, each on its channel")
    else:
        fail("iof-output", f"after {WAIT_S} s the handler had {summary}")

    # No iof_deregister: the binding's own wrapper raises a TypeError before it reaches the
    # library (`for h in myhdlrs and not found`); finalizing ends the pull.
    return tool_finalize(tool)


if __name__ == "__main__":
    sys.exit(main())
