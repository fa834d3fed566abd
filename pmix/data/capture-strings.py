#!/usr/bin/env python3
"""Capture OpenPMIx 4.2's `*_string` texts into openpmix-4.2-strings.tsv.

Calls each `PMIx_*_string` function of the installed libpmix.so.2 (Debian's libpmix2) for
every named value of its argument type, from the committed inventory, plus a few unnamed
values to record the fallback text. Regenerate with:

    python3 pmix/data/capture-strings.py > pmix/data/openpmix-4.2-strings.tsv
"""
import ctypes
import csv
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
lib = ctypes.CDLL("libpmix.so.2")

# function -> (C argument type, rust_type of the inventory, extra values)
FUNCTIONS = {
    "PMIx_Error_string": (ctypes.c_int, "Status", [5, -2, -999, -3001]),
    "PMIx_Proc_state_string": (ctypes.c_uint8, "ProcState", [99]),
    "PMIx_Scope_string": (ctypes.c_uint8, "Scope", [9]),
    "PMIx_Persistence_string": (ctypes.c_uint8, "Persistence", [9]),
    "PMIx_Data_range_string": (ctypes.c_uint8, "DataRange", [9]),
    "PMIx_Info_directives_string": (ctypes.c_uint32, "InfoDirectives", list(range(32))),
    "PMIx_Data_type_string": (ctypes.c_uint16, "DataType", [29, 44, 70, 499]),
    "PMIx_Alloc_directive_string": (ctypes.c_uint8, "AllocDirective", [9]),
    "PMIx_IOF_channel_string": (ctypes.c_uint16, "IofChannel", list(range(16)) + [16, 255]),
    "PMIx_Job_state_string": (ctypes.c_uint8, "JobState", [99]),
    "PMIx_Link_state_string": (ctypes.c_uint8, "LinkState", [9]),
    "PMIx_Device_type_string": (ctypes.c_uint64, "DeviceType", [3, 64]),
}

values = {}
with open(os.path.join(ROOT, "spec-vectors/inventory/openpmix-4.2/constants.tsv")) as f:
    for row in csv.DictReader(f, delimiter="\t"):
        values.setdefault(row["rust_type"], set()).add(int(row["value"]))

print("# function\targument\ttext  (captured from OpenPMIx 4.2.2 libpmix.so.2 by capture-strings.py)")
for name, (ctype, rust_type, extra) in FUNCTIONS.items():
    fn = getattr(lib, name)
    fn.argtypes = [ctype]
    fn.restype = ctypes.c_char_p
    for v in sorted(values.get(rust_type, set()) | set(extra)):
        text = fn(v).decode("utf-8", "replace")
        print(f"{name}\t{v}\t{text}")
