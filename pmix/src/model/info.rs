//! `pmix_info_t`: a key, directive flags and a value (PMIx v5.0 §3.2.9–3.2.10).
//!
//! Infos carry attributes into every API call. The flags say how the receiver must treat
//! them: `PMIX_INFO_REQD` (the call fails if the attribute is not supported),
//! `PMIX_INFO_QUALIFIER` (qualifies the request's main attribute), `PMIX_INFO_PERSISTENT`
//! (the C struct owns no memory), `PMIX_INFO_ARRAY_END` (last of an array created by
//! `PMIX_INFO_CREATE`).

use super::attr::Attr;
use super::{Info, InfoDirectives, Key, Text, Value};

impl Info {
    /// An info for a standard attribute, with the value in the attribute's declared type.
    pub fn new<T: Into<Value>>(attr: Attr<T>, value: T) -> Self {
        Info {
            key: attr.key(),
            flags: InfoDirectives(0),
            value: value.into(),
        }
    }

    /// An info for a string attribute whose value is any bytes (a C string need not be
    /// UTF-8: a command line, a path).
    pub fn text(attr: Attr<String>, value: impl Into<Text>) -> Self {
        Info {
            key: attr.key(),
            flags: InfoDirectives(0),
            value: Value::String(Some(value.into())),
        }
    }

    /// An info for any key, or `BadParam` if the key is invalid.
    pub fn with_key(key: &str, value: impl Into<Value>) -> Result<Self, crate::Error> {
        Ok(Info {
            key: Key::new(key)?,
            flags: InfoDirectives(0),
            value: value.into(),
        })
    }

    /// Mark the info required: the receiver must fail the call if it cannot honour it.
    #[must_use]
    pub fn required(mut self) -> Self {
        self.flags = self.flags | InfoDirectives::REQD;
        self
    }

    /// Mark the info as a qualifier of the request's main attribute.
    #[must_use]
    pub fn qualifier(mut self) -> Self {
        self.flags = self.flags | InfoDirectives::QUALIFIER;
        self
    }

    /// Mark the info persistent (its C memory is not owned by the struct).
    #[must_use]
    pub fn persistent(mut self) -> Self {
        self.flags = self.flags | InfoDirectives::PERSISTENT;
        self
    }

    pub fn is_required(&self) -> bool {
        self.flags.contains(InfoDirectives::REQD)
    }

    pub fn is_qualifier(&self) -> bool {
        self.flags.contains(InfoDirectives::QUALIFIER)
    }

    pub fn is_persistent(&self) -> bool {
        self.flags.contains(InfoDirectives::PERSISTENT)
    }

    pub fn is_array_end(&self) -> bool {
        self.flags.contains(InfoDirectives::ARRAY_END)
    }

    /// Whether this info carries the given attribute (the `PMIX_CHECK_KEY` macro).
    pub fn is<T>(&self, attr: Attr<T>) -> bool {
        self.key == attr.def().key
    }

    /// Whether the boolean directive `attr` is set in `list`: given with `true`, or with no
    /// value at all (the standard's presence-only form); `false` is not set.
    pub fn flag(list: &[Info], attr: Attr<bool>) -> bool {
        list.iter()
            .any(|i| i.is(attr) && i.value.as_bool() != Some(false))
    }

    /// The value read as the attribute's type, if the key matches and the value fits.
    pub fn get<T: super::value::FromValue>(&self, attr: Attr<T>) -> Option<T> {
        if self.is(attr) {
            T::from_value(&self.value)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{InfoDirectives, attr};

    #[test]
    fn directive_flags_have_openpmix_values() {
        assert_eq!(InfoDirectives::REQD.0, 0x1);
        assert_eq!(InfoDirectives::ARRAY_END.0, 0x2);
        assert_eq!(InfoDirectives::REQD_PROCESSED.0, 0x4);
        assert_eq!(InfoDirectives::QUALIFIER.0, 0x8);
        assert_eq!(InfoDirectives::PERSISTENT.0, 0x10);
    }

    #[test]
    fn builder_sets_flags_and_typed_get_reads_back() {
        let info = Info::new(attr::JOB_SIZE, 4).required().qualifier();
        assert!(info.is_required() && info.is_qualifier() && !info.is_persistent());
        assert_eq!(info.key, "pmix.job.size");
        assert_eq!(info.get(attr::JOB_SIZE), Some(4));
        assert_eq!(info.get(attr::UNIV_SIZE), None);
    }
}
