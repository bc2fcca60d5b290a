//! Poses and timestamped samples of an entity.

use glam::{Quat, Vec3};

/// Position and orientation of an entity (metres; Y up, +X right, +Z
/// forward: netsync's one frame, see docs/architecture.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    pub position: Vec3,
    pub rotation: Quat,
}

impl Pose {
    pub const IDENTITY: Pose = Pose {
        position: Vec3::ZERO,
        rotation: Quat::IDENTITY,
    };

    pub fn new(position: Vec3, rotation: Quat) -> Self {
        Pose { position, rotation }
    }
}

/// Bit flags carried by a [`Sample`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleFlags(pub u32);

/// cbindgen:ignore
impl SampleFlags {
    /// `velocity` holds the linear velocity (m/s).
    pub const HAS_VELOCITY: u32 = 1;
    /// `angular_velocity` holds the world-space angular velocity (rad/s).
    pub const HAS_ANGULAR_VELOCITY: u32 = 2;
    /// The entity jumped here: snap instead of sweeping from the previous sample.
    pub const TELEPORT: u32 = 4;
    /// States of this entity before this one were lost on the way (the
    /// receiver saw a gap in the sender's sequence): interpolate across the
    /// gap and let the adaptive delay learn it, rather than trusting the
    /// old state's dead reckoning.
    pub const AFTER_GAP: u32 = 8;
    /// Internal: frames newer than the previous sample arrived without this
    /// entity (the sender skipped it on purpose: send on change).
    pub(crate) const AFTER_SKIP: u32 = 1 << 16;
    /// Internal: the first state from a new holder (a new send-right
    /// epoch). Its sender's dead reckoning started afresh, so no velocity
    /// is derived from the previous holder's last state.
    pub(crate) const NEW_SOURCE: u32 = 1 << 17;
    /// Internal: this client's own simulation of an object it held
    /// ([`Timeline::record_local`](crate::core::timeline::Timeline::record_local)).
    /// The network's word supersedes it: a received state drops every
    /// local one at or after its time.
    pub(crate) const LOCAL: u32 = 1 << 18;
    /// Every bit a caller may set.
    pub const ALL: u32 =
        Self::HAS_VELOCITY | Self::HAS_ANGULAR_VELOCITY | Self::TELEPORT | Self::AFTER_GAP;

    pub fn has_velocity(self) -> bool {
        self.0 & Self::HAS_VELOCITY != 0
    }
    pub fn has_angular_velocity(self) -> bool {
        self.0 & Self::HAS_ANGULAR_VELOCITY != 0
    }
    pub fn teleport(self) -> bool {
        self.0 & Self::TELEPORT != 0
    }
    pub fn after_gap(self) -> bool {
        self.0 & Self::AFTER_GAP != 0
    }
    pub(crate) fn new_source(self) -> bool {
        self.0 & Self::NEW_SOURCE != 0
    }
    pub(crate) fn local(self) -> bool {
        self.0 & Self::LOCAL != 0
    }
}

/// The state of one entity at one server time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Server time in seconds.
    pub server_time: f64,
    pub pose: Pose,
    /// Linear velocity (m/s); meaningful when `flags.has_velocity()`.
    pub velocity: Vec3,
    /// World-space angular velocity (rad/s); meaningful when
    /// `flags.has_angular_velocity()`.
    pub angular_velocity: Vec3,
    pub flags: SampleFlags,
}

impl Sample {
    /// A sample with a pose only.
    pub fn at(server_time: f64, position: Vec3, rotation: Quat) -> Self {
        Sample {
            server_time,
            pose: Pose::new(position, rotation),
            velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            flags: SampleFlags::default(),
        }
    }

    /// Adds a linear velocity.
    pub fn with_velocity(mut self, velocity: Vec3) -> Self {
        self.velocity = velocity;
        self.flags.0 |= SampleFlags::HAS_VELOCITY;
        self
    }

    /// Adds a world-space angular velocity.
    pub fn with_angular_velocity(mut self, angular_velocity: Vec3) -> Self {
        self.angular_velocity = angular_velocity;
        self.flags.0 |= SampleFlags::HAS_ANGULAR_VELOCITY;
        self
    }

    /// Marks the sample as a teleport.
    pub fn teleport(mut self) -> Self {
        self.flags.0 |= SampleFlags::TELEPORT;
        self
    }

    /// True when every number is finite and the rotation is not degenerate.
    pub fn is_valid(&self) -> bool {
        self.server_time.is_finite()
            && self.pose.position.is_finite()
            && self.pose.rotation.is_finite()
            && self.pose.rotation.length_squared() > 1e-12
            && self.velocity.is_finite()
            && self.angular_velocity.is_finite()
            && self.flags.0 & !SampleFlags::ALL == 0
    }
}
