use glam::{Quat, Vec3};

use super::*;
use crate::core::pose::Sample;

const HZ: f64 = 20.0;

fn moving(t: f64, v: Vec3) -> Sample {
    Sample::at(t, v * t as f32, Quat::IDENTITY).with_velocity(v)
}

/// Drives a timeline with a steady 20 Hz stream at `latency` and 60 fps ticks.
fn drive(
    tl: &mut Timeline,
    seconds: f64,
    latency: f64,
    sample: impl Fn(f64) -> Option<Sample>,
    mut each: impl FnMut(f64, &Shown),
) {
    let mut next_send = 0.0;
    let mut now = 0.0;
    let mut pending: Vec<(f64, f64)> = Vec::new();
    while now < seconds {
        while next_send <= now {
            pending.push((next_send + latency, next_send));
            next_send += 1.0 / HZ;
        }
        pending.retain(|&(arrive, st)| {
            if arrive <= now {
                let samples: Vec<(u64, Sample)> = sample(st).map(|s| (1, s)).into_iter().collect();
                tl.push_frame(arrive, st, &samples).unwrap();
                false
            } else {
                true
            }
        });
        tl.tick_with(now, |_, s| each(now, s)).unwrap();
        now += 1.0 / 60.0;
    }
}

#[test]
fn adaptive_converges_on_one_interval_and_shows_the_exact_path() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    let v = Vec3::new(2.0, 0.0, 0.0);
    let mut extrapolated = 0;
    drive(
        &mut tl,
        10.0,
        0.04,
        |t| Some(moving(t, v)),
        |now, s| {
            if now > 5.0 && s.flags & shown_flags::EXTRAPOLATED != 0 {
                extrapolated += 1;
            }
        },
    );
    let stats = tl.stats();
    // One 50 ms interval plus the margin; the clock estimate is exact.
    assert!((stats.target_delay - 0.052).abs() < 0.003, "{stats:?}");
    assert!((stats.clock_offset + 0.04).abs() < 1e-9);
    assert!((stats.render_delay - stats.target_delay).abs() < 0.005);
    assert_eq!(extrapolated, 0);
}

#[test]
fn shown_pose_matches_truth_at_render_time() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    let v = Vec3::new(1.0, 0.0, 2.0);
    let mut out = Vec::new();
    let mut worst: f32 = 0.0;
    for i in 0..400 {
        let st = i as f64 / HZ;
        tl.push_frame(st + 0.03, st, &[(9, moving(st, v))]).unwrap();
        for k in 0..3 {
            let now = st + 0.03 + k as f64 / 60.0;
            tl.tick(now, &mut out).unwrap();
            if i > 100 {
                let r = tl.render_time(Mode::Adaptive);
                worst = worst.max(out[0].pose.position.distance(v * r as f32));
            }
        }
    }
    assert!(worst < 1e-3, "alignment error {worst}");
}

#[test]
fn late_data_blends_back_without_jumping() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    let mut out = Vec::new();
    // Circle at 2 m/s: extrapolation along the tangent overshoots.
    let circle = |t: f64| {
        let a = t as f32;
        Sample::at(t, Vec3::new(a.cos(), 0.0, a.sin()) * 2.0, Quat::IDENTITY)
            .with_velocity(Vec3::new(-a.sin(), 0.0, a.cos()) * 2.0)
    };
    let mut frames: Vec<(f64, f64)> = (0..400)
        .map(|i| (i as f64 / HZ + 0.05, i as f64 / HZ))
        .collect();
    // A 600 ms stall: frames 200..212 all arrive at once at its end.
    for f in frames.iter_mut().skip(200).take(12) {
        f.0 = 200.0 / HZ + 0.65;
    }
    frames.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    let mut fi = 0;
    let mut last: Option<Vec3> = None;
    let mut max_step: f32 = 0.0;
    let mut held = 0;
    let mut now = 0.0;
    while now < 19.0 {
        while fi < frames.len() && frames[fi].0 <= now {
            tl.push_frame(frames[fi].0, frames[fi].1, &[(1, circle(frames[fi].1))])
                .unwrap();
            fi += 1;
        }
        tl.tick(now, &mut out).unwrap();
        now += 1.0 / 60.0;
        if out.is_empty() {
            continue;
        }
        let p = out[0].pose.position;
        if out[0].flags & shown_flags::HELD != 0 {
            held += 1;
        }
        if let Some(l) = last {
            max_step = max_step.max(p.distance(l));
        }
        last = Some(p);
    }
    assert!(held > 0, "the stall should have reached the hold");
    // True speed 2 m/s = 0.033 m per frame; a jump is twice that.
    assert!(max_step < 2.0 * 2.0 / 60.0, "step {max_step}");
}

#[test]
fn teleport_snaps_instead_of_sweeping() {
    let mut tl = Timeline::new(TimelineConfig {
        mode: Mode::Fixed,
        ..Default::default()
    })
    .unwrap();
    let mut out = Vec::new();
    for i in 0..40 {
        let st = i as f64 / HZ;
        let s = if i < 20 {
            Sample::at(st, Vec3::ZERO, Quat::IDENTITY)
        } else if i == 20 {
            Sample::at(st, Vec3::new(100.0, 0.0, 0.0), Quat::IDENTITY).teleport()
        } else {
            Sample::at(st, Vec3::new(100.0, 0.0, 0.0), Quat::IDENTITY)
        };
        tl.push_frame(st + 0.01, st, &[(1, s)]).unwrap();
        tl.tick(st + 0.01, &mut out).unwrap();
        let x = out[0].pose.position.x;
        assert!(x == 0.0 || x == 100.0, "swept through {x}");
    }
}

#[test]
fn literal_anchors_on_the_first_packet() {
    let mut tl = Timeline::new(TimelineConfig {
        mode: Mode::Literal,
        ..Default::default()
    })
    .unwrap();
    let mut out = Vec::new();
    // First packet 200 ms late, then 40 ms: the anchor keeps the 200 ms.
    tl.push_frame(0.2, 0.0, &[(1, moving(0.0, Vec3::X))])
        .unwrap();
    for i in 1..100 {
        let st = i as f64 / HZ;
        tl.push_frame(st + 0.04, st, &[(1, moving(st, Vec3::X))])
            .unwrap();
    }
    tl.tick(5.0, &mut out).unwrap();
    // dct = 5.0 - 0.2 - 0.1 = 4.7 and the deque holds 4.8 .. 4.95: shrink to 4.8.
    assert!((tl.render_time(Mode::Literal) - 4.8).abs() < 1e-9);
}

#[test]
fn entities_left_out_of_frames_follow_dead_reckoning() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    let mut out = Vec::new();
    let v = Vec3::new(1.0, 0.0, 0.0);
    // Entity 1 sent once (its prediction holds); entity 2 every frame.
    let mut shown_at = |until: usize, out: &mut Vec<Shown>| {
        for i in 0..until {
            let st = i as f64 / HZ;
            let mut samples = vec![(2, moving(st, v))];
            if i == 0 {
                samples.push((1, moving(st, v)));
            }
            tl.push_frame(st + 0.02, st, &samples).unwrap();
            tl.tick(st + 0.03, out).unwrap();
        }
    };
    shown_at(40, &mut out); // 2 s of silence: dead reckoning, not flagged
    let one = out.iter().find(|s| s.entity == 1).unwrap();
    let two = out.iter().find(|s| s.entity == 2).unwrap();
    assert_eq!(one.flags & shown_flags::EXTRAPOLATED, 0);
    assert!(one.pose.position.distance(two.pose.position) < 1e-3);
}

#[test]
fn an_entity_silent_past_any_heartbeat_is_held_not_carried_on() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    let mut out = Vec::new();
    let v = Vec3::new(1.0, 0.0, 0.0);
    // Entity 1 sent once, then nobody moves it (its holder let go); the
    // frames keep coming because entity 2 moves.
    for i in 0..200 {
        let st = i as f64 / HZ;
        let mut samples = vec![(2, moving(st, v))];
        if i == 0 {
            samples.push((1, moving(st, v)));
        }
        tl.push_frame(st + 0.02, st, &samples).unwrap();
        tl.tick(st + 0.03, &mut out).unwrap();
    }
    let one = out.iter().find(|s| s.entity == 1).unwrap();
    assert_eq!(
        one.flags & shown_flags::HELD,
        shown_flags::HELD,
        "{:?}",
        one.flags
    );
    // Carried on at most about 2.5 s + the cap and the ease, not 10 s.
    assert!(one.pose.position.x < 3.2, "{}", one.pose.position.x);
}

#[test]
fn bad_input_changes_nothing() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    let bad = Sample::at(0.0, Vec3::new(f32::NAN, 0.0, 0.0), Quat::IDENTITY);
    let good = moving(0.0, Vec3::X);
    let err = tl.push_frame(0.0, 0.0, &[(1, good), (2, bad)]).unwrap_err();
    assert!(matches!(
        err,
        TimelineError::InvalidSample { entity: 2, .. }
    ));
    assert!(tl.is_empty());
    let zero_q = Sample::at(0.0, Vec3::ZERO, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0));
    assert!(tl.push_frame(0.0, 0.0, &[(3, zero_q)]).is_err());
    assert!(tl.push_frame(f64::NAN, 0.0, &[]).is_err());
    let mut out = Vec::new();
    tl.tick(1.0, &mut out).unwrap();
    assert!(matches!(
        tl.tick(0.5, &mut out),
        Err(TimelineError::TimeWentBackwards { .. })
    ));
    assert_eq!(tl.remove(77), Err(TimelineError::UnknownEntity(77)));
    let mut small = Timeline::new(TimelineConfig {
        max_entities: 1,
        ..Default::default()
    })
    .unwrap();
    small.push_frame(0.0, 0.0, &[(1, good)]).unwrap();
    assert_eq!(
        small.push_frame(0.1, 0.1, &[(2, good)]),
        Err(TimelineError::TooManyEntities { limit: 1 })
    );
}

#[test]
fn duplicates_apply_once_and_modes_switch_per_entity() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    let s = moving(0.0, Vec3::X);
    tl.push_frame(0.05, 0.0, &[(1, s), (2, s)]).unwrap();
    tl.push_frame(0.06, 0.0, &[(1, s)]).unwrap();
    assert_eq!(tl.stats().samples_duplicate, 1);
    tl.set_entity_mode(2, Some(Mode::Predicted)).unwrap();
    let mut out = Vec::new();
    tl.tick(0.5, &mut out).unwrap();
    let predicted = out.iter().find(|s| s.entity == 2).unwrap();
    assert_ne!(predicted.flags & shown_flags::PREDICTED, 0);
    // Predicted runs ahead of the buffered entity.
    let buffered = out.iter().find(|s| s.entity == 1).unwrap();
    assert!(predicted.pose.position.x > buffered.pose.position.x);
    tl.remove(1).unwrap();
    tl.tick(0.6, &mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].entity, 2);
}

/// Entity 1 sent once at rest; entity 2's frames keep coming. Returns
/// entity 1's flags after frames up to `until` (s).
fn quiet_entity_flags(tl: &mut Timeline, from: usize, until: usize) -> u32 {
    let mut out = Vec::new();
    for i in from..until {
        let st = i as f64 / HZ;
        let mut samples = vec![(2, moving(st, Vec3::X))];
        if i == 0 {
            samples.push((1, moving(st, Vec3::ZERO)));
        }
        tl.push_frame(st + 0.02, st, &samples).unwrap();
        tl.tick(st + 0.03, &mut out).unwrap();
    }
    out.iter().find(|s| s.entity == 1).unwrap().flags
}

#[test]
fn a_reported_loss_stops_vouching_until_it_is_repaired() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    assert_eq!(quiet_entity_flags(&mut tl, 0, 10), 0);
    // A snapshot went missing: it may have moved entity 1. Until the
    // repair, nothing past the frame before the gap is vouched for.
    tl.note_loss(7, 100.0);
    let flags = quiet_entity_flags(&mut tl, 10, 30);
    assert_ne!(flags & shown_flags::EXTRAPOLATED, 0, "{flags}");
    // Another loss's repair changes nothing; this one's does.
    tl.loss_repaired(8);
    assert_ne!(
        quiet_entity_flags(&mut tl, 30, 31) & shown_flags::EXTRAPOLATED,
        0
    );
    tl.loss_repaired(7);
    assert_eq!(quiet_entity_flags(&mut tl, 31, 40), 0);
}

#[test]
fn an_unrepaired_loss_stops_mattering_when_its_deadline_passes() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    quiet_entity_flags(&mut tl, 0, 10);
    // The repair could have come by client time 1.0 (frame 20 arrives 1.02).
    tl.note_loss(7, 1.0);
    assert_ne!(
        quiet_entity_flags(&mut tl, 10, 16) & shown_flags::EXTRAPOLATED,
        0
    );
    assert_eq!(quiet_entity_flags(&mut tl, 16, 40), 0);
}

#[test]
fn a_local_record_is_shown_after_the_remote_samples_before_it() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    quiet_entity_flags(&mut tl, 0, 20);
    // The holder of entity 1 moved it to x = 5 itself (no echo comes back).
    let local = Sample::at(0.9, Vec3::new(5.0, 0.0, 0.0), Quat::IDENTITY).with_velocity(Vec3::ZERO);
    tl.record_local(1, local).unwrap();
    let mut out = Vec::new();
    tl.tick(2.0, &mut out).unwrap();
    let one = out.iter().find(|s| s.entity == 1).unwrap();
    assert!((one.pose.position.x - 5.0).abs() < 1e-4, "{:?}", one.pose);
    // Only entities the timeline already shows.
    assert!(matches!(
        tl.record_local(99, local),
        Err(TimelineError::UnknownEntity(99))
    ));
}

#[test]
fn a_new_holders_state_supersedes_the_local_simulation_from_its_time_on() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    quiet_entity_flags(&mut tl, 0, 20);
    // This client held entity 1 and simulated it to x = 5..=10 itself.
    for k in 0..=5 {
        let t = 1.0 + 0.1 * k as f64;
        let local = Sample::at(t, Vec3::new(5.0 + k as f32, 0.0, 0.0), Quat::IDENTITY)
            .with_velocity(Vec3::new(10.0, 0.0, 0.0));
        tl.record_local(1, local).unwrap();
    }
    // The relay gave it to another client, whose state from t = 1.2 on
    // has it near the origin: that is what shows from 1.2 on, with no
    // local sample read in between.
    let remote = |t: f64| {
        (
            1u64,
            Sample::at(t, Vec3::new(-1.0, 0.0, 0.0), Quat::IDENTITY).with_velocity(Vec3::ZERO),
        )
    };
    tl.push_frame(1.25, 1.2, &[remote(1.2)]).unwrap();
    tl.push_frame(1.35, 1.3, &[remote(1.3)]).unwrap();
    let mut out = Vec::new();
    for k in 0..40 {
        tl.tick(2.0 + 0.02 * k as f64, &mut out).unwrap();
    }
    let one = out.iter().find(|s| s.entity == 1).unwrap();
    assert!((one.pose.position.x + 1.0).abs() < 1e-3, "{:?}", one.pose);
}

#[test]
fn a_local_record_nobody_follows_up_is_held_not_dead_reckoned() {
    let mut tl = Timeline::new(TimelineConfig::default()).unwrap();
    quiet_entity_flags(&mut tl, 0, 20);
    // This client let entity 1 go while its simulation still moved it;
    // nobody holds it now, so no state follows, though frames keep coming.
    let local = Sample::at(0.9, Vec3::new(5.0, 0.0, 0.0), Quat::IDENTITY)
        .with_velocity(Vec3::new(3.0, 0.0, 0.0));
    tl.record_local(1, local).unwrap();
    let out = {
        let mut out = Vec::new();
        for i in 20..80 {
            let st = i as f64 / HZ;
            tl.push_frame(st + 0.02, st, &[(2, moving(st, Vec3::X))])
                .unwrap();
            tl.tick(st + 0.03, &mut out).unwrap();
        }
        out
    };
    let one = out.iter().find(|s| s.entity == 1).unwrap();
    assert!((one.pose.position.x - 5.0).abs() < 1e-4, "{:?}", one.pose);
}
