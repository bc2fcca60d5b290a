using System;
using System.Collections.Generic;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>Frame lockstep through the C# layer (SyncClient.Lockstep.cs) with two clients on loopback.</summary>
    [TestFixture]
    public class LockstepTests
    {
        sealed class Player
        {
            public readonly SyncClient Client;
            public readonly LockstepFrame Frame = new LockstepFrame();
            public readonly List<string> Taken = new List<string>();
            public byte Next;

            public Player(SyncClient client)
            {
                Client = client;
            }

            public void Step(double now)
            {
                ulong frame;
                if (Client.LockstepStatus.state == (uint)LockstepState.Active &&
                    Client.TrySubmitLockstepInput(new[] { Next }, out frame))
                {
                    Next++;
                }
                Client.Tick(now);
                Client.DispatchEvents();
                while (Client.TryNextLockstepFrame(Frame))
                {
                    Assert.AreEqual(LockstepItemKind.Frame, Frame.Kind);
                    var line = Frame.Frame + ":";
                    for (int i = 0; i < Frame.InputCount; i++)
                    {
                        line += " " + Frame.ClientId(i) + "=" + BitConverter.ToString(Frame.Input(i).ToArray());
                    }
                    Taken.Add(line);
                }
            }
        }

        [Test]
        public void TwoClientsTakeTheSameConfirmedFrames()
        {
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;
            config.lockstep_min_members = 2;
            config.lockstep_sync_interval = 8;
            config.lockstep_input_delay = 2;
            using (var relay = RelayServer.Start(config, "127.0.0.1"))
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                var players = new[] { new Player(a), new Player(b) };
                Assert.Throws<NetsyncException>(() => { ulong f; a.TrySubmitLockstepInput(new byte[] { 1 }, out f); },
                    "not joined: NETSYNC_ERR_WRONG_STATE");
                a.LockstepJoin();
                b.LockstepJoin();
                Assert.IsFalse(a.TryNextLockstepFrame(players[0].Frame), "nothing confirmed: wait");
                TestSupport.Pump("200 frames", 10.0, now =>
                {
                    foreach (var p in players)
                    {
                        p.Step(now);
                    }
                }, () => players[0].Taken.Count >= 200 && players[1].Taken.Count >= 200);
                for (int i = 0; i < 200; i++)
                {
                    Assert.AreEqual(players[0].Taken[i], players[1].Taken[i]);
                }
                var status = a.LockstepStatus;
                Assert.AreEqual((uint)LockstepState.Active, status.state);
                Assert.AreEqual(2u, status.members);
                Assert.AreEqual(8u, status.sync_interval);
                NetsyncLockstepEvent e;
                Assert.IsTrue(a.TryPollLockstepEvent(out e));
                Assert.AreEqual((uint)LockstepEventKind.Started, e.kind);
                var tooBig = new byte[257];
                var error = Assert.Throws<NetsyncException>(() => { ulong f; a.TrySubmitLockstepInput(tooBig, out f); });
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_TOO_LARGE, error.Code);
                a.ReportLockstepHash(0, 42);
                a.ProvideLockstepSnapshot(1, new byte[] { 1, 2, 3 });
                a.LockstepLeave();
                Assert.AreEqual((uint)LockstepState.Idle, a.LockstepStatus.state);
            }
        }
    }
}
