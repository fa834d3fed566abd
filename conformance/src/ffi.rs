//! A `libpmix.so` through its C API, loaded with `libloading`: the client calls a vector's
//! steps use, the server calls a host makes, and the host callbacks (`pmix_server_module_t`)
//! written in Rust. This is the conformance crate's only `unsafe` code; each block names the
//! fact it relies on (OpenPMIx 4.2's `pmix.h`, `pmix_server.h`, and the layouts of
//! `openpmix/ABI.md` §2.4, checked by size assertions when the library is opened).
//!
//! Values cross the boundary through the library's own `PMIx_Data_pack`/`PMIx_Data_unpack`:
//! a Rust value is packed with this project's codec and unpacked by the library into its C
//! structs, and C structs are packed by the library and decoded by the codec. So no C value
//! layout beyond the outer structs is written here, and every crossing also checks the two
//! codecs agree.
//!
//! One library per process: the conformance harness runs each node's server and each rank in
//! a child process of its own (see [`crate::libpmix_target`]).

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use pmix::codec::{BufferType, Codec, DataBuffer};
use pmix::model::{DataType, Info, PData, Proc, Rank, Scope, Status, Value};

use crate::cluster::lock;

// ---- the C structs (ABI.md §2.4) ----

/// `pmix_proc_t`: nspace[256], rank at 256; 260 bytes, align 4.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CProc {
    nspace: [u8; 256],
    rank: u32,
}

/// `pmix_value_t`: type (u16) at 0, a 24-byte union at 8; 32 bytes.
#[repr(C, align(8))]
#[derive(Debug)]
struct CValue {
    vtype: u16,
    _pad: [u8; 6],
    data: [u64; 3],
}

/// `pmix_info_t`: key[512], flags (u32) at 512, value at 520; 552 bytes.
#[repr(C, align(8))]
#[derive(Debug)]
struct CInfo {
    key: [u8; 512],
    flags: u32,
    _pad: u32,
    value: CValue,
}

/// `pmix_pdata_t`: proc at 0, key[512] at 260, value at 776; 808 bytes.
#[repr(C, align(8))]
#[derive(Debug)]
struct CPdata {
    proc: CProc,
    key: [u8; 512],
    _pad: u32,
    value: CValue,
}

/// `pmix_data_buffer_t`: 40 bytes.
#[repr(C)]
#[derive(Debug, Default)]
struct DataBuf {
    base_ptr: usize,
    pack_ptr: usize,
    unpack_ptr: usize,
    bytes_allocated: usize,
    bytes_used: usize,
}

/// `pmix_byte_object_t`: 16 bytes.
#[repr(C)]
#[derive(Debug)]
struct ByteObj {
    bytes: *mut c_char,
    size: usize,
}

fn zeroed_value() -> CValue {
    CValue {
        vtype: 0,
        _pad: [0; 6],
        data: [0; 3],
    }
}

fn zeroed_info() -> CInfo {
    CInfo {
        key: [0; 512],
        flags: 0,
        _pad: 0,
        value: zeroed_value(),
    }
}

fn zeroed_pdata() -> CPdata {
    CPdata {
        proc: CProc {
            nspace: [0; 256],
            rank: 0,
        },
        key: [0; 512],
        _pad: 0,
        value: zeroed_value(),
    }
}

impl CProc {
    pub fn new(p: &Proc) -> CProc {
        let mut c = CProc {
            nspace: [0; 256],
            rank: p.rank.0,
        };
        let ns = p.nspace.as_str().as_bytes();
        let n = ns.len().min(255);
        c.nspace[..n].copy_from_slice(&ns[..n]);
        c
    }

    fn to_proc(self) -> Result<Proc, Status> {
        let end = self.nspace.iter().position(|b| *b == 0).unwrap_or(256);
        let ns = std::str::from_utf8(&self.nspace[..end]).map_err(|_| Status::ERR_BAD_PARAM)?;
        Proc::try_new(ns, Rank(self.rank)).map_err(|_| Status::ERR_BAD_PARAM)
    }
}

/// A key as the C API takes it: NUL-terminated, at most 511 bytes.
fn c_key(key: &str) -> Result<CString, Status> {
    if key.len() > 511 {
        return Err(Status::ERR_BAD_PARAM);
    }
    CString::new(key).map_err(|_| Status::ERR_BAD_PARAM)
}

// ---- the library ----

type PackFn = unsafe extern "C" fn(*const CProc, *mut DataBuf, *const c_void, i32, u16) -> i32;
type UnpackFn = unsafe extern "C" fn(*const CProc, *mut DataBuf, *mut c_void, *mut i32, u16) -> i32;
type LoadFn = unsafe extern "C" fn(*mut DataBuf, *mut ByteObj);
type ValueDestructFn = unsafe extern "C" fn(*mut CValue);
type VersionFn = unsafe extern "C" fn() -> *const c_char;

type InitFn = unsafe extern "C" fn(*mut CProc, *mut CInfo, usize) -> i32;
type FinalizeFn = unsafe extern "C" fn(*const CInfo, usize) -> i32;
type PutFn = unsafe extern "C" fn(u8, *const c_char, *mut CValue) -> i32;
type CommitFn = unsafe extern "C" fn() -> i32;
type FenceFn = unsafe extern "C" fn(*const CProc, usize, *const CInfo, usize) -> i32;
type GetFn =
    unsafe extern "C" fn(*const CProc, *const c_char, *const CInfo, usize, *mut *mut CValue) -> i32;
type ValueCb = unsafe extern "C" fn(i32, *mut CValue, *mut c_void);
type GetNbFn = unsafe extern "C" fn(
    *const CProc,
    *const c_char,
    *const CInfo,
    usize,
    ValueCb,
    *mut c_void,
) -> i32;
type StoreFn = unsafe extern "C" fn(*const CProc, *const c_char, *mut CValue) -> i32;
type PublishFn = unsafe extern "C" fn(*const CInfo, usize) -> i32;
type LookupFn = unsafe extern "C" fn(*mut CPdata, usize, *const CInfo, usize) -> i32;
type UnpublishFn = unsafe extern "C" fn(*mut *mut c_char, *const CInfo, usize) -> i32;

type OpCb = unsafe extern "C" fn(i32, *mut c_void);
type ReleaseCb = unsafe extern "C" fn(*mut c_void);
type ModexCb = unsafe extern "C" fn(i32, *const c_char, usize, *mut c_void, ReleaseCb, *mut c_void);
type LookupCb = unsafe extern "C" fn(i32, *mut CPdata, usize, *mut c_void);
type DmodexResponse = unsafe extern "C" fn(i32, *mut c_char, usize, *mut c_void);

type ServerInitFn = unsafe extern "C" fn(*mut ServerModule, *mut CInfo, usize) -> i32;
type RegisterNspaceFn =
    unsafe extern "C" fn(*const c_char, i32, *mut CInfo, usize, Option<OpCb>, *mut c_void) -> i32;
type RegisterClientFn =
    unsafe extern "C" fn(*const CProc, u32, u32, *mut c_void, Option<OpCb>, *mut c_void) -> i32;
type SetupForkFn = unsafe extern "C" fn(*const CProc, *mut *mut *mut c_char) -> i32;
type DmodexFn = unsafe extern "C" fn(*const CProc, DmodexResponse, *mut c_void) -> i32;

type FenceUp = unsafe extern "C" fn(
    *const CProc,
    usize,
    *const CInfo,
    usize,
    *mut c_char,
    usize,
    ModexCb,
    *mut c_void,
) -> i32;
type DmodexUp =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, ModexCb, *mut c_void) -> i32;
type PublishUp = unsafe extern "C" fn(*const CProc, *const CInfo, usize, OpCb, *mut c_void) -> i32;
type LookupUp = unsafe extern "C" fn(
    *const CProc,
    *mut *mut c_char,
    *const CInfo,
    usize,
    LookupCb,
    *mut c_void,
) -> i32;
type UnpublishUp = unsafe extern "C" fn(
    *const CProc,
    *mut *mut c_char,
    *const CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> i32;

/// `pmix_server_module_t`: 28 function pointers (ABI.md §2.4 gives the order); the ones this
/// host does not provide are NULL, which the library answers with not-supported.
#[repr(C)]
struct ServerModule {
    client_connected: usize,
    client_finalized: usize,
    abort: usize,
    fence_nb: Option<FenceUp>,
    direct_modex: Option<DmodexUp>,
    publish: Option<PublishUp>,
    lookup: Option<LookupUp>,
    unpublish: Option<UnpublishUp>,
    rest: [usize; 20],
}

unsafe extern "C" {
    fn malloc(n: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

const PMIX_SUCCESS: i32 = 0;

/// The loaded library and the entry points the harness uses.
pub struct Lib {
    _lib: libloading::Library,
    pack: PackFn,
    unpack: UnpackFn,
    load: LoadFn,
    value_destruct: ValueDestructFn,
    version: VersionFn,
    init: InitFn,
    finalize: FinalizeFn,
    put: PutFn,
    commit: CommitFn,
    fence: FenceFn,
    get: GetFn,
    get_nb: GetNbFn,
    store_internal: StoreFn,
    publish: PublishFn,
    lookup: LookupFn,
    unpublish: UnpublishFn,
    server_init: ServerInitFn,
    register_nspace: RegisterNspaceFn,
    register_client: RegisterClientFn,
    setup_fork: SetupForkFn,
    dmodex: DmodexFn,
}

impl std::fmt::Debug for Lib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lib")
            .field("buffer_type", &buffer_type())
            .finish_non_exhaustive()
    }
}

/// The process's library, once opened.
static LIB: OnceLock<Lib> = OnceLock::new();

/// The library this process opened with [`open`].
pub fn lib() -> Result<&'static Lib, String> {
    LIB.get()
        .ok_or_else(|| "the library is not open".to_owned())
}

/// Open the library at `path` (a file name is resolved by the dynamic loader) for this process.
pub fn open(path: &str) -> Result<&'static Lib, String> {
    if let Some(l) = LIB.get() {
        return Ok(l);
    }
    assert_layouts();
    // SAFETY: loading a PMIx library runs its constructors, which only initialise globals.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("{path}: {e}"))?;
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol has the C signature of the field it is stored in, as declared
            // in OpenPMIx 4.2's pmix.h / pmix_server.h (the standard's signatures).
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .map_err(|e| format!("{path}: {}: {e}", $name))?
        };
    }
    let l = Lib {
        pack: sym!("PMIx_Data_pack"),
        unpack: sym!("PMIx_Data_unpack"),
        load: sym!("PMIx_Data_load"),
        value_destruct: sym!("PMIx_Value_destruct"),
        version: sym!("PMIx_Get_version"),
        init: sym!("PMIx_Init"),
        finalize: sym!("PMIx_Finalize"),
        put: sym!("PMIx_Put"),
        commit: sym!("PMIx_Commit"),
        fence: sym!("PMIx_Fence"),
        get: sym!("PMIx_Get"),
        get_nb: sym!("PMIx_Get_nb"),
        store_internal: sym!("PMIx_Store_internal"),
        publish: sym!("PMIx_Publish"),
        lookup: sym!("PMIx_Lookup"),
        unpublish: sym!("PMIx_Unpublish"),
        server_init: sym!("PMIx_server_init"),
        register_nspace: sym!("PMIx_server_register_nspace"),
        register_client: sym!("PMIx_server_register_client"),
        setup_fork: sym!("PMIx_server_setup_fork"),
        dmodex: sym!("PMIx_server_dmodex_request"),
        _lib: lib,
    };
    Ok(LIB.get_or_init(|| l))
}

fn assert_layouts() {
    assert_eq!(std::mem::size_of::<CProc>(), 260, "pmix_proc_t");
    assert_eq!(std::mem::size_of::<CValue>(), 32, "pmix_value_t");
    assert_eq!(std::mem::size_of::<CInfo>(), 552, "pmix_info_t");
    assert_eq!(std::mem::size_of::<CPdata>(), 808, "pmix_pdata_t");
    assert_eq!(
        std::mem::offset_of!(CPdata, value),
        776,
        "pmix_pdata_t.value"
    );
    assert_eq!(
        std::mem::size_of::<ServerModule>(),
        224,
        "pmix_server_module_t"
    );
}

/// Turn a C status into a Rust result.
fn check(rc: i32) -> Result<(), Status> {
    if rc == PMIX_SUCCESS {
        Ok(())
    } else {
        Err(Status(rc))
    }
}

impl Lib {
    /// `PMIx_Get_version()`.
    pub fn version(&self) -> String {
        // SAFETY: PMIx_Get_version returns a pointer to a static NUL-terminated string.
        let p = unsafe { (self.version)() };
        if p.is_null() {
            return String::new();
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// Learn the buffer type `PMIx_Data_pack` uses in this process (after init): the bytes
    /// it packs for one `PMIX_STRING` are compared with this codec's in each buffer type.
    fn probe_buffer_type(&self) -> BufferType {
        let text = c"probe";
        let ptr = text.as_ptr();
        let Ok(theirs) = self.packed((&raw const ptr).cast(), 1, DataType::STRING) else {
            return BufferType::default();
        };
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            let mut b = DataBuffer::with_type(bt);
            if b.pack(&["probe".to_owned()]).is_ok() && b.unload() == theirs {
                return bt;
            }
        }
        BufferType::default()
    }

    /// The bytes of `PMIx_Data_pack(NULL, buf, src, n, t)`.
    fn packed(&self, src: *const c_void, n: i32, t: DataType) -> Result<Vec<u8>, Status> {
        let mut buf = DataBuf::default();
        // SAFETY: `src` points to `n` values of type `t` in the library's layout.
        let rc = unsafe { (self.pack)(std::ptr::null(), &mut buf, src, n, t.0) };
        let out = if buf.base_ptr == 0 {
            Vec::new()
        } else {
            // SAFETY: base_ptr holds bytes_used bytes written by the pack.
            unsafe { std::slice::from_raw_parts(buf.base_ptr as *const u8, buf.bytes_used) }
                .to_vec()
        };
        // SAFETY: the buffer's memory came from the library's malloc (or is NULL).
        unsafe { free(buf.base_ptr as *mut c_void) };
        check(rc).map(|()| out)
    }

    /// `PMIx_Data_unpack` of `n` values of type `t` from `bytes` into `dst`.
    fn unpack_into(&self, bytes: &[u8], dst: *mut c_void, n: usize, t: DataType) -> Status {
        let Ok(mut count) = i32::try_from(n) else {
            return Status::ERR_BAD_PARAM;
        };
        if bytes.is_empty() {
            return Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER;
        }
        // SAFETY: a fresh malloc'd block of bytes.len() bytes, owned by the buffer from here on
        // (freed through base_ptr below).
        let copy = unsafe { malloc(bytes.len()) }.cast::<c_char>();
        if copy.is_null() {
            return Status::ERR_NOMEM;
        }
        // SAFETY: `copy` has room for bytes.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), copy.cast::<u8>(), bytes.len()) };
        let mut bo = ByteObj {
            bytes: copy,
            size: bytes.len(),
        };
        let mut buf = DataBuf::default();
        // SAFETY: `dst` has room for `n` values of type `t`; the buffer owns `copy`.
        unsafe {
            (self.load)(&mut buf, &mut bo);
            let rc = (self.unpack)(std::ptr::null(), &mut buf, dst, &mut count, t.0);
            free(buf.base_ptr as *mut c_void);
            if rc != PMIX_SUCCESS && std::env::var_os("PMIX_CONFORMANCE_DEBUG").is_some() {
                eprintln!(
                    "PMIx_Data_unpack of {n} x type {} ({:?}) failed: {rc}: {bytes:?}",
                    t.0,
                    buffer_type()
                );
            }
            Status(rc)
        }
    }

    fn encode<T: Codec>(&self, values: &[T]) -> Result<Vec<u8>, Status> {
        let mut b = DataBuffer::with_type(buffer_type());
        b.pack(values).map_err(|e| e.status())?;
        Ok(b.unload())
    }

    fn decode<T: Codec>(&self, bytes: Vec<u8>, n: usize) -> Result<Vec<T>, Status> {
        let debug = std::env::var_os("PMIX_CONFORMANCE_DEBUG").is_some();
        let copy = if debug { bytes.clone() } else { Vec::new() };
        let mut b = DataBuffer::load(bytes, buffer_type());
        b.unpack(n).map_err(|e| {
            if debug {
                eprintln!(
                    "decoding {n} values ({:?}) failed: {e}: {copy:?}",
                    buffer_type()
                );
            }
            e.status()
        })
    }

    fn infos_to_c(&'static self, infos: &[Info]) -> Result<CInfos, Status> {
        let mut out = CInfos {
            lib: self,
            v: (0..infos.len()).map(|_| zeroed_info()).collect(),
        };
        if !infos.is_empty() {
            let bytes = self.encode(infos)?;
            let rc = self.unpack_into(
                &bytes,
                out.v.as_mut_ptr().cast(),
                infos.len(),
                DataType::INFO,
            );
            if rc != Status::SUCCESS {
                // Nothing was handed over; do not destruct half-filled values.
                out.v.iter_mut().for_each(|i| i.value.vtype = 0);
                return Err(rc);
            }
        }
        Ok(out)
    }

    fn value_to_c(&'static self, v: &Value) -> Result<CValueBox, Status> {
        let mut out = CValueBox {
            lib: self,
            v: Box::new(zeroed_value()),
        };
        let bytes = self.encode(std::slice::from_ref(v))?;
        let rc = self.unpack_into(&bytes, (&raw mut *out.v).cast(), 1, DataType::VALUE);
        if rc != Status::SUCCESS {
            out.v.vtype = 0;
            return Err(rc);
        }
        Ok(out)
    }

    /// A C value, packed by the library and decoded by this project's codec.
    fn value_from_c(&self, v: *const CValue) -> Result<Value, Status> {
        let bytes = self.packed(v.cast(), 1, DataType::VALUE)?;
        self.decode::<Value>(bytes, 1)?
            .pop()
            .ok_or(Status::ERR_UNPACK_FAILURE)
    }

    fn infos_from_c(&self, p: *const CInfo, n: usize) -> Result<Vec<Info>, Status> {
        if p.is_null() || n == 0 {
            return Ok(Vec::new());
        }
        let count = i32::try_from(n).map_err(|_| Status::ERR_BAD_PARAM)?;
        let bytes = self.packed(p.cast(), count, DataType::INFO)?;
        self.decode(bytes, n)
    }

    fn pdata_from_c(&self, p: *const CPdata, n: usize) -> Result<Vec<PData>, Status> {
        if p.is_null() || n == 0 {
            return Ok(Vec::new());
        }
        let count = i32::try_from(n).map_err(|_| Status::ERR_BAD_PARAM)?;
        let bytes = self.packed(p.cast(), count, DataType::PDATA)?;
        self.decode(bytes, n)
    }
}

/// Infos in the library's layout, destructed through the library when dropped.
struct CInfos {
    lib: &'static Lib,
    v: Vec<CInfo>,
}

impl CInfos {
    fn ptr(&self) -> *const CInfo {
        if self.v.is_empty() {
            std::ptr::null()
        } else {
            self.v.as_ptr()
        }
    }
}

impl Drop for CInfos {
    fn drop(&mut self) {
        for i in &mut self.v {
            // SAFETY: the value was filled by the library's unpack (or is PMIX_UNDEF), so its
            // own destructor releases what it allocated.
            unsafe { (self.lib.value_destruct)(&mut i.value) };
        }
    }
}

/// A value in the library's layout, destructed through the library when dropped.
struct CValueBox {
    lib: &'static Lib,
    v: Box<CValue>,
}

impl Drop for CValueBox {
    fn drop(&mut self) {
        // SAFETY: as for `CInfos`.
        unsafe { (self.lib.value_destruct)(&mut *self.v) };
    }
}

// ---- client ----

/// `PMIx_Init` from the environment; returns the process's identifier.
pub fn client_init() -> Result<Proc, Status> {
    let l = lib().map_err(|_| Status::ERR_INIT)?;
    let mut me = CProc {
        nspace: [0; 256],
        rank: 0,
    };
    // SAFETY: `me` is a pmix_proc_t; no infos.
    check(unsafe { (l.init)(&mut me, std::ptr::null_mut(), 0) })?;
    set_buffer_type(l.probe_buffer_type());
    me.to_proc()
}

/// The buffer type `PMIx_Data_pack` uses in this process, learnt right after init.
fn set_buffer_type(bt: BufferType) {
    let _ = BUFFER_TYPE.set(bt);
}

static BUFFER_TYPE: OnceLock<BufferType> = OnceLock::new();

fn buffer_type() -> BufferType {
    BUFFER_TYPE.get().copied().unwrap_or_default()
}

/// The library, once initialised (packing needs an initialised library).
fn ready() -> Result<&'static Lib, Status> {
    if BUFFER_TYPE.get().is_none() {
        return Err(Status::ERR_INIT);
    }
    lib().map_err(|_| Status::ERR_INIT)
}

pub fn finalize() -> Status {
    match ready() {
        // SAFETY: no infos.
        Ok(l) => Status(unsafe { (l.finalize)(std::ptr::null(), 0) }),
        Err(s) => s,
    }
}

pub fn put(scope: Scope, key: &str, value: &Value) -> Result<(), Status> {
    let l = ready()?;
    let k = c_key(key)?;
    let mut v = l.value_to_c(value)?;
    // SAFETY: a NUL-terminated key and a valid value; the library copies both.
    check(unsafe { (l.put)(scope.0, k.as_ptr(), &mut *v.v) })
}

pub fn store_internal(target: &Proc, key: &str, value: &Value) -> Result<(), Status> {
    let l = ready()?;
    let k = c_key(key)?;
    let p = CProc::new(target);
    let mut v = l.value_to_c(value)?;
    // SAFETY: as for put.
    check(unsafe { (l.store_internal)(&p, k.as_ptr(), &mut *v.v) })
}

pub fn commit() -> Result<(), Status> {
    let l = ready()?;
    // SAFETY: no arguments.
    check(unsafe { (l.commit)() })
}

pub fn fence(procs: &[Proc], info: &[Info]) -> Result<(), Status> {
    let l = ready()?;
    let cp: Vec<CProc> = procs.iter().map(CProc::new).collect();
    let ci = l.infos_to_c(info)?;
    let pp = if cp.is_empty() {
        std::ptr::null()
    } else {
        cp.as_ptr()
    };
    // SAFETY: arrays of the given lengths (or NULL when empty).
    check(unsafe { (l.fence)(pp, cp.len(), ci.ptr(), ci.v.len()) })
}

pub fn get(target: Option<&Proc>, key: &str, info: &[Info]) -> Result<Value, Status> {
    let l = ready()?;
    let k = c_key(key)?;
    let cp = target.map(CProc::new);
    let pp = cp.as_ref().map_or(std::ptr::null(), |p| p as *const CProc);
    let ci = l.infos_to_c(info)?;
    let mut out: *mut CValue = std::ptr::null_mut();
    // SAFETY: valid proc (or NULL), key, infos; `out` receives a malloc'd value.
    let rc = unsafe { (l.get)(pp, k.as_ptr(), ci.ptr(), ci.v.len(), &mut out) };
    check(rc)?;
    if out.is_null() {
        return Err(Status::ERR_NOT_FOUND);
    }
    let value = l.value_from_c(out);
    // SAFETY: PMIX_VALUE_RELEASE: destruct, then free the malloc'd struct.
    unsafe {
        (l.value_destruct)(out);
        free(out.cast());
    }
    value
}

/// The result slot of a non-blocking get.
pub type GetSlot = Arc<(Mutex<Option<Result<Value, Status>>>, Condvar)>;

/// What a non-blocking get hands the library: the result slot, and the arguments, which must
/// stay valid until the callback runs (the library may read them after `PMIx_Get_nb` returns;
/// OpenPMIx 4.2 does for a `PMIX_RANK_UNDEF` request).
struct GetNb {
    slot: GetSlot,
    _key: CString,
    _proc: Option<Box<CProc>>,
    _info: CInfos,
}

unsafe extern "C" fn get_nb_done(status: i32, kv: *mut CValue, cbdata: *mut c_void) {
    // SAFETY: cbdata is the box leaked by get_nb, reclaimed exactly once here.
    let call: Box<GetNb> = unsafe { Box::from_raw(cbdata.cast::<GetNb>()) };
    let result = if status != PMIX_SUCCESS {
        Err(Status(status))
    } else if kv.is_null() {
        Err(Status::ERR_NOT_FOUND)
    } else {
        ready().and_then(|l| l.value_from_c(kv))
    };
    *lock(&call.slot.0) = Some(result);
    call.slot.1.notify_all();
}

/// `PMIx_Get_nb`: the result arrives in the returned slot.
pub fn get_nb(target: Option<&Proc>, key: &str, info: &[Info]) -> Result<GetSlot, Status> {
    let l = ready()?;
    let slot: GetSlot = Arc::new((Mutex::new(None), Condvar::new()));
    let call = Box::new(GetNb {
        slot: slot.clone(),
        _key: c_key(key)?,
        _proc: target.map(|p| Box::new(CProc::new(p))),
        _info: l.infos_to_c(info)?,
    });
    let pp = call
        ._proc
        .as_deref()
        .map_or(std::ptr::null(), |p| p as *const CProc);
    let (kp, ip, n) = (call._key.as_ptr(), call._info.ptr(), call._info.v.len());
    let raw = Box::into_raw(call).cast::<c_void>();
    // SAFETY: the arguments live in the box, which the callback owns and frees.
    let rc = unsafe { (l.get_nb)(pp, kp, ip, n, get_nb_done, raw) };
    if rc != PMIX_SUCCESS {
        // SAFETY: the callback will not run: reclaim the box it would have freed.
        drop(unsafe { Box::from_raw(raw.cast::<GetNb>()) });
        return Err(Status(rc));
    }
    Ok(slot)
}

/// Wait for a non-blocking get's result.
pub fn wait(slot: &GetSlot) -> Result<Value, Status> {
    let mut g = lock(&slot.0);
    loop {
        if let Some(r) = g.take() {
            return r;
        }
        g = slot
            .1
            .wait(g)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}

pub fn publish(info: &[Info]) -> Result<(), Status> {
    let l = ready()?;
    let ci = l.infos_to_c(info)?;
    // SAFETY: an info array of its length.
    check(unsafe { (l.publish)(ci.ptr(), ci.v.len()) })
}

pub fn lookup(keys: &[String], info: &[Info]) -> Result<Vec<PData>, Status> {
    let l = ready()?;
    let mut pd: Vec<CPdata> = keys.iter().map(|_| zeroed_pdata()).collect();
    for (p, k) in pd.iter_mut().zip(keys) {
        let k = c_key(k)?;
        let b = k.as_bytes();
        p.key[..b.len()].copy_from_slice(b);
    }
    let ci = l.infos_to_c(info)?;
    // SAFETY: a pdata array with its keys set; infos of their length.
    let rc = unsafe { (l.lookup)(pd.as_mut_ptr(), pd.len(), ci.ptr(), ci.v.len()) };
    // Keep the entries the library filled in (a value type other than PMIX_UNDEF).
    let found: Vec<&CPdata> = pd.iter().filter(|p| p.value.vtype != 0).collect();
    let mut out = Vec::new();
    for p in &found {
        out.extend(l.pdata_from_c(&raw const **p, 1)?);
    }
    for p in &mut pd {
        // SAFETY: values the library filled (or PMIX_UNDEF ones) are released by it.
        unsafe { (l.value_destruct)(&mut p.value) };
    }
    check(rc).map(|()| out)
}

pub fn unpublish(keys: &[String], info: &[Info]) -> Result<(), Status> {
    let l = ready()?;
    let owned: Vec<CString> = keys.iter().map(|k| c_key(k)).collect::<Result<_, _>>()?;
    let mut argv: Vec<*mut c_char> = owned.iter().map(|k| k.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let ci = l.infos_to_c(info)?;
    let keys_ptr = if keys.is_empty() {
        std::ptr::null_mut()
    } else {
        argv.as_mut_ptr()
    };
    // SAFETY: a NULL-terminated array of NUL-terminated keys (or NULL), infos of their length.
    check(unsafe { (l.unpublish)(keys_ptr, ci.ptr(), ci.v.len()) })
}

// ---- server ----

/// What the library asks of its host.
#[derive(Debug)]
pub enum Upcall {
    Fence {
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    },
    DirectModex {
        proc: Proc,
        info: Vec<Info>,
    },
    Publish {
        proc: Proc,
        info: Vec<Info>,
    },
    Lookup {
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    Unpublish {
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    },
}

/// The host's answer to an upcall.
#[derive(Debug)]
pub enum Answer {
    Status(Status),
    Data(Result<Vec<u8>, Status>),
    Found(Result<Vec<PData>, Status>),
}

/// How to tell the library an upcall is done: its callback and cookie.
#[derive(Debug)]
pub struct Completion {
    kind: CompletionKind,
    cbdata: usize,
}

#[derive(Debug)]
enum CompletionKind {
    Op(OpCb),
    Modex(ModexCb),
    Lookup(LookupCb),
}

unsafe extern "C" fn release_bytes(cbdata: *mut c_void) {
    // SAFETY: cbdata is the Box<Vec<u8>> leaked by `Completion::finish`, released once.
    drop(unsafe { Box::from_raw(cbdata.cast::<Vec<u8>>()) });
}

impl Completion {
    /// Call the library back with the host's answer (from any thread: the library
    /// thread-shifts its callbacks).
    pub fn finish(self, answer: Answer) {
        let cbdata = self.cbdata as *mut c_void;
        match (self.kind, answer) {
            (CompletionKind::Op(cb), a) => {
                let s = match a {
                    Answer::Status(s) => s,
                    Answer::Data(r) => r.err().unwrap_or(Status::SUCCESS),
                    Answer::Found(r) => r.err().unwrap_or(Status::SUCCESS),
                };
                // SAFETY: the library's op callback with the cookie it gave.
                unsafe { cb(s.0, cbdata) };
            }
            (CompletionKind::Modex(cb), a) => {
                let r = match a {
                    Answer::Data(r) => r,
                    Answer::Status(s) | Answer::Found(Err(s)) => Err(s),
                    Answer::Found(Ok(_)) => Err(Status::ERR_BAD_PARAM),
                };
                match r {
                    Ok(bytes) => {
                        let data = Box::new(bytes);
                        let (ptr, len) = (data.as_ptr().cast::<c_char>(), data.len());
                        let keep = Box::into_raw(data).cast::<c_void>();
                        // SAFETY: `ptr` stays valid until the library calls release_bytes.
                        unsafe { cb(PMIX_SUCCESS, ptr, len, cbdata, release_bytes, keep) };
                    }
                    Err(s) => {
                        let keep = Box::into_raw(Box::new(Vec::<u8>::new())).cast::<c_void>();
                        // SAFETY: no data; the release function frees the empty box.
                        unsafe { cb(s.0, std::ptr::null(), 0, cbdata, release_bytes, keep) };
                    }
                }
            }
            (CompletionKind::Lookup(cb), a) => {
                let r = match a {
                    Answer::Found(r) => r,
                    Answer::Status(s) | Answer::Data(Err(s)) => Err(s),
                    Answer::Data(Ok(_)) => Err(Status::ERR_BAD_PARAM),
                };
                let converted = r.and_then(|found| pdata_to_c(&found));
                match converted {
                    Ok(mut pd) => {
                        // SAFETY: the library copies the array during the callback.
                        unsafe { cb(PMIX_SUCCESS, pd.v.as_mut_ptr(), pd.v.len(), cbdata) };
                    }
                    // SAFETY: no data with a failure.
                    Err(s) => unsafe { cb(s.0, std::ptr::null_mut(), 0, cbdata) },
                }
            }
        }
    }
}

struct CPdatas {
    lib: &'static Lib,
    v: Vec<CPdata>,
}

impl Drop for CPdatas {
    fn drop(&mut self) {
        for p in &mut self.v {
            // SAFETY: as for `CInfos`.
            unsafe { (self.lib.value_destruct)(&mut p.value) };
        }
    }
}

fn pdata_to_c(found: &[PData]) -> Result<CPdatas, Status> {
    let l = ready()?;
    let mut out = CPdatas {
        lib: l,
        v: found.iter().map(|_| zeroed_pdata()).collect(),
    };
    if !found.is_empty() {
        let bytes = l.encode(found)?;
        let rc = l.unpack_into(
            &bytes,
            out.v.as_mut_ptr().cast(),
            found.len(),
            DataType::PDATA,
        );
        if rc != Status::SUCCESS {
            out.v.iter_mut().for_each(|p| p.value.vtype = 0);
            return Err(rc);
        }
    }
    Ok(out)
}

/// The host: receives every upcall with the completion to call when done.
pub type HostFn = Box<dyn Fn(Upcall, Completion) + Send + Sync>;

static HOST: OnceLock<HostFn> = OnceLock::new();

fn up(upcall: Result<Upcall, Status>, completion: Completion) -> i32 {
    match (upcall, HOST.get()) {
        (Ok(u), Some(host)) => {
            host(u, completion);
            PMIX_SUCCESS
        }
        (Err(s), _) => s.0,
        (_, None) => Status::ERR_NOT_SUPPORTED.0,
    }
}

fn procs_from_c(p: *const CProc, n: usize) -> Result<Vec<Proc>, Status> {
    if p.is_null() || n == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the library passes an array of `n` procs.
    let s = unsafe { std::slice::from_raw_parts(p, n) };
    s.iter().map(|c| c.to_proc()).collect()
}

fn keys_from_c(keys: *mut *mut c_char) -> Vec<String> {
    let mut out = Vec::new();
    if keys.is_null() {
        return out;
    }
    for i in 0.. {
        // SAFETY: a NULL-terminated argv array from the library.
        let k = unsafe { *keys.add(i) };
        if k.is_null() {
            break;
        }
        // SAFETY: each entry is a NUL-terminated string.
        out.push(unsafe { CStr::from_ptr(k) }.to_string_lossy().into_owned());
    }
    out
}

fn infos_in(info: *const CInfo, n: usize) -> Result<Vec<Info>, Status> {
    ready()?.infos_from_c(info, n)
}

unsafe extern "C" fn up_fence(
    procs: *const CProc,
    nprocs: usize,
    info: *const CInfo,
    ninfo: usize,
    data: *mut c_char,
    ndata: usize,
    cbfunc: ModexCb,
    cbdata: *mut c_void,
) -> i32 {
    let bytes = if data.is_null() || ndata == 0 {
        Vec::new()
    } else {
        // SAFETY: the library passes `ndata` bytes at `data`.
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), ndata) }.to_vec()
    };
    let upcall = (|| {
        Ok(Upcall::Fence {
            procs: procs_from_c(procs, nprocs)?,
            info: infos_in(info, ninfo)?,
            data: bytes,
        })
    })();
    up(
        upcall,
        Completion {
            kind: CompletionKind::Modex(cbfunc),
            cbdata: cbdata as usize,
        },
    )
}

unsafe extern "C" fn up_dmodex(
    proc: *const CProc,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: ModexCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(Upcall::DirectModex {
            proc: procs_from_c(proc, 1)?.pop().ok_or(Status::ERR_BAD_PARAM)?,
            info: infos_in(info, ninfo)?,
        })
    })();
    up(
        upcall,
        Completion {
            kind: CompletionKind::Modex(cbfunc),
            cbdata: cbdata as usize,
        },
    )
}

unsafe extern "C" fn up_publish(
    proc: *const CProc,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(Upcall::Publish {
            proc: procs_from_c(proc, 1)?.pop().ok_or(Status::ERR_BAD_PARAM)?,
            info: infos_in(info, ninfo)?,
        })
    })();
    up(
        upcall,
        Completion {
            kind: CompletionKind::Op(cbfunc),
            cbdata: cbdata as usize,
        },
    )
}

unsafe extern "C" fn up_lookup(
    proc: *const CProc,
    keys: *mut *mut c_char,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: LookupCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(Upcall::Lookup {
            proc: procs_from_c(proc, 1)?.pop().ok_or(Status::ERR_BAD_PARAM)?,
            keys: keys_from_c(keys),
            info: infos_in(info, ninfo)?,
        })
    })();
    up(
        upcall,
        Completion {
            kind: CompletionKind::Lookup(cbfunc),
            cbdata: cbdata as usize,
        },
    )
}

unsafe extern "C" fn up_unpublish(
    proc: *const CProc,
    keys: *mut *mut c_char,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(Upcall::Unpublish {
            proc: procs_from_c(proc, 1)?.pop().ok_or(Status::ERR_BAD_PARAM)?,
            keys: keys_from_c(keys),
            info: infos_in(info, ninfo)?,
        })
    })();
    up(
        upcall,
        Completion {
            kind: CompletionKind::Op(cbfunc),
            cbdata: cbdata as usize,
        },
    )
}

/// A latch for the library's completion callbacks during setup.
type Latch = (Mutex<Option<i32>>, Condvar);

unsafe extern "C" fn latch_release(status: i32, cbdata: *mut c_void) {
    // SAFETY: cbdata is the latch the caller keeps alive until this runs.
    let latch = unsafe { &*cbdata.cast_const().cast::<Latch>() };
    *lock(&latch.0) = Some(status);
    latch.1.notify_all();
}

fn wait_latch(latch: &Latch) -> i32 {
    let mut g = lock(&latch.0);
    loop {
        if let Some(s) = *g {
            return s;
        }
        g = latch
            .1
            .wait(g)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}

/// Which upcalls the host provides: the others are NULL in the module, which is how a C host
/// says it does not support them.
#[derive(Clone, Copy, Debug)]
pub struct HostCaps {
    pub fence: bool,
    pub direct_modex: bool,
    pub publish: bool,
}

/// `PMIx_server_init` with this host's callbacks; `host` receives every upcall.
pub fn server_init(info: &[Info], caps: HostCaps, host: HostFn) -> Result<(), Status> {
    let l = lib().map_err(|_| Status::ERR_INIT)?;
    let _ = HOST.set(host);
    let mut module = ServerModule {
        client_connected: 0,
        client_finalized: 0,
        abort: 0,
        fence_nb: caps.fence.then_some(up_fence as FenceUp),
        direct_modex: caps.direct_modex.then_some(up_dmodex as DmodexUp),
        publish: caps.publish.then_some(up_publish as PublishUp),
        lookup: caps.publish.then_some(up_lookup as LookupUp),
        unpublish: caps.publish.then_some(up_unpublish as UnpublishUp),
        rest: [0; 20],
    };
    // Packing needs an initialised library, so these infos (strings only) are built by hand:
    // a `PMIX_STRING` value holds its `char *` at the start of the union.
    let strings: Vec<(CString, CString)> = info
        .iter()
        .filter_map(|i| {
            Some((
                c_key(i.key.as_str()).ok()?,
                CString::new(i.value.as_str()?).ok()?,
            ))
        })
        .collect();
    if strings.len() != info.len() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let mut ci: Vec<CInfo> = strings
        .iter()
        .map(|(k, v)| {
            let mut c = zeroed_info();
            c.key[..k.as_bytes().len()].copy_from_slice(k.as_bytes());
            c.value.vtype = DataType::STRING.0;
            c.value.data[0] = v.as_ptr() as u64;
            c
        })
        .collect();
    // SAFETY: the module and the infos (whose strings `strings` owns) live for the call; the
    // library copies what it keeps. These infos are never destructed by the library.
    let rc = unsafe { (l.server_init)(&mut module, ci.as_mut_ptr(), ci.len()) };
    check(rc)?;
    set_buffer_type(l.probe_buffer_type());
    Ok(())
}

pub fn register_nspace(nspace: &str, nlocal: u32, info: &[Info]) -> Result<(), Status> {
    let l = ready()?;
    let ns = CString::new(nspace).map_err(|_| Status::ERR_BAD_PARAM)?;
    let ci = l.infos_to_c(info)?;
    let latch: Latch = (Mutex::new(None), Condvar::new());
    let n = i32::try_from(nlocal).map_err(|_| Status::ERR_BAD_PARAM)?;
    // SAFETY: the latch outlives the callback (we wait for it below); infos are copied.
    let rc = unsafe {
        (l.register_nspace)(
            ns.as_ptr(),
            n,
            ci.v.as_ptr().cast_mut(),
            ci.v.len(),
            Some(latch_release),
            (&raw const latch).cast_mut().cast(),
        )
    };
    if rc != PMIX_SUCCESS {
        return Err(Status(rc));
    }
    check(wait_latch(&latch))
}

pub fn register_client(proc: &Proc, uid: u32, gid: u32) -> Result<(), Status> {
    let l = ready()?;
    let p = CProc::new(proc);
    let latch: Latch = (Mutex::new(None), Condvar::new());
    // SAFETY: as for register_nspace.
    let rc = unsafe {
        (l.register_client)(
            &p,
            uid,
            gid,
            std::ptr::null_mut(),
            Some(latch_release),
            (&raw const latch).cast_mut().cast(),
        )
    };
    if rc != PMIX_SUCCESS {
        return Err(Status(rc));
    }
    check(wait_latch(&latch))
}

/// `PMIx_server_setup_fork`: the variables a client process needs.
pub fn setup_fork(proc: &Proc) -> Result<BTreeMap<String, String>, Status> {
    let l = ready()?;
    let p = CProc::new(proc);
    let mut env: *mut *mut c_char = std::ptr::null_mut();
    // SAFETY: `env` is an argv-style array the library grows with malloc'd strings.
    check(unsafe { (l.setup_fork)(&p, &mut env) })?;
    let mut out = BTreeMap::new();
    if !env.is_null() {
        for i in 0.. {
            // SAFETY: NULL-terminated array of malloc'd NUL-terminated strings.
            let s = unsafe { *env.add(i) };
            if s.is_null() {
                break;
            }
            // SAFETY: as above.
            let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
            if let Some((k, v)) = text.split_once('=') {
                out.insert(k.to_owned(), v.to_owned());
            }
            // SAFETY: each string was malloc'd by the library (pmix_argv_append).
            unsafe { free(s.cast()) };
        }
        // SAFETY: the array itself was malloc'd too.
        unsafe { free(env.cast()) };
    }
    Ok(out)
}

type DmodexSlot = (Mutex<Option<Result<Vec<u8>, Status>>>, Condvar);

unsafe extern "C" fn dmodex_done(status: i32, data: *mut c_char, size: usize, cbdata: *mut c_void) {
    // SAFETY: cbdata is the slot `dmodex_request` keeps alive until this runs.
    let slot = unsafe { &*cbdata.cast_const().cast::<DmodexSlot>() };
    let r = if status != PMIX_SUCCESS {
        Err(Status(status))
    } else if data.is_null() || size == 0 {
        Ok(Vec::new())
    } else {
        // SAFETY: the library passes `size` bytes, valid during the callback.
        Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) }.to_vec())
    };
    *lock(&slot.0) = Some(r);
    slot.1.notify_all();
}

/// `PMIx_server_dmodex_request`, waiting for the answer.
pub fn dmodex_request(proc: &Proc) -> Result<Vec<u8>, Status> {
    let l = ready()?;
    let p = CProc::new(proc);
    let slot: Arc<DmodexSlot> = Arc::new((Mutex::new(None), Condvar::new()));
    // SAFETY: the slot outlives the callback: we wait for it below, and keep the Arc.
    let rc = unsafe { (l.dmodex)(&p, dmodex_done, Arc::as_ptr(&slot).cast_mut().cast()) };
    if rc != PMIX_SUCCESS {
        return Err(Status(rc));
    }
    let mut g = lock(&slot.0);
    loop {
        if let Some(r) = g.take() {
            return r;
        }
        g = slot
            .1
            .wait(g)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}
