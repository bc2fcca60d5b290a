/*
 * netsync_unreal_convert.hpp: Unreal's frame and units <-> the core's.
 * Engine-independent and header-only (C++17): it reads any type with
 * members X, Y, Z [, W] (FVector, FQuat, or the plain structs below),
 * returns plain structs, and as<FVector>() / as<FQuat>() build engine
 * types from them. It needs only netsync.h (for the plain structs).
 *
 * Unreal: centimetres (WorldSettings' WorldToMeters, 100 by default),
 *         double precision, left-handed: X forward, Y right, Z up.
 * core:   metres, float, right-handed, Y up, +Z forward, so +X is left
 *         (glTF's convention; also the "forward +Z" of the timeline's
 *         face-motion option).
 *
 * Axis mapping (a linear map M on directions; positions and linear
 * velocities are also divided by the world units per metre):
 *
 *     core.x = -UE.Y     (UE right   -> core -X, the core's right)
 *     core.y =  UE.Z     (UE up      -> core +Y)
 *     core.z =  UE.X     (UE forward -> core +Z)
 *
 *         | 0 -1  0 |
 *     M = | 0  0  1 |      det M = -1: M flips handedness, as it must to
 *         | 1  0  0 |      take a left-handed frame to a right-handed one.
 *
 * Rotations. A rotation R in Unreal's components is M R M^T in the core's.
 * Write M = -P, where P = -M is a proper rotation (det P = +1); the signs
 * cancel, so M R M^T = P R P^T: the same angle about the axis P a. A unit
 * quaternion (v, w) with v = a sin(angle/2) therefore maps to (P v, w) =
 * (-M v, w):
 *
 *     core.q = ( UE.q.Y, -UE.q.Z, -UE.q.X, UE.q.W )
 *     UE.q   = ( -core.q.z, core.q.x, -core.q.y, core.q.w )
 *
 * Check: Unreal's positive yaw (about +Z up) turns forward (+X) toward
 * right (+Y). It maps to a negative angle about core +Y, which turns core
 * forward (+Z) toward -X, the core's right. The same turn.
 *
 * Angular velocity (rad/s, world space) is a pseudovector: dR/dt = [w]x R
 * becomes, under M, [det(M) M w]x, so it maps like a quaternion's vector
 * part: core.w = -M UE.w.
 *
 * Axes::UnityCompatible. The Unity layer passes Unity's values straight
 * (left-handed: X right, Y up, Z forward), so in a session that mixes
 * Unity and Unreal clients the data on the wire is in Unity's frame, the
 * mirror image of the core's documented one. This option maps Unreal to
 * that frame instead: core = (UE.Y, UE.Z, UE.X) / units, a proper rotation
 * (det +1), so quaternions and angular velocities map like vectors:
 * (q.Y, q.Z, q.X, q.W). Every client of one session must use the same Axes.
 *
 * Precision: the core is float. A float holds about 7 significant digits:
 * positions within 1 km (1e5 cm) of the origin keep better than 0.1 mm;
 * at 100 km, about 8 mm. Large-world games should sync relative to a
 * local origin.
 */

#ifndef NETSYNC_UNREAL_CONVERT_HPP
#define NETSYNC_UNREAL_CONVERT_HPP

#include "netsync.h"

#include <cmath>
#include <cstdint>
#include <string_view>

namespace netsync {
namespace unreal {

/// Unreal's default world scale (WorldSettings' WorldToMeters).
constexpr double kCentimetresPerMetre = 100.0;
constexpr double kPi = 3.14159265358979323846;

/// Which frame the core's numbers are in (see the top of this file).
enum class Axes {
    /// The core's documented frame: right-handed, Y up, +Z forward.
    RightHandedYUp,
    /// Unity's frame, which the Unity layer sends unchanged: left-handed,
    /// Y up, +Z forward, +X right. For sessions shared with Unity clients.
    UnityCompatible,
};

/// How Unreal's world maps to the core's: world units per metre and axes.
struct Frame {
    double units_per_metre = kCentimetresPerMetre;
    Axes axes = Axes::RightHandedYUp;

    /// Sign of core.x for a UE +Y (right) direction: -1 right-handed, +1 Unity.
    constexpr double right_sign() const noexcept { return axes == Axes::RightHandedYUp ? -1.0 : 1.0; }
};

/// A vector in Unreal's frame and units (FVector's member names).
struct Vector {
    double X;
    double Y;
    double Z;
};

/// A rotation quaternion in Unreal's frame (FQuat's member names).
struct Quat {
    double X;
    double Y;
    double Z;
    double W;
};

/// A location and rotation in Unreal's frame.
struct Pose {
    Vector Location;
    Quat Rotation;
};

/// An engine vector (anything constructible from three doubles, e.g. FVector).
template <class V>
V as(const Vector& v) {
    return V(v.X, v.Y, v.Z);
}

/// An engine quaternion (anything constructible from X, Y, Z, W, e.g. FQuat).
template <class Q>
Q as(const Quat& q) {
    return Q(q.X, q.Y, q.Z, q.W);
}

// --- directions (no units) --------------------------------------------------

template <class V>
NetsyncVec3 direction_to_core(const V& d, const Frame& frame = Frame()) noexcept {
    return NetsyncVec3{static_cast<float>(frame.right_sign() * d.Y), static_cast<float>(d.Z),
                       static_cast<float>(d.X)};
}

inline Vector direction_from_core(const NetsyncVec3& d, const Frame& frame = Frame()) noexcept {
    return Vector{static_cast<double>(d.z), frame.right_sign() * static_cast<double>(d.x),
                  static_cast<double>(d.y)};
}

// --- positions (cm -> m) and linear velocities (cm/s -> m/s) -----------------

template <class V>
NetsyncVec3 position_to_core(const V& p, const Frame& frame = Frame()) noexcept {
    const double s = 1.0 / frame.units_per_metre;
    return NetsyncVec3{static_cast<float>(frame.right_sign() * p.Y * s), static_cast<float>(p.Z * s),
                       static_cast<float>(p.X * s)};
}

inline Vector position_from_core(const NetsyncVec3& p, const Frame& frame = Frame()) noexcept {
    const double s = frame.units_per_metre;
    return Vector{static_cast<double>(p.z) * s, frame.right_sign() * static_cast<double>(p.x) * s,
                  static_cast<double>(p.y) * s};
}

template <class V>
NetsyncVec3 velocity_to_core(const V& v, const Frame& frame = Frame()) noexcept {
    return position_to_core(v, frame);
}

inline Vector velocity_from_core(const NetsyncVec3& v, const Frame& frame = Frame()) noexcept {
    return position_from_core(v, frame);
}

/// A length in world units (cm) to metres, e.g. a send threshold.
inline float distance_to_core(double units, const Frame& frame = Frame()) noexcept {
    return static_cast<float>(units / frame.units_per_metre);
}

inline double distance_from_core(float metres, const Frame& frame = Frame()) noexcept {
    return static_cast<double>(metres) * frame.units_per_metre;
}

inline float degrees_to_radians(double degrees) noexcept { return static_cast<float>(degrees * kPi / 180.0); }

inline double radians_to_degrees(float radians) noexcept { return static_cast<double>(radians) * 180.0 / kPi; }

// --- rotations -------------------------------------------------------------------

/// A pseudovector (a quaternion's vector part, an angular velocity) from
/// Unreal's components: det(M) M v, i.e. (Y, s Z, s X) with s = right_sign.
template <class V>
void pseudo_to_core(const V& v, const Frame& frame, double& x, double& y, double& z) noexcept {
    const double s = frame.right_sign();
    x = v.Y;
    y = s * v.Z;
    z = s * v.X;
}

/// Normalised on the way (in double). A zero or non-finite quaternion is
/// passed on as it is, so that the core rejects it with a message.
template <class Q>
NetsyncQuat rotation_to_core(const Q& q, const Frame& frame = Frame()) noexcept {
    double x = 0.0;
    double y = 0.0;
    double z = 0.0;
    pseudo_to_core(q, frame, x, y, z);
    double w = q.W;
    const double n = std::sqrt(x * x + y * y + z * z + w * w);
    if (n > 0.0 && std::isfinite(n)) {
        x /= n;
        y /= n;
        z /= n;
        w /= n;
    }
    return NetsyncQuat{static_cast<float>(x), static_cast<float>(y), static_cast<float>(z), static_cast<float>(w)};
}

/// The Unreal rotation of a core quaternion (normalised in double).
inline Quat rotation_from_core(const NetsyncQuat& q, const Frame& frame = Frame()) noexcept {
    const double s = frame.right_sign();
    Quat r{s * static_cast<double>(q.z), static_cast<double>(q.x), s * static_cast<double>(q.y),
           static_cast<double>(q.w)};
    const double n = std::sqrt(r.X * r.X + r.Y * r.Y + r.Z * r.Z + r.W * r.W);
    if (n > 0.0 && std::isfinite(n)) {
        r.X /= n;
        r.Y /= n;
        r.Z /= n;
        r.W /= n;
    }
    return r;
}

// --- angular velocities (rad/s, world space) -------------------------------------

/// GetPhysicsAngularVelocityInRadians() to the core's rad/s.
template <class V>
NetsyncVec3 angular_velocity_to_core(const V& w, const Frame& frame = Frame()) noexcept {
    double x = 0.0;
    double y = 0.0;
    double z = 0.0;
    pseudo_to_core(w, frame, x, y, z);
    return NetsyncVec3{static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)};
}

inline Vector angular_velocity_from_core(const NetsyncVec3& w, const Frame& frame = Frame()) noexcept {
    const double s = frame.right_sign();
    return Vector{s * static_cast<double>(w.z), static_cast<double>(w.x), s * static_cast<double>(w.y)};
}

/// GetPhysicsAngularVelocityInDegrees() to the core's rad/s.
template <class V>
NetsyncVec3 angular_velocity_degrees_to_core(const V& w, const Frame& frame = Frame()) noexcept {
    const double k = kPi / 180.0;
    return angular_velocity_to_core(Vector{w.X * k, w.Y * k, w.Z * k}, frame);
}

inline Vector angular_velocity_degrees_from_core(const NetsyncVec3& w, const Frame& frame = Frame()) noexcept {
    const Vector r = angular_velocity_from_core(w, frame);
    const double k = 180.0 / kPi;
    return Vector{r.X * k, r.Y * k, r.Z * k};
}

// --- whole states ------------------------------------------------------------------

/// A core sample from an Unreal location and rotation (no velocities).
template <class V, class Q>
NetsyncSample sample_to_core(uint64_t entity_id, const V& location, const Q& rotation,
                             const Frame& frame = Frame()) noexcept {
    NetsyncSample s{};
    s.entity_id = entity_id;
    s.position = position_to_core(location, frame);
    s.rotation = rotation_to_core(rotation, frame);
    return s;
}

/// A core sample with linear (world units/s) and angular (rad/s) velocity.
template <class V, class Q, class W>
NetsyncSample sample_to_core(uint64_t entity_id, const V& location, const Q& rotation, const V& linear_velocity,
                             const W& angular_velocity_rad, const Frame& frame = Frame()) noexcept {
    NetsyncSample s = sample_to_core(entity_id, location, rotation, frame);
    s.linear_velocity = velocity_to_core(linear_velocity, frame);
    s.angular_velocity = angular_velocity_to_core(angular_velocity_rad, frame);
    s.flags = NETSYNC_SAMPLE_HAS_VELOCITY | NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY;
    return s;
}

/// The Unreal pose of a transform from a tick.
inline Pose pose_from_core(const NetsyncTransform& t, const Frame& frame = Frame()) noexcept {
    return Pose{position_from_core(t.position, frame), rotation_from_core(t.rotation, frame)};
}

// --- entity ids ---------------------------------------------------------------------

/// A stable entity id from a name that is the same on every machine (an
/// actor's path in its level, with Unreal's PIE prefix removed): 64-bit
/// FNV-1a of its UTF-8 bytes, never 0.
constexpr uint64_t entity_id_from_name(std::string_view name) noexcept {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char c : name) {
        h ^= static_cast<uint8_t>(c);
        h *= 0x100000001b3ull;
    }
    return h == 0 ? 1 : h;
}

}  // namespace unreal
}  // namespace netsync

#endif  // NETSYNC_UNREAL_CONVERT_HPP
