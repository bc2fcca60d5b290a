// Exercises include/netsync.hpp and include/netsync_unreal_convert.hpp
// against the real library, as an engine layer (the Unreal plugin) would:
// Unreal-frame poses converted at the edge, a relay and two clients on
// loopback, a collision claim, commands, a recording and its replay,
// errors as exceptions, logging;
// and the conversions' round trips and geometry, and that they produce
// exactly what a Unity client sends (netsync's one frame is Unity's axes).
// Built by tests/cpp_programs.rs with g++ -std=c++17 -Wall -Wextra -Werror.

// The conversion header first: it must stand alone on netsync.h.
#include "netsync_unreal_convert.hpp"
#include "netsync.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace ue = netsync::unreal;

static int passed = 0;
static int failed = 0;

#define EXPECT(cond, ...)                                   \
    do {                                                    \
        if (cond) {                                         \
            passed++;                                       \
        } else {                                            \
            failed++;                                       \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            std::printf(__VA_ARGS__);                       \
            std::printf("\n");                              \
        }                                                   \
    } while (0)

// Prints what a section checked: "ok:" when none of its checks failed
// since the previous report, else "NOT ok:".
static void report(const char* format, ...) {
    static int failed_before = 0;
    std::va_list args;
    va_start(args, format);
    std::printf(failed > failed_before ? "NOT ok: " : "ok: ");
    failed_before = failed;
    std::vprintf(format, args);
    std::printf("\n");
    va_end(args);
    std::fflush(stdout);
}

// ---------------------------------------------------------------------------
// Engine-like types: what FVector and FQuat look like to the headers.

struct FVectorLike {
    double X, Y, Z;
    FVectorLike(double x, double y, double z) : X(x), Y(y), Z(z) {}
};

struct FQuatLike {
    double X, Y, Z, W;
    FQuatLike(double x, double y, double z, double w) : X(x), Y(y), Z(z), W(w) {}
};

// Double-precision reference math, independent of the headers.
struct D3 {
    double x, y, z;
};
struct D4 {
    double x, y, z, w;
};

static D3 cross(D3 a, D3 b) { return D3{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }

// v rotated by the unit quaternion q (q v q*).
static D3 rotate(D4 q, D3 v) {
    const D3 u{q.x, q.y, q.z};
    const D3 t = cross(u, v);
    const D3 t2{2 * t.x, 2 * t.y, 2 * t.z};
    const D3 c = cross(u, t2);
    return D3{v.x + q.w * t2.x + c.x, v.y + q.w * t2.y + c.y, v.z + q.w * t2.z + c.z};
}

static D4 axis_angle(D3 axis, double angle) {
    const double n = std::sqrt(axis.x * axis.x + axis.y * axis.y + axis.z * axis.z);
    const double s = std::sin(angle / 2) / n;
    return D4{axis.x * s, axis.y * s, axis.z * s, std::cos(angle / 2)};
}

static D3 d3(const NetsyncVec3& v) { return D3{v.x, v.y, v.z}; }
static D3 d3(const ue::Vector& v) { return D3{v.X, v.Y, v.Z}; }
static D4 d4(const NetsyncQuat& q) { return D4{q.x, q.y, q.z, q.w}; }
static D4 d4(const ue::Quat& q) { return D4{q.X, q.Y, q.Z, q.W}; }
static ue::Vector uv(D3 v) { return ue::Vector{v.x, v.y, v.z}; }
static ue::Quat uq(D4 q) { return ue::Quat{q.x, q.y, q.z, q.w}; }

static double dist(D3 a, D3 b) { return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z)); }

// Angle (degrees) of the rotation between two unit quaternions.
static double quat_angle(D4 a, D4 b) {
    const double dot = std::fabs(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w);
    return 2 * std::acos(std::min(1.0, dot)) * 180.0 / ue::kPi;
}

// Distance between two rotations' quaternions, ignoring the sign (q and -q
// are one rotation).
static double quat_dist(D4 a, D4 b) {
    const double plus = std::fabs(a.x - b.x) + std::fabs(a.y - b.y) + std::fabs(a.z - b.z) + std::fabs(a.w - b.w);
    const double minus = std::fabs(a.x + b.x) + std::fabs(a.y + b.y) + std::fabs(a.z + b.z) + std::fabs(a.w + b.w);
    return std::min(plus, minus);
}

// A yaw (about Unreal's Z up) as an Unreal quaternion.
static ue::Quat ue_yaw(double radians) { return uq(axis_angle(D3{0, 0, 1}, radians)); }

// ---------------------------------------------------------------------------
// Conversions: Unreal <-> netsync's one frame (metres; X right, Y up,
// Z forward: Unity's axes).

static void test_conversion_axes() {
    // Unreal forward / right / up (1 m each) -> +Z / +X / +Y, exactly.
    const NetsyncVec3 fwd = ue::position_to_core(ue::Vector{100, 0, 0});
    const NetsyncVec3 right = ue::position_to_core(FVectorLike(0, 100, 0));
    const NetsyncVec3 up = ue::position_to_core(ue::Vector{0, 0, 100});
    EXPECT(fwd.x == 0 && fwd.y == 0 && fwd.z == 1, "forward -> (%g %g %g)", fwd.x, fwd.y, fwd.z);
    EXPECT(right.x == 1 && right.y == 0 && right.z == 0, "right -> (%g %g %g)", right.x, right.y, right.z);
    EXPECT(up.x == 0 && up.y == 1 && up.z == 0, "up -> (%g %g %g)", up.x, up.y, up.z);
    const NetsyncVec3 d = ue::direction_to_core(ue::Vector{0.25, -0.5, 0.75});
    EXPECT(d.x == -0.5f && d.y == 0.75f && d.z == 0.25f, "direction (X, Y, Z) -> (Y, Z, X): (%g %g %g)", d.x, d.y, d.z);
    const ue::Vector back = ue::direction_from_core(NetsyncVec3{1, 2, 3});
    EXPECT(back.X == 3 && back.Y == 1 && back.Z == 2, "direction (x, y, z) -> (z, x, y): (%g %g %g)", back.X, back.Y,
           back.Z);

    // Both frames are left-handed: the map is a rotation (det +1), so it
    // keeps cross products: M (a x b) = (M a) x (M b).
    const D3 a{0.3, -1.2, 0.7};
    const D3 b{-0.4, 0.5, 2.0};
    const D3 lhs = cross(d3(ue::direction_to_core(uv(a))), d3(ue::direction_to_core(uv(b))));
    const D3 rhs = d3(ue::direction_to_core(uv(cross(a, b))));
    EXPECT(dist(lhs, rhs) < 1e-5, "cross products kept: (%g %g %g) vs (%g %g %g)", lhs.x, lhs.y, lhs.z, rhs.x, rhs.y,
           rhs.z);

    // Unreal's positive yaw (about +Z up) turns forward toward right. The
    // converted rotation is a positive rotation about +Y that turns +Z
    // (forward) toward +X (right): Unity's Quaternion.Euler(0, 90, 0).
    const float h = 0.70710678f;
    const NetsyncQuat yaw90 = ue::rotation_to_core(ue_yaw(ue::kPi / 2));
    EXPECT(std::fabs(yaw90.x) < 1e-7f && std::fabs(yaw90.y - h) < 1e-7f && std::fabs(yaw90.z) < 1e-7f &&
               std::fabs(yaw90.w - h) < 1e-7f,
           "yaw +90 -> (%g %g %g %g), Unity's Euler(0, 90, 0) is (0 %g 0 %g)", yaw90.x, yaw90.y, yaw90.z, yaw90.w, h, h);
    const D3 turned = rotate(d4(yaw90), D3{0, 0, 1});
    EXPECT(dist(turned, D3{1, 0, 0}) < 1e-6, "yaw +90 turns forward to (%g %g %g)", turned.x, turned.y, turned.z);
    const D3 turned_left = rotate(d4(ue::rotation_to_core(ue_yaw(-ue::kPi / 2))), D3{0, 0, 1});
    EXPECT(dist(turned_left, D3{-1, 0, 0}) < 1e-6, "yaw -90 turns forward to (%g %g %g)", turned_left.x, turned_left.y,
           turned_left.z);

    // +90 about Unreal's right (+Y) turns forward down (UE -Z): about +X,
    // as Unity's Quaternion.Euler(90, 0, 0) turns Vector3.forward down.
    const NetsyncQuat about_right = ue::rotation_to_core(uq(axis_angle(D3{0, 1, 0}, ue::kPi / 2)));
    EXPECT(std::fabs(about_right.x - h) < 1e-7f && std::fabs(about_right.y) < 1e-7f &&
               std::fabs(about_right.z) < 1e-7f && std::fabs(about_right.w - h) < 1e-7f,
           "+90 about UE right -> (%g %g %g %g)", about_right.x, about_right.y, about_right.z, about_right.w);
    const D3 down = rotate(d4(about_right), D3{0, 0, 1});
    EXPECT(dist(down, D3{0, -1, 0}) < 1e-6, "+90 about right turns forward to (%g %g %g)", down.x, down.y, down.z);

    // A yaw rate is an angular velocity about up in both frames, same sign.
    const NetsyncVec3 spin = ue::angular_velocity_to_core(ue::Vector{0, 0, 2});
    EXPECT(spin.x == 0 && spin.y == 2 && spin.z == 0, "yaw rate 2 rad/s -> (%g %g %g)", spin.x, spin.y, spin.z);
    report("axes: UE forward/right/up -> +Z/+X/+Y; cross products kept; yaw +90 turns forward to right "
           "(Unity's Euler(0, 90, 0)), pitch about right turns it down");
}

static void test_conversion_geometry() {
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    double worst_rot = 0;
    double worst_ang = 0;
    for (int i = 0; i < 1000; ++i) {
        // A random rotation and direction: rotating in Unreal and then
        // converting equals converting both and rotating in netsync's frame.
        const D4 q = axis_angle(D3{unit(rng), unit(rng), unit(rng) + 1e-3}, unit(rng) * ue::kPi);
        const D3 v{unit(rng), unit(rng), unit(rng)};
        const D3 expected = d3(ue::direction_to_core(uv(rotate(q, v))));
        const D3 got = rotate(d4(ue::rotation_to_core(uq(q))), d3(ue::direction_to_core(uv(v))));
        worst_rot = std::max(worst_rot, dist(expected, got));

        // An angular velocity w (rad/s) turns by |w| dt about w: the
        // converted velocity turns by the converted rotation.
        const D3 w{unit(rng) * 5, unit(rng) * 5, unit(rng) * 5};
        const double speed = std::sqrt(w.x * w.x + w.y * w.y + w.z * w.z);
        const double dt = 0.1;
        const D4 turn_ue = axis_angle(w, speed * dt);
        const NetsyncVec3 wc = ue::angular_velocity_to_core(uv(w));
        const double speed_c = std::sqrt(double(wc.x) * wc.x + double(wc.y) * wc.y + double(wc.z) * wc.z);
        const D4 turn_core = axis_angle(d3(wc), speed_c * dt);
        worst_ang = std::max(worst_ang, quat_dist(d4(ue::rotation_to_core(uq(turn_ue))), turn_core));
    }
    EXPECT(worst_rot < 1e-5, "rotations disagree with directions by %g", worst_rot);
    EXPECT(worst_ang < 1e-5, "angular velocities disagree with rotations by %g", worst_ang);
    report("geometry: 1000 random rotations and angular velocities commute with the axis map (worst %.2g, %.2g)",
           worst_rot, worst_ang);
}

static void test_conversion_round_trips() {
    std::mt19937 rng(777);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    const double float_eps = 1.0 / (1 << 23);  // float's relative precision (2^-23)
    double worst_pos = 0;  // in units of the component's float precision
    double worst_rot = 0;
    double worst_vel = 0;
    double worst_ang = 0;
    for (int i = 0; i < 4000; ++i) {
        // Up to 1 km from the origin, in centimetres.
        const ue::Vector p{unit(rng) * 1e5, unit(rng) * 1e5, unit(rng) * 1e5};
        const ue::Vector back = ue::position_from_core(ue::position_to_core(p));
        const double comps[3][2] = {{p.X, back.X}, {p.Y, back.Y}, {p.Z, back.Z}};
        for (const auto& c : comps) {
            worst_pos = std::max(worst_pos, std::fabs(c[0] - c[1]) / (std::fabs(c[0]) * float_eps + 1e-30));
        }
        const ue::Vector v{unit(rng) * 3000, unit(rng) * 3000, unit(rng) * 3000};
        worst_vel = std::max(worst_vel, dist(d3(v), d3(ue::velocity_from_core(ue::velocity_to_core(v)))));
        const ue::Vector w{unit(rng) * 20, unit(rng) * 20, unit(rng) * 20};
        worst_ang = std::max(worst_ang, dist(d3(w), d3(ue::angular_velocity_from_core(ue::angular_velocity_to_core(w)))));
        const D4 q = axis_angle(D3{unit(rng), unit(rng), unit(rng) + 1e-3}, unit(rng) * ue::kPi);
        worst_rot = std::max(worst_rot, quat_dist(q, d4(ue::rotation_from_core(ue::rotation_to_core(uq(q))))));
    }
    // Rounding to float and back: at most half an ulp per component, plus
    // the division by 100 (one more rounding).
    EXPECT(worst_pos <= 1.0, "position round trip off by %g float epsilons", worst_pos);
    EXPECT(worst_vel < 3000 * 2 * float_eps * 2, "velocity round trip off by %g cm/s", worst_vel);
    EXPECT(worst_ang < 20 * 2 * float_eps * 2, "angular velocity round trip off by %g rad/s", worst_ang);
    EXPECT(worst_rot < 4 * 2 * float_eps, "rotation round trip off by %g", worst_rot);
    report("round trips within float precision: positions to 1 km (worst %.2f float eps relative), velocities %.2g cm/s, "
           "angular %.2g rad/s, rotations %.2g",
           worst_pos, worst_vel, worst_ang, worst_rot);

    // A precise figure the README quotes: 1 km out, better than 0.1 mm.
    const ue::Vector far{1e5, -1e5, 5e4};
    const double err = dist(d3(far), d3(ue::position_from_core(ue::position_to_core(far))));
    EXPECT(err < 0.01, "1 km out: %g cm", err);

    // World scale and units.
    ue::Frame metres;
    metres.units_per_metre = 1.0;
    const NetsyncVec3 one = ue::position_to_core(ue::Vector{1, 0, 0}, metres);
    EXPECT(one.z == 1.0f, "units_per_metre 1: %g", one.z);
    EXPECT(ue::distance_to_core(2.5) == 0.025f && ue::distance_from_core(0.025f) > 2.4999 &&
               ue::distance_from_core(0.025f) < 2.5001,
           "distances");
    EXPECT(std::fabs(ue::degrees_to_radians(180.0) - 3.14159265f) < 1e-6f, "degrees");
    EXPECT(std::fabs(ue::radians_to_degrees(ue::degrees_to_radians(37.5)) - 37.5) < 1e-4, "radians");
    const NetsyncVec3 deg = ue::angular_velocity_degrees_to_core(ue::Vector{0, 0, 90});
    EXPECT(std::fabs(deg.y - 1.5707963f) < 1e-6f && deg.x == 0 && deg.z == 0, "90 deg/s of yaw -> %g rad/s about +Y",
           deg.y);
    const ue::Vector deg_back = ue::angular_velocity_degrees_from_core(deg);
    EXPECT(std::fabs(deg_back.Z - 90) < 1e-4, "degrees back %g", deg_back.Z);

    // Whole states, engine types and invalid input.
    const NetsyncSample s = ue::sample_to_core(7, FVectorLike(100, 200, 300), FQuatLike(0, 0, 0, 2),
                                               FVectorLike(0, 0, -980), FVectorLike(0, 0, 1));
    EXPECT(s.entity_id == 7 && s.position.x == 2 && s.position.y == 3 && s.position.z == 1, "sample position");
    EXPECT(s.rotation.w == 1 && s.rotation.x == 0, "sample rotation normalised");
    EXPECT(s.linear_velocity.y == -9.8f && s.angular_velocity.y == 1,
           "sample velocities (%g, %g)", s.linear_velocity.y, s.angular_velocity.y);
    EXPECT(s.flags == (NETSYNC_SAMPLE_HAS_VELOCITY | NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY), "sample flags %u", s.flags);
    NetsyncTransform t{};
    t.position = s.position;
    t.rotation = s.rotation;
    const ue::Pose pose = ue::pose_from_core(t);
    const FVectorLike loc = ue::as<FVectorLike>(pose.Location);
    const FQuatLike rot = ue::as<FQuatLike>(pose.Rotation);
    EXPECT(loc.X == 100 && loc.Y == 200 && loc.Z == 300 && rot.W == 1, "pose back (%g %g %g)", loc.X, loc.Y, loc.Z);
    const NetsyncQuat zero = ue::rotation_to_core(ue::Quat{0, 0, 0, 0});
    EXPECT(zero.x == 0 && zero.y == 0 && zero.z == 0 && zero.w == 0, "a zero quaternion passes through for the core to refuse");

    // Entity ids from names: FNV-1a 64 (published test vectors), never 0.
    EXPECT(ue::entity_id_from_name("") == 0xcbf29ce484222325ull, "fnv of empty");
    EXPECT(ue::entity_id_from_name("a") == 0xaf63dc4c8601ec8cull, "fnv of a");
    EXPECT(ue::entity_id_from_name("foobar") == 0x85944171f73967e8ull, "fnv of foobar");
    static_assert(ue::entity_id_from_name("/Game/Maps/Arena.Arena:PersistentLevel.Ball_2") != 0, "constexpr ids");
    report("units and whole states: world scale, degrees, samples, poses, engine types, FNV-1a entity ids");
}

// What a Unity object sends: Unity's Vector3 and Quaternion unchanged
// (the Unity layer's NetsyncVec3/NetsyncQuat are views of them).
static NetsyncSample unity_sample(uint64_t id, NetsyncVec3 position, NetsyncQuat rotation, NetsyncVec3 velocity,
                                  NetsyncVec3 angular_velocity) {
    NetsyncSample s{};
    s.entity_id = id;
    s.position = position;
    s.rotation = rotation;
    s.linear_velocity = velocity;
    s.angular_velocity = angular_velocity;
    s.flags = NETSYNC_SAMPLE_HAS_VELOCITY | NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY;
    return s;
}

static double sample_diff(const NetsyncSample& a, const NetsyncSample& b) {
    const float d[] = {a.position.x - b.position.x,
                       a.position.y - b.position.y,
                       a.position.z - b.position.z,
                       a.rotation.x - b.rotation.x,
                       a.rotation.y - b.rotation.y,
                       a.rotation.z - b.rotation.z,
                       a.rotation.w - b.rotation.w,
                       a.linear_velocity.x - b.linear_velocity.x,
                       a.linear_velocity.y - b.linear_velocity.y,
                       a.linear_velocity.z - b.linear_velocity.z,
                       a.angular_velocity.x - b.angular_velocity.x,
                       a.angular_velocity.y - b.angular_velocity.y,
                       a.angular_velocity.z - b.angular_velocity.z};
    double worst = (a.entity_id == b.entity_id && a.flags == b.flags) ? 0.0 : 1e9;
    for (const float x : d) worst = std::max(worst, static_cast<double>(std::fabs(x)));
    return worst;
}

// A Unity client and an Unreal client in one session send the same numbers
// for the same placement and motion: netsync has one frame, Unity's axes.
static void test_conversion_matches_unity() {
    // An actor at UE (100, 200, 300) cm, unrotated, moving forward at 5 m/s:
    // a Unity object at Vector3(2, 3, 1), Quaternion.identity, moving along
    // Vector3.forward (+Z).
    const NetsyncSample from_ue = ue::sample_to_core(42, FVectorLike(100, 200, 300), FQuatLike(0, 0, 0, 1),
                                                     FVectorLike(500, 0, 0), FVectorLike(0, 0, 0));
    const NetsyncSample from_unity =
        unity_sample(42, NetsyncVec3{2, 3, 1}, NetsyncQuat{0, 0, 0, 1}, NetsyncVec3{0, 0, 5}, NetsyncVec3{0, 0, 0});
    EXPECT(sample_diff(from_ue, from_unity) == 0.0,
           "UE (100, 200, 300) cm moving forward sent as (%g %g %g) m moving (%g %g %g)", from_ue.position.x,
           from_ue.position.y, from_ue.position.z, from_ue.linear_velocity.x, from_ue.linear_velocity.y,
           from_ue.linear_velocity.z);

    // The same actor yawed +90 (facing its right), moving along its forward
    // and turning right at 1 rad/s: Unity's Quaternion.Euler(0, 90, 0), moving
    // along transform.forward (Vector3.right), angular velocity (0, 1, 0).
    const float h = 0.70710678f;
    const NetsyncSample turned_ue = ue::sample_to_core(42, FVectorLike(100, 200, 300), ue_yaw(ue::kPi / 2),
                                                       FVectorLike(0, 500, 0), FVectorLike(0, 0, 1));
    const NetsyncSample turned_unity =
        unity_sample(42, NetsyncVec3{2, 3, 1}, NetsyncQuat{0, h, 0, h}, NetsyncVec3{5, 0, 0}, NetsyncVec3{0, 1, 0});
    const double turned_diff = sample_diff(turned_ue, turned_unity);
    EXPECT(turned_diff < 1e-7, "yawed +90 and turning right: off Unity's numbers by %g", turned_diff);
    const D3 facing = rotate(d4(turned_ue.rotation), D3{0, 0, 1});
    const D3 heading = d3(turned_ue.linear_velocity);
    EXPECT(dist(facing, D3{heading.x / 5, heading.y / 5, heading.z / 5}) < 1e-6, "it faces where it moves: (%g %g %g)",
           facing.x, facing.y, facing.z);

    // And back: what the Unity object sends shows in Unreal where the actor was.
    NetsyncTransform t{};
    t.position = turned_unity.position;
    t.rotation = turned_unity.rotation;
    const ue::Pose pose = ue::pose_from_core(t);
    const double rot_off = quat_angle(d4(pose.Rotation), d4(ue_yaw(ue::kPi / 2)));
    EXPECT(pose.Location.X == 100 && pose.Location.Y == 200 && pose.Location.Z == 300 && rot_off < 1e-4,
           "Unity's object shows in Unreal at (%g %g %g), %g degrees off the yaw", pose.Location.X, pose.Location.Y,
           pose.Location.Z, rot_off);
    report("one frame with Unity: UE (100, 200, 300) cm moving forward is sent as (2, 3, 1) m moving +Z, as a Unity "
           "object at Vector3(2, 3, 1) is; a yawed, turning actor sends Unity's numbers and shows back unchanged");
}

// ---------------------------------------------------------------------------
// Wrapper basics and errors

static_assert(!std::is_copy_constructible_v<netsync::Client>, "clients are move-only");
static_assert(!std::is_copy_assignable_v<netsync::Server>, "servers are move-only");
static_assert(std::is_nothrow_move_constructible_v<netsync::Client>, "moving a client cannot throw");
static_assert(std::is_nothrow_move_assignable_v<netsync::Server>, "moving a server cannot throw");
static_assert(!std::is_copy_constructible_v<netsync::Timeline>, "timelines are move-only");

static void test_errors() {
    netsync::check_abi();
    const netsync::AbiVersion lib = netsync::library_abi_version();
    EXPECT(lib.major == NETSYNC_ABI_VERSION_MAJOR, "abi major %u", lib.major);
    EXPECT(!netsync::abi_compatible({NETSYNC_ABI_VERSION_MAJOR + 1, 0}), "another major is refused");
    EXPECT(!netsync::abi_compatible({0, 3}, {0, 4}) && netsync::abi_compatible({1, 5}, {1, 4}) &&
               !netsync::abi_compatible({1, 3}, {1, 4}),
           "major 0: the same minor; from 1: at least the header's");

    // A failing call throws netsync::Error with the native code and message.
    netsync::Timeline timeline = netsync::Timeline::create();
    timeline.tick(5.0);
    bool thrown = false;
    try {
        timeline.tick(4.0);
    } catch (const netsync::Error& e) {
        thrown = true;
        EXPECT(e.code() == NETSYNC_ERR_INVALID_ARGUMENT, "code %s", e.code_name());
        EXPECT(e.message() == netsync_last_error(), "message is netsync_last_error: %s", e.message().c_str());
        EXPECT(e.message().find("went backwards") != std::string::npos, "message: %s", e.message().c_str());
        EXPECT(std::string(e.what()).find("NETSYNC_ERR_INVALID_ARGUMENT") == 0, "what(): %s", e.what());
        report("error as exception: %s", e.what());
    }
    EXPECT(thrown, "a backwards tick throws");

    thrown = false;
    try {
        netsync::Client::connect("not an address");
    } catch (const netsync::Error& e) {
        thrown = true;
        EXPECT(e.code() == NETSYNC_ERR_INVALID_ARGUMENT, "connect code %s", e.code_name());
        EXPECT(!e.message().empty(), "connect message");
        report("error as exception: %s", e.what());
    }
    EXPECT(thrown, "a bad address throws");

    // The same failure as a value: no exception.
    netsync::Result<netsync::Client> r = netsync::Client::try_connect("nope");
    EXPECT(!r.ok() && r.code() == NETSYNC_ERR_INVALID_ARGUMENT, "try_connect gives the code");
    EXPECT(!r.error().message().empty(), "try_connect gives the message");
    EXPECT(netsync::Timeline::try_create().value_or(netsync::Timeline()).native() != nullptr, "value_or");

    // A caught panic inside the library is an error code, not a crash.
    const netsync::Status panic = netsync::try_debug_panic();
    EXPECT(panic.code() == NETSYNC_ERR_PANIC, "debug panic gives %s", netsync::result_name(panic.code()));

    // A moved-from owner is empty: calls fail cleanly, nothing is freed twice.
    netsync::Timeline moved = std::move(timeline);
    EXPECT(!timeline && moved, "move leaves the source empty");
    thrown = false;
    try {
        (void)timeline.entity_count();
    } catch (const netsync::Error& e) {
        thrown = true;
        EXPECT(e.code() == NETSYNC_ERR_NULL_POINTER || e.code() == NETSYNC_ERR_INVALID_HANDLE, "empty owner: %s",
               e.code_name());
    }
    EXPECT(thrown, "an empty owner throws");
    report("errors: as values (try_*), panics as NETSYNC_ERR_PANIC, moved-from owners fail cleanly");
}

static void test_log() {
    std::mutex mutex;
    std::vector<std::string> seen;
    netsync::set_log_handler(
        [&](netsync::LogLevel level, std::string_view target, std::string_view message) {
            std::lock_guard<std::mutex> lock(mutex);
            if (level == netsync::LogLevel::Warn) seen.emplace_back(std::string(target) + "|" + std::string(message));
        },
        netsync::LogLevel::Info);
    netsync::log(netsync::LogLevel::Warn, "hello from C++");
    netsync::clear_log_handler();
    netsync::log(netsync::LogLevel::Warn, "nobody hears this");
    std::lock_guard<std::mutex> lock(mutex);
    const bool found = std::any_of(seen.begin(), seen.end(),
                                   [](const std::string& s) { return s.find("hello from C++") != std::string::npos; });
    EXPECT(found, "the handler saw the record (%zu records)", seen.size());
    EXPECT(std::none_of(seen.begin(), seen.end(),
                        [](const std::string& s) { return s.find("nobody") != std::string::npos; }),
           "a cleared handler is not called");
    report("log handler receives records and is silent once cleared");
}

// ---------------------------------------------------------------------------
// Relay and clients

static double now_s() {
    static const auto start = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Steps until `done` or the timeout; false (and a failure) on timeout.
template <class Step, class Done>
static bool pump(const char* what, double timeout, Step step, Done done) {
    const double end = now_s() + timeout;
    for (;;) {
        step(now_s());
        if (done()) return true;
        if (now_s() > end) {
            EXPECT(false, "timed out after %.1f s waiting for %s", timeout, what);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

static const NetsyncTransform* find(netsync::Span<const NetsyncTransform> batch, uint64_t id) {
    for (const NetsyncTransform& t : batch) {
        if (t.entity_id == id) return &t;
    }
    return nullptr;
}

// What one client saw happen, from its events.
struct Seen {
    uint32_t client_id = 0;
    std::vector<uint64_t> appeared, gained, lost;
    std::vector<std::pair<uint64_t, uint32_t>> refused;

    void on(const netsync::ClientEvent& e) {
        switch (netsync::kind_of(e)) {
            case netsync::EventKind::Connected:
            case netsync::EventKind::Reconnected: client_id = e.client_id; break;
            case netsync::EventKind::EntityAppeared: appeared.push_back(e.entity_id); break;
            case netsync::EventKind::RightGained: gained.push_back(e.entity_id); break;
            case netsync::EventKind::RightLost: lost.push_back(e.entity_id); break;
            case netsync::EventKind::RightRefused: refused.emplace_back(e.entity_id, e.reason); break;
            default: break;
        }
    }
    static bool has(const std::vector<uint64_t>& v, uint64_t id) { return std::find(v.begin(), v.end(), id) != v.end(); }
};

struct Session {
    netsync::Server relay;
    netsync::Client a, b;
    Seen seen_a, seen_b;
    std::vector<uint32_t> joined;  // client ids the relay's events announced
    netsync::Span<const NetsyncTransform> on_a, on_b;

    Session() {
        netsync::ServerConfig config = netsync::default_server_config();
        config.port = 0;  // a free port
        relay = netsync::Server::start(config, "127.0.0.1");
        const std::string address = "127.0.0.1:" + std::to_string(relay.port());
        a = netsync::Client::connect(address, netsync::default_client_config());
        b = netsync::Client::connect(address);
    }

    // One frame of both clients: tick, then events.
    void step(double now) {
        on_a = a.tick(now);
        on_b = b.tick(now);
        a.drain_events([&](const netsync::ClientEvent& e) { seen_a.on(e); });
        b.drain_events([&](const netsync::ClientEvent& e) { seen_b.on(e); });
        relay.drain_events([&](const netsync::ServerEvent& e) {
            if (netsync::kind_of(e) == netsync::ServerEventKind::ClientJoined) joined.push_back(e.client_id);
        });
    }

    bool wait_connected() {
        return pump("both clients to connect", 5.0, [&](double now) { step(now); }, [&] {
            return a.state() == netsync::ConnectionState::Connected && b.state() == netsync::ConnectionState::Connected;
        });
    }
};

// A's car drives a circle of 3 m radius at 1 m height in Unreal's frame (cm).
static ue::Vector car_location(double t) { return ue::Vector{300 * std::cos(t), 300 * std::sin(t), 100}; }
static ue::Vector car_velocity(double t) { return ue::Vector{-300 * std::sin(t), 300 * std::cos(t), 0}; }

static void test_two_clients_exchange_transforms() {
    Session s;
    if (!s.wait_connected()) return;
    EXPECT(s.seen_a.client_id != 0 && s.seen_b.client_id != 0 && s.seen_a.client_id != s.seen_b.client_id,
           "distinct client ids %u, %u", s.seen_a.client_id, s.seen_b.client_id);

    const uint64_t car_a = 1, car_b = 2;
    s.a.register_entity(car_a);
    s.b.register_entity(car_b, netsync::Kind::Controlled);
    const ue::Vector b_location{500, -200, 50};
    const ue::Quat b_rotation = ue_yaw(ue::kPi / 6);

    double first_seen = -1;
    double worst = 0;       // cm between B's view of A's car and the truth at B's render time
    double worst_height = 0;
    bool a_sees_b = false;
    double b_error = 1e9, b_rot_error = 1e9;
    std::size_t b_views = 0;
    const auto frame = [&](double now) {
        if (std::optional<double> st = s.a.server_time(now)) {
            // Physics stamped on the server clock, in Unreal's frame, converted at the edge.
            s.a.set_entity_state(ue::sample_to_core(car_a, car_location(*st), ue_yaw(*st), car_velocity(*st),
                                                    ue::Vector{0, 0, 1}));
        }
        s.b.set_entity_state(ue::sample_to_core(car_b, b_location, b_rotation));
        s.step(now);
        EXPECT(find(s.on_a, car_a) == nullptr, "a client's own entity is not in its tick");
        if (const NetsyncTransform* t = find(s.on_b, car_a)) {
            if (first_seen < 0) first_seen = now;
            const ue::Pose pose = ue::pose_from_core(*t);
            const double render = s.b.render_time(netsync::Mode::Adaptive);
            if (now - first_seen > 0.3) {  // past the first samples
                worst = std::max(worst, dist(d3(pose.Location), d3(car_location(render))));
                worst_height = std::max(worst_height, std::fabs(pose.Location.Z - 100));
                ++b_views;
            }
        }
        if (const NetsyncTransform* t = find(s.on_a, car_b)) {
            const ue::Pose pose = ue::pose_from_core(*t);
            b_error = dist(d3(pose.Location), d3(b_location));
            b_rot_error = quat_angle(d4(pose.Rotation), d4(b_rotation));
            a_sees_b = true;
        }
    };
    pump("B to show A's car for 1.3 s and A to show B's", 10.0, frame,
         [&] { return first_seen >= 0 && now_s() - first_seen > 1.3 && a_sees_b; });

    EXPECT(Seen::has(s.seen_b.appeared, car_a) && Seen::has(s.seen_a.appeared, car_b), "appeared events");
    EXPECT(b_views > 20, "B showed A's car %zu times", b_views);
    EXPECT(worst < 5.0, "B showed A's car %.2f cm from where A put it", worst);
    EXPECT(worst_height < 0.1, "height off by %.3f cm", worst_height);
    // Rotations travel as "smallest three" of 10 bits: within about 0.25 degrees.
    EXPECT(b_error < 0.01 && b_rot_error < 0.3, "A showed B's car %.4f cm, %.3f degrees off", b_error, b_rot_error);
    report("relay + two clients: B shows A's circling car within %.2f cm of the truth at its render time (%zu frames);"
           " A shows B's parked car within %.4f cm and %.3f degrees",
           worst, b_views, b_error, b_rot_error);

    const netsync::ClientStats stats = s.b.stats();
    EXPECT(static_cast<netsync::ConnectionState>(stats.state) == netsync::ConnectionState::Connected, "stats state");
    EXPECT(stats.rtt > 0 && stats.rtt < 0.5 && stats.remote_entities == 1, "rtt %g, remote %llu", stats.rtt,
           static_cast<unsigned long long>(stats.remote_entities));
    const netsync::ServerStats relay = s.relay.stats();
    EXPECT(relay.clients == 2 && relay.entities == 2, "relay sees %llu clients, %llu entities",
           static_cast<unsigned long long>(relay.clients), static_cast<unsigned long long>(relay.entities));

    // A global command reaches both clients, with its bytes.
    s.a.send_global_command(netsync::bytes_of("honk"));
    // Every global command a client received, in order.
    std::vector<std::string> commands_a, commands_b;
    const auto drain = [](netsync::Client& c, std::vector<std::string>& into) {
        while (std::optional<netsync::MessageView> m = c.poll_message()) {
            if (m->kind() == netsync::MessageKind::GlobalCommand) {
                into.emplace_back(reinterpret_cast<const char*>(m->payload.data()), m->payload.size());
            }
        }
    };
    const auto has = [](const std::vector<std::string>& v, const char* text) {
        return std::find(v.begin(), v.end(), text) != v.end();
    };
    pump("the global command on both clients", 5.0,
         [&](double now) {
             s.step(now);
             drain(s.a, commands_a);
             drain(s.b, commands_b);
         },
         [&] { return has(commands_a, "honk") && has(commands_b, "honk"); });
    EXPECT(commands_a == commands_b && commands_a.size() == 1, "both clients got the one command");
    report("global command delivered to both clients through poll_message");

    // The embedded server: its clock, a server-owned entity it moves, and
    // commands both ways.
    EXPECT(std::find(s.joined.begin(), s.joined.end(), s.seen_a.client_id) != s.joined.end() &&
               std::find(s.joined.begin(), s.joined.end(), s.seen_b.client_id) != s.joined.end(),
           "the relay announced both clients (%zu joins)", s.joined.size());
    const double relay_time = s.relay.time();
    const std::optional<double> client_time = s.b.server_time(now_s());
    EXPECT(client_time && std::fabs(*client_time - relay_time) < 0.05, "B's estimate of the relay clock: %g vs %g",
           client_time.value_or(-1.0), relay_time);
    const uint64_t platform = 500;
    const ue::Vector platform_at{-300, 0, 250};
    bool a_sees_platform = false, b_sees_platform = false;
    pump("both clients to show the server's platform", 5.0,
         [&](double now) {
             s.relay.set_entity_state(ue::sample_to_core(platform, platform_at, ue_yaw(0.5)));
             s.step(now);
             for (int c = 0; c < 2; ++c) {
                 if (const NetsyncTransform* t = find(c == 0 ? s.on_a : s.on_b, platform)) {
                     const bool near = dist(d3(ue::pose_from_core(*t).Location), d3(platform_at)) < 0.01;
                     (c == 0 ? a_sees_platform : b_sees_platform) = near;
                 }
             }
         },
         [&] { return a_sees_platform && b_sees_platform; });
    s.relay.send_global_command(netsync::bytes_of("from the server"));
    s.b.send_global_command(netsync::bytes_of("to the server"));
    std::string server_got;
    uint32_t server_sender = 0;
    pump("commands from and to the embedded server", 5.0,
         [&](double now) {
             s.step(now);
             drain(s.a, commands_a);
             drain(s.b, commands_b);
             while (std::optional<netsync::MessageView> m = s.relay.poll_message()) {
                 if (m->kind() == netsync::MessageKind::GlobalCommand) {
                     server_got.assign(reinterpret_cast<const char*>(m->payload.data()), m->payload.size());
                     server_sender = m->header.sender;
                 }
             }
         },
         [&] { return has(commands_a, "from the server") && has(commands_b, "to the server") && server_got == "to the server"; });
    EXPECT(commands_a == commands_b, "both clients saw the commands in one order");
    EXPECT(server_sender == s.seen_b.client_id, "the server saw the command from B (sender %u)", server_sender);
    s.relay.remove_entity(platform);
    pump("the platform to go", 5.0, [&](double now) { s.step(now); },
         [&] { return find(s.on_a, platform) == nullptr && find(s.on_b, platform) == nullptr; });
    report("embedded server: both joins announced, clock shared, a server-owned platform shown by both clients and "
           "removed, global commands from and to the server");

    // Invalid input on a live client: the native code and message.
    try {
        s.b.set_entity_state(ue::sample_to_core(car_b, b_location, ue::Quat{0, 0, 0, 0}));
        EXPECT(false, "a zero rotation was accepted");
    } catch (const netsync::Error& e) {
        EXPECT(e.code() == NETSYNC_ERR_INVALID_ARGUMENT, "zero rotation: %s", e.code_name());
        report("error as exception: %s", e.what());
    }
}

static void test_collision_claim() {
    Session s;
    if (!s.wait_connected()) return;
    const uint64_t car_a = 10, car_b = 20, ball = 100;
    s.a.register_entity(car_a);
    s.a.register_entity(ball, netsync::Kind::Neutral);  // first to register: A simulates the ball
    s.b.register_entity(car_b);

    const ue::Vector ball_at_a{0, -100, 0};  // where A simulates it
    const ue::Vector ball_at_b{0, 100, 0};   // where B will
    const auto frame = [&](double now) {
        s.a.set_entity_state(ue::sample_to_core(car_a, ue::Vector{0, -200, 0}, ue::Quat{0, 0, 0, 1}));
        s.b.set_entity_state(ue::sample_to_core(car_b, ue::Vector{0, 200, 0}, ue::Quat{0, 0, 0, 1}));
        if (s.a.holds(ball)) s.a.set_entity_state(ue::sample_to_core(ball, ball_at_a, ue::Quat{0, 0, 0, 1}));
        if (s.b.holds(ball)) s.b.set_entity_state(ue::sample_to_core(ball, ball_at_b, ue::Quat{0, 0, 0, 1}));
        s.step(now);
    };
    if (!pump("A to get the ball's right", 5.0, frame, [&] { return Seen::has(s.seen_a.gained, ball); })) return;
    // Every client registers shared objects; only the first holds it.
    s.b.register_entity(ball, netsync::Kind::Neutral);
    EXPECT(s.a.holds(ball) && !s.b.holds(ball), "A holds the ball, B does not");
    const NetsyncTransform* seen = nullptr;
    pump("B to see the ball", 5.0, frame, [&] { return (seen = find(s.on_b, ball)) != nullptr; });
    if (seen != nullptr) {
        const double off = dist(d3(ue::pose_from_core(*seen).Location), d3(ball_at_a));
        EXPECT(off < 0.01, "B shows the ball %.4f cm from A's", off);
    }

    // B's car hits the ball. The rule an engine layer applies to a hit
    // (either actor's hit event may fire) names the claim.
    const netsync::ContactSide hit_ball{ball, netsync::Kind::Neutral, s.b.holds(ball)};
    const netsync::ContactSide hit_car{car_b, netsync::Kind::Controlled, s.b.holds(car_b)};
    const std::optional<netsync::Claim> claim = netsync::claim_for_contact(hit_ball, hit_car);
    EXPECT(claim && claim->mine == car_b && claim->other == ball, "the hit claims the ball for B's car");
    EXPECT(!netsync::claim_for_contact({car_a, netsync::Kind::Controlled, false}, hit_car),
           "two cars: no claim");
    EXPECT(!netsync::claim_for_contact({ball, netsync::Kind::Neutral, true}, hit_car), "a held ball: no claim");
    if (!claim) return;
    s.b.report_collision(claim->mine, claim->other);
    EXPECT(s.b.holds(ball), "a claim is optimistic");
    pump("the right to move from A to B", 5.0, frame,
         [&] { return Seen::has(s.seen_b.gained, ball) && Seen::has(s.seen_a.lost, ball); });
    EXPECT(!s.a.holds(ball) && s.b.holds(ball), "B holds the ball now");
    const netsync::Client::Holder seen_by_a = s.a.holder(ball);
    EXPECT(seen_by_a.client_id == s.seen_b.client_id && seen_by_a.epoch >= 2, "A hears B holds it (client %u, epoch %u)",
           seen_by_a.client_id, seen_by_a.epoch);
    pump("A to show B's ball", 5.0, frame, [&] {
        const NetsyncTransform* t = find(s.on_a, ball);
        return t != nullptr && dist(d3(ue::pose_from_core(*t).Location), d3(ball_at_b)) < 0.01;
    });
    EXPECT(find(s.on_b, ball) == nullptr, "B simulates the ball: not in its tick");
    report("collision claim: B's car hit A's neutral ball; the send right moved A -> B and A shows the ball where B puts it");

    // The ball lies still: the rest detector hands it back to nobody.
    netsync::RestDetector rest(0.05f, 0.05f, 0.3);
    bool reported = false;
    pump("B to report the ball at rest", 3.0,
         [&](double now) {
             frame(now);
             if (!reported && s.b.holds(ball) && rest.update(now, 0.0f, 0.0f)) {
                 s.b.report_at_rest(ball);
                 reported = true;
             }
         },
         [&] { return reported; });
    pump("B to lose the ball at rest", 5.0, frame, [&] { return Seen::has(s.seen_b.lost, ball); });
    EXPECT(!s.b.holds(ball), "nobody holds the ball at rest");
    report("at rest: B reported the ball still and its right went back to nobody");

    // A claim by a client that does not control the hitting entity is refused by the library.
    try {
        s.b.report_collision(car_a, ball);
        EXPECT(false, "claiming with another client's car succeeded");
    } catch (const netsync::Error& e) {
        report("error as exception: %s", e.what());
    }
}

// ---------------------------------------------------------------------------
// Recording and replay

// A fresh path in the system's temporary folder.
static std::string temp_path(const char* name) {
    const std::string unique = std::to_string(std::random_device{}());
    return (std::filesystem::temp_directory_path() / ("netsync-cpp-" + unique + "-" + name)).string();
}

static std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<uint8_t> bytes(text.size());
    if (!text.empty()) std::memcpy(bytes.data(), text.data(), text.size());
    return bytes;
}

static void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Bit for bit: the same entities, poses and flags in the same order.
static bool same_transforms(netsync::Span<const NetsyncTransform> shown, const std::vector<NetsyncTransform>& live) {
    return shown.size() == live.size() &&
           (live.empty() || std::memcmp(shown.data(), live.data(), live.size() * sizeof(NetsyncTransform)) == 0);
}

// B records while it shows A's circling car; the replay of its file gives
// B's ticks back exactly, seeks, plays at another speed and pauses; bad
// files are refused with their code and reason.
static void test_record_and_replay() {
    const std::string path = temp_path("b.nsrec");
    const uint64_t car = 3;
    std::vector<std::pair<double, std::vector<NetsyncTransform>>> live;  // every tick of B: time, batch
    uint32_t b_id = 0;
    {
        Session s;
        // Room for the scene from the first tick: a tick that grows the
        // buffer ticks twice, and the recording would hold both.
        s.b.reserve(16);
        s.b.record(path);  // before the first tick
        const netsync::Status second = s.b.try_record(path);
        EXPECT(second.code() == NETSYNC_ERR_WRONG_STATE, "a second recording: %s", netsync::result_name(second.code()));
        double first_seen = -1;
        bool moving = false;
        const auto frame = [&](double now) {
            std::optional<double> st = moving ? s.a.server_time(now) : std::nullopt;
            if (st) {
                s.a.set_entity_state(ue::sample_to_core(car, car_location(*st), ue_yaw(*st), car_velocity(*st),
                                                        ue::Vector{0, 0, 1}));
            }
            s.step(now);
            live.emplace_back(now, std::vector<NetsyncTransform>(s.on_b.begin(), s.on_b.end()));
            if (first_seen < 0 && find(s.on_b, car) != nullptr) first_seen = now;
        };
        const auto connected = [&] {
            return s.a.state() == netsync::ConnectionState::Connected && s.b.state() == netsync::ConnectionState::Connected;
        };
        if (!pump("both clients to connect", 5.0, frame, connected)) return;
        s.a.register_entity(car);
        moving = true;
        if (!pump("B to show A's car for 1 s", 8.0, frame, [&] { return first_seen >= 0 && now_s() - first_seen > 1.0; })) {
            return;
        }
        s.b.stop_recording();
        const netsync::Status stopped = s.b.try_stop_recording();
        EXPECT(stopped.code() == NETSYNC_ERR_WRONG_STATE, "stopping twice: %s", netsync::result_name(stopped.code()));
        const netsync::Status late = s.b.try_record(path);
        EXPECT(late.code() == NETSYNC_ERR_WRONG_STATE && late.error().message().find("before the first tick") != std::string::npos,
               "recording after a tick: %s", late.ok() ? "accepted" : late.error().what());
        b_id = s.seen_b.client_id;
    }
    const std::vector<uint8_t> bytes = read_file(path);

    netsync::Replay replay = netsync::Replay::open(path);
    const netsync::ReplayInfo info = replay.info();
    EXPECT(netsync::kind_of(info) == netsync::RecordingKind::Client && info.client_id == b_id && b_id != 0,
           "a client recording of client %u (kind %u, client %u)", b_id, info.kind, info.client_id);
    EXPECT(info.ticks == live.size() && info.entities == 1 && info.frames > 10, "%llu ticks (live %zu), %llu entities, %llu frames",
           static_cast<unsigned long long>(info.ticks), live.size(), static_cast<unsigned long long>(info.entities),
           static_cast<unsigned long long>(info.frames));
    EXPECT(info.file_bytes == bytes.size() && info.raw_bytes > 0, "%llu bytes in a file of %zu",
           static_cast<unsigned long long>(info.file_bytes), bytes.size());
    EXPECT(info.start_time <= live.front().first && info.end_time >= live.back().first, "span %g..%g, live %g..%g",
           info.start_time, info.end_time, live.front().first, live.back().first);
    const netsync::Result<double> unticked = replay.try_position();
    EXPECT(!replay.position() && unticked.code() == NETSYNC_ERR_WRONG_STATE, "no position before the first tick: %s",
           netsync::result_name(unticked.code()));

    // At B's tick times: B's batches, bit for bit.
    std::size_t exact = 0, with_car = 0;
    for (const auto& tick : live) {
        const netsync::Span<const NetsyncTransform> shown = replay.tick_at(tick.first);
        if (same_transforms(shown, tick.second)) ++exact;
        if (find(shown, car) != nullptr) ++with_car;
    }
    EXPECT(exact == live.size(), "%zu of %zu ticks replayed bit for bit", exact, live.size());
    EXPECT(with_car > 20, "the car in %zu replayed ticks", with_car);
    // Back in time: replayed from the start, the same again.
    const std::pair<double, std::vector<NetsyncTransform>>& middle = live[live.size() / 2];
    EXPECT(same_transforms(replay.tick_at(middle.first), middle.second), "going back gives the same batch");
    EXPECT(replay.position() == middle.first, "position %g after a tick at %g", replay.position().value_or(-1.0),
           middle.first);

    // On the engine's clock: seek, double speed, pause.
    replay.seek(middle.first);
    replay.set_speed(2.0);
    const netsync::Span<const NetsyncTransform> resumed = replay.tick(500.0);
    EXPECT(replay.position() == middle.first && find(resumed, car) != nullptr, "the first tick after a seek shows %g: %g",
           middle.first, replay.position().value_or(-1.0));
    (void)replay.tick(500.25);
    const double played = replay.position().value_or(-1.0) - middle.first;
    EXPECT(std::fabs(played - 0.5) < 1e-9, "0.25 s at double speed played %g s", played);
    replay.set_speed(0.0);
    (void)replay.tick(501.0);
    const double paused = replay.position().value_or(-1.0) - middle.first;
    EXPECT(std::fabs(paused - 0.5) < 1e-9, "speed 0 pauses: %g s", paused);
    const netsync::Status too_fast = replay.try_set_speed(101.0);
    EXPECT(too_fast.code() == NETSYNC_ERR_INVALID_ARGUMENT &&
               too_fast.error().message().find("speed must be in 0..=100") != std::string::npos,
           "speed 101: %s", too_fast.ok() ? "accepted" : too_fast.error().what());
    bool thrown = false;
    try {
        replay.seek(std::nan(""));
    } catch (const netsync::Error& e) {
        thrown = e.code() == NETSYNC_ERR_INVALID_ARGUMENT;
    }
    EXPECT(thrown, "seeking to NaN throws NETSYNC_ERR_INVALID_ARGUMENT");

    // The same recording from memory; a moved-from replay is empty.
    netsync::Replay in_memory = netsync::Replay::open_buffer(bytes);
    EXPECT(in_memory.info().ticks == info.ticks && same_transforms(in_memory.tick_at(live.back().first), live.back().second),
           "from memory: the same ticks and last batch");
    netsync::Replay moved = std::move(in_memory);
    const netsync::Result<netsync::ReplayInfo> of_empty = in_memory.try_info();
    EXPECT(!in_memory && moved && (of_empty.code() == NETSYNC_ERR_NULL_POINTER || of_empty.code() == NETSYNC_ERR_INVALID_HANDLE),
           "a moved-from replay fails cleanly: %s", netsync::result_name(of_empty.code()));

    // Missing, cut short, damaged and foreign recordings: the code and the reason.
    const std::string missing = path + ".missing";
    const netsync::Result<netsync::Replay> none = netsync::Replay::try_open(missing);
    EXPECT(!none.ok() && std::strcmp(none.error().code_name(), "NETSYNC_ERR_IO") == 0, "a missing file: %s",
           none.ok() ? "opened" : none.error().what());
    const std::string damaged = path + ".damaged";
    write_file(damaged, std::vector<uint8_t>(bytes.begin(), bytes.end() - 3));
    const netsync::Result<netsync::Replay> cut = netsync::Replay::try_open(damaged);
    EXPECT(!cut.ok() && std::strcmp(cut.error().code_name(), "NETSYNC_ERR_INVALID_ARGUMENT") == 0 &&
               cut.error().message().find("truncated") != std::string::npos,
           "a file cut short: %s", cut.ok() ? "opened" : cut.error().what());
    std::vector<uint8_t> flipped = bytes;
    flipped.back() = static_cast<uint8_t>(flipped.back() ^ 0x40);  // in the last block's packed bytes
    write_file(damaged, flipped);
    const netsync::Result<netsync::Replay> corrupt = netsync::Replay::try_open(damaged);
    EXPECT(!corrupt.ok() && corrupt.code() == NETSYNC_ERR_INVALID_ARGUMENT &&
               corrupt.error().message().find("corrupt") != std::string::npos,
           "a flipped bit: %s", corrupt.ok() ? "opened" : corrupt.error().what());
    const netsync::Result<netsync::Replay> foreign = netsync::Replay::try_open_buffer(netsync::bytes_of("GIF89a, not a recording"));
    EXPECT(!foreign.ok() && foreign.code() == NETSYNC_ERR_INVALID_ARGUMENT &&
               foreign.error().message().find("not a netsync recording") != std::string::npos,
           "another format: %s", foreign.ok() ? "opened" : foreign.error().what());
    const netsync::Result<netsync::Replay> nothing = netsync::Replay::try_open_buffer(netsync::Span<const uint8_t>());
    EXPECT(nothing.code() == NETSYNC_ERR_INVALID_ARGUMENT, "no bytes: %s", netsync::result_name(nothing.code()));
    netsync::Client offline = netsync::Client::connect("127.0.0.1:9");
    const netsync::Status nowhere = offline.try_record("/nonexistent-dir/b.nsrec");
    EXPECT(nowhere.code() == NETSYNC_ERR_IO, "recording into a missing folder: %s", netsync::result_name(nowhere.code()));
    // A relay that records: its file opens as a relay recording.
    const std::string relay_path = path + ".relay";
    {
        netsync::ServerConfig relay_config = netsync::default_server_config();
        relay_config.port = 0;
        netsync::Result<netsync::Server> recording =
            netsync::Server::try_start_recording(&relay_config, "127.0.0.1", relay_path);
        EXPECT(recording.ok(), "a recording relay: %s", netsync::result_name(recording.code()));
        const netsync::Result<netsync::Server> misplaced =
            netsync::Server::try_start_recording(&relay_config, "127.0.0.1", "/nonexistent-dir/r.nsrec");
        EXPECT(misplaced.code() == NETSYNC_ERR_IO, "a relay recording into a missing folder: %s",
               netsync::result_name(misplaced.code()));
    }
    const netsync::Result<netsync::Replay> relay_file = netsync::Replay::try_open(relay_path);
    EXPECT(relay_file.ok() && relay_file.value().info().kind == NETSYNC_RECORDING_RELAY, "the relay's recording opens");
    std::remove(relay_path.c_str());
    std::remove(path.c_str());
    std::remove(damaged.c_str());
    report("record and replay: %zu ticks of B replayed bit for bit (%llu frames, %llu bytes), back in time, seek, "
           "double speed and pause; missing, cut, damaged and foreign files refused",
           exact, static_cast<unsigned long long>(info.frames), static_cast<unsigned long long>(info.file_bytes));

    thrown = false;
    try {
        (void)netsync::Replay::open(missing);
    } catch (const netsync::Error& e) {
        thrown = e.code() == NETSYNC_ERR_IO;
        EXPECT(thrown, "a missing file: %s", e.code_name());
        report("error as exception: %s", e.what());
    }
    EXPECT(thrown, "opening a missing file throws");
}

// ---------------------------------------------------------------------------
// Secure mode

// A secure relay, two clients with tokens the "backend" issued, and a
// plain client the relay refuses by name.
static void test_secure_mode() {
    // The backend's part: a secret shared with the relay only, a token per player.
    const netsync::Secret secret = netsync::generate_secret();
    EXPECT(std::any_of(secret.begin(), secret.end(), [](uint8_t x) { return x != 0; }), "a random secret");
    EXPECT(netsync::generate_secret() != secret, "two secrets differ");
    netsync::ServerConfig config = netsync::default_server_config();
    config.port = 0;  // a free port
    netsync::Server relay = netsync::Server::start_secure(config, secret, "127.0.0.1");
    const std::string address = "127.0.0.1:" + std::to_string(relay.port());
    const std::vector<uint8_t> token_a = netsync::issue_token(secret, 501, address, 60);
    const std::vector<uint8_t> token_b = netsync::issue_token(secret, 502, address, 60);
    EXPECT(token_a.size() == NETSYNC_TOKEN_SIZE && token_b.size() == NETSYNC_TOKEN_SIZE && token_a != token_b,
           "tokens of %zu bytes", token_a.size());

    netsync::Client a = netsync::Client::connect_secure(token_a);  // the relay the token names
    netsync::Client b = netsync::Client::connect_secure(token_b, netsync::default_client_config(), address.c_str());
    netsync::Client plain = netsync::Client::connect(address);
    Seen seen_a, seen_b;
    std::vector<uint32_t> plain_reasons;
    netsync::Span<const NetsyncTransform> on_a, on_b;
    const auto step = [&](double now) {
        on_a = a.tick(now);
        on_b = b.tick(now);
        (void)plain.tick(now);
        a.drain_events([&](const netsync::ClientEvent& e) { seen_a.on(e); });
        b.drain_events([&](const netsync::ClientEvent& e) { seen_b.on(e); });
        plain.drain_events([&](const netsync::ClientEvent& e) {
            if (netsync::kind_of(e) == netsync::EventKind::Disconnected) plain_reasons.push_back(e.reason);
        });
    };
    if (!pump("both token clients to connect", 5.0, step, [&] {
            return a.state() == netsync::ConnectionState::Connected && b.state() == netsync::ConnectionState::Connected;
        })) {
        return;
    }
    EXPECT(seen_a.client_id == 501 && seen_b.client_id == 502, "connected as the tokens' client ids: %u, %u",
           seen_a.client_id, seen_b.client_id);

    const uint64_t car_a = 1001, car_b = 1002;
    const ue::Vector at_a{100, 0, 0}, at_b{0, 200, 50};
    a.register_entity(car_a);
    b.register_entity(car_b);
    bool a_sees_b = false, b_sees_a = false;
    pump("each token client to show the other's car, and the plain client's refusal", 8.0,
         [&](double now) {
             a.set_entity_state(ue::sample_to_core(car_a, at_a, ue_yaw(0.5)));
             b.set_entity_state(ue::sample_to_core(car_b, at_b, ue_yaw(-0.5)));
             step(now);
             if (const NetsyncTransform* t = find(on_a, car_b)) {
                 a_sees_b = dist(d3(ue::pose_from_core(*t).Location), d3(at_b)) < 0.01;
             }
             if (const NetsyncTransform* t = find(on_b, car_a)) {
                 b_sees_a = dist(d3(ue::pose_from_core(*t).Location), d3(at_a)) < 0.01;
             }
         },
         [&] { return a_sees_b && b_sees_a && !plain_reasons.empty(); });
    EXPECT(a_sees_b && b_sees_a, "each shows the other's car where it was put");
    const netsync::DisconnectReason refused =
        static_cast<netsync::DisconnectReason>(plain_reasons.empty() ? 0u : plain_reasons.front());
    EXPECT(refused == netsync::DisconnectReason::TokenRequired, "the plain client was refused: %s",
           netsync::name(refused));
    EXPECT(plain.state() == netsync::ConnectionState::Disconnected, "the plain client stays disconnected");
    const netsync::ServerStats stats = relay.stats();
    EXPECT(stats.clients == 2 && stats.dropped_bad_token == 0 && stats.dropped_forged == 0 &&
               stats.dropped_replayed == 0,
           "relay: %llu clients, %llu bad tokens, %llu forged, %llu replayed",
           static_cast<unsigned long long>(stats.clients), static_cast<unsigned long long>(stats.dropped_bad_token),
           static_cast<unsigned long long>(stats.dropped_forged),
           static_cast<unsigned long long>(stats.dropped_replayed));
    report("secure relay + two token clients: connected as clients %u and %u, each shows the other's car; a plain "
           "client is refused (%s)",
           seen_a.client_id, seen_b.client_id, netsync::name(refused));

    // Bad input: the native code and message, as values or as exceptions.
    const std::vector<uint8_t> short_secret(NETSYNC_SECRET_SIZE - 1);
    const netsync::Result<std::vector<uint8_t>> no_token = netsync::try_issue_token(short_secret, 1, address, 60);
    EXPECT(!no_token.ok() && no_token.code() == NETSYNC_ERR_INVALID_ARGUMENT &&
               no_token.error().message().find("`secret` must be 32 bytes, got 31") != std::string::npos,
           "a short secret: %s", no_token.ok() ? "accepted" : no_token.error().what());
    const netsync::Result<std::vector<uint8_t>> no_id = netsync::try_issue_token(secret, 0, address, 60);
    EXPECT(no_id.code() == NETSYNC_ERR_INVALID_ARGUMENT, "client id 0: %s", netsync::result_name(no_id.code()));
    const netsync::Result<netsync::Server> no_relay = netsync::Server::try_start_secure(config, short_secret, "127.0.0.1");
    EXPECT(no_relay.code() == NETSYNC_ERR_INVALID_ARGUMENT, "a relay with a short secret: %s",
           netsync::result_name(no_relay.code()));
    const std::vector<uint8_t> truncated(token_a.begin(), token_a.end() - 1);
    bool thrown = false;
    try {
        (void)netsync::Client::connect_secure(truncated);
    } catch (const netsync::Error& e) {
        thrown = true;
        EXPECT(e.code() == NETSYNC_ERR_INVALID_ARGUMENT &&
                   e.message().find("netsync_client_connect_secure: `token` must be 225 bytes, got 224") !=
                       std::string::npos,
               "a truncated token: %s", e.what());
        report("error as exception: %s", e.what());
    }
    EXPECT(thrown, "a truncated token throws");
    const std::vector<uint8_t> junk(NETSYNC_TOKEN_SIZE, 0x5a);
    const netsync::Result<netsync::Client> not_a_token = netsync::Client::try_connect_secure(junk);
    EXPECT(!not_a_token.ok() && not_a_token.error().message().find("not a netsync connect token") != std::string::npos,
           "junk as a token: %s", not_a_token.ok() ? "accepted" : not_a_token.error().what());
}

static void test_rest_detector() {
    netsync::RestDetector rest(0.1f, 0.1f, 0.5);
    EXPECT(!rest.update(0.0, 0.0f, 0.0f), "not at once");
    EXPECT(!rest.update(0.4, 0.05f, 0.0f), "not before the hold time");
    EXPECT(rest.update(0.5, 0.0f, 0.05f), "at rest after the hold time");
    EXPECT(!rest.update(0.6, 0.0f, 0.0f), "reported once");
    EXPECT(!rest.update(0.7, 1.0f, 0.0f), "moving again");
    EXPECT(!rest.update(0.8, 0.0f, 0.0f) && rest.update(1.3, 0.0f, 0.0f), "a second rest");
    EXPECT(!rest.update(2.0, 0.0f, 0.5f), "spinning is not rest");
    report("rest detector: speeds under the limits for the hold time, reported once per rest");
}

int main() {
    std::printf("netsync C++ wrapper test (library ABI %u.%u)\n", netsync::library_abi_version().major,
                netsync::library_abi_version().minor);
    try {
        test_conversion_axes();
        test_conversion_geometry();
        test_conversion_round_trips();
        test_conversion_matches_unity();
        test_errors();
        test_log();
        test_rest_detector();
        test_two_clients_exchange_transforms();
        test_collision_claim();
        test_record_and_replay();
        test_secure_mode();
    } catch (const netsync::Error& e) {
        failed++;
        std::printf("FAIL: unexpected netsync::Error %s\n", e.what());
    } catch (const std::exception& e) {
        failed++;
        std::printf("FAIL: unexpected exception %s\n", e.what());
    }
    std::printf("%d passed, %d failed (%.1f s)\n", passed, failed, now_s());
    return failed == 0 ? 0 : 1;
}
