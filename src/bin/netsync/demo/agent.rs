//! One player's game: a netsync client and its own physics world, used
//! the way an engine uses netsync, through the public client API only.

use std::collections::{HashMap, HashSet};

use glam::Vec3;
use netsync::client::{Client, ClientEvent};
use netsync::core::timeline::{shown_flags, Mode, Shown};
use netsync::core::Sample;
use netsync::server::send_rights::EntityKind;

use super::metrics::Metrics;
use super::physics::World;
use super::scene::{self, Body};
use super::truth::Truth;

/// Top speed of a player's ball (m/s).
const PLAYER_SPEED: f32 = 7.0;
/// Seconds per lap of a player's path.
const LAP: f64 = 24.0;
/// Longest a remote body is carried forward into the present (s).
const MAX_LEAD: f64 = 0.6;
/// Weight of the newest frame in a remote body's shown velocity.
const VELOCITY_SMOOTHING: f32 = 0.3;
/// A held object this still for this long is reported at rest (s).
const REST_AFTER: f64 = 0.8;

/// What the run wants recorded beyond the metrics.
pub struct Recording<'a> {
    pub truth: &'a mut Truth,
    /// Divergence counts from this engine time on (the warm-up before).
    pub measure_from: f64,
    /// Entities whose shown path this agent records (for the plots).
    pub tracked: &'a [u64],
}

pub struct Agent {
    pub index: usize,
    pub client: Client,
    world: World,
    player: u64,
    players: usize,
    neutral: Vec<u64>,
    /// Last shown position of each remote entity, to start a claimed
    /// object with the speed it was shown moving at.
    last_shown: HashMap<u64, (f64, Vec3, Vec3)>,
    still_since: HashMap<u64, f64>,
    reported_rest: HashSet<u64>,
    /// Objects this client claimed and has no answer for yet.
    claimed: HashSet<u64>,
    pub metrics: Metrics,
    /// Shown paths of tracked entities: (entity, render time, position).
    pub shown_paths: Vec<(u64, f64, Vec3)>,
    /// With `--record`: (engine time, digest of the shown transforms) per tick.
    pub keep_digests: bool,
    pub tick_digests: Vec<(f64, u64)>,
}

impl Agent {
    pub fn new(index: usize, players: usize, client: Client, scene: &[Body], dt: f32) -> Agent {
        let mut client = client;
        let player = scene::player_entity(index);
        let mut world = World::new(scene, dt);
        // Ready: our ball, and every neutral object (the first client to
        // get here holds them first, S3's first ready, first served).
        let _ = client.register(player);
        let mut neutral: Vec<u64> = scene
            .iter()
            .filter(|b| b.player.is_none())
            .map(|b| b.entity)
            .collect();
        neutral.sort_unstable();
        for &e in &neutral {
            let _ = client.register_kind(e, EntityKind::Neutral);
        }
        world.simulate(player, Vec3::ZERO);
        Agent {
            index,
            client,
            world,
            player,
            players,
            neutral,
            last_shown: HashMap::new(),
            still_since: HashMap::new(),
            reported_rest: HashSet::new(),
            claimed: HashSet::new(),
            metrics: Metrics::default(),
            shown_paths: Vec::new(),
            keep_digests: false,
            tick_digests: Vec::new(),
        }
    }

    /// Takes over `entity` in the physics, moving as it was last shown
    /// (a claimed object keeps its momentum), with a fresh rest watch.
    fn start_simulating(&mut self, entity: u64) {
        let v = self.shown_velocity(entity);
        self.world.simulate(entity, v);
        self.reported_rest.remove(&entity);
        self.still_since.remove(&entity);
    }

    /// Velocity `entity` was last shown moving at.
    fn shown_velocity(&self, entity: u64) -> Vec3 {
        self.last_shown.get(&entity).map_or(Vec3::ZERO, |s| s.2)
    }

    /// One engine frame at engine time `now`.
    pub fn frame(&mut self, now: f64, rec: &mut Recording<'_>) {
        self.events();
        // What the relay announced, for judging whose state is the truth.
        for e in (1..=self.players as u64).chain(self.neutral.iter().copied()) {
            if let Some((holder, epoch)) = self.client.right(e) {
                rec.truth.announce(e, epoch, holder);
            }
        }
        self.show(now, rec);
        let server_time = self.client.server_time(now);
        if let Some(st) = server_time {
            self.drive(st);
        }
        let contacts = self.world.step();
        self.claim(&contacts);
        if let Some(st) = server_time {
            self.send(now, st, rec);
        }
        let stats = self.client.stats();
        if stats.timeline.render_delay > 0.0 {
            self.metrics
                .render_delay_at(now, stats.timeline.render_delay);
        }
    }

    fn events(&mut self) {
        while let Some(event) = self.client.poll_event() {
            match event {
                // Transfers by collision (not the first-ready grants).
                ClientEvent::RightGained { entity } if self.claimed.remove(&entity) => {
                    self.metrics.transfers_in += 1;
                }
                ClientEvent::RightLost { .. } => self.metrics.lost += 1,
                ClientEvent::RightRefused { entity, .. } => {
                    self.claimed.remove(&entity);
                    self.metrics.refused += 1;
                }
                _ => {}
            }
        }
        // What the client acts as holder of, the physics simulates; the
        // rest follows the network.
        for i in 0..self.neutral.len() {
            let e = self.neutral[i];
            let holds = self.client.holds(e);
            if holds && !self.world.is_simulated(e) {
                self.start_simulating(e);
            } else if !holds && self.world.is_simulated(e) {
                self.world.follow(e);
            }
        }
    }

    /// Ticks the client: remote bodies follow what it shows, and what it
    /// shows is measured against the truth.
    fn show(&mut self, now: f64, rec: &mut Recording<'_>) {
        let mut shown: Vec<Shown> = Vec::new();
        if self.client.tick_with(now, |_, s| shown.push(*s)).is_err() {
            return;
        }
        if self.keep_digests {
            self.tick_digests
                .push((now, super::replay_check::digest(&shown)));
        }
        let render = self.client.render_time(Mode::Adaptive);
        // The physics runs in the present; what netsync shows is a moment
        // behind (the render delay). Remote bodies take part in it where
        // they are now: shown pose carried forward by its shown velocity,
        // so a hit happens where the object is, and a claimed object
        // starts from there.
        let lead = self
            .client
            .server_time(now)
            .map_or(0.0, |st| (st - render).clamp(0.0, MAX_LEAD)) as f32;
        for s in &shown {
            let e = s.entity;
            let p = s.pose.position;
            let velocity = match self.last_shown.get(&e) {
                // Snapped (a teleport, or a correction too large to blend):
                // the jump is not motion.
                Some(&(_, q, _)) if q.distance(p) > super::physics::MAX_FOLLOW_STEP => Vec3::ZERO,
                Some(&(t, q, v)) if render > t + 1e-4 => {
                    v.lerp((p - q) / (render - t) as f32, VELOCITY_SMOOTHING)
                }
                Some(&(_, _, v)) => v,
                None => Vec3::ZERO,
            };
            self.last_shown.insert(e, (render, p, velocity));
            if self.world.is_simulated(e) {
                continue;
            }
            self.world
                .follow_to(e, p + velocity * lead, s.pose.rotation);
            // Players are always held by their controller.
            let held =
                e <= self.players as u64 || self.client.right(e).is_some_and(|(h, _)| h != 0);
            // Objects someone moves: shown past their data counts against
            // us; one nobody holds rests, and showing it still is right.
            if held && now >= rec.measure_from {
                self.metrics.shown += 1;
                if s.flags & shown_flags::EXTRAPOLATED != 0 {
                    self.metrics.extrapolated += 1;
                }
            }
            if let Some(truth) = rec.truth.at(e, render, held) {
                self.metrics
                    .divergence_at(now, e, p.distance(truth), now >= rec.measure_from);
            }
            if rec.tracked.contains(&e) {
                self.shown_paths.push((e, render, p));
            }
        }
    }

    /// Scripted input: the ball heads for a point a little ahead on its
    /// path, in server time so that every run drives the same course.
    fn drive(&mut self, server_time: f64) {
        let Some(state) = self.world.state(self.player) else {
            return;
        };
        let lap = (server_time / LAP) as f32;
        let target = scene::waypoint(self.index, self.players, lap + 0.01);
        let mut to = target - state.position;
        to.y = 0.0;
        let speed = (to.length() * 2.0).min(PLAYER_SPEED);
        self.world
            .drive(self.player, to.normalize_or_zero() * speed);
    }

    /// Contacts between what this client simulates and a neutral object
    /// it does not hold claim that object (S3), optimistically.
    fn claim(&mut self, contacts: &[(u64, u64)]) {
        for &(a, b) in contacts {
            for (mine, other) in [(a, b), (b, a)] {
                let neutral = self.neutral.binary_search(&other).is_ok();
                if neutral
                    && self.world.is_simulated(mine)
                    && self.client.holds(mine)
                    && !self.client.holds(other)
                    && self.client.report_collision(mine, other).is_ok()
                {
                    self.metrics.claims += 1;
                    self.claimed.insert(other);
                    self.start_simulating(other);
                }
            }
        }
    }

    /// Sends the state of everything this client simulates, records it as
    /// the truth, and hands back what has come to rest.
    fn send(&mut self, now: f64, server_time: f64, rec: &mut Recording<'_>) {
        let my_id = self.client.stats().network.client_id;
        let mut simulated = vec![self.player];
        simulated.extend(
            self.neutral
                .iter()
                .copied()
                .filter(|&e| self.world.is_simulated(e)),
        );
        for e in simulated {
            let Some(s) = self.world.state(e) else {
                continue;
            };
            let sample = Sample::at(server_time, s.position, s.rotation)
                .with_velocity(s.velocity)
                .with_angular_velocity(s.angular_velocity);
            if self.client.set_state(e, sample).is_err() {
                continue;
            }
            // Tagged with the epoch it is sent under: the truth is the
            // client the relay granted that epoch to.
            let (holder, announced) = self.client.right(e).unwrap_or((0, 0));
            let epoch = if holder == my_id && my_id != 0 {
                announced
            } else {
                announced.wrapping_add(1) // a claim aims at the next one
            };
            rec.truth.record(e, server_time, s.position, my_id, epoch);
            if e == self.player {
                continue;
            }
            let still = s.velocity.length() < 0.05 && s.angular_velocity.length() < 0.1;
            if !still {
                self.still_since.remove(&e);
                continue;
            }
            let since = *self.still_since.entry(e).or_insert(now);
            if now - since >= REST_AFTER
                && !self.reported_rest.contains(&e)
                && self.client.report_at_rest(e).is_ok()
            {
                self.reported_rest.insert(e);
                self.metrics.at_rest_reports += 1;
            }
        }
    }
}
