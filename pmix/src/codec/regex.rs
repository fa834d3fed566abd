//! `PMIX_REGEX`: node and process regexes as OpenPMIx's `preg` modules write them.
//!
//! The native and raw modules' regexes are text (`pmix[n0-3]`, `raw:0,1`) sent as a
//! NUL-terminated string with no length prefix, which decoding gives back without its NUL.
//! The compress module's is `blob:`, `component=zlib:` and `size=N:`, each ending in a NUL,
//! then five bytes: OpenPMIx 4.2–6.1 write and read 27 + the length of the size field + 1
//! bytes (they read the size from `size=`, which parses as 0), and so does this codec, as
//! one binary value. A regex that starts with `blob` without the component after it is text.

use super::primitive::{Reader, Writer};
use crate::Error;

/// What follows `blob:` and its NUL in the compress module's form.
const COMPONENT: &[u8] = b"component=zlib:\0";

/// The bytes OpenPMIx's compress module reads past the size field's NUL.
const BLOB_TAIL: usize = 5;

/// Whether `regex` is in the compress module's binary form.
fn is_blob(regex: &[u8]) -> bool {
    regex.starts_with(b"blob")
        && regex
            .iter()
            .position(|b| *b == 0)
            .is_some_and(|nul| regex[nul + 1..].starts_with(COMPONENT))
}

pub(super) fn encode(w: &mut Writer, regex: &[u8]) {
    if is_blob(regex) {
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
    let mut regex = r.cstr_bytes("regex")?;
    if !(regex.starts_with(b"blob") && r.unread().starts_with(COMPONENT)) {
        return Ok(regex);
    }
    for field in ["regex component", "regex size"] {
        regex.push(0);
        regex.extend(r.cstr_bytes(field)?);
    }
    regex.push(0);
    regex.extend_from_slice(r.raw(BLOB_TAIL, "regex")?);
    Ok(regex)
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

    #[test]
    fn the_compress_modules_blob_is_one_value_and_a_text_named_blob_is_text() {
        let blob = b"blob:\0component=zlib:\0size=12:\0\x78\x9c\x01\x02\x03";
        let mut wire = blob.to_vec();
        wire.extend_from_slice(b"next\0");
        let mut r = Reader::new(&wire);
        assert_eq!(decode(&mut r).unwrap(), blob);
        assert_eq!(decode(&mut r).unwrap(), b"next");
        let mut w = Writer::default();
        encode(&mut w, blob);
        assert_eq!(w.into_bytes(), blob);
        // Text that starts with `blob` goes and comes back as text.
        let mut w = Writer::default();
        encode(&mut w, b"blob");
        let bytes = w.into_bytes();
        assert_eq!(bytes, b"blob\0");
        assert_eq!(decode(&mut Reader::new(&bytes)).unwrap(), b"blob");
        // A blob cut short is an error, not a read past the end.
        assert!(decode(&mut Reader::new(&blob[..blob.len() - 1])).is_err());
    }
}
