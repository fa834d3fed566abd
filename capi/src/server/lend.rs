//! What an upcall lends the host and how the host answers: the arguments, kept alive until
//! the host calls back, and the callbacks that carry its answer to the waiting upcall.

use std::ffi::{c_char, c_void};

use pmix::model::{Info, Nspace, PData, Proc, Status, Value};
use tokio::sync::oneshot;

use crate::boundary::{c_bytes, c_strdup, calloc_array, guard_or, read_cstr, slice_of};
use crate::types::{CApp, CByteObject, CInfo, CPdata, CProc, CQuery, CStatus, ReleaseCb};
use crate::values::{
    c_proc, destruct_object, free_argv, free_infos, read_infos, read_key, read_proc, read_value,
    write_infos, write_object,
};

/// A pointer that crosses to the blocking thread making the upcall.
#[derive(Clone, Copy)]
pub(super) struct Sent(pub(super) *mut c_void);

// SAFETY: the pointers are the library's own blocks (or the host's objects), kept alive by
// the upcall's future while the host may use them.
unsafe impl Send for Sent {}

impl Sent {
    /// The pointer (a method: a closure then captures the `Send` wrapper, not its field).
    pub(super) fn get(self) -> *mut c_void {
        self.0
    }
}

/// The answer an upcall's callback sends back.
type Answer<T> = oneshot::Sender<Result<T, Status>>;

/// What an upcall lends the host (a [`Lent`], a buffer of its own, …), held while the host
/// may use it: freed once the host has answered or declined, and leaked if the upcall is
/// abandoned before that (the server finalized while the host held the upcall), since a host
/// that answers late may still read it.
struct OnLoan<K>(Option<K>);

impl<K> OnLoan<K> {
    /// The host is done with it: free it.
    fn returned(mut self) {
        drop(self.0.take());
    }
}

impl<K> Drop for OnLoan<K> {
    fn drop(&mut self) {
        if let Some(k) = self.0.take() {
            tracing::debug!("an upcall abandoned before the host answered: its arguments leak");
            std::mem::forget(k);
        }
    }
}

/// Make an upcall: `call` runs on a blocking thread with the callback's data; the answer
/// comes when the host calls back. `PMIX_OPERATION_SUCCEEDED` from the upcall itself is the
/// answer `done` without a callback; any other error is the answer. `lent` holds what the
/// arguments point into: freed once the host answered or declined, never while it may still
/// read them.
pub(super) async fn upcall<T: Send + 'static, K: Send + 'static>(
    lent: K,
    done: impl FnOnce() -> Result<T, Status> + Send + 'static,
    call: impl FnOnce(*mut c_void) -> CStatus + Send + 'static,
) -> Result<T, Status> {
    let loan = OnLoan(Some(lent));
    let (tx, rx) = oneshot::channel::<Result<T, Status>>();
    let cookie = Sent(Box::into_raw(Box::new(tx)).cast());
    let rc = tokio::task::spawn_blocking(move || {
        let cookie = cookie;
        guard_or("host upcall", Status::ERROR.0, || call(cookie.0))
    })
    .await
    .unwrap_or(Status::ERROR.0);
    let answer = if rc == Status::SUCCESS.0 {
        rx.await.unwrap_or(Err(Status::ERR_LOST_CONNECTION))
    } else {
        // SAFETY: the host declined (or answered at once): the callback will not run, and
        // the box is still ours.
        drop(unsafe { Box::from_raw(cookie.0.cast::<Answer<T>>()) });
        if rc == Status::OPERATION_SUCCEEDED.0 {
            done()
        } else {
            Err(Status(rc))
        }
    };
    loan.returned();
    answer
}

/// Send `answer` to the upcall whose callback data is `cbdata`.
///
/// # Safety
/// `cbdata` is the box `upcall` made for an answer of `T`, taken once.
unsafe fn answer<T>(cbdata: *mut c_void, answer: Result<T, Status>) {
    if cbdata.is_null() {
        return;
    }
    // SAFETY: the caller's promise.
    let tx = unsafe { Box::from_raw(cbdata.cast::<Answer<T>>()) };
    let _ = tx.send(answer);
}

fn result(status: CStatus) -> Result<(), Status> {
    if status == Status::SUCCESS.0 {
        Ok(())
    } else {
        Err(Status(status))
    }
}

pub(super) unsafe extern "C" fn op_done(status: CStatus, cbdata: *mut c_void) {
    // SAFETY: the callback data of an upcall answered by a status.
    guard_or("op callback", (), || unsafe {
        answer::<()>(cbdata, result(status))
    });
}

pub(super) unsafe extern "C" fn modex_done(
    status: CStatus,
    data: *const c_char,
    ndata: usize,
    cbdata: *mut c_void,
    release: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
) {
    guard_or("modex callback", (), || {
        // SAFETY: `data` holds `ndata` bytes for the duration of the call.
        let bytes = unsafe { slice_of(data.cast::<u8>(), ndata) }.map(<[u8]>::to_vec);
        let got = result(status).and(bytes);
        // SAFETY: the callback data of an upcall answered by bytes.
        unsafe { answer::<Vec<u8>>(cbdata, got) };
        if let Some(f) = release {
            release_later(f, release_cbdata);
        }
    });
}

/// Hand a host's release function to the thread that runs them, once the callback that
/// gave it has copied what it needed: a host may call the callback with a lock held that its
/// release function takes (Slurm's `mpi/pmix` ring and tree collectives do), so it must not
/// run inside the callback, where it would wait for that lock forever. OpenPMIx's server
/// also calls it later, from its progress thread. If that thread cannot be started, the
/// block is left to the host (a leak, not a deadlock).
fn release_later(f: ReleaseCb, cbdata: *mut c_void) {
    use std::sync::OnceLock;
    use std::sync::mpsc::{Sender, channel};
    static RELEASES: OnceLock<Option<Sender<(ReleaseCb, Sent)>>> = OnceLock::new();
    let releases = RELEASES.get_or_init(|| {
        let (tx, rx) = channel::<(ReleaseCb, Sent)>();
        let started = std::thread::Builder::new()
            .name("pmix-release".into())
            .spawn(move || {
                for (f, cbdata) in rx {
                    // SAFETY: the host's release function with its own callback data, called
                    // once, after the callback that gave it returned.
                    guard_or("host release", (), || unsafe { f(cbdata.get()) });
                }
            });
        started.is_ok().then_some(tx)
    });
    let sent = releases
        .as_ref()
        .is_some_and(|tx| tx.send((f, Sent(cbdata))).is_ok());
    if !sent {
        tracing::warn!("a host release function was not called: no thread could run it");
    }
}

pub(super) unsafe extern "C" fn lookup_done(
    status: CStatus,
    data: *mut CPdata,
    ndata: usize,
    cbdata: *mut c_void,
) {
    guard_or("lookup callback", (), || {
        let read = || -> Result<Vec<PData>, Status> {
            // Some keys found: the data found is the answer (the server works out the
            // partial success from the keys asked).
            if status != Status::ERR_PARTIAL_SUCCESS.0 {
                result(status)?;
            }
            // SAFETY: `data` holds `ndata` pdata for the duration of the call.
            let found = unsafe { slice_of(data, ndata)? };
            found
                .iter()
                .map(|d| {
                    Ok(PData {
                        proc: read_proc(&d.proc)?,
                        key: read_key(&d.key)?,
                        // SAFETY: a pdata's value.
                        value: unsafe { read_value(&d.value)? },
                    })
                })
                .collect()
        };
        // SAFETY: the callback data of a lookup.
        unsafe { answer::<Vec<PData>>(cbdata, read()) };
    });
}

pub(super) unsafe extern "C" fn spawn_done(
    status: CStatus,
    nspace: *mut c_char,
    cbdata: *mut c_void,
) {
    guard_or("spawn callback", (), || {
        let read = || -> Result<Nspace, Status> {
            result(status)?;
            // SAFETY: a namespace string for the duration of the call.
            let ns = unsafe { read_cstr(nspace) }.ok_or(Status::ERR_BAD_PARAM)?;
            Nspace::new(ns).map_err(|e| e.status())
        };
        // SAFETY: the callback data of a spawn.
        unsafe { answer::<Nspace>(cbdata, read()) };
    });
}

pub(super) unsafe extern "C" fn info_done(
    status: CStatus,
    info: *mut CInfo,
    ninfo: usize,
    cbdata: *mut c_void,
    release: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
) {
    guard_or("info callback", (), || {
        let got = if status == Status::SUCCESS.0 || status == Status::ERR_PARTIAL_SUCCESS.0 {
            // SAFETY: `info` holds `ninfo` infos for the duration of the call.
            unsafe { read_infos(info, ninfo) }
        } else {
            Err(Status(status))
        };
        // SAFETY: the callback data of an upcall answered by infos.
        unsafe { answer::<Vec<Info>>(cbdata, got) };
        if let Some(f) = release {
            release_later(f, release_cbdata);
        }
    });
}

pub(super) unsafe extern "C" fn credential_done(
    status: CStatus,
    credential: *mut CByteObject,
    info: *mut CInfo,
    ninfo: usize,
    cbdata: *mut c_void,
) {
    guard_or("credential callback", (), || {
        let read = || -> Result<(Vec<u8>, Vec<Info>), Status> {
            result(status)?;
            // SAFETY: the host's credential, valid for the duration of the call (it keeps
            // ownership).
            let bytes = match unsafe { credential.as_ref() } {
                // SAFETY: a byte object's bytes.
                Some(c) => unsafe { slice_of(c.bytes.cast::<u8>(), c.size)? }.to_vec(),
                None => return Err(Status::ERR_BAD_PARAM),
            };
            // SAFETY: `info` holds `ninfo` infos for the duration of the call.
            Ok((bytes, unsafe { read_infos(info, ninfo)? }))
        };
        // SAFETY: the callback data of a credential request.
        unsafe { answer::<(Vec<u8>, Vec<Info>)>(cbdata, read()) };
    });
}

pub(super) unsafe extern "C" fn validation_done(
    status: CStatus,
    info: *mut CInfo,
    ninfo: usize,
    cbdata: *mut c_void,
) {
    guard_or("validation callback", (), || {
        // SAFETY: `info` holds `ninfo` infos for the duration of the call.
        let got = result(status).and_then(|()| unsafe { read_infos(info, ninfo) });
        // SAFETY: the callback data of a validation.
        unsafe { answer::<Vec<Info>>(cbdata, got) };
    });
}

pub(super) unsafe extern "C" fn tool_done(status: CStatus, proc: *mut CProc, cbdata: *mut c_void) {
    guard_or("tool connection callback", (), || {
        let read = || -> Result<Proc, Status> {
            result(status)?;
            // SAFETY: the identifier the host assigned, valid for the duration of the call.
            let proc = unsafe { proc.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
            read_proc(proc)
        };
        // SAFETY: the callback data of a tool connection.
        unsafe { answer::<Proc>(cbdata, read()) };
    });
}

/// Arrays lent to the host for one upcall, released when it has answered.
pub(super) struct Lent {
    infos: Vec<(*mut CInfo, usize)>,
    procs: Vec<*mut CProc>,
    argvs: Vec<*mut *mut c_char>,
    strings: Vec<*mut c_char>,
    byte_objects: Vec<*mut CByteObject>,
    pub(super) apps: Option<(*mut CApp, usize)>,
    pub(super) queries: Option<(*mut CQuery, usize)>,
}

// SAFETY: the blocks are the library's, used by the host until it answers; `upcall` holds
// this value until then, and leaks it if the upcall is abandoned first.
unsafe impl Send for Lent {}

impl Lent {
    pub(super) fn new() -> Lent {
        Lent {
            infos: Vec::new(),
            procs: Vec::new(),
            argvs: Vec::new(),
            strings: Vec::new(),
            byte_objects: Vec::new(),
            apps: None,
            queries: None,
        }
    }

    pub(super) fn infos(&mut self, infos: &[Info]) -> Result<(Sent, usize), Status> {
        let (p, n) = write_infos(infos)?;
        self.infos.push((p, n));
        Ok((Sent(p.cast()), n))
    }

    pub(super) fn procs(&mut self, procs: &[Proc]) -> Result<(Sent, usize), Status> {
        let p: *mut CProc = calloc_array(procs.len())?;
        self.procs.push(p);
        for (i, proc) in procs.iter().enumerate() {
            // SAFETY: the array has room for every proc.
            unsafe { *p.add(i) = c_proc(proc) };
        }
        Ok((Sent(p.cast()), procs.len()))
    }

    /// One process, as the upcalls about a requester take it.
    pub(super) fn proc(&mut self, proc: &Proc) -> Result<Sent, Status> {
        Ok(self.procs(std::slice::from_ref(proc))?.0)
    }

    /// A byte object holding a copy of `bytes`.
    pub(super) fn bytes(&mut self, bytes: &[u8]) -> Result<Sent, Status> {
        let object: *mut CByteObject = calloc_array(1)?;
        self.byte_objects.push(object);
        let data = c_bytes(bytes)?;
        // SAFETY: the object was just allocated; it and its bytes are released by `Drop`.
        unsafe {
            (*object).bytes = data.cast();
            (*object).size = bytes.len();
        }
        Ok(Sent(object.cast()))
    }

    pub(super) fn argv(&mut self, list: &[String]) -> Result<Sent, Status> {
        let argv: *mut *mut c_char = calloc_array(list.len() + 1)?;
        self.argvs.push(argv);
        for (i, s) in list.iter().enumerate() {
            // SAFETY: the array has room for every string and the NULL after them.
            unsafe { *argv.add(i) = c_strdup(s)? };
        }
        Ok(Sent(argv.cast()))
    }

    pub(super) fn string(&mut self, s: &str) -> Result<Sent, Status> {
        let p = c_strdup(s)?;
        self.strings.push(p);
        Ok(Sent(p.cast()))
    }

    pub(super) fn objects<T>(
        &mut self,
        values: Vec<Value>,
        t: pmix::model::DataType,
    ) -> Result<(*mut T, usize), Status> {
        let p: *mut T = calloc_array(values.len())?;
        for (i, v) in values.iter().enumerate() {
            // SAFETY: the array has room for every object; on a failure the ones written
            // before are destructed and the array freed here.
            if let Err(s) = unsafe { write_object(v, p.add(i).cast()) } {
                for j in 0..i {
                    // SAFETY: written above.
                    unsafe { destruct_object(t, p.add(j).cast()) };
                }
                // SAFETY: ours.
                unsafe { crate::boundary::free(p) };
                return Err(s);
            }
        }
        Ok((p, values.len()))
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        // SAFETY: every block was made by this value and is released once.
        unsafe {
            for (p, n) in self.infos.drain(..) {
                free_infos(p, n);
            }
            for p in self.procs.drain(..) {
                crate::boundary::free(p);
            }
            for a in self.argvs.drain(..) {
                free_argv(a);
            }
            for s in self.strings.drain(..) {
                crate::boundary::free(s);
            }
            for b in self.byte_objects.drain(..) {
                crate::boundary::free((*b).bytes);
                crate::boundary::free(b);
            }
            if let Some((p, n)) = self.apps.take() {
                for i in 0..n {
                    destruct_object(pmix::model::DataType::APP, p.add(i).cast());
                }
                crate::boundary::free(p);
            }
            if let Some((p, n)) = self.queries.take() {
                for i in 0..n {
                    destruct_object(pmix::model::DataType::QUERY, p.add(i).cast());
                }
                crate::boundary::free(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, PoisonError};

    use super::*;

    /// Lent to the host: says when it is freed.
    struct Probe(Arc<AtomicBool>);

    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn what_an_upcall_lends_is_freed_once_the_host_answers() {
        let freed = Arc::new(AtomicBool::new(false));
        let probe = Probe(freed.clone());
        let r = runtime().block_on(upcall(
            probe,
            || Ok(()),
            |cb| {
                // SAFETY: the callback data `upcall` made for this answer, used once.
                unsafe { op_done(Status::SUCCESS.0, cb) };
                Status::SUCCESS.0
            },
        ));
        assert_eq!(r, Ok(()));
        assert!(freed.load(Ordering::SeqCst));
    }

    #[test]
    fn what_an_abandoned_upcall_lends_is_never_freed_under_the_host() {
        let freed = Arc::new(AtomicBool::new(false));
        let probe = Probe(freed.clone());
        let (keep, kept) = std::sync::mpsc::channel::<Sent>();
        let rt = runtime();
        // The host takes the upcall and does not answer; the upcall is then abandoned (as
        // `PMIx_server_finalize` drops the futures still waiting).
        let pending = rt.spawn(upcall(
            probe,
            || Ok(()),
            move |cb| {
                let _ = keep.send(Sent(cb));
                Status::SUCCESS.0
            },
        ));
        let cookie = kept.recv().expect("the host was called");
        pending.abort();
        drop(rt);
        assert!(!freed.load(Ordering::SeqCst), "the host may still read it");
        // The host answers late: nothing waits, nothing breaks.
        // SAFETY: the callback data of the upcall, used once, as a host answering late does.
        unsafe { op_done(Status::SUCCESS.0, cookie.get()) };
    }

    /// Where the release function ran: sent by it to the test.
    static RELEASED_ON: std::sync::Mutex<Option<std::sync::mpsc::Sender<std::thread::ThreadId>>> =
        std::sync::Mutex::new(None);

    unsafe extern "C" fn record_release(_cbdata: *mut c_void) {
        let tx = RELEASED_ON.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = tx.as_ref() {
            let _ = tx.send(std::thread::current().id());
        }
    }

    #[test]
    fn a_hosts_release_function_runs_after_its_callback_on_another_thread() {
        // Slurm's collectives call the modex callback holding a lock their release function
        // takes: run inside the callback, on the host's thread, it would never return.
        let (tx, rx) = std::sync::mpsc::channel();
        *RELEASED_ON.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
        let data = [1u8, 2, 3];
        // SAFETY: three bytes that live through the call; no upcall waits (NULL cbdata).
        unsafe {
            modex_done(
                Status::SUCCESS.0,
                data.as_ptr().cast(),
                data.len(),
                std::ptr::null_mut(),
                Some(record_release),
                std::ptr::null_mut(),
            );
        }
        let ran_on = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the release function runs");
        assert_ne!(ran_on, std::thread::current().id());
    }
}
