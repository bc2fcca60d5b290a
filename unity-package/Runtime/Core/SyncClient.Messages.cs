using System;
using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class SyncClient
    {
        static readonly NativeMessagePoll s_pollMessage = PollMessage;

        readonly MessageInbox _inbox = new MessageInbox(s_pollMessage);

        static NetsyncResult PollMessage(IntPtr client, NetsyncMessage* header, byte* buffer, UIntPtr capacity, bool* has)
        {
            return NativeMethods.netsync_client_poll_message((NetsyncClient*)client, header, buffer, capacity, has);
        }

        /// <summary>Every received message, raw, before the typed events.</summary>
        public event MessageHandler MessageReceived
        {
            add { lock (_inbox) { _inbox.MessageReceived += value; } }
            remove { lock (_inbox) { _inbox.MessageReceived -= value; } }
        }

        /// <summary>A global command (from a client, or from the embedded server: sender 0).</summary>
        public event GlobalCommandHandler GlobalCommandReceived
        {
            add { lock (_inbox) { _inbox.GlobalCommandReceived += value; } }
            remove { lock (_inbox) { _inbox.GlobalCommandReceived -= value; } }
        }

        /// <summary>A command for a component of an entity this client holds.</summary>
        public event ComponentCommandHandler ComponentCommandReceived
        {
            add { lock (_inbox) { _inbox.ComponentCommandReceived += value; } }
            remove { lock (_inbox) { _inbox.ComponentCommandReceived -= value; } }
        }

        /// <summary>The latest state of a synced component of a remote entity.</summary>
        public event ComponentStateHandler ComponentStateReceived
        {
            add { lock (_inbox) { _inbox.ComponentStateReceived += value; } }
            remove { lock (_inbox) { _inbox.ComponentStateReceived -= value; } }
        }

        /// <summary>
        /// Pops the next received command or component state. The payload
        /// views a buffer this client reuses (it grows to the largest
        /// message once): valid until the next poll. False when none waits.
        /// </summary>
        public bool TryPollMessage(out NetsyncMessage message, out ReadOnlySpan<byte> payload)
        {
            return _inbox.TryPoll(_handle, out message, out payload);
        }

        /// <summary>
        /// Drains every received message and raises <see cref="MessageReceived"/>
        /// and the typed events on the calling thread; returns how many.
        /// Call it once a frame after <see cref="Tick"/> (the Unity manager does).
        /// </summary>
        public int DispatchMessages()
        {
            return _inbox.Dispatch(_handle);
        }

        /// <summary>Both drains: events (<see cref="DispatchEvents"/>), then messages (<see cref="DispatchMessages"/>).</summary>
        public int Dispatch()
        {
            return DispatchEvents() + DispatchMessages();
        }
    }
}
