//! The server library's own credentials (PMIx v5.0 ch. 16), sans-IO.
//!
//! A server knows who each of its clients is: the client's registration names its user and
//! group, and on a Unix socket the kernel's `SO_PEERCRED` confirmed them at the handshake.
//! So the server can vouch for a client: the credential it mints states the client's
//! identifier, user and group, sealed with HMAC-SHA-256 under a key only the server holds
//! (drawn from the operating system's randomness when the server starts). Validation —
//! by any process of the same server — recomputes the seal and answers the identity it
//! states. A credential of another server (another key) or altered in any byte is
//! `PMIX_ERR_INVALID_CRED`.
//!
//! The credential is printable: `pmixrs1:` and the hex of
//!
//! ```text
//!   uid u32 LE | gid u32 LE | rank u32 LE | nspace length u16 LE | nspace | seal (32)
//! ```
//!
//! with the seal over the prefix and everything before it. Printable, it survives being
//! passed through environments, logs and bindings that mishandle bytes above 127 (the Debian
//! python3-pmix binding cannot return such a byte object).

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::model::{Info, Nspace, Proc, Rank, Status, attr};

const MAGIC: &[u8] = b"pmixrs1:";
const SEAL_LEN: usize = 32;

/// The name this library gives its credentials (`PMIX_CRED_TYPE`).
pub const CRED_TYPE: &str = "pmix-rs-native";

/// What a valid credential states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub proc: Proc,
    pub uid: u32,
    pub gid: u32,
}

fn seal(key: &[u8; 32], body: &[u8]) -> Result<[u8; SEAL_LEN], Status> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).map_err(|_| Status::ERR_INIT)?;
    mac.update(body);
    Ok(mac.finalize().into_bytes().into())
}

/// A credential vouching for `who`.
pub fn mint(key: &[u8; 32], who: &Identity) -> Result<Vec<u8>, Status> {
    let ns = who.proc.nspace.as_str().as_bytes();
    let len = u16::try_from(ns.len()).map_err(|_| Status::ERR_BAD_PARAM)?;
    let mut body = Vec::with_capacity(14 + ns.len());
    body.extend_from_slice(&who.uid.to_le_bytes());
    body.extend_from_slice(&who.gid.to_le_bytes());
    body.extend_from_slice(&who.proc.rank.0.to_le_bytes());
    body.extend_from_slice(&len.to_le_bytes());
    body.extend_from_slice(ns);
    let sealed = [MAGIC, &body].concat();
    let s = seal(key, &sealed)?;
    let mut out = MAGIC.to_vec();
    for b in body.iter().chain(&s) {
        out.extend_from_slice(format!("{b:02x}").as_bytes());
    }
    Ok(out)
}

fn unhex(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks(2)
        .map(|pair| {
            let s = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(s, 16).ok()
        })
        .collect()
}

/// The identity a credential states, if this server's key sealed it.
pub fn validate(key: &[u8; 32], credential: &[u8]) -> Result<Identity, Status> {
    let invalid = Status::ERR_INVALID_CRED;
    let raw = credential
        .strip_prefix(MAGIC)
        .and_then(unhex)
        .ok_or(invalid)?;
    let body_len = raw.len().checked_sub(SEAL_LEN).ok_or(invalid)?;
    let (rest, given) = raw.split_at(body_len);
    let mut mac = Hmac::<Sha256>::new_from_slice(key).map_err(|_| Status::ERR_INIT)?;
    mac.update(MAGIC);
    mac.update(rest);
    // Constant-time comparison of the seal.
    mac.verify_slice(given).map_err(|_| invalid)?;
    let word = |i: usize| -> Result<u32, Status> {
        let b = rest.get(i..i + 4).ok_or(invalid)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (uid, gid, rank) = (word(0)?, word(4)?, word(8)?);
    let len = rest.get(12..14).ok_or(invalid)?;
    let len = usize::from(u16::from_le_bytes([len[0], len[1]]));
    let ns = rest.get(14..14 + len).ok_or(invalid)?;
    if rest.len() != 14 + len {
        return Err(invalid);
    }
    let ns = std::str::from_utf8(ns).map_err(|_| invalid)?;
    let nspace = Nspace::new(ns).map_err(|_| invalid)?;
    Ok(Identity {
        proc: Proc::new(nspace, Rank(rank)),
        uid,
        gid,
    })
}

/// What a validation answers about a valid credential: the identity it states.
pub fn validated_info(who: &Identity) -> Vec<Info> {
    vec![
        Info::new(attr::USERID, who.uid),
        Info::new(attr::GRPID, who.gid),
        Info::new(attr::PROCID, who.proc.clone()),
        Info::new(attr::CRED_TYPE, CRED_TYPE.to_owned()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Identity {
        Identity {
            proc: Proc::try_new("job", 3).unwrap(),
            uid: 1000,
            gid: 100,
        }
    }

    #[test]
    fn a_credential_validates_under_its_key_only_and_untouched() {
        let key = [7u8; 32];
        let cred = mint(&key, &who()).unwrap();
        assert_eq!(validate(&key, &cred), Ok(who()));
        assert_eq!(validate(&[8u8; 32], &cred), Err(Status::ERR_INVALID_CRED));
        assert!(cred.iter().all(u8::is_ascii_graphic));
        for i in 0..cred.len() {
            let mut bad = cred.clone();
            // Another character, still a hex digit past the prefix.
            bad[i] = if bad[i] == b'0' { b'1' } else { b'0' };
            assert_eq!(
                validate(&key, &bad),
                Err(Status::ERR_INVALID_CRED),
                "byte {i}"
            );
        }
        for bad in [
            &[][..],
            &cred[..10],
            b"pmixrs1 but not a credential at all, no",
        ] {
            assert_eq!(validate(&key, bad), Err(Status::ERR_INVALID_CRED));
        }
    }
}
