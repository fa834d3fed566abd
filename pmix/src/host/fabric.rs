//! What a host needs to answer the `fabric` upcall (v5.0 §15.4): which of its fabrics a
//! request names. Sans-IO, shared by every host of the workspace (`pmixrun`, the conformance
//! harness, the simulator's daemons).

use crate::model::{FabricOperation, Info, attr};

/// How a host names one fabric it describes: its index and the values a client may choose it
/// by (`PMIX_FABRIC_IDENTIFIER`, `PMIX_FABRIC_VENDOR`, `PMIX_FABRIC_PLANE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricName<'a> {
    pub index: u64,
    pub identifier: &'a str,
    pub vendor: Option<&'a str>,
    pub plane: Option<&'a str>,
}

impl FabricName<'_> {
    /// Whether a `fabric` upcall of `op` with `directives` asks for this fabric: an update
    /// names its index (`PMIX_FABRIC_INDEX`); a request names nothing (the host's default
    /// fabric is this one) or only values this fabric has. A vendor or plane asked of a
    /// fabric that has none does not match.
    pub fn asked_by(&self, op: FabricOperation, directives: &[Info]) -> bool {
        if op == FabricOperation::UPDATE_INFO {
            return directives
                .iter()
                .find_map(|i| i.get(attr::FABRIC_INDEX))
                .is_some_and(|i| i as u64 == self.index);
        }
        let fits = |a: attr::Attr<String>, ours: Option<&str>| {
            directives
                .iter()
                .find_map(|i| i.get(a))
                .is_none_or(|asked| Some(asked.as_str()) == ours)
        };
        fits(attr::FABRIC_IDENTIFIER, Some(self.identifier))
            && fits(attr::FABRIC_VENDOR, self.vendor)
            && fits(attr::FABRIC_PLANE, self.plane)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET: FabricName<'static> = FabricName {
        index: 2,
        identifier: "net",
        vendor: Some("v"),
        plane: None,
    };

    #[test]
    fn a_request_matches_the_values_it_names_and_an_update_the_index() {
        let req = FabricOperation::REQUEST_INFO;
        assert!(NET.asked_by(req, &[]));
        let id = |s: &str| Info::new(attr::FABRIC_IDENTIFIER, s.to_owned());
        let vendor = |s: &str| Info::new(attr::FABRIC_VENDOR, s.to_owned());
        assert!(NET.asked_by(req, &[id("net"), vendor("v")]));
        assert!(!NET.asked_by(req, &[id("other")]));
        assert!(!NET.asked_by(req, &[vendor("w")]));
        let plane = Info::new(attr::FABRIC_PLANE, "p".to_owned());
        assert!(!NET.asked_by(req, &[plane]), "it has no plane");
        let upd = FabricOperation::UPDATE_INFO;
        assert!(NET.asked_by(upd, &[Info::new(attr::FABRIC_INDEX, 2usize)]));
        assert!(!NET.asked_by(upd, &[Info::new(attr::FABRIC_INDEX, 0usize)]));
        assert!(!NET.asked_by(upd, &[]));
    }
}
