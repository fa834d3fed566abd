//! The client side of the C API: what a rank does in a vector's steps.

use super::*;

/// `PMIx_Init` from the environment; returns the process's identifier.
pub fn client_init() -> Result<Proc, Status> {
    let l = lib().map_err(|_| Status::ERR_INIT)?;
    let mut me = CProc::zeroed();
    // SAFETY: `me` is a pmix_proc_t; no infos.
    check(unsafe { (l.init)(&mut me, std::ptr::null_mut(), 0) })?;
    set_buffer_type(l.probe_buffer_type());
    proc_of(me)
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
    let p = c_proc(target);
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
    let cp: Vec<CProc> = procs.iter().map(c_proc).collect();
    let ci = l.infos_to_c(info)?;
    let pp = if cp.is_empty() {
        std::ptr::null()
    } else {
        cp.as_ptr()
    };
    // SAFETY: arrays of the given lengths (or NULL when empty).
    check(unsafe { (l.fence)(pp, cp.len(), ci.ptr(), ci.v.len()) })
}

/// Where `PMIx_Get` puts its value: a new value the caller releases (the default), the
/// library's own (`PMIX_GET_POINTER_VALUES`, never released) or the caller's storage
/// (`PMIX_GET_STATIC_VALUES`, destructed, not freed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ownership {
    Caller,
    Library,
    Storage,
}

fn flag(info: &[Info], key: &str) -> bool {
    info.iter()
        .any(|i| i.key.as_str() == key && i.value != Value::Bool(false))
}

/// `PMIx_Get`. With `PMIX_GET_STATIC_VALUES` the caller's storage is passed, unless
/// `no_storage` asks for the NULL one the standard answers with PMIX_ERR_BAD_PARAM.
pub fn get(
    target: Option<&Proc>,
    key: &str,
    info: &[Info],
    no_storage: bool,
) -> Result<Value, Status> {
    use pmix::model::attr;
    let l = ready()?;
    let k = c_key(key)?;
    let cp = target.map(c_proc);
    let pp = cp.as_ref().map_or(std::ptr::null(), |p| p as *const CProc);
    let ci = l.infos_to_c(info)?;
    let ownership = if flag(info, attr::GET_STATIC_VALUES.wire_key()) {
        Ownership::Storage
    } else if flag(info, attr::GET_POINTER_VALUES.wire_key()) {
        Ownership::Library
    } else {
        Ownership::Caller
    };
    let mut storage = CValue::zeroed();
    let mut out: *mut CValue = if ownership == Ownership::Storage && !no_storage {
        &raw mut storage
    } else {
        std::ptr::null_mut()
    };
    // SAFETY: valid proc (or NULL), key, infos; `out` is NULL (the library sets it) or the
    // caller's storage, which outlives the call.
    let rc = unsafe { (l.get)(pp, k.as_ptr(), ci.ptr(), ci.v.len(), &mut out) };
    check(rc)?;
    if out.is_null() {
        return Err(Status::ERR_NOT_FOUND);
    }
    let value = l.value_from_c(out);
    match ownership {
        // SAFETY: PMIX_VALUE_RELEASE: destruct, then free the malloc'd struct.
        Ownership::Caller => unsafe {
            (l.value_destruct)(out);
            free(out.cast());
        },
        // SAFETY: the value was written into `storage` (or wherever the library pointed
        // `out`, which it then owns); its contents are the caller's to destruct.
        Ownership::Storage if std::ptr::eq(out, &raw const storage) => unsafe {
            (l.value_destruct)(out);
        },
        // The library's own memory: never released by the caller (rule G-03).
        Ownership::Storage | Ownership::Library => {}
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
        _proc: target.map(|p| Box::new(c_proc(p))),
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

/// `PMIx_Lookup`: its status (success or partial success) and the data found.
pub fn lookup(keys: &[String], info: &[Info]) -> Result<(Status, Vec<PData>), Status> {
    let l = ready()?;
    let mut pd: Vec<CPdata> = keys.iter().map(|_| CPdata::zeroed()).collect();
    for (p, k) in pd.iter_mut().zip(keys) {
        let k = c_key(k)?;
        let b = k.as_bytes();
        if b.len() >= p.key.len() {
            // A pmix_pdata_t key holds PMIX_MAX_KEYLEN characters and its NUL.
            return Err(Status::ERR_BAD_PARAM);
        }
        copy_c_chars(&mut p.key[..b.len()], b);
    }
    let ci = l.infos_to_c(info)?;
    // SAFETY: a pdata array with its keys set; infos of their length.
    let rc = unsafe { (l.lookup)(pd.as_mut_ptr(), pd.len(), ci.ptr(), ci.v.len()) };
    // Keep the entries the library filled in (a value type other than PMIX_UNDEF).
    let found: Vec<&CPdata> = pd.iter().filter(|p| p.value.type_ != 0).collect();
    let mut out = Vec::new();
    for p in &found {
        out.extend(l.pdata_from_c(&raw const **p, 1)?);
    }
    for p in &mut pd {
        // SAFETY: values the library filled (or PMIX_UNDEF ones) are released by it.
        unsafe { (l.value_destruct)(&mut p.value) };
    }
    match Status(rc) {
        s @ (Status::SUCCESS | Status::ERR_PARTIAL_SUCCESS) => Ok((s, out)),
        s => Err(s),
    }
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
