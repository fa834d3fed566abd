//! `PMIX_REGEX`: node and process regexes as OpenPMIx's `preg` modules write them.
//!
//! The native and raw modules' regexes are text (`pmix[n0-3]`, `raw:0,1`) sent as a
//! NUL-terminated string with no length prefix, which decoding gives back without its NUL.
//! The compress module's (`blob:`) is binary with NULs inside, written as it is.

use super::primitive::{Reader, Writer};
use crate::Error;

pub(super) fn encode(w: &mut Writer, regex: &[u8]) {
    if regex.starts_with(b"blob") {
        w.raw(regex);
        return;
    }
    // A text regex ends at its first NUL, whether the caller's bytes carry it (a C value
    // loaded from the text keeps it) or not: one NUL ends it on the wire. Two made every
    // value after the regex unreadable to OpenPMIx's clients, which crashed on the job
    // information of a host that registered its node map as a regex.
    let text = regex.split(|b| *b == 0).next().unwrap_or_default();
    w.cstr_bytes(text);
}

pub(super) fn decode(r: &mut Reader<'_>) -> Result<Vec<u8>, Error> {
    r.cstr_bytes("regex")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_regex_ends_with_one_nul_whether_or_not_it_carries_one() {
        for given in [&b"pmix[vm]"[..], &b"pmix[vm]\0"[..]] {
            let mut w = Writer::default();
            encode(&mut w, given);
            assert_eq!(w.into_bytes(), b"pmix[vm]\0", "{given:?}");
        }
    }
}
