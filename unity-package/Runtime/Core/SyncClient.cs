using System;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// A connection to a relay, with its own network thread. Call it from
    /// one thread (the engine's main thread): overlapping calls from two
    /// threads fail with NETSYNC_ERR_BUSY. Dispose stops and joins the
    /// network thread. Partial: each group of native calls lives in a file
    /// of its own (SyncClient.*.cs).
    /// </summary>
    public sealed unsafe partial class SyncClient : IDisposable
    {
        const int InitialTransformCapacity = 64;

        readonly ClientHandle _handle;
        NetsyncTransform[] _transforms = new NetsyncTransform[InitialTransformCapacity];
        int _transformCount;

        SyncClient(ClientHandle handle)
        {
            _handle = handle;
            NetsyncRuntime.Track(this);
        }

        /// <summary>Starts connecting with the library's default settings and returns at once.</summary>
        /// <param name="address">Numeric "IP:port" ("127.0.0.1:7777", "[::1]:7777"); resolve host names first.</param>
        public static SyncClient Connect(string address)
        {
            return Connect(address, NetsyncClientConfig.CreateDefault());
        }

        /// <summary>Starts connecting and returns at once; watch <see cref="State"/> or the events.</summary>
        /// <param name="address">Numeric "IP:port"; resolve host names first (this call never blocks on DNS).</param>
        /// <param name="config">Start from <see cref="NetsyncClientConfig.CreateDefault"/>.</param>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT for a bad address or setting.</exception>
        public static SyncClient Connect(string address, NetsyncClientConfig config)
        {
            NetsyncLibrary.EnsureCompatible();
            var addressBytes = Utf8.ToNative(address, "address");
            var handle = new ClientHandle();
            NetsyncClient* native = null;
            NetsyncResult result;
            fixed (byte* a = addressBytes)
            {
                result = NativeMethods.netsync_client_connect(&config, a, &native);
            }
            if (result != NetsyncResult.NETSYNC_OK)
            {
                handle.Dispose();
                throw NetsyncLibrary.Failure(result);
            }
            handle.Adopt((IntPtr)native);
            return new SyncClient(handle);
        }

        /// <summary>Starts connecting in secure mode with the library's default settings and returns at once.</summary>
        /// <param name="token">The connect token from the game's backend (<see cref="ConnectTokens.IssueToken"/>).</param>
        /// <param name="address">Numeric "IP:port" of the relay; null: the address the token names.</param>
        public static SyncClient ConnectSecure(byte[] token, string address = null)
        {
            return ConnectSecure(token, NetsyncClientConfig.CreateDefault(), address);
        }

        /// <summary>
        /// Starts connecting to a relay in secure mode (<see cref="RelayServer.StartSecure"/>)
        /// with a connect token from the game's backend, and returns at once;
        /// watch <see cref="State"/> or the events. The relay admits this
        /// client under the token's client id (the id of <see cref="Connected"/>)
        /// and every datagram is encrypted and authenticated. Refusals come
        /// as <see cref="Disconnected"/>: <see cref="DisconnectReason.TokenExpired"/>
        /// (get a new token), <see cref="DisconnectReason.NotSecure"/> (a relay in
        /// plain mode), <see cref="DisconnectReason.TokenInUse"/> (retried while
        /// reconnecting is on). A token for another relay or secret is dropped
        /// by the relay: the connect times out.
        /// </summary>
        /// <param name="token">The token's bytes as the backend issued them
        /// (<see cref="ConnectTokens.TokenSize"/>).</param>
        /// <param name="config">Start from <see cref="NetsyncClientConfig.CreateDefault"/>.</param>
        /// <param name="address">Numeric "IP:port" of the relay; null: the address the token names.</param>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT for a token of another
        /// size or one that is not a netsync connect token, a bad address or setting;
        /// NETSYNC_ERR_NULL_POINTER for a null or empty token.</exception>
        public static SyncClient ConnectSecure(byte[] token, NetsyncClientConfig config, string address = null)
        {
            NetsyncLibrary.EnsureCompatible();
            var addressBytes = address == null ? null : Utf8.ToNative(address, "address");
            var handle = new ClientHandle();
            NetsyncClient* native = null;
            NetsyncResult result;
            fixed (byte* a = addressBytes)
            fixed (byte* t = token)
            {
                result = NativeMethods.netsync_client_connect_secure(
                    &config, a, t, ConnectTokens.LengthOf(token), &native);
            }
            if (result != NetsyncResult.NETSYNC_OK)
            {
                handle.Dispose();
                throw NetsyncLibrary.Failure(result);
            }
            handle.Adopt((IntPtr)native);
            return new SyncClient(handle);
        }

        /// <summary>The native handle, for calls through <see cref="NativeMethods"/> directly.</summary>
        public ClientHandle Handle
        {
            get { return _handle; }
        }

        public bool IsDisposed
        {
            get { return _handle.IsClosed; }
        }

        /// <summary>Connecting, connected or disconnected (after a refusal or timeout without reconnect).</summary>
        public ConnectionState State
        {
            get
            {
                uint state;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_state((NetsyncClient*)l.Pointer, &state));
                }
                return (ConnectionState)state;
            }
        }

        /// <summary>Declares an entity this client registers, with its send-right kind.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE when already registered,
        /// NETSYNC_ERR_UNKNOWN_ENTITY when another client owns it.</exception>
        public void RegisterEntity(ulong entityId, EntityKind kind = EntityKind.Controlled)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_register_entity_kind(
                    (NetsyncClient*)l.Pointer, entityId, (uint)kind));
            }
        }

        /// <summary>Stops owning and sending an entity.</summary>
        public void UnregisterEntity(ulong entityId)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_unregister_entity((NetsyncClient*)l.Pointer, entityId));
            }
        }

        /// <summary>
        /// <paramref name="mine"/> (controlled by this client) hit the neutral
        /// object <paramref name="other"/>: claims its send right. Optimistic:
        /// simulate <paramref name="other"/> and set its state from now on;
        /// <see cref="RightGained"/> or <see cref="RightRefused"/> follows.
        /// </summary>
        public void ReportCollision(ulong mine, ulong other)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_report_collision((NetsyncClient*)l.Pointer, mine, other));
            }
        }

        /// <summary>A neutral object this client holds is at rest: its right returns to nobody.</summary>
        public void ReportAtRest(ulong entityId)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_report_at_rest((NetsyncClient*)l.Pointer, entityId));
            }
        }

        /// <summary>True when this client holds (or is claiming) the right to send the entity: simulate it locally.</summary>
        public bool Holds(ulong entityId)
        {
            byte holds;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_holds((NetsyncClient*)l.Pointer, entityId, &holds));
            }
            return holds != 0;
        }

        /// <summary>
        /// Who holds the entity's send right as the relay last announced it:
        /// <paramref name="holderClientId"/> is a client id (compare it with the
        /// id of <see cref="Connected"/>), 0 for nobody or the server;
        /// <paramref name="epoch"/> counts the changes of hands so far. False
        /// (no exception) until the relay has announced the entity, which it
        /// does for every registered one. A claim of this client that the
        /// relay has not answered yet is not shown here: <see cref="Holds"/>
        /// says whether this client acts as the holder.
        /// </summary>
        public bool TryGetHolder(ulong entityId, out uint holderClientId, out uint epoch)
        {
            uint holder, e;
            NetsyncResult result;
            using (var l = _handle.Acquire())
            {
                result = NativeMethods.netsync_client_holder((NetsyncClient*)l.Pointer, entityId, &holder, &e);
            }
            if (result == NetsyncResult.NETSYNC_ERR_UNKNOWN_ENTITY)
            {
                holderClientId = 0;
                epoch = 0;
                return false;
            }
            NetsyncLibrary.Check(result);
            holderClientId = holder;
            epoch = e;
            return true;
        }

        /// <summary>The true state of an owned (or held) entity this frame; sent at the send rate when worth it.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT for NaN, infinite or zero-rotation states.</exception>
        public void SetEntityState(in NetsyncSample state)
        {
            // A copy on the stack: mcs and Roslyn disagree on fixing an `in` parameter.
            var copy = state;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_set_entity_state((NetsyncClient*)l.Pointer, &copy));
            }
        }

        /// <summary>The true pose of an owned entity this frame.</summary>
        public void SetEntityState(ulong entityId, NetsyncVec3 position, NetsyncQuat rotation)
        {
            var sample = new NetsyncSample(entityId, position, rotation);
            SetEntityState(in sample);
        }

        /// <summary>
        /// Advances to engine time <paramref name="now"/> (seconds, monotonic,
        /// unscaled) and returns every remote entity's transform for this
        /// frame. The span views a buffer this client reuses: it is valid
        /// until the next tick, and no tick allocates once the buffer has
        /// grown to the scene.
        /// </summary>
        public ReadOnlySpan<NetsyncTransform> Tick(double now)
        {
            using (var l = _handle.Acquire())
            {
                while (true)
                {
                    UIntPtr count;
                    NetsyncResult result;
                    fixed (NetsyncTransform* buffer = _transforms)
                    {
                        result = NativeMethods.netsync_client_tick(
                            (NetsyncClient*)l.Pointer, now, buffer, (UIntPtr)_transforms.Length, &count);
                    }
                    if (result == NetsyncResult.NETSYNC_OK)
                    {
                        _transformCount = (int)count;
                        break;
                    }
                    if (result != NetsyncResult.NETSYNC_ERR_BUFFER_TOO_SMALL)
                    {
                        _transformCount = 0;
                        throw NetsyncLibrary.Failure(result);
                    }
                    // The tick happened; grow and read the batch again at the
                    // same time (ticking twice at one time changes nothing).
                    _transforms = new NetsyncTransform[Math.Max((int)count, _transforms.Length * 2)];
                }
            }
            return new ReadOnlySpan<NetsyncTransform>(_transforms, 0, _transformCount);
        }

        /// <summary>The transforms of the last tick (same view <see cref="Tick"/> returned).</summary>
        public ReadOnlySpan<NetsyncTransform> LastTransforms
        {
            get { return new ReadOnlySpan<NetsyncTransform>(_transforms, 0, _transformCount); }
        }

        /// <summary>Estimated server time at engine time <paramref name="now"/>: the clock owners stamp physics with.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE before the relay's clock is known.</exception>
        public double ServerTime(double now)
        {
            double serverTime;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_server_time((NetsyncClient*)l.Pointer, now, &serverTime));
            }
            return serverTime;
        }

        /// <summary>Like <see cref="ServerTime"/>, but false (no exception) before the relay's clock is known.</summary>
        public bool TryGetServerTime(double now, out double serverTime)
        {
            double t;
            NetsyncResult result;
            using (var l = _handle.Acquire())
            {
                result = NativeMethods.netsync_client_server_time((NetsyncClient*)l.Pointer, now, &t);
            }
            if (result == NetsyncResult.NETSYNC_ERR_WRONG_STATE)
            {
                serverTime = 0;
                return false;
            }
            NetsyncLibrary.Check(result);
            serverTime = t;
            return true;
        }

        /// <summary>Server time that <paramref name="mode"/> showed at the last tick.</summary>
        public double RenderTime(InterpolationMode mode)
        {
            double t;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_render_time((NetsyncClient*)l.Pointer, (uint)mode, &t));
            }
            return t;
        }

        /// <summary>Counters and estimates: RTT, jitter, render delay, bandwidth, loss.</summary>
        public NetsyncClientStats Stats
        {
            get
            {
                NetsyncClientStats stats;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_stats((NetsyncClient*)l.Pointer, &stats));
                }
                return stats;
            }
        }

        /// <summary>Stops and joins the network thread, then frees the client. Idempotent.</summary>
        public void Dispose()
        {
            NetsyncRuntime.Untrack(this);
            _handle.Dispose();
        }
    }
}
