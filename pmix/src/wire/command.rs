//! The command codes of OpenPMIx's protocol (`pmix_cmd_t`, packed as `PMIX_COMMAND`): 0–32
//! are 4.2's, unchanged in 5.0 and 6.1; 33, 37 and 38 came with 5.0 and 34–36 with 6.1
//! (6.1 `src/include/pmix_globals.h:227-265`).
//!
//! An open set (STYLE 7): a code this table does not name still decodes, and the server
//! answers it with `PMIX_ERR_NOT_SUPPORTED` on the request's tag instead of dropping the
//! connection. That status alone is the reply every OpenPMIx client reads for a request its
//! server refused (every reply but `REQ`'s starts with the status, and OpenPMIx's own
//! servers answer a command they do not know so: 6.1 `server/pmix_server.c:6043-6077`), so
//! a newer peer's command neither hangs its caller nor costs it the connection.

use crate::Error;
use crate::codec::Codec;
use crate::codec::primitive::{Reader, Writer};
use crate::model::DataType;

/// A command code.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Command(pub u8);

macro_rules! commands {
    ($($name:ident = $code:expr),* $(,)?) => {
        impl Command {
            $(pub const $name: Command = Command($code);)*

            /// The command's name as OpenPMIx spells it (without `PMIX_` and `_CMD`).
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($code => Some(stringify!($name)),)*
                    _ => None,
                }
            }

            /// Every named command, in code order.
            pub const ALL: &'static [Command] = &[$(Command($code)),*];
        }
    };
}

commands! {
    REQ = 0,
    ABORT = 1,
    COMMIT = 2,
    FENCENB = 3,
    GETNB = 4,
    FINALIZE = 5,
    PUBLISHNB = 6,
    LOOKUPNB = 7,
    UNPUBLISHNB = 8,
    SPAWNNB = 9,
    CONNECTNB = 10,
    DISCONNECTNB = 11,
    NOTIFY = 12,
    REGEVENTS = 13,
    DEREGEVENTS = 14,
    QUERY = 15,
    LOG = 16,
    ALLOC = 17,
    JOB_CONTROL = 18,
    MONITOR = 19,
    GET_CREDENTIAL = 20,
    VALIDATE_CRED = 21,
    IOF_PULL = 22,
    IOF_PUSH = 23,
    GROUP_CONSTRUCT = 24,
    GROUP_JOIN = 25,
    GROUP_INVITE = 26,
    GROUP_LEAVE = 27,
    GROUP_DESTRUCT = 28,
    IOF_DEREG = 29,
    FABRIC_REGISTER = 30,
    FABRIC_UPDATE = 31,
    COMPUTE_DEVICE_DISTANCES = 32,
    // OpenPMIx spells this one without `_CMD`.
    REFRESH_CACHE = 33,
    RESBLK = 34,
    SESSION_CTRL = 35,
    REQ_SYSINFO = 36,
    RESOLVE_PEERS = 37,
    RESOLVE_NODE = 38,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}"),
            None => write!(f, "Command({})", self.0),
        }
    }
}

impl Codec for Command {
    const DATA_TYPE: DataType = DataType::COMMAND;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.byte(self.0);
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        Ok(Command(r.byte("command")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_39_commands_numbered_densely() {
        assert_eq!(Command::ALL.len(), 39);
        for (i, c) in Command::ALL.iter().enumerate() {
            assert_eq!(usize::from(c.0), i);
        }
        assert_eq!(format!("{:?}", Command(200)), "Command(200)");
    }
}
