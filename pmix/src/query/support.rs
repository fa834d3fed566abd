//! What this crate supports, per level and function, as queries of attribute support report
//! it (v5.0 §7.4). Each list names the attributes the code acts on — not those it merely
//! passes through to the host, which are the host's to register. A function with no entry
//! is not implemented at that level; a function with an empty list is implemented and acts
//! on no attribute.

/// One function and the attributes it acts on.
pub type Support = (&'static str, &'static [&'static str]);

const GET: &[&str] = &[
    "PMIX_OPTIONAL",
    "PMIX_IMMEDIATE",
    "PMIX_GET_REFRESH_CACHE",
    "PMIX_TIMEOUT",
    "PMIX_DATA_SCOPE",
    "PMIX_SESSION_INFO",
    "PMIX_JOB_INFO",
    "PMIX_APP_INFO",
    "PMIX_NODE_INFO",
    "PMIX_PROC_INFO",
    "PMIX_SESSION_ID",
    "PMIX_APPNUM",
    "PMIX_HOSTNAME",
    "PMIX_NODEID",
    "PMIX_DEVICE_TYPE",
    "PMIX_DEVICE_ID",
];

const REGISTER_EVENT_HANDLER: &[&str] = &[
    "PMIX_EVENT_HDLR_NAME",
    "PMIX_EVENT_HDLR_FIRST",
    "PMIX_EVENT_HDLR_LAST",
    "PMIX_EVENT_HDLR_FIRST_IN_CATEGORY",
    "PMIX_EVENT_HDLR_LAST_IN_CATEGORY",
    "PMIX_EVENT_HDLR_BEFORE",
    "PMIX_EVENT_HDLR_AFTER",
    "PMIX_EVENT_HDLR_PREPEND",
    "PMIX_EVENT_HDLR_APPEND",
    "PMIX_EVENT_CUSTOM_RANGE",
    "PMIX_EVENT_AFFECTED_PROC",
    "PMIX_EVENT_AFFECTED_PROCS",
    "PMIX_RANGE",
];

const NOTIFY_EVENT: &[&str] = &[
    "PMIX_EVENT_NON_DEFAULT",
    "PMIX_EVENT_CUSTOM_RANGE",
    "PMIX_EVENT_AFFECTED_PROC",
    "PMIX_EVENT_AFFECTED_PROCS",
];

const QUERY_CLIENT: &[&str] = &[
    "PMIX_QUERY_REFRESH_CACHE",
    "PMIX_PROCID",
    "PMIX_NSPACE",
    "PMIX_RANK",
    "PMIX_QUERY_ATTRIBUTE_SUPPORT",
    "PMIX_CLIENT_ATTRIBUTES",
    "PMIX_CLIENT_FUNCTIONS",
    "PMIX_SERVER_ATTRIBUTES",
    "PMIX_SERVER_FUNCTIONS",
    "PMIX_HOST_ATTRIBUTES",
    "PMIX_HOST_FUNCTIONS",
    "PMIX_TOOL_ATTRIBUTES",
    "PMIX_TOOL_FUNCTIONS",
];

const QUERY_SERVER: &[&str] = &[
    "PMIX_SESSION_INFO",
    "PMIX_JOB_INFO",
    "PMIX_APP_INFO",
    "PMIX_NODE_INFO",
    "PMIX_PROC_INFO",
    "PMIX_PROCID",
    "PMIX_NSPACE",
    "PMIX_RANK",
    "PMIX_APPNUM",
    "PMIX_HOSTNAME",
    "PMIX_NODEID",
    "PMIX_QUERY_NAMESPACES",
    "PMIX_QUERY_PROC_TABLE",
    "PMIX_QUERY_LOCAL_PROC_TABLE",
    "PMIX_SERVER_ATTRIBUTES",
    "PMIX_SERVER_FUNCTIONS",
    "PMIX_HOST_ATTRIBUTES",
    "PMIX_HOST_FUNCTIONS",
];

/// The client library.
pub const CLIENT: &[Support] = &[
    ("PMIx_Init", &[]),
    ("PMIx_Initialized", &[]),
    ("PMIx_Get_version", &[]),
    ("PMIx_Finalize", &["PMIX_EMBED_BARRIER"]),
    ("PMIx_Progress", &[]),
    ("PMIx_Abort", &[]),
    ("PMIx_Put", &[]),
    ("PMIx_Store_internal", &[]),
    ("PMIx_Commit", &[]),
    ("PMIx_Get", GET),
    ("PMIx_Get_nb", GET),
    ("PMIx_Fence", &[]),
    ("PMIx_Fence_nb", &[]),
    ("PMIx_Publish", &[]),
    ("PMIx_Publish_nb", &[]),
    ("PMIx_Lookup", &[]),
    ("PMIx_Lookup_nb", &[]),
    ("PMIx_Unpublish", &[]),
    ("PMIx_Unpublish_nb", &[]),
    ("PMIx_Resolve_peers", &[]),
    ("PMIx_Resolve_nodes", &[]),
    ("PMIx_Register_event_handler", REGISTER_EVENT_HANDLER),
    ("PMIx_Deregister_event_handler", &[]),
    ("PMIx_Notify_event", NOTIFY_EVENT),
    ("PMIx_Query_info", QUERY_CLIENT),
    ("PMIx_Query_info_nb", QUERY_CLIENT),
];

/// The server library: the server's own API, and the client calls whose attributes the
/// server acts on.
pub const SERVER: &[Support] = &[
    ("PMIx_server_init", &[]),
    ("PMIx_server_finalize", &[]),
    (
        "PMIx_server_register_nspace",
        &[
            "PMIX_NODE_MAP",
            "PMIX_PROC_MAP",
            "PMIX_SESSION_INFO_ARRAY",
            "PMIX_JOB_INFO_ARRAY",
            "PMIX_APP_INFO_ARRAY",
            "PMIX_NODE_INFO_ARRAY",
            "PMIX_PROC_INFO_ARRAY",
        ],
    ),
    ("PMIx_server_deregister_nspace", &[]),
    ("PMIx_server_register_resources", &[]),
    ("PMIx_server_deregister_resources", &[]),
    ("PMIx_server_register_client", &[]),
    ("PMIx_server_deregister_client", &[]),
    ("PMIx_server_setup_fork", &[]),
    (
        "PMIx_server_dmodex_request",
        &["PMIX_REQUIRED_KEY", "PMIX_TIMEOUT"],
    ),
    ("PMIx_server_setup_application", &[]),
    ("PMIx_server_setup_local_support", &[]),
    ("PMIx_server_collect_inventory", &[]),
    ("PMIx_server_deliver_inventory", &[]),
    ("PMIx_Register_attributes", &[]),
    ("PMIx_generate_regex", &[]),
    ("PMIx_generate_ppn", &[]),
    (
        "PMIx_Notify_event",
        &["PMIX_EVENT_DO_NOT_CACHE", "PMIX_RANGE"],
    ),
    ("PMIx_Get", &["PMIX_TIMEOUT", "PMIX_IMMEDIATE"]),
    ("PMIx_Get_nb", &["PMIX_TIMEOUT", "PMIX_IMMEDIATE"]),
    ("PMIx_Fence", &["PMIX_COLLECT_DATA", "PMIX_TIMEOUT"]),
    ("PMIx_Fence_nb", &["PMIX_COLLECT_DATA", "PMIX_TIMEOUT"]),
    ("PMIx_Query_info", QUERY_SERVER),
    ("PMIx_Query_info_nb", QUERY_SERVER),
];

/// The tool library (`client::tool`): the attributes that name a tool's server, its
/// identifier, and where its rendezvous files are.
pub const TOOL: &[Support] = &[
    ("PMIx_tool_init", TOOL_INIT),
    ("PMIx_tool_attach_to_server", TOOL_ATTACH),
];

const TOOL_ATTACH: &[&str] = &[
    "PMIX_SERVER_URI",
    "PMIX_TCP_URI",
    "PMIX_TOOL_ATTACHMENT_FILE",
    "PMIX_SERVER_PIDINFO",
    "PMIX_SERVER_NSPACE",
    "PMIX_CONNECT_TO_SYSTEM",
    "PMIX_CONNECT_SYSTEM_FIRST",
    "PMIX_PRIMARY_SERVER",
    "PMIX_SYSTEM_TMPDIR",
    "PMIX_SERVER_TMPDIR",
    "PMIX_HOSTNAME",
];

const TOOL_INIT: &[&str] = &[
    "PMIX_SERVER_URI",
    "PMIX_TCP_URI",
    "PMIX_TOOL_ATTACHMENT_FILE",
    "PMIX_SERVER_PIDINFO",
    "PMIX_SERVER_NSPACE",
    "PMIX_CONNECT_TO_SYSTEM",
    "PMIX_CONNECT_SYSTEM_FIRST",
    "PMIX_TOOL_NSPACE",
    "PMIX_TOOL_RANK",
    "PMIX_TOOL_DO_NOT_CONNECT",
    "PMIX_SYSTEM_TMPDIR",
    "PMIX_SERVER_TMPDIR",
    "PMIX_HOSTNAME",
];

/// The server-module function (`pmix_server_module_t` field) that serves a client API, under
/// which a host registers its attributes (§17.2.12); a module function's own name is itself.
pub fn host_function(api: &str) -> &str {
    let base = api.strip_suffix("_nb").unwrap_or(api);
    match base {
        "PMIx_Abort" => "abort",
        "PMIx_Fence" => "fence_nb",
        "PMIx_Get" => "direct_modex",
        "PMIx_Publish" => "publish",
        "PMIx_Lookup" => "lookup",
        "PMIx_Unpublish" => "unpublish",
        "PMIx_Spawn" => "spawn",
        "PMIx_Connect" => "connect",
        "PMIx_Disconnect" => "disconnect",
        "PMIx_Register_event_handler" => "register_events",
        "PMIx_Deregister_event_handler" => "deregister_events",
        "PMIx_Notify_event" => "notify_event",
        "PMIx_Query_info" => "query",
        "PMIx_Log" => "log",
        "PMIx_Allocation_request" => "allocate",
        "PMIx_Job_control" => "job_control",
        "PMIx_Process_monitor" => "monitor",
        "PMIx_Get_credential" => "get_credential",
        "PMIx_Validate_credential" => "validate_credential",
        "PMIx_IOF_pull" => "iof_pull",
        "PMIx_IOF_push" => "push_stdin",
        "PMIx_Group_construct"
        | "PMIx_Group_destruct"
        | "PMIx_Group_invite"
        | "PMIx_Group_join"
        | "PMIx_Group_leave" => "group",
        "PMIx_Fabric_register" | "PMIx_Fabric_update" | "PMIx_Fabric_deregister" => "fabric",
        _ => api,
    }
}
