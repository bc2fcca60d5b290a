//! Interest management at S2's scale on the sans-IO relay: 1 000 clients
//! in 100 areas each hear only the entities of their own area; a
//! global-view client hears all of them.

mod common;
use common::area_scene::AreaScene;

#[test]
fn a_thousand_clients_in_a_hundred_areas_hear_only_their_area() {
    let scene = AreaScene {
        areas: 100,
        clients_per_area: 10,
        interest: true,
        seconds: 1.5,
        rate: 30.0,
    };
    let out = scene.run();
    for (i, got) in out.received.iter().enumerate() {
        let me = i as u64 + 1;
        let area = scene.area_of(me);
        let mates: std::collections::HashSet<u64> = (1..=scene.clients() as u64)
            .filter(|&e| e != me && scene.area_of(e) == area)
            .collect();
        assert_eq!(got, &mates, "client {me} in area {area}");
    }
    assert_eq!(
        out.observer.len(),
        scene.clients() as usize,
        "the global view hears everyone"
    );
    assert_eq!(
        out.heard_of_area_0, scene.clients_per_area as usize,
        "nobody outside area 0 heard of it"
    );
}
