/*
 * netsync_unreal_convert.hpp: Unreal's frame and units <-> netsync's.
 * Engine-independent and header-only (C++17): it reads any type with
 * members X, Y, Z [, W] (FVector, FQuat, or the plain structs below),
 * returns plain structs, and as<FVector>() / as<FQuat>() build engine
 * types from them. It needs only netsync.h (for the plain structs).
 *
 * Unreal:  centimetres (WorldSettings' WorldToMeters, 100 by default),
 *          double precision; X forward, Y right, Z up (left-handed).
 * netsync: metres, float; Y up, +X right, +Z forward (Unity's axes; a
 *          left-handed frame). netsync's only frame: the Unity layer
 *          passes Unity's values through unchanged, every other engine
 *          layer converts to it at its edge, so clients of any engines
 *          agree.
 *
 * Axis mapping (a linear map M on directions; positions and linear
 * velocities are also divided by the world units per metre):
 *
 *     core.x = UE.Y      (UE right   -> +X, right)
 *     core.y = UE.Z      (UE up      -> +Y, up)
 *     core.z = UE.X      (UE forward -> +Z, forward)
 *
 *         | 0  1  0 |
 *     M = | 0  0  1 |      det M = +1: a cyclic permutation of the axes,
 *         | 1  0  0 |      a proper rotation (both frames are left-handed).
 *
 * Rotations. A rotation R by an angle about the unit axis a, in Unreal's
 * components, is M R M^T in netsync's: as M is a proper rotation, the
 * same angle about M a. So a unit quaternion (v, w), v = a sin(angle/2),
 * maps to (M v, w):
 *
 *     core.q = ( UE.q.Y, UE.q.Z, UE.q.X, UE.q.W )
 *     UE.q   = ( core.q.z, core.q.x, core.q.y, core.q.w )
 *
 * Check: Unreal's positive yaw (about +Z, up) turns forward (+X) toward
 * right (+Y). It maps to the same positive angle about +Y (up), which
 * turns +Z (forward) toward +X (right), as a positive rotation about +Y
 * does in Unity (Quaternion.Euler(0, 90, 0) * Vector3.forward is
 * Vector3.right). The same turn.
 *
 * Angular velocity (rad/s, world space): dR/dt = [w]x R becomes
 * M [w]x M^T = [det(M) M w]x = [M w]x, so core.w = M UE.w, like a
 * direction.
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

/// How Unreal's world maps to netsync's: world units per metre. The axes
/// are fixed (see the top of this file), so directions, rotations and
/// angular velocities need no Frame.
struct Frame {
    double units_per_metre = kCentimetresPerMetre;
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

/// A direction (or any vector without units) from Unreal's axes: (Y, Z, X).
template <class V>
NetsyncVec3 direction_to_core(const V& d) noexcept {
    return NetsyncVec3{static_cast<float>(d.Y), static_cast<float>(d.Z), static_cast<float>(d.X)};
}

inline Vector direction_from_core(const NetsyncVec3& d) noexcept {
    return Vector{static_cast<double>(d.z), static_cast<double>(d.x), static_cast<double>(d.y)};
}

// --- positions (cm -> m) and linear velocities (cm/s -> m/s) -----------------

template <class V>
NetsyncVec3 position_to_core(const V& p, const Frame& frame = Frame()) noexcept {
    const double s = 1.0 / frame.units_per_metre;
    return NetsyncVec3{static_cast<float>(p.Y * s), static_cast<float>(p.Z * s), static_cast<float>(p.X * s)};
}

inline Vector position_from_core(const NetsyncVec3& p, const Frame& frame = Frame()) noexcept {
    const double s = frame.units_per_metre;
    return Vector{static_cast<double>(p.z) * s, static_cast<double>(p.x) * s, static_cast<double>(p.y) * s};
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

/// A rotation from Unreal's components: (q.Y, q.Z, q.X, q.W), normalised on
/// the way (in double). A zero or non-finite quaternion is passed on as it
/// is, so that the core rejects it with a message.
template <class Q>
NetsyncQuat rotation_to_core(const Q& q) noexcept {
    double x = q.Y;
    double y = q.Z;
    double z = q.X;
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

/// The Unreal rotation of a netsync quaternion (normalised in double).
inline Quat rotation_from_core(const NetsyncQuat& q) noexcept {
    Quat r{static_cast<double>(q.z), static_cast<double>(q.x), static_cast<double>(q.y), static_cast<double>(q.w)};
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

/// GetPhysicsAngularVelocityInRadians() to netsync's rad/s: (Y, Z, X).
template <class V>
NetsyncVec3 angular_velocity_to_core(const V& w) noexcept {
    return direction_to_core(w);
}

inline Vector angular_velocity_from_core(const NetsyncVec3& w) noexcept { return direction_from_core(w); }

/// GetPhysicsAngularVelocityInDegrees() to netsync's rad/s.
template <class V>
NetsyncVec3 angular_velocity_degrees_to_core(const V& w) noexcept {
    const double k = kPi / 180.0;
    return angular_velocity_to_core(Vector{w.X * k, w.Y * k, w.Z * k});
}

inline Vector angular_velocity_degrees_from_core(const NetsyncVec3& w) noexcept {
    const Vector r = angular_velocity_from_core(w);
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
    s.rotation = rotation_to_core(rotation);
    return s;
}

/// A core sample with linear (world units/s) and angular (rad/s) velocity.
template <class V, class Q, class W>
NetsyncSample sample_to_core(uint64_t entity_id, const V& location, const Q& rotation, const V& linear_velocity,
                             const W& angular_velocity_rad, const Frame& frame = Frame()) noexcept {
    NetsyncSample s = sample_to_core(entity_id, location, rotation, frame);
    s.linear_velocity = velocity_to_core(linear_velocity, frame);
    s.angular_velocity = angular_velocity_to_core(angular_velocity_rad);
    s.flags = NETSYNC_SAMPLE_HAS_VELOCITY | NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY;
    return s;
}

/// The Unreal pose of a transform from a tick.
inline Pose pose_from_core(const NetsyncTransform& t, const Frame& frame = Frame()) noexcept {
    return Pose{position_from_core(t.position, frame), rotation_from_core(t.rotation)};
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
