//! Plain `#[repr(C)]` data that crosses the boundary, and conversions to
//! the core's glam types (which never cross: glam's SIMD types are 16-byte
//! aligned).

use glam::{Quat, Vec3};

use super::result::{FfiError, NetsyncResult};
use crate::core::pose::{Pose, Sample, SampleFlags};
use crate::core::timeline::Shown;

/// A vector of three floats (metres, metres per second or radians per
/// second) in netsync's one frame: Y up, +X right, +Z forward (Unity's
/// axes; a left-handed frame).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncVec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

/// A rotation quaternion (x, y, z, w) in netsync's frame (Y up, +X right,
/// +Z forward). Need not be normalised on input; always normalised on
/// output.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetsyncQuat {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub w: f32,
}

impl Default for NetsyncQuat {
    fn default() -> Self {
        NetsyncQuat {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        }
    }
}

/// `NetsyncSample::flags`: `linear_velocity` is set.
pub const NETSYNC_SAMPLE_HAS_VELOCITY: u32 = 1;
/// `NetsyncSample::flags`: `angular_velocity` (world space, rad/s) is set.
pub const NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY: u32 = 2;
/// `NetsyncSample::flags`: the entity jumped here; snap, do not sweep.
pub const NETSYNC_SAMPLE_TELEPORT: u32 = 4;
/// `NetsyncSample::flags`: states of this entity before this one were lost
/// in transit (your transport saw a gap in the sender's sequence):
/// interpolate across the gap and let the adaptive delay cover such gaps.
pub const NETSYNC_SAMPLE_AFTER_GAP: u32 = 8;

/// The state of one entity: what a sender knows and a timeline buffers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncSample {
    /// Chosen by the game; the same on every machine.
    pub entity_id: u64,
    pub position: NetsyncVec3,
    pub rotation: NetsyncQuat,
    /// Metres per second; used when `flags` has `NETSYNC_SAMPLE_HAS_VELOCITY`.
    pub linear_velocity: NetsyncVec3,
    /// World-space radians per second; used with `NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY`.
    pub angular_velocity: NetsyncVec3,
    /// `NETSYNC_SAMPLE_*` bits.
    pub flags: u32,
}

/// `NetsyncTransform::flags`: render time is past the newest data (extrapolated).
pub const NETSYNC_TRANSFORM_EXTRAPOLATED: u32 = 1;
/// `NetsyncTransform::flags`: extrapolated past the cap; easing into a hold.
pub const NETSYNC_TRANSFORM_HELD: u32 = 2;
/// `NetsyncTransform::flags`: predicted mode (dead reckoning to the present).
pub const NETSYNC_TRANSFORM_PREDICTED: u32 = 4;
/// `NetsyncTransform::flags`: a correction is being blended out.
pub const NETSYNC_TRANSFORM_BLENDING: u32 = 8;

/// One entity's pose for this frame, as returned by a tick.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncTransform {
    pub entity_id: u64,
    pub position: NetsyncVec3,
    pub rotation: NetsyncQuat,
    /// `NETSYNC_TRANSFORM_*` bits.
    pub flags: u32,
}

impl From<NetsyncVec3> for Vec3 {
    fn from(v: NetsyncVec3) -> Vec3 {
        Vec3::new(v.x, v.y, v.z)
    }
}

impl From<Vec3> for NetsyncVec3 {
    fn from(v: Vec3) -> NetsyncVec3 {
        NetsyncVec3 {
            x: v.x,
            y: v.y,
            z: v.z,
        }
    }
}

impl From<NetsyncQuat> for Quat {
    fn from(q: NetsyncQuat) -> Quat {
        Quat::from_xyzw(q.x, q.y, q.z, q.w)
    }
}

impl From<Quat> for NetsyncQuat {
    fn from(q: Quat) -> NetsyncQuat {
        NetsyncQuat {
            x: q.x,
            y: q.y,
            z: q.z,
            w: q.w,
        }
    }
}

impl NetsyncSample {
    /// The core sample (rotation normalised when it is usable); `None`
    /// with a reason when a value is unusable.
    pub fn to_core(&self, server_time: f64) -> Result<Sample, String> {
        let rotation: Quat = self.rotation.into();
        let len = rotation.length();
        if !len.is_finite() || len < 1e-6 {
            return Err(format!(
                "entity {}: rotation is not a finite, non-zero quaternion",
                self.entity_id
            ));
        }
        let sample = Sample {
            server_time,
            pose: Pose::new(self.position.into(), rotation / len),
            velocity: self.linear_velocity.into(),
            angular_velocity: self.angular_velocity.into(),
            flags: SampleFlags(self.flags),
        };
        if !sample.is_valid() {
            return Err(format!(
                "entity {}: values must be finite and flags only NETSYNC_SAMPLE_* bits",
                self.entity_id
            ));
        }
        Ok(sample)
    }
}

impl NetsyncTransform {
    pub fn new(entity_id: u64, pose: &Pose, flags: u32) -> Self {
        NetsyncTransform {
            entity_id,
            position: pose.position.into(),
            rotation: pose.rotation.into(),
            flags,
        }
    }
}

/// Where a tick writes its batch (`netsync_client_tick`,
/// `netsync_replay_tick*`): `out` with room for `capacity` transforms,
/// and the count in `*out_count`.
pub(crate) struct TransformBatch {
    out: *mut NetsyncTransform,
    capacity: usize,
    out_count: *mut usize,
}

impl TransformBatch {
    /// Checks the pointers (`out` may be NULL only with no capacity).
    pub fn new(
        out: *mut NetsyncTransform,
        capacity: usize,
        out_count: *mut usize,
    ) -> Result<Self, FfiError> {
        if out_count.is_null() {
            return Err(FfiError::null("out_count"));
        }
        if capacity > 0 && out.is_null() {
            return Err(FfiError::null("out"));
        }
        Ok(TransformBatch {
            out,
            capacity,
            out_count,
        })
    }

    /// The visitor a tick calls for its `i`th transform: written while
    /// room lasts (statically dispatched: it runs once per entity).
    pub fn writer(&self) -> impl FnMut(usize, &Shown) + '_ {
        move |i, shown| {
            if i < self.capacity {
                // SAFETY: i < capacity and `out` holds `capacity` items.
                unsafe {
                    self.out.add(i).write(NetsyncTransform::new(
                        shown.entity,
                        &shown.pose,
                        shown.flags,
                    ))
                };
            }
        }
    }

    /// After the tick showed `count`: the count is written in any case
    /// (new entities may arrive in this very tick: the caller learns the
    /// room it needs next time); `NETSYNC_ERR_BUFFER_TOO_SMALL` when some
    /// did not fit.
    pub fn finish(&self, count: usize) -> Result<(), FfiError> {
        // SAFETY: checked for NULL in `new`.
        unsafe { self.out_count.write(count) };
        if count > self.capacity {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL,
                format!(
                    "{count} entities but room for {}; the first {} were written",
                    self.capacity, self.capacity
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::timeline::shown_flags;

    #[test]
    fn exported_flag_values_match_the_core() {
        assert_eq!(NETSYNC_SAMPLE_HAS_VELOCITY, SampleFlags::HAS_VELOCITY);
        assert_eq!(
            NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY,
            SampleFlags::HAS_ANGULAR_VELOCITY
        );
        assert_eq!(NETSYNC_SAMPLE_TELEPORT, SampleFlags::TELEPORT);
        assert_eq!(NETSYNC_SAMPLE_AFTER_GAP, SampleFlags::AFTER_GAP);
        assert_eq!(NETSYNC_TRANSFORM_EXTRAPOLATED, shown_flags::EXTRAPOLATED);
        assert_eq!(NETSYNC_TRANSFORM_HELD, shown_flags::HELD);
        assert_eq!(NETSYNC_TRANSFORM_PREDICTED, shown_flags::PREDICTED);
        assert_eq!(NETSYNC_TRANSFORM_BLENDING, shown_flags::BLENDING);
    }

    #[test]
    fn layouts_are_what_the_header_promises() {
        assert_eq!(std::mem::size_of::<NetsyncVec3>(), 12);
        assert_eq!(std::mem::size_of::<NetsyncQuat>(), 16);
        assert_eq!(std::mem::size_of::<NetsyncTransform>(), 40);
        assert_eq!(std::mem::align_of::<NetsyncTransform>(), 8);
        assert_eq!(std::mem::size_of::<NetsyncSample>(), 64);
    }
}
