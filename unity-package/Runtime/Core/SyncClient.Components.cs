using System;
using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class SyncClient
    {
        /// <summary>
        /// Declares component <paramref name="componentId"/> of an entity on this
        /// client: synced, its state and commands travel; unsynced, nothing of
        /// it leaves this client (its calls then fail with
        /// NETSYNC_ERR_UNSYNCED_COMPONENT). Registering again switches it.
        /// </summary>
        public void RegisterComponent(ulong entityId, uint componentId, bool synced)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_register_component(
                    (NetsyncClient*)l.Pointer, entityId, componentId, synced));
            }
        }

        /// <summary>
        /// The latest state of a synced component of an entity this client
        /// holds (at most <see cref="NetsyncLibrary.MaxPayload"/> bytes, else NETSYNC_ERR_TOO_LARGE): sent
        /// reliably when it changed, kept by the relay for late joiners.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_NOT_HELD when another client holds the entity,
        /// NETSYNC_ERR_UNSYNCED_COMPONENT, NETSYNC_ERR_UNKNOWN_COMPONENT.</exception>
        public void SetComponentState(ulong entityId, uint componentId, ReadOnlySpan<byte> data)
        {
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = &Payload.Pin(data))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_set_component_state(
                        (NetsyncClient*)l.Pointer, entityId, componentId, p, (UIntPtr)data.Length));
                }
            }
        }

        /// <summary>
        /// Sends a global command: reliably, once, to every client including
        /// this one, in the same order everywhere (and to an embedded server).
        /// Queued while disconnected.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_LIMIT when too many wait for the relay.</exception>
        public void SendGlobalCommand(ReadOnlySpan<byte> data)
        {
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = &Payload.Pin(data))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_send_global_command(
                        (NetsyncClient*)l.Pointer, p, (UIntPtr)data.Length));
                }
            }
        }

        /// <summary>
        /// Sends a command for a synced component (registered synced here):
        /// reliably, once, to whoever holds the entity, or to the embedded
        /// server when nobody does.
        /// </summary>
        public void SendComponentCommand(ulong entityId, uint componentId, ReadOnlySpan<byte> data)
        {
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = &Payload.Pin(data))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_send_component_command(
                        (NetsyncClient*)l.Pointer, entityId, componentId, p, (UIntPtr)data.Length));
                }
            }
        }
    }
}
