use super::*;
use proptest::prelude::*;

fn w(max: u64) -> ContextWindow {
    ContextWindow::with_defaults(max).unwrap()
}

#[test]
fn zones_at_every_boundary() {
    let win = w(100_000);
    let cases = [
        (0, Zone::Green),
        (49_990, Zone::Green),
        (49_999, Zone::Green),
        (50_000, Zone::Yellow),
        (69_990, Zone::Yellow),
        (69_999, Zone::Yellow),
        (70_000, Zone::Orange),
        (84_990, Zone::Orange),
        (84_999, Zone::Orange),
        (85_000, Zone::Red),
        (99_999, Zone::Red),
        (150_000, Zone::Red),
    ];
    for (used, zone) in cases {
        assert_eq!(win.zone(used), zone, "used {used}");
        assert_eq!(win.status(used).action, Action::default_for(zone));
    }
    assert!(!win.is_emergency(94_999));
    assert!(win.is_emergency(95_000));
}

#[test]
fn utilization_limit_scales_every_threshold() {
    let limit = Ratio::new(0.75).unwrap();
    let win = ContextWindow::new(
        128_000,
        limit,
        Thresholds::default(),
        ZoneActions::default(),
    )
    .unwrap();
    assert_eq!(win.effective_max(), 96_000);
    let at = win.token_thresholds();
    assert_eq!(
        (
            at.yellow_from,
            at.orange_from,
            at.red_from,
            at.emergency_from
        ),
        (48_000, 67_200, 81_600, 91_200)
    );
    assert_eq!(win.zone(47_999), Zone::Green);
    assert_eq!(win.zone(48_000), Zone::Yellow);
    assert_eq!(win.zone(81_599), Zone::Orange);
    assert_eq!(win.zone(81_600), Zone::Red);
    assert_eq!(win.status(48_000).available, 48_000);
}

#[test]
fn uneven_windows_round_edges_up() {
    // 50 % of 4,097 is 2,048.5: 2,048 is still below half, 2,049 is not.
    let win = w(4_097);
    assert_eq!(win.zone(2_048), Zone::Green);
    assert_eq!(win.zone(2_049), Zone::Yellow);
}

#[test]
fn tiny_windows_and_bad_thresholds_are_refused() {
    assert_eq!(w(2_048).effective_max(), 2_048);
    let err = ContextWindow::with_defaults(2_047).unwrap_err();
    assert!(err.to_string().contains("at least 2048"), "{err}");
    let half = Ratio::new(0.5).unwrap();
    assert!(ContextWindow::new(4_096, half, Thresholds::default(), ZoneActions::default()).is_ok());
    let err =
        ContextWindow::new(4_000, half, Thresholds::default(), ZoneActions::default()).unwrap_err();
    assert!(matches!(
        err,
        WindowError::TooSmall {
            effective: 2_000,
            ..
        }
    ));
    let flat = Thresholds {
        yellow: Ratio::new(0.5).unwrap(),
        ..Thresholds::default()
    };
    assert!(ContextWindow::new(8_192, Ratio::ONE, flat, ZoneActions::default()).is_err());
}

#[test]
fn ratio_accepts_only_the_unit_interval() {
    assert!(Ratio::new(0.0).is_none());
    assert!(Ratio::new(1.0000001).is_none());
    assert!(Ratio::new(f64::NAN).is_none());
    assert!(Ratio::new(-0.5).is_none());
    assert_eq!(Ratio::new(1.0), Some(Ratio::ONE));
    assert_eq!(Ratio::new(0.7).unwrap().ppm(), 700_000);
}

#[test]
fn expansion_is_allowed_only_short_of_orange() {
    let win = w(10_000);
    assert!(win.supports_expansion(6_000, 999));
    assert!(!win.supports_expansion(6_000, 1_000));
    assert!(!win.supports_expansion(u64::MAX, 1));
}

#[test]
fn configured_actions_replace_the_defaults() {
    let actions = ZoneActions::new(
        Action::ProceedNormally,
        Action::OptimizeThenCheckpoint,
        Action::OptimizeThenCheckpoint,
        Action::EmergencyCheckpointAndRefresh,
    );
    let win = ContextWindow::new(10_000, Ratio::ONE, Thresholds::default(), actions).unwrap();
    assert_eq!(win.status(6_000).action, Action::OptimizeThenCheckpoint);
}

#[test]
fn monitor_reports_each_crossing_once() {
    let win = w(10_000);
    let mut m = ZoneMonitor::default();
    assert!(m.observe(&win, 100).is_empty());
    assert_eq!(
        m.observe(&win, 5_000),
        vec![WindowEvent::ZoneChanged {
            from: Zone::Green,
            to: Zone::Yellow,
            used: 5_000,
            action: Action::MonitorAndPlanCheckpoint
        }]
    );
    assert!(m.observe(&win, 6_000).is_empty());
    let jump = m.observe(&win, 9_600);
    assert_eq!(jump.len(), 2);
    assert!(matches!(
        jump[0],
        WindowEvent::ZoneChanged { to: Zone::Red, .. }
    ));
    assert_eq!(jump[1], WindowEvent::EmergencyEntered { used: 9_600 });
    let back = m.observe(&win, 1_000);
    assert!(matches!(
        back[0],
        WindowEvent::ZoneChanged {
            from: Zone::Red,
            to: Zone::Green,
            ..
        }
    ));
    assert_eq!(back[1], WindowEvent::EmergencyCleared { used: 1_000 });
}

proptest! {
    /// The token thresholds and the share comparison never disagree.
    #[test]
    fn zone_matches_exact_fraction(max in 2_048u64..5_000_000, limit_ppm in 500_000u32..=1_000_000, used in 0u64..6_000_000) {
        let limit = Ratio::from_ppm(limit_ppm);
        let win = ContextWindow::new(max, limit, Thresholds::default(), ZoneActions::default());
        prop_assume!(win.is_ok());
        let win = win.unwrap();
        let eff = win.effective_max() as u128;
        let share = |ppm: u32| used as u128 * 1_000_000 >= ppm as u128 * eff;
        let expected = if share(850_000) { Zone::Red } else if share(700_000) { Zone::Orange } else if share(500_000) { Zone::Yellow } else { Zone::Green };
        prop_assert_eq!(win.zone(used), expected);
        prop_assert_eq!(win.is_emergency(used), share(950_000));
    }
}
