using System;
using System.Collections.Generic;
using System.Text;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>The game side of an embedded relay (RelayServer.Game/.Messages/.Events) with clients on loopback.</summary>
    [TestFixture]
    public class EmbeddedServerTests
    {
        sealed class Received
        {
            public MessageKind Kind;
            public uint Sender;
            public ulong Entity;
            public uint Component;
            public ulong Sequence;
            public int Length;
            public string Text;
        }

        static Received Copy(in NetsyncMessage m, ReadOnlySpan<byte> payload)
        {
            return new Received
            {
                Kind = m.Kind,
                Sender = m.sender,
                Entity = m.entity_id,
                Component = m.component_id,
                Sequence = m.sequence,
                Length = payload.Length,
                Text = Encoding.UTF8.GetString(payload.ToArray()),
            };
        }

        static List<Received> Record(SyncClient client)
        {
            var list = new List<Received>();
            client.MessageReceived += (in NetsyncMessage m, ReadOnlySpan<byte> payload) => list.Add(Copy(in m, payload));
            return list;
        }

        static List<Received> Record(RelayServer relay)
        {
            var list = new List<Received>();
            relay.MessageReceived += (in NetsyncMessage m, ReadOnlySpan<byte> payload) => list.Add(Copy(in m, payload));
            return list;
        }

        /// <summary>One frame: the server's drains, then each client's tick and drains.</summary>
        static void Frame(double now, RelayServer relay, params SyncClient[] clients)
        {
            relay.Dispatch();
            foreach (var c in clients)
            {
                c.Tick(now);
                c.Dispatch();
            }
        }

        static byte[] Bytes(string text)
        {
            return Encoding.UTF8.GetBytes(text);
        }

        [Test]
        public void TheServerMovesAServerOwnedEntityThatTwoClientsSee()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                var removedOnA = new List<KeyValuePair<ulong, RemovalReason>>();
                var removedOnB = new List<KeyValuePair<ulong, RemovalReason>>();
                a.EntityRemoved += (id, reason) => removedOnA.Add(new KeyValuePair<ulong, RemovalReason>(id, reason));
                b.EntityRemoved += (id, reason) => removedOnB.Add(new KeyValuePair<ulong, RemovalReason>(id, reason));
                TestSupport.WaitConnected(a, b);

                const ulong platform = 900;
                double t0 = relay.ServerTime;
                Assert.IsTrue(t0 >= 0);
                double firstSeen = -1;
                var shownOnA = new List<NetsyncVec3>();
                var shownOnB = new List<NetsyncVec3>();
                Action<double> frame = now =>
                {
                    // The server's own clock drives its entity: a circle, like the clients' tests.
                    double t = relay.ServerTime;
                    relay.SetEntityState(new NetsyncSample(platform, TestSupport.Circle(t), TestSupport.Yaw(t)));
                    Frame(now, relay, a, b);
                    NetsyncTransform seen;
                    if (TestSupport.TryFind(a.LastTransforms, platform, out seen))
                    {
                        shownOnA.Add(seen.position);
                    }
                    if (TestSupport.TryFind(b.LastTransforms, platform, out seen))
                    {
                        shownOnB.Add(seen.position);
                        if (firstSeen < 0 && shownOnA.Count > 0)
                        {
                            firstSeen = now;
                        }
                    }
                };
                TestSupport.Pump("both clients to show the server's entity for 0.5 s", 8.0, frame,
                    () => firstSeen >= 0 && TestSupport.Now - firstSeen > 0.5);
                Assert.IsTrue(relay.ServerTime > t0, "the relay's clock runs");
                foreach (var shown in new[] { shownOnA, shownOnB })
                {
                    foreach (var p in shown)
                    {
                        Assert.AreEqual(1.0, Math.Sqrt(p.x * p.x + p.z * p.z), 0.05, "radius of " + p);
                        Assert.AreEqual(1.0, p.y, 1e-3, "height of " + p);
                    }
                    var first = shown[0];
                    var last = shown[shown.Count - 1];
                    Assert.IsTrue(Math.Abs(last.x - first.x) + Math.Abs(last.z - first.z) > 0.1, "it moved: " + first + " -> " + last);
                }
                // No client holds a server-owned entity. (The relay's counters
                // are a snapshot it publishes every 50 ms.)
                Assert.IsFalse(a.Holds(platform));
                Assert.IsFalse(b.Holds(platform));
                TestSupport.Pump("the relay to count the entity", 1.0, now => { }, () => relay.Stats.entities == 1);

                relay.RemoveEntity(platform);
                TestSupport.Pump("both clients to drop it", 5.0, now => Frame(now, relay, a, b),
                    () => removedOnA.Count > 0 && removedOnB.Count > 0);
                Assert.AreEqual(platform, removedOnA[0].Key);
                Assert.AreEqual(RemovalReason.Unregistered, removedOnA[0].Value);
                Assert.AreEqual(platform, removedOnB[0].Key);
                NetsyncTransform gone;
                TestSupport.Pump("the views to forget it", 2.0, now => Frame(now, relay, a, b),
                    () => !TestSupport.TryFind(a.LastTransforms, platform, out gone) &&
                          !TestSupport.TryFind(b.LastTransforms, platform, out gone));

                var e = Assert.Throws<NetsyncException>(() => relay.SetEntityState(
                    new NetsyncSample(platform, new NetsyncVec3(float.NaN, 0, 0), NetsyncQuat.Identity)));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            }
        }

        [Test]
        public void AClientsComponentCommandReachesTheServerWithItsSender()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                uint idA = 0;
                a.Connected += id => idA = id;
                var states = new List<string>();
                b.ComponentStateReceived += (entity, component, version, payload) =>
                    states.Add(entity + "/" + component + "=" + Encoding.UTF8.GetString(payload.ToArray()));
                TestSupport.WaitConnected(a, b);

                const ulong door = 901;
                const uint lockComponent = 3;
                Action<double> frame = now =>
                {
                    relay.SetEntityState(door, new NetsyncVec3(5, 0, 0), NetsyncQuat.Identity);
                    TestSupport.Step(now, a, b);
                    b.DispatchMessages();
                };
                relay.SetComponentState(door, lockComponent, Bytes("locked"));
                NetsyncTransform seen;
                TestSupport.Pump("A to see the server's door", 5.0, frame, () => TestSupport.TryFind(a.LastTransforms, door, out seen));
                TestSupport.Pump("B to get the door's component state", 5.0, frame, () => states.Count > 0);
                Assert.AreEqual(door + "/" + lockComponent + "=locked", states[states.Count - 1]);

                // A asks the server (which owns the door) to open it.
                a.RegisterComponent(door, lockComponent, true);
                a.SendComponentCommand(door, lockComponent, Bytes("open"));
                NetsyncMessage message = default(NetsyncMessage);
                string text = null;
                TestSupport.Pump("the server to get A's command", 5.0, frame, () =>
                {
                    ReadOnlySpan<byte> payload;
                    while (relay.TryPollMessage(out message, out payload))
                    {
                        if (message.Kind == MessageKind.ComponentCommand)
                        {
                            text = Encoding.UTF8.GetString(payload.ToArray());
                            return true;
                        }
                    }
                    return false;
                });
                Assert.AreEqual(idA, message.sender);
                Assert.AreEqual(door, message.entity_id);
                Assert.AreEqual(lockComponent, message.component_id);
                Assert.AreEqual("open", text);
                Assert.AreEqual(4, message.Size);

                // The typed event says the same; the server answers with a new state.
                var commands = new List<string>();
                relay.ComponentCommandReceived += (sender, entity, component, payload) =>
                {
                    commands.Add(sender + ":" + entity + "/" + component + "=" + Encoding.UTF8.GetString(payload.ToArray()));
                    relay.SetComponentState(entity, component, Bytes("unlocked"));
                };
                a.SendComponentCommand(door, lockComponent, Bytes("open again"));
                TestSupport.Pump("the typed event and B's new state", 5.0, now =>
                {
                    frame(now);
                    relay.DispatchMessages();
                }, () => commands.Count > 0 && states[states.Count - 1].EndsWith("=unlocked", StringComparison.Ordinal));
                Assert.AreEqual(idA + ":" + door + "/" + lockComponent + "=open again", commands[0]);
            }
        }

        [Test]
        public void AServerGlobalCommandReachesBothClientsInOneOrder()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                uint idA = 0;
                a.Connected += id => idA = id;
                var onA = Record(a);
                var onB = Record(b);
                var onServer = Record(relay);
                TestSupport.WaitConnected(a, b);

                relay.SendGlobalCommand(Bytes("s1"));
                a.SendGlobalCommand(Bytes("a1"));
                var segment = new ArraySegment<byte>(Bytes("xs2x"), 1, 2); // an ArraySegment is a span too
                relay.SendGlobalCommand(segment);
                b.SendGlobalCommand(Bytes("b1"));
                relay.SendGlobalCommand(new byte[0]);
                TestSupport.Pump("five commands on both clients", 5.0, now => Frame(now, relay, a, b),
                    () => onA.Count >= 5 && onB.Count >= 5);
                Assert.AreEqual(5, onA.Count);
                Assert.AreEqual(5, onB.Count);
                for (int i = 0; i < 5; i++)
                {
                    Assert.AreEqual(MessageKind.GlobalCommand, onA[i].Kind);
                    Assert.AreEqual(onA[i].Sequence, onB[i].Sequence, "same number everywhere");
                    Assert.AreEqual(onA[i].Text, onB[i].Text, "same order everywhere");
                    Assert.AreEqual(onA[i].Sender, onB[i].Sender);
                }
                // The server's commands come from sender 0, in the order it sent them.
                var fromServer = onA.FindAll(m => m.Sender == 0).ConvertAll(m => m.Text);
                Assert.AreEqual("s1,s2,", string.Join(",", fromServer.ToArray()));
                Assert.AreEqual("a1", onA.Find(m => m.Sender == idA).Text);

                // The server hears every global command too, in the same order.
                TestSupport.Pump("the server's inbox", 2.0, now => Frame(now, relay, a, b), () => onServer.Count >= 5);
                Assert.AreEqual(5, onServer.Count);
                for (int i = 0; i < 5; i++)
                {
                    Assert.AreEqual(onA[i].Sequence, onServer[i].Sequence);
                    Assert.AreEqual(onA[i].Text, onServer[i].Text);
                    Assert.AreEqual(onA[i].Sender, onServer[i].Sender);
                }

                // Payload sizes: MaxPayload passes, one more byte is the native error.
                relay.SendGlobalCommand(new byte[NetsyncLibrary.MaxPayload]);
                var e = Assert.Throws<NetsyncException>(() => relay.SendGlobalCommand(new byte[NetsyncLibrary.MaxPayload + 1]));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_TOO_LARGE, e.Code);
                StringAssert.Contains("NETSYNC_MAX_PAYLOAD (" + NetsyncLibrary.MaxPayload + ")", e.NativeMessage);
                e = Assert.Throws<NetsyncException>(
                    () => relay.SendComponentCommand(1, 1, new byte[NetsyncLibrary.MaxPayload + 1]));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_TOO_LARGE, e.Code);
                e = Assert.Throws<NetsyncException>(
                    () => relay.SetComponentState(1, 1, new byte[NetsyncLibrary.MaxPayload + 1]));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_TOO_LARGE, e.Code);
                TestSupport.Pump("the largest command on the server", 5.0, now => Frame(now, relay, a, b),
                    () => onServer.Count >= 6);
                Assert.AreEqual(NetsyncLibrary.MaxPayload, onServer[5].Length);
                Assert.AreEqual(0UL, relay.Stats.server_messages_dropped);
            }
        }

        [Test]
        public void ACallOnAClientsEntityComesBackAsCallRefused()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            {
                var refused = new List<KeyValuePair<ulong, CallRefusal>>();
                var raw = new List<NetsyncServerEvent>();
                relay.CallRefused += (entity, reason) => refused.Add(new KeyValuePair<ulong, CallRefusal>(entity, reason));
                relay.EventReceived += raw.Add;
                TestSupport.WaitConnected(a);
                const ulong car = 11;
                a.RegisterEntity(car);
                Action<double> frame = now =>
                {
                    a.SetEntityState(car, new NetsyncVec3(1, 0, 0), NetsyncQuat.Identity);
                    Frame(now, relay, a);
                };
                uint holder, epoch;
                TestSupport.Pump("the relay to announce A's car", 5.0, frame, () => a.TryGetHolder(car, out holder, out epoch));

                // The server may not move a client's entity: queued, then refused.
                relay.SetEntityState(car, new NetsyncVec3(9, 9, 9), NetsyncQuat.Identity);
                TestSupport.Pump("the refusal", 5.0, frame, () => refused.Count > 0);
                Assert.AreEqual(car, refused[0].Key);
                Assert.AreEqual(CallRefusal.NotServerOwned, refused[0].Value);
                var e = raw.Find(x => x.Kind == ServerEventKind.CallRefused);
                Assert.AreEqual(car, e.entity_id);
                Assert.AreEqual(CallRefusal.NotServerOwned, e.CallRefusal);

                // A command for an entity nobody has heard of, and one for a server-owned entity nobody holds.
                relay.SendComponentCommand(12345, 1, Bytes("x"));
                relay.SetEntityState(77, new NetsyncVec3(0, 0, 0), NetsyncQuat.Identity);
                relay.SendComponentCommand(77, 1, Bytes("y"));
                TestSupport.Pump("two more refusals", 5.0, frame, () => refused.Count >= 3);
                Assert.AreEqual(new KeyValuePair<ulong, CallRefusal>(12345, CallRefusal.UnknownEntity), refused[1]);
                Assert.AreEqual(new KeyValuePair<ulong, CallRefusal>(77, CallRefusal.NoHolder), refused[2]);
                Assert.IsTrue(a.Holds(car), "the refused call changed nothing");
            }
        }

        [Test]
        public void ClientsJoiningAndLeavingAreEvents()
        {
            // A client that stops is noticed when it has been silent for
            // idle_timeout: shorten it so that the test is quick.
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;
            config.idle_timeout = 1.0;
            using (var relay = RelayServer.Start(config, "127.0.0.1"))
            {
                var joined = new List<uint>();
                var left = new List<uint>();
                relay.ClientJoined += joined.Add;
                relay.ClientLeft += left.Add;
                uint idA = 0, idB = 0;
                using (var a = TestSupport.ConnectTo(relay))
                using (var b = TestSupport.ConnectTo(relay))
                {
                    a.Connected += id => idA = id;
                    b.Connected += id => idB = id;
                    TestSupport.WaitConnected(a, b);
                    TestSupport.Pump("two joins", 5.0, now => Frame(now, relay, a, b), () => joined.Count >= 2);
                    Assert.AreEqual(2, joined.Count);
                    CollectionAssert.Contains(joined, idA);
                    CollectionAssert.Contains(joined, idB);
                    Assert.AreEqual(0, left.Count);

                    a.Dispose();
                    TestSupport.Pump("A to leave", 5.0, now => Frame(now, relay, b), () => left.Count > 0);
                    Assert.AreEqual(1, left.Count);
                    Assert.AreEqual(idA, left[0]);
                    TestSupport.Pump("the relay to count one client", 1.0, now => { }, () => relay.Stats.clients == 1);
                }
                TestSupport.Pump("B to leave", 5.0, now => relay.Dispatch(), () => left.Count > 1);
                Assert.AreEqual(2, left.Count);
                Assert.AreEqual(idB, left[1]);
                TestSupport.Pump("the relay to count no client", 1.0, now => { }, () => relay.Stats.clients == 0);
                var stats = relay.Stats;
                Assert.AreEqual(2UL, stats.clients_joined);
                Assert.AreEqual(2UL, stats.clients_left);
                Assert.AreEqual(0UL, stats.server_events_dropped);
                Assert.AreEqual(0UL, stats.server_messages_dropped);
                NetsyncServerEvent none;
                Assert.IsFalse(relay.TryPollEvent(out none));
            }
        }

        [Test]
        public void AServerWithNoInboxStillMovesEntitiesAndHearsEvents()
        {
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;
            config.server_inbox_capacity = 0;
            using (var relay = RelayServer.Start(config, "127.0.0.1"))
            {
                Assert.IsTrue(relay.ServerTime >= 0);
                relay.SetEntityState(1, NetsyncVec3.Zero, NetsyncQuat.Identity);
                relay.SendGlobalCommand(Bytes("x"));
                NetsyncServerEvent ignored;
                Assert.IsFalse(relay.TryPollEvent(out ignored));
                NetsyncMessage message;
                ReadOnlySpan<byte> payload;
                // Its own global command is not kept for it: no inbox.
                var deadline = DateTime.UtcNow.AddSeconds(1);
                while (relay.Stats.server_messages_dropped == 0 && DateTime.UtcNow < deadline)
                {
                    System.Threading.Thread.Sleep(10);
                }
                Assert.IsFalse(relay.TryPollMessage(out message, out payload));
                Assert.AreEqual(1UL, relay.Stats.server_messages_dropped);
            }
        }
    }
}
