"""What the python3-pmix check scripts share: the binding, imported quietly, one-line
verdicts written straight to stdout (so lines of several processes do not interleave) and
counted when they fail, and init with its verdict on failure."""

import os
import sys
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

import pmix  # noqa: E402,F401


def emit(line):
    """Write one verdict line (`ok <step> ...` or `FAIL <step>: <reason>`) at once."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (line + "\n").encode())


_failures = 0


def ok(step, detail=""):
    """A step that passed: `ok <step> <detail>`."""
    emit(f"ok {step} {detail}".rstrip())


def fail(step, reason):
    """A step that failed: `FAIL <step>: <reason>`, counted."""
    global _failures
    _failures += 1
    emit(f"FAIL {step}: {reason}")


def failures():
    """How many steps failed so far."""
    return _failures


def text(v):
    """A key or string from the binding, which hands back bytes or str."""
    return v.decode() if isinstance(v, bytes) else str(v)


def init():
    """PMIx_Init: the client and this process's identifier, or (None, None) after a FAIL."""
    client = pmix.PMIxClient()
    rc, me = client.init([])
    if rc != pmix.PMIX_SUCCESS:
        emit(f"FAIL init: {client.error_string(rc)}")
        return None, None
    return client, me


def job_size(client, nspace):
    """The PMIX_JOB_SIZE of a namespace, or 0 when it cannot be read."""
    rc, val = client.get({"nspace": nspace, "rank": pmix.PMIX_RANK_WILDCARD},
                         pmix.PMIX_JOB_SIZE, [])
    return int(val["value"]) if rc == pmix.PMIX_SUCCESS else 0
