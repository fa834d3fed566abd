//! `cargo xtask bench codec`: pack and unpack of 16 mixed `Info`s and of 64 strings, in
//! nanoseconds per operation, beside OpenPMIx's `PMIx_Data_pack`/`PMIx_Data_unpack` on the
//! same data in the same run (through `libpmix.so.2`, loaded with `libloading`, when it is
//! installed). Both sides pack into a fresh buffer and unpack from a fresh copy of the bytes,
//! so allocation is counted on both.
//!
//! Wall-clock numbers are noisy on a shared machine; the ratio between the two columns is
//! the figure to read. Each measurement is the best of several rounds.

use std::hint::black_box;
use std::time::{Duration, Instant};

use pmix::codec::DataBuffer;
use pmix::model::{Info, Nspace, Proc, Value};

const ROUNDS: usize = 7;

fn infos() -> Vec<Info> {
    (0..16)
        .map(|i| {
            let value = match i % 8 {
                0 => Value::Uint32(i),
                1 => Value::from(format!("value-{i}")),
                2 => Value::Bool(i % 3 == 0),
                3 => Value::Uint64(u64::from(i) << 40),
                4 => Value::Int32(-(i as i32)),
                5 => Value::Size(u64::from(i) * 1000),
                6 => Value::Proc(Proc::new(Nspace::new("bench.job").expect("nspace"), i)),
                _ => Value::from("a somewhat longer string value for the bench"),
            };
            Info::with_key(&format!("pmix.bench.key{i}"), value).expect("key")
        })
        .collect()
}

fn strings() -> Vec<String> {
    (0..64).map(|i| format!("string-number-{i}")).collect()
}

/// Best time per call of `f` over `ROUNDS` rounds of `iters` calls.
#[allow(clippy::disallowed_methods)] // a benchmark reads the clock; it is not sim-reachable
fn measure(iters: u32, mut f: impl FnMut()) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        best = best.min(start.elapsed());
    }
    best.as_nanos() as f64 / f64::from(iters)
}

struct Row {
    name: &'static str,
    ours: f64,
    openpmix: Option<f64>,
}

fn ours(iters: u32) -> Vec<Row> {
    let infos = infos();
    let strings = strings();
    let packed_infos = {
        let mut b = DataBuffer::new();
        b.pack(&infos).expect("pack");
        b.bytes().to_vec()
    };
    let packed_strings = {
        let mut b = DataBuffer::new();
        b.pack(&strings).expect("pack");
        b.bytes().to_vec()
    };
    vec![
        Row {
            name: "pack 16 infos",
            ours: measure(iters, || {
                let mut b = DataBuffer::new();
                b.pack(black_box(&infos)).expect("pack");
                black_box(b);
            }),
            openpmix: None,
        },
        Row {
            name: "unpack 16 infos",
            ours: measure(iters, || {
                let mut b = DataBuffer::load(black_box(&packed_infos).clone(), Default::default());
                black_box(b.unpack::<Info>(16).expect("unpack"));
            }),
            openpmix: None,
        },
        Row {
            name: "pack 64 strings",
            ours: measure(iters, || {
                let mut b = DataBuffer::new();
                b.pack(black_box(&strings)).expect("pack");
                black_box(b);
            }),
            openpmix: None,
        },
        Row {
            name: "unpack 64 strings",
            ours: measure(iters, || {
                let mut b =
                    DataBuffer::load(black_box(&packed_strings).clone(), Default::default());
                black_box(b.unpack::<String>(64).expect("unpack"));
            }),
            openpmix: None,
        },
    ]
}

/// OpenPMIx through its C ABI. The `unsafe` of this benchmark lives here, each block with
/// the layout fact it relies on (`openpmix/ABI.md` §2.4).
mod openpmix {
    use super::*;
    use std::ffi::{c_char, c_void};

    type PackFn = unsafe extern "C" fn(*const c_void, *mut DataBuf, *const c_void, i32, u16) -> i32;
    type UnpackFn =
        unsafe extern "C" fn(*const c_void, *mut DataBuf, *mut c_void, *mut i32, u16) -> i32;
    type LoadFn = unsafe extern "C" fn(*mut DataBuf, *mut ByteObject);
    type ToolInitFn = unsafe extern "C" fn(*mut u8, *mut CInfo, usize) -> i32;

    const PMIX_INFO: u16 = 24;
    const PMIX_STRING: u16 = 3;

    /// `pmix_data_buffer_t`: 40 bytes.
    #[repr(C)]
    #[derive(Default)]
    pub(super) struct DataBuf {
        base_ptr: usize,
        pack_ptr: usize,
        unpack_ptr: usize,
        bytes_allocated: usize,
        bytes_used: usize,
    }

    #[repr(C)]
    struct ByteObject {
        bytes: *mut c_char,
        size: usize,
    }

    /// `pmix_info_t`: key[512], flags at 512, `pmix_value_t` at 520 (type u16, union at +8);
    /// 552 bytes.
    #[repr(C, align(8))]
    pub(super) struct CInfo {
        key: [u8; 512],
        flags: u32,
        _pad0: u32,
        value_type: u16,
        _pad1: [u16; 3],
        data: [u64; 3],
    }

    impl CInfo {
        fn zeroed() -> Self {
            CInfo {
                key: [0; 512],
                flags: 0,
                _pad0: 0,
                value_type: 0,
                _pad1: [0; 3],
                data: [0; 3],
            }
        }
    }

    /// `pmix_proc_t`: nspace[256], rank.
    #[repr(C)]
    struct CProc {
        nspace: [u8; 256],
        rank: u32,
    }

    unsafe extern "C" {
        fn malloc(n: usize) -> *mut c_void;
        fn free(p: *mut c_void);
    }

    pub(super) struct Lib {
        _lib: libloading::Library,
        pack: PackFn,
        unpack: UnpackFn,
        load: LoadFn,
    }

    // Boxed so each proc keeps its address while the vector grows: C holds the pointer.
    #[allow(clippy::vec_box)]
    fn c_info(info: &Info, procs: &mut Vec<Box<CProc>>, strings: &mut Vec<Vec<u8>>) -> CInfo {
        let mut c = CInfo {
            flags: info.flags.0,
            ..CInfo::zeroed()
        };
        c.key[..info.key.as_str().len()].copy_from_slice(info.key.as_str().as_bytes());
        c.value_type = info.value.data_type().0;
        c.data[0] = match &info.value {
            Value::Uint32(v) => u64::from(*v),
            Value::Bool(b) => u64::from(*b),
            Value::Uint64(v) | Value::Size(v) => *v,
            Value::Int32(v) => u64::from(*v as u32),
            Value::String(Some(s)) => {
                let mut bytes = s.clone().into_bytes();
                bytes.push(0);
                strings.push(bytes);
                strings.last().map_or(0, |b| b.as_ptr() as u64)
            }
            Value::Proc(p) => {
                let mut cp = Box::new(CProc {
                    nspace: [0; 256],
                    rank: p.rank.0,
                });
                cp.nspace[..p.nspace.as_str().len()].copy_from_slice(p.nspace.as_str().as_bytes());
                let ptr = &*cp as *const CProc as u64;
                procs.push(cp);
                ptr
            }
            other => panic!("bench has no C form for {other:?}"),
        };
        c
    }

    impl Lib {
        pub(super) fn open() -> Option<Lib> {
            assert_eq!(std::mem::size_of::<CInfo>(), 552, "pmix_info_t layout");
            // SAFETY: loading OpenPMIx runs its constructors, which only initialise globals.
            let lib = unsafe { libloading::Library::new("libpmix.so.2") }.ok()?;
            // SAFETY: the symbols have these C signatures in OpenPMIx 4.2.2 (pmix.h).
            let (pack, unpack, load, init) = unsafe {
                (
                    *lib.get::<PackFn>(b"PMIx_Data_pack\0").ok()?,
                    *lib.get::<UnpackFn>(b"PMIx_Data_unpack\0").ok()?,
                    *lib.get::<LoadFn>(b"PMIx_Data_load\0").ok()?,
                    *lib.get::<ToolInitFn>(b"PMIx_tool_init\0").ok()?,
                )
            };
            // PMIx_Data_pack needs an initialised library: a tool that does not connect.
            let mut nocon = CInfo {
                value_type: 1,
                data: [1, 0, 0],
                ..CInfo::zeroed()
            };
            nocon.key[..15].copy_from_slice(b"pmix.tool.nocon");
            let mut me = [0u8; 260];
            // SAFETY: `me` is a pmix_proc_t-sized buffer; one valid pmix_info_t is passed.
            let rc = unsafe { init(me.as_mut_ptr(), &mut nocon, 1) };
            (rc == 0).then_some(Lib {
                _lib: lib,
                pack,
                unpack,
                load,
            })
        }

        fn packed(&self, src: *const c_void, n: i32, t: u16) -> Vec<u8> {
            let mut buf = DataBuf::default();
            // SAFETY: `src` points to `n` values of type `t` in OpenPMIx's layout.
            let rc = unsafe { (self.pack)(std::ptr::null(), &mut buf, src, n, t) };
            assert_eq!(rc, 0, "PMIx_Data_pack");
            // SAFETY: after a successful pack, base_ptr holds bytes_used bytes.
            let out =
                unsafe { std::slice::from_raw_parts(buf.base_ptr as *const u8, buf.bytes_used) }
                    .to_vec();
            // SAFETY: the buffer's memory comes from OpenPMIx's malloc.
            unsafe { free(buf.base_ptr as *mut c_void) };
            out
        }

        fn pack_once(&self, src: *const c_void, n: i32, t: u16) {
            let mut buf = DataBuf::default();
            // SAFETY: as in `packed`.
            let rc = unsafe { (self.pack)(std::ptr::null(), &mut buf, src, n, t) };
            debug_assert_eq!(rc, 0);
            // SAFETY: the buffer's memory comes from OpenPMIx's malloc.
            unsafe { free(buf.base_ptr as *mut c_void) };
        }

        /// Load a malloc'd copy of `bytes` and unpack `n` values of type `t` into `dst`;
        /// returns the status and how many values came out.
        fn unpack_once(&self, bytes: &[u8], dst: *mut c_void, n: i32, t: u16) -> (i32, i32) {
            let mut buf = DataBuf::default();
            // SAFETY: a fresh malloc'd block of bytes.len() bytes, handed to the buffer,
            // which owns it from here on and frees it when we free base_ptr below.
            let copy = unsafe { malloc(bytes.len()) } as *mut c_char;
            // SAFETY: `copy` has room for bytes.len() bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), copy as *mut u8, bytes.len()) };
            let mut bo = ByteObject {
                bytes: copy,
                size: bytes.len(),
            };
            let mut count = n;
            // SAFETY: `dst` has room for `n` values of type `t`.
            unsafe {
                (self.load)(&mut buf, &mut bo);
                let rc = (self.unpack)(std::ptr::null(), &mut buf, dst, &mut count, t);
                free(buf.base_ptr as *mut c_void);
                (rc, count)
            }
        }
    }

    pub(super) fn measure_all(lib: &Lib, iters: u32) -> [f64; 4] {
        let (mut procs, mut strings_store) = (Vec::new(), Vec::new());
        let infos: Vec<CInfo> = infos()
            .iter()
            .map(|i| c_info(i, &mut procs, &mut strings_store))
            .collect();
        let owned: Vec<Vec<u8>> = strings()
            .into_iter()
            .map(|s| [s.as_bytes(), &[0]].concat())
            .collect();
        let ptrs: Vec<*const u8> = owned.iter().map(|s| s.as_ptr()).collect();
        let packed_infos = lib.packed(infos.as_ptr().cast(), 16, PMIX_INFO);
        let packed_strings = lib.packed(ptrs.as_ptr().cast(), 64, PMIX_STRING);
        let mut out_infos: Vec<CInfo> = (0..16).map(|_| CInfo::zeroed()).collect();
        let mut out_strings: Vec<*mut c_void> = vec![std::ptr::null_mut(); 64];
        let free_infos = |infos: &mut [CInfo]| {
            for i in infos {
                // Strings and procs are malloc'd by the unpack (types 3 and 22).
                if i.value_type == 3 || i.value_type == 22 {
                    // SAFETY: OpenPMIx allocated these with malloc during unpack.
                    unsafe { free(i.data[0] as *mut c_void) };
                }
            }
        };
        // Both unpacks really decode every value (checked once, outside the timing).
        assert_eq!(
            lib.unpack_once(&packed_infos, out_infos.as_mut_ptr().cast(), 16, PMIX_INFO),
            (0, 16)
        );
        free_infos(&mut out_infos);
        assert_eq!(
            lib.unpack_once(
                &packed_strings,
                out_strings.as_mut_ptr().cast(),
                64,
                PMIX_STRING
            ),
            (0, 64)
        );
        for s in &mut out_strings {
            // SAFETY: each unpacked string was malloc'd by OpenPMIx.
            unsafe { free(*s) };
        }
        [
            measure(iters, || {
                lib.pack_once(infos.as_ptr().cast(), 16, PMIX_INFO)
            }),
            measure(iters, || {
                lib.unpack_once(&packed_infos, out_infos.as_mut_ptr().cast(), 16, PMIX_INFO);
                free_infos(&mut out_infos);
            }),
            measure(iters, || {
                lib.pack_once(ptrs.as_ptr().cast(), 64, PMIX_STRING)
            }),
            measure(iters, || {
                lib.unpack_once(
                    &packed_strings,
                    out_strings.as_mut_ptr().cast(),
                    64,
                    PMIX_STRING,
                );
                for s in &mut out_strings {
                    // SAFETY: each unpacked string was malloc'd by OpenPMIx.
                    unsafe { free(*s) };
                }
            }),
        ]
    }

    /// OpenPMIx's bytes for the same data, to check that both sides do the same work.
    pub(super) fn same_bytes(lib: &Lib) -> bool {
        let (mut procs, mut strings_store) = (Vec::new(), Vec::new());
        let infos_c: Vec<CInfo> = infos()
            .iter()
            .map(|i| c_info(i, &mut procs, &mut strings_store))
            .collect();
        let theirs = lib.packed(infos_c.as_ptr().cast(), 16, PMIX_INFO);
        let mut b = DataBuffer::new();
        b.pack(&infos()).expect("pack");
        theirs == b.bytes()
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let iters = if quick { 2_000 } else { 20_000 };
    let mut rows = ours(iters);
    match openpmix::Lib::open() {
        Some(lib) => {
            assert!(
                openpmix::same_bytes(&lib),
                "OpenPMIx and pmix pack the 16 infos differently"
            );
            for (row, t) in rows.iter_mut().zip(openpmix::measure_all(&lib, iters)) {
                row.openpmix = Some(t);
            }
        }
        None => eprintln!("libpmix.so.2 not found or not usable: OpenPMIx column left empty"),
    }
    println!(
        "{:<20} {:>12} {:>14} {:>10}",
        "codec", "pmix ns/op", "OpenPMIx ns/op", "speed-up"
    );
    for r in &rows {
        let (theirs, ratio) = match r.openpmix {
            Some(t) => (format!("{t:.0}"), format!("{:.1}x", t / r.ours)),
            None => ("-".into(), "-".into()),
        };
        println!(
            "{:<20} {:>12.0} {:>14} {:>10}",
            r.name, r.ours, theirs, ratio
        );
    }
}
