//! A `libpmix.so` through its C API, loaded with `libloading`: the client calls a vector's
//! steps use, the server calls a host makes, and the host callbacks, written in Rust, that
//! fill its `pmix_server_module_t` (`pmix-ctypes`' `CServerModule`, like every C struct
//! here). This is the conformance crate's only `unsafe` code; each block names the fact it
//! relies on (OpenPMIx 4.2's `pmix.h`, `pmix_server.h`, and the layouts of `openpmix/ABI.md`
//! §2.4: the structs of `pmix-ctypes`, which asserts them at compile time).
//!
//! Values cross the boundary through the library's own `PMIx_Data_pack`/`PMIx_Data_unpack`:
//! a Rust value is packed with this project's codec and unpacked by the library into its C
//! structs, and C structs are packed by the library and decoded by the codec. So no C value
//! layout beyond the outer structs is written here, and every crossing also checks the two
//! codecs agree.
//!
//! One library per process: the conformance harness runs each node's server and each rank in
//! a child process of its own (see [`crate::libpmix_target`]).
//!
//! - this file: the C structs (`pmix-ctypes`') to and from the model's, opening the library,
//!   moving values across through its codec;
//! - `client`: the data-access calls a vector's steps make;
//! - `api`: the client calls of the other chapters;
//! - `server`: the server calls a host makes, and the host callbacks.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use pmix::codec::{BufferType, Codec, DataBuffer};
use pmix::model::{App, DataType, Info, PData, Proc, Rank, Scope, Status, Value};
// The C structs are `pmix-ctypes`': the one definition, which `libpmix.so.2` is built on too.
// `CSourced` is `pmix_topology_t` and `pmix_cpuset_t`. `CServerModule` is
// `pmix_server_module_t`, declared there with the types of its slots: `upcalls.rs` fills it
// with this harness's functions. The C callback types (`OpCb`, `InfoCb`, `NotificationFn`,
// …) are declared there too, once for the library, the harness and the upcalls.
use pmix_ctypes::{
    CApp, CByteObject, CDataArray, CDataBuffer, CDeviceDistance, CFabric, CInfo, CPdata, CProc,
    CQuery, CServerModule, CSourced, CValue, CredentialCb, DeviceDistCb, DmodexResponseFn,
    EventNotificationCb, HdlrRegCb, InfoCb, IofCb, LookupCb, ModexCb, NotificationFn, OpCb,
    ReleaseCb, SetupApplicationCb, SpawnCb, ValidationCb, ValueCb,
};

use crate::step::lock;

mod api;
mod client;
mod server;
mod upcalls;

pub use api::{notify_for_host, run_api, run_server, run_tool};
pub use client::*;
pub use server::*;
pub use upcalls::*;

// ---- the C structs (ABI.md §2.4) ----

/// The `pmix_proc_t` of `p`: its namespace cut to 255 bytes, and its rank.
fn c_proc(p: &Proc) -> CProc {
    let mut c = CProc::zeroed();
    c.rank = p.rank.0;
    let ns = p.nspace.as_str().as_bytes();
    let n = ns.len().min(255);
    copy_c_chars(&mut c.nspace[..n], &ns[..n]);
    c
}

/// The process a `pmix_proc_t` names; a namespace that is not UTF-8 or not a valid namespace
/// is `PMIX_ERR_BAD_PARAM`.
fn proc_of(c: CProc) -> Result<Proc, Status> {
    let ns: Vec<u8> = c
        .nspace
        .iter()
        .take_while(|b| **b != 0)
        .map(|b| *b as u8)
        .collect();
    let ns = std::str::from_utf8(&ns).map_err(|_| Status::ERR_BAD_PARAM)?;
    Proc::try_new(ns, Rank(c.rank)).map_err(|_| Status::ERR_BAD_PARAM)
}

/// Copy the bytes of `src` into the C characters `dst`, of the same length.
fn copy_c_chars(dst: &mut [c_char], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s as c_char;
    }
}

/// A key as the C API takes it: NUL-terminated, at most 511 bytes.
/// A key for the library as given: an over-long one is passed on, so that the library's
/// own answer is what a vector sees (rule G-14).
fn c_key(key: &str) -> Result<CString, Status> {
    CString::new(key).map_err(|_| Status::ERR_BAD_PARAM)
}

// ---- the library ----

type PackFn = unsafe extern "C" fn(*const CProc, *mut CDataBuffer, *const c_void, i32, u16) -> i32;
type UnpackFn =
    unsafe extern "C" fn(*const CProc, *mut CDataBuffer, *mut c_void, *mut i32, u16) -> i32;
type LoadFn = unsafe extern "C" fn(*mut CDataBuffer, *mut CByteObject);
type ValueDestructFn = unsafe extern "C" fn(*mut CValue);
type VersionFn = unsafe extern "C" fn() -> *const c_char;

type InitFn = unsafe extern "C" fn(*mut CProc, *mut CInfo, usize) -> i32;
type FinalizeFn = unsafe extern "C" fn(*const CInfo, usize) -> i32;
type PutFn = unsafe extern "C" fn(u8, *const c_char, *mut CValue) -> i32;
type CommitFn = unsafe extern "C" fn() -> i32;
type FenceFn = unsafe extern "C" fn(*const CProc, usize, *const CInfo, usize) -> i32;
type GetFn =
    unsafe extern "C" fn(*const CProc, *const c_char, *const CInfo, usize, *mut *mut CValue) -> i32;
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

type ServerInitFn = unsafe extern "C" fn(*mut upcalls::LibraryModule, *mut CInfo, usize) -> i32;
type RegisterNspaceFn =
    unsafe extern "C" fn(*const c_char, i32, *mut CInfo, usize, Option<OpCb>, *mut c_void) -> i32;
type RegisterClientFn =
    unsafe extern "C" fn(*const CProc, u32, u32, *mut c_void, Option<OpCb>, *mut c_void) -> i32;
type SetupForkFn = unsafe extern "C" fn(*const CProc, *mut *mut *mut c_char) -> i32;
type DmodexFn = unsafe extern "C" fn(*const CProc, DmodexResponseFn, *mut c_void) -> i32;

unsafe extern "C" {
    fn malloc(n: usize) -> *mut c_void;
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
    fn mallinfo2() -> MallInfo2;
}

/// glibc's `struct mallinfo2` (ten `size_t` counters).
#[repr(C)]
#[derive(Debug, Default)]
struct MallInfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

/// The bytes `malloc` has handed out and not had back in this process (chunks in its arenas
/// and mapped blocks), as glibc counts them: how a step sees a destructor release memory.
pub fn heap_in_use() -> usize {
    // SAFETY: mallinfo2 takes no arguments and returns its counters by value.
    let m = unsafe { mallinfo2() };
    m.uordblks.saturating_add(m.hblkhd)
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

impl Lib {
    /// The entry point `name` (NUL-terminated) if the library exports it; `None` for a
    /// library without that API.
    ///
    /// # Safety
    ///
    /// `T` must be the C signature of the symbol.
    unsafe fn optional<T: Copy>(&self, name: &str) -> Option<T> {
        // SAFETY: the caller vouches for the signature.
        unsafe { self._lib.get::<T>(name.as_bytes()) }
            .ok()
            .map(|s| *s)
    }
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
        let mut buf = CDataBuffer::zeroed();
        // SAFETY: `src` points to `n` values of type `t` in the library's layout.
        let rc = unsafe { (self.pack)(std::ptr::null(), &mut buf, src, n, t.0) };
        let out = if buf.base_ptr.is_null() {
            Vec::new()
        } else {
            // SAFETY: base_ptr holds bytes_used bytes written by the pack.
            unsafe { std::slice::from_raw_parts(buf.base_ptr.cast::<u8>(), buf.bytes_used) }
                .to_vec()
        };
        // SAFETY: the buffer's memory came from the library's malloc (or is NULL).
        unsafe { free(buf.base_ptr.cast()) };
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
        let mut bo = CByteObject {
            bytes: copy,
            size: bytes.len(),
        };
        let mut buf = CDataBuffer::zeroed();
        // SAFETY: `dst` has room for `n` values of type `t`; the buffer owns `copy`.
        unsafe {
            (self.load)(&mut buf, &mut bo);
            let rc = (self.unpack)(std::ptr::null(), &mut buf, dst, &mut count, t.0);
            free(buf.base_ptr.cast());
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
            v: (0..infos.len()).map(|_| CInfo::zeroed()).collect(),
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
                out.v.iter_mut().for_each(|i| i.value.type_ = 0);
                return Err(rc);
            }
        }
        Ok(out)
    }

    fn value_to_c(&'static self, v: &Value) -> Result<CValueBox, Status> {
        let mut out = CValueBox {
            lib: self,
            v: Box::new(CValue::zeroed()),
        };
        let bytes = self.encode(std::slice::from_ref(v))?;
        let rc = self.unpack_into(&bytes, (&raw mut *out.v).cast(), 1, DataType::VALUE);
        if rc != Status::SUCCESS {
            out.v.type_ = 0;
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

    /// `n` `pmix_app_t` at `p`, read through the library's own packing of them.
    fn apps_from_c(&self, p: *const CApp, n: usize) -> Result<Vec<App>, Status> {
        if p.is_null() || n == 0 {
            return Ok(Vec::new());
        }
        let count = i32::try_from(n).map_err(|_| Status::ERR_BAD_PARAM)?;
        let bytes = self.packed(p.cast(), count, DataType::APP)?;
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

// ---- the buffer type and the initialised library ----

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
