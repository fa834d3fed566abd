//! Topology, cpusets and fabric geometry (PMIx v5.0 §12.4 and §15.2).
//!
//! Cpusets and topologies cross the wire as text that hwloc produces and parses (a source
//! name and a bitmap list or an XML document). This layer keeps that text as it is; the
//! `topology` layer (issue 7) turns it into hwloc objects.

use super::{ByteObject, CoordView, DeviceType, Locality};

/// `pmix_cpuset_t`: a set of processing units, from a named source (`"hwloc"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cpuset {
    pub source: Option<String>,
    /// The bitmap in the source's text form (hwloc: a list such as `0-3,8`).
    pub bitmap: Option<String>,
}

/// `pmix_topology_t`: a machine topology, from a named source (`"hwloc"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Topology {
    pub source: Option<String>,
    /// The topology in the source's exchange form (hwloc: XML).
    pub topology: Option<String>,
}

/// `pmix_coord_t`: a fabric coordinate in one view (PMIx v5.0 §15.2.3).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Coord {
    pub view: CoordView,
    pub coord: Vec<u32>,
}

/// `pmix_geometry_t`: where a fabric device sits (PMIx v5.0 §15.2.5).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Geometry {
    pub fabric: u64,
    pub uuid: Option<String>,
    pub osname: Option<String>,
    pub coordinates: Vec<Coord>,
}

/// `pmix_device_distance_t`: the distance from a process to a device (PMIx v5.0 §12.4.9).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceDistance {
    pub uuid: Option<String>,
    pub osname: Option<String>,
    pub device_type: DeviceType,
    pub mindist: u16,
    pub maxdist: u16,
}

/// `pmix_endpoint_t`: a fabric endpoint of a device (PMIx v5.0 §15.2.1).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    pub uuid: Option<String>,
    pub osname: Option<String>,
    pub endpt: ByteObject,
}

/// The highest processing-unit index a cpuset list may name. Lists come from peers and C
/// callers; hwloc allocates a bitmap as wide as its highest index, so an unbounded index
/// would let one string claim gigabytes. A million PUs is far beyond any node built.
pub const MAX_PU_INDEX: u32 = (1 << 20) - 1;

/// A set of processing-unit indexes in hwloc's list form (`0-3,8`): sorted, merged,
/// inclusive ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PuList {
    ranges: Vec<(u32, u32)>,
}

impl PuList {
    /// Parse hwloc's list form: comma-separated indexes and `a-b` ranges, in any order,
    /// overlapping or not. The empty string is the empty set. An open range (`4-`, hwloc's
    /// infinite set), an index above [`MAX_PU_INDEX`], a reversed range or any other text is
    /// `BadParam`.
    pub fn parse(text: &str) -> Result<PuList, crate::Error> {
        let bad = |why: &str| crate::Error::BadParam(format!("cpu list {text:?}: {why}"));
        let index = |s: &str| -> Result<u32, crate::Error> {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("an index is not a decimal number"));
            }
            match s.parse::<u32>() {
                Ok(i) if i <= MAX_PU_INDEX => Ok(i),
                _ => Err(bad("an index is above the highest supported PU")),
            }
        };
        let mut ranges = Vec::new();
        if text.trim().is_empty() {
            return Ok(PuList { ranges });
        }
        for part in text.split(',') {
            let (lo, hi) = match part.split_once('-') {
                Some((lo, hi)) => (index(lo)?, index(hi)?),
                None => {
                    let i = index(part)?;
                    (i, i)
                }
            };
            if lo > hi {
                return Err(bad("a range ends before it starts"));
            }
            ranges.push((lo, hi));
        }
        Ok(PuList::from_ranges(ranges))
    }

    /// The set of the given inclusive ranges (each `lo <= hi`), normalized.
    pub fn from_ranges(mut ranges: Vec<(u32, u32)>) -> PuList {
        ranges.retain(|(lo, hi)| lo <= hi);
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        PuList { ranges: merged }
    }

    /// The inclusive ranges, sorted and disjoint.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether the two sets share an index.
    pub fn intersects(&self, other: &PuList) -> bool {
        let (mut a, mut b) = (
            self.ranges.iter().peekable(),
            other.ranges.iter().peekable(),
        );
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            if x.1 < y.0 {
                a.next();
            } else if y.1 < x.0 {
                b.next();
            } else {
                return true;
            }
        }
        false
    }
}

impl std::fmt::Display for PuList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (n, (lo, hi)) in self.ranges.iter().enumerate() {
            if n > 0 {
                f.write_str(",")?;
            }
            if lo == hi {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}-{hi}")?;
            }
        }
        Ok(())
    }
}

/// The levels a locality string names, each with its tag and the bit of `pmix_locality_t`
/// that two processes sharing an object of that level have in common. The order is the
/// string's: the processor levels from the package down to the hardware thread, then the
/// NUMA node, as OpenPMIx 4.2 writes them (measured), so that either library reads the
/// other's strings.
pub const LOCALITY_LEVELS: [(&str, Locality); 7] = [
    ("SK", Locality::SHARE_PACKAGE),
    ("L3", Locality::SHARE_L3CACHE),
    ("L2", Locality::SHARE_L2CACHE),
    ("L1", Locality::SHARE_L1CACHE),
    ("CR", Locality::SHARE_CORE),
    ("HT", Locality::SHARE_HWTHREAD),
    ("NM", Locality::SHARE_NUMA),
];

/// `PMIx_Parse_cpuset_string`: a cpuset string (`PMIX_CPUSET`, `<source>:<bitmap>`) as a
/// [`Cpuset`]. Only hwloc's form is understood (`hwloc:0-3,8`, the source compared without
/// case); another source is `NotSupported` and a string without a source, or with a list
/// that does not parse, is `BadParam`.
pub fn parse_cpuset_string(text: &str) -> Result<Cpuset, crate::Error> {
    let Some((source, bitmap)) = text.split_once(':') else {
        return Err(crate::Error::BadParam(format!(
            "cpuset string {text:?} names no source (`<source>:<bitmap>`)"
        )));
    };
    if !source.eq_ignore_ascii_case("hwloc") {
        return Err(crate::Error::NotSupported(format!(
            "cpuset string {text:?}: only hwloc's cpusets are understood"
        )));
    }
    let list = PuList::parse(bitmap)?;
    Ok(Cpuset {
        source: Some("hwloc".into()),
        bitmap: Some(list.to_string()),
    })
}

/// `PMIx_server_generate_cpuset_string`: the cpuset string of `cpuset`, `hwloc:<list>`.
/// A cpuset from another source, or one whose bitmap does not parse, is refused.
pub fn cpuset_string(cpuset: &Cpuset) -> Result<String, crate::Error> {
    Ok(format!("hwloc:{}", cpuset_list(cpuset)?))
}

/// The processing units of an hwloc cpuset (no source counts as hwloc, as on the wire).
pub fn cpuset_list(cpuset: &Cpuset) -> Result<PuList, crate::Error> {
    if let Some(source) = &cpuset.source
        && !source.eq_ignore_ascii_case("hwloc")
    {
        return Err(crate::Error::NotSupported(format!(
            "a cpuset from source {source:?}: only hwloc's are understood"
        )));
    }
    PuList::parse(cpuset.bitmap.as_deref().unwrap_or(""))
}

/// The levels of a locality string (`hwloc:SK0:L30:…:HT0:NM0`): for each tag, the indexes of
/// the objects of that level the process's cpuset touches. The standard requires the
/// `<source>:` prefix (v5.0 §17.2.17); OpenPMIx 4.2 writes its strings without one
/// (`SK0:L30:…`, measured), so a string that starts with a level is read as hwloc's too.
fn locality_levels(text: &str) -> Result<Vec<(&str, PuList)>, crate::Error> {
    let bad = |why: &str| crate::Error::BadParam(format!("locality string {text:?}: {why}"));
    let Some((source, rest)) = text.split_once(':') else {
        return Err(bad("no source (`<source>:…`)"));
    };
    let level_of = |field: &str| {
        LOCALITY_LEVELS
            .iter()
            .map(|(tag, _)| *tag)
            .find(|tag| field.starts_with(tag))
    };
    let fields = if source.eq_ignore_ascii_case("hwloc") {
        rest
    } else if level_of(source).is_some() {
        text
    } else {
        return Err(crate::Error::NotSupported(format!(
            "locality string {text:?}: only hwloc's locality strings are understood"
        )));
    };
    let mut levels = Vec::new();
    for field in fields.split(':').filter(|f| !f.is_empty()) {
        let Some(tag) = level_of(field) else {
            return Err(bad("a field names no level the string may have"));
        };
        levels.push((tag, PuList::parse(&field[tag.len()..])?));
    }
    Ok(levels)
}

/// `PMIx_Get_relative_locality`: what two processes on one node share, from their locality
/// strings (`PMIX_LOCALITY_STRING`, which the host gives only for local processes, so the
/// answer always has `SHARE_NODE`). A level counts as shared when the two processes touch a
/// common object of it; a level missing from either string is not shared.
pub fn relative_locality(a: &str, b: &str) -> Result<Locality, crate::Error> {
    let (a, b) = (locality_levels(a)?, locality_levels(b)?);
    let mut shared = Locality::SHARE_NODE.0;
    for (tag, bit) in LOCALITY_LEVELS {
        let of = |levels: &[(&str, PuList)]| {
            levels
                .iter()
                .find(|(t, _)| *t == tag)
                .map(|(_, l)| l.clone())
        };
        if let (Some(x), Some(y)) = (of(&a), of(&b))
            && x.intersects(&y)
        {
            shared |= bit.0;
        }
    }
    Ok(Locality(shared))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Strings from peers and C callers never panic the parsers; what parses prints
        /// back to a list that parses to the same set.
        #[test]
        fn any_text_parses_or_is_refused(a in ".{0,40}", b in "[0-9,\\-]{0,20}") {
            let _ = relative_locality(&a, &b);
            let _ = relative_locality(&format!("hwloc:SK{b}"), &format!("HT{b}:NM0"));
            let _ = parse_cpuset_string(&a);
            if let Ok(list) = PuList::parse(&b) {
                prop_assert_eq!(PuList::parse(&list.to_string()).ok(), Some(list));
            }
        }

        /// Two lists intersect exactly when their sets share an index.
        #[test]
        fn intersection_agrees_with_the_sets(
            x in proptest::collection::vec((0u32..64, 0u32..8), 0..6),
            y in proptest::collection::vec((0u32..64, 0u32..8), 0..6),
        ) {
            let set = |v: &[(u32, u32)]| {
                v.iter().flat_map(|(lo, len)| *lo..=lo + len).collect::<std::collections::BTreeSet<_>>()
            };
            let list = |v: &[(u32, u32)]| PuList::from_ranges(v.iter().map(|(lo, len)| (*lo, lo + len)).collect());
            let shared = !set(&x).is_disjoint(&set(&y));
            prop_assert_eq!(list(&x).intersects(&list(&y)), shared);
        }
    }
}
