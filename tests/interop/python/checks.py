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


def forget_client():
    """Drop what makes this process a client of its launcher (its identity and the server's
    URIs), as a tool started by hand has none of them."""
    for k in ["PMIX_NAMESPACE", "PMIX_RANK", "PMIX_SERVER_URI41", "PMIX_SERVER_URI4",
              "PMIX_SERVER_URI3", "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"]:
        os.environ.pop(k, None)


def launcher_pid():
    """The directive that finds the launcher's server by its pid (this process's parent)."""
    return {"key": pmix.PMIX_SERVER_PIDINFO, "value": os.getppid(), "val_type": pmix.PMIX_PID}


def tool_init(where):
    """PMIxTool init with the directive `where`: the tool and its identifier, or (None,
    None) after a FAIL."""
    tool = pmix.PMIxTool()
    rc, me = tool.init([where])
    if rc != pmix.PMIX_SUCCESS:
        fail("tool-init", tool.error_string(rc))
        return None, None
    return tool, me


def tool_finalize(tool):
    """PMIx_tool_finalize with its verdict; the exit status of the whole check."""
    rc = tool.finalize()
    if rc != pmix.PMIX_SUCCESS:
        fail("tool-finalize", tool.error_string(rc))
    else:
        ok("tool-finalize")
    return 0 if failures() == 0 else 1
