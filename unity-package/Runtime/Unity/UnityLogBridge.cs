using System.Collections.Concurrent;
using System.Threading;
using UnityEngine;

namespace Netsync.Unity
{
    /// <summary>
    /// Forwards the native log to the Unity console. Records arrive on
    /// netsync's threads; they wait in a bounded queue and reach
    /// <c>Debug.Log</c> on the main thread (<see cref="Flush"/>, called by
    /// the manager every frame).
    /// </summary>
    public static class UnityLogBridge
    {
        struct Record
        {
            public NetsyncLogLevel Level;
            public string Target;
            public string Message;
        }

        const int Capacity = 1024;
        static readonly ConcurrentQueue<Record> s_queue = new ConcurrentQueue<Record>();
        static int s_dropped;

        /// <summary>Routes netsync's records up to <paramref name="level"/> to the console (Off removes the route).</summary>
        public static void Install(NetsyncLogLevel level)
        {
            if (level == NetsyncLogLevel.Off)
            {
                NetsyncLog.ClearHandler();
                return;
            }
            NetsyncLog.SetHandler(Enqueue, level);
        }

        static void Enqueue(NetsyncLogLevel level, string target, string message)
        {
            if (s_queue.Count >= Capacity)
            {
                Interlocked.Increment(ref s_dropped);
                return;
            }
            s_queue.Enqueue(new Record { Level = level, Target = target, Message = message });
        }

        /// <summary>Writes the waiting records to the console. Main thread only.</summary>
        public static void Flush()
        {
            Record r;
            while (s_queue.TryDequeue(out r))
            {
                string line = "[netsync] " + r.Target + ": " + r.Message;
                switch (r.Level)
                {
                    case NetsyncLogLevel.Error:
                        Debug.LogError(line);
                        break;
                    case NetsyncLogLevel.Warn:
                        Debug.LogWarning(line);
                        break;
                    default:
                        Debug.Log(line);
                        break;
                }
            }
            int dropped = Interlocked.Exchange(ref s_dropped, 0);
            if (dropped > 0)
            {
                Debug.LogWarning("[netsync] " + dropped + " log records dropped (more than " + Capacity + " between two frames)");
            }
        }
    }
}
