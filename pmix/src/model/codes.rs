//! The standard's open code sets as newtypes over their C integer (STYLE 7).
//!
//! Each type wraps the integer that crosses the wire and the C ABI; its named values are
//! generated from the inventory (`generated/constants.rs`), with OpenPMIx 4.2.2's numbers. An
//! unknown value from a newer peer is kept as it is and round-trips, instead of failing.
//! Several names can share a number (deprecated aliases); [`name`](Status::name) returns the
//! current one.

/// Define a code-set newtype with `name()` and `Debug` backed by a generated table.
macro_rules! code_set {
    ($(#[$doc:meta])* $name:ident($repr:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $repr);

        impl $name {
            /// The C name of this value (`PMIX_…`), or `None` for a value no table names.
            /// Deprecated aliases are only returned when no current name has this value.
            pub fn name(self) -> Option<&'static str> {
                let mut alias = None;
                for (name, value, deprecated) in Self::NAMES {
                    if *value == self {
                        if !*deprecated {
                            return Some(name);
                        }
                        alias = alias.or(Some(*name));
                    }
                }
                alias
            }

            /// The value with the given C name, aliases included.
            pub fn from_name(name: &str) -> Option<Self> {
                Self::NAMES.iter().find(|(n, _, _)| *n == name).map(|(_, v, _)| *v)
            }

            /// Every named value, in header order (aliases included).
            pub fn all() -> impl Iterator<Item = (&'static str, Self)> {
                Self::NAMES.iter().map(|(n, v, _)| (*n, *v))
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self.name() {
                    Some(n) => write!(f, "{n}"),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }

        impl From<$repr> for $name {
            fn from(v: $repr) -> Self {
                $name(v)
            }
        }

        impl From<$name> for $repr {
            fn from(v: $name) -> $repr {
                v.0
            }
        }
    };
}

code_set!(
    /// `pmix_status_t`: a return status or an event code (PMIx v5.0 §3.1.1).
    Status(i32)
);
code_set!(
    /// `pmix_data_type_t`: the type code of a value (PMIx v5.0 §3.3).
    DataType(u16)
);
code_set!(
    /// `pmix_scope_t`: who may see a `PMIx_Put` value (PMIx v5.0 §5.2.1.1).
    Scope(u8)
);
code_set!(
    /// `pmix_data_range_t`: the range of published data and events (PMIx v5.0 §9.5.1).
    DataRange(u8)
);
code_set!(
    /// `pmix_persistence_t`: how long published data lives (PMIx v5.0 §9.5.2).
    Persistence(u8)
);
code_set!(
    /// `pmix_proc_state_t`: the state of a process (PMIx v5.0 §3.2.5).
    ProcState(u8)
);
code_set!(
    /// `pmix_job_state_t`: the state of a job (PMIx v5.0 §3.2.7).
    JobState(u8)
);
code_set!(
    /// `pmix_alloc_directive_t`: the kind of an allocation request (PMIx v5.0 §13.1.4).
    AllocDirective(u8)
);
code_set!(
    /// `pmix_iof_channel_t`: I/O forwarding channels, a bit set (PMIx v5.0 §18.3.3).
    IofChannel(u16)
);
code_set!(
    /// `pmix_coord_view_t`: logical or physical fabric coordinates (PMIx v5.0 §15.2.7).
    CoordView(u8)
);
code_set!(
    /// `pmix_link_state_t`: the state of a fabric link (PMIx v5.0 §15.2.8).
    LinkState(u8)
);
code_set!(
    /// `pmix_bind_envelope_t`: process or thread binding (PMIx v5.0 §12.4.4.1).
    BindEnvelope(u8)
);
code_set!(
    /// `pmix_locality_t`: relative locality of two processes, a bit set (PMIx v5.0 §12.4.2.3).
    Locality(u16)
);
code_set!(
    /// `pmix_device_type_t`: kinds of devices, a bit set (PMIx v5.0 §12.4.8).
    DeviceType(u64)
);
code_set!(
    /// `pmix_storage_medium_t` (provisional, PMIx v5.0 §19.1), a bit set.
    StorageMedium(u64)
);
code_set!(
    /// `pmix_storage_accessibility_t` (provisional, PMIx v5.0 §19.1), a bit set.
    StorageAccessibility(u64)
);
code_set!(
    /// `pmix_storage_persistence_t` (provisional, PMIx v5.0 §19.1), a bit set.
    StoragePersistence(u64)
);
code_set!(
    /// `pmix_storage_access_type_t` (provisional, PMIx v5.0 §19.1), a bit set.
    StorageAccessType(u16)
);
code_set!(
    /// `pmix_info_directives_t`: the flags of a `pmix_info_t` (PMIx v5.0 §3.2.10).
    InfoDirectives(u32)
);
code_set!(
    /// `pmix_group_opt_t`: accept or decline a group invitation (PMIx v5.0 §14.2.13.1).
    GroupOpt(i32)
);
code_set!(
    /// `pmix_group_operation_t`: construct or destruct, for the host's group upcall.
    GroupOperation(i32)
);
code_set!(
    /// `pmix_fabric_operation_t`: request or update fabric information (PMIx v5.0 §15.2.9).
    FabricOperation(i32)
);

impl Status {
    /// `true` for `PMIX_SUCCESS` and the two `PMIX_OPERATION_*` successes.
    pub fn is_success(self) -> bool {
        self == Status::SUCCESS || self == Status::OPERATION_SUCCEEDED
    }
}

impl InfoDirectives {
    /// Whether every bit of `other` is set here.
    pub fn contains(self, other: InfoDirectives) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for InfoDirectives {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        InfoDirectives(self.0 | rhs.0)
    }
}

impl DataType {
    /// Whether this code names one of the data types OpenPMIx 4.2 can pack (1‥69, less the
    /// removed 29 and 44). `PMIX_UNDEF` is the type of an empty value and has no payload.
    pub fn is_packable(self) -> bool {
        matches!(self.0, 1..=69) && self.0 != 29 && self.0 != 44
    }
}
