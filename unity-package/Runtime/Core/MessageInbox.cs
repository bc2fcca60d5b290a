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

    /// <summary>A command for a component of an entity this receiver holds (on an
    /// embedded server: of a server-owned entity, or one nobody holds).</summary>
    /// <param name="sender">Client id of the sender; 0 for the embedded server.</param>
    public delegate void ComponentCommandHandler(uint sender, ulong entityId, uint componentId, ReadOnlySpan<byte> payload);

    /// <summary>The latest state of a synced component of a remote entity.</summary>
    /// <param name="version">Grows with every change the holder made.</param>
    public delegate void ComponentStateHandler(ulong entityId, uint componentId, ulong version, ReadOnlySpan<byte> payload);

    /// <summary>Any received message, raw.</summary>
    public delegate void MessageHandler(in NetsyncMessage message, ReadOnlySpan<byte> payload);

    /// <summary>One of the native message polls (<c>netsync_client_poll_message</c>,
    /// <c>netsync_server_poll_message</c>), on the handle's pointer.</summary>
    internal unsafe delegate NetsyncResult NativeMessagePoll(
        IntPtr handle, NetsyncMessage* header, byte* buffer, UIntPtr capacity, bool* hasMessage);

    /// <summary>
    /// The received-message half shared by <see cref="SyncClient"/> and
    /// <see cref="RelayServer"/>: a payload buffer reused across polls (it
    /// grows to the largest message once), the poll loop that grows it, and
    /// the dispatch to typed handlers. The owner exposes the handlers as its
    /// C# events.
    /// </summary>
    internal sealed unsafe class MessageInbox
    {
        readonly NativeMessagePoll _poll;
        byte[] _buffer = new byte[256];

        public MessageHandler MessageReceived;
        public GlobalCommandHandler GlobalCommandReceived;
        public ComponentCommandHandler ComponentCommandReceived;
        public ComponentStateHandler ComponentStateReceived;

        /// <param name="poll">A static delegate (made once per owner type), so polling allocates nothing.</param>
        public MessageInbox(NativeMessagePoll poll)
        {
            _poll = poll;
        }

        /// <summary>The next message of <paramref name="handle"/>; the payload views the reused buffer.</summary>
        public bool TryPoll(NetsyncHandle handle, out NetsyncMessage message, out ReadOnlySpan<byte> payload)
        {
            using (var l = handle.Acquire())
            {
                while (true)
                {
                    NetsyncMessage header;
                    bool has;
                    NetsyncResult result;
                    fixed (byte* buffer = _buffer)
                    {
                        result = _poll(l.Pointer, &header, buffer, (UIntPtr)_buffer.Length, &has);
                    }
                    if (result == NetsyncResult.NETSYNC_ERR_BUFFER_TOO_SMALL)
                    {
                        // The message stays queued; header.size is what it needs.
                        _buffer = new byte[Math.Max(header.Size, _buffer.Length * 2)];
                        continue;
                    }
                    NetsyncLibrary.Check(result);
                    message = has ? header : default(NetsyncMessage);
                    payload = has ? new ReadOnlySpan<byte>(_buffer, 0, header.Size) : default(ReadOnlySpan<byte>);
                    return has;
                }
            }
        }

        /// <summary>Drains every message of <paramref name="handle"/> and raises the handlers; returns how many.</summary>
        public int Dispatch(NetsyncHandle handle)
        {
            int count = 0;
            NetsyncMessage m;
            ReadOnlySpan<byte> payload;
            while (TryPoll(handle, out m, out payload))
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
