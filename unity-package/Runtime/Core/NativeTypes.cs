// Additions to the generated blittable structs (they are partial). Layouts
// stay exactly those of the C header; nothing here adds a field.
using System;
using System.Globalization;

namespace Netsync.Native
{
    public partial struct NetsyncVec3 : IEquatable<NetsyncVec3>
    {
        public NetsyncVec3(float x, float y, float z)
        {
            this.x = x;
            this.y = y;
            this.z = z;
        }

        public static NetsyncVec3 Zero
        {
            get { return default(NetsyncVec3); }
        }

        public bool Equals(NetsyncVec3 other)
        {
            return x == other.x && y == other.y && z == other.z;
        }

        public override bool Equals(object obj)
        {
            return obj is NetsyncVec3 && Equals((NetsyncVec3)obj);
        }

        public override int GetHashCode()
        {
            return x.GetHashCode() ^ (y.GetHashCode() << 2) ^ (z.GetHashCode() >> 2);
        }

        public override string ToString()
        {
            return string.Format(CultureInfo.InvariantCulture, "({0:F3}, {1:F3}, {2:F3})", x, y, z);
        }
    }

    public partial struct NetsyncQuat : IEquatable<NetsyncQuat>
    {
        public NetsyncQuat(float x, float y, float z, float w)
        {
            this.x = x;
            this.y = y;
            this.z = z;
            this.w = w;
        }

        public static NetsyncQuat Identity
        {
            get { return new NetsyncQuat(0f, 0f, 0f, 1f); }
        }

        public bool Equals(NetsyncQuat other)
        {
            return x == other.x && y == other.y && z == other.z && w == other.w;
        }

        public override bool Equals(object obj)
        {
            return obj is NetsyncQuat && Equals((NetsyncQuat)obj);
        }

        public override int GetHashCode()
        {
            return x.GetHashCode() ^ (y.GetHashCode() << 2) ^ (z.GetHashCode() >> 2) ^ (w.GetHashCode() >> 1);
        }

        public override string ToString()
        {
            return string.Format(CultureInfo.InvariantCulture, "({0:F4}, {1:F4}, {2:F4}, {3:F4})", x, y, z, w);
        }
    }

    public partial struct NetsyncSample
    {
        /// <summary>A pose without velocities.</summary>
        public NetsyncSample(ulong entityId, NetsyncVec3 position, NetsyncQuat rotation)
        {
            entity_id = entityId;
            this.position = position;
            this.rotation = rotation;
            linear_velocity = default(NetsyncVec3);
            angular_velocity = default(NetsyncVec3);
            flags = 0;
        }

        /// <summary>A pose with linear (m/s) and world-space angular (rad/s) velocity.</summary>
        public NetsyncSample(ulong entityId, NetsyncVec3 position, NetsyncQuat rotation,
            NetsyncVec3 linearVelocity, NetsyncVec3 angularVelocity)
        {
            entity_id = entityId;
            this.position = position;
            this.rotation = rotation;
            linear_velocity = linearVelocity;
            angular_velocity = angularVelocity;
            flags = (uint)(SampleFlags.HasVelocity | SampleFlags.HasAngularVelocity);
        }

        public SampleFlags Flags
        {
            get { return (SampleFlags)flags; }
            set { flags = (uint)value; }
        }
    }

    public partial struct NetsyncTransform
    {
        public TransformFlags Flags
        {
            get { return (TransformFlags)flags; }
        }

        public override string ToString()
        {
            return "#" + entity_id + " " + position + " " + rotation + " " + Flags;
        }
    }

    public partial struct NetsyncClientEvent
    {
        public ClientEventKind Kind
        {
            get { return (ClientEventKind)kind; }
        }

        /// <summary>Disconnected: why.</summary>
        public DisconnectReason DisconnectReason
        {
            get { return kind == NativeMethods.NETSYNC_EVENT_DISCONNECTED ? (DisconnectReason)reason : Netsync.DisconnectReason.None; }
        }

        /// <summary>EntityRemoved: why.</summary>
        public RemovalReason RemovalReason
        {
            get { return kind == NativeMethods.NETSYNC_EVENT_ENTITY_REMOVED ? (RemovalReason)reason : Netsync.RemovalReason.None; }
        }

        /// <summary>RightRefused: why.</summary>
        public ClaimRefusal ClaimRefusal
        {
            get { return kind == NativeMethods.NETSYNC_EVENT_RIGHT_REFUSED ? (ClaimRefusal)reason : Netsync.ClaimRefusal.None; }
        }

        public override string ToString()
        {
            return Kind + " client=" + client_id + " entity=" + entity_id + " reason=" + reason;
        }
    }

    public partial struct NetsyncMessage
    {
        public MessageKind Kind
        {
            get { return (MessageKind)kind; }
        }

        /// <summary>Payload size in bytes.</summary>
        public int Size
        {
            get { return (int)size; }
        }

        public override string ToString()
        {
            return Kind + " from " + sender + " entity=" + entity_id + " component=" + component_id +
                   " seq=" + sequence + " bytes=" + size;
        }
    }

    public partial struct NetsyncClientStats
    {
        public ConnectionState State
        {
            get { return (ConnectionState)state; }
        }
    }

    public partial struct NetsyncReplayInfo
    {
        public RecordingKind Kind
        {
            get { return (RecordingKind)kind; }
        }
    }

    public unsafe partial struct NetsyncClientConfig
    {
        /// <summary>The library's defaults (<c>netsync_client_config_default</c>).</summary>
        public static NetsyncClientConfig CreateDefault()
        {
            NetsyncLibrary.EnsureCompatible();
            NetsyncClientConfig config;
            NetsyncLibrary.Check(NativeMethods.netsync_client_config_default(&config));
            return config;
        }

        public NetworkProfile Conditioner
        {
            get { return (NetworkProfile)conditioner; }
            set { conditioner = (uint)value; }
        }

        public bool Reconnect
        {
            get { return reconnect != 0; }
            set { reconnect = value ? (byte)1 : (byte)0; }
        }
    }

    public unsafe partial struct NetsyncServerConfig
    {
        /// <summary>The library's defaults (<c>netsync_server_config_default</c>).</summary>
        public static NetsyncServerConfig CreateDefault()
        {
            NetsyncLibrary.EnsureCompatible();
            NetsyncServerConfig config;
            NetsyncLibrary.Check(NativeMethods.netsync_server_config_default(&config));
            return config;
        }

        /// <summary>Who holds a neutral object before anyone hit it (<c>neutral_initial_holder</c>).</summary>
        public NeutralInitialHolder NeutralInitialHolder
        {
            get { return (NeutralInitialHolder)neutral_initial_holder; }
            set { neutral_initial_holder = (uint)value; }
        }
    }

    public partial struct NetsyncServerEvent
    {
        public ServerEventKind Kind
        {
            get { return (ServerEventKind)kind; }
        }

        /// <summary>CallRefused: why.</summary>
        public CallRefusal CallRefusal
        {
            get { return kind == NativeMethods.NETSYNC_SERVER_EVENT_CALL_REFUSED || kind == NativeMethods.NETSYNC_SERVER_EVENT_SPAWN_REFUSED ? (CallRefusal)reason : Netsync.CallRefusal.None; }
        }

        public override string ToString()
        {
            return Kind + " client=" + client_id + " entity=" + entity_id + " reason=" + reason;
        }
    }

    public unsafe partial struct NetsyncTimelineConfig
    {
        /// <summary>The library's defaults (<c>netsync_timeline_config_default</c>).</summary>
        public static NetsyncTimelineConfig CreateDefault()
        {
            NetsyncLibrary.EnsureCompatible();
            NetsyncTimelineConfig config;
            NetsyncLibrary.Check(NativeMethods.netsync_timeline_config_default(&config));
            return config;
        }

        public InterpolationMode Mode
        {
            get { return (InterpolationMode)mode; }
            set { mode = (uint)value; }
        }
    }

    public unsafe partial struct NetsyncSendFilterConfig
    {
        /// <summary>The library's defaults (<c>netsync_send_filter_config_default</c>).</summary>
        public static NetsyncSendFilterConfig CreateDefault()
        {
            NetsyncLibrary.EnsureCompatible();
            NetsyncSendFilterConfig config;
            NetsyncLibrary.Check(NativeMethods.netsync_send_filter_config_default(&config));
            return config;
        }

        public SendPolicy Policy
        {
            get { return (SendPolicy)policy; }
            set { policy = (uint)value; }
        }
    }
}
