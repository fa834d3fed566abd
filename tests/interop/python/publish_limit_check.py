#!/usr/bin/python3
"""A python3-pmix client (OpenPMIx 4.2's binding) publishes past what its server lets one
process hold (pmixrun's host: 64 MiB per publisher): a 40 MiB value is published, a second
is refused with PMIX_ERR_OUT_OF_RESOURCE and not kept, and once the first is unpublished
the second fits. One line per step, `ok <step>` or `FAIL <step>: <reason>`.
"""

import os
import sys

from checks import emit, init, pmix

SIZE = 40 << 20


def value(tag):
    """A string of SIZE bytes that zlib cannot shrink much (OpenPMIx compresses strings)."""
    return os.urandom(SIZE // 2).hex()[: SIZE - 1] + tag


def main():
    client, me = init()
    if client is None:
        return 1
    failed = False

    def check(step, rc, want):
        nonlocal failed
        if rc == want:
            emit(f"ok {step}")
        else:
            emit(f"FAIL {step}: {client.error_string(rc)}, not {client.error_string(want)}")
            failed = True

    first = {"key": "first", "value": value("1"), "val_type": pmix.PMIX_STRING}
    second = {"key": "second", "value": value("2"), "val_type": pmix.PMIX_STRING}
    check("first publish", client.publish([first]), pmix.PMIX_SUCCESS)
    check("second publish refused", client.publish([second]), pmix.PMIX_ERR_OUT_OF_RESOURCE)
    rc, _ = client.lookup([{"key": "second"}], [])
    check("refused data not kept", rc, pmix.PMIX_ERR_NOT_FOUND)
    # The binding unpublishes everything this process published (it passes no keys).
    check("unpublish", client.unpublish(["first"], []), pmix.PMIX_SUCCESS)
    check("second publish fits", client.publish([second]), pmix.PMIX_SUCCESS)
    rc, found = client.lookup([{"key": "second"}], [])
    got = found[0].get("value") if rc == pmix.PMIX_SUCCESS and found else None
    if isinstance(got, bytes):
        got = got.decode()
    check("second found", rc if got == second["value"] else pmix.PMIX_ERROR, pmix.PMIX_SUCCESS)
    client.finalize([])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
