//! The calls a step can make: the data-access calls and the script's actions, and the APIs of
//! the other chapters (resolved for a caller by [`crate::api::resolve`]), with their
//! arguments; what each names for the coverage table, and the checks a runner relies on, are
//! in `classify`.

use serde::{Deserialize, Serialize};

use super::{InfoSpec, TargetSpec, ValueSpec, yes};
use pmix::model::Rank;

mod classify;

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
