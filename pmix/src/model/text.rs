//! `char *` as the standard means it: a C string is the bytes before its NUL, in no
//! particular encoding. File names, host names and user data are bytes on Linux, and an
//! OpenPMIx peer hands them on unchanged; so does this crate.
//!
//! [`Text`] holds those bytes. Rust code that wants a `&str` asks for one with
//! [`Text::as_str`], which fails with the offending position rather than changing a byte;
//! [`Text::to_str_lossy`] is for logs and messages only.
//!
//! A NUL inside a `Text` ends the string for every C reader and for this crate's decoder, as
//! it would in C; the C entry points never produce one.

use std::borrow::Cow;
use std::fmt;
use std::str::Utf8Error;

use crate::Error;

/// The bytes of a C string (without its terminating NUL), UTF-8 or not.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Vec<u8>);

impl Text {
    /// A string of these bytes, whatever their encoding.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Self {
        Text(bytes.into())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The string as UTF-8, or where its bytes stop being UTF-8.
    pub fn as_str(&self) -> Result<&str, Utf8Error> {
        std::str::from_utf8(&self.0)
    }

    /// The string as UTF-8, or a type mismatch that says why it is not.
    pub fn to_utf8(&self) -> Result<&str, Error> {
        self.as_str().map_err(|e| Error::TypeMismatch {
            expected: "a UTF-8 string".into(),
            found: format!("bytes that are not UTF-8 ({e})"),
        })
    }

    /// An owned UTF-8 string, or a type mismatch that says why it is not one.
    pub fn into_utf8(self) -> Result<String, Error> {
        String::from_utf8(self.0).map_err(|e| Error::TypeMismatch {
            expected: "a UTF-8 string".into(),
            found: format!("bytes that are not UTF-8 ({})", e.utf8_error()),
        })
    }

    /// The string for a person to read: bytes that are not UTF-8 become U+FFFD. Never for
    /// data that goes on.
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl AsRef<[u8]> for Text {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(s.as_bytes().to_vec())
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(s.into_bytes())
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Self {
        Text(s.as_bytes().to_vec())
    }
}

impl From<&[u8]> for Text {
    fn from(b: &[u8]) -> Self {
        Text(b.to_vec())
    }
}

impl From<Vec<u8>> for Text {
    fn from(b: Vec<u8>) -> Self {
        Text(b)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.0
    }
}

/// As a Rust string literal when the bytes are UTF-8, else as a byte string literal: the
/// two cannot be confused in a log.
impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Ok(s) => fmt::Debug::fmt(s, f),
            Err(_) => write!(f, "b\"{}\"", self.0.escape_ascii()),
        }
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_str_lossy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_is_kept_and_its_str_view_fails_at_the_byte() {
        let t = Text::from_bytes(b"caf\xe9".to_vec());
        assert_eq!(t.as_bytes(), b"caf\xe9");
        assert_eq!(t.as_str().unwrap_err().valid_up_to(), 3);
        let e = t.to_utf8().unwrap_err();
        assert_eq!(e.status(), crate::model::Status::ERR_TYPE_MISMATCH);
        assert_eq!(t.to_str_lossy(), "caf\u{fffd}");
        assert_eq!(format!("{t:?}"), r#"b"caf\xe9""#);
        assert!(t.clone().into_utf8().is_err());
        assert_eq!(t.into_bytes(), b"caf\xe9");
    }

    #[test]
    fn utf8_reads_as_str_and_compares_with_str() {
        let t = Text::from("café");
        assert_eq!(t.as_str(), Ok("café"));
        assert_eq!(t, "café");
        assert_eq!(format!("{t:?}"), r#""café""#);
        assert_eq!(t.to_string(), "café");
        assert_eq!(t.len(), 5);
        assert!(!t.is_empty());
    }
}
