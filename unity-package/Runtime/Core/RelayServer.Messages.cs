using System;
using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class RelayServer
    {
        static readonly NativeMessagePoll s_pollMessage = PollMessage;

        readonly MessageInbox _inbox = new MessageInbox(s_pollMessage);

        static NetsyncResult PollMessage(IntPtr server, NetsyncMessage* header, byte* buffer, UIntPtr capacity, bool* has)
        {
            return NativeMethods.netsync_server_poll_message((NetsyncServer*)server, header, buffer, capacity, has);
        }

        /// <summary>Every message for the server, raw, before the typed events.</summary>
        public event MessageHandler MessageReceived
        {
            add { lock (_inbox) { _inbox.MessageReceived += value; } }
            remove { lock (_inbox) { _inbox.MessageReceived -= value; } }
        }

        /// <summary>A global command (every one, the server's own included), in the order every client sees.</summary>
        public event GlobalCommandHandler GlobalCommandReceived
        {
            add { lock (_inbox) { _inbox.GlobalCommandReceived += value; } }
            remove { lock (_inbox) { _inbox.GlobalCommandReceived -= value; } }
        }

        /// <summary>A client's command for a component of a server-owned entity, or of one nobody holds.</summary>
        public event ComponentCommandHandler ComponentCommandReceived
        {
            add { lock (_inbox) { _inbox.ComponentCommandReceived += value; } }
            remove { lock (_inbox) { _inbox.ComponentCommandReceived -= value; } }
        }

        /// <summary>
        /// Pops the next message for the server: every global command, and
        /// component commands for server-owned or unheld entities, with the
        /// sending client's id. The payload views a buffer this server
        /// reuses: valid until the next poll. False when none waits. Messages
        /// nobody polls are kept up to <c>server_inbox_capacity</c>; more are
        /// dropped and counted (<c>server_messages_dropped</c>).
        /// </summary>
        public bool TryPollMessage(out NetsyncMessage message, out ReadOnlySpan<byte> payload)
        {
            return _inbox.TryPoll(_handle, out message, out payload);
        }

        /// <summary>
        /// Drains every message for the server and raises
        /// <see cref="MessageReceived"/> and the typed events on the calling
        /// thread; returns how many. Call it once a frame (the Unity manager
        /// does for the relay it hosts).
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
