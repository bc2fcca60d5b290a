using System;
using System.Runtime.InteropServices;
using Netsync.Native;

namespace Netsync
{
    /// <summary>A global command: every client gets it once, in the same order.</summary>
    /// <param name="sender">Client id of the sender; 0 for the embedded server.</param>
    /// <param name="sequence">The relay's number (1, 2, 3 ...), the same on every client.</param>
    /// <param name="payload">Valid during the call only: copy what you keep.</param>
    public delegate void GlobalCommandHandler(uint sender, ulong sequence, double serverTime, ReadOnlySpan<byte> payload);

    /// <summary>A command for a component of an entity this client holds.</summary>
    public delegate void ComponentCommandHandler(uint sender, ulong entityId, uint componentId, ReadOnlySpan<byte> payload);

    /// <summary>The latest state of a synced component of a remote entity.</summary>
    /// <param name="version">Grows with every change the holder made.</param>
    public delegate void ComponentStateHandler(ulong entityId, uint componentId, ulong version, ReadOnlySpan<byte> payload);

    /// <summary>Any received message, raw.</summary>
    public delegate void MessageHandler(in NetsyncMessage message, ReadOnlySpan<byte> payload);

    public sealed unsafe partial class SyncClient
    {
        byte[] _messageBuffer = new byte[256];

        public event MessageHandler MessageReceived;
        public event GlobalCommandHandler GlobalCommandReceived;
        public event ComponentCommandHandler ComponentCommandReceived;
        public event ComponentStateHandler ComponentStateReceived;

        /// <summary>
        /// Pops the next received command or component state. The payload
        /// views a buffer this client reuses (it grows to the largest
        /// message once): valid until the next poll. False when none waits.
        /// </summary>
        public bool TryPollMessage(out NetsyncMessage message, out ReadOnlySpan<byte> payload)
        {
            using (var l = _handle.Acquire())
            {
                while (true)
                {
                    NetsyncMessage header;
                    bool has;
                    NetsyncResult result;
                    fixed (byte* buffer = _messageBuffer)
                    {
                        result = NativeMethods.netsync_client_poll_message(
                            (NetsyncClient*)l.Pointer, &header, buffer, (UIntPtr)_messageBuffer.Length, &has);
                    }
                    if (result == NetsyncResult.NETSYNC_ERR_BUFFER_TOO_SMALL)
                    {
                        // The message stays queued; header.size is what it needs.
                        _messageBuffer = new byte[Math.Max(header.Size, _messageBuffer.Length * 2)];
                        continue;
                    }
                    NetsyncLibrary.Check(result);
                    message = has ? header : default(NetsyncMessage);
                    payload = has ? new ReadOnlySpan<byte>(_messageBuffer, 0, header.Size) : default(ReadOnlySpan<byte>);
                    return has;
                }
            }
        }

        /// <summary>
        /// Drains every received message and raises <see cref="MessageReceived"/>
        /// and the typed events on the calling thread; returns how many.
        /// Call it once a frame after <see cref="Tick"/> (the Unity manager does).
        /// </summary>
        public int DispatchMessages()
        {
            int count = 0;
            NetsyncMessage m;
            ReadOnlySpan<byte> payload;
            while (TryPollMessage(out m, out payload))
            {
                count++;
                var all = MessageReceived;
                if (all != null)
                {
                    all(in m, payload);
                }
                switch (m.Kind)
                {
                    case MessageKind.GlobalCommand:
                        var global = GlobalCommandReceived;
                        if (global != null)
                        {
                            global(m.sender, m.sequence, m.server_time, payload);
                        }
                        break;
                    case MessageKind.ComponentCommand:
                        var command = ComponentCommandReceived;
                        if (command != null)
                        {
                            command(m.sender, m.entity_id, m.component_id, payload);
                        }
                        break;
                    case MessageKind.ComponentState:
                        var state = ComponentStateReceived;
                        if (state != null)
                        {
                            state(m.entity_id, m.component_id, m.sequence, payload);
                        }
                        break;
                }
            }
            return count;
        }

        /// <summary>Both drains: events (<see cref="DispatchEvents"/>), then messages (<see cref="DispatchMessages"/>).</summary>
        public int Dispatch()
        {
            return DispatchEvents() + DispatchMessages();
        }
    }

    /// <summary>Byte spans to native pointers (an empty span is NULL there, which the C ABI accepts).</summary>
    internal static class Payload
    {
        public static ref byte Pin(ReadOnlySpan<byte> data)
        {
            return ref MemoryMarshal.GetReference(data);
        }
    }
}
