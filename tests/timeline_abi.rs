//! The sync core through the C ABI only (`netsync_*` functions), driven by
//! the seeded network model: what an engine with its own transport does.

use std::ptr;

use netsync::ffi::result::NetsyncResult;
use netsync::ffi::send_filter::*;
use netsync::ffi::timeline::*;
use netsync::ffi::types::*;
use netsync::netsim::{Link, NetworkProfile};

const OK: NetsyncResult = NetsyncResult::NETSYNC_OK;

fn sample(id: u64, t: f64) -> NetsyncSample {
    // A circle of radius 3 m at 1 rad/s, with velocity.
    let a = t as f32 + id as f32;
    NetsyncSample {
        entity_id: id,
        position: NetsyncVec3 {
            x: 3.0 * a.cos(),
            y: 0.0,
            z: 3.0 * a.sin(),
        },
        rotation: NetsyncQuat::default(),
        linear_velocity: NetsyncVec3 {
            x: -3.0 * a.sin(),
            y: 0.0,
            z: 3.0 * a.cos(),
        },
        angular_velocity: NetsyncVec3::default(),
        flags: NETSYNC_SAMPLE_HAS_VELOCITY,
    }
}

fn new_timeline(mode: u32) -> *mut NetsyncTimeline {
    let mut config = unsafe { std::mem::zeroed::<NetsyncTimelineConfig>() };
    assert_eq!(netsync_timeline_config_default(&mut config), OK);
    config.mode = mode;
    let mut tl = ptr::null_mut();
    assert_eq!(netsync_timeline_new(&config, &mut tl), OK);
    tl
}

/// Runs 30 s of 20 Hz snapshots of 8 entities over `profile` and returns
/// (worst alignment error after warm-up, largest step, extrapolated share).
fn run(profile: NetworkProfile, mode: u32, seed: u64) -> (f32, f32, f64) {
    let tl = new_timeline(mode);
    let mut link = Link::new(profile, seed);
    let mut arrivals: Vec<(f64, f64)> = Vec::new();
    for k in 0..600 {
        let st = k as f64 * 0.05;
        let (times, n) = link.transmit(st, 300);
        arrivals.extend(times[..n].iter().map(|&t| (t, st)));
    }
    arrivals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = vec![NetsyncTransform::default(); 8];
    let mut count = 0usize;
    let mut next = 0;
    let (mut worst, mut max_step, mut extrapolated, mut frames) = (0.0f32, 0.0f32, 0u64, 0u64);
    let mut last = [None::<NetsyncVec3>; 8];
    let mut now = 0.0;
    while now < 29.0 {
        while next < arrivals.len() && arrivals[next].0 <= now {
            let (at, st) = arrivals[next];
            let samples: Vec<_> = (0..8).map(|id| sample(id, st)).collect();
            assert_eq!(netsync_timeline_push(tl, at, st, samples.as_ptr(), 8), OK);
            next += 1;
        }
        assert_eq!(
            netsync_timeline_tick(tl, now, out.as_mut_ptr(), 8, &mut count),
            OK
        );
        let mut render = 0.0;
        assert_eq!(netsync_timeline_render_time(tl, mode, &mut render), OK);
        if now > 5.0 {
            for t in &out[..count] {
                let truth = sample(t.entity_id, render).position;
                let d =
                    ((t.position.x - truth.x).powi(2) + (t.position.z - truth.z).powi(2)).sqrt();
                worst = worst.max(d);
                if let Some(l) = last[t.entity_id as usize] {
                    let step = ((t.position.x - l.x).powi(2) + (t.position.z - l.z).powi(2)).sqrt();
                    max_step = max_step.max(step);
                }
                frames += 1;
                if t.flags & (NETSYNC_TRANSFORM_EXTRAPOLATED | NETSYNC_TRANSFORM_HELD) != 0 {
                    extrapolated += 1;
                }
            }
        }
        for t in &out[..count] {
            last[t.entity_id as usize] = Some(t.position);
        }
        now += 1.0 / 60.0;
    }
    netsync_timeline_free(tl);
    (worst, max_step, extrapolated as f64 / frames as f64)
}

#[test]
fn adaptive_stays_on_the_true_path_across_profiles_and_seeds() {
    // 3 m/s: one 60 fps frame moves 0.05 m; a jump would be 0.1 m.
    for seed in 1..=4 {
        for profile in [
            NetworkProfile::LAN,
            NetworkProfile::GOOD,
            NetworkProfile::AVG,
        ] {
            let (worst, step, extrapolated) = run(profile, NETSYNC_MODE_ADAPTIVE, seed);
            assert!(
                worst < 0.05,
                "{} seed {seed}: alignment {worst}",
                profile.name
            );
            assert!(step < 0.1, "{} seed {seed}: step {step}", profile.name);
            assert!(
                extrapolated < 0.02,
                "{} seed {seed}: {extrapolated}",
                profile.name
            );
        }
        let (_, step, _) = run(NetworkProfile::POOR, NETSYNC_MODE_ADAPTIVE, seed);
        assert!(step < 0.1, "POOR seed {seed}: step {step}");
    }
}

#[test]
fn literal_mode_extrapolates_where_adaptive_does_not() {
    let (_, _, literal) = run(NetworkProfile::AVG, NETSYNC_MODE_LITERAL, 1);
    let (_, _, adaptive) = run(NetworkProfile::AVG, NETSYNC_MODE_ADAPTIVE, 1);
    assert!(literal > 0.3, "literal extrapolated {literal}");
    assert!(adaptive < 0.02, "adaptive extrapolated {adaptive}");
}

#[test]
fn send_filter_feeds_a_timeline_with_only_what_changed() {
    // Sender: entity 1 drives straight, entity 2 stands still for 10 s.
    // Only what the filter lets through is pushed; every snapshot still
    // arrives (possibly empty), so the receiver keeps its clock.
    let mut filter = ptr::null_mut();
    assert_eq!(netsync_send_filter_new(ptr::null(), &mut filter), OK);
    let tl = new_timeline(NETSYNC_MODE_ADAPTIVE);
    let mut sent = 0;
    let mut out = vec![NetsyncTransform::default(); 2];
    let mut count = 0;
    for k in 0..200 {
        let st = k as f64 * 0.05;
        let mut batch = Vec::new();
        for id in [1u64, 2] {
            let mut s = NetsyncSample {
                entity_id: id,
                rotation: NetsyncQuat::default(),
                flags: NETSYNC_SAMPLE_HAS_VELOCITY,
                ..Default::default()
            };
            if id == 1 {
                s.position.x = 2.0 * st as f32;
                s.linear_velocity.x = 2.0;
            }
            let mut decision = 0;
            assert_eq!(
                netsync_send_filter_update(filter, st, &s, &mut decision),
                OK
            );
            if decision != NETSYNC_DECISION_SKIP {
                batch.push(s);
            }
        }
        sent += batch.len();
        assert_eq!(
            netsync_timeline_push(tl, st + 0.04, st, batch.as_ptr(), batch.len()),
            OK
        );
        assert_eq!(
            netsync_timeline_tick(tl, st + 0.04, out.as_mut_ptr(), 2, &mut count),
            OK
        );
    }
    // First sends plus one heartbeat per second per entity.
    assert!(sent <= 2 + 2 * 10 + 2, "sent {sent} samples");
    let mut render = 0.0;
    assert_eq!(
        netsync_timeline_render_time(tl, NETSYNC_MODE_ADAPTIVE, &mut render),
        OK
    );
    let one = out[..count].iter().find(|t| t.entity_id == 1).unwrap();
    assert!(
        (one.position.x - 2.0 * render as f32).abs() < 0.01,
        "{one:?} at {render}"
    );
    assert_eq!(one.flags & NETSYNC_TRANSFORM_EXTRAPOLATED, 0);
    netsync_send_filter_free(filter);
    netsync_timeline_free(tl);
}

#[test]
fn every_mode_runs_through_the_abi() {
    for mode in [
        NETSYNC_MODE_LITERAL,
        NETSYNC_MODE_ADAPTIVE,
        NETSYNC_MODE_FIXED,
        NETSYNC_MODE_BUFFERED,
        NETSYNC_MODE_PREDICTED,
    ] {
        let (worst, _, _) = run(NetworkProfile::GOOD, mode, 3);
        assert!(worst.is_finite() && worst < 1.0, "mode {mode}: {worst}");
    }
}
