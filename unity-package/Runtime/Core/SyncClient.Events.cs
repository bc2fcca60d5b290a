using System;
using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class SyncClient
    {
        /// <summary>Every event, raw, before the typed events below.</summary>
        public event Action<NetsyncClientEvent> EventReceived;

        /// <summary>A connection attempt began; the argument is the attempt number (1 the first,
        /// later ones after a disconnect or a failed attempt).</summary>
        public event Action<uint> Connecting;

        /// <summary>Connected to the relay; the argument is the id the relay gave this client.</summary>
        public event Action<uint> Connected;

        /// <summary>Connected again after losing the relay; the new client id.</summary>
        public event Action<uint> Reconnected;

        public event Action<DisconnectReason> Disconnected;

        /// <summary>A remote entity appeared (its transforms follow in the ticks).</summary>
        public event Action<ulong> EntityAppeared;

        /// <summary>A remote entity is gone: unregistered, its owner left, or out of this client's interest.</summary>
        public event Action<ulong, RemovalReason> EntityRemoved;

        /// <summary>This client now holds the send right: simulate the entity and set its state.</summary>
        public event Action<ulong> RightGained;

        /// <summary>Someone else (or nobody) holds the right now: stop simulating, show the remote state.</summary>
        public event Action<ulong> RightLost;

        /// <summary>The relay refused a claim.</summary>
        public event Action<ulong, ClaimRefusal> RightRefused;

        /// <summary>Pops the next event without raising anything; false when none is waiting.</summary>
        public bool TryPollEvent(out NetsyncClientEvent clientEvent)
        {
            NetsyncClientEvent e;
            bool has;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_poll_event((NetsyncClient*)l.Pointer, &e, &has));
            }
            clientEvent = has ? e : default(NetsyncClientEvent);
            return has;
        }

        /// <summary>
        /// Drains every waiting event and raises the C# events on the calling
        /// thread (call it once a frame after <see cref="Tick"/>; the Unity
        /// manager does). Returns how many events were raised. A handler that
        /// throws stops the drain; the remaining events wait for the next call.
        /// </summary>
        public int DispatchEvents()
        {
            int count = 0;
            NetsyncClientEvent e;
            while (TryPollEvent(out e))
            {
                count++;
                Raise(e);
            }
            return count;
        }

        void Raise(NetsyncClientEvent e)
        {
            var all = EventReceived;
            if (all != null)
            {
                all(e);
            }
            switch (e.Kind)
            {
                case ClientEventKind.Connecting:
                    Invoke(Connecting, e.reason);
                    break;
                case ClientEventKind.Connected:
                    Invoke(Connected, e.client_id);
                    break;
                case ClientEventKind.Reconnected:
                    Invoke(Reconnected, e.client_id);
                    break;
                case ClientEventKind.Disconnected:
                    var disconnected = Disconnected;
                    if (disconnected != null)
                    {
                        disconnected(e.DisconnectReason);
                    }
                    break;
                case ClientEventKind.EntityAppeared:
                    Invoke(EntityAppeared, e.entity_id);
                    break;
                case ClientEventKind.EntityRemoved:
                    var removed = EntityRemoved;
                    if (removed != null)
                    {
                        removed(e.entity_id, e.RemovalReason);
                    }
                    break;
                case ClientEventKind.RightGained:
                    Invoke(RightGained, e.entity_id);
                    break;
                case ClientEventKind.RightLost:
                    Invoke(RightLost, e.entity_id);
                    break;
                case ClientEventKind.RightRefused:
                    var refused = RightRefused;
                    if (refused != null)
                    {
                        refused(e.entity_id, e.ClaimRefusal);
                    }
                    break;
            }
        }

        static void Invoke<T>(Action<T> handler, T value)
        {
            if (handler != null)
            {
                handler(value);
            }
        }
    }
}
