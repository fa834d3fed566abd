//! The code's tables agree with the committed inventory of the standard.
//!
//! `pmix`'s attribute and constant tables are generated from `spec-vectors/inventory`; these
//! tests catch a hand edit on either side. (That the inventory itself is fresh against the
//! reference material is checked by `cargo xtask vectors --check`, in the xtask tests.)

use conformance::inventory::{Inventory, Version};
use pmix::model::*;

fn inventory() -> Inventory {
    Inventory::load(&pmix_tests::workspace_root().join("spec-vectors/inventory"))
        .expect("inventory loads")
}

#[test]
fn inventory_has_the_standards_totals() {
    let inv = inventory();
    let v5 = inv.standard(Version::V5_0);
    let draft = inv.standard(Version::Draft);
    assert_eq!(v5.attributes.len(), 459);
    assert_eq!(draft.attributes.len(), 526);
    assert_eq!(inv.retrieval_rules.len(), 103);
    assert_eq!(
        v5.apis.iter().filter(|r| r.get("kind") == "client").count(),
        67
    );
    assert_eq!(
        v5.apis.iter().filter(|r| r.get("kind") == "server").count(),
        22
    );
    assert!(
        inv.retrieval_rules
            .iter()
            .all(|r| !r.get("id").is_empty() && !r.get("expected").is_empty())
    );
}

#[test]
fn every_attribute_of_both_versions_is_a_typed_constant_with_its_key() {
    let inv = inventory();
    for (version, table) in [(Version::V5_0, attr::V5_0), (Version::Draft, attr::DRAFT)] {
        let rows = &inv.standard(version).attributes;
        assert_eq!(rows.len(), table.len(), "{version}");
        for row in rows {
            let def = attr::by_name(row.get("name"))
                .unwrap_or_else(|| panic!("{} missing", row.get("name")));
            assert_eq!(def.key, row.get("key"), "{}", def.name);
            let openpmix = def.openpmix_key.unwrap_or(def.key);
            if row.get("openpmix_key") != "-" {
                assert_eq!(openpmix, row.get("openpmix_key"), "{}", def.name);
            }
            let declared = row.get("type");
            let in_code = if version == Version::V5_0 {
                def.data_type
            } else {
                def.data_type_in_draft()
            };
            match in_code {
                Some(t) => assert_eq!(t.name(), Some(declared), "{}", def.name),
                None => assert!(
                    declared == "none" || declared == "varies",
                    "{}: {declared}",
                    def.name
                ),
            }
        }
    }
}

#[test]
fn every_openpmix_constant_has_its_value_in_the_code() {
    let inv = inventory();
    let mut checked = 0;
    for row in &inv.openpmix_constants {
        let (name, value) = (
            row.get("name"),
            row.get("value").parse::<i128>().expect("number"),
        );
        let code: Option<i128> = match row.get("rust_type") {
            "Status" => Status::from_name(name).map(|v| v.0.into()),
            "DataType" => DataType::from_name(name).map(|v| v.0.into()),
            "ProcState" => ProcState::from_name(name).map(|v| v.0.into()),
            "JobState" => JobState::from_name(name).map(|v| v.0.into()),
            "Scope" => Scope::from_name(name).map(|v| v.0.into()),
            "DataRange" => DataRange::from_name(name).map(|v| v.0.into()),
            "Persistence" => Persistence::from_name(name).map(|v| v.0.into()),
            "InfoDirectives" => InfoDirectives::from_name(name).map(|v| v.0.into()),
            "AllocDirective" => AllocDirective::from_name(name).map(|v| v.0.into()),
            "IofChannel" => IofChannel::from_name(name).map(|v| v.0.into()),
            "CoordView" => CoordView::from_name(name).map(|v| v.0.into()),
            "LinkState" => LinkState::from_name(name).map(|v| v.0.into()),
            "BindEnvelope" => BindEnvelope::from_name(name).map(|v| v.0.into()),
            "Locality" => Locality::from_name(name).map(|v| v.0.into()),
            "DeviceType" => DeviceType::from_name(name).map(|v| v.0.into()),
            "StorageMedium" => StorageMedium::from_name(name).map(|v| v.0.into()),
            "StorageAccessibility" => StorageAccessibility::from_name(name).map(|v| v.0.into()),
            "StoragePersistence" => StoragePersistence::from_name(name).map(|v| v.0.into()),
            "StorageAccessType" => StorageAccessType::from_name(name).map(|v| v.0.into()),
            _ => continue,
        };
        assert_eq!(code, Some(value), "{name}");
        checked += 1;
    }
    assert!(checked > 340, "only {checked} constants checked");
}

#[test]
fn every_status_constant_of_the_standard_is_known_with_its_number() {
    let inv = inventory();
    for version in Version::ALL {
        for row in &inv.standard(version).constants {
            if !matches!(row.get("category"), "status_error" | "event") {
                continue;
            }
            let name = row.get("name");
            let status =
                Status::from_name(name).unwrap_or_else(|| panic!("{version}: {name} missing"));
            let expected = match row.get("openpmix_value") {
                "-" => row.get("spec_value"),
                v => v,
            };
            assert_eq!(status.0.to_string(), expected, "{version}: {name}");
        }
    }
}

#[test]
fn deprecated_aliases_resolve_to_the_current_name() {
    assert_eq!(Status::EVENT_JOB_END, Status::ERR_JOB_TERMINATED);
    assert_eq!(Status(-145).name(), Some("PMIX_EVENT_JOB_END"));
    assert_eq!(Status(-999_999).name(), None);
    assert_eq!(format!("{:?}", Status(-999_999)), "Status(-999999)");
}
