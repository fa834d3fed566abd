//! The server side of the C API: what a node's host calls (`PMIx_server_init` with the
//! module of [`super::upcalls`], registrations, fork setup, direct-modex requests).

use super::*;

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

/// What the infos of [`plain_infos`] point to, which must outlive them.
#[derive(Debug, Default)]
pub(super) struct Kept {
    strings: Vec<CString>,
    // An info points to its topology (a `pmix_topology_t`): the box keeps that address as the
    // vector grows.
    #[allow(clippy::vec_box)]
    topologies: Vec<Box<CSourced>>,
}

/// An hwloc topology object of this process, loaded from hwloc's XML as this machine's
/// (binding calls act on it), I/O devices kept: what a host hands `PMIx_server_init` as
/// `PMIX_TOPOLOGY2`. It lives as long as the process: the library keeps it.
fn hwloc_topology(xml: &str) -> Result<*mut c_void, Status> {
    use hwlocality_sys as h;
    let text = CString::new(xml).map_err(|_| Status::ERR_BAD_PARAM)?;
    let len = i32::try_from(text.as_bytes_with_nul().len()).map_err(|_| Status::ERR_BAD_PARAM)?;
    let mut topo: h::hwloc_topology_t = std::ptr::null_mut();
    // SAFETY: hwloc's documented sequence: init a topology, configure it, load it. On a
    // failure after init, the topology is destroyed; `text` outlives the load, which copies
    // what it keeps.
    unsafe {
        if h::hwloc_topology_init(&mut topo) != 0 {
            return Err(Status::ERR_NOMEM);
        }
        let configured = h::hwloc_topology_set_io_types_filter(topo, h::HWLOC_TYPE_FILTER_KEEP_ALL)
            == 0
            && h::hwloc_topology_set_flags(topo, h::HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) == 0
            && h::hwloc_topology_set_xmlbuffer(topo, text.as_ptr(), len) == 0
            && h::hwloc_topology_load(topo) == 0;
        if !configured {
            h::hwloc_topology_destroy(topo);
            return Err(Status::ERR_BAD_PARAM);
        }
    }
    Ok(topo.cast())
}

/// Infos built by hand, for the calls made before the library can unpack (server and tool
/// init): strings, booleans, 32-bit integers, pids, ranks, NULL pointers, flags with no
/// value, and hwloc topologies (given as XML). What the infos point to is returned with them
/// and must outlive them.
pub(super) fn plain_infos(info: &[Info]) -> Result<(Kept, Vec<CInfo>), Status> {
    let mut kept = Kept::default();
    let mut out = Vec::new();
    for i in info {
        let k = c_key(i.key.as_str())?;
        let mut c = CInfo::zeroed();
        copy_c_chars(&mut c.key[..k.as_bytes().len()], k.as_bytes());
        // The value's union, written through the field of the type: a `char *`, a `bool`, a
        // 32-bit number or a pointer.
        match &i.value {
            Value::String(Some(text)) => {
                let v = CString::new(text.as_bytes()).map_err(|_| Status::ERR_BAD_PARAM)?;
                c.value.type_ = DataType::STRING.0;
                c.value.data.string = v.as_ptr().cast_mut();
                kept.strings.push(v);
            }
            Value::Topo(t) => {
                let xml = t.topology.as_deref().ok_or(Status::ERR_BAD_PARAM)?;
                let source = CString::new(t.source.as_deref().unwrap_or("hwloc"))
                    .map_err(|_| Status::ERR_BAD_PARAM)?;
                let mut topo = Box::new(CSourced {
                    source: source.as_ptr().cast_mut(),
                    object: hwloc_topology(xml)?,
                });
                c.value.type_ = DataType::TOPO.0;
                c.value.data.ptr = (&raw mut *topo).cast();
                kept.strings.push(source);
                kept.topologies.push(topo);
            }
            Value::Bool(b) => {
                c.value.type_ = DataType::BOOL.0;
                c.value.data.flag = *b;
            }
            Value::Uint32(n) => {
                c.value.type_ = DataType::UINT32.0;
                c.value.data.uint32 = *n;
            }
            Value::Rank(r) => {
                c.value.type_ = DataType::PROC_RANK.0;
                c.value.data.rank = r.0;
            }
            Value::Pid(p) => {
                c.value.type_ = DataType::PID.0;
                c.value.data.pid = *p;
            }
            Value::Int32(n) | Value::Int(n) => {
                c.value.type_ = if matches!(i.value, Value::Int(_)) {
                    DataType::INT.0
                } else {
                    DataType::INT32.0
                };
                c.value.data.int32 = *n;
            }
            Value::Undef => c.value.type_ = DataType::UNDEF.0,
            // No address crosses processes: the library gets NULL (the union stays zero).
            Value::Pointer(_) => c.value.type_ = DataType::POINTER.0,
            _ => return Err(Status::ERR_BAD_PARAM),
        }
        out.push(c);
    }
    Ok((kept, out))
}

/// `PMIx_server_init` with this host's callbacks; `host` receives every upcall.
pub fn server_init(info: &[Info], caps: HostCaps, host: HostFn) -> Result<(), Status> {
    let l = lib().map_err(|_| Status::ERR_INIT)?;
    let mut module = upcalls::module(caps, host);
    let (_strings, mut ci) = plain_infos(info)?;
    // SAFETY: the module and the infos (whose strings `_strings` owns) live for the call; the
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
    let p = c_proc(proc);
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
    let p = c_proc(proc);
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
    let p = c_proc(proc);
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
