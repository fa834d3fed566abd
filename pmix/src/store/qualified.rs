//! Values kept with a qualifier: the values a process posted for a group, qualified by the
//! group's context id (`PMIX_GROUP_CONTEXT_ID`, PMIx latest draft §14.2.5, provisional).
//!
//! A member constructing a group may post values for it (`PMIX_GROUP_LOCAL_CID`, its own id
//! for the group's communicator); "these values are to be returned to all participants with
//! the collected data at completion of construct" and are "retrieved via the `PMIx_Get` API
//! using the process ID of the process that posted the value" (§14.2.5). The context id tells
//! the values of one group from those of the next: once a construction ends with one, each
//! value is kept under its poster with that id ([`GroupValues::post`]), and a get of the key
//! for the poster finds it when the get is qualified by that id, or not qualified at all
//! (then the latest posted wins).
//!
//! **On the wire** such a value travels in OpenPMIx 4.2's form, the only one its clients read:
//! a kval of key [`QUALIFIED_VALUE`] holding an array of infos, the value itself first, then
//! its qualifiers, each flagged `PMIX_INFO_QUALIFIER` ([`GroupValue::to_kval`]). An OpenPMIx
//! client stores it with its qualifiers and matches them against the get's; this crate's
//! client reads the plain value out of it ([`value_for`]).
//!
//! Values are kept until their poster's namespace is deregistered, past the group's
//! destruct: the context id still names them (OpenPMIx keeps them as long).

use std::collections::BTreeMap;

use crate::model::{DataArray, Info, InfoDirectives, Key, Kval, Proc, Value, attr};

/// OpenPMIx 4.2's key (`PMIX_QUALIFIED_VALUE`) of a value sent with its qualifiers: an array
/// of infos, the value first and the qualifiers after it. Not a key of the standard.
pub(crate) const QUALIFIED_VALUE: &str = "pmix.qual.val";

/// A value a process posted for the group of `context_id`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GroupValue {
    pub(crate) key: Key,
    pub(crate) value: Value,
    pub(crate) context_id: u64,
}

impl GroupValue {
    /// The value in OpenPMIx's qualified form: `[{key: value}, {PMIX_GROUP_CONTEXT_ID: id}]`,
    /// the id a `size_t` flagged as a qualifier (OpenPMIx compares qualifiers by type too).
    pub(crate) fn to_kval(&self) -> Kval {
        let value = Info {
            key: self.key.clone(),
            flags: InfoDirectives(0),
            value: self.value.clone(),
        };
        let id = Info {
            key: attr::GROUP_CONTEXT_ID.key(),
            flags: InfoDirectives(0),
            value: Value::Size(self.context_id),
        }
        .qualifier();
        Kval {
            key: Key::from_checked(QUALIFIED_VALUE.to_owned()),
            value: DataArray::of_infos(vec![value, id]).into(),
        }
    }
}

/// The values processes posted for groups, by poster, oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupValues {
    by_proc: BTreeMap<Proc, Vec<GroupValue>>,
}

impl GroupValues {
    /// Keep the values `proc` posted for the group of `context_id`; a key it posted for that
    /// group before is replaced.
    pub(crate) fn post(&mut self, proc: &Proc, context_id: u64, values: &[Info]) {
        let kept = self.by_proc.entry(proc.clone()).or_default();
        for v in values {
            kept.retain(|k| k.key != v.key || k.context_id != context_id);
            kept.push(GroupValue {
                key: v.key.clone(),
                value: v.value.clone(),
                context_id,
            });
        }
    }

    /// The value of `key` that `proc` posted for the group of `context_id`, or with no id
    /// the latest it posted for any group.
    pub(crate) fn find(
        &self,
        proc: &Proc,
        key: &str,
        context_id: Option<u64>,
    ) -> Option<&GroupValue> {
        (self.by_proc.get(proc)?.iter().rev())
            .find(|v| v.key.as_str() == key && context_id.is_none_or(|c| c == v.context_id))
    }

    /// Forget the values of a namespace's processes (it was deregistered).
    pub(crate) fn remove_nspace(&mut self, nspace: &str) {
        self.by_proc.retain(|p, _| p.nspace.as_str() != nspace);
    }

    /// Forget the values one process posted for its groups.
    pub(crate) fn remove_proc(&mut self, proc: &Proc) {
        self.by_proc.remove(proc);
    }
}

/// The value `kval` gives a get of `key` qualified by `context_id`: the value inside it when
/// it is a qualified value of `key` whose `PMIX_GROUP_CONTEXT_ID` is `context_id` (any, for a
/// get without one); its own value when it is of `key` and the get is not qualified. `None`
/// otherwise, malformed qualified values included.
pub(crate) fn value_for(kval: &Kval, key: &str, context_id: Option<u64>) -> Option<Value> {
    if kval.key.as_str() == key {
        return context_id.is_none().then(|| kval.value.clone());
    }
    if kval.key.as_str() != QUALIFIED_VALUE {
        return None;
    }
    let mut infos = kval.value.as_data_array()?.infos()?;
    let first = infos.next()?;
    if first.key.as_str() != key {
        return None;
    }
    let matches = context_id.is_none_or(|want| {
        infos.any(|q| {
            q.is_qualifier() && q.is(attr::GROUP_CONTEXT_ID) && q.value.to_u64() == Some(want)
        })
    });
    matches.then(|| first.value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(r: u32) -> Proc {
        Proc::try_new("job", r).unwrap()
    }

    fn local_cid(v: usize) -> Info {
        Info::new(attr::GROUP_LOCAL_CID, v)
    }

    #[test]
    fn a_group_value_goes_out_as_openpmix_qualified_value() {
        let v = GroupValue {
            key: attr::GROUP_LOCAL_CID.key(),
            value: Value::Size(1234),
            context_id: 7,
        };
        let kval = v.to_kval();
        assert_eq!(kval.key.as_str(), "pmix.qual.val");
        let array = kval.value.as_data_array().unwrap();
        let infos: Vec<&Info> = array.infos().unwrap().collect();
        assert_eq!(infos.len(), 2);
        assert_eq!(infos[0].key.as_str(), "pmix.grp.lclid");
        assert_eq!(infos[0].value, Value::Size(1234));
        assert!(!infos[0].is_qualifier());
        assert_eq!(infos[1].key.as_str(), "pmix.grp.ctxid");
        assert_eq!(infos[1].value, Value::Size(7));
        assert_eq!(infos[1].flags.0, 0x8, "PMIX_INFO_QUALIFIER");
    }

    #[test]
    fn a_value_is_found_by_its_posters_id_with_the_matching_context_id_or_none() {
        let mut values = GroupValues::default();
        values.post(&p(0), 1, &[local_cid(10)]);
        values.post(&p(0), 2, &[local_cid(20)]);
        let key = "pmix.grp.lclid";
        let found = |values: &GroupValues, c| values.find(&p(0), key, c).map(|v| v.value.clone());
        assert_eq!(found(&values, Some(1)), Some(Value::Size(10)));
        assert_eq!(found(&values, Some(2)), Some(Value::Size(20)));
        assert_eq!(found(&values, None), Some(Value::Size(20)), "the latest");
        assert_eq!(found(&values, Some(3)), None);
        assert!(
            values.find(&p(1), key, None).is_none(),
            "rank 1 posted none"
        );
        values.post(&p(0), 1, &[local_cid(11)]);
        assert_eq!(found(&values, Some(1)), Some(Value::Size(11)), "replaced");
        values.remove_nspace("job");
        assert_eq!(found(&values, None), None);
    }

    #[test]
    fn the_plain_value_is_read_out_of_a_qualified_one_only_when_the_qualifier_matches() {
        let kval = GroupValue {
            key: attr::GROUP_LOCAL_CID.key(),
            value: Value::Size(1234),
            context_id: 7,
        }
        .to_kval();
        let key = "pmix.grp.lclid";
        assert_eq!(value_for(&kval, key, Some(7)), Some(Value::Size(1234)));
        assert_eq!(value_for(&kval, key, None), Some(Value::Size(1234)));
        assert_eq!(value_for(&kval, key, Some(8)), None);
        assert_eq!(value_for(&kval, "pmix.other", Some(7)), None);
        let plain = Kval {
            key: Key::new(key).unwrap(),
            value: Value::Size(5),
        };
        assert_eq!(value_for(&plain, key, None), Some(Value::Size(5)));
        assert_eq!(
            value_for(&plain, key, Some(7)),
            None,
            "not posted for a group"
        );
        // A peer's malformed qualified value is no value.
        let bad = Kval {
            key: Key::new(QUALIFIED_VALUE).unwrap(),
            value: Value::Uint32(3),
        };
        assert_eq!(value_for(&bad, key, None), None);
        let empty = Kval {
            key: Key::new(QUALIFIED_VALUE).unwrap(),
            value: DataArray::of_infos(vec![]).into(),
        };
        assert_eq!(value_for(&empty, key, None), None);
    }
}
