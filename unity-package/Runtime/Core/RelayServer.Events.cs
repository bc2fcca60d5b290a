using System;
using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class RelayServer
    {
        /// <summary>Every event, raw, before the typed events below.</summary>
        public event Action<NetsyncServerEvent> EventReceived;

        /// <summary>A client was admitted; the argument is its client id.</summary>
        public event Action<uint> ClientJoined;

        /// <summary>A client left, or timed out; its client id.</summary>
        public event Action<uint> ClientLeft;

        /// <summary>The relay refused a queued call of this server about an entity, and why.</summary>
        public event Action<ulong, CallRefusal> CallRefused;

        /// <summary>The relay refused a scripted spawn (the element's id), and why: it exists nowhere.</summary>
        public event Action<ulong, CallRefusal> SpawnRefused;

        /// <summary>Lockstep: a client sent no input for a frame in time (client id, frame); the relay fills its input until it sends again.</summary>
        public event Action<uint, ulong> LockstepStalled;

        /// <summary>Lockstep: a client's state hash differs from the majority's at a frame (client id, first differing frame); once per differing client.</summary>
        public event Action<uint, ulong> LockstepDesync;

        /// <summary>Pops the next event without raising anything; false when none is waiting.</summary>
        public bool TryPollEvent(out NetsyncServerEvent serverEvent)
        {
            NetsyncServerEvent e;
            bool has;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_server_poll_event((NetsyncServer*)l.Pointer, &e, &has));
            }
            serverEvent = has ? e : default(NetsyncServerEvent);
            return has;
        }

        /// <summary>
        /// Drains every waiting event and raises the C# events on the calling
        /// thread; returns how many. A handler that throws stops the drain;
        /// the remaining events wait for the next call.
        /// </summary>
        public int DispatchEvents()
        {
            int count = 0;
            NetsyncServerEvent e;
            while (TryPollEvent(out e))
            {
                count++;
                Raise(e);
            }
            return count;
        }

        void Raise(NetsyncServerEvent e)
        {
            EventReceived?.Invoke(e);
            switch (e.Kind)
            {
                case ServerEventKind.ClientJoined:
                    ClientJoined?.Invoke(e.client_id);
                    break;
                case ServerEventKind.ClientLeft:
                    ClientLeft?.Invoke(e.client_id);
                    break;
                case ServerEventKind.CallRefused:
                    CallRefused?.Invoke(e.entity_id, e.CallRefusal);
                    break;
                case ServerEventKind.SpawnRefused:
                    SpawnRefused?.Invoke(e.entity_id, e.CallRefusal);
                    break;
                case ServerEventKind.LockstepStalled:
                    LockstepStalled?.Invoke(e.client_id, e.entity_id);
                    break;
                case ServerEventKind.LockstepDesync:
                    LockstepDesync?.Invoke(e.client_id, e.entity_id);
                    break;
            }
        }
    }
}
