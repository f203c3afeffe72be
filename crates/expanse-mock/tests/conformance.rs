//! The backend conformance suite on the strict mock device.
expanse_conformance::conformance_tests!(expanse_mock::MockDevice::new(64 << 20, 2 << 20));

#[test]
fn mock_records_no_violation_for_a_correct_caller() {
    let d = expanse_mock::MockDevice::new(64 << 20, 2 << 20);
    expanse_conformance::map_write_read_cycle(&d).unwrap();
    assert!(d.violations().is_empty(), "{:?}", d.violations());
}

#[test]
fn mock_fails_the_nth_call_on_demand() {
    use expanse_device::{Device, DeviceError};
    use expanse_mock::Call;
    let d = expanse_mock::MockDevice::new(64 << 20, 2 << 20);
    d.fail_nth(Call::CreatePage, 2, DeviceError::Driver { call: "create_page", code: 7 });
    let a = d.create_page(2 << 20).unwrap();
    assert_eq!(d.create_page(2 << 20), Err(DeviceError::Driver { call: "create_page", code: 7 }));
    let c = d.create_page(2 << 20).unwrap();
    d.release_page(a).unwrap();
    d.release_page(c).unwrap();
}

#[test]
fn mock_holds_events_until_completed() {
    use expanse_device::{Device, StreamId};
    let d = expanse_mock::MockDevice::new(64 << 20, 2 << 20);
    d.hold_events(true);
    let e = d.record_event(StreamId(3)).unwrap();
    assert!(!d.query_event(e).unwrap());
    d.complete_events();
    assert!(d.query_event(e).unwrap());
    d.release_event(e).unwrap();
}

#[test]
#[should_panic(expected = "dropped with leaks")]
fn mock_reports_leaks_at_drop() {
    use expanse_device::Device;
    let d = expanse_mock::MockDevice::new(64 << 20, 2 << 20);
    let _ = d.create_page(2 << 20).unwrap();
}

#[test]
fn strict_mock_refuses_streams_it_did_not_create() {
    use expanse_device::{Device, DeviceError, StreamId};
    let d = expanse_mock::MockDevice::new(64 << 20, 2 << 20).with_strict_streams();
    assert!(matches!(d.record_event(StreamId(3)), Err(DeviceError::Misuse(_))));
    assert!(matches!(d.synchronize_stream(StreamId(2)), Err(DeviceError::Misuse(_))));
    let s = d.create_stream().unwrap();
    let e = d.record_event(s).unwrap();
    d.wait_event(StreamId::DEFAULT, e).unwrap();
    d.release_event(e).unwrap();
    assert_eq!(d.live_streams(), 1);
    d.destroy_stream(s).unwrap();
    assert!(matches!(d.synchronize_stream(s), Err(DeviceError::Misuse(_))), "destroyed stream still usable");
    assert_eq!(d.violations().len(), 3);
}
