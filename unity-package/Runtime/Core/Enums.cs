// Typed views of the NETSYNC_* constants. Every value comes from the
// generated NativeMethods constants, so the two cannot drift; the Mono
// harness checks that every constant of each group has a member here.
using System;
using Netsync.Native;

namespace Netsync
{
    /// <summary>Connection state of a <see cref="SyncClient"/>.</summary>
    public enum ConnectionState : uint
    {
        Connecting = NativeMethods.NETSYNC_STATE_CONNECTING,
        Connected = NativeMethods.NETSYNC_STATE_CONNECTED,
        Disconnected = NativeMethods.NETSYNC_STATE_DISCONNECTED,
    }

    /// <summary>What a <see cref="NetsyncClientEvent"/> reports.</summary>
    public enum ClientEventKind : uint
    {
        /// <summary>A connection attempt began (<c>reason</c>: the attempt number, 1 the first).</summary>
        Connecting = NativeMethods.NETSYNC_EVENT_CONNECTING,
        Connected = NativeMethods.NETSYNC_EVENT_CONNECTED,
        Reconnected = NativeMethods.NETSYNC_EVENT_RECONNECTED,
        Disconnected = NativeMethods.NETSYNC_EVENT_DISCONNECTED,
        EntityAppeared = NativeMethods.NETSYNC_EVENT_ENTITY_APPEARED,
        EntityRemoved = NativeMethods.NETSYNC_EVENT_ENTITY_REMOVED,
        /// <summary>This client now holds the send right: simulate the entity.</summary>
        RightGained = NativeMethods.NETSYNC_EVENT_RIGHT_GAINED,
        /// <summary>Another client (or nobody) holds it now: stop simulating it.</summary>
        RightLost = NativeMethods.NETSYNC_EVENT_RIGHT_LOST,
        /// <summary>The relay refused this client's claim (see <see cref="ClaimRefusal"/>).</summary>
        RightRefused = NativeMethods.NETSYNC_EVENT_RIGHT_REFUSED,
        /// <summary>A scripted element started but cannot be shown here (see <see cref="ScriptedRefusal"/>).</summary>
        ScriptedRefused = NativeMethods.NETSYNC_EVENT_SCRIPTED_REFUSED,
    }

    /// <summary>Send-right kind of an entity this client registers.</summary>
    public enum EntityKind : uint
    {
        /// <summary>This client's for good (a player's avatar or car).</summary>
        Controlled = NativeMethods.NETSYNC_KIND_CONTROLLED,
        /// <summary>Shared physics object: simulated by whoever holds its right.</summary>
        Neutral = NativeMethods.NETSYNC_KIND_NEUTRAL,
        /// <summary>Only the server moves it.</summary>
        ServerOwned = NativeMethods.NETSYNC_KIND_SERVER_OWNED,
    }

    /// <summary>Who wrote a recording (docs/replay.md).</summary>
    public enum RecordingKind : uint
    {
        /// <summary>A client: what it showed from the network, its ticks and messages.</summary>
        Client = NativeMethods.NETSYNC_RECORDING_CLIENT,
        /// <summary>The relay: every state it accepted, right change and command.</summary>
        Relay = NativeMethods.NETSYNC_RECORDING_RELAY,
    }

    /// <summary>Why the relay refused a claim.</summary>
    public enum ClaimRefusal : uint
    {
        None = 0,
        UnknownEntity = NativeMethods.NETSYNC_CLAIM_UNKNOWN_ENTITY,
        Conflict = NativeMethods.NETSYNC_CLAIM_CONFLICT,
        NotNeutral = NativeMethods.NETSYNC_CLAIM_NOT_NEUTRAL,
        NotYourController = NativeMethods.NETSYNC_CLAIM_NOT_YOUR_CONTROLLER,
        Cooldown = NativeMethods.NETSYNC_CLAIM_COOLDOWN,
        AlreadyHolder = NativeMethods.NETSYNC_CLAIM_ALREADY_HOLDER,
        NotHolder = NativeMethods.NETSYNC_CLAIM_NOT_HOLDER,
        /// <summary>The object changed hands after the collision this claim reports.</summary>
        Stale = NativeMethods.NETSYNC_CLAIM_STALE,
    }

    /// <summary>Why a client lost (or never got) its connection.</summary>
    public enum DisconnectReason : uint
    {
        None = NativeMethods.NETSYNC_REASON_NONE,
        ConnectTimeout = NativeMethods.NETSYNC_REASON_CONNECT_TIMEOUT,
        RelayTimeout = NativeMethods.NETSYNC_REASON_RELAY_TIMEOUT,
        VersionMismatch = NativeMethods.NETSYNC_REASON_VERSION_MISMATCH,
        RelayFull = NativeMethods.NETSYNC_REASON_RELAY_FULL,
        Closed = NativeMethods.NETSYNC_REASON_CLOSED,
        /// <summary>The relay runs in secure mode: connect with a connect token.</summary>
        TokenRequired = NativeMethods.NETSYNC_REASON_TOKEN_REQUIRED,
        /// <summary>A connect token was presented to a relay in plain mode.</summary>
        NotSecure = NativeMethods.NETSYNC_REASON_NOT_SECURE,
        /// <summary>The connect token expired: get a new one from the game's backend.</summary>
        TokenExpired = NativeMethods.NETSYNC_REASON_TOKEN_EXPIRED,
        /// <summary>The connect token or its client id is in use by another connection.</summary>
        TokenInUse = NativeMethods.NETSYNC_REASON_TOKEN_IN_USE,
    }

    /// <summary>Simulated networks a client's traffic can go through (tests, demos).</summary>
    public enum NetworkProfile : uint
    {
        None = NativeMethods.NETSYNC_NETWORK_NONE,
        Lan = NativeMethods.NETSYNC_NETWORK_LAN,
        Good = NativeMethods.NETSYNC_NETWORK_GOOD,
        Average = NativeMethods.NETSYNC_NETWORK_AVG,
        Poor = NativeMethods.NETSYNC_NETWORK_POOR,
        Spiky = NativeMethods.NETSYNC_NETWORK_SPIKY,
        Hostile = NativeMethods.NETSYNC_NETWORK_HOSTILE,
    }

    /// <summary>Most verbose log level passed to the log handler.</summary>
    public enum NetsyncLogLevel : uint
    {
        Off = NativeMethods.NETSYNC_LOG_OFF,
        Error = NativeMethods.NETSYNC_LOG_ERROR,
        Warn = NativeMethods.NETSYNC_LOG_WARN,
        Info = NativeMethods.NETSYNC_LOG_INFO,
        Debug = NativeMethods.NETSYNC_LOG_DEBUG,
        Trace = NativeMethods.NETSYNC_LOG_TRACE,
    }

    /// <summary>How remote entities are shown (see docs/sync-core.md).</summary>
    public enum InterpolationMode : uint
    {
        /// <summary>S1: a fixed number of frames behind the newest.</summary>
        Literal = NativeMethods.NETSYNC_MODE_LITERAL,
        /// <summary>Delay adapted to the network (the default).</summary>
        Adaptive = NativeMethods.NETSYNC_MODE_ADAPTIVE,
        /// <summary>A fixed delay behind the estimated server clock.</summary>
        Fixed = NativeMethods.NETSYNC_MODE_FIXED,
        /// <summary>The baseline of today's Unity libraries (a buffer of send intervals).</summary>
        Buffered = NativeMethods.NETSYNC_MODE_BUFFERED,
        /// <summary>Dead reckoning to the present with S4 smoothing.</summary>
        Predicted = NativeMethods.NETSYNC_MODE_PREDICTED,
        /// <summary>Per-entity mode only: follow the timeline's mode.</summary>
        Inherit = NativeMethods.NETSYNC_MODE_INHERIT,
    }

    /// <summary>Order of dead reckoning.</summary>
    public enum PredictionOrder : uint
    {
        First = NativeMethods.NETSYNC_ORDER_FIRST,
        Second = NativeMethods.NETSYNC_ORDER_SECOND,
    }

    /// <summary>Smoothing curve of predicted mode.</summary>
    public enum SmoothingKind : uint
    {
        Snap = NativeMethods.NETSYNC_SMOOTHING_SNAP,
        Linear = NativeMethods.NETSYNC_SMOOTHING_LINEAR,
        Bezier = NativeMethods.NETSYNC_SMOOTHING_BEZIER,
        Exponential = NativeMethods.NETSYNC_SMOOTHING_EXPONENTIAL,
    }

    /// <summary>When an owned entity's state is worth sending.</summary>
    public enum SendPolicy : uint
    {
        Always = NativeMethods.NETSYNC_SEND_ALWAYS,
        OnChange = NativeMethods.NETSYNC_SEND_ON_CHANGE,
        DeadReckoning = NativeMethods.NETSYNC_SEND_DEAD_RECKONING,
    }

    /// <summary>What <see cref="SendFilter.Update"/> decided. Only <see cref="Skip"/> means "do not send".</summary>
    public enum SendDecision : uint
    {
        Skip = NativeMethods.NETSYNC_DECISION_SKIP,
        First = NativeMethods.NETSYNC_DECISION_FIRST,
        Always = NativeMethods.NETSYNC_DECISION_ALWAYS,
        Changed = NativeMethods.NETSYNC_DECISION_CHANGED,
        Heartbeat = NativeMethods.NETSYNC_DECISION_HEARTBEAT,
        Teleport = NativeMethods.NETSYNC_DECISION_TELEPORT,
    }

    /// <summary>Bits of <see cref="NetsyncSample"/>.flags.</summary>
    [Flags]
    public enum SampleFlags : uint
    {
        None = 0,
        HasVelocity = NativeMethods.NETSYNC_SAMPLE_HAS_VELOCITY,
        HasAngularVelocity = NativeMethods.NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY,
        /// <summary>The entity jumped here: snap, do not sweep.</summary>
        Teleport = NativeMethods.NETSYNC_SAMPLE_TELEPORT,
        /// <summary>States before this one were lost in transit.</summary>
        AfterGap = NativeMethods.NETSYNC_SAMPLE_AFTER_GAP,
    }

    /// <summary>Bits of <see cref="NetsyncTransform"/>.flags.</summary>
    [Flags]
    public enum TransformFlags : uint
    {
        None = 0,
        Extrapolated = NativeMethods.NETSYNC_TRANSFORM_EXTRAPOLATED,
        Held = NativeMethods.NETSYNC_TRANSFORM_HELD,
        Predicted = NativeMethods.NETSYNC_TRANSFORM_PREDICTED,
        Blending = NativeMethods.NETSYNC_TRANSFORM_BLENDING,
        /// <summary>A scripted element, computed from its path and the server clock.</summary>
        Scripted = NativeMethods.NETSYNC_TRANSFORM_SCRIPTED,
    }

    /// <summary>Why a remote entity was removed (<see cref="SyncClient.EntityRemoved"/>).</summary>
    public enum RemovalReason : uint
    {
        /// <summary>A library that does not report the reason.</summary>
        None = 0,
        /// <summary>Its owner unregistered it.</summary>
        Unregistered = NativeMethods.NETSYNC_REMOVED_UNREGISTERED,
        /// <summary>Its owner left the game.</summary>
        OwnerLeft = NativeMethods.NETSYNC_REMOVED_OWNER_LEFT,
        /// <summary>It left this client's interest; it comes back with full state if it re-enters.</summary>
        OutOfInterest = NativeMethods.NETSYNC_REMOVED_OUT_OF_INTEREST,
        /// <summary>Not heard of again after a reconnect.</summary>
        Stale = NativeMethods.NETSYNC_REMOVED_STALE,
        /// <summary>A scripted element's life ended.</summary>
        Expired = NativeMethods.NETSYNC_REMOVED_EXPIRED,
    }

    /// <summary>What a received <see cref="NetsyncMessage"/> is.</summary>
    public enum MessageKind : uint
    {
        /// <summary>A global command: every client gets it once, in the same order.</summary>
        GlobalCommand = NativeMethods.NETSYNC_MESSAGE_GLOBAL_COMMAND,
        /// <summary>A command for a component of an entity this receiver holds.</summary>
        ComponentCommand = NativeMethods.NETSYNC_MESSAGE_COMPONENT_COMMAND,
        /// <summary>The latest state of a synced component of a remote entity.</summary>
        ComponentState = NativeMethods.NETSYNC_MESSAGE_COMPONENT_STATE,
    }

    /// <summary>Who holds a neutral object before anyone hit it
    /// (<see cref="NetsyncServerConfig.NeutralInitialHolder"/>).</summary>
    public enum NeutralInitialHolder : uint
    {
        /// <summary>The first client that registers it simulates it (first ready, first served).</summary>
        FirstReady = NativeMethods.NETSYNC_NEUTRAL_FIRST_READY,
        /// <summary>Nobody, until a client claims it by a collision; the relay keeps its last state.</summary>
        Nobody = NativeMethods.NETSYNC_NEUTRAL_NOBODY,
    }

    /// <summary>What a <see cref="NetsyncServerEvent"/> reports.</summary>
    public enum ServerEventKind : uint
    {
        /// <summary>A client was admitted (<c>client_id</c>).</summary>
        ClientJoined = NativeMethods.NETSYNC_SERVER_EVENT_CLIENT_JOINED,
        /// <summary>A client left or timed out (<c>client_id</c>).</summary>
        ClientLeft = NativeMethods.NETSYNC_SERVER_EVENT_CLIENT_LEFT,
        /// <summary>The relay refused a queued call about <c>entity_id</c> (see <see cref="CallRefusal"/>).</summary>
        CallRefused = NativeMethods.NETSYNC_SERVER_EVENT_CALL_REFUSED,
        /// <summary>The relay refused a scripted spawn (<c>entity_id</c>: the element): it exists nowhere.</summary>
        SpawnRefused = NativeMethods.NETSYNC_SERVER_EVENT_SPAWN_REFUSED,
        /// <summary>Lockstep: <c>client_id</c> sent no input for frame <c>entity_id</c> in time; its input is filled.</summary>
        LockstepStalled = NativeMethods.NETSYNC_SERVER_EVENT_LOCKSTEP_STALLED,
        /// <summary>Lockstep: <c>client_id</c>'s state hash for frame <c>entity_id</c> differs from the majority's.</summary>
        LockstepDesync = NativeMethods.NETSYNC_SERVER_EVENT_LOCKSTEP_DESYNC,
    }

    /// <summary>Why the relay refused a call of its embedded server (<see cref="RelayServer.CallRefused"/>).</summary>
    public enum CallRefusal : uint
    {
        None = 0,
        /// <summary>A client registered the entity (controlled or neutral): it is not server-owned.</summary>
        NotServerOwned = NativeMethods.NETSYNC_SERVER_REFUSED_NOT_SERVER_OWNED,
        /// <summary>No entity with that id.</summary>
        UnknownEntity = NativeMethods.NETSYNC_SERVER_REFUSED_UNKNOWN_ENTITY,
        /// <summary>Nobody holds the entity, so nobody can take the command.</summary>
        NoHolder = NativeMethods.NETSYNC_SERVER_REFUSED_NO_HOLDER,
        /// <summary>The payload is over <see cref="NetsyncLibrary.MaxPayload"/>.</summary>
        TooLarge = NativeMethods.NETSYNC_SERVER_REFUSED_TOO_LARGE,
        /// <summary>Over a configured limit (components per entity, live scripted elements).</summary>
        Limit = NativeMethods.NETSYNC_SERVER_REFUSED_LIMIT,
        /// <summary>A value out of range (a scripted spawn).</summary>
        Invalid = NativeMethods.NETSYNC_SERVER_REFUSED_INVALID,
    }

    /// <summary>Where a client stands in the relay's lockstep match.</summary>
    public enum LockstepState : uint
    {
        Idle = NativeMethods.NETSYNC_LOCKSTEP_STATE_IDLE,
        /// <summary>Asked to join (or joining again after a reconnect): inputs wait.</summary>
        Joining = NativeMethods.NETSYNC_LOCKSTEP_STATE_JOINING,
        Active = NativeMethods.NETSYNC_LOCKSTEP_STATE_ACTIVE,
    }

    /// <summary>What <see cref="NetsyncLockstepFrame"/> holds.</summary>
    public enum LockstepItemKind : uint
    {
        /// <summary>A confirmed frame: every member's input.</summary>
        Frame = NativeMethods.NETSYNC_LOCKSTEP_ITEM_FRAME,
        /// <summary>The game state after the frame, to load before the frames after it.</summary>
        Snapshot = NativeMethods.NETSYNC_LOCKSTEP_ITEM_SNAPSHOT,
    }

    /// <summary>Bits of <see cref="NetsyncLockstepInput"/>.flags.</summary>
    [Flags]
    public enum LockstepInputFlags : uint
    {
        None = 0,
        /// <summary>The relay filled this input: the member stalled (the input is empty).</summary>
        Filled = NativeMethods.NETSYNC_LOCKSTEP_INPUT_FILLED,
        /// <summary>The member's first frame in the match.</summary>
        Joined = NativeMethods.NETSYNC_LOCKSTEP_INPUT_JOINED,
    }

    /// <summary>What a <see cref="NetsyncLockstepEvent"/> reports.</summary>
    public enum LockstepEventKind : uint
    {
        Started = NativeMethods.NETSYNC_LOCKSTEP_EVENT_STARTED,
        MemberJoined = NativeMethods.NETSYNC_LOCKSTEP_EVENT_MEMBER_JOINED,
        MemberLeft = NativeMethods.NETSYNC_LOCKSTEP_EVENT_MEMBER_LEFT,
        /// <summary>The relay fills the member's input from this frame on.</summary>
        MemberStalled = NativeMethods.NETSYNC_LOCKSTEP_EVENT_MEMBER_STALLED,
        MemberResumed = NativeMethods.NETSYNC_LOCKSTEP_EVENT_MEMBER_RESUMED,
        /// <summary>State hashes differ first at this frame; the client is outside the majority.</summary>
        Desync = NativeMethods.NETSYNC_LOCKSTEP_EVENT_DESYNC,
        /// <summary>A joiner needs a snapshot: provide one.</summary>
        SnapshotWanted = NativeMethods.NETSYNC_LOCKSTEP_EVENT_SNAPSHOT_WANTED,
        /// <summary>The relay refused the join (see <see cref="LockstepRefusal"/>).</summary>
        Refused = NativeMethods.NETSYNC_LOCKSTEP_EVENT_REFUSED,
        /// <summary>The relay is a new process: the match starts over from frame 0.</summary>
        Restarted = NativeMethods.NETSYNC_LOCKSTEP_EVENT_RESTARTED,
        /// <summary>The game took no frames for too long; this client left the match.</summary>
        Overflow = NativeMethods.NETSYNC_LOCKSTEP_EVENT_OVERFLOW,
    }

    /// <summary>Why the relay refused a lockstep join.</summary>
    public enum LockstepRefusal : uint
    {
        None = 0,
        /// <summary>The match has its most members.</summary>
        Full = NativeMethods.NETSYNC_LOCKSTEP_REFUSED_FULL,
    }

    /// <summary>Why a scripted element is not shown on this client.</summary>
    public enum ScriptedRefusal : uint
    {
        None = 0,
        NoConfig = NativeMethods.NETSYNC_SCRIPTED_REFUSED_NO_CONFIG,
        /// <summary>The server's path configuration differs (fingerprints).</summary>
        ConfigMismatch = NativeMethods.NETSYNC_SCRIPTED_REFUSED_CONFIG_MISMATCH,
        UnknownPath = NativeMethods.NETSYNC_SCRIPTED_REFUSED_UNKNOWN_PATH,
        TooLong = NativeMethods.NETSYNC_SCRIPTED_REFUSED_TOO_LONG,
    }

    /// <summary>Flags of <see cref="SyncClient.SetInterest(InterestFlags, byte, uint, ReadOnlySpan{uint})"/>.</summary>
    [Flags]
    public enum InterestFlags : uint
    {
        None = 0,
        /// <summary>See every entity (spectator, game master); areas are ignored, device class still applies.</summary>
        GlobalView = NativeMethods.NETSYNC_INTEREST_GLOBAL_VIEW,
    }
}
