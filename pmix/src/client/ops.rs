//! The client's calls beyond data exchange and events (v5.0 ch. 7, 12, 13, 16): spawn,
//! connect and disconnect, query, logging, allocation requests, job control, process
//! monitoring and credentials. Each sends one request of `wire::ops` and reads its typed
//! reply; the rules of queries themselves are in [`crate::query`].

use crate::Error;
use crate::model::{
    AllocDirective, App, ByteObject, Info, Kval, Nspace, Proc, Query, Status, attr,
};
use crate::query;
use crate::wire::Request;
use crate::wire::ops::Op;

use super::core::replies::{self, QueryPlan};
use super::{Client, Pending};

impl Client {
    /// `PMIx_Spawn`: ask the host to start a job of `apps` with the job-level directives
    /// `job_info` (v5.0 §12.2.1); the new job's namespace. Its job information comes with the
    /// answer and is kept, so gets of it are answered locally. A job that cannot start fails
    /// with the standard's status (`PMIX_ERR_JOB_EXE_NOT_FOUND`, …).
    pub async fn spawn(&self, job_info: &[Info], apps: &[App]) -> Result<Nspace, Error> {
        if apps.is_empty() || apps.iter().any(|a| a.maxprocs <= 0) {
            return Err(Status::ERR_BAD_PARAM.into());
        }
        let req = Request::Op(Op::Spawn {
            job_info: job_info.to_vec(),
            apps: apps.to_vec(),
        });
        let (nspace, job_info) = replies::spawned(self.inner.conn.request(&req).await?)?;
        if !job_info.is_empty() {
            self.keep_job_info(&nspace, &job_info)?;
        }
        Ok(nspace)
    }

    /// `PMIx_Spawn_nb`: start the spawn now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn spawn_nb(&self, job_info: &[Info], apps: &[App]) -> Pending<Nspace> {
        let (client, job_info, apps) = (self.clone(), job_info.to_vec(), apps.to_vec());
        Pending(self.run_nb(async move { client.spawn(&job_info, &apps).await }))
    }

    /// Keep another job's information (from a spawn or a connect) for local gets.
    fn keep_job_info(&self, nspace: &Nspace, kvals: &[Kval]) -> Result<(), Error> {
        self.state().keep_job_info(nspace, kvals)
    }

    /// `PMIx_Log`: log `data` (each info a channel, such as `PMIX_LOG_STDERR`, and its
    /// message) as `directives` say, through the server and its host (v5.0 §12.4.1). The
    /// request carries `PMIX_LOG_TIMESTAMP` when the directives give one.
    pub async fn log(&self, data: &[Info], directives: &[Info]) -> Result<(), Error> {
        if data.is_empty() {
            return Err(Status::ERR_BAD_PARAM.into());
        }
        let timestamp = directives
            .iter()
            .find(|i| i.key.as_str() == attr::LOG_TIMESTAMP.wire_key())
            .and_then(|i| i.value.to_i64())
            .unwrap_or(0);
        let req = Request::Op(Op::Log {
            timestamp: crate::model::Time(timestamp),
            data: data.to_vec(),
            directives: directives.to_vec(),
        });
        self.status_of(&req).await
    }

    /// `PMIx_Log_nb`: start the log request now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn log_nb(&self, data: &[Info], directives: &[Info]) -> Pending<()> {
        let (client, data, directives) = (self.clone(), data.to_vec(), directives.to_vec());
        Pending(self.run_nb(async move { client.log(&data, &directives).await }))
    }

    /// `PMIx_Allocation_request`: ask the host for a new allocation, or to extend, release or
    /// reacquire one (v5.0 §13.1.1); what the host answered (`PMIX_ALLOC_ID`, …).
    pub async fn allocation_request(
        &self,
        directive: AllocDirective,
        info: &[Info],
    ) -> Result<Vec<Info>, Error> {
        self.infos_of(&Request::Op(Op::Alloc {
            directive,
            info: info.to_vec(),
        }))
        .await
    }

    /// `PMIx_Job_control`: ask the host to act on `targets` (none: this process's namespace)
    /// as `directives` say: signal, pause, resume, kill, terminate, cleanup, … (§13.2.1).
    pub async fn job_control(
        &self,
        targets: &[Proc],
        directives: &[Info],
    ) -> Result<Vec<Info>, Error> {
        self.infos_of(&Request::Op(Op::JobControl {
            targets: targets.to_vec(),
            directives: directives.to_vec(),
        }))
        .await
    }

    /// `PMIx_Process_monitor`: ask the host to watch what `monitor` names and raise `error`
    /// when it fails (§13.3.1). `PMIX_SEND_HEARTBEAT` is [`Client::heartbeat`].
    pub async fn process_monitor(
        &self,
        monitor: &Info,
        error: Status,
        directives: &[Info],
    ) -> Result<Vec<Info>, Error> {
        if monitor.key.as_str() == attr::SEND_HEARTBEAT.wire_key() {
            return self.heartbeat().await.map(|()| Vec::new());
        }
        self.infos_of(&Request::Op(Op::Monitor {
            monitor: monitor.clone(),
            error,
            directives: directives.to_vec(),
        }))
        .await
    }

    /// `PMIx_Heartbeat`: one heartbeat for a `PMIX_MONITOR_HEARTBEAT` monitor of this process
    /// (the standard's macro: `PMIx_Process_monitor_nb` with `PMIX_SEND_HEARTBEAT`). Sent
    /// one way, as OpenPMIx's clients do: an empty message under the heartbeat tag.
    pub async fn heartbeat(&self) -> Result<(), Error> {
        self.inner.conn.heartbeat().await
    }

    /// `PMIx_Allocation_request_nb` (see [`Client::get_nb`]).
    pub fn allocation_request_nb(
        &self,
        directive: AllocDirective,
        info: &[Info],
    ) -> Pending<Vec<Info>> {
        let (client, info) = (self.clone(), info.to_vec());
        Pending(self.run_nb(async move { client.allocation_request(directive, &info).await }))
    }

    /// `PMIx_Job_control_nb` (see [`Client::get_nb`]).
    pub fn job_control_nb(&self, targets: &[Proc], directives: &[Info]) -> Pending<Vec<Info>> {
        let (client, targets, directives) = (self.clone(), targets.to_vec(), directives.to_vec());
        Pending(self.run_nb(async move { client.job_control(&targets, &directives).await }))
    }

    /// `PMIx_Process_monitor_nb` (see [`Client::get_nb`]).
    pub fn process_monitor_nb(
        &self,
        monitor: &Info,
        error: Status,
        directives: &[Info],
    ) -> Pending<Vec<Info>> {
        let (client, monitor, directives) = (self.clone(), monitor.clone(), directives.to_vec());
        Pending(
            self.run_nb(async move { client.process_monitor(&monitor, error, &directives).await }),
        )
    }

    /// `PMIx_Get_credential`: a credential vouching for this process, and what comes with it
    /// (`PMIX_CRED_TYPE`, …) (v5.0 §16.1.1). This crate's server seals its own (see
    /// [`crate::server::credential`]).
    pub async fn get_credential(&self, info: &[Info]) -> Result<(ByteObject, Vec<Info>), Error> {
        let req = Request::Op(Op::GetCredential {
            info: info.to_vec(),
        });
        replies::credential(self.inner.conn.request(&req).await?)
    }

    /// `PMIx_Validate_credential`: whether `credential` is valid, and what it states (the
    /// user, group and process it vouches for) (§16.2.1). One that is not is
    /// `PMIX_ERR_INVALID_CRED`.
    pub async fn validate_credential(
        &self,
        credential: &[u8],
        directives: &[Info],
    ) -> Result<Vec<Info>, Error> {
        self.infos_of(&Request::Op(Op::ValidateCredential {
            credential: ByteObject(credential.to_vec()),
            directives: directives.to_vec(),
        }))
        .await
    }

    /// `PMIx_Get_credential_nb` (see [`Client::get_nb`]).
    pub fn get_credential_nb(&self, info: &[Info]) -> Pending<(ByteObject, Vec<Info>)> {
        let (client, info) = (self.clone(), info.to_vec());
        Pending(self.run_nb(async move { client.get_credential(&info).await }))
    }

    /// `PMIx_Validate_credential_nb` (see [`Client::get_nb`]).
    pub fn validate_credential_nb(
        &self,
        credential: &[u8],
        directives: &[Info],
    ) -> Pending<Vec<Info>> {
        let (client, credential, directives) =
            (self.clone(), credential.to_vec(), directives.to_vec());
        Pending(
            self.run_nb(async move { client.validate_credential(&credential, &directives).await }),
        )
    }

    /// A request answered by a status and infos.
    async fn infos_of(&self, req: &Request) -> Result<Vec<Info>, Error> {
        replies::infos(self.inner.conn.request(req).await?)
    }

    /// `PMIx_Connect`: connect this process with `procs` (v5.0 §12.3.1), a collective: it
    /// completes when every process of the set has called it. The job information of the
    /// other namespaces in the set comes back with the answer and is kept, so gets of it are
    /// answered locally.
    pub async fn connect(&self, procs: &[Proc], info: &[Info]) -> Result<(), Error> {
        let req = Request::Op(Op::Connect {
            procs: procs.to_vec(),
            info: info.to_vec(),
        });
        for job in replies::connected(self.inner.conn.request(&req).await?)? {
            if let Ok(nspace) = Nspace::new(&job.nspace) {
                self.keep_job_info(&nspace, &job.kvals)?;
            }
        }
        Ok(())
    }

    /// `PMIx_Disconnect`: end the connection of `procs` made by [`Client::connect`]
    /// (§12.3.3), a collective as well. Processes never connected are
    /// `PMIX_ERR_INVALID_OPERATION`.
    pub async fn disconnect(&self, procs: &[Proc], info: &[Info]) -> Result<(), Error> {
        let req = Request::Op(Op::Disconnect {
            procs: procs.to_vec(),
            info: info.to_vec(),
        });
        self.status_of(&req).await
    }

    /// `PMIx_Connect_nb`: start the connect now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn connect_nb(&self, procs: &[Proc], info: &[Info]) -> Pending<()> {
        let (client, procs, info) = (self.clone(), procs.to_vec(), info.to_vec());
        Pending(self.run_nb(async move { client.connect(&procs, &info).await }))
    }

    /// `PMIx_Disconnect_nb`: start the disconnect now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn disconnect_nb(&self, procs: &[Proc], info: &[Info]) -> Pending<()> {
        let (client, procs, info) = (self.clone(), procs.to_vec(), info.to_vec());
        Pending(self.run_nb(async move { client.disconnect(&procs, &info).await }))
    }

    /// `PMIx_Query_info`: answer `queries` (v5.0 §7.1.2) with one `PMIX_QUERY_RESULTS` per
    /// query (see [`crate::query`]). Queries that pair `PMIX_PROCID` with `PMIX_NSPACE` or
    /// `PMIX_RANK` are refused here with `PMIX_ERR_BAD_PARAM`. The client and tool levels of
    /// attribute support are answered by this library; everything else goes to the server,
    /// which answers what it holds and asks its host for the rest. Answers are not cached, so
    /// every query is fresh, as `PMIX_QUERY_REFRESH_CACHE` asks.
    pub async fn query(&self, queries: &[Query]) -> Result<query::Answered, Error> {
        let plan = QueryPlan::new(queries)?;
        let reply = match plan.request() {
            Some(req) => Some(self.inner.conn.request(&req).await),
            None => None,
        };
        plan.answer(reply)
    }

    /// `PMIx_Query_info_nb`: start the query now and return its eventual result (see
    /// [`Client::get_nb`]). Bad queries are refused before anything starts.
    pub fn query_nb(&self, queries: &[Query]) -> Result<Pending<query::Answered>, Error> {
        query::check(queries)?;
        let (client, queries) = (self.clone(), queries.to_vec());
        Ok(Pending(
            self.run_nb(async move { client.query(&queries).await }),
        ))
    }
}
