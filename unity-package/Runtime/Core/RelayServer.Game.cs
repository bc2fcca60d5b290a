using System;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// The game side of an embedded relay (a host, or a dedicated server
    /// with game logic): server-owned entities and their components, and
    /// commands from the server. Every call is queued for the relay thread
    /// and returns at once; a call the relay then refuses comes back as a
    /// <see cref="CallRefused"/> event (<see cref="DispatchEvents"/>), not as
    /// an exception. Exceptions are for what is wrong at the call: a bad
    /// sample, a payload over <see cref="NetsyncLibrary.MaxPayload"/>
    /// (NETSYNC_ERR_TOO_LARGE).
    /// </summary>
    public sealed unsafe partial class RelayServer
    {
        /// <summary>
        /// The relay's clock, in seconds since it started: the server time
        /// every client's <see cref="SyncClient.ServerTime"/> estimates, and
        /// the time server-owned states are stamped with.
        /// </summary>
        public double ServerTime
        {
            get
            {
                double t;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_server_time((NetsyncServer*)l.Pointer, &t));
                }
                return t;
            }
        }

        /// <summary>
        /// Moves server-owned entity <c>state.entity_id</c> (declared on first
        /// use), stamped with the relay's clock when the relay thread applies
        /// it. Every client that sees it shows it like any remote entity. An
        /// entity a client registered is refused: <see cref="CallRefused"/>
        /// with <see cref="CallRefusal.NotServerOwned"/>.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT for NaN, infinite or zero-rotation states.</exception>
        public void SetEntityState(in NetsyncSample state)
        {
            // A copy on the stack: mcs and Roslyn disagree on fixing an `in` parameter.
            var copy = state;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_server_set_entity_state((NetsyncServer*)l.Pointer, &copy));
            }
        }

        /// <summary>The pose of a server-owned entity, without velocities.</summary>
        public void SetEntityState(ulong entityId, NetsyncVec3 position, NetsyncQuat rotation)
        {
            var sample = new NetsyncSample(entityId, position, rotation);
            SetEntityState(in sample);
        }

        /// <summary>
        /// Removes server-owned entity <paramref name="entityId"/> everywhere:
        /// clients get <see cref="SyncClient.EntityRemoved"/> with
        /// <see cref="RemovalReason.Unregistered"/>.
        /// </summary>
        public void RemoveEntity(ulong entityId)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_server_remove_entity((NetsyncServer*)l.Pointer, entityId));
            }
        }

        /// <summary>
        /// The state of component <paramref name="componentId"/> of server-owned
        /// <paramref name="entityId"/> (declared on first use): every client
        /// that sees the entity gets it reliably, late joiners too.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_TOO_LARGE over <see cref="NetsyncLibrary.MaxPayload"/> bytes.</exception>
        public void SetComponentState(ulong entityId, uint componentId, ReadOnlySpan<byte> data)
        {
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = &Payload.Pin(data))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_server_set_component_state(
                        (NetsyncServer*)l.Pointer, entityId, componentId, p, (UIntPtr)data.Length));
                }
            }
        }

        /// <summary>
        /// Sends a global command from the server (sender 0): every client
        /// gets it once, in the one order all of them see, mixed with the
        /// clients' own global commands. A <c>byte[]</c> or an
        /// <see cref="ArraySegment{T}"/> converts to the span.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_TOO_LARGE over <see cref="NetsyncLibrary.MaxPayload"/> bytes.</exception>
        public void SendGlobalCommand(ReadOnlySpan<byte> data)
        {
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = &Payload.Pin(data))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_server_send_global_command(
                        (NetsyncServer*)l.Pointer, p, (UIntPtr)data.Length));
                }
            }
        }

        /// <summary>
        /// Sends a command for component <paramref name="componentId"/> of
        /// <paramref name="entityId"/> to the client that holds the entity
        /// (sender 0). Nobody holding it comes back as
        /// <see cref="CallRefusal.NoHolder"/>, no such entity as
        /// <see cref="CallRefusal.UnknownEntity"/>.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_TOO_LARGE over <see cref="NetsyncLibrary.MaxPayload"/> bytes.</exception>
        public void SendComponentCommand(ulong entityId, uint componentId, ReadOnlySpan<byte> data)
        {
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = &Payload.Pin(data))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_server_send_component_command(
                        (NetsyncServer*)l.Pointer, entityId, componentId, p, (UIntPtr)data.Length));
                }
            }
        }
    }
}
