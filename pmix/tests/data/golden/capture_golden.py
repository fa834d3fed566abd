#!/usr/bin/env python3
"""Golden v41 vectors of the types the shared vectors lack, from OpenPMIx 4.2.2's
PMIx_Data_pack (Debian's libpmix.so.2), non-described buffers. Regenerate with:

    python3 pmix/tests/data/golden/capture_golden.py > pmix/tests/data/golden/golden_v41_extra.tsv
"""
import ctypes, struct
def out(name, desc, result):
    rc, hexs = result
    assert rc == 0, (name, rc)
    print(f"{name}\t{desc}\t{hexs}\t({len(hexs)//2} bytes)")
lib = ctypes.CDLL("libpmix.so.2")
info = (ctypes.c_char * 552)(); ctypes.memmove(info, b"pmix.tool.nocon", 15)
struct.pack_into("<H", info, 520, 1); struct.pack_into("<B", info, 528, 1)
proc = (ctypes.c_char * 260)()
assert lib.PMIx_tool_init(proc, info, ctypes.c_size_t(1)) == 0
def pack(raw, t):
    buf = (ctypes.c_char * 40)()
    rc = lib.PMIx_Data_pack(None, buf, raw, 1, t)
    base, _, _, _, used = struct.unpack("5Q", bytes(buf))
    return rc, ctypes.string_at(base, used).hex() if used else ""
s = lambda b: ctypes.cast(ctypes.create_string_buffer(b), ctypes.c_void_p).value
keep=[]
def cs(b):
    x = ctypes.create_string_buffer(b); keep.append(x); return ctypes.addressof(x)
# COORD: view u8 @0, coord* @8, dims @16
arr = (ctypes.c_uint32*2)(3, 300); keep.append(arr)
coord = struct.pack("<B7xQQ", 1, ctypes.addressof(arr), 2); cb = ctypes.create_string_buffer(coord, 24)
out("PMIX_COORD","{logical,[3,300]}",pack(cb,47))
# ENDPOINT: uuid, osname, bo{bytes,size}
bo = ctypes.create_string_buffer(b"\x01\x02", 2); keep.append(bo)
ep = ctypes.create_string_buffer(struct.pack("<QQQQ", cs(b"u"), cs(b"o"), ctypes.addressof(bo), 2), 32)
out("PMIX_ENDPOINT","{u,o,[01 02]}",pack(ep,55))
# DEVICE_DIST: uuid, osname, type u64 @16, mindist u16 @24, maxdist @26
dd = ctypes.create_string_buffer(struct.pack("<QQQHH4x", cs(b"u"), cs(b"o"), 2, 5, 300), 32)
out("PMIX_DEVICE_DIST","{u,o,GPU,5,300}",pack(dd,54))
# REGATTR: name*, string[512] @8, type u16 @520, description** @528
desc = (ctypes.c_void_p*2)(cs(b"d"), None); keep.append(desc)
ra = bytearray(536); struct.pack_into("<Q", ra, 0, cs(b"N")); ra[8:9]=b"k"; struct.pack_into("<H", ra, 520, 14); struct.pack_into("<Q", ra, 528, ctypes.addressof(desc))
rab = ctypes.create_string_buffer(bytes(ra), 536)
out("PMIX_REGATTR","{N,k,UINT32,[d]}",pack(rab,48))
# GEOMETRY: fabric size_t, uuid, osname, coordinates*, ncoords
geo = ctypes.create_string_buffer(struct.pack("<QQQQQ", 7, cs(b"u"), cs(b"o"), ctypes.addressof(cb), 1), 40)
out("PMIX_GEOMETRY","{7,u,o,[{logical,[3,300]}]}",pack(geo,53))
# DISK_STATS: disk*, 11 u64
ds = ctypes.create_string_buffer(struct.pack("<Q11Q", cs(b"sda"), *range(1,12)), 96)
out("PMIX_DISK_STATS","{sda,1..11}",pack(ds,62))
ns = ctypes.create_string_buffer(struct.pack("<Q6Q", cs(b"eth0"), *range(1,7)), 56)
out("PMIX_NET_STATS","{eth0,1..6}",pack(ns,63))
# IOF channel u16, DEVTYPE u64, LOCTYPE u16, JOB_STATE u8, LINK_STATE, ALLOC, STOR
for name,t,fmt,v in [("PMIX_IOF_CHANNEL",45,"<H",300),("PMIX_DEVTYPE",57,"<Q",300),("PMIX_LOCTYPE",58,"<H",300),("PMIX_JOB_STATE",50,"<B",3),("PMIX_LINK_STATE",51,"<B",2),("PMIX_ALLOC_DIRECTIVE",43,"<B",2),("PMIX_STOR_MEDIUM",66,"<Q",300),("PMIX_STOR_ACCESS",67,"<Q",300),("PMIX_STOR_PERSIST",68,"<Q",300),("PMIX_STOR_ACCESS_TYPE",69,"<H",300)]:
    b = ctypes.create_string_buffer(struct.pack(fmt, v), 8); out(name, str(v), pack(b, t))
nsp = ctypes.create_string_buffer(b"myns", 256); out("PMIX_PROC_NSPACE", "myns", pack(nsp, 60))
# PROC_CPUSET: source*, bitmap* (an hwloc bitmap). OpenPMIx 4.2.2 packs only the bitmap's list
# string; it fails (PMIX_ERROR) to pack any non-empty bitmap, because it takes the character
# count hwloc_bitmap_list_asprintf returns for an error. So the vectors are an unbound process
# (NULL bitmap) and an empty bitmap.
hw = ctypes.CDLL("libhwloc.so.15"); hw.hwloc_bitmap_alloc.restype = ctypes.c_void_p
cpu = ctypes.create_string_buffer(struct.pack("<QQ", cs(b"hwloc"), 0), 16)
out("PMIX_PROC_CPUSET", "{hwloc,unbound}", pack(cpu, 52))
cpu = ctypes.create_string_buffer(struct.pack("<QQ", cs(b"hwloc"), hw.hwloc_bitmap_alloc()), 16)
out("PMIX_PROC_CPUSET", "{hwloc,empty}", pack(cpu, 52))
bm = hw.hwloc_bitmap_alloc(); hw.hwloc_bitmap_list_sscanf(ctypes.c_void_p(bm), b"0-1")
cpu = ctypes.create_string_buffer(struct.pack("<QQ", cs(b"hwloc"), bm), 16)
assert pack(cpu, 52)[0] == -1, "OpenPMIx now packs a bound cpuset: capture it"
