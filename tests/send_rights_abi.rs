//! Send rights through the C ABI on real UDP on loopback: a client that
//! does not hold an object (a refused claimant, a former holder sending
//! under an old epoch) never changes what others see, and a holder that
//! disconnects hands its objects back so that a new claim works.

use std::time::{Duration, Instant};

use netsync::ffi::client::*;
use netsync::ffi::server::*;

mod common;
use common::*;

const OBJECT: u64 = 100;

/// Height at which each client moves the object while it believes it
/// holds it: whoever the observer sees, the height says who sent it.
fn plane(car: u64) -> f32 {
    match car {
        30 => 0.0,   // C, the first holder
        10 => 10.0,  // A, whose claim is granted
        20 => -10.0, // B, whose claim is refused
        _ => unreachable!(),
    }
}

fn object_at(car: u64, st: f64) -> netsync::ffi::types::NetsyncSample {
    let a = st as f32;
    sample(
        OBJECT,
        [a.cos() * 3.0, plane(car), a.sin() * 3.0],
        [-a.sin() * 3.0, 0.0, a.cos() * 3.0],
    )
}

struct Player {
    client: *mut NetsyncClient,
    car: u64,
    events: Vec<NetsyncClientEvent>,
}

/// One engine frame: own car, the object when held, tick; returns the
/// shown height of the object, if shown.
fn frame(p: &mut Player, now: f64) -> Option<f32> {
    if let Some(st) = server_time(p.client, now) {
        assert_eq!(
            netsync_client_set_entity_state(p.client, &circle(p.car, st)),
            OK
        );
        if holds(p.client, OBJECT) {
            assert_eq!(
                netsync_client_set_entity_state(p.client, &object_at(p.car, st)),
                OK
            );
        }
    }
    let shown = tick(p.client, now);
    p.events.extend(events(p.client));
    shown
        .iter()
        .find(|t| t.entity_id == OBJECT)
        .map(|t| t.position.y)
}

fn has_event(p: &Player, kind: u32, entity: u64) -> bool {
    p.events
        .iter()
        .any(|e| e.kind == kind && e.entity_id == entity)
}

#[test]
fn refused_claimants_and_former_holders_never_change_what_others_see() {
    // A cooldown long enough that B's claim, right after A's, is refused.
    let server = start_server_with(|c| {
        c.claim_cooldown = 2.0;
        c.rest_timeout = 0.0;
    });
    let port = port_of(server);
    // C and B on an AVG network: their stale and refused states reach the
    // relay for a while after the change.
    let mut c = Player {
        client: connect_through(port, 5.0, NETSYNC_NETWORK_AVG, 3),
        car: 30,
        events: vec![],
    };
    let mut a = Player {
        client: connect(port, 5.0),
        car: 10,
        events: vec![],
    };
    let mut b = Player {
        client: connect_through(port, 5.0, NETSYNC_NETWORK_AVG, 4),
        car: 20,
        events: vec![],
    };
    let observer = connect(port, 5.0);
    for p in [&c, &a, &b] {
        assert_eq!(netsync_client_register_entity(p.client, p.car), OK);
    }
    assert_eq!(
        netsync_client_register_entity_kind(c.client, OBJECT, NETSYNC_KIND_NEUTRAL),
        OK
    );
    let start = Instant::now();
    let mut seen: Vec<(f64, f32)> = Vec::new();
    let (mut a_claimed, mut b_claimed) = (false, false);
    while start.elapsed() < Duration::from_secs(6) {
        let now = start.elapsed().as_secs_f64();
        for p in [&mut c, &mut a, &mut b] {
            frame(p, now);
        }
        if !a_claimed && now > 2.0 {
            a_claimed = true;
            assert!(holds(c.client, OBJECT), "C never got the object first");
            assert_eq!(netsync_client_report_collision(a.client, a.car, OBJECT), OK);
        }
        if !b_claimed && now > 2.3 {
            b_claimed = true;
            assert_eq!(netsync_client_report_collision(b.client, b.car, OBJECT), OK);
            assert!(
                holds(b.client, OBJECT),
                "a claimant sends at once (optimistic)"
            );
        }
        if let Some(y) = tick(observer, now)
            .iter()
            .find(|t| t.entity_id == OBJECT)
            .map(|t| t.position.y)
        {
            seen.push((now, y));
        }
        events(observer);
        std::thread::sleep(Duration::from_millis(16));
    }
    // B never held the object: nothing of its plane ever showed.
    let lowest = seen.iter().map(|s| s.1).fold(f32::MAX, f32::min);
    assert!(
        lowest > -0.5,
        "the refused claimant's state was shown ({lowest} m)"
    );
    // Once A's state showed, C's old-epoch state never came back.
    let first_a = seen
        .iter()
        .position(|s| s.1 > 9.5)
        .expect("A's state never shown");
    let relapse = seen[first_a..].iter().find(|s| s.1 < 9.5);
    assert!(
        relapse.is_none(),
        "the former holder's state shown after the new holder's: {relapse:?}"
    );
    assert!(has_event(&a, NETSYNC_EVENT_RIGHT_GAINED, OBJECT));
    assert!(has_event(&c, NETSYNC_EVENT_RIGHT_LOST, OBJECT));
    let refusal = b
        .events
        .iter()
        .find(|e| e.kind == NETSYNC_EVENT_RIGHT_REFUSED && e.entity_id == OBJECT)
        .expect("B was never told of its refusal");
    assert_eq!(refusal.reason, NETSYNC_CLAIM_COOLDOWN);
    assert!(holds(a.client, OBJECT));
    assert!(!holds(b.client, OBJECT) && !holds(c.client, OBJECT));
    let mut s = NetsyncServerStats::default();
    assert_eq!(netsync_server_stats(server, &mut s), OK);
    eprintln!(
        "claims granted {}, refused {}, states rejected {}",
        s.claims_granted, s.claims_refused, s.rejected_not_owner
    );
    assert!(s.claims_granted >= 1 && s.claims_refused >= 1);
    assert!(
        s.rejected_not_owner >= 1,
        "no stale or refused state reached the relay"
    );
    for p in [c, a, b] {
        netsync_client_free(p.client);
    }
    netsync_client_free(observer);
    netsync_server_free(server);
}

fn holder(client: *mut NetsyncClient, entity: u64) -> Option<(u32, u32)> {
    let (mut h, mut e) = (0, 0);
    (netsync_client_holder(client, entity, &mut h, &mut e) == OK).then_some((h, e))
}

#[test]
fn a_holder_that_disconnects_hands_its_objects_back_and_a_new_claim_works() {
    let server = start_server(0, 1.0);
    let port = port_of(server);
    let mut c = Player {
        client: connect(port, 1.0),
        car: 30,
        events: vec![],
    };
    let mut a = Player {
        client: connect(port, 1.0),
        car: 10,
        events: vec![],
    };
    let observer = connect(port, 1.0);
    for p in [&c, &a] {
        assert_eq!(netsync_client_register_entity(p.client, p.car), OK);
    }
    assert_eq!(
        netsync_client_register_entity_kind(c.client, OBJECT, NETSYNC_KIND_NEUTRAL),
        OK
    );
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    while now() < 1.5 {
        frame(&mut c, now());
        frame(&mut a, now());
        tick(observer, now());
        std::thread::sleep(Duration::from_millis(16));
    }
    let c_id = {
        let mut stats = NetsyncClientStats::default();
        assert_eq!(netsync_client_stats(c.client, &mut stats), OK);
        stats.client_id
    };
    let (first, epoch) = holder(a.client, OBJECT).expect("no holder announced");
    assert_eq!(first, c_id, "the first ready client holds the object");
    assert!(holds(c.client, OBJECT) && !holds(a.client, OBJECT));
    netsync_client_free(c.client);
    // The relay times C out after 1 s and announces the object as free;
    // then A's claim is granted and the observer sees A's state.
    let left = now();
    let (mut freed_at, mut gained_at, mut shown_at) = (None, None, None);
    while now() < left + 5.0 && shown_at.is_none() {
        let t = now();
        frame(&mut a, t);
        if freed_at.is_none() && holder(a.client, OBJECT) == Some((0, epoch + 1)) {
            freed_at = Some(t);
            assert_eq!(netsync_client_report_collision(a.client, a.car, OBJECT), OK);
        }
        if gained_at.is_none() && has_event(&a, NETSYNC_EVENT_RIGHT_GAINED, OBJECT) {
            gained_at = Some(t);
        }
        let y = tick(observer, t)
            .iter()
            .find(|s| s.entity_id == OBJECT)
            .map(|s| s.position.y);
        if gained_at.is_some() && y.is_some_and(|y| y > 9.5) {
            shown_at = Some(t);
        }
        events(observer);
        std::thread::sleep(Duration::from_millis(16));
    }
    let freed_at = freed_at.expect("the object never returned to nobody");
    let gained_at = gained_at.expect("the claim after the holder left was not granted");
    assert!(shown_at.is_some(), "the new holder's state never showed");
    eprintln!(
        "holder gone: object free after {:.2} s (idle timeout 1 s), claim granted {:.0} ms later",
        freed_at - left,
        (gained_at - freed_at) * 1e3
    );
    let a_id = {
        let mut stats = NetsyncClientStats::default();
        assert_eq!(netsync_client_stats(a.client, &mut stats), OK);
        stats.client_id
    };
    assert_eq!(holder(observer, OBJECT), Some((a_id, epoch + 2)));
    let mut s = NetsyncServerStats::default();
    assert_eq!(netsync_server_stats(server, &mut s), OK);
    assert_eq!(s.clients_left, 1);
    assert_eq!(s.claims_granted, 1);
    netsync_client_free(a.client);
    netsync_client_free(observer);
    netsync_server_free(server);
}
