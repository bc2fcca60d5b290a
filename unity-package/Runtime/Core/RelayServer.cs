using System;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// A relay embedded in this process (a host or a dedicated server) on a
    /// thread of its own. Dispose stops and joins it. Partial: each group of
    /// native calls lives in a file of its own (RelayServer.*.cs).
    /// </summary>
    public sealed unsafe partial class RelayServer : IDisposable
    {
        readonly ServerHandle _handle;
        readonly NetsyncServerConfig _config;

        RelayServer(ServerHandle handle, NetsyncServerConfig config)
        {
            _handle = handle;
            _config = config;
            NetsyncRuntime.Track(this);
        }

        /// <summary>Starts a relay with default settings on <paramref name="port"/> (0 picks a free one).</summary>
        public static RelayServer Start(ushort port, string bindIp = "0.0.0.0")
        {
            var config = NetsyncServerConfig.CreateDefault();
            config.port = port;
            return Start(config, bindIp);
        }

        /// <summary>Starts a relay and returns once its socket is bound. Its game
        /// side (server-owned entities, commands, events: RelayServer.Game.cs,
        /// .Messages.cs, .Events.cs) is there unless <c>server_inbox_capacity</c> is 0.</summary>
        /// <param name="config">Start from <see cref="NetsyncServerConfig.CreateDefault"/>.</param>
        /// <param name="bindIp">"0.0.0.0", "127.0.0.1", "::"; null means "0.0.0.0".</param>
        /// <exception cref="NetsyncException">NETSYNC_ERR_IO when the port is taken,
        /// NETSYNC_ERR_INVALID_ARGUMENT for a bad address or setting.</exception>
        public static RelayServer Start(NetsyncServerConfig config, string bindIp = "0.0.0.0")
        {
            NetsyncLibrary.EnsureCompatible();
            var ip = bindIp == null ? null : Utf8.ToNative(bindIp, "bindIp");
            var handle = new ServerHandle();
            NetsyncServer* native = null;
            NetsyncResult result;
            fixed (byte* b = ip)
            {
                result = NativeMethods.netsync_server_start(&config, b, &native);
            }
            return Started(handle, result, native, config);
        }

        /// <summary>Starts a relay as <see cref="Start(NetsyncServerConfig, string)"/>, recording
        /// everything it accepts and sends on (states, send-right changes, commands, component
        /// states) to the file at <paramref name="path"/> until it is disposed.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_IO when the file cannot be created or
        /// the port is taken.</exception>
        public static RelayServer StartRecording(NetsyncServerConfig config, string path, string bindIp = "0.0.0.0")
        {
            NetsyncLibrary.EnsureCompatible();
            var ip = bindIp == null ? null : Utf8.ToNative(bindIp, "bindIp");
            var file = Utf8.ToNative(path, "path");
            var handle = new ServerHandle();
            NetsyncServer* native = null;
            NetsyncResult result;
            fixed (byte* b = ip)
            fixed (byte* f = file)
            {
                result = NativeMethods.netsync_server_start_recording(&config, b, f, &native);
            }
            return Started(handle, result, native, config);
        }

        /// <summary>
        /// Starts a relay in secure mode, as <see cref="Start(NetsyncServerConfig, string)"/>:
        /// only clients presenting a connect token issued with
        /// <paramref name="secret"/> (<see cref="ConnectTokens.IssueToken"/>,
        /// on the game's backend) are admitted, under the token's client id,
        /// and every datagram after the handshake is encrypted and
        /// authenticated. A plain client is refused with
        /// <see cref="DisconnectReason.TokenRequired"/>; forged tokens and
        /// datagrams are dropped and counted (<see cref="Stats"/>:
        /// <c>dropped_bad_token</c>, <c>dropped_forged</c>, <c>dropped_replayed</c>).
        /// </summary>
        /// <param name="config">Start from <see cref="NetsyncServerConfig.CreateDefault"/>.</param>
        /// <param name="secret">The relay secret (<see cref="ConnectTokens.GenerateSecret"/>,
        /// <see cref="ConnectTokens.SecretSize"/> bytes): keep it on the relay and the backend only.</param>
        /// <param name="bindIp">"0.0.0.0", "127.0.0.1", "::"; null means "0.0.0.0".</param>
        /// <param name="publicAddress">The "IP:port" tokens name, as clients reach the relay
        /// (behind NAT or a port mapping); null: the bound address, any IP when bound to 0.0.0.0.</param>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT for a secret of another
        /// size, a bad address or setting; NETSYNC_ERR_NULL_POINTER for a null or empty secret;
        /// NETSYNC_ERR_IO when the port is taken.</exception>
        public static RelayServer StartSecure(NetsyncServerConfig config, byte[] secret, string bindIp = "0.0.0.0",
                                              string publicAddress = null)
        {
            NetsyncLibrary.EnsureCompatible();
            var ip = bindIp == null ? null : Utf8.ToNative(bindIp, "bindIp");
            var address = publicAddress == null ? null : Utf8.ToNative(publicAddress, "publicAddress");
            var handle = new ServerHandle();
            NetsyncServer* native = null;
            NetsyncResult result;
            fixed (byte* b = ip)
            fixed (byte* s = secret)
            fixed (byte* a = address)
            {
                result = NativeMethods.netsync_server_start_secure(
                    &config, b, s, ConnectTokens.LengthOf(secret), a, &native);
            }
            return Started(handle, result, native, config);
        }

        /// <summary>The relay a start call made, owned by <paramref name="handle"/>, or the
        /// native error as an exception (the unused handle released).</summary>
        static RelayServer Started(ServerHandle handle, NetsyncResult result, NetsyncServer* native,
                                   NetsyncServerConfig config)
        {
            if (result != NetsyncResult.NETSYNC_OK)
            {
                handle.Dispose();
                throw NetsyncLibrary.Failure(result);
            }
            handle.Adopt((IntPtr)native);
            return new RelayServer(handle, config);
        }

        /// <summary>The native handle, for calls through <see cref="NativeMethods"/> directly.</summary>
        public ServerHandle Handle
        {
            get { return _handle; }
        }

        public bool IsDisposed
        {
            get { return _handle.IsClosed; }
        }

        /// <summary>The settings this relay was started with (<c>port</c> as asked: 0 stays 0; see <see cref="Port"/>).</summary>
        public NetsyncServerConfig Config
        {
            get { return _config; }
        }

        /// <summary>The UDP port the relay listens on.</summary>
        public ushort Port
        {
            get
            {
                ushort port;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_server_port((NetsyncServer*)l.Pointer, &port));
                }
                return port;
            }
        }

        /// <summary>The relay's counters: clients, traffic, refusals, claims, commands, dropped server messages.</summary>
        public NetsyncServerStats Stats
        {
            get
            {
                NetsyncServerStats stats;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_server_stats((NetsyncServer*)l.Pointer, &stats));
                }
                return stats;
            }
        }

        /// <summary>Stops the relay and joins its thread. Idempotent.</summary>
        public void Dispose()
        {
            NetsyncRuntime.Untrack(this);
            _handle.Dispose();
        }
    }
}
