//! `PMIX_REGEX`: node and process regexes as OpenPMIx's `preg` modules write them.
//!
//! The native module's regex is text (`pmix[n0-3]`) sent as a NUL-terminated string with no
//! length prefix.

use super::primitive::{Reader, Writer};
use crate::Error;

pub(super) fn encode(w: &mut Writer, regex: &[u8]) {
    w.cstr_bytes(regex);
}

pub(super) fn decode(r: &mut Reader<'_>) -> Result<Vec<u8>, Error> {
    r.cstr_bytes("regex")
}
