using System;
using System.Collections.Generic;

namespace Netsync
{
    /// <summary>
    /// Every live netsync object of this process, so that the host can stop
    /// them all at once: the Unity editor does it on play-mode exit and
    /// before a domain reload, when no managed code may be left for a
    /// native thread to call. Objects are held weakly: one that nobody
    /// disposed is still freed by its handle's finalizer.
    /// </summary>
    public static class NetsyncRuntime
    {
        static readonly object s_gate = new object();
        static readonly List<WeakReference> s_live = new List<WeakReference>();

        /// <summary>Number of live clients, servers, timelines, send filters and replays.</summary>
        public static int LiveObjects
        {
            get
            {
                lock (s_gate)
                {
                    Prune();
                    return s_live.Count;
                }
            }
        }

        internal static void Track(IDisposable owner)
        {
            lock (s_gate)
            {
                Prune();
                s_live.Add(new WeakReference(owner));
            }
        }

        internal static void Untrack(IDisposable owner)
        {
            lock (s_gate)
            {
                s_live.RemoveAll(w => !w.IsAlive || ReferenceEquals(w.Target, owner));
            }
        }

        static void Prune()
        {
            s_live.RemoveAll(w => !w.IsAlive);
        }

        /// <summary>
        /// Drops the log callback first (no native thread may call into
        /// managed code past this point), then disposes every live object:
        /// clients and servers stop and join their network threads. Safe to
        /// call more than once and when the native library never loaded.
        /// </summary>
        /// <returns>How many objects were disposed.</returns>
        public static int Shutdown()
        {
            if (NetsyncLog.Handler != null)
            {
                NetsyncLog.ClearHandler();
            }
            var alive = new List<IDisposable>();
            lock (s_gate)
            {
                foreach (var w in s_live)
                {
                    var owner = w.Target as IDisposable;
                    if (owner != null)
                    {
                        alive.Add(owner);
                    }
                }
                s_live.Clear();
            }
            var live = alive.ToArray();
            // Clients before servers: their network threads stop while the relay they talk to still runs.
            Array.Sort(live, (a, b) => Rank(a).CompareTo(Rank(b)));
            List<Exception> failures = null;
            foreach (var owner in live)
            {
                try
                {
                    owner.Dispose();
                }
                catch (Exception e)
                {
                    (failures = failures ?? new List<Exception>()).Add(e);
                }
            }
            if (failures != null)
            {
                throw new AggregateException("some netsync objects failed to stop", failures);
            }
            return live.Length;
        }

        static int Rank(IDisposable owner)
        {
            return owner is SyncClient ? 0 : owner is RelayServer ? 2 : 1;
        }
    }
}
