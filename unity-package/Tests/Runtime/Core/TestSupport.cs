using System;
using System.Diagnostics;
using System.Threading;
using Netsync.Native;

namespace Netsync.Tests
{
    /// <summary>Helpers shared by the engine-independent tests (Unity Test
    /// Framework and the Mono harness run the same files).</summary>
    internal static class TestSupport
    {
        static readonly Stopwatch s_clock = Stopwatch.StartNew();

        /// <summary>A monotonic clock in seconds, like Time.realtimeSinceStartupAsDouble.</summary>
        public static double Now
        {
            get { return s_clock.Elapsed.TotalSeconds; }
        }

        /// <summary>
        /// Calls <paramref name="step"/> with the clock every 5 ms until
        /// <paramref name="done"/> holds; fails the test with
        /// <paramref name="what"/> after <paramref name="timeout"/> seconds.
        /// </summary>
        public static void Pump(string what, double timeout, Action<double> step, Func<bool> done)
        {
            double end = Now + timeout;
            while (true)
            {
                step(Now);
                if (done())
                {
                    return;
                }
                if (Now > end)
                {
                    throw new TimeoutException("timed out after " + timeout + " s waiting for " + what);
                }
                Thread.Sleep(5);
            }
        }

        /// <summary>A relay on a free loopback port.</summary>
        public static RelayServer StartRelay()
        {
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;
            return RelayServer.Start(config, "127.0.0.1");
        }

        public static SyncClient ConnectTo(RelayServer relay)
        {
            return SyncClient.Connect("127.0.0.1:" + relay.Port);
        }

        /// <summary>Ticks and dispatches events for every client until all are connected.</summary>
        public static void WaitConnected(params SyncClient[] clients)
        {
            Pump("clients to connect", 5.0, now => Step(now, clients), () =>
            {
                foreach (var c in clients)
                {
                    if (c.State != ConnectionState.Connected)
                    {
                        return false;
                    }
                }
                return true;
            });
        }

        /// <summary>One frame of each client: tick, then events.</summary>
        public static void Step(double now, params SyncClient[] clients)
        {
            foreach (var c in clients)
            {
                c.Tick(now);
                c.DispatchEvents();
            }
        }

        public static NetsyncQuat Yaw(double angle)
        {
            return new NetsyncQuat(0f, (float)Math.Sin(angle / 2), 0f, (float)Math.Cos(angle / 2));
        }

        /// <summary>Where a test entity is at time t: a circle of radius 1 at height 1, 1 rad/s.</summary>
        public static NetsyncVec3 Circle(double t)
        {
            return new NetsyncVec3((float)Math.Cos(t), 1f, (float)Math.Sin(t));
        }

        public static bool TryFind(ReadOnlySpan<NetsyncTransform> transforms, ulong entityId, out NetsyncTransform found)
        {
            for (int i = 0; i < transforms.Length; i++)
            {
                if (transforms[i].entity_id == entityId)
                {
                    found = transforms[i];
                    return true;
                }
            }
            found = default(NetsyncTransform);
            return false;
        }
    }
}
