using System;
using System.Collections.Generic;
using System.Text;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>Commands, component states, interest and local prediction (S2) through the C# layer.</summary>
    [TestFixture]
    public class MessageTests
    {
        sealed class Received
        {
            public MessageKind Kind;
            public uint Sender;
            public ulong Entity;
            public uint Component;
            public ulong Sequence;
            public byte[] Payload;
        }

        static List<Received> Record(SyncClient client)
        {
            var list = new List<Received>();
            client.MessageReceived += (in NetsyncMessage m, ReadOnlySpan<byte> payload) => list.Add(new Received
            {
                Kind = m.Kind,
                Sender = m.sender,
                Entity = m.entity_id,
                Component = m.component_id,
                Sequence = m.sequence,
                Payload = payload.ToArray(),
            });
            return list;
        }

        static void Frame(double now, params SyncClient[] clients)
        {
            foreach (var c in clients)
            {
                c.Tick(now);
                c.Dispatch();
            }
        }

        /// <summary>Region ids 1..count (0 means "on the grid" and is no region).</summary>
        static uint[] Regions(int count)
        {
            var regions = new uint[count];
            for (int i = 0; i < count; i++)
            {
                regions[i] = (uint)(i + 1);
            }
            return regions;
        }

        static byte[] Bytes(string text)
        {
            return Encoding.UTF8.GetBytes(text);
        }

        [Test]
        public void GlobalCommandsReachEveryClientOnceInOneOrder()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                uint idA = 0;
                a.Connected += id => idA = id;
                var onA = Record(a);
                var onB = Record(b);
                var typed = new List<string>();
                b.GlobalCommandReceived += (sender, sequence, serverTime, payload) =>
                    typed.Add(sender + ":" + sequence + ":" + Encoding.UTF8.GetString(payload.ToArray()));
                TestSupport.WaitConnected(a, b);

                a.SendGlobalCommand(Bytes("a1"));
                b.SendGlobalCommand(Bytes("b1"));
                a.SendGlobalCommand(Bytes("a2"));
                a.SendGlobalCommand(new byte[0]); // empty commands are commands too
                TestSupport.Pump("four commands everywhere", 5.0, now => Frame(now, a, b),
                    () => onA.Count >= 4 && onB.Count >= 4);
                Assert.AreEqual(4, onA.Count);
                Assert.AreEqual(4, onB.Count);
                for (int i = 0; i < 4; i++)
                {
                    Assert.AreEqual(MessageKind.GlobalCommand, onA[i].Kind);
                    Assert.AreEqual(onA[i].Sequence, onB[i].Sequence, "same number everywhere");
                    Assert.AreEqual(Encoding.UTF8.GetString(onA[i].Payload), Encoding.UTF8.GetString(onB[i].Payload), "same order");
                    Assert.AreEqual(onA[i].Sender, onB[i].Sender);
                    if (i > 0)
                    {
                        Assert.AreEqual(onA[i - 1].Sequence + 1, onA[i].Sequence);
                    }
                }
                // Each sender's own commands keep their order.
                var fromA = onB.FindAll(m => m.Sender == idA).ConvertAll(m => Encoding.UTF8.GetString(m.Payload));
                CollectionAssert.Contains(fromA, "a1");
                Assert.IsTrue(fromA.IndexOf("a1") < fromA.IndexOf("a2"));
                Assert.AreEqual(0, onB.Find(m => m.Sender == idA && m.Payload.Length == 0).Payload.Length);
                Assert.AreEqual(4, typed.Count);
                StringAssert.StartsWith(onB[0].Sender + ":" + onB[0].Sequence + ":", typed[0]);
                Assert.IsTrue(b.Stats.global_commands >= 4);
            }
        }

        [Test]
        public void ComponentStatesAndCommandsTravelBetweenHolderAndViewer()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                uint idB = 0;
                b.Connected += id => idB = id;
                var onA = Record(a);
                var states = new List<KeyValuePair<ulong, string>>();
                b.ComponentStateReceived += (entity, component, version, payload) =>
                    states.Add(new KeyValuePair<ulong, string>(version, entity + "/" + component + "=" + Encoding.UTF8.GetString(payload.ToArray())));
                TestSupport.WaitConnected(a, b);

                const ulong door = 5;
                const uint health = 7, secret = 8;
                a.RegisterEntity(door);
                a.RegisterComponent(door, health, true);
                a.RegisterComponent(door, secret, false);
                Action<double> frame = now =>
                {
                    a.SetEntityState(door, new NetsyncVec3(1, 0, 0), NetsyncQuat.Identity);
                    Frame(now, a, b);
                };
                a.SetComponentState(door, health, Bytes("hp=100"));
                TestSupport.Pump("B to get the component state", 5.0, frame, () => states.Count > 0);
                Assert.AreEqual("5/7=hp=100", states[states.Count - 1].Value);
                ulong firstVersion = states[states.Count - 1].Key;
                a.SetComponentState(door, health, Bytes("hp=90"));
                TestSupport.Pump("B to get the change", 5.0, frame, () => states[states.Count - 1].Value == "5/7=hp=90");
                Assert.IsTrue(states[states.Count - 1].Key > firstVersion, "versions grow");

                // Unsynced: nothing of it leaves A.
                var e = Assert.Throws<NetsyncException>(() => a.SetComponentState(door, secret, Bytes("x")));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_UNSYNCED_COMPONENT, e.Code);
                e = Assert.Throws<NetsyncException>(() => a.SetComponentState(door, 99, Bytes("x")));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_UNKNOWN_COMPONENT, e.Code);
                // Only the holder sets state.
                b.RegisterComponent(door, health, true);
                e = Assert.Throws<NetsyncException>(() => b.SetComponentState(door, health, Bytes("hp=0")));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_NOT_HELD, e.Code);

                // A command for the component goes to its holder, with its sender.
                b.SendComponentCommand(door, health, Bytes("heal"));
                TestSupport.Pump("A to get B's command", 5.0, frame,
                    () => onA.Exists(m => m.Kind == MessageKind.ComponentCommand));
                var command = onA.Find(m => m.Kind == MessageKind.ComponentCommand);
                Assert.AreEqual(idB, command.Sender);
                Assert.AreEqual(door, command.Entity);
                Assert.AreEqual(health, command.Component);
                Assert.AreEqual("heal", Encoding.UTF8.GetString(command.Payload));

                // Switching a component to unsynced stops it at the source.
                a.RegisterComponent(door, health, false);
                e = Assert.Throws<NetsyncException>(() => a.SetComponentState(door, health, Bytes("hp=80")));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_UNSYNCED_COMPONENT, e.Code);
            }
        }

        [Test]
        public void PayloadsUpToMaxPayloadPassAndLargerOnesAreRefused()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            {
                var onA = Record(a);
                TestSupport.WaitConnected(a);
                var big = new byte[NetsyncLibrary.MaxPayload];
                for (int i = 0; i < big.Length; i++)
                {
                    big[i] = (byte)(i * 7);
                }
                a.SendGlobalCommand(big); // larger than the first receive buffer: it grows
                var e = Assert.Throws<NetsyncException>(() => a.SendGlobalCommand(new byte[NetsyncLibrary.MaxPayload + 1]));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_TOO_LARGE, e.Code);
                StringAssert.Contains("NETSYNC_MAX_PAYLOAD (" + NetsyncLibrary.MaxPayload + ")", e.NativeMessage);
                TestSupport.Pump("the big command to come back", 5.0, now => Frame(now, a), () => onA.Count > 0);
                Assert.AreEqual(big.Length, onA[0].Payload.Length);
                for (int i = 0; i < big.Length; i++)
                {
                    Assert.AreEqual(big[i], onA[0].Payload[i], "byte " + i);
                }
            }
        }

        [Test]
        public void InterestRemovesFarEntitiesAndBringsThemBack()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                var removed = new List<KeyValuePair<ulong, RemovalReason>>();
                var appeared = new List<ulong>();
                a.EntityRemoved += (id, reason) => removed.Add(new KeyValuePair<ulong, RemovalReason>(id, reason));
                a.EntityAppeared += appeared.Add;
                TestSupport.WaitConnected(a, b);
                a.RegisterEntity(1);
                b.RegisterEntity(2);
                var farAway = new NetsyncVec3(1000, 0, 0); // 20 cells of 50 m away
                var bPosition = farAway;
                Action<double> frame = now =>
                {
                    a.SetEntityState(1, new NetsyncVec3(0, 0, 0), NetsyncQuat.Identity);
                    b.SetEntityState(2, bPosition, NetsyncQuat.Identity);
                    Frame(now, a, b);
                };
                NetsyncTransform seen = default(NetsyncTransform);
                TestSupport.Pump("A to see B's far entity (no interest set yet)", 5.0, frame,
                    () => TestSupport.TryFind(a.LastTransforms, 2, out seen));

                a.SetInterest(0); // A's own cell only
                TestSupport.Pump("B's entity to leave A's interest", 5.0, frame, () => removed.Count > 0);
                Assert.AreEqual(2UL, removed[0].Key);
                Assert.AreEqual(RemovalReason.OutOfInterest, removed[0].Value);
                TestSupport.Pump("A's view to drop it", 2.0, frame, () => !TestSupport.TryFind(a.LastTransforms, 2, out seen));

                appeared.Clear();
                bPosition = new NetsyncVec3(10, 0, 0); // into A's cell
                TestSupport.Pump("B's entity to come back", 5.0, frame,
                    () => appeared.Contains(2) && TestSupport.TryFind(a.LastTransforms, 2, out seen));
                Assert.AreEqual(10f, seen.position.x, 0.5);

                var e = Assert.Throws<NetsyncException>(
                    () => a.SetInterest((InterestFlags)0x80, 0, 0, new uint[0]));
                StringAssert.Contains("unknown interest flag bits", e.NativeMessage);
                e = Assert.Throws<NetsyncException>(() => a.SetInterest(0, Regions(NetsyncLibrary.MaxRegions + 1)));
                StringAssert.Contains("NETSYNC_MAX_REGIONS (" + NetsyncLibrary.MaxRegions + ")", e.NativeMessage);
                a.SetInterest(0, Regions(NetsyncLibrary.MaxRegions));
                a.SetInterest(InterestFlags.GlobalView, 0, 0, new uint[0]);
                e = Assert.Throws<NetsyncException>(() => a.SetEntityInterest(2, 5));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_NOT_HELD, e.Code);
                a.SetEntityInterest(1, 5, 0);
            }
        }

        [Test]
        public void APredictionShowsAtOnceOnTheViewer()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                TestSupport.WaitConnected(a, b);
                a.RegisterEntity(3);
                Action<double> frame = now =>
                {
                    a.SetEntityState(3, new NetsyncVec3(0, 0, 0), NetsyncQuat.Identity);
                    Frame(now, a, b);
                };
                NetsyncTransform seen = default(NetsyncTransform);
                TestSupport.Pump("B to see A's entity", 5.0, frame, () => TestSupport.TryFind(b.LastTransforms, 3, out seen));

                // B expects its command to move the entity to x = 4: it shows that at once.
                double t = TestSupport.Now;
                b.Predict(t, new NetsyncSample(3, new NetsyncVec3(4, 0, 0), NetsyncQuat.Identity));
                Assert.IsTrue(TestSupport.TryFind(b.Tick(t), 3, out seen));
                Assert.AreEqual(4f, seen.position.x, 1e-3);

                var e = Assert.Throws<NetsyncException>(
                    () => a.Predict(TestSupport.Now, new NetsyncSample(3, new NetsyncVec3(1, 0, 0), NetsyncQuat.Identity)));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_WRONG_STATE, e.Code);
                e = Assert.Throws<NetsyncException>(
                    () => b.Predict(TestSupport.Now, new NetsyncSample(77, new NetsyncVec3(1, 0, 0), NetsyncQuat.Identity)));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_UNKNOWN_ENTITY, e.Code);

                // Authority (x = 0) covers that moment: the prediction is handed
                // back and the view heads for the truth, without a jump.
                TestSupport.Pump("the prediction to be handed back", 5.0, frame,
                    () => b.Stats.predictions_timed_out + b.Stats.predictions_confirmed > 0);
                TestSupport.TryFind(b.LastTransforms, 3, out seen);
                float handedBackAt = seen.position.x;
                double until = TestSupport.Now + 0.5;
                float previous = handedBackAt;
                TestSupport.Pump("half a second of blending", 2.0, now =>
                {
                    frame(now);
                    NetsyncTransform current;
                    Assert.IsTrue(TestSupport.TryFind(b.LastTransforms, 3, out current));
                    Assert.IsTrue(current.position.x <= previous + 1e-4f, "moving back, never away: " + current);
                    Assert.IsTrue(previous - current.position.x < 0.5f, "no jump: " + previous + " -> " + current.position.x);
                    previous = current.position.x;
                }, () => TestSupport.Now > until);
                Assert.IsTrue(previous < handedBackAt, "the view moved towards the truth: " + handedBackAt + " -> " + previous);
            }
        }
    }
}
