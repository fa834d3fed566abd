//! What a call is, as the runners and the coverage table ask: its name and APIs, whether it
//! blocks, who makes it (a rank, the tool, a server) and the attributes it carries.

use super::super::{attribute, key_string, scope_named};
use super::*;

impl Call {
    /// The call's name in steps.
    pub fn name(&self) -> &'static str {
        match self {
            Call::Put { .. } => "put",
            Call::StoreInternal { .. } => "store_internal",
            Call::Commit => "commit",
            Call::Fence { .. } => "fence",
            Call::Get { handle: None, .. } => "get",
            Call::Get { .. } => "get_nb",
            Call::Await { .. } => "await",
            Call::Publish { .. } => "publish",
            Call::Lookup { .. } => "lookup",
            Call::Unpublish { .. } => "unpublish",
            Call::Init => "init",
            Call::Finalize => "finalize",
            Call::Vanish => "vanish",
            Call::Initialized => "initialized",
            Call::GetVersion => "get_version",
            Call::Progress => "progress",
            Call::Abort { .. } => "abort",
            Call::RegisterEventHandler { .. } => "register_event_handler",
            Call::DeregisterEventHandler { .. } => "deregister_event_handler",
            Call::Events { .. } => "events",
            Call::NotifyEvent { .. } => "notify_event",
            Call::Log { .. } => "log",
            Call::Query { .. } => "query",
            Call::Spawn { .. } => "spawn",
            Call::Connect { .. } => "connect",
            Call::Disconnect { .. } => "disconnect",
            Call::ResolvePeers { .. } => "resolve_peers",
            Call::ResolveNodes { .. } => "resolve_nodes",
            Call::AllocationRequest { .. } => "allocation_request",
            Call::JobControl { .. } => "job_control",
            Call::ProcessMonitor { .. } => "process_monitor",
            Call::GetCredential { .. } => "get_credential",
            Call::ValidateCredential { .. } => "validate_credential",
            Call::GroupConstruct { .. } => "group_construct",
            Call::GroupDestruct { .. } => "group_destruct",
            Call::GroupInvite { .. } => "group_invite",
            Call::GroupJoin { .. } => "group_join",
            Call::GroupLeave { .. } => "group_leave",
            Call::IofPull { .. } => "iof_pull",
            Call::IofDeregister { .. } => "iof_deregister",
            Call::IofOutput { .. } => "iof_output",
            Call::IofPush { .. } => "iof_push",
            Call::FabricRegister { .. } => "fabric_register",
            Call::FabricUpdate { .. } => "fabric_update",
            Call::FabricDeregister { .. } => "fabric_deregister",
            Call::GetCpuset { .. } => "get_cpuset",
            Call::GetRelativeLocality { .. } => "get_relative_locality",
            Call::ComputeDistances { .. } => "compute_distances",
            Call::String { .. } => "string",
            Call::DataPack { .. } => "data_pack",
            Call::DataCopy { .. } => "data_copy",
            Call::DataPrint { .. } => "data_print",
            Call::DataUnload { .. } => "data_unload",
            Call::DataEmbed { .. } => "data_embed",
            Call::DataCopyPayload { .. } => "data_copy_payload",
            Call::DataCompress { .. } => "data_compress",
            Call::ValueLoad { .. } => "value_load",
            Call::ValueUnload { .. } => "value_unload",
            Call::ValueXfer { .. } => "value_xfer",
            Call::InfoLoad { .. } => "info_load",
            Call::InfoXfer { .. } => "info_xfer",
            Call::InfoList { .. } => "info_list",
            Call::LoadTopology { .. } => "load_topology",
            Call::TopologyDestruct => "topology_destruct",
            Call::ParseCpusetString { .. } => "parse_cpuset_string",
            Call::ServerRegisterNspace { .. } => "server_register_nspace",
            Call::ServerDeregisterNspace { .. } => "server_deregister_nspace",
            Call::ServerRegisterClient { .. } => "server_register_client",
            Call::ServerDeregisterClient { .. } => "server_deregister_client",
            Call::ServerSetupFork { .. } => "server_setup_fork",
            Call::ServerDmodexRequest { .. } => "server_dmodex_request",
            Call::ServerSetupApplication { .. } => "server_setup_application",
            Call::ServerSetupLocalSupport { .. } => "server_setup_local_support",
            Call::ServerIofDeliver { .. } => "server_iof_deliver",
            Call::ServerCollectInventory { .. } => "server_collect_inventory",
            Call::ServerDeliverInventory { .. } => "server_deliver_inventory",
            Call::ServerDefineProcessSet { .. } => "server_define_process_set",
            Call::ServerDeleteProcessSet { .. } => "server_delete_process_set",
            Call::ServerNotifyEvent { .. } => "server_notify_event",
            Call::ServerRegisterResources { .. } => "server_register_resources",
            Call::ServerDeregisterResources { .. } => "server_deregister_resources",
            Call::GenerateRegex { .. } => "generate_regex",
            Call::GeneratePpn { .. } => "generate_ppn",
            Call::ServerGenerateLocalityString { .. } => "server_generate_locality_string",
            Call::ServerGenerateCpusetString { .. } => "server_generate_cpuset_string",
            Call::RegisterAttributes { .. } => "register_attributes",
            Call::ServerFinalize => "server_finalize",
            Call::ToolInit { .. } => "tool_init",
            Call::ToolFinalize => "tool_finalize",
            Call::ToolConnectToServer { .. } => "tool_connect_to_server",
            Call::ToolAttachToServer { .. } => "tool_attach_to_server",
            Call::ToolSetServer { .. } => "tool_set_server",
            Call::ToolGetServers => "tool_get_servers",
            Call::ToolDisconnect => "tool_disconnect",
        }
    }

    /// Whether the step asks for the non-blocking form of its API.
    pub fn nb(&self) -> bool {
        match self {
            Call::Fence { nb, .. }
            | Call::Publish { nb, .. }
            | Call::Lookup { nb, .. }
            | Call::Unpublish { nb, .. }
            | Call::Log { nb, .. }
            | Call::Query { nb, .. }
            | Call::Spawn { nb, .. }
            | Call::Connect { nb, .. }
            | Call::Disconnect { nb, .. }
            | Call::AllocationRequest { nb, .. }
            | Call::JobControl { nb, .. }
            | Call::ProcessMonitor { nb, .. }
            | Call::GetCredential { nb, .. }
            | Call::ValidateCredential { nb, .. }
            | Call::GroupConstruct { nb, .. }
            | Call::GroupDestruct { nb, .. }
            | Call::GroupInvite { nb, .. }
            | Call::GroupJoin { nb, .. }
            | Call::GroupLeave { nb, .. }
            | Call::FabricRegister { nb, .. }
            | Call::FabricUpdate { nb }
            | Call::FabricDeregister { nb }
            | Call::ComputeDistances { nb, .. } => *nb,
            Call::Get { handle, .. } => handle.is_some(),
            _ => false,
        }
    }

    /// The standard's API the call exercises (none for script actions).
    pub fn api(&self) -> Option<&'static str> {
        Some(match self {
            Call::Put { .. } => "PMIx_Put",
            Call::StoreInternal { .. } => "PMIx_Store_internal",
            Call::Commit => "PMIx_Commit",
            Call::Fence { nb, .. } => pick(*nb, "PMIx_Fence", "PMIx_Fence_nb"),
            Call::Get { handle: None, .. } => "PMIx_Get",
            Call::Get { .. } => "PMIx_Get_nb",
            Call::Publish { nb, .. } => pick(*nb, "PMIx_Publish", "PMIx_Publish_nb"),
            Call::Lookup { nb, .. } => pick(*nb, "PMIx_Lookup", "PMIx_Lookup_nb"),
            Call::Unpublish { nb, .. } => pick(*nb, "PMIx_Unpublish", "PMIx_Unpublish_nb"),
            Call::Init => "PMIx_Init",
            Call::Finalize => "PMIx_Finalize",
            Call::Initialized => "PMIx_Initialized",
            Call::GetVersion => "PMIx_Get_version",
            Call::Progress => "PMIx_Progress",
            Call::Abort { .. } => "PMIx_Abort",
            Call::RegisterEventHandler { .. } => "PMIx_Register_event_handler",
            Call::DeregisterEventHandler { .. } => "PMIx_Deregister_event_handler",
            Call::NotifyEvent { .. } => "PMIx_Notify_event",
            Call::ResolvePeers { .. } => "PMIx_Resolve_peers",
            Call::ResolveNodes { .. } => "PMIx_Resolve_nodes",
            Call::IofPull { .. } => "PMIx_IOF_pull",
            Call::IofDeregister { .. } => "PMIx_IOF_deregister",
            Call::IofPush { .. } => "PMIx_IOF_push",
            Call::GetCpuset { .. } => "PMIx_Get_cpuset",
            Call::GetRelativeLocality { .. } => "PMIx_Get_relative_locality",
            Call::Log { nb, .. } => pick(*nb, "PMIx_Log", "PMIx_Log_nb"),
            Call::Query { nb, .. } => pick(*nb, "PMIx_Query_info", "PMIx_Query_info_nb"),
            Call::Spawn { nb, .. } => pick(*nb, "PMIx_Spawn", "PMIx_Spawn_nb"),
            Call::Connect { nb, .. } => pick(*nb, "PMIx_Connect", "PMIx_Connect_nb"),
            Call::Disconnect { nb, .. } => pick(*nb, "PMIx_Disconnect", "PMIx_Disconnect_nb"),
            Call::AllocationRequest { nb, .. } => {
                pick(*nb, "PMIx_Allocation_request", "PMIx_Allocation_request_nb")
            }
            Call::JobControl { nb, .. } => pick(*nb, "PMIx_Job_control", "PMIx_Job_control_nb"),
            Call::ProcessMonitor { nb, .. } => {
                pick(*nb, "PMIx_Process_monitor", "PMIx_Process_monitor_nb")
            }
            Call::GetCredential { nb, .. } => {
                pick(*nb, "PMIx_Get_credential", "PMIx_Get_credential_nb")
            }
            Call::ValidateCredential { nb, .. } => pick(
                *nb,
                "PMIx_Validate_credential",
                "PMIx_Validate_credential_nb",
            ),
            Call::GroupConstruct { nb, .. } => {
                pick(*nb, "PMIx_Group_construct", "PMIx_Group_construct_nb")
            }
            Call::GroupDestruct { nb, .. } => {
                pick(*nb, "PMIx_Group_destruct", "PMIx_Group_destruct_nb")
            }
            Call::GroupInvite { nb, .. } => pick(*nb, "PMIx_Group_invite", "PMIx_Group_invite_nb"),
            Call::GroupJoin { nb, .. } => pick(*nb, "PMIx_Group_join", "PMIx_Group_join_nb"),
            Call::GroupLeave { nb, .. } => pick(*nb, "PMIx_Group_leave", "PMIx_Group_leave_nb"),
            Call::FabricRegister { nb, .. } => {
                pick(*nb, "PMIx_Fabric_register", "PMIx_Fabric_register_nb")
            }
            Call::FabricUpdate { nb } => pick(*nb, "PMIx_Fabric_update", "PMIx_Fabric_update_nb"),
            Call::FabricDeregister { nb } => {
                pick(*nb, "PMIx_Fabric_deregister", "PMIx_Fabric_deregister_nb")
            }
            Call::ComputeDistances { nb, .. } => {
                pick(*nb, "PMIx_Compute_distances", "PMIx_Compute_distances_nb")
            }
            // None only for a name loading refuses.
            Call::String { function, .. } => {
                return crate::api::support::string_function(function).map(|f| f.c_name());
            }
            Call::DataPack { .. } => "PMIx_Data_pack",
            Call::DataCopy { .. } => "PMIx_Data_copy",
            Call::DataPrint { .. } => "PMIx_Data_print",
            Call::DataUnload { .. } => "PMIx_Data_unload",
            Call::DataEmbed { .. } => "PMIx_Data_embed",
            Call::DataCopyPayload { .. } => "PMIx_Data_copy_payload",
            Call::DataCompress { .. } => "PMIx_Data_compress",
            Call::ValueLoad { .. } => "PMIx_Value_load",
            Call::ValueUnload { .. } => "PMIx_Value_unload",
            Call::ValueXfer { .. } => "PMIx_Value_xfer",
            Call::InfoLoad { .. } => "PMIx_Info_load",
            Call::InfoXfer { .. } => "PMIx_Info_xfer",
            Call::InfoList { .. } => "PMIx_Info_list_convert",
            Call::LoadTopology { .. } => "PMIx_Load_topology",
            Call::TopologyDestruct => "PMIx_Topology_destruct",
            Call::ParseCpusetString { .. } => "PMIx_Parse_cpuset_string",
            Call::ServerRegisterNspace { .. } => "PMIx_server_register_nspace",
            Call::ServerDeregisterNspace { .. } => "PMIx_server_deregister_nspace",
            Call::ServerRegisterClient { .. } => "PMIx_server_register_client",
            Call::ServerDeregisterClient { .. } => "PMIx_server_deregister_client",
            Call::ServerSetupFork { .. } => "PMIx_server_setup_fork",
            Call::ServerDmodexRequest { .. } => "PMIx_server_dmodex_request",
            Call::ServerSetupApplication { .. } => "PMIx_server_setup_application",
            Call::ServerSetupLocalSupport { .. } => "PMIx_server_setup_local_support",
            Call::ServerIofDeliver { .. } => "PMIx_server_IOF_deliver",
            Call::ServerCollectInventory { .. } => "PMIx_server_collect_inventory",
            Call::ServerDeliverInventory { .. } => "PMIx_server_deliver_inventory",
            Call::ServerDefineProcessSet { .. } => "PMIx_server_define_process_set",
            Call::ServerDeleteProcessSet { .. } => "PMIx_server_delete_process_set",
            Call::ServerNotifyEvent { .. } => "PMIx_Notify_event",
            Call::ServerRegisterResources { .. } => "PMIx_server_register_resources",
            Call::ServerDeregisterResources { .. } => "PMIx_server_deregister_resources",
            Call::GenerateRegex { .. } => "PMIx_generate_regex",
            Call::GeneratePpn { .. } => "PMIx_generate_ppn",
            Call::ServerGenerateLocalityString { .. } => "PMIx_server_generate_locality_string",
            Call::ServerGenerateCpusetString { .. } => "PMIx_server_generate_cpuset_string",
            Call::RegisterAttributes { .. } => "PMIx_Register_attributes",
            Call::ServerFinalize => "PMIx_server_finalize",
            Call::ToolInit { .. } => "PMIx_tool_init",
            Call::ToolFinalize => "PMIx_tool_finalize",
            Call::ToolConnectToServer { .. } => "PMIx_tool_connect_to_server",
            Call::ToolAttachToServer { .. } => "PMIx_tool_attach_to_server",
            Call::ToolSetServer { .. } => "PMIx_tool_set_server",
            Call::ToolGetServers => "PMIx_tool_get_servers",
            Call::ToolDisconnect => "PMIx_tool_disconnect",
            Call::Await { .. } | Call::Vanish | Call::Events { .. } | Call::IofOutput { .. } => {
                return None;
            }
        })
    }

    /// The APIs the call makes besides [`Call::api`] (a support step packs before it
    /// unloads, starts a list before it converts it…). A vector names them in `apis`, and its
    /// section cites theirs: loading checks both.
    pub fn more_apis(&self) -> Vec<&'static str> {
        match self {
            // Packed under another type code, the values are there to be refused.
            Call::DataPack {
                data_type: None, ..
            } => vec!["PMIx_Data_unpack"],
            Call::DataUnload { .. } => vec!["PMIx_Data_pack", "PMIx_Data_unpack", "PMIx_Data_load"],
            Call::DataEmbed { .. } => {
                vec!["PMIx_Data_pack", "PMIx_Data_unpack", "PMIx_Data_unload"]
            }
            Call::DataCopyPayload { .. } => vec!["PMIx_Data_pack", "PMIx_Data_unpack"],
            Call::InfoList { add, xfer } => {
                let mut out = vec!["PMIx_Info_list_start"];
                if !add.is_empty() {
                    out.push("PMIx_Info_list_add");
                }
                if !xfer.is_empty() {
                    out.push("PMIx_Info_list_xfer");
                }
                out.push("PMIx_Info_list_release");
                out
            }
            Call::TopologyDestruct => vec!["PMIx_Load_topology", "PMIx_Data_copy"],
            _ => Vec::new(),
        }
    }

    /// Whether the vector's tool makes the call (`proc = "tool"`).
    pub fn by_tool(&self) -> bool {
        self.name().starts_with("tool_")
    }

    /// Whether the vector's tool may make the call: its own, and the client calls a tool
    /// makes of its server (I/O forwarding, event handlers, and publish, lookup and unpublish
    /// in their non-blocking forms).
    pub fn tool_may_make(&self) -> bool {
        self.by_tool()
            || matches!(
                self,
                Call::Publish { nb: true, .. }
                    | Call::Lookup { nb: true, .. }
                    | Call::Unpublish { nb: true, .. }
                    | Call::IofPull { .. }
                    | Call::IofOutput { .. }
                    | Call::IofDeregister { .. }
                    | Call::IofPush { .. }
                    | Call::RegisterEventHandler { .. }
                    | Call::DeregisterEventHandler { .. }
                    | Call::Events { .. }
            )
    }

    /// Whether a node's server makes the call (`proc = "server:NODE"`).
    pub fn by_server(&self) -> bool {
        self.name().starts_with("server_")
            || matches!(
                self,
                Call::GenerateRegex { .. }
                    | Call::GeneratePpn { .. }
                    | Call::RegisterAttributes { .. }
            )
    }

    /// The attribute names the call uses (keys and info keys that are attributes).
    pub fn attributes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut key = |k: &str| {
            if let Some(d) = attribute(k) {
                out.push(d.name.to_owned());
            }
        };
        match self {
            Call::Put { key: k, .. } | Call::StoreInternal { key: k, .. } => key(k),
            Call::Get { key: k, info, .. } => {
                key(k);
                info.iter().flat_map(InfoSpec::keys).for_each(&mut key);
            }
            Call::Fence { info, .. } | Call::Publish { info, .. } => {
                info.iter().flat_map(InfoSpec::keys).for_each(&mut key);
            }
            Call::Lookup { keys, info, .. } | Call::Unpublish { keys, info, .. } => {
                keys.iter().for_each(|k| key(k));
                info.iter().flat_map(InfoSpec::keys).for_each(&mut key);
            }
            Call::Abort { .. }
            | Call::Commit
            | Call::Await { .. }
            | Call::Init
            | Call::Finalize
            | Call::Vanish
            | Call::Initialized
            | Call::GetVersion
            | Call::Progress
            | Call::DeregisterEventHandler { .. }
            | Call::Events { .. }
            | Call::IofOutput { .. }
            | Call::ResolvePeers { .. }
            | Call::ResolveNodes { .. }
            | Call::IofDeregister { .. }
            | Call::FabricUpdate { .. }
            | Call::FabricDeregister { .. }
            | Call::GetCpuset { .. }
            | Call::GetRelativeLocality { .. }
            | Call::String { .. }
            | Call::DataPack { .. }
            | Call::DataCopy { .. }
            | Call::DataPrint { .. }
            | Call::DataUnload { .. }
            | Call::DataEmbed { .. }
            | Call::DataCopyPayload { .. }
            | Call::DataCompress { .. }
            | Call::ValueLoad { .. }
            | Call::ValueUnload { .. }
            | Call::ValueXfer { .. }
            | Call::LoadTopology { .. }
            | Call::TopologyDestruct
            | Call::ParseCpusetString { .. }
            | Call::ServerDeregisterNspace { .. }
            | Call::ServerRegisterClient { .. }
            | Call::ServerDeregisterClient { .. }
            | Call::ServerSetupFork { .. }
            | Call::ServerDmodexRequest { .. }
            | Call::ServerDefineProcessSet { .. }
            | Call::ServerDeleteProcessSet { .. }
            | Call::GenerateRegex { .. }
            | Call::GeneratePpn { .. }
            | Call::ServerGenerateLocalityString { .. }
            | Call::ServerGenerateCpusetString { .. }
            | Call::ServerFinalize
            | Call::ToolFinalize
            | Call::ToolGetServers
            | Call::ToolDisconnect => {}
            Call::RegisterAttributes { attributes, .. } => attributes.iter().for_each(|k| key(k)),
            Call::RegisterEventHandler { info, .. }
            | Call::NotifyEvent { info, .. }
            | Call::ServerNotifyEvent { info, .. }
            | Call::Connect { info, .. }
            | Call::Disconnect { info, .. }
            | Call::AllocationRequest { info, .. }
            | Call::GetCredential { info, .. }
            | Call::ValidateCredential { info, .. }
            | Call::GroupConstruct { info, .. }
            | Call::GroupDestruct { info, .. }
            | Call::GroupInvite { info, .. }
            | Call::GroupJoin { info, .. }
            | Call::GroupLeave { info, .. }
            | Call::IofPull { info, .. }
            | Call::IofPush { info, .. }
            | Call::FabricRegister { info, .. }
            | Call::ComputeDistances { info, .. }
            | Call::ServerRegisterNspace { info, .. }
            | Call::ServerSetupApplication { info, .. }
            | Call::ServerSetupLocalSupport { info, .. }
            | Call::ServerIofDeliver { info, .. }
            | Call::ServerCollectInventory { info }
            | Call::ServerDeliverInventory { info }
            | Call::ServerRegisterResources { info }
            | Call::ServerDeregisterResources { info }
            | Call::ToolInit { info, .. }
            | Call::ToolConnectToServer { info }
            | Call::ToolAttachToServer { info }
            | Call::ToolSetServer { info } => {
                info.iter().flat_map(InfoSpec::keys).for_each(&mut key)
            }
            Call::InfoLoad { info } | Call::InfoXfer { info } => {
                info.keys().into_iter().for_each(&mut key)
            }
            Call::InfoList { add, xfer } => add
                .iter()
                .chain(xfer)
                .flat_map(InfoSpec::keys)
                .for_each(&mut key),
            Call::JobControl { directives, .. } => directives
                .iter()
                .flat_map(InfoSpec::keys)
                .for_each(&mut key),
            Call::Log {
                data, directives, ..
            } => {
                data.iter()
                    .chain(directives)
                    .flat_map(InfoSpec::keys)
                    .for_each(&mut key);
            }
            Call::ProcessMonitor {
                monitor,
                directives,
                ..
            } => std::iter::once(monitor)
                .chain(directives)
                .flat_map(InfoSpec::keys)
                .for_each(&mut key),
            Call::Query { queries, .. } => {
                for q in queries {
                    q.keys.iter().for_each(|k| key(k));
                    q.qualifiers
                        .iter()
                        .flat_map(InfoSpec::keys)
                        .for_each(&mut key);
                }
            }
            Call::Spawn { job_info, apps, .. } => {
                job_info.iter().flat_map(InfoSpec::keys).for_each(&mut key);
                apps.iter()
                    .flat_map(|a| &a.info)
                    .flat_map(InfoSpec::keys)
                    .for_each(&mut key);
            }
        }
        out
    }

    pub(in crate::vector) fn check(&self, nspace: &str) -> Result<(), String> {
        let infos = |list: &[InfoSpec]| -> Result<(), String> {
            for i in list {
                i.to_info(nspace)
                    .map_err(|e| format!("field `info`: {e}"))?;
            }
            Ok(())
        };
        match self {
            Call::Put { scope, key, value } => {
                scope_named(scope)?;
                key_string(key)?;
                value.to_value(nspace).map(|_| ())
            }
            Call::StoreInternal { target, key, value } => {
                if let Some(t) = target {
                    t.to_proc(nspace, Rank(0))?;
                }
                key_string(key)?;
                value.to_value(nspace).map(|_| ())
            }
            Call::Get {
                target, key, info, ..
            } => {
                if let Some(t) = target {
                    t.to_proc(nspace, Rank(0))?;
                }
                key_string(key)?;
                infos(info)
            }
            Call::Fence { procs, info, .. } => {
                for p in procs {
                    p.to_proc(nspace, Rank(0))?;
                }
                infos(info)
            }
            Call::Publish { info, .. } => infos(info),
            Call::Lookup { keys, info, .. } | Call::Unpublish { keys, info, .. } => {
                for k in keys {
                    key_string(k)?;
                }
                infos(info)
            }
            Call::Commit | Call::Await { .. } | Call::Init | Call::Finalize | Call::Vanish => {
                Ok(())
            }
            _ if self.by_server() => crate::server_api::resolve(self, nspace).map(|_| ()),
            _ if self.by_tool() => crate::tool_api::resolve(self, nspace).map(|_| ()),
            _ => crate::api::resolve(self, nspace, 0).map(|_| ()),
        }
    }
}

fn pick(nb: bool, blocking: &'static str, non_blocking: &'static str) -> &'static str {
    if nb { non_blocking } else { blocking }
}
