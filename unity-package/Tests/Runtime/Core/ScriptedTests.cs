using System;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>Scripted elements through the C# layer (ScriptedPaths.cs, SyncClient.Scripted.cs, RelayServer.Scripted.cs).</summary>
    [TestFixture]
    public class ScriptedTests
    {
        const string Paths = "netsync-paths 1\npath 1\n  speed 2\n  end repeat\n  segment steps=20 duration=0.05 turn_step=9\n";

        [Test]
        public void ParseErrorsNameTheLine()
        {
            var e = Assert.Throws<NetsyncException>(() => ScriptedPaths.Parse("netsync-paths 1\npath 1\nsegment steps=1\n"));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains("line 3: segment: `duration` is required", e.NativeMessage);
            using (var paths = ScriptedPaths.Parse(Paths))
            {
                Assert.AreEqual(1, paths.PathCount);
                Assert.AreNotEqual(0ul, paths.Fingerprint);
                var spawn = new NetsyncScriptedSpawn { element_id = 5, path_id = 1, start = 0, life = 10, x = 1, y = 2 };
                var t = paths.Evaluate(spawn, 0.5);
                Assert.AreEqual(5ul, t.entity_id);
                Assert.AreEqual((uint)TransformFlags.Scripted, t.flags);
                Assert.Throws<NetsyncException>(() => paths.Evaluate(spawn, 11.0));
            }
        }

        [Test]
        public void ClientsShowWhatTheServerSpawns()
        {
            using (var paths = ScriptedPaths.Parse(Paths))
            using (var relay = TestSupport.StartRelay())
            using (var client = TestSupport.ConnectTo(relay))
            {
                relay.SetScriptedPaths(paths);
                client.SetScriptedPaths(paths);
                TestSupport.WaitConnected(client);
                var start = relay.ServerTime + 0.2;
                for (ulong id = 1; id <= 20; id++)
                {
                    relay.SpawnScripted(new NetsyncScriptedSpawn { element_id = id, path_id = 1, start = start, life = 30, x = id, y = 0, rotate = 0 });
                }
                int shown = 0;
                TestSupport.Pump("20 elements", 5.0, now =>
                {
                    shown = 0;
                    foreach (var t in client.Tick(now))
                    {
                        if ((t.flags & (uint)TransformFlags.Scripted) != 0)
                        {
                            shown++;
                        }
                    }
                    client.DispatchEvents();
                }, () => shown == 20);
                double at;
                Assert.IsTrue(client.TryGetScriptedTime(out at));
                var mine = client.LastTransforms[0];
                var expected = paths.Evaluate(new NetsyncScriptedSpawn { element_id = mine.entity_id, path_id = 1, start = start, life = 30, x = mine.entity_id, y = 0, rotate = 0 }, at);
                Assert.AreEqual(expected.position.x, mine.position.x, 1e-4);
                Assert.AreEqual(expected.position.y, mine.position.y, 1e-4);
                Assert.AreEqual(20, relay.ScriptedTick(relay.ServerTime).Length);
                relay.DespawnScripted(3);
                var missing = Assert.Throws<NetsyncException>(() => relay.DespawnScripted(3));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_UNKNOWN_ENTITY, missing.Code);
            }
        }
    }
}
