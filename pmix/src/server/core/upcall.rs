//! The host upcalls as messages: each call the core asks its driver to make of the host
//! ([`HostCall`]), the host's answer ([`HostResult`]), and their byte form.
//!
//! This is the one message form of the `Host` trait's upcalls. The driver turns a call into
//! the trait's method (`HostCall::call`); a host in another process (the conformance
//! harness behind a C library's server) receives the bytes of [`HostCall::to_bytes`] and
//! answers with those of [`HostResult::to_bytes`]. The bytes are this crate's codec,
//! non-described; they are not a message of the PMIx protocol.
//!
//! The list of upcalls is written once, in [`table`]: `HostCall`'s variants, their codes
//! and their fields come from it, as do the `Host` trait and the C library's host adapter.

use crate::Error;
use crate::codec::{BufferType, Codec, DataBuffer};
use crate::model::{
    AllocDirective, App, DataRange, FabricOperation, GroupOperation, Info, IofChannel, Nspace,
    PData, Proc, Query, Status,
};
use crate::wire::fields::{malformed, one, pack_list, unpack_list};

mod table;

/// Generates [`HostCall`] and its byte form from the table of upcalls.
macro_rules! host_call {
    ($(
        $(#[$doc:meta])*
        $code:literal $Var:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty
        [$(slot $slot:ident $c:literal)?]
        default $default:block
    )*) => {
        /// An upcall of the server to its host: one variant per method of the `Host` trait,
        /// with the same arguments.
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum HostCall {
            $(
                $(#[$doc])*
                $Var { $($arg: $ty),* },
            )*
        }

        impl HostCall {
            /// The call as bytes, for a host in another process: its code, then its
            /// arguments in order.
            pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
                let mut out;
                match self {
                    $(HostCall::$Var { $($arg),* } => {
                        out = Out::new($code)?;
                        $(Field::put($arg, &mut out)?;)*
                    })*
                }
                Ok(out.bytes())
            }

            /// Read what [`HostCall::to_bytes`] wrote. Bytes from another process are not
            /// trusted: a malformed message is an error, never a panic.
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
                let mut r = In::new(bytes);
                // A code written twice in the table is an unreachable arm.
                #[deny(unreachable_patterns)]
                let call = match r.one::<u8>("upcall code")? {
                    // Fields are read in the order written, which is the order `to_bytes`
                    // wrote them.
                    $($code => HostCall::$Var { $($arg: Field::take(&mut r, stringify!($arg))?),* },)*
                    code => return Err(malformed(&format!("no host upcall has code {code}"))),
                };
                r.end(call)
            }
        }
    };
}

crate::for_each_upcall!(host_call);

/// The host's answer to a [`HostCall`], by the kind of data the call wants.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum HostResult {
    /// The answer of a call that wants no data.
    Status(Status),
    /// A fence's exchanged data, or a direct modex's.
    Data(Result<Vec<u8>, Status>),
    /// What a lookup found.
    Lookup(Result<Vec<PData>, Status>),
    /// A connecting tool's identifier.
    Proc(Result<Proc, Status>),
    /// The infos of a query, allocation, job control, monitor, fabric, group or credential
    /// validation.
    Infos(Result<Vec<Info>, Status>),
    /// A spawned job's namespace.
    Nspace(Result<Nspace, Status>),
    /// A credential and the information that describes it.
    Credential(Result<(Vec<u8>, Vec<Info>), Status>),
}

impl HostResult {
    /// The answer's status: its error, the status of an answer that is one, or
    /// `PMIX_SUCCESS` for data.
    pub fn status(&self) -> Status {
        match self {
            HostResult::Status(s)
            | HostResult::Data(Err(s))
            | HostResult::Lookup(Err(s))
            | HostResult::Proc(Err(s))
            | HostResult::Infos(Err(s))
            | HostResult::Nspace(Err(s))
            | HostResult::Credential(Err(s)) => *s,
            HostResult::Data(Ok(_))
            | HostResult::Lookup(Ok(_))
            | HostResult::Proc(Ok(_))
            | HostResult::Infos(Ok(_))
            | HostResult::Nspace(Ok(_))
            | HostResult::Credential(Ok(_)) => Status::SUCCESS,
        }
    }

    /// The answer as the data `T` a call wanted, by one rule for every chapter: an answer of
    /// `T`'s kind is its data or its error; an answer of another kind, which only a host that
    /// does not use [`HostCall::call`] can give, is its error. An error that claims success
    /// is `PMIX_ERR_BAD_PARAM`, as is another kind's data or `PMIX_SUCCESS` where data was
    /// wanted.
    pub(crate) fn output<T: Answer>(self) -> Result<T, Status> {
        let result = T::unwrap(self).unwrap_or_else(|other| {
            tracing::warn!(
                "the host answered with another kind of data than the call wanted ({:?})",
                other.status()
            );
            Err(other.status())
        });
        result.map_err(|s| match s {
            Status::SUCCESS => Status::ERR_BAD_PARAM,
            s => s,
        })
    }
}

/// The data of an upcall's answer (the `Ok` type of its `Host` method's output), and the kind
/// of [`HostResult`] that carries it.
pub(crate) trait Answer: Sized {
    /// The method's result as the host's answer.
    fn wrap(result: Result<Self, Status>) -> HostResult;

    /// The result an answer of this kind carries; an answer of another kind, back.
    fn unwrap(answer: HostResult) -> Result<Result<Self, Status>, HostResult>;
}

/// A call that wants no data: its answer is a status.
impl Answer for () {
    fn wrap(result: Result<(), Status>) -> HostResult {
        HostResult::Status(result.err().unwrap_or(Status::SUCCESS))
    }

    fn unwrap(answer: HostResult) -> Result<Result<(), Status>, HostResult> {
        match answer {
            HostResult::Status(Status::SUCCESS) => Ok(Ok(())),
            HostResult::Status(s) => Ok(Err(s)),
            other => Err(other),
        }
    }
}

macro_rules! answer_as {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        impl Answer for $t {
            fn wrap(result: Result<Self, Status>) -> HostResult {
                HostResult::$kind(result)
            }

            fn unwrap(answer: HostResult) -> Result<Result<Self, Status>, HostResult> {
                match answer {
                    HostResult::$kind(result) => Ok(result),
                    other => Err(other),
                }
            }
        }
    )*};
}

answer_as!(
    Vec<u8> => Data,
    Vec<PData> => Lookup,
    Proc => Proc,
    Vec<Info> => Infos,
    Nspace => Nspace,
    (Vec<u8>, Vec<Info>) => Credential,
);

/// A `Host` method's output as the host's answer.
pub(crate) trait IntoHost {
    fn into_host(self) -> HostResult;
}

impl<T: Answer> IntoHost for Result<T, Status> {
    fn into_host(self) -> HostResult {
        T::wrap(self)
    }
}

/// `client_lost`, whose answer is not waited for.
impl IntoHost for () {
    fn into_host(self) -> HostResult {
        HostResult::Status(Status::SUCCESS)
    }
}

/// A buffer the byte form is written into.
struct Out(DataBuffer);

impl Out {
    fn new(code: u8) -> Result<Self, Error> {
        let mut out = Out(DataBuffer::with_type(BufferType::NonDescribed));
        out.one(&code)?;
        Ok(out)
    }

    fn one<T: Codec>(&mut self, value: &T) -> Result<(), Error> {
        self.0.pack(std::slice::from_ref(value))
    }

    fn list<T: Codec>(&mut self, values: &[T]) -> Result<(), Error> {
        pack_list(&mut self.0, values)
    }

    /// An answer's outcome: a flag, then the status of a failure (the data follows a
    /// success).
    fn outcome<'a, T>(&mut self, result: &'a Result<T, Status>) -> Result<Option<&'a T>, Error> {
        self.one(&result.is_ok())?;
        match result {
            Ok(value) => Ok(Some(value)),
            Err(status) => self.one(status).map(|()| None),
        }
    }

    fn bytes(mut self) -> Vec<u8> {
        self.0.unload()
    }
}

/// A buffer the byte form is read from.
struct In(DataBuffer);

impl In {
    fn new(bytes: &[u8]) -> Self {
        In(DataBuffer::load(bytes.to_vec(), BufferType::NonDescribed))
    }

    fn one<T: Codec>(&mut self, what: &str) -> Result<T, Error> {
        one(&mut self.0, what)
    }

    fn list<T: Codec>(&mut self, what: &str) -> Result<Vec<T>, Error> {
        unpack_list(&mut self.0, what)
    }

    /// What [`Out::outcome`] wrote, with `data` reading the data of a success.
    fn outcome<T>(
        &mut self,
        data: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<Result<T, Status>, Error> {
        if self.one::<bool>("outcome")? {
            data(self).map(Ok)
        } else {
            self.one("status").map(Err)
        }
    }

    /// The end of a message: bytes left over mean it was not what its code said.
    fn end<T>(self, value: T) -> Result<T, Error> {
        if self.0.unread().is_empty() {
            Ok(value)
        } else {
            Err(malformed("bytes after the end of a host upcall"))
        }
    }
}

/// How an upcall's argument is written into the byte form and read back.
trait Field: Sized {
    fn put(&self, out: &mut Out) -> Result<(), Error>;
    fn take(r: &mut In, what: &str) -> Result<Self, Error>;
}

impl<T: Codec> Field for T {
    fn put(&self, out: &mut Out) -> Result<(), Error> {
        out.one(self)
    }

    fn take(r: &mut In, what: &str) -> Result<Self, Error> {
        r.one(what)
    }
}

impl<T: Codec> Field for Vec<T> {
    fn put(&self, out: &mut Out) -> Result<(), Error> {
        out.list(self)
    }

    fn take(r: &mut In, what: &str) -> Result<Self, Error> {
        r.list(what)
    }
}

/// Optional bytes: a flag, then the bytes when there are some.
impl Field for Option<Vec<u8>> {
    fn put(&self, out: &mut Out) -> Result<(), Error> {
        out.one(&self.is_some())?;
        match self {
            Some(data) => out.list(data),
            None => Ok(()),
        }
    }

    fn take(r: &mut In, what: &str) -> Result<Self, Error> {
        if r.one::<bool>(what)? {
            r.list(what).map(Some)
        } else {
            Ok(None)
        }
    }
}

/// The operation codes travel as their numbers.
macro_rules! field_by_number {
    ($($t:ident),*) => {$(
        impl Field for $t {
            fn put(&self, out: &mut Out) -> Result<(), Error> {
                out.one(&self.0)
            }

            fn take(r: &mut In, what: &str) -> Result<Self, Error> {
                r.one(what).map($t)
            }
        }
    )*};
}

field_by_number!(GroupOperation, FabricOperation);

impl HostResult {
    /// The answer as bytes, for the server whose host runs in another process.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out;
        match self {
            HostResult::Status(status) => {
                out = Out::new(0)?;
                out.one(status)?;
            }
            HostResult::Data(r) => {
                out = Out::new(1)?;
                if let Some(data) = out.outcome(r)? {
                    out.list(data)?;
                }
            }
            HostResult::Lookup(r) => {
                out = Out::new(2)?;
                if let Some(found) = out.outcome(r)? {
                    out.list(found)?;
                }
            }
            HostResult::Proc(r) => {
                out = Out::new(3)?;
                if let Some(proc) = out.outcome(r)? {
                    out.one(proc)?;
                }
            }
            HostResult::Infos(r) => {
                out = Out::new(4)?;
                if let Some(info) = out.outcome(r)? {
                    out.list(info)?;
                }
            }
            HostResult::Nspace(r) => {
                out = Out::new(5)?;
                if let Some(nspace) = out.outcome(r)? {
                    out.one(nspace)?;
                }
            }
            HostResult::Credential(r) => {
                out = Out::new(6)?;
                if let Some((credential, info)) = out.outcome(r)? {
                    out.list(credential)?;
                    out.list(info)?;
                }
            }
        }
        Ok(out.bytes())
    }

    /// Read what [`HostResult::to_bytes`] wrote; a malformed message is an error.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = In::new(bytes);
        let answer = match r.one::<u8>("answer code")? {
            0 => HostResult::Status(r.one("status")?),
            1 => HostResult::Data(r.outcome(|r| r.list("data"))?),
            2 => HostResult::Lookup(r.outcome(|r| r.list("found"))?),
            3 => HostResult::Proc(r.outcome(|r| r.one("proc"))?),
            4 => HostResult::Infos(r.outcome(|r| r.list("info"))?),
            5 => HostResult::Nspace(r.outcome(|r| r.one("namespace"))?),
            6 => {
                HostResult::Credential(r.outcome(|r| Ok((r.list("credential")?, r.list("info")?)))?)
            }
            code => return Err(malformed(&format!("no host answer has code {code}"))),
        };
        r.end(answer)
    }
}

#[cfg(test)]
mod tests;
