//! The harness's C module against the crate's table of upcalls and the standard's inventory.

use super::*;

/// Upcalls of the table this harness's C host leaves NULL whatever a vector asks, each
/// with why.
const NOT_PROVIDED: [(&str, &str); 1] = [(
    "tool_connected",
    "no up_tool_connected: a tool connecting to a C library's server is served as by a \
     host without tool support",
)];

/// Each upcall's C slot in `module`, and whether it is set; each slot's C type.
macro_rules! slots_set {
    ($(
        $(#[$doc:meta])*
        $code:literal $Var:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty
        [$(slot $slot:ident $c:literal)?]
        default $default:block
    )*) => {
        fn slots_set(module: &CServerModule) -> Vec<(&'static str, bool)> {
            vec![$($((stringify!($slot), module.$slot.is_some()),)?)*]
        }

        /// The C type names of the upcalls that have a slot.
        const C_TYPES: &[&str] = &[$($($c,)?)*];
    };
}

pmix::for_each_upcall!(slots_set);

#[test]
fn every_upcall_of_the_table_is_provided_or_listed_as_not() {
    let all = HostCaps {
        fence: true,
        direct_modex: true,
        publish: true,
    };
    let module = slots(all).slots;
    let slots = slots_set(&module);
    assert!(
        slots.len() > 20,
        "the table has the module's slots: {slots:?}"
    );
    for (slot, set) in slots {
        let listed = NOT_PROVIDED.iter().any(|(name, _)| *name == slot);
        assert_ne!(
            set, listed,
            "slot {slot}: set {set}, listed as not provided {listed}; a new upcall needs \
             an up_ function in the module or a line in NOT_PROVIDED"
        );
    }
}

#[test]
fn the_upcalls_a_vector_can_refuse_are_upcalls_of_the_table() {
    for name in crate::vector::REFUSABLE {
        assert!(C_TYPES.contains(&name), "{name} is no upcall's C type");
    }
}

#[test]
fn every_upcall_of_the_table_is_an_upcall_of_the_standard() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let inventory = crate::inventory::Inventory::load(&root.join("spec-vectors/inventory"))
        .expect("the inventory loads");
    for name in C_TYPES {
        let known = inventory.standards.iter().any(|s| {
            s.apis
                .iter()
                .any(|r| r.get("name") == *name && r.get("kind") == "upcall")
        });
        assert!(known, "{name} is not an upcall in the standard's inventory");
    }
}
