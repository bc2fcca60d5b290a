//! One client's physics world (rapier3d): what the client holds is
//! simulated, what others hold follows the transforms netsync shows.

use std::collections::HashMap;
use std::sync::mpsc;

use glam::{Quat, Vec3};
use rapier3d::prelude as rp;

use super::scene::{Body, Shape, ARENA};

/// netsync's glam and rapier's glam are different versions: convert by value.
fn to_rp(v: Vec3) -> rp::Vector {
    rp::Vector::new(v.x, v.y, v.z)
}

fn from_rp(v: rp::Vector) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

fn quat_to_rp(q: Quat) -> rp::Rotation {
    rp::Rotation::from_xyzw(q.x, q.y, q.z, q.w)
}

fn quat_from_rp(q: rp::Rotation) -> Quat {
    Quat::from_xyzw(q.x, q.y, q.z, q.w)
}

/// Longest move of a followed body in one step that is swept (m); a
/// longer one is a teleport.
pub const MAX_FOLLOW_STEP: f32 = 0.5;

/// A body's state as the physics has it.
#[derive(Clone, Copy, Debug)]
pub struct State {
    pub position: Vec3,
    pub rotation: Quat,
    pub velocity: Vec3,
    pub angular_velocity: Vec3,
}

/// The world of one client.
pub struct World {
    bodies: rp::RigidBodySet,
    colliders: rp::ColliderSet,
    pipeline: rp::PhysicsPipeline,
    islands: rp::IslandManager,
    broad_phase: rp::BroadPhaseBvh,
    narrow_phase: rp::NarrowPhase,
    impulse_joints: rp::ImpulseJointSet,
    multibody_joints: rp::MultibodyJointSet,
    soft_bodies: rp::SoftBodySet,
    ccd: rp::CCDSolver,
    params: rp::IntegrationParameters,
    events: rp::ChannelEventCollector,
    collisions: mpsc::Receiver<rp::CollisionEvent>,
    _forces: mpsc::Receiver<rp::ContactForceEvent>,
    _tears: mpsc::Receiver<rp::SoftBodyTearEvent>,
    handles: HashMap<u64, rp::RigidBodyHandle>,
    /// Entity of each collider (walls and floor have none).
    by_collider: HashMap<rp::ColliderHandle, u64>,
}

impl World {
    /// The arena with every body of the scene, all following the network
    /// (kinematic) until [`World::simulate`] says otherwise.
    pub fn new(scene: &[Body], dt: f32) -> World {
        let mut bodies = rp::RigidBodySet::new();
        let mut colliders = rp::ColliderSet::new();
        // Floor and four walls.
        colliders.insert(
            rp::ColliderBuilder::cuboid(ARENA, 0.5, ARENA)
                .translation(rp::Vector::new(0.0, -0.5, 0.0))
                .friction(0.7),
        );
        for (x, z, hx, hz) in [
            (ARENA, 0.0, 0.5, ARENA),
            (-ARENA, 0.0, 0.5, ARENA),
            (0.0, ARENA, ARENA, 0.5),
            (0.0, -ARENA, ARENA, 0.5),
        ] {
            colliders.insert(
                rp::ColliderBuilder::cuboid(hx, 2.0, hz).translation(rp::Vector::new(x, 2.0, z)),
            );
        }
        let mut handles = HashMap::new();
        let mut by_collider = HashMap::new();
        for b in scene {
            let body = rp::RigidBodyBuilder::kinematic_position_based()
                .translation(to_rp(b.position))
                .rotation(rp::AngVector::ZERO)
                .build();
            let handle = bodies.insert(body);
            if let Some(rb) = bodies.get_mut(handle) {
                rb.set_rotation(quat_to_rp(b.rotation), false);
            }
            let shape = match b.shape {
                Shape::Ball(r) => rp::ColliderBuilder::ball(r),
                Shape::Cuboid(h) => rp::ColliderBuilder::cuboid(h.x, h.y, h.z),
            };
            let collider = colliders.insert_with_parent(
                shape
                    .density(b.density)
                    .friction(0.6)
                    .restitution(0.1)
                    .active_events(rp::ActiveEvents::COLLISION_EVENTS),
                handle,
                &mut bodies,
            );
            handles.insert(b.entity, handle);
            by_collider.insert(collider, b.entity);
        }
        let (collision_tx, collisions) = mpsc::channel();
        let (force_tx, forces) = mpsc::channel();
        let (tear_tx, tears) = mpsc::channel();
        World {
            bodies,
            colliders,
            pipeline: rp::PhysicsPipeline::new(),
            islands: rp::IslandManager::new(),
            broad_phase: rp::BroadPhaseBvh::new(),
            narrow_phase: rp::NarrowPhase::new(),
            impulse_joints: rp::ImpulseJointSet::new(),
            multibody_joints: rp::MultibodyJointSet::new(),
            soft_bodies: rp::SoftBodySet::new(),
            ccd: rp::CCDSolver::new(),
            params: rp::IntegrationParameters {
                dt,
                ..Default::default()
            },
            events: rp::ChannelEventCollector::new(collision_tx, force_tx, tear_tx),
            collisions,
            _forces: forces,
            _tears: tears,
            handles,
            by_collider,
        }
    }

    fn body(&mut self, entity: u64) -> Option<&mut rp::RigidBody> {
        let handle = *self.handles.get(&entity)?;
        self.bodies.get_mut(handle)
    }

    /// This client simulates `entity` from now on, starting with `velocity`.
    pub fn simulate(&mut self, entity: u64, velocity: Vec3) {
        if let Some(b) = self.body(entity) {
            if !b.is_dynamic() {
                b.set_body_type(rp::RigidBodyType::Dynamic, true);
                b.set_linvel(to_rp(velocity), true);
            }
        }
    }

    /// `entity` follows the network from now on.
    pub fn follow(&mut self, entity: u64) {
        if let Some(b) = self.body(entity) {
            if b.is_dynamic() {
                b.set_body_type(rp::RigidBodyType::KinematicPositionBased, true);
            }
        }
    }

    pub fn is_simulated(&self, entity: u64) -> bool {
        self.handles
            .get(&entity)
            .and_then(|h| self.bodies.get(*h))
            .is_some_and(|b| b.is_dynamic())
    }

    /// Where a followed body is to be at the end of the next step. A jump
    /// (the network snapped it) is a teleport: swept as a kinematic move
    /// in one step it would hit whatever lies between at hundreds of m/s.
    pub fn follow_to(&mut self, entity: u64, position: Vec3, rotation: Quat) {
        if let Some(b) = self.body(entity) {
            if !b.is_dynamic() {
                let pose = rp::Pose::from_parts(to_rp(position), quat_to_rp(rotation));
                if from_rp(b.translation()).distance(position) > MAX_FOLLOW_STEP {
                    b.set_position(pose, true);
                }
                b.set_next_kinematic_position(pose);
            }
        }
    }

    /// Steers a simulated body toward `velocity` on the ground plane,
    /// keeping what gravity does to its height.
    pub fn drive(&mut self, entity: u64, velocity: Vec3) {
        if let Some(b) = self.body(entity) {
            let v = b.linvel();
            b.set_linvel(rp::Vector::new(velocity.x, v.y, velocity.z), true);
        }
    }

    pub fn state(&self, entity: u64) -> Option<State> {
        let b = self.bodies.get(*self.handles.get(&entity)?)?;
        Some(State {
            position: from_rp(b.translation()),
            rotation: quat_from_rp(*b.rotation()).normalize(),
            velocity: from_rp(b.linvel()),
            angular_velocity: from_rp(b.angvel()),
        })
    }

    /// One physics step; returns the pairs of entities that started
    /// touching.
    pub fn step(&mut self) -> Vec<(u64, u64)> {
        self.pipeline.step(
            rp::Vector::new(0.0, -9.81, 0.0),
            &self.params,
            &mut self.islands,
            &mut self.broad_phase,
            &mut self.narrow_phase,
            &mut self.bodies,
            &mut self.colliders,
            &mut self.impulse_joints,
            &mut self.multibody_joints,
            &mut self.soft_bodies,
            &mut self.ccd,
            &(),
            &self.events,
        );
        let mut started = Vec::new();
        while let Ok(event) = self.collisions.try_recv() {
            if let rp::CollisionEvent::Started(a, b, _) = event {
                if let (Some(&x), Some(&y)) = (self.by_collider.get(&a), self.by_collider.get(&b)) {
                    started.push((x, y));
                }
            }
        }
        started
    }
}
