//! The mock's call kinds: what [`MockDevice`](crate::MockDevice) counts and
//! can be told to fail ([`MockDevice::fail_nth`](crate::MockDevice::fail_nth)).

/// One kind of device call.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Call {
    Reserve,
    ReleaseReservation,
    CreatePage,
    ReleasePage,
    Map,
    Unmap,
    SetAccess,
    Malloc,
    Free,
    CreateStream,
    DestroyStream,
    RecordEvent,
    QueryEvent,
    ReleaseEvent,
    WaitEvent,
    SynchronizeStream,
    Synchronize,
    Copy,
}

impl Call {
    /// Every call kind, in declaration order.
    pub const ALL: [Call; 18] = [
        Call::Reserve,
        Call::ReleaseReservation,
        Call::CreatePage,
        Call::ReleasePage,
        Call::Map,
        Call::Unmap,
        Call::SetAccess,
        Call::Malloc,
        Call::Free,
        Call::CreateStream,
        Call::DestroyStream,
        Call::RecordEvent,
        Call::QueryEvent,
        Call::ReleaseEvent,
        Call::WaitEvent,
        Call::SynchronizeStream,
        Call::Synchronize,
        Call::Copy,
    ];

    /// The device method's name, used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Call::Reserve => "reserve",
            Call::ReleaseReservation => "release_reservation",
            Call::CreatePage => "create_page",
            Call::ReleasePage => "release_page",
            Call::Map => "map",
            Call::Unmap => "unmap",
            Call::SetAccess => "set_access",
            Call::Malloc => "malloc",
            Call::Free => "free",
            Call::CreateStream => "create_stream",
            Call::DestroyStream => "destroy_stream",
            Call::RecordEvent => "record_event",
            Call::QueryEvent => "query_event",
            Call::ReleaseEvent => "release_event",
            Call::WaitEvent => "wait_event",
            Call::SynchronizeStream => "synchronize_stream",
            Call::Synchronize => "synchronize",
            Call::Copy => "copy",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_names_are_unique() {
        let mut names: Vec<_> = Call::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Call::ALL.len());
    }
}
