//! The crate's error type: who is to blame, and the standard's status code for it.

use std::fmt;

use crate::model::Status;

/// An error of this library, classified by who caused it (STYLE 10).
///
/// Every variant maps to one PMIx status code ([`Error::status`]); the message says why.
/// It is the one error type of the client's calls, blocking and async, and of the codec.
/// An error never reports `PMIX_SUCCESS`: a success is an `Ok`. A partial success
/// (`PMIX_ERR_PARTIAL_SUCCESS`) keeps its results: a lookup that found some of its keys
/// returns them (`PData::lookup_status` names the partial success), and a group
/// construction returns its members and results with the status beside them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The caller passed an invalid argument (too long a key, an empty name, …).
    BadParam(String),
    /// Bytes from outside (a peer, a file) could not be decoded; carries the unpack status
    /// (`PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER`, `PMIX_ERR_UNKNOWN_DATA_TYPE`, …).
    Decode { status: Status, reason: String },
    /// A value could not be encoded (for example a pointer, which has no wire form).
    Encode { status: Status, reason: String },
    /// A value of one type was used where another was required.
    TypeMismatch { expected: String, found: String },
    /// The operation is not (yet) implemented.
    NotSupported(String),
    /// Any other PMIx status reported by a lower layer or a peer.
    Status(Status, String),
}

impl Error {
    /// The PMIx status code this error reports to callers.
    pub fn status(&self) -> Status {
        match self {
            Error::BadParam(_) => Status::ERR_BAD_PARAM,
            Error::Decode { status, .. } | Error::Encode { status, .. } => *status,
            Error::TypeMismatch { .. } => Status::ERR_TYPE_MISMATCH,
            Error::NotSupported(_) => Status::ERR_NOT_SUPPORTED,
            // An error never reports success, whatever a caller put in it.
            Error::Status(status, _) if *status == Status::SUCCESS => Status::ERROR,
            Error::Status(status, _) => *status,
        }
    }

    pub(crate) fn decode(status: Status, reason: impl Into<String>) -> Self {
        Error::Decode {
            status,
            reason: reason.into(),
        }
    }

    pub(crate) fn read_past_end(what: &str) -> Self {
        Error::decode(
            Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER,
            format!("buffer ends inside {what}"),
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadParam(why) => write!(f, "bad parameter: {why}"),
            Error::Decode { status, reason } => write!(f, "cannot decode ({status:?}): {reason}"),
            Error::Encode { status, reason } => write!(f, "cannot encode ({status:?}): {reason}"),
            Error::TypeMismatch { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            Error::NotSupported(what) => write!(f, "not supported: {what}"),
            Error::Status(status, why) if why.is_empty() => write!(f, "{status:?}"),
            Error::Status(status, why) => write!(f, "{status:?}: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// A status the standard names is the error of every call that fails without more to say;
/// it reads as its name (`PMIX_ERR_NOT_FOUND`), or its number when no name is known.
impl std::error::Error for Status {}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "status {}", self.0),
        }
    }
}

/// A status a peer or a lower layer reported as the failure of a call, with no more to say.
impl From<Status> for Error {
    fn from(status: Status) -> Error {
        let reason = match status {
            Status::SUCCESS => "success reported as a failure",
            _ => "",
        };
        Error::Status(status, reason.to_owned())
    }
}

impl From<Error> for Status {
    fn from(e: Error) -> Status {
        e.status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_never_reports_success() {
        assert_eq!(Error::from(Status::SUCCESS).status(), Status::ERROR);
        assert_eq!(
            Error::Status(Status::SUCCESS, "a bug".into()).status(),
            Status::ERROR
        );
        assert_eq!(
            Error::from(Status::ERR_NOT_FOUND).status(),
            Status::ERR_NOT_FOUND
        );
    }

    #[test]
    fn an_error_reads_as_its_status_and_reason() {
        assert_eq!(
            Error::from(Status::ERR_TIMEOUT).to_string(),
            "PMIX_ERR_TIMEOUT"
        );
        let e = Error::Status(Status::ERR_LOST_CONNECTION, "the server closed".into());
        assert_eq!(e.to_string(), "PMIX_ERR_LOST_CONNECTION: the server closed");
        assert_eq!(Status::from(e), Status::ERR_LOST_CONNECTION);
    }
}
