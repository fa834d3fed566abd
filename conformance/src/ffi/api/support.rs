//! The support functions through a library's C functions (the steps of
//! [`crate::api::support`]).
//!
//! A value reaches C memory the way every value of this harness does: packed by this
//! project's codec and unpacked by the library into a `pmix_data_array_t` of its type
//! ([`CValues`]); its elements are then handed to the function under test as the C API
//! wants a single value (a pointer to it; a string by its `char*`, as `PMIx_Value_load`,
//! `PMIx_Data_copy` and `PMIx_Data_print` take it). What a function leaves in C memory is
//! read back through the library's pack into this codec ([`read_values`]), then released
//! through the library (`PMIx_Data_array_destruct`, `PMIx_Value_destruct`) or `free`, as
//! `openpmix/ABI.md` says its blocks are.
//!
//! A cpuset is read with hwloc's list printer instead ([`read_cpuset`]). Buffers start
//! zeroed (`PMIX_DATA_BUFFER_CONSTRUCT`) and their payload is `free`d when the step ends
//! ([`Buf`]). Each entry point is looked up when first used: a library without one answers
//! `PMIX_ERR_NOT_SUPPORTED` for the steps that need it.

use super::*;
use crate::api::support::{
    RELEASED_AT_LEAST, StringArg, StringFunction, SupportCall, array_of, c_size,
    compression_results,
};

type Text = unsafe extern "C" fn(*const c_char) -> *const c_char;
type Compress = unsafe extern "C" fn(*const u8, usize, *mut *mut u8, *mut usize) -> bool;
/// `(target, key, data, type)`: `PMIx_Info_load` and `PMIx_Info_list_add`.
type LoadKeyed = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_void, u16) -> i32;

/// The entry points of this module, each present or not.
struct SupportSyms {
    copy: Option<unsafe extern "C" fn(*mut *mut c_void, *mut c_void, u16) -> i32>,
    print: Option<unsafe extern "C" fn(*mut *mut c_char, *const c_char, *mut c_void, u16) -> i32>,
    load: Option<unsafe extern "C" fn(*mut CDataBuffer, *mut CByteObject) -> i32>,
    unload: Option<unsafe extern "C" fn(*mut CDataBuffer, *mut CByteObject) -> i32>,
    embed: Option<unsafe extern "C" fn(*mut CDataBuffer, *const CByteObject) -> i32>,
    copy_payload: Option<unsafe extern "C" fn(*mut CDataBuffer, *mut CDataBuffer) -> i32>,
    compress: Option<Compress>,
    decompress: Option<Compress>,
    value_load: Option<unsafe extern "C" fn(*mut CValue, *const c_void, u16) -> i32>,
    value_unload: Option<unsafe extern "C" fn(*mut CValue, *mut *mut c_void, *mut usize) -> i32>,
    value_xfer: Option<unsafe extern "C" fn(*mut CValue, *const CValue) -> i32>,
    info_load: Option<LoadKeyed>,
    info_xfer: Option<unsafe extern "C" fn(*mut CInfo, *const CInfo) -> i32>,
    list_start: Option<unsafe extern "C" fn() -> *mut c_void>,
    list_add: Option<LoadKeyed>,
    list_xfer: Option<unsafe extern "C" fn(*mut c_void, *const CInfo) -> i32>,
    list_convert: Option<unsafe extern "C" fn(*mut c_void, *mut CDataArray) -> i32>,
    list_release: Option<unsafe extern "C" fn(*mut c_void)>,
    topology_destruct: Option<unsafe extern "C" fn(*mut CSourced)>,
    parse_cpuset: Option<unsafe extern "C" fn(*const c_char, *mut CSourced) -> i32>,
    cpuset_destruct: Option<unsafe extern "C" fn(*mut CSourced)>,
    array_destruct: Option<unsafe extern "C" fn(*mut CDataArray)>,
}

static SUPPORT_SYMS: OnceLock<SupportSyms> = OnceLock::new();

fn support_syms(l: &'static Lib) -> &'static SupportSyms {
    SUPPORT_SYMS.get_or_init(|| {
        macro_rules! opt {
            ($name:literal) => {
                // SAFETY: the symbol, when present, has the C signature of the field it is
                // stored in, as OpenPMIx 4.2's pmix.h and pmix_common.h declare it (the
                // standard's signatures).
                unsafe { l.optional(concat!($name, "\0")) }
            };
        }
        SupportSyms {
            copy: opt!("PMIx_Data_copy"),
            print: opt!("PMIx_Data_print"),
            load: opt!("PMIx_Data_load"),
            unload: opt!("PMIx_Data_unload"),
            embed: opt!("PMIx_Data_embed"),
            copy_payload: opt!("PMIx_Data_copy_payload"),
            compress: opt!("PMIx_Data_compress"),
            decompress: opt!("PMIx_Data_decompress"),
            value_load: opt!("PMIx_Value_load"),
            value_unload: opt!("PMIx_Value_unload"),
            value_xfer: opt!("PMIx_Value_xfer"),
            info_load: opt!("PMIx_Info_load"),
            info_xfer: opt!("PMIx_Info_xfer"),
            list_start: opt!("PMIx_Info_list_start"),
            list_add: opt!("PMIx_Info_list_add"),
            list_xfer: opt!("PMIx_Info_list_xfer"),
            list_convert: opt!("PMIx_Info_list_convert"),
            list_release: opt!("PMIx_Info_list_release"),
            topology_destruct: opt!("PMIx_Topology_destruct"),
            parse_cpuset: opt!("PMIx_Parse_cpuset_string"),
            cpuset_destruct: opt!("PMIx_Cpuset_destruct"),
            array_destruct: opt!("PMIx_Data_array_destruct"),
        }
    })
}

// ---- C memory ----

/// Values of one type as C elements: the array of a `pmix_data_array_t` the library unpacked,
/// released with the value that holds it.
struct CValues {
    held: CValueBox,
    t: DataType,
    size: usize,
}

impl CValues {
    fn new(l: &'static Lib, t: DataType, values: &[Value]) -> Result<CValues, Status> {
        let size = c_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
        let held = l.value_to_c(&array_of(t, values.to_vec()))?;
        // SAFETY: read only when the value is a `PMIX_DATA_ARRAY` (`||` checks that first),
        // whose union the library set to its `pmix_data_array_t *`.
        if held.v.type_ != DataType::DATA_ARRAY.0 || unsafe { held.v.data.darray }.is_null() {
            return Err(Status::ERR_UNPACK_FAILURE);
        }
        Ok(CValues { held, t, size })
    }

    /// The `i`th element.
    fn element(&self, i: usize) -> *mut c_void {
        // SAFETY: the library unpacked a pmix_data_array_t of the values (checked in `new`),
        // whose elements are `size` bytes each; callers ask for the elements they gave.
        unsafe {
            (*self.held.v.data.darray)
                .array
                .cast::<u8>()
                .add(i * self.size)
                .cast()
        }
    }

    /// The `i`th element as the C API takes one value: a pointer to it, a string as itself.
    fn arg(&self, i: usize) -> *mut c_void {
        let e = self.element(i);
        if self.t == DataType::STRING {
            // SAFETY: a string element is a `char*`.
            unsafe { *e.cast::<*mut c_void>() }
        } else {
            e
        }
    }
}

/// `n` values of type `t` at `elements`, read through the library's pack and this codec.
/// The memory stays the caller's.
fn read_values(
    l: &Lib,
    t: DataType,
    elements: *mut c_void,
    n: usize,
) -> Result<Vec<Value>, Status> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut d = CDataArray {
        type_: t.0,
        size: n,
        array: elements,
    };
    let mut v = CValue::zeroed();
    v.type_ = DataType::DATA_ARRAY.0;
    v.data.darray = &raw mut d;
    match l.value_from_c(&raw const v)? {
        Value::DataArray(a) => Ok(a.elements),
        _ => Err(Status::ERR_UNPACK_FAILURE),
    }
}

/// Release `n` elements of type `t` at `elements`, a `malloc`ed block whose elements' own
/// memory is the library's, through `PMIx_Data_array_destruct` (`free` of the block alone
/// when the library lacks it).
fn release(s: &SupportSyms, t: DataType, elements: *mut c_void, n: usize) {
    if elements.is_null() {
        return;
    }
    match s.array_destruct {
        Some(destruct) => {
            let mut d = CDataArray {
                type_: t.0,
                size: n,
                array: elements,
            };
            // SAFETY: a data array of `n` elements of type `t` in a malloc'd block.
            unsafe { destruct(&raw mut d) };
        }
        // SAFETY: a malloc'd block.
        None => unsafe { free(elements) },
    }
}

/// A zeroed `malloc`ed block of `n` elements of `size` bytes.
fn zeroed_block(n: usize, size: usize) -> Result<*mut c_void, Status> {
    // SAFETY: calloc of a count and a size; checked for NULL.
    let p = unsafe { calloc(n.max(1), size) };
    if p.is_null() {
        Err(Status::ERR_NOMEM)
    } else {
        Ok(p)
    }
}

/// A data buffer of the C API, constructed zeroed; its payload is freed with it.
struct Buf(CDataBuffer);

impl Buf {
    fn new() -> Buf {
        Buf(CDataBuffer::zeroed())
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: the payload is the library's malloc'd block (or NULL).
        unsafe { free(self.0.base_ptr.cast()) };
    }
}

/// A byte object whose bytes are `malloc`ed, freed with it unless a buffer took them.
struct Bytes(CByteObject);

impl Drop for Bytes {
    fn drop(&mut self) {
        // SAFETY: the library's malloc'd bytes (or NULL).
        unsafe { free(self.0.bytes.cast()) };
    }
}

// ---- the steps ----

/// Run a support step through the library.
pub(super) fn run(l: &'static Lib, s: &Syms, call: SupportCall) -> Result<ApiOutput, Status> {
    let ss = support_syms(l);
    Ok(match call {
        SupportCall::String { function, arg } => ApiOutput::value(string_of(l, function, &arg)),
        SupportCall::DataPack {
            data_type,
            values,
            pack_as,
            max,
            past_end,
        } => {
            let src = CValues::new(l, data_type, &values)?;
            let n = i32::try_from(values.len()).map_err(|_| Status::ERR_BAD_PARAM)?;
            let mut b = Buf::new();
            // SAFETY: `n` contiguous values of their type (the type code under test may
            // differ: the library must refuse what it does not know).
            check(unsafe { (l.pack)(std::ptr::null(), &mut b.0, src.element(0), n, pack_as.0) })?;
            let got = unpack(l, ss, &mut b, data_type, max)?;
            if past_end {
                unpack(l, ss, &mut b, data_type, max)?;
            }
            ApiOutput::value(Ok(array_of(data_type, got)))
        }
        SupportCall::DataCopy { value } => {
            let t = value.data_type();
            let src = CValues::new(l, t, std::slice::from_ref(&value))?;
            let mut dest: *mut c_void = std::ptr::null_mut();
            // SAFETY: one value as the C API takes it; `dest` receives a malloc'd copy.
            check(unsafe { need(ss.copy)?(&mut dest, src.arg(0), t.0) })?;
            ApiOutput::value(read_owned(l, ss, t, dest).and_then(one))
        }
        SupportCall::DataPrint { value, prefix } => {
            let t = value.data_type();
            let src = CValues::new(l, t, std::slice::from_ref(&value))?;
            let p = cstring(&prefix)?;
            let mut out: *mut c_char = std::ptr::null_mut();
            // SAFETY: one value as the C API takes it, a prefix; `out` receives a malloc'd
            // string.
            check(unsafe { need(ss.print)?(&mut out, p.as_ptr(), src.arg(0), t.0) })?;
            ApiOutput::value(Ok(Value::String(take_string(out))))
        }
        SupportCall::DataUnload { data_type, values } => {
            let mut a = packed_one_by_one(l, ss, data_type, &values)?;
            let payload = unload(ss, &mut a)?;
            let mut b = Buf::new();
            let mut bo = Bytes(CByteObject {
                bytes: payload.0.bytes,
                size: payload.0.size,
            });
            std::mem::forget(payload);
            // SAFETY: a constructed buffer and a malloc'd payload, which the load takes.
            check(unsafe { need(ss.load)?(&mut b.0, &mut bo.0) })?;
            if bo.0.bytes == b.0.base_ptr {
                // Taken by the buffer without clearing the byte object: the buffer frees it.
                std::mem::forget(bo);
            }
            let rest = unpack_n(l, ss, &mut b, data_type, values.len() - 1)?;
            ApiOutput::value(Ok(array_of(data_type, rest)))
        }
        SupportCall::DataEmbed { data_type, values } => {
            let mut a = packed_one_by_one(l, ss, data_type, &values)?;
            let payload = unload(ss, &mut a)?;
            let embed = need(ss.embed)?;
            let (mut first, mut second) = (Buf::new(), Buf::new());
            // SAFETY: constructed buffers and the payload, which embed copies.
            unsafe {
                check(embed(&mut first.0, &payload.0))?;
                check(embed(&mut second.0, &payload.0))?;
            }
            if [first.0.base_ptr, second.0.base_ptr].contains(&payload.0.bytes) {
                // A buffer uses the payload itself: it frees it.
                std::mem::forget(payload);
            } else {
                drop(payload);
            }
            let n = values.len() - 1;
            let mut got = unpack_n(l, ss, &mut first, data_type, n)?;
            got.extend(unpack_n(l, ss, &mut second, data_type, n)?);
            ApiOutput::value(Ok(array_of(data_type, got)))
        }
        SupportCall::DataCopyPayload { data_type, values } => {
            let mut src = packed_one_by_one(l, ss, data_type, &values)?;
            let first = CValues::new(l, data_type, &values[..1])?;
            let mut dest = Buf::new();
            // SAFETY: one value of its type; then two constructed buffers.
            unsafe {
                check((l.pack)(
                    std::ptr::null(),
                    &mut dest.0,
                    first.element(0),
                    1,
                    data_type.0,
                ))?;
                check(need(ss.copy_payload)?(&mut dest.0, &mut src.0))?;
            }
            let mut got = unpack_n(l, ss, &mut dest, data_type, values.len())?;
            got.extend(unpack_n(l, ss, &mut src, data_type, values.len() - 1)?);
            ApiOutput::value(Ok(array_of(data_type, got)))
        }
        SupportCall::DataCompress { input } => {
            let (compress, decompress) = (need(ss.compress)?, need(ss.decompress)?);
            let (mut block, mut n) = (std::ptr::null_mut::<u8>(), 0usize);
            // SAFETY: the input and its length; the block is malloc'd by the library.
            let compressed = unsafe { compress(input.as_ptr(), input.len(), &mut block, &mut n) };
            let block = Bytes(CByteObject {
                bytes: block.cast(),
                size: n,
            });
            let (mut smaller, mut restored) = (false, false);
            if compressed && !block.0.bytes.is_null() {
                smaller = n < input.len();
                let (mut back, mut m) = (std::ptr::null_mut::<u8>(), 0usize);
                // SAFETY: the block compress returned; `back` is malloc'd by the library.
                let inflated = unsafe { decompress(block.0.bytes.cast(), n, &mut back, &mut m) };
                let back = Bytes(CByteObject {
                    bytes: back.cast(),
                    size: m,
                });
                restored = inflated && !back.0.bytes.is_null() && {
                    // SAFETY: `m` bytes decompress returned.
                    let got = unsafe { std::slice::from_raw_parts(back.0.bytes.cast::<u8>(), m) };
                    got == input.as_slice()
                };
            }
            ApiOutput::results(compression_results(compressed, smaller, restored))
        }
        SupportCall::ValueLoad { value } => {
            let t = value.data_type();
            let src = CValues::new(l, t, std::slice::from_ref(&value))?;
            let mut dest = CValueBox {
                lib: l,
                v: Box::new(CValue::zeroed()),
            };
            // SAFETY: an empty pmix_value_t and one value as the C API takes it.
            check(unsafe { need(ss.value_load)?(&mut *dest.v, src.arg(0), t.0) })?;
            ApiOutput::value(l.value_from_c(&*dest.v))
        }
        SupportCall::ValueUnload { value } => {
            let t = value.data_type();
            let mut src = l.value_to_c(&value)?;
            let (mut data, mut size) = (std::ptr::null_mut::<c_void>(), 0usize);
            // SAFETY: a value the library filled; `data` receives a malloc'd copy (v5.0
            // §3.2.8.1: "memory will be allocated").
            check(unsafe { need(ss.value_unload)?(&mut *src.v, &mut data, &mut size) })?;
            ApiOutput::value(read_owned(l, ss, t, data).and_then(one))
        }
        SupportCall::ValueXfer { value } => {
            let src = l.value_to_c(&value)?;
            let mut dest = CValueBox {
                lib: l,
                v: Box::new(CValue::zeroed()),
            };
            // SAFETY: an empty pmix_value_t and one the library filled.
            check(unsafe { need(ss.value_xfer)?(&mut *dest.v, &*src.v) })?;
            ApiOutput::value(l.value_from_c(&*dest.v))
        }
        SupportCall::InfoLoad { info } => {
            let t = info.value.data_type();
            let src = CValues::new(l, t, std::slice::from_ref(&info.value))?;
            let key = c_key(info.key.as_str())?;
            let mut dest = CInfos {
                lib: l,
                v: vec![CInfo::zeroed()],
            };
            // SAFETY: an empty pmix_info_t, a key and one value as the C API takes it.
            check(unsafe {
                need(ss.info_load)?(dest.v.as_mut_ptr().cast(), key.as_ptr(), src.arg(0), t.0)
            })?;
            ApiOutput::value(infos_value(l.infos_from_c(dest.ptr(), 1)))
        }
        SupportCall::InfoXfer { info } => {
            let src = l.infos_to_c(std::slice::from_ref(&info))?;
            let mut dest = CInfos {
                lib: l,
                v: vec![CInfo::zeroed()],
            };
            // SAFETY: an empty pmix_info_t and one the library filled.
            check(unsafe { need(ss.info_xfer)?(dest.v.as_mut_ptr(), src.ptr()) })?;
            ApiOutput::value(infos_value(l.infos_from_c(dest.ptr(), 1)))
        }
        SupportCall::InfoList { add, xfer } => {
            ApiOutput::value(info_list(l, ss, &add, &xfer).map(Value::DataArray))
        }
        SupportCall::LoadTopology { source } => {
            let wanted = source.as_deref().map(cstring).transpose()?;
            let ours = wanted
                .as_ref()
                .map_or(std::ptr::null_mut(), |c| c.as_ptr().cast_mut());
            let mut topo = CSourced {
                source: ours,
                object: std::ptr::null_mut(),
            };
            // SAFETY: a pmix_topology_t with the source asked for (or none); the description
            // the library points it to stays the library's (v5.0 §12.4.1).
            check(unsafe { need(s.load_topology)?(&mut topo) })?;
            let value = topology_value(l, &mut topo);
            if topo.source != ours {
                // SAFETY: a source string the library strdup'd for us.
                unsafe { free(topo.source.cast()) };
            }
            ApiOutput::value(value)
        }
        SupportCall::TopologyDestruct => {
            let mut topo = CSourced {
                source: std::ptr::null_mut(),
                object: std::ptr::null_mut(),
            };
            // SAFETY: an empty pmix_topology_t the library fills.
            check(unsafe { need(s.load_topology)?(&mut topo) })?;
            let mut copy: *mut c_void = std::ptr::null_mut();
            // SAFETY: the loaded topology; `copy` receives a malloc'd pmix_topology_t the
            // caller owns, whose description is a duplicate.
            let copied =
                unsafe { need(ss.copy)?(&mut copy, (&raw mut topo).cast(), DataType::TOPO.0) };
            // SAFETY: the source string the library strdup'd for the load.
            unsafe { free(topo.source.cast()) };
            check(copied)?;
            if copy.is_null() {
                return Err(Status::ERR_NOMEM);
            }
            let destruct = need(ss.topology_destruct)?;
            let before = heap_in_use();
            // SAFETY: the copy, released here and never used again but for the free below.
            unsafe { destruct(copy.cast()) };
            let after = heap_in_use();
            // SAFETY: the malloc'd struct itself, which destruct leaves.
            unsafe { free(copy) };
            ApiOutput::value(Ok(Value::Bool(
                after.saturating_add(RELEASED_AT_LEAST) <= before,
            )))
        }
        SupportCall::ParseCpusetString { cpuset } => {
            let text = cstring(&cpuset)?;
            let mut cs = CSourced {
                source: std::ptr::null_mut(),
                object: std::ptr::null_mut(),
            };
            // SAFETY: a NUL-terminated string and an empty pmix_cpuset_t the library fills.
            check(unsafe { need(ss.parse_cpuset)?(text.as_ptr(), &mut cs) })?;
            let value = read_cpuset(l, &cs);
            if let Some(destruct) = ss.cpuset_destruct {
                // SAFETY: the cpuset the library filled, read above.
                unsafe { destruct(&mut cs) };
            }
            ApiOutput::value(value.map(|c| Value::ProcCpuset(Box::new(c))))
        }
    })
}

/// The one value of a list.
fn one(mut v: Vec<Value>) -> Result<Value, Status> {
    v.pop().ok_or(Status::ERR_UNPACK_FAILURE)
}

/// A string the library `malloc`ed, taken (and freed): its bytes as they are.
fn take_string(p: *mut c_char) -> Option<pmix::model::Text> {
    if p.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string.
    let text = pmix::model::Text::from(unsafe { CStr::from_ptr(p) }.to_bytes());
    // SAFETY: malloc'd by the library, ours now.
    unsafe { free(p.cast()) };
    Some(text)
}

/// One value of type `t` at `p`, a `malloc`ed copy the caller now owns (a string: the
/// `char*` itself), read and released.
fn read_owned(l: &Lib, s: &SupportSyms, t: DataType, p: *mut c_void) -> Result<Vec<Value>, Status> {
    if p.is_null() {
        return Ok(vec![Value::Undef]);
    }
    let elements = if t == DataType::STRING {
        let holder = zeroed_block(1, std::mem::size_of::<*mut c_void>())?;
        // SAFETY: room for one pointer.
        unsafe { *holder.cast::<*mut c_void>() = p };
        holder
    } else {
        p
    };
    let got = read_values(l, t, elements, 1);
    release(s, t, elements, 1);
    got
}

/// `PMIx_Data_unpack` of at most `max` values of type `t` into fresh memory: the values.
fn unpack(
    l: &Lib,
    s: &SupportSyms,
    b: &mut Buf,
    t: DataType,
    max: u32,
) -> Result<Vec<Value>, Status> {
    let size = c_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
    let slots = max.max(1) as usize;
    let dest = zeroed_block(slots, size)?;
    let mut count = i32::try_from(max).map_err(|_| Status::ERR_BAD_PARAM)?;
    // SAFETY: a buffer and room for `max` values of type `t`.
    let rc = unsafe { (l.unpack)(std::ptr::null(), &mut b.0, dest, &mut count, t.0) };
    let got = match check(rc) {
        Ok(()) => read_values(l, t, dest, usize::try_from(count).unwrap_or(0).min(slots)),
        Err(e) => Err(e),
    };
    release(s, t, dest, slots);
    got
}

/// `n` values unpacked one call at a time.
fn unpack_n(
    l: &Lib,
    s: &SupportSyms,
    b: &mut Buf,
    t: DataType,
    n: usize,
) -> Result<Vec<Value>, Status> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.extend(unpack(l, s, b, t, 1)?);
    }
    Ok(out)
}

/// A buffer with each value packed by a `PMIx_Data_pack` of its own and the first unpacked.
fn packed_one_by_one(
    l: &'static Lib,
    s: &SupportSyms,
    t: DataType,
    values: &[Value],
) -> Result<Buf, Status> {
    let src = CValues::new(l, t, values)?;
    let mut b = Buf::new();
    for i in 0..values.len() {
        // SAFETY: one value of type `t`.
        check(unsafe { (l.pack)(std::ptr::null(), &mut b.0, src.element(i), 1, t.0) })?;
    }
    unpack(l, s, &mut b, t, 1)?;
    Ok(b)
}

/// `PMIx_Data_unload` of what `b` has not unpacked.
fn unload(s: &SupportSyms, b: &mut Buf) -> Result<Bytes, Status> {
    let mut payload = Bytes(CByteObject {
        bytes: std::ptr::null_mut(),
        size: 0,
    });
    // SAFETY: a buffer and an empty byte object the library fills with malloc'd bytes.
    check(unsafe { need(s.unload)?(&mut b.0, &mut payload.0) })?;
    Ok(payload)
}

fn infos_value(infos: Result<Vec<Info>, Status>) -> Result<Value, Status> {
    infos.map(|i| Value::DataArray(Box::new(pmix::model::DataArray::of_infos(i))))
}

/// Build a list with `PMIx_Info_list_*` and convert it.
fn info_list(
    l: &'static Lib,
    s: &SupportSyms,
    add: &[Info],
    xfer: &[Info],
) -> Result<Box<pmix::model::DataArray>, Status> {
    let (start, convert, release_list) = (
        need(s.list_start)?,
        need(s.list_convert)?,
        need(s.list_release)?,
    );
    // SAFETY: no arguments; the list is released below, on every path.
    let list = unsafe { start() };
    if list.is_null() {
        return Err(Status::ERR_NOMEM);
    }
    let built = (|| {
        for i in add {
            let t = i.value.data_type();
            let src = CValues::new(l, t, std::slice::from_ref(&i.value))?;
            let key = c_key(i.key.as_str())?;
            // SAFETY: the list, a key and one value as the C API takes it.
            check(unsafe { need(s.list_add)?(list, key.as_ptr(), src.arg(0), t.0) })?;
        }
        for i in xfer {
            let src = l.infos_to_c(std::slice::from_ref(i))?;
            // SAFETY: the list and an info the library filled.
            check(unsafe { need(s.list_xfer)?(list, src.ptr()) })?;
        }
        let mut d = CDataArray {
            type_: 0,
            size: 0,
            array: std::ptr::null_mut(),
        };
        // SAFETY: the list and an empty data array the library fills.
        check(unsafe { convert(list, &mut d) })?;
        let infos = l.infos_from_c(d.array.cast(), d.size);
        release(s, DataType::INFO, d.array, d.size);
        infos
    })();
    // SAFETY: the list start returned, released once.
    unsafe { release_list(list) };
    built.map(|i| Box::new(pmix::model::DataArray::of_infos(i)))
}

unsafe extern "C" {
    /// hwloc's list form of a bitmap (`0-3,8`), in a string it `malloc`s; the length, or -1.
    fn hwloc_bitmap_list_asprintf(text: *mut *mut c_char, bitmap: *const c_void)
    -> std::ffi::c_int;
}

/// A cpuset the library filled. An hwloc bitmap is read with hwloc's own list printer (the
/// library loads the same libhwloc): OpenPMIx 4.2.2 cannot pack a cpuset (it reads the length
/// `hwloc_bitmap_list_asprintf` returns as an error). Another source goes through the pack.
fn read_cpuset(l: &Lib, cs: &CSourced) -> Result<pmix::model::Cpuset, Status> {
    let source = if cs.source.is_null() {
        None
    } else {
        // SAFETY: a NUL-terminated string the library set.
        Some(
            unsafe { CStr::from_ptr(cs.source) }
                .to_string_lossy()
                .into_owned(),
        )
    };
    if !source
        .as_deref()
        .is_some_and(|s| s.eq_ignore_ascii_case("hwloc"))
    {
        return l
            .packed(std::ptr::from_ref(cs).cast(), 1, DataType::PROC_CPUSET)
            .and_then(|b| l.decode::<pmix::model::Cpuset>(b, 1))
            .and_then(one_cpuset);
    }
    if cs.object.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let mut text: *mut c_char = std::ptr::null_mut();
    // SAFETY: an hwloc bitmap the library allocated; `text` receives a malloc'd string.
    if unsafe { hwloc_bitmap_list_asprintf(&mut text, cs.object) } < 0 {
        return Err(Status::ERR_NOMEM);
    }
    Ok(pmix::model::Cpuset {
        source,
        bitmap: take_string(text).map(|t| t.to_str_lossy().into_owned()),
    })
}

fn one_cpuset(mut v: Vec<pmix::model::Cpuset>) -> Result<pmix::model::Cpuset, Status> {
    v.pop().ok_or(Status::ERR_UNPACK_FAILURE)
}

/// A loaded topology as a value, through the library's pack (hwloc's XML).
fn topology_value(l: &Lib, topo: &mut CSourced) -> Result<Value, Status> {
    let mut v = CValue::zeroed();
    v.type_ = DataType::TOPO.0;
    v.data.ptr = std::ptr::from_mut(topo).cast();
    match l.value_from_c(&raw const v)? {
        t @ Value::Topo(_) => Ok(t),
        _ => Err(Status::ERR_UNPACK_FAILURE),
    }
}

/// A string function of the library: its text (a static string, never freed).
fn string_of(l: &Lib, f: StringFunction, arg: &StringArg) -> Result<Value, Status> {
    let name = format!("{}\0", f.c_name());
    macro_rules! call {
        ($t:ty, $arg:expr) => {{
            // SAFETY: the function's C prototype takes one argument of this width and
            // returns a static string (v5.0 §3.5: "must NOT be free'd").
            let g: $t = need(unsafe { l.optional::<$t>(&name) })?;
            // SAFETY: as above.
            unsafe { g($arg) }
        }};
    }
    // Narrowing to the code set's width is what the C prototype does to the argument.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let p = match (f, arg) {
        (_, StringArg::Text(t)) => {
            let c = cstring(t)?;
            call!(Text, c.as_ptr())
        }
        (StringFunction::Error, StringArg::Code(n)) => {
            call!(unsafe extern "C" fn(i32) -> *const c_char, *n as i32)
        }
        (StringFunction::InfoDirectives, StringArg::Code(n)) => {
            call!(unsafe extern "C" fn(u32) -> *const c_char, *n as u32)
        }
        (StringFunction::DataType | StringFunction::IofChannel, StringArg::Code(n)) => {
            call!(unsafe extern "C" fn(u16) -> *const c_char, *n as u16)
        }
        (StringFunction::DeviceType, StringArg::Code(n)) => {
            call!(unsafe extern "C" fn(u64) -> *const c_char, *n as u64)
        }
        (_, StringArg::Code(n)) => call!(unsafe extern "C" fn(u8) -> *const c_char, *n as u8),
    };
    if p.is_null() {
        return Ok(Value::String(None));
    }
    // SAFETY: a NUL-terminated static string.
    let text = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    Ok(Value::string(text))
}
