//! The C host's upcalls (`pmix_server_module_t`) as the crate's `Host`: each upcall is made
//! on a thread of the server's runtime's blocking pool (the host may block in it, or call
//! the library's server calls from it), with arguments that stay valid until the host
//! answers through the callback, from inside the upcall or later from any thread. A NULL
//! slot is an upcall the host does not support, answered as `pmix::host::defaults` answers
//! it: `PMIX_ERR_NOT_SUPPORTED`, except that without `client_connected(2)` or
//! `client_finalized` the client is simply let in or out, and without `log` the library logs
//! to the local channels itself, as OpenPMIx's server does.
//!
//! The list of upcalls comes from the crate's table (`pmix::for_each_upcall!`): the `Host`
//! implementation is generated from it, and a slot of `pmix_server_module_t` that no row
//! names does not compile.

use std::ffi::c_void;
use std::sync::PoisonError;

use pmix::host::defaults;
use pmix::model::{
    AllocDirective, App, DataRange, FabricOperation, GroupOperation, Info, IofChannel, Nspace,
    PData, Proc, Query, Status, Value,
};

use super::lend::{
    Lent, Sent, credential_done, info_done, lookup_done, modex_done, op_done, spawn_done,
    tool_done, upcall, validation_done,
};
use crate::state::server::ServerObjects;
use crate::types::{CApp, CQuery, CServerModule, CStatus, ConnectFn, InfoCb};

/// The C host behind the crate's server.
#[derive(Clone, Debug)]
pub(crate) struct CHost {
    pub(crate) module: CServerModule,
    pub(crate) objects: ServerObjects,
}

impl CHost {
    fn object_of(&self, proc: &Proc) -> Sent {
        let objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        Sent(objects.get(proc).copied().unwrap_or(0) as *mut c_void)
    }
}

/// Each upcall's C marshalling; the `Host` implementation below, generated from the table of
/// upcalls, calls these. A row without one here does not compile: the generated method would
/// call itself, a cycle an `async fn` cannot have.
impl CHost {
    async fn client_lost(&self, proc: Proc) {
        if let Err(status) = crate::state::host_events::client_lost(proc) {
            tracing::debug!("a lost client's event was not raised: {status:?}");
        }
    }

    async fn client_connected(&self, proc: Proc) -> Result<(), Status> {
        let object = self.object_of(&proc);
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        if let Some(f) = self.module.client_connected2 {
            let (info, n) = lent.infos(&[])?;
            let r = upcall(
                lent,
                || Ok(()),
                move |cb| {
                    // SAFETY: the host's upcall (pmix_server.h); its arguments live until it
                    // answers.
                    unsafe {
                        f(
                            p.get().cast(),
                            object.get(),
                            info.get().cast(),
                            n,
                            op_done,
                            cb,
                        )
                    }
                },
            );
            return r.await;
        }
        let Some(f) = self.module.client_connected else {
            return defaults::client_connected(proc).await;
        };
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), object.get(), op_done, cb) }
            },
        )
        .await
    }

    async fn client_finalized(&self, proc: Proc) -> Result<(), Status> {
        let Some(f) = self.module.client_finalized else {
            return defaults::client_finalized(proc).await;
        };
        let object = self.object_of(&proc);
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), object.get(), op_done, cb) }
            },
        )
        .await
    }

    async fn abort(
        &self,
        proc: Proc,
        status: Status,
        message: Option<String>,
        procs: Vec<Proc>,
    ) -> Result<(), Status> {
        let Some(f) = self.module.abort else {
            return defaults::abort(proc, status, message, procs).await;
        };
        let object = self.object_of(&proc);
        let mut lent = Lent::new();
        let me = lent.proc(&proc)?;
        let (targets, n) = lent.procs(&procs)?;
        let msg = match message {
            Some(m) => lent.string(&m)?,
            None => Sent(std::ptr::null_mut()),
        };
        let targets = if n == 0 {
            Sent(std::ptr::null_mut())
        } else {
            targets
        };
        let r = upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        me.get().cast(),
                        object.get(),
                        status.0,
                        msg.get().cast(),
                        targets.get().cast(),
                        n,
                        op_done,
                        cb,
                    )
                }
            },
        );
        r.await
    }

    async fn fence_nb(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let Some(f) = self.module.fence_nb else {
            return defaults::fence_nb(procs, info, data).await;
        };
        let mut lent = Lent::new();
        let (p, np) = lent.procs(&procs)?;
        let (i, ni) = lent.infos(&info)?;
        // The data is given, not lent: OpenPMIx's server hands the host a block of libc's
        // that becomes the host's (ORTE and PRRTE load it into a buffer of theirs and free
        // it; the project's C host frees it), and NULL when there is none.
        let d = if data.is_empty() {
            Sent(std::ptr::null_mut())
        } else {
            Sent(crate::boundary::c_bytes(&data)?.cast())
        };
        let nd = data.len();
        upcall(
            lent,
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        np,
                        i.get().cast(),
                        ni,
                        d.get().cast(),
                        nd,
                        modex_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn direct_modex(&self, proc: Proc, info: Vec<Info>) -> Result<Vec<u8>, Status> {
        let Some(f) = self.module.direct_modex else {
            return defaults::direct_modex(proc, info).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            lent,
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), i.get().cast(), ni, modex_done, cb) }
            },
        )
        .await
    }

    async fn publish(&self, proc: Proc, info: Vec<Info>) -> Result<(), Status> {
        let Some(f) = self.module.publish else {
            return defaults::publish(proc, info).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), i.get().cast(), ni, op_done, cb) }
            },
        )
        .await
    }

    async fn lookup(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<Vec<PData>, Status> {
        let Some(f) = self.module.lookup else {
            return defaults::lookup(proc, keys, info).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let k = lent.argv(&keys)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            lent,
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        k.get().cast(),
                        i.get().cast(),
                        ni,
                        lookup_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn unpublish(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let Some(f) = self.module.unpublish else {
            return defaults::unpublish(proc, keys, info).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let k = lent.argv(&keys)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        k.get().cast(),
                        i.get().cast(),
                        ni,
                        op_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn notify_event(
        &self,
        status: Status,
        source: Proc,
        range: DataRange,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let Some(f) = self.module.notify_event else {
            return defaults::notify_event(status, source, range, info).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&source)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        status.0,
                        p.get().cast(),
                        range.0,
                        i.get().cast(),
                        ni,
                        op_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn register_events(&self, codes: Vec<Status>, info: Vec<Info>) -> Result<(), Status> {
        let Some(f) = self.module.register_events else {
            return defaults::register_events(codes, info).await;
        };
        let mut lent = Lent::new();
        let (i, ni) = lent.infos(&info)?;
        let mut codes: Vec<CStatus> = codes.iter().map(|code| code.0).collect();
        let (c, nc) = (Sent(codes.as_mut_ptr().cast()), codes.len());
        upcall(
            (lent, codes),
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(c.get().cast(), nc, i.get().cast(), ni, op_done, cb) }
            },
        )
        .await
    }

    async fn deregister_events(&self, codes: Vec<Status>) -> Result<(), Status> {
        let Some(f) = self.module.deregister_events else {
            return defaults::deregister_events(codes).await;
        };
        let mut codes: Vec<CStatus> = codes.iter().map(|code| code.0).collect();
        let (c, nc) = (Sent(codes.as_mut_ptr().cast()), codes.len());
        upcall(
            codes,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(c.get().cast(), nc, op_done, cb) }
            },
        )
        .await
    }

    async fn spawn(
        &self,
        proc: Proc,
        job_info: Vec<Info>,
        apps: Vec<App>,
    ) -> Result<Nspace, Status> {
        let Some(f) = self.module.spawn else {
            return defaults::spawn(proc, job_info, apps).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let (i, ni) = lent.infos(&job_info)?;
        let values = apps.into_iter().map(|a| Value::App(Box::new(a))).collect();
        let (a, na) = lent.objects::<CApp>(values, pmix::model::DataType::APP)?;
        lent.apps = Some((a, na));
        let a = Sent(a.cast());
        // Answered at once, a spawn names no namespace: not one the server can use.
        let r = upcall(
            lent,
            || Err(Status::ERR_BAD_PARAM),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        i.get().cast(),
                        ni,
                        a.get().cast(),
                        na,
                        spawn_done,
                        cb,
                    )
                }
            },
        );
        r.await
    }

    async fn connect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        let Some(f) = self.module.connect else {
            return defaults::connect(procs, info).await;
        };
        self.collective(f, procs, info).await
    }

    async fn disconnect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        let Some(f) = self.module.disconnect else {
            return defaults::disconnect(procs, info).await;
        };
        self.collective(f, procs, info).await
    }

    async fn query(&self, proc: Proc, queries: Vec<Query>) -> Result<Vec<Info>, Status> {
        let Some(f) = self.module.query else {
            return defaults::query(proc, queries).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let values = queries
            .into_iter()
            .map(|q| Value::Query(Box::new(q)))
            .collect();
        let (q, nq) = lent.objects::<CQuery>(values, pmix::model::DataType::QUERY)?;
        lent.queries = Some((q, nq));
        let q = Sent(q.cast());
        upcall(
            lent,
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), q.get().cast(), nq, info_done, cb) }
            },
        )
        .await
    }

    async fn log(
        &self,
        proc: Proc,
        timestamp: i64,
        data: Vec<Info>,
        directives: Vec<Info>,
    ) -> Result<(), Status> {
        let Some(f) = self.module.log else {
            // A host without a log upcall leaves logging to the library, as OpenPMIx's
            // server does: the local channels (stderr, stdout, syslog).
            return defaults::log(proc, timestamp, data, directives).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let (d, nd) = lent.infos(&data)?;
        let (i, ni) = lent.infos(&directives)?;
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        d.get().cast(),
                        nd,
                        i.get().cast(),
                        ni,
                        op_done,
                        cb,
                    );
                    Status::SUCCESS.0
                }
            },
        )
        .await
    }

    async fn job_control(
        &self,
        proc: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let Some(f) = self.module.job_control else {
            return defaults::job_control(proc, targets, directives).await;
        };
        let mut lent = Lent::new();
        let (t, nt) = lent.procs(&targets)?;
        info_upcall(lent, &proc, &directives, move |p, i, ni, done, cb| {
            // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
            unsafe {
                f(
                    p.get().cast(),
                    t.get().cast(),
                    nt,
                    i.get().cast(),
                    ni,
                    done,
                    cb,
                )
            }
        })
        .await
    }

    async fn allocate(
        &self,
        proc: Proc,
        directive: AllocDirective,
        info: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let Some(f) = self.module.allocate else {
            return defaults::allocate(proc, directive, info).await;
        };
        info_upcall(Lent::new(), &proc, &info, move |p, i, ni, done, cb| {
            // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
            unsafe { f(p.get().cast(), directive.0, i.get().cast(), ni, done, cb) }
        })
        .await
    }

    async fn monitor(
        &self,
        proc: Proc,
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let Some(f) = self.module.monitor else {
            return defaults::monitor(proc, monitor, error, directives).await;
        };
        let mut lent = Lent::new();
        let (m, _) = lent.infos(std::slice::from_ref(&monitor))?;
        info_upcall(lent, &proc, &directives, move |p, i, ni, done, cb| {
            // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
            unsafe {
                f(
                    p.get().cast(),
                    m.get().cast(),
                    error.0,
                    i.get().cast(),
                    ni,
                    done,
                    cb,
                )
            }
        })
        .await
    }

    async fn group(
        &self,
        op: GroupOperation,
        group: String,
        procs: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let Some(f) = self.module.group else {
            return defaults::group(op, group, procs, directives).await;
        };
        let mut lent = Lent::new();
        let g = lent.string(&group)?;
        let (p, np) = lent.procs(&procs)?;
        let (i, ni) = lent.infos(&directives)?;
        upcall(
            lent,
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        op.0,
                        g.get().cast(),
                        p.get().cast(),
                        np,
                        i.get().cast(),
                        ni,
                        info_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn fabric(
        &self,
        proc: Proc,
        op: FabricOperation,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let Some(f) = self.module.fabric else {
            return defaults::fabric(proc, op, directives).await;
        };
        info_upcall(
            Lent::new(),
            &proc,
            &directives,
            move |p, i, ni, done, cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), op.0, i.get().cast(), ni, done, cb) }
            },
        )
        .await
    }

    async fn get_credential(
        &self,
        proc: Proc,
        info: Vec<Info>,
    ) -> Result<(Vec<u8>, Vec<Info>), Status> {
        let Some(f) = self.module.get_credential else {
            return defaults::get_credential(proc, info).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let (i, ni) = lent.infos(&info)?;
        // Answered at once, a request carries no credential.
        upcall(
            lent,
            || Err(Status::ERR_BAD_PARAM),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), i.get().cast(), ni, credential_done, cb) }
            },
        )
        .await
    }

    async fn validate_credential(
        &self,
        proc: Proc,
        credential: Vec<u8>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let Some(f) = self.module.validate_credential else {
            return defaults::validate_credential(proc, credential, directives).await;
        };
        let mut lent = Lent::new();
        let p = lent.proc(&proc)?;
        let c = lent.bytes(&credential)?;
        let (i, ni) = lent.infos(&directives)?;
        upcall(
            lent,
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        c.get().cast(),
                        i.get().cast(),
                        ni,
                        validation_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn iof_pull(
        &self,
        procs: Vec<Proc>,
        directives: Vec<Info>,
        channels: IofChannel,
    ) -> Result<(), Status> {
        let Some(f) = self.module.iof_pull else {
            return defaults::iof_pull(procs, directives, channels).await;
        };
        let mut lent = Lent::new();
        let (p, np) = lent.procs(&procs)?;
        let (i, ni) = lent.infos(&directives)?;
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        np,
                        i.get().cast(),
                        ni,
                        channels.0,
                        op_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn push_stdin(
        &self,
        source: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
        data: Option<Vec<u8>>,
    ) -> Result<(), Status> {
        let Some(f) = self.module.push_stdin else {
            return defaults::push_stdin(source, targets, directives, data).await;
        };
        let mut lent = Lent::new();
        let s = lent.proc(&source)?;
        let (t, nt) = lent.procs(&targets)?;
        let (i, ni) = lent.infos(&directives)?;
        let bo = match &data {
            Some(d) => lent.bytes(d)?,
            None => Sent(std::ptr::null_mut()),
        };
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                let (s, t, i, bo) = (s.get(), t.get(), i.get(), bo.get());
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it
                // answers; the data is NULL when there is none.
                unsafe { f(s.cast(), t.cast(), nt, i.cast(), ni, bo.cast(), op_done, cb) }
            },
        )
        .await
    }

    async fn tool_connected(&self, info: Vec<Info>) -> Result<Proc, Status> {
        let Some(f) = self.module.tool_connected else {
            return defaults::tool_connected(info).await;
        };
        let mut lent = Lent::new();
        let (i, ni) = lent.infos(&info)?;
        upcall(
            lent,
            || Err(Status::ERR_BAD_PARAM),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it
                // answers, which a void upcall does only through its callback.
                unsafe { f(i.get().cast(), ni, tool_done, cb) };
                Status::SUCCESS.0
            },
        )
        .await
    }
}

/// Generates `impl Host for CHost` from the table of upcalls: each method calls the C
/// marshalling of the same name above; and checks that every slot of `pmix_server_module_t`
/// is some upcall's.
macro_rules! c_host {
    ($(
        $(#[$doc:meta])*
        $code:literal $Var:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty
        [$(slot $slot:ident $c:literal)?]
        default $default:block
    )*) => {
        impl pmix::host::Host for CHost {
            fn supports_direct_modex(&self) -> bool {
                self.module.direct_modex.is_some()
            }

            $(
                async fn $name(&self, $($arg: $ty),*) -> $ret {
                    CHost::$name(self, $($arg),*).await
                }
            )*
        }

        // Every slot of the C module is a row's, but the 4.2 `client_connected` (the fallback
        // of `client_connected2`) and `listener` (never called): a slot added to the module
        // does not compile until a row or this list takes it.
        const _: fn(CServerModule) = |module| {
            let CServerModule {
                $($($slot: _,)?)*
                client_connected: _,
                listener: _,
            } = module;
        };
    };
}

pmix::for_each_upcall!(c_host);

impl CHost {
    /// A connect or a disconnect: the collective of `procs`.
    async fn collective(
        &self,
        f: ConnectFn,
        procs: Vec<Proc>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let mut lent = Lent::new();
        let (p, np) = lent.procs(&procs)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            lent,
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), np, i.get().cast(), ni, op_done, cb) }
            },
        )
        .await
    }
}

/// An upcall about the requester `proc` answered with infos (allocate, job control, monitor,
/// fabric): lends `proc` and `info` after what `lent` already holds, then calls `call` with
/// them, the callback `info_done` and its data.
async fn info_upcall(
    mut lent: Lent,
    proc: &Proc,
    info: &[Info],
    call: impl FnOnce(Sent, Sent, usize, InfoCb, *mut c_void) -> CStatus + Send + 'static,
) -> Result<Vec<Info>, Status> {
    let p = lent.proc(proc)?;
    let (i, ni) = lent.infos(info)?;
    upcall(
        lent,
        || Ok(Vec::new()),
        move |cb| call(p, i, ni, info_done, cb),
    )
    .await
}
