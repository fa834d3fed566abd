//! The tool APIs (v5.0 chapter 18), as steps of the vector's tool (`proc = "tool"`): a
//! process that is neither a rank nor a server, started by the harness without an
//! environment from `setup_fork`, that finds a server from what its steps pass
//! (`PMIX_SERVER_URI` with the saved value `"$uri_NODE"`, the node's server URI).
//!
//! The library side is [`crate::ffi::run_tool`]; this crate's is [`RustTool`], in a child
//! process of its own (`conformance __rust-tool`), as the library's tool is, for the `rust`
//! target and the pairings with this crate's clients.

use pmix::client::tool::Tool;
use pmix::model::{Info, Proc, Status, Value};

use crate::api::{ApiCall, ApiOutput, RustProc, sorted_procs};
use crate::vector::{Call, InfoSpec};

/// A tool call resolved against the vector's job.
#[derive(Clone, Debug)]
pub enum ToolCall {
    Init {
        info: Vec<Info>,
    },
    Finalize,
    ConnectToServer {
        info: Vec<Info>,
    },
    AttachToServer {
        info: Vec<Info>,
    },
    SetServer {
        info: Vec<Info>,
    },
    GetServers,
    Disconnect,
    /// A call of the client API the tool makes of its primary server: I/O forwarding
    /// (pull, output, deregister, push), what a tool attached to a job does.
    Client(ApiCall),
}

/// Resolve a tool step's call; an error names the field.
pub fn resolve(call: &Call, nspace: &str) -> Result<ToolCall, String> {
    let infos = |list: &[InfoSpec]| -> Result<Vec<Info>, String> {
        list.iter()
            .map(|i| i.to_info(nspace))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("field `info`: {e}"))
    };
    Ok(match call {
        Call::ToolInit { info, .. } => ToolCall::Init { info: infos(info)? },
        Call::ToolFinalize => ToolCall::Finalize,
        Call::ToolConnectToServer { info } => ToolCall::ConnectToServer { info: infos(info)? },
        Call::ToolAttachToServer { info } => ToolCall::AttachToServer { info: infos(info)? },
        Call::ToolSetServer { info } => ToolCall::SetServer { info: infos(info)? },
        Call::ToolGetServers => ToolCall::GetServers,
        Call::ToolDisconnect => ToolCall::Disconnect,
        // Publish, lookup and unpublish in their non-blocking forms (`nb = true`).
        Call::Publish { .. }
        | Call::Lookup { .. }
        | Call::Unpublish { .. }
        | Call::IofPull { .. }
        | Call::IofOutput { .. }
        | Call::IofDeregister { .. }
        | Call::IofPush { .. }
        | Call::RegisterEventHandler { .. }
        | Call::DeregisterEventHandler { .. }
        | Call::Events { .. } => {
            // A tool has no rank: its steps name every process they concern.
            match crate::api::resolve(call, nspace, 0)? {
                Some(c) => ToolCall::Client(c),
                None => return Err(format!("`{}` resolves to no call", call.name())),
            }
        }
        other => return Err(format!("`{}` is not a call of a tool", other.name())),
    })
}

/// The vector's tool on this crate (`pmix::client::tool::Tool`), and the server its last
/// attach named: what `set_server` and `disconnect` act on, as on the library side.
#[derive(Debug, Default)]
pub struct RustTool {
    tool: Option<Tool>,
    server: Option<Proc>,
    /// What its client calls keep between steps (pulls and their output).
    state: std::sync::Arc<RustProc>,
}

impl RustTool {
    /// Run a tool step's call. It blocks: call it outside any async runtime.
    pub fn run(&mut self, call: ToolCall) -> ApiOutput {
        let status = |r: Result<(), pmix::Error>| {
            ApiOutput::status(r.err().map_or(Status::SUCCESS, |e| e.status()))
        };
        if let ToolCall::Init { info } = &call {
            return match Tool::init(info) {
                Ok(t) => {
                    // The identifier the tool was given, as PMIx_tool_init's `proc` returns it.
                    let me = t.proc().clone();
                    self.tool = Some(t);
                    ApiOutput::value(Ok(Value::Proc(me)))
                }
                Err(e) => ApiOutput::status(e.status()),
            };
        }
        let current = self.current_server();
        let Some(tool) = self.tool.as_mut() else {
            return ApiOutput::status(Status::ERR_INIT);
        };
        match call {
            ToolCall::Init { .. } => ApiOutput::status(Status::ERR_BAD_PARAM),
            ToolCall::Finalize => status(self.tool.take().map_or(Ok(()), Tool::finalize)),
            ToolCall::ConnectToServer { mut info } => {
                info.push(Info::new(pmix::model::attr::PRIMARY_SERVER, true));
                status(tool.attach(&info).map(drop))
            }
            ToolCall::AttachToServer { info } => match tool.attach(&info) {
                Ok(server) => {
                    self.server = Some(server.clone());
                    ApiOutput::value(Ok(Value::Proc(server)))
                }
                Err(e) => ApiOutput::status(e.status()),
            },
            ToolCall::SetServer { .. } => match current {
                Some(server) => status(tool.set_server(&server)),
                None => ApiOutput::status(Status::ERR_NOT_FOUND),
            },
            ToolCall::GetServers => ApiOutput::value(Ok(sorted_procs(tool.servers()))),
            ToolCall::Disconnect => match current {
                Some(server) => status(tool.disconnect(&server)),
                None => ApiOutput::status(Status::ERR_NOT_FOUND),
            },
            ToolCall::Client(call) => {
                let Some(client) = tool.primary() else {
                    return ApiOutput::status(Status::ERR_UNREACH);
                };
                // The client's calls are async; its I/O and handlers run on its own runtime,
                // this one only drives the call and its waits.
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build();
                match runtime {
                    Ok(rt) => {
                        rt.block_on(crate::api::run_rust(client.as_async(), &self.state, call))
                    }
                    Err(_) => ApiOutput::status(Status::ERR_OUT_OF_RESOURCE),
                }
            }
        }
    }

    fn current_server(&self) -> Option<Proc> {
        (self.server.clone()).or_else(|| self.tool.as_ref()?.servers().into_iter().next())
    }
}
