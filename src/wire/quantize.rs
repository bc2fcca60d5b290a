//! Quantization of transforms: positions and velocities to a fixed step
//! (zigzag varints, so small values take few bytes), rotations as the
//! "smallest three" components of the quaternion.

use glam::{Quat, Vec3};

use super::cursor::{DecodeError, Reader, Writer};
use super::varint::{read_i64, write_i64};

/// Precision of every quantized quantity. Sender and receiver must agree:
/// the relay announces it when a client joins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Precision {
    /// Position step in metres (default 1 mm).
    pub position: f32,
    /// Linear velocity step in m/s (default 1 mm/s).
    pub velocity: f32,
    /// Angular velocity step in rad/s (default 0.001).
    pub angular_velocity: f32,
    /// Bits per smallest-three component, 6..=20 (default 10: 4 bytes,
    /// at most about 0.25 degree off; 15 bits: 6 bytes, under 0.01 degree).
    pub rotation_bits: u8,
}

impl Default for Precision {
    fn default() -> Self {
        Precision {
            position: 0.001,
            velocity: 0.001,
            angular_velocity: 0.001,
            rotation_bits: 10,
        }
    }
}

/// Largest quantized magnitude (2^40 steps: 1 099 km at 1 mm).
const MAX_STEPS: i64 = 1 << 40;

/// Positions (m) and velocities (m/s, rad/s) within +/- this are
/// encodable at every precision a relay may be configured with (steps
/// down to 1e-6: 2^40 steps are 1 100 km); the client refuses state
/// beyond it when it is set, rather than drop it on the network thread.
pub const WIRE_RANGE: f32 = 1.0e6;

impl Precision {
    pub fn validate(&self) -> Result<(), String> {
        let ok = |v: f32| (1e-6..=1.0).contains(&v);
        if !ok(self.position) || !ok(self.velocity) || !ok(self.angular_velocity) {
            return Err("precisions must be in [1e-6, 1]".into());
        }
        if !(6..=20).contains(&self.rotation_bits) {
            return Err("rotation_bits must be 6..=20".into());
        }
        Ok(())
    }

    /// Bytes a rotation takes.
    pub fn rotation_bytes(&self) -> usize {
        (2 + 3 * self.rotation_bits as usize).div_ceil(8)
    }
}

/// Why a value cannot be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantizeError {
    NotFinite,
    OutOfRange,
    /// An opaque payload over [`MAX_PAYLOAD`](super::message::MAX_PAYLOAD).
    PayloadTooLarge,
    /// More region ids than [`MAX_REGIONS`](super::message::MAX_REGIONS).
    TooManyRegions,
}

fn steps(v: f32, step: f32) -> Result<i64, QuantizeError> {
    if !v.is_finite() {
        return Err(QuantizeError::NotFinite);
    }
    let q = (v as f64 / step as f64).round();
    if q.abs() >= MAX_STEPS as f64 {
        return Err(QuantizeError::OutOfRange);
    }
    Ok(q as i64)
}

/// Writes a vector quantized to `step`.
pub fn write_vec3(w: &mut Writer, v: Vec3, step: f32) -> Result<(), QuantizeError> {
    let (x, y, z) = (steps(v.x, step)?, steps(v.y, step)?, steps(v.z, step)?);
    write_i64(w, x);
    write_i64(w, y);
    write_i64(w, z);
    Ok(())
}

pub fn read_vec3(r: &mut Reader, step: f32, field: &'static str) -> Result<Vec3, DecodeError> {
    let mut out = [0.0f32; 3];
    for v in &mut out {
        let q = read_i64(r, field)?;
        // unsigned_abs: i64::MIN has no absolute value (abs() would wrap
        // and let it through; found by the wire_message fuzz target).
        if q.unsigned_abs() >= MAX_STEPS.unsigned_abs() {
            return Err(DecodeError::Invalid {
                field,
                reason: "quantized value out of range",
            });
        }
        *v = (q as f64 * step as f64) as f32;
    }
    Ok(Vec3::from_array(out))
}

/// Writes a rotation as its smallest three components.
pub fn write_rotation(w: &mut Writer, q: Quat, bits: u8) -> Result<(), QuantizeError> {
    if !q.is_finite() || q.length_squared() < 1e-12 {
        return Err(QuantizeError::NotFinite);
    }
    let q = q.normalize();
    let c = q.to_array();
    let largest = (0..4)
        .max_by(|&a, &b| c[a].abs().total_cmp(&c[b].abs()))
        .unwrap_or(3);
    let sign = if c[largest] < 0.0 { -1.0 } else { 1.0 };
    let max = (1u64 << bits) - 1;
    let mut packed: u64 = largest as u64;
    for (i, &v) in c.iter().enumerate() {
        if i == largest {
            continue;
        }
        // Each other component lies in [-1/sqrt 2, 1/sqrt 2].
        let unit = (v * sign * std::f32::consts::SQRT_2 + 1.0) * 0.5;
        let qv = (unit.clamp(0.0, 1.0) * max as f32).round() as u64;
        packed = (packed << bits) | qv;
    }
    let bytes = (2 + 3 * bits as usize).div_ceil(8);
    w.bytes(&packed.to_le_bytes()[..bytes]);
    Ok(())
}

pub fn read_rotation(r: &mut Reader, bits: u8, field: &'static str) -> Result<Quat, DecodeError> {
    let n = (2 + 3 * bits as usize).div_ceil(8);
    let raw = r.take(n, field)?;
    let mut a = [0u8; 8];
    a[..n].copy_from_slice(raw);
    let mut packed = u64::from_le_bytes(a);
    if packed >> (2 + 3 * bits as u32) != 0 {
        return Err(DecodeError::Invalid {
            field,
            reason: "bits set above the rotation",
        });
    }
    let max = ((1u64 << bits) - 1) as f32;
    let mask = (1u64 << bits) - 1;
    let mut three = [0.0f32; 3];
    for v in three.iter_mut().rev() {
        let q = (packed & mask) as f32;
        packed >>= bits;
        *v = (q / max * 2.0 - 1.0) * std::f32::consts::FRAC_1_SQRT_2;
    }
    let largest = packed as usize; // two bits left
    let sum: f32 = three.iter().map(|v| v * v).sum();
    let big = (1.0 - sum).max(0.0).sqrt();
    let mut c = [0.0f32; 4];
    let mut k = 0;
    for (i, slot) in c.iter_mut().enumerate() {
        if i == largest {
            *slot = big;
        } else {
            *slot = three[k];
            k += 1;
        }
    }
    Ok(Quat::from_array(c).normalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_range_fits_the_finest_precision() {
        let mut w = Writer::new();
        let edge = Vec3::splat(WIRE_RANGE - 1.0);
        assert_eq!(write_vec3(&mut w, edge, 1e-6), Ok(()));
        assert_eq!(write_vec3(&mut w, -edge, 1e-6), Ok(()));
    }

    #[test]
    fn positions_round_trip_within_half_a_step() {
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..10_000 {
            let v = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5) * 20_000.0;
            let mut w = Writer::new();
            write_vec3(&mut w, v, 0.001).unwrap();
            let back = read_vec3(&mut Reader::new(&w.bytes), 0.001, "p").unwrap();
            // Half a step, plus f32 rounding of values up to 10 km.
            assert!(
                (back - v).abs().max_element() <= 0.0005 + 0.001,
                "{v} {back}"
            );
        }
        let mut w = Writer::new();
        assert_eq!(
            write_vec3(&mut w, Vec3::splat(f32::NAN), 0.001),
            Err(QuantizeError::NotFinite)
        );
        assert_eq!(
            write_vec3(&mut w, Vec3::splat(2e9), 0.001),
            Err(QuantizeError::OutOfRange)
        );
    }

    /// Rotation angle between unit quaternions, accurate for tiny angles
    /// (|a - b| = 2 sin(angle / 4)); acos near 1 is not, in f32.
    fn precise_angle(a: Quat, b: Quat) -> f32 {
        let b = if a.dot(b) < 0.0 { -b } else { b };
        4.0 * ((a - b).length() / 2.0).min(1.0).asin()
    }

    #[test]
    fn rotations_round_trip_within_the_promised_angle() {
        let mut rng = fastrand::Rng::with_seed(2);
        for bits in [10u8, 15, 20] {
            let bound = match bits {
                10 => 0.3f32.to_radians(),
                15 => 0.01f32.to_radians(),
                _ => 0.001f32.to_radians(),
            };
            for _ in 0..5_000 {
                let q = Quat::from_xyzw(
                    rng.f32() - 0.5,
                    rng.f32() - 0.5,
                    rng.f32() - 0.5,
                    rng.f32() - 0.5,
                )
                .normalize();
                let mut w = Writer::new();
                write_rotation(&mut w, q, bits).unwrap();
                let p = Precision {
                    rotation_bits: bits,
                    ..Default::default()
                };
                assert_eq!(w.len(), p.rotation_bytes());
                let back = read_rotation(&mut Reader::new(&w.bytes), bits, "q").unwrap();
                let angle = precise_angle(q, back);
                assert!(angle <= bound, "{bits} bits: {angle}");
            }
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..20_000 {
            let len = rng.usize(0..12);
            let bytes: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            let _ = read_rotation(&mut Reader::new(&bytes), 10, "q");
            let _ = read_vec3(&mut Reader::new(&bytes), 0.001, "p");
        }
    }
}
