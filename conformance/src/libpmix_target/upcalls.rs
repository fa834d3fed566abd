//! The cluster host's answers to the upcalls of a C library's server, as they cross the
//! pipe from the node's process: each decoded, served by [`ClusterHost`] and packed back.

use pmix::model::{
    AllocDirective, DataRange, FabricOperation, GroupOperation, Info, PData, Status,
};
use pmix::server::Host;

use crate::cluster::ClusterHost;
use crate::pipes::{ToNode, UpcallMsg, from_id, pack_list, unpack_list};

/// An upcall's answer: its status, and the data, the lookup's finds or the infos it carries.
#[derive(Default)]
struct UpcallOutput {
    status: Status,
    data: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
    infos: Option<Vec<u8>>,
}

/// Answer a node's upcall with the cluster host.
pub(super) async fn serve_upcall(host: &ClusterHost, id: u64, call: UpcallMsg) -> ToNode {
    let reply = |r: Result<UpcallOutput, Status>| {
        let o = r.unwrap_or_else(|status| UpcallOutput {
            status,
            ..UpcallOutput::default()
        });
        ToNode::HostReply {
            id,
            status: o.status.0,
            data: o.data,
            found: o.found,
            infos: o.infos,
        }
    };
    let infos = |b: &[u8]| unpack_list::<Info>(b).map_err(|_| Status::ERR_BAD_PARAM);
    let done = UpcallOutput::default;
    let r = async {
        match call {
            UpcallMsg::Fence { procs, info, data } => {
                let procs = procs.iter().map(from_id).collect::<Result<Vec<_>, _>>()?;
                let d = host.fence_nb(procs, infos(&info)?, data).await?;
                Ok(UpcallOutput {
                    data: Some(d),
                    ..done()
                })
            }
            UpcallMsg::DirectModex { proc, info } => {
                let d = host.direct_modex(from_id(&proc)?, infos(&info)?).await?;
                Ok(UpcallOutput {
                    data: Some(d),
                    ..done()
                })
            }
            UpcallMsg::Publish { proc, info } => {
                host.publish(from_id(&proc)?, infos(&info)?).await?;
                Ok(done())
            }
            UpcallMsg::Lookup { proc, keys, info } => {
                let found = host
                    .lookup(from_id(&proc)?, keys.clone(), infos(&info)?)
                    .await?;
                // The host tells the library how much it found (v5.0 §9.6).
                Ok(UpcallOutput {
                    status: PData::lookup_status(&keys, &found),
                    found: Some(pack_list(&found)),
                    ..done()
                })
            }
            UpcallMsg::Unpublish { proc, keys, info } => {
                host.unpublish(from_id(&proc)?, keys, infos(&info)?).await?;
                Ok(done())
            }
            UpcallMsg::Group {
                op,
                group,
                procs,
                info,
            } => {
                let procs = procs.iter().map(from_id).collect::<Result<Vec<_>, _>>()?;
                let op = GroupOperation(op);
                let answer = host.group(op, group, procs, infos(&info)?).await?;
                Ok(UpcallOutput {
                    infos: Some(pack_list(&answer)),
                    ..done()
                })
            }
            UpcallMsg::Fabric { proc, op, info } => {
                let op = FabricOperation(op);
                let answer = host.fabric(from_id(&proc)?, op, infos(&info)?).await?;
                Ok(UpcallOutput {
                    infos: Some(pack_list(&answer)),
                    ..done()
                })
            }
            UpcallMsg::NotifyEvent {
                status,
                source,
                range,
                info,
            } => {
                let range = DataRange(range);
                host.notify_event(Status(status), from_id(&source)?, range, infos(&info)?)
                    .await?;
                Ok(done())
            }
            UpcallMsg::Connect { procs, info } => {
                let procs = procs.iter().map(from_id).collect::<Result<Vec<_>, _>>()?;
                host.connect(procs, infos(&info)?).await?;
                Ok(done())
            }
            UpcallMsg::Disconnect { procs, info } => {
                let procs = procs.iter().map(from_id).collect::<Result<Vec<_>, _>>()?;
                host.disconnect(procs, infos(&info)?).await?;
                Ok(done())
            }
            UpcallMsg::Allocate {
                proc,
                directive,
                info,
            } => {
                let directive = AllocDirective(directive);
                let answer = host
                    .allocate(from_id(&proc)?, directive, infos(&info)?)
                    .await?;
                Ok(UpcallOutput {
                    infos: Some(pack_list(&answer)),
                    ..done()
                })
            }
            UpcallMsg::JobControl {
                proc,
                targets,
                info,
            } => {
                let targets = targets.iter().map(from_id).collect::<Result<Vec<_>, _>>()?;
                let answer = host
                    .job_control(from_id(&proc)?, targets, infos(&info)?)
                    .await?;
                Ok(UpcallOutput {
                    infos: Some(pack_list(&answer)),
                    ..done()
                })
            }
            UpcallMsg::Monitor {
                proc,
                monitor,
                error,
                info,
            } => {
                let monitor = infos(&monitor)?.pop().ok_or(Status::ERR_BAD_PARAM)?;
                let answer = host
                    .monitor(from_id(&proc)?, monitor, Status(error), infos(&info)?)
                    .await?;
                Ok(UpcallOutput {
                    infos: Some(pack_list(&answer)),
                    ..done()
                })
            }
            UpcallMsg::ClientConnected { proc } => {
                host.client_connected(from_id(&proc)?).await?;
                Ok(done())
            }
            UpcallMsg::RegisterEvents { codes, info } => {
                let codes = codes.into_iter().map(Status).collect();
                host.register_events(codes, infos(&info)?).await?;
                Ok(done())
            }
            UpcallMsg::DeregisterEvents { codes } => {
                host.deregister_events(codes.into_iter().map(Status).collect())
                    .await?;
                Ok(done())
            }
            UpcallMsg::ClientFinalized { proc } => {
                host.client_finalized(from_id(&proc)?).await?;
                Ok(done())
            }
            UpcallMsg::Abort {
                proc,
                status,
                message,
                procs,
            } => {
                let procs = procs.iter().map(from_id).collect::<Result<Vec<_>, _>>()?;
                host.abort(from_id(&proc)?, Status(status), message, procs)
                    .await?;
                Ok(done())
            }
            UpcallMsg::GetCredential { proc, info } => {
                let (credential, info) =
                    host.get_credential(from_id(&proc)?, infos(&info)?).await?;
                Ok(UpcallOutput {
                    data: Some(credential),
                    infos: Some(pack_list(&info)),
                    ..done()
                })
            }
            UpcallMsg::ValidateCredential {
                proc,
                credential,
                info,
            } => {
                let answer = host
                    .validate_credential(from_id(&proc)?, credential, infos(&info)?)
                    .await?;
                Ok(UpcallOutput {
                    infos: Some(pack_list(&answer)),
                    ..done()
                })
            }
            UpcallMsg::Query { proc, queries } => {
                let queries = unpack_list(&queries).map_err(|_| Status::ERR_BAD_PARAM)?;
                let answer = host.query(from_id(&proc)?, queries).await?;
                Ok(UpcallOutput {
                    infos: Some(pack_list(&answer)),
                    ..done()
                })
            }
        }
    };
    reply(r.await)
}
