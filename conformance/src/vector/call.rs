//! The calls a step can make: the data-access calls and the script's actions, and the APIs of
//! the other chapters (resolved for a caller by [`crate::api::resolve`]); what each names for
//! the coverage table, and the checks a runner relies on.

use serde::{Deserialize, Serialize};

use super::{InfoSpec, TargetSpec, ValueSpec, attribute, key_string, scope_named, yes};
use pmix::model::Rank;

/// The API calls a step can make.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "call", rename_all = "snake_case", deny_unknown_fields)]
pub enum Call {
    /// `PMIx_Put`.
    Put {
        #[serde(default = "global")]
        scope: String,
        key: String,
        value: ValueSpec,
    },
    /// `PMIx_Store_internal` for the caller itself (or `target`).
    StoreInternal {
        #[serde(default)]
        target: Option<TargetSpec>,
        key: String,
        value: ValueSpec,
    },
    /// `PMIx_Commit`.
    Commit,
    /// `PMIx_Fence` over `procs` (the whole job when absent); `PMIx_Fence_nb` with `nb`.
    Fence {
        #[serde(default)]
        procs: Vec<TargetSpec>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Get` (`target` absent: a NULL proc, i.e. the caller).
    Get {
        #[serde(default)]
        target: Option<TargetSpec>,
        key: String,
        #[serde(default)]
        info: Vec<InfoSpec>,
        /// Start the get without waiting (`PMIx_Get_nb`); an `await` step collects it.
        #[serde(default)]
        handle: Option<String>,
        /// With `PMIX_GET_STATIC_VALUES`, give the library no storage (a NULL value
        /// pointer) instead of the caller's.
        #[serde(default)]
        no_storage: bool,
    },
    /// Wait for the result of a non-blocking call started with `handle`.
    Await { handle: String },
    /// `PMIx_Publish` (`PMIx_Publish_nb` with `nb`).
    Publish {
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Lookup` (`PMIx_Lookup_nb` with `nb`).
    Lookup {
        keys: Vec<String>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Unpublish` (`PMIx_Unpublish_nb` with `nb`).
    Unpublish {
        #[serde(default)]
        keys: Vec<String>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Init` of a rank listed in `setup.started_by_step`: its process starts now.
    Init,
    /// `PMIx_Finalize`.
    Finalize,
    /// The client process exits without finalizing (its connection closes).
    Vanish,
    /// `PMIx_Initialized`: the value is whether the library is initialised.
    Initialized,
    /// `PMIx_Get_version`: the value is the library's version string.
    GetVersion,
    /// `PMIx_Progress`.
    Progress,
    /// `PMIx_Abort` of `procs` (the caller's whole job when empty).
    Abort {
        #[serde(default = "error_status")]
        status: String,
        #[serde(default)]
        message: String,
        #[serde(default)]
        procs: Vec<TargetSpec>,
    },
    /// `PMIx_Register_event_handler` for `codes` (every code when empty); `handler` names
    /// the registration for the steps that follow.
    RegisterEventHandler {
        handler: String,
        #[serde(default)]
        codes: Vec<String>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        /// The status the handler ends its turn with (`PMIX_SUCCESS` when not given;
        /// `PMIX_EVENT_ACTION_COMPLETE` ends the chain).
        #[serde(default)]
        complete: Option<String>,
        /// The results it hands to the handlers after it.
        #[serde(default)]
        results: Vec<InfoSpec>,
    },
    /// `PMIx_Deregister_event_handler` of a handler registered by an earlier step.
    DeregisterEventHandler { handler: String },
    /// Wait until `handler` has received `count` events (at most `wait_ms`); the step's
    /// result is every event it received so far, in order.
    Events {
        handler: String,
        count: usize,
        #[serde(default = "event_wait_ms")]
        wait_ms: u64,
    },
    /// `PMIx_Notify_event` of `status`, with the caller as its source.
    NotifyEvent {
        status: String,
        /// A `PMIX_RANGE_*` name.
        range: String,
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_Log` (`PMIx_Log_nb` with `nb`).
    Log {
        data: Vec<InfoSpec>,
        #[serde(default)]
        directives: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Query_info`: the results are the answers.
    Query {
        queries: Vec<QuerySpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Spawn`: the value is the new job's namespace.
    Spawn {
        #[serde(default)]
        job_info: Vec<InfoSpec>,
        apps: Vec<AppSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Connect`.
    Connect {
        #[serde(default)]
        procs: Vec<TargetSpec>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Disconnect`.
    Disconnect {
        #[serde(default)]
        procs: Vec<TargetSpec>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Resolve_peers`: the value is the array of the job's processes on `node`
    /// (sorted: the standard fixes no order).
    ResolvePeers {
        node: String,
        /// The namespace (the vector's job when absent; `""` for every namespace).
        #[serde(default)]
        nspace: Option<String>,
    },
    /// `PMIx_Resolve_nodes`: the value is the comma-separated node list (sorted: the
    /// standard fixes no order).
    ResolveNodes {
        #[serde(default)]
        nspace: Option<String>,
    },
    /// `PMIx_Allocation_request` with a `PMIX_ALLOC_*` directive.
    AllocationRequest {
        directive: String,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Job_control` of `targets` (the caller's job when empty).
    JobControl {
        #[serde(default)]
        targets: Vec<TargetSpec>,
        directives: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Process_monitor`.
    ProcessMonitor {
        monitor: InfoSpec,
        #[serde(default = "error_status")]
        error: String,
        #[serde(default)]
        directives: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Get_credential`: the value is the credential (a byte object).
    GetCredential {
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Validate_credential` of `credential` (hex), or of the caller's last credential
    /// from `get_credential` when absent; with `altered`, its last byte changed.
    ValidateCredential {
        #[serde(default)]
        credential: Option<String>,
        #[serde(default)]
        altered: bool,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Group_construct`.
    GroupConstruct {
        group: String,
        procs: Vec<TargetSpec>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Group_destruct`.
    GroupDestruct {
        group: String,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Group_invite`.
    GroupInvite {
        group: String,
        procs: Vec<TargetSpec>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Group_join`: accept (or decline) an invitation from `leader`.
    GroupJoin {
        group: String,
        leader: TargetSpec,
        #[serde(default = "yes")]
        accept: bool,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Group_leave`.
    GroupLeave {
        group: String,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_IOF_pull` of `channels` (`stdout`, `stderr`, `stddiag`) from `procs`; `handler`
    /// names the registration.
    IofPull {
        handler: String,
        procs: Vec<TargetSpec>,
        channels: Vec<String>,
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_IOF_deregister` of a pull registered by an earlier step.
    IofDeregister { handler: String },
    /// Wait until the pull `handler` has been handed `bytes` bytes of output (at most
    /// `wait_ms`); the step's value is every byte it was handed so far, in order, as a byte
    /// object.
    IofOutput {
        handler: String,
        bytes: usize,
        #[serde(default = "event_wait_ms")]
        wait_ms: u64,
    },
    /// `PMIx_IOF_push` of `data` (text) to the stdin of `targets`; no data closes it.
    IofPush {
        targets: Vec<TargetSpec>,
        #[serde(default)]
        data: Option<String>,
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_Fabric_register`: the caller's fabric for the update and deregister steps.
    FabricRegister {
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Fabric_update` of the caller's registered fabric.
    FabricUpdate {
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Fabric_deregister` of the caller's registered fabric.
    FabricDeregister {
        #[serde(default)]
        nb: bool,
    },
    /// `PMIx_Get_cpuset` (`bind` = `process` or `thread`): the value is the cpuset.
    GetCpuset {
        #[serde(default = "bind_process")]
        bind: String,
    },
    /// `PMIx_Get_relative_locality` of two locality strings: the value is the locality.
    GetRelativeLocality {
        locality1: String,
        locality2: String,
    },
    /// `PMIx_Compute_distances` in the loaded topology from `cpus` (an hwloc list of
    /// processing units, `0`), or from the caller's cpuset (`PMIx_Get_cpuset`) when absent:
    /// the value is the number of devices.
    ComputeDistances {
        #[serde(default)]
        cpus: Option<String>,
        #[serde(default)]
        info: Vec<InfoSpec>,
        #[serde(default)]
        nb: bool,
    },

    // ---- support functions (v5.0 §3.2.8, §3.2.9, §3.5, chapter 11, §12.4), made by a rank
    // after its init; resolved by [`crate::api::support`] ----
    /// A `*_string` function of v5.0 §3.5 (`function`, by its C name) of `arg`: a constant
    /// of the function's code set by its C name, or a number; for `PMIx_Get_attribute_string`
    /// an attribute's name, for `PMIx_Get_attribute_name` a key string. The value is the text.
    String { function: String, arg: CodeArg },
    /// `PMIx_Data_pack` of the elements of `values` (an array) in one call, then
    /// `PMIx_Data_unpack` of at most `max` of them (default: as many as were packed): the
    /// value is the array unpacked. `type` (a name or a number) packs under another type code;
    /// `past_end` then unpacks once more, and the step's status is that unpack's.
    DataPack {
        values: ValueSpec,
        #[serde(default, rename = "type")]
        data_type: Option<CodeArg>,
        #[serde(default)]
        max: Option<u32>,
        #[serde(default)]
        past_end: bool,
    },
    /// `PMIx_Data_copy` of `value`: the value is the copy.
    DataCopy { value: ValueSpec },
    /// `PMIx_Data_print` of `value` after `prefix`: the value is the text.
    DataPrint {
        value: ValueSpec,
        #[serde(default)]
        prefix: String,
    },
    /// The elements of `values` (an array, at least two) packed by a `PMIx_Data_pack` each,
    /// the first unpacked, then `PMIx_Data_unload` of the rest into a byte object and
    /// `PMIx_Data_load` of it into another buffer: the value is what that buffer unpacks.
    DataUnload { values: ValueSpec },
    /// As `data_unload`, with the byte object embedded (`PMIx_Data_embed`) into two buffers
    /// one after the other: the value is what the first unpacks, then what the second does.
    DataEmbed { values: ValueSpec },
    /// The elements of `values` (an array, at least two) packed by a `PMIx_Data_pack` each
    /// into a source buffer and its first unpacked; a destination holding the first element
    /// gets `PMIx_Data_copy_payload` of the source: the value is what the destination then
    /// unpacks, followed by what the source still does.
    DataCopyPayload { values: ValueSpec },
    /// `PMIx_Data_compress` of `text` repeated `repeat` times, and `PMIx_Data_decompress` of
    /// the block when there is one: the results are `compressed` (what compress answered)
    /// and then `smaller` (the block is smaller than the input) and `restored` (decompress
    /// gave the input back). A vector that expects a block names `PMIx_Data_decompress`.
    DataCompress {
        text: String,
        #[serde(default = "once")]
        repeat: usize,
    },
    /// `PMIx_Value_load` of `value` into an empty `pmix_value_t`: the value is what it holds.
    ValueLoad { value: ValueSpec },
    /// `PMIx_Value_unload` of a `pmix_value_t` holding `value` (a string or a number): the
    /// value is the data returned.
    ValueUnload { value: ValueSpec },
    /// `PMIx_Value_xfer` of a `pmix_value_t` holding `value` into an empty one: the value is
    /// what the destination holds.
    ValueXfer { value: ValueSpec },
    /// `PMIx_Info_load` of `info`'s key and value into an empty `pmix_info_t`: the value is
    /// an info array of what it holds.
    InfoLoad { info: InfoSpec },
    /// `PMIx_Info_xfer` of `info` (its flags too) into an empty `pmix_info_t`: the value is
    /// an info array of what it holds.
    InfoXfer { info: InfoSpec },
    /// `PMIx_Info_list_start`, `PMIx_Info_list_add` of each of `add` (key and value),
    /// `PMIx_Info_list_xfer` of each of `xfer` (flags too), `PMIx_Info_list_convert` and
    /// `PMIx_Info_list_release`: the value is the converted array.
    InfoList {
        #[serde(default)]
        add: Vec<InfoSpec>,
        #[serde(default)]
        xfer: Vec<InfoSpec>,
    },
    /// `PMIx_Load_topology`, with the `source` field set when given: the value is the
    /// topology (its source and hwloc's XML).
    LoadTopology {
        #[serde(default)]
        source: Option<String>,
    },
    /// `PMIx_Topology_destruct` of a copy (`PMIx_Data_copy`) of the loaded topology: the
    /// value is whether the process's heap then holds at least 1 KiB less (a topology holds
    /// far more).
    TopologyDestruct,
    /// `PMIx_Parse_cpuset_string`: the value is the cpuset.
    ParseCpusetString { cpuset: String },

    // ---- calls of a node's server (`proc = "server:NODE"`), resolved by
    // [`crate::server_api::resolve`] ----
    /// `PMIx_server_register_nspace` of `nspace` with `nlocal` local processes.
    ServerRegisterNspace {
        nspace: String,
        #[serde(default)]
        nlocal: u32,
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_server_deregister_nspace`.
    ServerDeregisterNspace { nspace: String },
    /// `PMIx_server_register_client` of `target`, with the harness's uid and gid.
    ServerRegisterClient { target: TargetSpec },
    /// `PMIx_server_deregister_client`.
    ServerDeregisterClient { target: TargetSpec },
    /// `PMIx_server_setup_fork`: the results are the variables it set, as string infos.
    ServerSetupFork { target: TargetSpec },
    /// `PMIx_server_dmodex_request`: the value is the data, as a byte object.
    ServerDmodexRequest { target: TargetSpec },
    /// `PMIx_server_setup_application` of `nspace` (the job's when absent): the results
    /// are the infos its callback returned.
    ServerSetupApplication {
        #[serde(default)]
        nspace: Option<String>,
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_server_setup_local_support` of `nspace` (the job's when absent).
    ServerSetupLocalSupport {
        #[serde(default)]
        nspace: Option<String>,
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_server_IOF_deliver` of `data` (text) from `source` on `channel`.
    ServerIofDeliver {
        source: TargetSpec,
        channel: String,
        data: String,
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_server_collect_inventory`: the results are the inventory.
    ServerCollectInventory {
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_server_deliver_inventory`.
    ServerDeliverInventory {
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_server_define_process_set` of `members` named `name`.
    ServerDefineProcessSet {
        name: String,
        members: Vec<TargetSpec>,
    },
    /// `PMIx_server_delete_process_set`.
    ServerDeleteProcessSet { name: String },
    /// `PMIx_Notify_event` made by the server, for its host: `status` over `range` (a
    /// `PMIX_RANGE_*` name), with no source process (the host's own event).
    ServerNotifyEvent {
        status: String,
        range: String,
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_server_register_resources`.
    ServerRegisterResources { info: Vec<InfoSpec> },
    /// `PMIx_server_deregister_resources`.
    ServerDeregisterResources { info: Vec<InfoSpec> },
    /// `PMIx_generate_regex` of a comma-separated node list: the value is the node map.
    GenerateRegex { input: String },
    /// `PMIx_generate_ppn` of ranks per node (`;` between nodes): the value is the map.
    GeneratePpn { input: String },
    /// `PMIx_server_generate_locality_string` of the processing units `cpus` (an hwloc
    /// list, `0-1`): the value is the locality string.
    ServerGenerateLocalityString { cpus: String },
    /// `PMIx_server_generate_cpuset_string` of the processing units `cpus`: the value is the
    /// cpuset string.
    ServerGenerateCpusetString { cpus: String },
    /// `PMIx_Register_attributes` of `attributes` (names) for the host's `function`.
    RegisterAttributes {
        function: String,
        attributes: Vec<String>,
    },
    /// `PMIx_server_finalize`.
    ServerFinalize,

    // ---- calls of the vector's tool (`proc = "tool"`), resolved by
    // [`crate::tool_api::resolve`] ----
    /// `PMIx_tool_init`.
    ToolInit {
        #[serde(default)]
        info: Vec<InfoSpec>,
        /// Variables set in the tool process's environment (it starts for this call), over
        /// those it inherits from the harness: where the standard has a tool read one
        /// (`TMPDIR`, v5.0 §18.1).
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        env: std::collections::BTreeMap<String, String>,
    },
    /// `PMIx_tool_finalize`.
    ToolFinalize,
    /// `PMIx_tool_connect_to_server` (deprecated in v5.0 for `attach_to_server`).
    ToolConnectToServer {
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_tool_attach_to_server`: the value is the server's identifier (`PMIX_PROC`).
    ToolAttachToServer {
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_tool_set_server` to the server the tool attached to last (or its first).
    ToolSetServer {
        #[serde(default)]
        info: Vec<InfoSpec>,
    },
    /// `PMIx_tool_get_servers`: the value is the servers, a `PMIX_PROC` array.
    ToolGetServers,
    /// `PMIx_tool_disconnect` from the server the tool attached to last (or its first).
    ToolDisconnect,
}

/// One query of `PMIx_Query_info`: keys and qualifiers.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QuerySpec {
    pub keys: Vec<String>,
    #[serde(default)]
    pub qualifiers: Vec<InfoSpec>,
}

/// One application of `PMIx_Spawn`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    pub cmd: String,
    #[serde(default)]
    pub argv: Vec<String>,
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default = "one")]
    pub maxprocs: i32,
    #[serde(default)]
    pub info: Vec<InfoSpec>,
}

/// A constant by its C name (`PMIX_ERR_NOT_FOUND`), a number, or a text argument.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum CodeArg {
    Number(i64),
    Name(String),
}

fn one() -> i32 {
    1
}

fn once() -> usize {
    1
}

fn error_status() -> String {
    "PMIX_ERROR".into()
}

fn event_wait_ms() -> u64 {
    5000
}

fn bind_process() -> String {
    "process".into()
}

fn global() -> String {
    "global".into()
}

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

    pub(super) fn check(&self, nspace: &str) -> Result<(), String> {
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
