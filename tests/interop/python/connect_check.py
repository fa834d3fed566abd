#!/usr/bin/python3
"""Connect and disconnect from python3-pmix clients (OpenPMIx 4.2's binding) under a PMIx
server: every rank connects the whole job, disconnects it, then disconnects again, which
must be refused with PMIX_ERR_INVALID_OPERATION (v5.0 §12.3.3). One line per step,
`ok <step>` or `FAIL <step>: <reason>`.
"""

import sys

from checks import emit, init, pmix


def main():
    client, me = init()
    if client is None:
        return 1
    job = [{"nspace": me["nspace"], "rank": pmix.PMIX_RANK_WILDCARD}]
    failed = False
    rc = client.connect(job, [])
    if rc == pmix.PMIX_SUCCESS:
        emit("ok connect")
    else:
        emit(f"FAIL connect: {client.error_string(rc)}")
        failed = True
    rc = client.disconnect(job, [])
    if rc == pmix.PMIX_SUCCESS:
        emit("ok disconnect")
    else:
        emit(f"FAIL disconnect: {client.error_string(rc)}")
        failed = True
    rc = client.disconnect(job, [])
    if rc == pmix.PMIX_ERR_INVALID_OPERATION:
        emit("ok second disconnect refused")
    else:
        emit(f"FAIL second disconnect: {client.error_string(rc)}")
        failed = True
    client.finalize([])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
