//! The tool APIs (v5.0 chapter 18), as steps of the vector's tool (`proc = "tool"`): a
//! process that is neither a rank nor a server, started by the harness without an
//! environment from `setup_fork`, that finds a server from what its steps pass
//! (`PMIX_SERVER_URI` with the saved value `"$uri_NODE"`, the node's server URI).
//!
//! The library side is [`crate::ffi::run_tool`]. This crate has no tool side yet: its tool
//! calls answer `PMIX_ERR_NOT_SUPPORTED` (its server accepts OpenPMIx tools).

use pmix::model::Info;

use crate::vector::{Call, InfoSpec};

/// A tool call resolved against the vector's job.
#[derive(Clone, Debug)]
pub enum ToolCall {
    Init { info: Vec<Info> },
    Finalize,
    ConnectToServer { info: Vec<Info> },
    AttachToServer { info: Vec<Info> },
    SetServer { info: Vec<Info> },
    GetServers,
    Disconnect,
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
        Call::ToolInit { info } => ToolCall::Init { info: infos(info)? },
        Call::ToolFinalize => ToolCall::Finalize,
        Call::ToolConnectToServer { info } => ToolCall::ConnectToServer { info: infos(info)? },
        Call::ToolAttachToServer { info } => ToolCall::AttachToServer { info: infos(info)? },
        Call::ToolSetServer { info } => ToolCall::SetServer { info: infos(info)? },
        Call::ToolGetServers => ToolCall::GetServers,
        Call::ToolDisconnect => ToolCall::Disconnect,
        other => return Err(format!("`{}` is not a call of a tool", other.name())),
    })
}
