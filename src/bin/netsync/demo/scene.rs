//! The demo's arena, the same on every client for a seed: players,
//! neutral obstacles scattered over the floor, and a stack to knock over.

use glam::{Quat, Vec3};

/// What an entity is in the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// A player's ball (radius).
    Ball(f32),
    /// A box (half extents).
    Cuboid(Vec3),
}

/// One body of the scene.
#[derive(Clone, Copy, Debug)]
pub struct Body {
    pub entity: u64,
    pub shape: Shape,
    pub position: Vec3,
    pub rotation: Quat,
    pub density: f32,
    /// A player's (controlled by client `index`), or neutral.
    pub player: Option<usize>,
}

/// Half the side of the floor (m); walls stand at its edges.
pub const ARENA: f32 = 24.0;
/// Half the side of the square the obstacles are scattered over (m).
pub const FIELD: f32 = 15.0;
pub const PLAYER_RADIUS: f32 = 0.7;
/// Entity ids: players from 1, obstacles from 1 000, the stack from 2 000.
pub const FIRST_OBSTACLE: u64 = 1_000;
pub const FIRST_STACK_BOX: u64 = 2_000;

/// Entity of the player of client `index`.
pub fn player_entity(index: usize) -> u64 {
    index as u64 + 1
}

/// Where player `index` of `players` starts: the start of its course.
pub fn player_start(index: usize, players: usize) -> Vec3 {
    waypoint(index, players, 0.0)
}

/// The whole scene for `players` players and `obstacles` obstacles.
pub fn build(players: usize, obstacles: usize, seed: u64) -> Vec<Body> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut bodies = Vec::new();
    for i in 0..players {
        bodies.push(Body {
            entity: player_entity(i),
            shape: Shape::Ball(PLAYER_RADIUS),
            position: player_start(i, players),
            rotation: Quat::IDENTITY,
            density: 6.0,
            player: Some(i),
        });
    }
    // Obstacles on a jittered grid, away from the centre (the stack) and
    // from the players' start circle.
    let side = (obstacles as f32).sqrt().ceil().max(1.0) as usize;
    let field = FIELD;
    let spacing = 2.0 * field / side as f32;
    let mut placed = 0;
    'grid: for row in 0..side + 2 {
        for col in 0..side + 2 {
            if placed == obstacles {
                break 'grid;
            }
            let x = -field + (col as f32 + 0.5) * spacing + rng.f32() * 1.0 - 0.5;
            let z = -field + (row as f32 + 0.5) * spacing + rng.f32() * 1.0 - 0.5;
            let r = (x * x + z * z).sqrt();
            if r < 3.5 || x.abs() > ARENA - 1.0 || z.abs() > ARENA - 1.0 {
                continue;
            }
            let half = Vec3::new(
                0.35 + rng.f32() * 0.35,
                0.3 + rng.f32() * 0.4,
                0.35 + rng.f32() * 0.35,
            );
            bodies.push(Body {
                entity: FIRST_OBSTACLE + placed as u64,
                shape: Shape::Cuboid(half),
                position: Vec3::new(x, half.y, z),
                rotation: Quat::from_rotation_y(rng.f32() * std::f32::consts::TAU),
                density: 0.5,
                player: None,
            });
            placed += 1;
        }
    }
    // A pyramid of boxes at the centre: 4 + 3 + 2 + 1.
    let half = Vec3::splat(0.5);
    let mut k = 0;
    for level in 0..4 {
        for i in 0..4 - level {
            let x = (i as f32 - (3 - level) as f32 / 2.0) * 1.02;
            let y = half.y + level as f32 * 1.0;
            bodies.push(Body {
                entity: FIRST_STACK_BOX + k,
                shape: Shape::Cuboid(half),
                position: Vec3::new(x, y, 0.0),
                rotation: Quat::IDENTITY,
                density: 0.8,
                player: None,
            });
            k += 1;
        }
    }
    bodies
}

/// The path a player drives: a four-petal rose through the centre (the
/// stack) and out across the field, each player turned its own way.
pub fn waypoint(index: usize, players: usize, lap: f32) -> Vec3 {
    let base = std::f32::consts::TAU * index as f32 / players.max(1) as f32 / 4.0;
    let dir = if index % 2 == 0 { 1.0 } else { -1.0 };
    let phi = base + dir * lap * std::f32::consts::TAU;
    // Signed radius: the curve passes through the origin four times a lap.
    let r = (FIELD + 2.0) * (2.0 * phi).cos();
    Vec3::new(phi.cos() * r, PLAYER_RADIUS, phi.sin() * r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scene_is_the_same_for_a_seed_and_has_what_the_demo_needs() {
        let a = build(4, 50, 7);
        let b = build(4, 50, 7);
        assert_eq!(a.len(), b.len());
        assert!(a.iter().zip(&b).all(|(x, y)| x.position == y.position));
        let obstacles = a
            .iter()
            .filter(|b| (FIRST_OBSTACLE..FIRST_STACK_BOX).contains(&b.entity))
            .count();
        assert_eq!(obstacles, 50);
        assert_eq!(a.iter().filter(|b| b.entity >= FIRST_STACK_BOX).count(), 10);
        assert_eq!(a.iter().filter(|b| b.player.is_some()).count(), 4);
        assert!(a
            .iter()
            .all(|b| b.position.x.abs() < ARENA && b.position.z.abs() < ARENA));
    }
}
