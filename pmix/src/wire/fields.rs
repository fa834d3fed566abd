//! Field helpers every message of the protocol is read and written with: a list (its count,
//! then the values; an info list is one), one value of a pack call that must hold exactly
//! one, a count bounded by the bytes left, a filter that counts what it left out. The typed
//! messages (`message.rs`, `ops.rs`, `op_reply.rs`) build on them and not on each other.

use crate::Error;
use crate::codec::{Codec, DataBuffer, Size};
use crate::model::{Info, Status};

/// Pack an info count (`PMIX_SIZE`) and, when non-empty, the infos.
pub fn pack_info_list(b: &mut DataBuffer, info: &[Info]) -> Result<(), Error> {
    pack_list(b, info)
}

/// Unpack what [`pack_info_list`] packed.
pub fn unpack_info_list(b: &mut DataBuffer) -> Result<Vec<Info>, Error> {
    unpack_list(b, "info count")
}

/// Pack a count (`PMIX_SIZE`) and, when non-empty, the values in one pack call.
pub(crate) fn pack_list<T: Codec>(b: &mut DataBuffer, values: &[T]) -> Result<(), Error> {
    b.pack(&[Size(values.len() as u64)])?;
    if !values.is_empty() {
        b.pack(values)?;
    }
    Ok(())
}

/// Unpack what [`pack_list`] packed; `what` names the list in an error.
pub(crate) fn unpack_list<T: Codec>(b: &mut DataBuffer, what: &str) -> Result<Vec<T>, Error> {
    let n = count(b, what)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    b.unpack(n)
}

/// Unpack one value of a pack call that must hold exactly one.
pub fn one<T: Codec>(b: &mut DataBuffer, what: &str) -> Result<T, Error> {
    b.unpack::<T>(1)?
        .into_iter()
        .next()
        .ok_or_else(|| malformed(&format!("{what} is missing")))
}

/// Unpack a `PMIX_SIZE` count, bounded by the bytes left (each element takes at least one).
pub(crate) fn count(b: &mut DataBuffer, what: &str) -> Result<usize, Error> {
    let n: Size = one(b, what)?;
    let n = usize::try_from(n.0).map_err(|_| malformed(&format!("{what} too large")))?;
    if n > b.unread().len() {
        return Err(Error::decode(
            Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER,
            format!("{what} of {n} exceeds the bytes left"),
        ));
    }
    Ok(n)
}

/// `items.retain(keep)`, and how many it removed.
pub(crate) fn retain_counted<T>(items: &mut Vec<T>, keep: impl Fn(&T) -> bool) -> usize {
    let before = items.len();
    items.retain(|i| keep(i));
    before - items.len()
}

pub(crate) fn malformed(why: &str) -> Error {
    Error::decode(Status::ERR_UNPACK_FAILURE, why.to_owned())
}
