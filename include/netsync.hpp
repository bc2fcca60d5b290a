/*
 * netsync.hpp: header-only C++17 wrapper over netsync.h.
 *
 * - Move-only owners of every handle (Client, Server, Timeline,
 *   SendFilter, Replay): the destructor frees, a moved-from object is
 *   empty.
 * - Errors as values or as exceptions. Every call comes twice:
 *     try_x(...)  returns Result<T> / Status and never throws a netsync
 *                 failure (only std::bad_alloc can escape it);
 *     x(...)      returns T and throws netsync::Error; only declared when
 *                 exceptions are on (NETSYNC_HPP_EXCEPTIONS), so engines
 *                 built without exceptions (Unreal's default) use try_x.
 *   netsync::Error carries the NetsyncResult code and the library's own
 *   message (netsync_last_error, read right after the failing call).
 * - Batches are Span<T> (pointer + size; C++17 has no std::span). Ticks
 *   write into a buffer the object keeps and grows on
 *   NETSYNC_ERR_BUFFER_TOO_SMALL, so a frame allocates nothing once the
 *   buffer has reached its working size. A span from a tick is valid until
 *   the next tick, or until its owner is moved or destroyed.
 * - Objects are not thread-safe, like the handles they own (overlapping
 *   calls on one handle fail with NETSYNC_ERR_BUSY, never corrupt it).
 *
 * Units are the core's: metres, seconds, radians, in netsync's one frame:
 * Y up, +X right, +Z forward (Unity's axes; a left-handed frame). Unreal
 * users convert at the edge with netsync_unreal_convert.hpp.
 *
 * Engines define short macros (Unreal: check, verify, ensure, PI;
 * windows.h: min, max): no identifier in this header is one of them, so
 * it can be included after CoreMinimal.h (between Unreal's
 * THIRD_PARTY_INCLUDES_START and _END).
 *
 * A C function the wrapper does not know yet stays one line away:
 *   netsync::status_of(netsync_new_call(client.native(), ...)).value();
 *   netsync::detail::call_growing(buffer, [&](T* out, size_t cap, size_t* n) {
 *       return netsync_new_batch_call(client.native(), out, cap, n); });
 */

#ifndef NETSYNC_HPP
#define NETSYNC_HPP

#include "netsync.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#ifndef NETSYNC_HPP_EXCEPTIONS
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define NETSYNC_HPP_EXCEPTIONS 1
#else
#define NETSYNC_HPP_EXCEPTIONS 0
#endif
#endif

namespace netsync {

// ---------------------------------------------------------------------------
// Plain data: the C structs, under C++ names.

using Vec3 = NetsyncVec3;
using Quat = NetsyncQuat;
using Sample = NetsyncSample;
using Transform = NetsyncTransform;
using ClientEvent = NetsyncClientEvent;
using ClientConfig = NetsyncClientConfig;
using ClientStats = NetsyncClientStats;
using ServerConfig = NetsyncServerConfig;
using ServerStats = NetsyncServerStats;
using TimelineConfig = NetsyncTimelineConfig;
using TimelineStats = NetsyncTimelineStats;
using SendFilterConfig = NetsyncSendFilterConfig;
using ServerEvent = NetsyncServerEvent;
using MessageHeader = NetsyncMessage;
using ReplayInfo = NetsyncReplayInfo;

/// Connection state (`netsync_client_state`, `ClientStats::state`).
enum class ConnectionState : uint32_t {
    Connecting = NETSYNC_STATE_CONNECTING,
    Connected = NETSYNC_STATE_CONNECTED,
    Disconnected = NETSYNC_STATE_DISCONNECTED,
};

/// `ClientEvent::kind`.
enum class EventKind : uint32_t {
    Connecting = NETSYNC_EVENT_CONNECTING,
    Connected = NETSYNC_EVENT_CONNECTED,
    Reconnected = NETSYNC_EVENT_RECONNECTED,
    Disconnected = NETSYNC_EVENT_DISCONNECTED,
    EntityAppeared = NETSYNC_EVENT_ENTITY_APPEARED,
    EntityRemoved = NETSYNC_EVENT_ENTITY_REMOVED,
    RightGained = NETSYNC_EVENT_RIGHT_GAINED,
    RightLost = NETSYNC_EVENT_RIGHT_LOST,
    RightRefused = NETSYNC_EVENT_RIGHT_REFUSED,
};

/// `ServerEvent::kind`.
enum class ServerEventKind : uint32_t {
    ClientJoined = NETSYNC_SERVER_EVENT_CLIENT_JOINED,
    ClientLeft = NETSYNC_SERVER_EVENT_CLIENT_LEFT,
    CallRefused = NETSYNC_SERVER_EVENT_CALL_REFUSED,
    SpawnRefused = NETSYNC_SERVER_EVENT_SPAWN_REFUSED,
    /// Lockstep: `client_id` sent no input for frame `entity_id` in time.
    LockstepStalled = NETSYNC_SERVER_EVENT_LOCKSTEP_STALLED,
    /// Lockstep: `client_id`'s state hash for frame `entity_id` differs.
    LockstepDesync = NETSYNC_SERVER_EVENT_LOCKSTEP_DESYNC,
};

/// Why the relay refused an embedded server's call (`ServerEvent::reason`).
enum class ServerRefusal : uint32_t {
    NotServerOwned = NETSYNC_SERVER_REFUSED_NOT_SERVER_OWNED,
    UnknownEntity = NETSYNC_SERVER_REFUSED_UNKNOWN_ENTITY,
    NoHolder = NETSYNC_SERVER_REFUSED_NO_HOLDER,
    TooLarge = NETSYNC_SERVER_REFUSED_TOO_LARGE,
    Limit = NETSYNC_SERVER_REFUSED_LIMIT,
};

/// Who holds a neutral object before anyone hits it (`ServerConfig::neutral_initial_holder`).
enum class NeutralInitialHolder : uint32_t {
    FirstReady = NETSYNC_NEUTRAL_FIRST_READY,
    Nobody = NETSYNC_NEUTRAL_NOBODY,
};

/// Send-right kind of an entity this client registers.
enum class Kind : uint32_t {
    Controlled = NETSYNC_KIND_CONTROLLED,
    Neutral = NETSYNC_KIND_NEUTRAL,
    ServerOwned = NETSYNC_KIND_SERVER_OWNED,
};

/// Why a claim was refused (`ClientEvent::reason` of RightRefused).
enum class ClaimRefusal : uint32_t {
    UnknownEntity = NETSYNC_CLAIM_UNKNOWN_ENTITY,
    Conflict = NETSYNC_CLAIM_CONFLICT,
    NotNeutral = NETSYNC_CLAIM_NOT_NEUTRAL,
    NotYourController = NETSYNC_CLAIM_NOT_YOUR_CONTROLLER,
    Cooldown = NETSYNC_CLAIM_COOLDOWN,
    AlreadyHolder = NETSYNC_CLAIM_ALREADY_HOLDER,
    NotHolder = NETSYNC_CLAIM_NOT_HOLDER,
    Stale = NETSYNC_CLAIM_STALE,
};

/// Why the client lost the relay (`ClientEvent::reason` of Disconnected).
enum class DisconnectReason : uint32_t {
    None = NETSYNC_REASON_NONE,
    ConnectTimeout = NETSYNC_REASON_CONNECT_TIMEOUT,
    RelayTimeout = NETSYNC_REASON_RELAY_TIMEOUT,
    VersionMismatch = NETSYNC_REASON_VERSION_MISMATCH,
    RelayFull = NETSYNC_REASON_RELAY_FULL,
    Closed = NETSYNC_REASON_CLOSED,
    /// The relay runs in secure mode: connect with Client::connect_secure.
    TokenRequired = NETSYNC_REASON_TOKEN_REQUIRED,
    /// A connect token was presented to a relay in plain mode.
    NotSecure = NETSYNC_REASON_NOT_SECURE,
    /// The connect token expired: get a new one from the game's backend.
    TokenExpired = NETSYNC_REASON_TOKEN_EXPIRED,
    /// The token or its client id is in use by another connection (retried
    /// while reconnecting is on).
    TokenInUse = NETSYNC_REASON_TOKEN_IN_USE,
};

/// Who wrote a recording (`ReplayInfo::kind`).
enum class RecordingKind : uint32_t {
    Client = NETSYNC_RECORDING_CLIENT,
    Relay = NETSYNC_RECORDING_RELAY,
};

/// Interpolation modes (timeline and per entity).
enum class Mode : uint32_t {
    Literal = NETSYNC_MODE_LITERAL,
    Adaptive = NETSYNC_MODE_ADAPTIVE,
    Fixed = NETSYNC_MODE_FIXED,
    Buffered = NETSYNC_MODE_BUFFERED,
    Predicted = NETSYNC_MODE_PREDICTED,
    Inherit = NETSYNC_MODE_INHERIT,
};

/// Simulated networks (`ClientConfig::conditioner`).
enum class Network : uint32_t {
    None = NETSYNC_NETWORK_NONE,
    Lan = NETSYNC_NETWORK_LAN,
    Good = NETSYNC_NETWORK_GOOD,
    Avg = NETSYNC_NETWORK_AVG,
    Poor = NETSYNC_NETWORK_POOR,
    Spiky = NETSYNC_NETWORK_SPIKY,
    Hostile = NETSYNC_NETWORK_HOSTILE,
};

enum class LogLevel : uint32_t {
    Off = NETSYNC_LOG_OFF,
    Error = NETSYNC_LOG_ERROR,
    Warn = NETSYNC_LOG_WARN,
    Info = NETSYNC_LOG_INFO,
    Debug = NETSYNC_LOG_DEBUG,
    Trace = NETSYNC_LOG_TRACE,
};

/// Send filter policies (`SendFilterConfig::policy`).
enum class SendPolicy : uint32_t {
    Always = NETSYNC_SEND_ALWAYS,
    OnChange = NETSYNC_SEND_ON_CHANGE,
    DeadReckoning = NETSYNC_SEND_DEAD_RECKONING,
};

/// What the send filter decided; only Skip means "do not send".
enum class Decision : uint32_t {
    Skip = NETSYNC_DECISION_SKIP,
    First = NETSYNC_DECISION_FIRST,
    Always = NETSYNC_DECISION_ALWAYS,
    Changed = NETSYNC_DECISION_CHANGED,
    Heartbeat = NETSYNC_DECISION_HEARTBEAT,
    Teleport = NETSYNC_DECISION_TELEPORT,
};

inline EventKind kind_of(const ClientEvent& e) noexcept { return static_cast<EventKind>(e.kind); }
inline ServerEventKind kind_of(const ServerEvent& e) noexcept { return static_cast<ServerEventKind>(e.kind); }
inline RecordingKind kind_of(const ReplayInfo& i) noexcept { return static_cast<RecordingKind>(i.kind); }

inline const char* result_name(NetsyncResult code) noexcept {
    return netsync_result_str(static_cast<int32_t>(code));
}

inline const char* name(ConnectionState s) noexcept {
    switch (s) {
        case ConnectionState::Connecting: return "connecting";
        case ConnectionState::Connected: return "connected";
        case ConnectionState::Disconnected: return "disconnected";
    }
    return "unknown state";
}

inline const char* name(EventKind k) noexcept {
    switch (k) {
        case EventKind::Connecting: return "connecting";
        case EventKind::Connected: return "connected";
        case EventKind::Reconnected: return "reconnected";
        case EventKind::Disconnected: return "disconnected";
        case EventKind::EntityAppeared: return "entity appeared";
        case EventKind::EntityRemoved: return "entity removed";
        case EventKind::RightGained: return "send right gained";
        case EventKind::RightLost: return "send right lost";
        case EventKind::RightRefused: return "claim refused";
    }
    return "unknown event";
}

inline const char* name(Kind k) noexcept {
    switch (k) {
        case Kind::Controlled: return "controlled";
        case Kind::Neutral: return "neutral";
        case Kind::ServerOwned: return "server-owned";
    }
    return "unknown kind";
}

inline const char* name(ClaimRefusal r) noexcept {
    switch (r) {
        case ClaimRefusal::UnknownEntity: return "unknown entity";
        case ClaimRefusal::Conflict: return "registered with another kind or controller";
        case ClaimRefusal::NotNeutral: return "not a neutral object";
        case ClaimRefusal::NotYourController: return "the hitting entity is not yours";
        case ClaimRefusal::Cooldown: return "changed hands too recently";
        case ClaimRefusal::AlreadyHolder: return "already the holder";
        case ClaimRefusal::NotHolder: return "not the holder";
        case ClaimRefusal::Stale: return "the object changed hands after that hit";
    }
    return "unknown refusal";
}

inline const char* name(DisconnectReason r) noexcept {
    switch (r) {
        case DisconnectReason::None: return "none";
        case DisconnectReason::ConnectTimeout: return "connect timeout";
        case DisconnectReason::RelayTimeout: return "relay timeout";
        case DisconnectReason::VersionMismatch: return "relay speaks another protocol version";
        case DisconnectReason::RelayFull: return "relay full";
        case DisconnectReason::Closed: return "closed";
        case DisconnectReason::TokenRequired: return "the relay requires a connect token";
        case DisconnectReason::NotSecure: return "the relay is not in secure mode";
        case DisconnectReason::TokenExpired: return "connect token expired";
        case DisconnectReason::TokenInUse: return "connect token in use";
    }
    return "unknown reason";
}

/// The identity rotation.
constexpr Quat identity_rotation() noexcept { return Quat{0.0f, 0.0f, 0.0f, 1.0f}; }

/// A sample of `entity_id` at `position` and `rotation`; the velocities are
/// set (with their flag bits) only when given. `flags`: extra
/// NETSYNC_SAMPLE_* bits such as NETSYNC_SAMPLE_TELEPORT.
inline Sample make_sample(uint64_t entity_id, const Vec3& position, const Quat& rotation,
                          std::optional<Vec3> linear_velocity = std::nullopt,
                          std::optional<Vec3> angular_velocity = std::nullopt,
                          uint32_t flags = 0) noexcept {
    Sample s{};
    s.entity_id = entity_id;
    s.position = position;
    s.rotation = rotation;
    s.flags = flags;
    if (linear_velocity) {
        s.linear_velocity = *linear_velocity;
        s.flags |= NETSYNC_SAMPLE_HAS_VELOCITY;
    }
    if (angular_velocity) {
        s.angular_velocity = *angular_velocity;
        s.flags |= NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY;
    }
    return s;
}

// ---------------------------------------------------------------------------
// Span: a view of `size` contiguous `T` (std::span arrives in C++20).

template <class T>
class Span {
public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    using size_type = std::size_t;
    using iterator = T*;

    constexpr Span() noexcept = default;
    constexpr Span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <std::size_t N>
    constexpr Span(T (&array)[N]) noexcept : data_(array), size_(N) {}
    /// Any contiguous container with data() and size() (std::vector,
    /// std::array, another Span) whose elements convert (T or const T).
    template <class C,
              class = std::enable_if_t<
                  !std::is_array_v<std::remove_reference_t<C>> &&
                  std::is_convertible_v<decltype(std::declval<C&>().data()), T*> &&
                  std::is_convertible_v<decltype(std::declval<C&>().size()), std::size_t>>>
    constexpr Span(C& container) noexcept : data_(container.data()), size_(container.size()) {}

    constexpr T* data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T* begin() const noexcept { return data_; }
    constexpr T* end() const noexcept { return data_ + size_; }
    /// Unchecked, like std::span.
    constexpr T& operator[](std::size_t i) const noexcept { return data_[i]; }
    constexpr T& front() const noexcept { return data_[0]; }
    constexpr T& back() const noexcept { return data_[size_ - 1]; }
    /// Elements [offset, offset + count), clamped to the span.
    constexpr Span subspan(std::size_t offset, std::size_t count = static_cast<std::size_t>(-1)) const noexcept {
        if (offset > size_) offset = size_;
        if (count > size_ - offset) count = size_ - offset;
        return Span(data_ + offset, count);
    }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

// ---------------------------------------------------------------------------
// Errors and results.

/// A failed netsync call: its result code and the library's message.
class Error : public std::runtime_error {
public:
    Error(NetsyncResult code, std::string message)
        : std::runtime_error(std::string(result_name(code)) + ": " + message),
          code_(code),
          message_(std::move(message)) {}

    /// The error of the netsync call that just failed with `code` on this
    /// thread (call it before any other netsync call).
    static Error last(NetsyncResult code) { return Error(code, netsync_last_error()); }

    NetsyncResult code() const noexcept { return code_; }
    /// "NETSYNC_ERR_INVALID_ARGUMENT" and so on.
    const char* code_name() const noexcept { return result_name(code_); }
    /// The library's text, e.g. "netsync_timeline_tick: tick time went
    /// backwards: 4 after 5; pass a monotonic clock".
    const std::string& message() const noexcept { return message_; }

private:
    NetsyncResult code_;
    std::string message_;
};

namespace detail {

[[noreturn]] inline void raise(const Error& error) {
#if NETSYNC_HPP_EXCEPTIONS
    throw error;
#else
    std::fprintf(stderr, "netsync: unhandled error: %s\n", error.what());
    std::abort();
#endif
}

[[noreturn]] inline void misuse(const char* what) {
#if NETSYNC_HPP_EXCEPTIONS
    throw std::logic_error(what);
#else
    std::fprintf(stderr, "netsync: %s\n", what);
    std::abort();
#endif
}

}  // namespace detail

/// The value of a successful call or the Error of a failed one
/// (std::expected-style). value() on an error throws that Error (or, with
/// exceptions off, prints it and aborts): check ok() first.
template <class T>
class [[nodiscard]] Result {
    static_assert(!std::is_reference_v<T>, "Result holds values");
    static_assert(!std::is_same_v<std::decay_t<T>, Error>, "Result<Error> is ambiguous");

public:
    using value_type = T;

    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }
    /// NETSYNC_OK on success.
    NetsyncResult code() const noexcept { return ok() ? NETSYNC_OK : std::get<1>(v_).code(); }

    T& value() & {
        if (!ok()) detail::raise(std::get<1>(v_));
        return std::get<0>(v_);
    }
    const T& value() const& {
        if (!ok()) detail::raise(std::get<1>(v_));
        return std::get<0>(v_);
    }
    T&& value() && {
        if (!ok()) detail::raise(std::get<1>(v_));
        return std::get<0>(std::move(v_));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    template <class U>
    T value_or(U&& fallback) const& {
        return ok() ? std::get<0>(v_) : static_cast<T>(std::forward<U>(fallback));
    }
    template <class U>
    T value_or(U&& fallback) && {
        return ok() ? std::get<0>(std::move(v_)) : static_cast<T>(std::forward<U>(fallback));
    }

    /// The error; only when !ok().
    const Error& error() const {
        if (ok()) detail::misuse("netsync::Result::error() on a success");
        return std::get<1>(v_);
    }

private:
    std::variant<T, Error> v_;
};

/// Success, or the Error of a failed call.
template <>
class [[nodiscard]] Result<void> {
public:
    using value_type = void;

    Result() noexcept = default;
    Result(Error error) : error_(std::move(error)) {}

    bool ok() const noexcept { return !error_.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
    NetsyncResult code() const noexcept { return ok() ? NETSYNC_OK : error_->code(); }
    /// Throws (or aborts) on error; nothing on success.
    void value() const {
        if (error_) detail::raise(*error_);
    }
    const Error& error() const {
        if (!error_) detail::misuse("netsync::Result::error() on a success");
        return *error_;
    }

private:
    std::optional<Error> error_;
};

using Status = Result<void>;

/// Status of a raw netsync call; reads netsync_last_error on failure.
/// Call it on the result of the netsync call directly:
///   netsync::status_of(netsync_client_register_entity(c.native(), 7)).value();
inline Status status_of(NetsyncResult code) {
    if (code == NETSYNC_OK) return Status();
    return Status(Error::last(code));
}

namespace detail {

/// `value` when `code` is OK, else the error of the call that just failed.
template <class T>
Result<T> result_of(NetsyncResult code, T value) {
    if (code != NETSYNC_OK) return Error::last(code);
    return Result<T>(std::move(value));
}

/// Calls `call(out, capacity, &count)` into `buffer`, growing it while the
/// call answers NETSYNC_ERR_BUFFER_TOO_SMALL (with the needed count). The
/// buffer only grows; the span covers the `count` items written. Calls
/// that may grow between attempts (new entities arriving) converge after
/// a few rounds because each growth adds headroom.
template <class T, class F>
Result<Span<const T>> call_growing(std::vector<T>& buffer, F&& call) {
    for (int attempt = 0;; ++attempt) {
        std::size_t count = 0;
        const NetsyncResult code = call(buffer.data(), buffer.size(), &count);
        if (code == NETSYNC_OK) return Span<const T>(buffer.data(), count);
        if (code != NETSYNC_ERR_BUFFER_TOO_SMALL || attempt >= 8 || count <= buffer.size()) {
            return Error::last(code);
        }
        buffer.resize(count + count / 4 + 16);
    }
}

/// A move-only owner of a handle freed by `Free`.
template <class T, void (*Free)(T*)>
class Owner {
public:
    Owner() noexcept = default;
    explicit Owner(T* handle) noexcept : handle_(handle) {}
    Owner(Owner&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Owner& operator=(Owner&& other) noexcept {
        if (this != &other) reset(std::exchange(other.handle_, nullptr));
        return *this;
    }
    Owner(const Owner&) = delete;
    Owner& operator=(const Owner&) = delete;
    ~Owner() { reset(); }

    T* get() const noexcept { return handle_; }
    T* release() noexcept { return std::exchange(handle_, nullptr); }
    void reset(T* handle = nullptr) noexcept {
        T* old = std::exchange(handle_, handle);
        if (old != nullptr) Free(old);
    }

private:
    T* handle_ = nullptr;
};

template <class Config>
Result<Config> default_config(NetsyncResult (*fill)(Config*)) {
    Config config{};
    const NetsyncResult code = fill(&config);
    return result_of(code, config);
}

}  // namespace detail

// ---------------------------------------------------------------------------
// ABI version.

struct AbiVersion {
    uint32_t major;
    uint32_t minor;
};

/// The version this header was generated for.
constexpr AbiVersion header_abi_version() noexcept {
    return AbiVersion{NETSYNC_ABI_VERSION_MAJOR, NETSYNC_ABI_VERSION_MINOR};
}

/// The version of the loaded library.
inline AbiVersion library_abi_version() noexcept {
    const uint32_t v = netsync_abi_version();
    return AbiVersion{v >> 16, v & 0xffffu};
}

/// A library serves this header when the majors match and, from major 1
/// on, its minor is at least the header's (minors only add functions).
/// While the major is 0 a minor may change struct layouts, so the minor
/// must match exactly.
constexpr bool abi_compatible(AbiVersion library, AbiVersion header = header_abi_version()) noexcept {
    return library.major == header.major &&
           (header.major == 0 ? library.minor == header.minor : library.minor >= header.minor);
}

/// NETSYNC_ERR_WRONG_STATE naming both versions when the loaded library
/// does not serve this header. Call it once at load, before anything else.
inline Status try_check_abi() {
    const AbiVersion lib = library_abi_version();
    const AbiVersion hdr = header_abi_version();
    if (abi_compatible(lib, hdr)) return Status();
    return Status(Error(NETSYNC_ERR_WRONG_STATE,
                        "netsync library ABI " + std::to_string(lib.major) + "." + std::to_string(lib.minor) +
                            " cannot serve header ABI " + std::to_string(hdr.major) + "." +
                            std::to_string(hdr.minor) + " (same major needed, and while the major is 0 the same minor)"));
}

/// Test hook: a panic inside the library comes back as NETSYNC_ERR_PANIC.
inline Status try_debug_panic() { return status_of(netsync_debug_panic()); }

// ---------------------------------------------------------------------------
// Default settings.

inline Result<ClientConfig> try_default_client_config() {
    return detail::default_config<ClientConfig>(&netsync_client_config_default);
}
inline Result<ServerConfig> try_default_server_config() {
    return detail::default_config<ServerConfig>(&netsync_server_config_default);
}
inline Result<TimelineConfig> try_default_timeline_config() {
    return detail::default_config<TimelineConfig>(&netsync_timeline_config_default);
}
inline Result<SendFilterConfig> try_default_send_filter_config() {
    return detail::default_config<SendFilterConfig>(&netsync_send_filter_config_default);
}

// ---------------------------------------------------------------------------
// Logging.

/// Receives every log record of the library (and of laminar inside it).
/// Called from any netsync thread; exceptions it throws are swallowed; it
/// must not set or clear the log handler.
using LogHandler = std::function<void(LogLevel level, std::string_view target, std::string_view message)>;

namespace detail {

struct LogState {
    std::mutex mutex;
    LogHandler* installed = nullptr;
};

/// Never destroyed: network threads may still log while statics die.
inline LogState& log_state() {
    static LogState* state = new LogState();
    return *state;
}

inline void log_trampoline(void* user, uint32_t level, const char* target, const char* message) noexcept {
    auto* handler = static_cast<LogHandler*>(user);
    const std::string_view t = target != nullptr ? std::string_view(target) : std::string_view();
    const std::string_view m = message != nullptr ? std::string_view(message) : std::string_view();
#if NETSYNC_HPP_EXCEPTIONS
    try {
        (*handler)(static_cast<LogLevel>(level), t, m);
    } catch (...) {
        // Must not unwind into the library.
    }
#else
    (*handler)(static_cast<LogLevel>(level), t, m);
#endif
}

}  // namespace detail

/// Routes the library's log to `handler` up to `max_level`, replacing any
/// handler set before. Once this returns the old handler is never called.
inline Status try_set_log_handler(LogHandler handler, LogLevel max_level) {
    detail::LogState& state = detail::log_state();
    std::lock_guard<std::mutex> lock(state.mutex);
    auto fresh = std::make_unique<LogHandler>(std::move(handler));
    Status status = status_of(netsync_set_log_callback(&detail::log_trampoline, fresh.get(),
                                                   static_cast<uint32_t>(max_level)));
    if (!status.ok()) return status;
    // The library waited for calls in flight: the old handler is unused.
    delete state.installed;
    state.installed = fresh.release();
    return status;
}

/// Stops logging; once this returns the handler is never called again.
/// Call it before unloading the library.
inline Status try_clear_log_handler() {
    detail::LogState& state = detail::log_state();
    std::lock_guard<std::mutex> lock(state.mutex);
    Status status = status_of(netsync_set_log_callback(nullptr, nullptr, NETSYNC_LOG_OFF));
    if (!status.ok()) return status;
    delete state.installed;
    state.installed = nullptr;
    return status;
}

/// Sends one record through the library's log sink.
inline Status try_log(LogLevel level, const char* message) {
    return status_of(netsync_log_message(static_cast<uint32_t>(level), message));
}

// ---------------------------------------------------------------------------
// Timeline: bring your own transport.

class Timeline {
public:
    /// An empty timeline (no handle); every call on it fails.
    Timeline() noexcept = default;
    /// Adopts a handle from netsync_timeline_new.
    explicit Timeline(NetsyncTimeline* handle) noexcept : handle_(handle) {}

    /// `config` null: the defaults.
    static Result<Timeline> try_create(const TimelineConfig* config = nullptr) {
        NetsyncTimeline* handle = nullptr;
        const NetsyncResult code = netsync_timeline_new(config, &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return Timeline(handle);
    }
    static Result<Timeline> try_create(const TimelineConfig& config) { return try_create(&config); }

    NetsyncTimeline* native() const noexcept { return handle_.get(); }
    NetsyncTimeline* release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_.get() != nullptr; }

    /// Room for `count` transforms, so that ticks never grow the buffer.
    void reserve(std::size_t count) {
        if (transforms_.size() < count) transforms_.resize(count);
    }

    Status try_push(double now, double server_time, Span<const Sample> samples) {
        return status_of(netsync_timeline_push(native(), now, server_time, samples.data(), samples.size()));
    }
    /// Every entity's transform at `now`; valid until the next tick.
    Result<Span<const Transform>> try_tick(double now) {
        NetsyncTimeline* handle = native();
        return detail::call_growing(transforms_, [&](Transform* out, std::size_t cap, std::size_t* n) {
            return netsync_timeline_tick(handle, now, out, cap, n);
        });
    }
    Result<std::size_t> try_entity_count() const {
        std::size_t count = 0;
        const NetsyncResult code = netsync_timeline_entity_count(native(), &count);
        return detail::result_of(code, count);
    }
    Status try_remove(uint64_t entity_id) { return status_of(netsync_timeline_remove(native(), entity_id)); }
    Status try_set_entity_mode(uint64_t entity_id, Mode mode) {
        return status_of(netsync_timeline_set_entity_mode(native(), entity_id, static_cast<uint32_t>(mode)));
    }
    Status try_set_prediction_lead(double lead) {
        return status_of(netsync_timeline_set_prediction_lead(native(), lead));
    }
    Result<double> try_render_time(Mode mode) const {
        double t = 0.0;
        const NetsyncResult code = netsync_timeline_render_time(native(), static_cast<uint32_t>(mode), &t);
        return detail::result_of(code, t);
    }
    Result<TimelineStats> try_stats() const {
        TimelineStats stats{};
        const NetsyncResult code = netsync_timeline_stats(native(), &stats);
        return detail::result_of(code, stats);
    }

#if NETSYNC_HPP_EXCEPTIONS
    static Timeline create() { return try_create().value(); }
    static Timeline create(const TimelineConfig& config) { return try_create(&config).value(); }
    void push(double now, double server_time, Span<const Sample> samples) {
        try_push(now, server_time, samples).value();
    }
    Span<const Transform> tick(double now) { return try_tick(now).value(); }
    std::size_t entity_count() const { return try_entity_count().value(); }
    void remove(uint64_t entity_id) { try_remove(entity_id).value(); }
    void set_entity_mode(uint64_t entity_id, Mode mode) { try_set_entity_mode(entity_id, mode).value(); }
    void set_prediction_lead(double lead) { try_set_prediction_lead(lead).value(); }
    double render_time(Mode mode) const { return try_render_time(mode).value(); }
    TimelineStats stats() const { return try_stats().value(); }
#endif

private:
    detail::Owner<NetsyncTimeline, &netsync_timeline_free> handle_;
    std::vector<Transform> transforms_;
};

// ---------------------------------------------------------------------------
// Send filter: is this state worth sending?

class SendFilter {
public:
    SendFilter() noexcept = default;
    explicit SendFilter(NetsyncSendFilter* handle) noexcept : handle_(handle) {}

    /// `config` null: the defaults (dead reckoning, 1 cm, 1 degree, 1 s).
    static Result<SendFilter> try_create(const SendFilterConfig* config = nullptr) {
        NetsyncSendFilter* handle = nullptr;
        const NetsyncResult code = netsync_send_filter_new(config, &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return SendFilter(handle);
    }
    static Result<SendFilter> try_create(const SendFilterConfig& config) { return try_create(&config); }

    NetsyncSendFilter* native() const noexcept { return handle_.get(); }
    NetsyncSendFilter* release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_.get() != nullptr; }

    /// The decision for the true state at `now`; a decision to send makes
    /// this state the reference for the next ones.
    Result<Decision> try_update(double now, const Sample& state) {
        uint32_t decision = NETSYNC_DECISION_SKIP;
        const NetsyncResult code = netsync_send_filter_update(native(), now, &state, &decision);
        return detail::result_of(code, static_cast<Decision>(decision));
    }
    Status try_forget(uint64_t entity_id) { return status_of(netsync_send_filter_forget(native(), entity_id)); }

#if NETSYNC_HPP_EXCEPTIONS
    static SendFilter create() { return try_create().value(); }
    static SendFilter create(const SendFilterConfig& config) { return try_create(&config).value(); }
    Decision update(double now, const Sample& state) { return try_update(now, state).value(); }
    /// True when the state should be sent.
    bool should_send(double now, const Sample& state) { return update(now, state) != Decision::Skip; }
    void forget(uint64_t entity_id) { try_forget(entity_id).value(); }
#endif

private:
    detail::Owner<NetsyncSendFilter, &netsync_send_filter_free> handle_;
};

// ---------------------------------------------------------------------------
// Messages (commands, component states) for clients and embedded servers.

/// `MessageView::header.kind`.
enum class MessageKind : uint32_t {
    GlobalCommand = NETSYNC_MESSAGE_GLOBAL_COMMAND,
    ComponentCommand = NETSYNC_MESSAGE_COMPONENT_COMMAND,
    ComponentState = NETSYNC_MESSAGE_COMPONENT_STATE,
};

/// A received command or component state. `payload` views a buffer the
/// client (or server) keeps: valid until its next poll_message, or until
/// it is moved or destroyed. Copy what you keep.
struct MessageView {
    NetsyncMessage header;  // kind, sender, entity_id, component_id, sequence, server_time, size
    Span<const uint8_t> payload;

    MessageKind kind() const noexcept { return static_cast<MessageKind>(header.kind); }
};

/// The bytes of a string, as a payload (no terminating NUL).
inline Span<const uint8_t> bytes_of(std::string_view text) noexcept {
    return Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

namespace detail {

/// Pops one message through `call(header*, buffer, capacity, has*)` into
/// `buffer`, growing it when the payload does not fit (the message stays
/// queued until it does).
template <class F>
Result<std::optional<MessageView>> poll_message(std::vector<uint8_t>& buffer, F&& call) {
    if (buffer.empty()) buffer.resize(NETSYNC_MAX_PAYLOAD);
    for (int attempt = 0;; ++attempt) {
        NetsyncMessage head{};
        bool has = false;
        const NetsyncResult code = call(&head, buffer.data(), buffer.size(), &has);
        if (code == NETSYNC_OK) {
            if (!has) return Result<std::optional<MessageView>>(std::nullopt);
            return Result<std::optional<MessageView>>(MessageView{head, Span<const uint8_t>(buffer.data(), head.size)});
        }
        if (code != NETSYNC_ERR_BUFFER_TOO_SMALL || attempt >= 2 || head.size <= buffer.size()) {
            return Error::last(code);
        }
        buffer.resize(head.size);
    }
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Secure mode: relay secrets and connect tokens. The secret stays on the
// relay (Server::start_secure) and the game's backend, which issues one
// token per player (issue_token); the game connects with it
// (Client::connect_secure) and never sees the secret.

/// A relay secret: NETSYNC_SECRET_SIZE random bytes.
using Secret = std::array<uint8_t, NETSYNC_SECRET_SIZE>;

/// A new random relay secret (the operating system's CSPRNG).
inline Result<Secret> try_generate_secret() {
    Secret secret{};
    const NetsyncResult code = netsync_secret_generate(secret.data(), secret.size());
    return detail::result_of(code, secret);
}

/// A connect token (NETSYNC_TOKEN_SIZE bytes), for a game's backend:
/// `client_id` (1 and up; the id the relay admits the client under) may
/// connect to the relay at `relay_address` ("IP:port" as clients reach it)
/// started with `secret`, for `lifetime_seconds` (1..=86400) from now.
/// NETSYNC_ERR_INVALID_ARGUMENT for a secret of another size, client id 0,
/// a bad address or lifetime.
inline Result<std::vector<uint8_t>> try_issue_token(Span<const uint8_t> secret, uint32_t client_id,
                                                    const char* relay_address, uint32_t lifetime_seconds) {
    std::vector<uint8_t> token(NETSYNC_TOKEN_SIZE);
    std::size_t size = 0;
    const NetsyncResult code = netsync_token_issue(secret.data(), secret.size(), client_id, relay_address,
                                                   lifetime_seconds, token.data(), token.size(), &size);
    if (code != NETSYNC_OK) return Error::last(code);
    token.resize(size);
    return Result<std::vector<uint8_t>>(std::move(token));
}
inline Result<std::vector<uint8_t>> try_issue_token(Span<const uint8_t> secret, uint32_t client_id,
                                                    const std::string& relay_address, uint32_t lifetime_seconds) {
    return try_issue_token(secret, client_id, relay_address.c_str(), lifetime_seconds);
}

// ---------------------------------------------------------------------------
// Server: a relay on its own thread.

class Server {
public:
    Server() noexcept = default;
    explicit Server(NetsyncServer* handle) noexcept : handle_(handle) {}

    /// Listens on `bind_ip` (null: "0.0.0.0") and `config->port` (null
    /// config: the defaults, port 7777); returns once the socket is bound.
    static Result<Server> try_start(const ServerConfig* config = nullptr, const char* bind_ip = nullptr) {
        NetsyncServer* handle = nullptr;
        const NetsyncResult code = netsync_server_start(config, bind_ip, &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return Server(handle);
    }
    static Result<Server> try_start(const ServerConfig& config, const std::string& bind_ip) {
        return try_start(&config, bind_ip.c_str());
    }
    /// As try_start, in secure mode: only clients presenting a connect
    /// token issued with `secret` (try_issue_token) are admitted, under the
    /// token's client id, and every datagram after the handshake is
    /// encrypted and authenticated; plain clients are refused with
    /// DisconnectReason::TokenRequired. `public_address`: the "IP:port"
    /// tokens name (null: the bound address, any IP when bound to 0.0.0.0).
    static Result<Server> try_start_secure(const ServerConfig* config, Span<const uint8_t> secret,
                                           const char* bind_ip = nullptr, const char* public_address = nullptr) {
        NetsyncServer* handle = nullptr;
        const NetsyncResult code =
            netsync_server_start_secure(config, bind_ip, secret.data(), secret.size(), public_address, &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return Server(handle);
    }
    static Result<Server> try_start_secure(const ServerConfig& config, Span<const uint8_t> secret,
                                           const std::string& bind_ip, const char* public_address = nullptr) {
        return try_start_secure(&config, secret, bind_ip.c_str(), public_address);
    }
    /// As try_start, recording everything the relay accepts and sends on
    /// to the file at `path` until the server is destroyed (docs/replay.md).
    static Result<Server> try_start_recording(const ServerConfig* config, const char* bind_ip,
                                              const std::string& path) {
        NetsyncServer* handle = nullptr;
        const NetsyncResult code = netsync_server_start_recording(config, bind_ip, path.c_str(), &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return Server(handle);
    }

    NetsyncServer* native() const noexcept { return handle_.get(); }
    NetsyncServer* release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_.get() != nullptr; }
    /// Stops the relay and joins its thread now (the destructor does too).
    void stop() noexcept { handle_.reset(); }

    Result<uint16_t> try_port() const {
        uint16_t port = 0;
        const NetsyncResult code = netsync_server_port(native(), &port);
        return detail::result_of(code, port);
    }
    Result<ServerStats> try_stats() const {
        ServerStats stats{};
        const NetsyncResult code = netsync_server_stats(native(), &stats);
        return detail::result_of(code, stats);
    }

    // --- the embedded game: a host or dedicated server moving its own
    // entities. Calls are queued for the relay thread and never wait on
    // the network; refusals come back as ServerEventKind::CallRefused.

    /// The relay's clock (s since it started): what clients' server_time estimates.
    Result<double> try_time() const {
        double t = 0.0;
        const NetsyncResult code = netsync_server_time(native(), &t);
        return detail::result_of(code, t);
    }
    /// Moves server-owned entity `state.entity_id` (declared on first use).
    Status try_set_entity_state(const Sample& state) {
        return status_of(netsync_server_set_entity_state(native(), &state));
    }
    /// Removes a server-owned entity everywhere.
    Status try_remove_entity(uint64_t entity_id) {
        return status_of(netsync_server_remove_entity(native(), entity_id));
    }
    Status try_set_component_state(uint64_t entity_id, uint32_t component_id, Span<const uint8_t> data) {
        return status_of(
            netsync_server_set_component_state(native(), entity_id, component_id, data.data(), data.size()));
    }
    /// To every client (sender 0), in the one order every client sees.
    Status try_send_global_command(Span<const uint8_t> data) {
        return status_of(netsync_server_send_global_command(native(), data.data(), data.size()));
    }
    /// To the client that holds `entity_id`.
    Status try_send_component_command(uint64_t entity_id, uint32_t component_id, Span<const uint8_t> data) {
        return status_of(
            netsync_server_send_component_command(native(), entity_id, component_id, data.data(), data.size()));
    }
    /// The next message for the server (global commands; component
    /// commands for server-owned or unheld entities), or nullopt.
    Result<std::optional<MessageView>> try_poll_message() {
        NetsyncServer* handle = native();
        return detail::poll_message(messages_, [&](NetsyncMessage* head, uint8_t* data, std::size_t cap, bool* has) {
            return netsync_server_poll_message(handle, head, data, cap, has);
        });
    }
    /// The next server event, or nullopt.
    Result<std::optional<ServerEvent>> try_poll_event() {
        ServerEvent event{};
        bool has = false;
        const NetsyncResult code = netsync_server_poll_event(native(), &event, &has);
        if (code != NETSYNC_OK) return Error::last(code);
        return Result<std::optional<ServerEvent>>(has ? std::optional<ServerEvent>(event) : std::nullopt);
    }
    /// Calls `on_event(const ServerEvent&)` for every waiting event.
    template <class F>
    Status try_drain_events(F&& on_event) {
        for (;;) {
            Result<std::optional<ServerEvent>> next = try_poll_event();
            if (!next.ok()) return Status(next.error());
            if (!next.value().has_value()) return Status();
            on_event(*next.value());
        }
    }

#if NETSYNC_HPP_EXCEPTIONS
    static Server start() { return try_start().value(); }
    static Server start(const ServerConfig& config, const std::string& bind_ip = "0.0.0.0") {
        return try_start(&config, bind_ip.c_str()).value();
    }
    static Server start_secure(const ServerConfig& config, Span<const uint8_t> secret,
                               const std::string& bind_ip = "0.0.0.0", const char* public_address = nullptr) {
        return try_start_secure(&config, secret, bind_ip.c_str(), public_address).value();
    }
    static Server start_recording(const ServerConfig& config, const std::string& path,
                                  const std::string& bind_ip = "0.0.0.0") {
        return try_start_recording(&config, bind_ip.c_str(), path).value();
    }
    uint16_t port() const { return try_port().value(); }
    ServerStats stats() const { return try_stats().value(); }
    double time() const { return try_time().value(); }
    void set_entity_state(const Sample& state) { try_set_entity_state(state).value(); }
    void remove_entity(uint64_t entity_id) { try_remove_entity(entity_id).value(); }
    void set_component_state(uint64_t entity_id, uint32_t component_id, Span<const uint8_t> data) {
        try_set_component_state(entity_id, component_id, data).value();
    }
    void send_global_command(Span<const uint8_t> data) { try_send_global_command(data).value(); }
    void send_component_command(uint64_t entity_id, uint32_t component_id, Span<const uint8_t> data) {
        try_send_component_command(entity_id, component_id, data).value();
    }
    std::optional<MessageView> poll_message() { return try_poll_message().value(); }
    std::optional<ServerEvent> poll_event() { return try_poll_event().value(); }
    /// Calls `on_event` for every waiting event; returns how many.
    template <class F>
    std::size_t drain_events(F&& on_event) {
        std::size_t n = 0;
        try_drain_events([&](const ServerEvent& e) {
            ++n;
            on_event(e);
        }).value();
        return n;
    }
#endif

private:
    detail::Owner<NetsyncServer, &netsync_server_free> handle_;
    std::vector<uint8_t> messages_;
};

// ---------------------------------------------------------------------------
// Client: what an engine calls every frame.

class Client {
public:
    Client() noexcept = default;
    /// Adopts a handle from netsync_client_connect.
    explicit Client(NetsyncClient* handle) noexcept : handle_(handle) {}

    /// Starts connecting to "IP:port" and returns at once (watch state()
    /// or the events). `config` null: the defaults.
    static Result<Client> try_connect(const char* address, const ClientConfig* config = nullptr) {
        NetsyncClient* handle = nullptr;
        const NetsyncResult code = netsync_client_connect(config, address, &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return Client(handle);
    }
    static Result<Client> try_connect(const std::string& address, const ClientConfig& config) {
        return try_connect(address.c_str(), &config);
    }
    /// As try_connect, in secure mode with a connect token from the game's
    /// backend (try_issue_token): the relay admits this client under the
    /// token's client id. `address` null: the relay the token names.
    /// Refusals come as Disconnected events (TokenExpired, NotSecure,
    /// TokenInUse); a token for another relay or secret gets no answer
    /// (ConnectTimeout).
    static Result<Client> try_connect_secure(Span<const uint8_t> token, const ClientConfig* config = nullptr,
                                             const char* address = nullptr) {
        NetsyncClient* handle = nullptr;
        const NetsyncResult code = netsync_client_connect_secure(config, address, token.data(), token.size(), &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return Client(handle);
    }
    static Result<Client> try_connect_secure(Span<const uint8_t> token, const ClientConfig& config,
                                             const char* address = nullptr) {
        return try_connect_secure(token, &config, address);
    }

    NetsyncClient* native() const noexcept { return handle_.get(); }
    NetsyncClient* release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_.get() != nullptr; }
    /// Stops and joins the network thread now (the destructor does too);
    /// the object is empty afterwards.
    void disconnect() noexcept { handle_.reset(); }

    /// Room for `count` remote transforms, so that ticks never grow the buffer.
    void reserve(std::size_t count) {
        if (transforms_.size() < count) transforms_.resize(count);
    }

    Result<ConnectionState> try_state() const {
        uint32_t state = NETSYNC_STATE_CONNECTING;
        const NetsyncResult code = netsync_client_state(native(), &state);
        return detail::result_of(code, static_cast<ConnectionState>(state));
    }

    // --- entities and send rights ------------------------------------------

    /// Declares an entity this client controls for good.
    Status try_register_entity(uint64_t entity_id) {
        return status_of(netsync_client_register_entity(native(), entity_id));
    }
    /// Declares an entity with its send-right kind (a neutral object may be
    /// registered by every client: the first one holds it).
    Status try_register_entity(uint64_t entity_id, Kind kind) {
        return status_of(netsync_client_register_entity_kind(native(), entity_id, static_cast<uint32_t>(kind)));
    }
    Status try_unregister_entity(uint64_t entity_id) {
        return status_of(netsync_client_unregister_entity(native(), entity_id));
    }
    /// `mine` (controlled here) hit the neutral `other`: claims its right.
    /// Optimistic: simulate `other` and set its state from now on; a
    /// RightGained or RightRefused event follows.
    Status try_report_collision(uint64_t mine, uint64_t other) {
        return status_of(netsync_client_report_collision(native(), mine, other));
    }
    /// A neutral object this client holds is at rest: back to nobody.
    Status try_report_at_rest(uint64_t entity_id) {
        return status_of(netsync_client_report_at_rest(native(), entity_id));
    }
    /// True when this client holds (or claims) the right to send the entity:
    /// simulate it locally and set its state; else show the network's.
    Result<bool> try_holds(uint64_t entity_id) const {
        uint8_t holds = 0;
        const NetsyncResult code = netsync_client_holds(native(), entity_id, &holds);
        return detail::result_of(code, holds != 0);
    }
    /// Who holds an entity's send right, as the relay last announced it.
    struct Holder {
        uint32_t client_id;  // 0: nobody, or the server
        uint32_t epoch;      // changes so far
    };
    /// NETSYNC_ERR_UNKNOWN_ENTITY until the relay has announced one. A claim
    /// not answered yet is not shown here (holds() says how to act).
    Result<Holder> try_holder(uint64_t entity_id) const {
        Holder h{0, 0};
        const NetsyncResult code = netsync_client_holder(native(), entity_id, &h.client_id, &h.epoch);
        return detail::result_of(code, h);
    }
    /// The true state of an entity this client holds, this frame.
    Status try_set_entity_state(const Sample& state) {
        return status_of(netsync_client_set_entity_state(native(), &state));
    }
    /// Several states; stops at the first failure.
    Status try_set_entity_states(Span<const Sample> states) {
        for (const Sample& s : states) {
            Status status = try_set_entity_state(s);
            if (!status.ok()) return status;
        }
        return Status();
    }

    // --- every frame ---------------------------------------------------------

    /// Advances to engine time `now` (s, monotonic, unscaled) and returns
    /// every remote entity's transform; valid until the next tick. When
    /// the buffer is too small it grows and ticks again at the same `now`
    /// (which advances nothing more), so the batch is always whole.
    Result<Span<const Transform>> try_tick(double now) {
        NetsyncClient* handle = native();
        return detail::call_growing(transforms_, [&](Transform* out, std::size_t cap, std::size_t* n) {
            return netsync_client_tick(handle, now, out, cap, n);
        });
    }
    /// Ticks into the caller's memory and returns how many transforms were
    /// written. NETSYNC_ERR_BUFFER_TOO_SMALL (the tick happened, `out` is
    /// full) when more entities exist; `*needed` (when given) receives
    /// their count either way.
    Result<std::size_t> try_tick_into(double now, Span<Transform> out, std::size_t* needed = nullptr) {
        std::size_t count = 0;
        const NetsyncResult code = netsync_client_tick(native(), now, out.data(), out.size(), &count);
        if (needed != nullptr && (code == NETSYNC_OK || code == NETSYNC_ERR_BUFFER_TOO_SMALL)) *needed = count;
        return detail::result_of(code, count);
    }
    /// The next event, or nullopt when none is waiting.
    Result<std::optional<ClientEvent>> try_poll_event() {
        ClientEvent event{};
        bool has = false;
        const NetsyncResult code = netsync_client_poll_event(native(), &event, &has);
        if (code != NETSYNC_OK) return Error::last(code);
        return Result<std::optional<ClientEvent>>(has ? std::optional<ClientEvent>(event) : std::nullopt);
    }
    /// Calls `on_event(const ClientEvent&)` for every waiting event.
    template <class F>
    Status try_drain_events(F&& on_event) {
        for (;;) {
            Result<std::optional<ClientEvent>> next = try_poll_event();
            if (!next.ok()) return Status(next.error());
            if (!next.value().has_value()) return Status();
            on_event(*next.value());
        }
    }
    /// Estimated server time at engine time `now`; NETSYNC_ERR_WRONG_STATE
    /// until the relay's clock is known.
    Result<double> try_server_time(double now) const {
        double t = 0.0;
        const NetsyncResult code = netsync_client_server_time(native(), now, &t);
        return detail::result_of(code, t);
    }
    /// Server time that `mode` showed at the last tick.
    Result<double> try_render_time(Mode mode) const {
        double t = 0.0;
        const NetsyncResult code = netsync_client_render_time(native(), static_cast<uint32_t>(mode), &t);
        return detail::result_of(code, t);
    }
    Result<ClientStats> try_stats() const {
        ClientStats stats{};
        const NetsyncResult code = netsync_client_stats(native(), &stats);
        return detail::result_of(code, stats);
    }

    // --- interest and prediction ---------------------------------------------

    /// What this client hears about (until called: everything). `flags`:
    /// NETSYNC_INTEREST_* bits; `radius` in grid cells around the entities
    /// it controls; `regions`: non-zero region ids.
    Status try_set_interest(uint32_t flags, uint8_t device_class, uint32_t radius,
                            Span<const uint32_t> regions = Span<const uint32_t>()) {
        return status_of(
            netsync_client_set_interest(native(), flags, device_class, radius, regions.data(), regions.size()));
    }
    /// Places an entity this client holds in `region` (0: by grid cell)
    /// and sets the least device class that sees it (0: all).
    Status try_set_entity_interest(uint64_t entity_id, uint32_t region, uint8_t min_class) {
        return status_of(netsync_client_set_entity_interest(native(), entity_id, region, min_class));
    }
    /// Shows `state` for a remote entity at once (the expected result of a
    /// command just sent) until authoritative state covers it.
    Status try_predict(double now, const Sample& state) {
        return status_of(netsync_client_predict(native(), now, &state));
    }

    // --- components, commands and messages -------------------------------------

    Status try_register_component(uint64_t entity_id, uint32_t component_id, bool synced) {
        return status_of(netsync_client_register_component(native(), entity_id, component_id, synced));
    }
    Status try_set_component_state(uint64_t entity_id, uint32_t component_id, Span<const uint8_t> data) {
        return status_of(
            netsync_client_set_component_state(native(), entity_id, component_id, data.data(), data.size()));
    }
    /// Reliably, once, to every client (this one too), in one order everywhere.
    Status try_send_global_command(Span<const uint8_t> data) {
        return status_of(netsync_client_send_global_command(native(), data.data(), data.size()));
    }
    /// Reliably, once, to whoever holds `entity_id`.
    Status try_send_component_command(uint64_t entity_id, uint32_t component_id, Span<const uint8_t> data) {
        return status_of(
            netsync_client_send_component_command(native(), entity_id, component_id, data.data(), data.size()));
    }
    /// The next received message, or nullopt. The payload buffer grows to
    /// fit (messages arrive with ticks: poll after tick, every frame).
    Result<std::optional<MessageView>> try_poll_message() {
        NetsyncClient* handle = native();
        return detail::poll_message(messages_, [&](NetsyncMessage* head, uint8_t* data, std::size_t cap, bool* has) {
            return netsync_client_poll_message(handle, head, data, cap, has);
        });
    }

    // --- recording (docs/replay.md) ------------------------------------------

    /// Records everything this client shows from the network to the file at
    /// `path` (UTF-8) until try_stop_recording or the client is freed; play
    /// it back with Replay. Only before the first tick (a recording holds
    /// the timeline's whole history): NETSYNC_ERR_WRONG_STATE after it, or
    /// when already recording; NETSYNC_ERR_IO when the file cannot be created.
    Status try_record(const char* path) { return status_of(netsync_client_record(native(), path)); }
    Status try_record(const std::string& path) { return try_record(path.c_str()); }
    /// Ends the recording and waits until the file is complete.
    /// NETSYNC_ERR_WRONG_STATE when not recording.
    Status try_stop_recording() { return status_of(netsync_client_stop_recording(native())); }

#if NETSYNC_HPP_EXCEPTIONS
    static Client connect(const std::string& address) { return try_connect(address.c_str()).value(); }
    static Client connect(const std::string& address, const ClientConfig& config) {
        return try_connect(address.c_str(), &config).value();
    }
    static Client connect_secure(Span<const uint8_t> token) { return try_connect_secure(token).value(); }
    static Client connect_secure(Span<const uint8_t> token, const ClientConfig& config, const char* address = nullptr) {
        return try_connect_secure(token, &config, address).value();
    }
    ConnectionState state() const { return try_state().value(); }
    void register_entity(uint64_t entity_id) { try_register_entity(entity_id).value(); }
    void register_entity(uint64_t entity_id, Kind kind) { try_register_entity(entity_id, kind).value(); }
    void unregister_entity(uint64_t entity_id) { try_unregister_entity(entity_id).value(); }
    void report_collision(uint64_t mine, uint64_t other) { try_report_collision(mine, other).value(); }
    void report_at_rest(uint64_t entity_id) { try_report_at_rest(entity_id).value(); }
    bool holds(uint64_t entity_id) const { return try_holds(entity_id).value(); }
    Holder holder(uint64_t entity_id) const { return try_holder(entity_id).value(); }
    void set_entity_state(const Sample& state) { try_set_entity_state(state).value(); }
    void set_entity_states(Span<const Sample> states) { try_set_entity_states(states).value(); }
    Span<const Transform> tick(double now) { return try_tick(now).value(); }
    std::optional<ClientEvent> poll_event() { return try_poll_event().value(); }
    /// Calls `on_event` for every waiting event; returns how many.
    template <class F>
    std::size_t drain_events(F&& on_event) {
        std::size_t n = 0;
        try_drain_events([&](const ClientEvent& e) {
            ++n;
            on_event(e);
        }).value();
        return n;
    }
    /// Every waiting event.
    std::vector<ClientEvent> events() {
        std::vector<ClientEvent> all;
        drain_events([&](const ClientEvent& e) { all.push_back(e); });
        return all;
    }
    /// nullopt while the relay's clock is not known yet (not an error in
    /// a frame loop); throws on every other failure.
    std::optional<double> server_time(double now) const {
        Result<double> t = try_server_time(now);
        if (t.code() == NETSYNC_ERR_WRONG_STATE) return std::nullopt;
        return t.value();
    }
    double render_time(Mode mode) const { return try_render_time(mode).value(); }
    ClientStats stats() const { return try_stats().value(); }
    void set_interest(uint32_t flags, uint8_t device_class, uint32_t radius,
                      Span<const uint32_t> regions = Span<const uint32_t>()) {
        try_set_interest(flags, device_class, radius, regions).value();
    }
    void set_entity_interest(uint64_t entity_id, uint32_t region, uint8_t min_class) {
        try_set_entity_interest(entity_id, region, min_class).value();
    }
    void predict(double now, const Sample& state) { try_predict(now, state).value(); }
    void register_component(uint64_t entity_id, uint32_t component_id, bool synced) {
        try_register_component(entity_id, component_id, synced).value();
    }
    void set_component_state(uint64_t entity_id, uint32_t component_id, Span<const uint8_t> data) {
        try_set_component_state(entity_id, component_id, data).value();
    }
    void send_global_command(Span<const uint8_t> data) { try_send_global_command(data).value(); }
    void send_component_command(uint64_t entity_id, uint32_t component_id, Span<const uint8_t> data) {
        try_send_component_command(entity_id, component_id, data).value();
    }
    std::optional<MessageView> poll_message() { return try_poll_message().value(); }
    void record(const std::string& path) { try_record(path.c_str()).value(); }
    void stop_recording() { try_stop_recording().value(); }
#endif

private:
    detail::Owner<NetsyncClient, &netsync_client_free> handle_;
    std::vector<Transform> transforms_;
    std::vector<uint8_t> messages_;
};

// ---------------------------------------------------------------------------
// Replay: a recording (Client::record, `netsync relay --record`) played
// back like a live client (docs/replay.md).

class Replay {
public:
    Replay() noexcept = default;
    /// Adopts a handle from netsync_replay_open or netsync_replay_open_buffer.
    explicit Replay(NetsyncReplay* handle) noexcept : handle_(handle) {}

    /// Opens the recording at `path` (UTF-8) and reads it whole, checking
    /// every block. NETSYNC_ERR_IO when it cannot be read;
    /// NETSYNC_ERR_INVALID_ARGUMENT, the message naming the reason, for a
    /// file cut short, damaged, of another format or of a newer version.
    static Result<Replay> try_open(const char* path) {
        NetsyncReplay* handle = nullptr;
        const NetsyncResult code = netsync_replay_open(path, &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return adopt(handle);
    }
    static Result<Replay> try_open(const std::string& path) { return try_open(path.c_str()); }
    /// Opens a recording held in memory (copied; `data` may go after this).
    static Result<Replay> try_open_buffer(Span<const uint8_t> data) {
        // An empty span may have no pointer: the library is to judge the
        // (missing) contents, not refuse a NULL.
        static const uint8_t none = 0;
        NetsyncReplay* handle = nullptr;
        const NetsyncResult code =
            netsync_replay_open_buffer(data.empty() ? &none : data.data(), data.size(), &handle);
        if (code != NETSYNC_OK) return Error::last(code);
        return adopt(handle);
    }

    NetsyncReplay* native() const noexcept { return handle_.get(); }
    NetsyncReplay* release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_.get() != nullptr; }

    /// Room for `count` transforms (open reserves one per recorded entity).
    void reserve(std::size_t count) {
        if (transforms_.size() < count) transforms_.resize(count);
    }

    /// Kind, client id, time span, counts of entries, ticks, frames,
    /// messages, right changes and entities, file and raw sizes.
    Result<ReplayInfo> try_info() const {
        ReplayInfo info{};
        const NetsyncResult code = netsync_replay_info(native(), &info);
        return detail::result_of(code, info);
    }
    /// Shows the recording at recording time `time` (the recording
    /// client's engine clock; the relay's for a relay recording): at a time
    /// the client ticked at, exactly the transforms its tick returned.
    /// Going back in time replays from the start. Valid until the next tick.
    Result<Span<const Transform>> try_tick_at(double time) {
        NetsyncReplay* handle = native();
        return detail::call_growing(transforms_, [&](Transform* out, std::size_t cap, std::size_t* n) {
            return netsync_replay_tick_at(handle, time, out, cap, n);
        });
    }
    /// Plays on the engine's clock `now` (any monotonic clock, s): the first
    /// tick, and the first after a seek, shows the start (or the seek
    /// time); later ones advance at the set speed. Valid until the next tick.
    Result<Span<const Transform>> try_tick(double now) {
        NetsyncReplay* handle = native();
        return detail::call_growing(transforms_, [&](Transform* out, std::size_t cap, std::size_t* n) {
            return netsync_replay_tick(handle, now, out, cap, n);
        });
    }
    /// The next try_tick shows recording time `time`.
    Status try_seek(double time) { return status_of(netsync_replay_seek(native(), time)); }
    /// Plays on at `speed` times real time (0 pauses, at most 100; 1 until set).
    Status try_set_speed(double speed) { return status_of(netsync_replay_set_speed(native(), speed)); }
    /// Recording time of the last tick; NETSYNC_ERR_WRONG_STATE before the first.
    Result<double> try_position() const {
        double t = 0.0;
        const NetsyncResult code = netsync_replay_position(native(), &t);
        return detail::result_of(code, t);
    }

#if NETSYNC_HPP_EXCEPTIONS
    static Replay open(const std::string& path) { return try_open(path.c_str()).value(); }
    static Replay open_buffer(Span<const uint8_t> data) { return try_open_buffer(data).value(); }
    ReplayInfo info() const { return try_info().value(); }
    Span<const Transform> tick_at(double time) { return try_tick_at(time).value(); }
    Span<const Transform> tick(double now) { return try_tick(now).value(); }
    void seek(double time) { try_seek(time).value(); }
    void set_speed(double speed) { try_set_speed(speed).value(); }
    /// nullopt before the first tick; throws on every other failure.
    std::optional<double> position() const {
        Result<double> t = try_position();
        if (t.code() == NETSYNC_ERR_WRONG_STATE) return std::nullopt;
        return t.value();
    }
#endif

private:
    static Result<Replay> adopt(NetsyncReplay* handle) {
        Replay replay(handle);
        // Every entity a tick can show has a recorded state, so with room
        // for all of them no tick is repeated to grow the buffer (a repeat
        // would apply entries stamped after the live tick at that time).
        Result<ReplayInfo> info = replay.try_info();
        if (!info.ok()) return info.error();
        replay.reserve(static_cast<std::size_t>(info.value().entities));
        return Result<Replay>(std::move(replay));
    }

    detail::Owner<NetsyncReplay, &netsync_replay_free> handle_;
    std::vector<Transform> transforms_;
};

// ---------------------------------------------------------------------------
// Rules for engine layers (no engine types; the Unreal plugin uses them and
// the C++ test checks them).

/// One side of a contact between two synced entities, as this client sees it.
struct ContactSide {
    uint64_t entity_id;
    Kind kind;
    /// Client::holds(entity_id): controlled by this client, or a neutral
    /// object it holds or is claiming.
    bool held_here;
};

/// A collision claim: `mine` hit the neutral `other`.
struct Claim {
    uint64_t mine;
    uint64_t other;
};

/// The claim a contact calls for: one side an entity this client controls,
/// the other a neutral object it does not hold yet. Either side may be the
/// one whose hit event fired. nullopt for every other contact.
inline std::optional<Claim> claim_for_contact(const ContactSide& a, const ContactSide& b) noexcept {
    if (a.entity_id == b.entity_id) return std::nullopt;
    if (a.kind == Kind::Controlled && a.held_here && b.kind == Kind::Neutral && !b.held_here) {
        return Claim{a.entity_id, b.entity_id};
    }
    if (b.kind == Kind::Controlled && b.held_here && a.kind == Kind::Neutral && !a.held_here) {
        return Claim{b.entity_id, a.entity_id};
    }
    return std::nullopt;
}

/// Says when a held neutral object has come to rest, so that its right can
/// go back to nobody (Client::report_at_rest): both speeds at or below
/// their limits for `hold_time` seconds. update() answers true once per
/// rest, then false until the object has moved again.
class RestDetector {
public:
    /// `max_speed` m/s, `max_angular_speed` rad/s, `hold_time` s.
    explicit RestDetector(float max_speed = 0.05f, float max_angular_speed = 0.05f, double hold_time = 0.5) noexcept
        : max_speed_(max_speed), max_angular_speed_(max_angular_speed), hold_time_(hold_time) {}

    bool update(double now, float speed, float angular_speed) noexcept {
        if (!(speed <= max_speed_) || !(angular_speed <= max_angular_speed_)) {
            still_since_.reset();
            reported_ = false;
            return false;
        }
        if (!still_since_) still_since_ = now;
        if (reported_ || now - *still_since_ < hold_time_) return false;
        reported_ = true;
        return true;
    }
    /// Forget the history (the right changed hands).
    void reset() noexcept {
        still_since_.reset();
        reported_ = false;
    }

private:
    float max_speed_;
    float max_angular_speed_;
    double hold_time_;
    std::optional<double> still_since_;
    bool reported_ = false;
};

/// Length of a vector (m, m/s or rad/s).
inline float length(const Vec3& v) noexcept { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

// ---------------------------------------------------------------------------
// Throwing forms of the free functions.

#if NETSYNC_HPP_EXCEPTIONS
/// Throws netsync::Error when the loaded library cannot serve this header.
inline void check_abi() { try_check_abi().value(); }
inline ClientConfig default_client_config() { return try_default_client_config().value(); }
inline ServerConfig default_server_config() { return try_default_server_config().value(); }
inline TimelineConfig default_timeline_config() { return try_default_timeline_config().value(); }
inline SendFilterConfig default_send_filter_config() { return try_default_send_filter_config().value(); }
inline void set_log_handler(LogHandler handler, LogLevel max_level) {
    try_set_log_handler(std::move(handler), max_level).value();
}
inline void clear_log_handler() { try_clear_log_handler().value(); }
inline void log(LogLevel level, const char* message) { try_log(level, message).value(); }
inline Secret generate_secret() { return try_generate_secret().value(); }
inline std::vector<uint8_t> issue_token(Span<const uint8_t> secret, uint32_t client_id,
                                        const std::string& relay_address, uint32_t lifetime_seconds) {
    return try_issue_token(secret, client_id, relay_address.c_str(), lifetime_seconds).value();
}
#endif

}  // namespace netsync

#endif  // NETSYNC_HPP
