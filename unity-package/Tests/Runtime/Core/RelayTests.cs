using System;
using System.Collections.Generic;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>A relay and two clients on loopback, through the C# layer only.</summary>
    [TestFixture]
    public class RelayTests
    {
        [Test]
        public void TwoClientsExchangeTransformsThroughARelay()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                uint idA = 0, idB = 0;
                a.Connected += id => idA = id;
                b.Connected += id => idB = id;
                var appearedOnB = new List<ulong>();
                b.EntityAppeared += appearedOnB.Add;
                TestSupport.WaitConnected(a, b);
                Assert.IsTrue(idA != 0 && idB != 0 && idA != idB, "distinct client ids " + idA + ", " + idB);

                const ulong car = 1;
                a.RegisterEntity(car);
                b.RegisterEntity(2);
                double firstSeen = -1;
                var shownOnB = new List<NetsyncVec3>();
                bool bSeesCarAtA = false;
                TestSupport.Pump("B to show A's car moving for 0.5 s", 8.0, now =>
                {
                    a.SetEntityState(new NetsyncSample(car, TestSupport.Circle(now), TestSupport.Yaw(now)));
                    b.SetEntityState(2, new NetsyncVec3(0, 0, 5), NetsyncQuat.Identity);
                    var onA = a.Tick(now);
                    NetsyncTransform own;
                    Assert.IsFalse(TestSupport.TryFind(onA, car, out own), "a client's own entity is not in its tick");
                    NetsyncTransform seen;
                    if (TestSupport.TryFind(b.Tick(now), car, out seen))
                    {
                        if (firstSeen < 0)
                        {
                            firstSeen = now;
                        }
                        shownOnB.Add(seen.position);
                    }
                    NetsyncTransform other;
                    if (TestSupport.TryFind(onA, 2, out other))
                    {
                        bSeesCarAtA = Math.Abs(other.position.z - 5f) < 1e-3f;
                    }
                    a.DispatchEvents();
                    b.DispatchEvents();
                }, () => firstSeen >= 0 && TestSupport.Now - firstSeen > 0.5 && bSeesCarAtA);

                CollectionAssert.Contains(appearedOnB, car);
                // Every pose B showed lies on A's path (interpolated between
                // states on a circle of radius 1 at height 1), and it moved.
                foreach (var p in shownOnB)
                {
                    double radius = Math.Sqrt(p.x * p.x + p.z * p.z);
                    Assert.AreEqual(1.0, radius, 0.05, "radius of " + p);
                    Assert.AreEqual(1.0, p.y, 1e-3, "height of " + p);
                }
                var first = shownOnB[0];
                var last = shownOnB[shownOnB.Count - 1];
                double moved = Math.Sqrt(Math.Pow(last.x - first.x, 2) + Math.Pow(last.z - first.z, 2));
                Assert.IsTrue(moved > 0.2, "B's view of the car moved " + moved + " m");

                var stats = b.Stats;
                Assert.AreEqual(ConnectionState.Connected, stats.State);
                Assert.AreEqual(idB, stats.client_id);
                Assert.IsTrue(stats.rtt > 0 && stats.rtt < 0.5, "rtt " + stats.rtt);
                Assert.IsTrue(stats.bytes_received > 0 && stats.frames_received > 0);
                Assert.AreEqual(1UL, stats.remote_entities);
                double serverTime;
                Assert.IsTrue(b.TryGetServerTime(TestSupport.Now, out serverTime));
                Assert.IsTrue(b.RenderTime(InterpolationMode.Adaptive) <= serverTime);
                var relayStats = relay.Stats;
                Assert.AreEqual(2UL, relayStats.clients);
                Assert.AreEqual(2UL, relayStats.entities);
            }
        }

        [Test]
        public void ACollisionClaimMovesTheSendRight()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                const ulong carA = 10, carB = 20, ball = 100;
                var gainedA = new List<ulong>();
                var lostA = new List<ulong>();
                var gainedB = new List<ulong>();
                a.RightGained += gainedA.Add;
                a.RightLost += lostA.Add;
                b.RightGained += gainedB.Add;
                TestSupport.WaitConnected(a, b);

                a.RegisterEntity(carA);
                a.RegisterEntity(ball, EntityKind.Neutral); // first to register: A simulates the ball
                b.RegisterEntity(carB);

                Action<double> frame = now =>
                {
                    a.SetEntityState(carA, new NetsyncVec3(-2, 0, 0), NetsyncQuat.Identity);
                    b.SetEntityState(carB, new NetsyncVec3(2, 0, 0), NetsyncQuat.Identity);
                    if (a.Holds(ball))
                    {
                        a.SetEntityState(ball, new NetsyncVec3(-1, 0, 0), NetsyncQuat.Identity);
                    }
                    if (b.Holds(ball))
                    {
                        b.SetEntityState(ball, new NetsyncVec3(1, 0, 0), NetsyncQuat.Identity);
                    }
                    TestSupport.Step(now, a, b);
                };
                TestSupport.Pump("A to get the ball's right", 5.0, frame, () => gainedA.Contains(ball));
                Assert.IsTrue(a.Holds(ball));
                Assert.IsFalse(b.Holds(ball));
                NetsyncTransform seen = default(NetsyncTransform);
                TestSupport.Pump("B to see the ball", 5.0, frame,
                    () => TestSupport.TryFind(b.LastTransforms, ball, out seen));
                Assert.AreEqual(-1f, seen.position.x, 1e-3);

                // B's car hits the ball: B claims it, and may simulate it at once.
                b.ReportCollision(carB, ball);
                Assert.IsTrue(b.Holds(ball), "a claim is optimistic");
                TestSupport.Pump("the right to move from A to B", 5.0, frame,
                    () => gainedB.Contains(ball) && lostA.Contains(ball));
                Assert.IsFalse(a.Holds(ball));
                Assert.IsTrue(b.Holds(ball));
                // A now shows the ball where B simulates it; B no longer gets it in its tick.
                TestSupport.Pump("A to show B's ball", 5.0, frame,
                    () => TestSupport.TryFind(a.LastTransforms, ball, out seen) && Math.Abs(seen.position.x - 1f) < 1e-3f);
                Assert.IsFalse(TestSupport.TryFind(b.LastTransforms, ball, out seen));
            }
        }

        [Test]
        public void TryGetHolderShowsTheClaimantOnTheOtherClients()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            using (var c = TestSupport.ConnectTo(relay))
            {
                uint idA = 0, idB = 0;
                a.Connected += id => idA = id;
                b.Connected += id => idB = id;
                var gainedB = new List<ulong>();
                b.RightGained += gainedB.Add;
                TestSupport.WaitConnected(a, b, c);

                const ulong carB = 20, ball = 101;
                uint holder, epoch;
                Assert.IsFalse(c.TryGetHolder(ball, out holder, out epoch), "not announced yet");
                Assert.AreEqual(0u, holder);
                a.RegisterEntity(ball, EntityKind.Neutral); // first ready: A holds it
                b.RegisterEntity(carB);
                Action<double> frame = now =>
                {
                    b.SetEntityState(carB, new NetsyncVec3(2, 0, 0), NetsyncQuat.Identity);
                    if (a.Holds(ball))
                    {
                        a.SetEntityState(ball, new NetsyncVec3(-1, 0, 0), NetsyncQuat.Identity);
                    }
                    if (b.Holds(ball))
                    {
                        b.SetEntityState(ball, new NetsyncVec3(1, 0, 0), NetsyncQuat.Identity);
                    }
                    TestSupport.Step(now, a, b, c);
                };
                TestSupport.Pump("C and B to hear that A holds the ball", 5.0, frame,
                    () => c.TryGetHolder(ball, out holder, out epoch) && holder == idA &&
                          b.TryGetHolder(ball, out holder, out epoch) && holder == idA);
                c.TryGetHolder(ball, out holder, out epoch);
                uint epochBefore = epoch;

                b.ReportCollision(carB, ball);
                TestSupport.Pump("B's claim to be granted", 5.0, frame, () => gainedB.Contains(ball));
                TestSupport.Pump("C and A to name B as the holder", 5.0, frame,
                    () => c.TryGetHolder(ball, out holder, out epoch) && holder == idB &&
                          a.TryGetHolder(ball, out holder, out epoch) && holder == idB);
                c.TryGetHolder(ball, out holder, out epoch);
                Assert.AreEqual(idB, holder);
                Assert.IsTrue(epoch > epochBefore, "the epoch counts the change: " + epochBefore + " -> " + epoch);
                uint epochOnA;
                Assert.IsTrue(a.TryGetHolder(ball, out holder, out epochOnA));
                Assert.AreEqual(epoch, epochOnA, "one epoch everywhere");
                Assert.IsTrue(b.TryGetHolder(ball, out holder, out epoch));
                Assert.AreEqual(idB, holder);
                TestSupport.Pump("the relay to count the claim", 1.0, now => { }, () => relay.Stats.claims_granted >= 1);
            }
        }

        [Test]
        public void AClaimOnAControlledEntityIsRefusedWithItsReason()
        {
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                var refusals = new List<KeyValuePair<ulong, ClaimRefusal>>();
                a.RightRefused += (entity, reason) => refusals.Add(new KeyValuePair<ulong, ClaimRefusal>(entity, reason));
                TestSupport.WaitConnected(a, b);
                a.RegisterEntity(1);
                b.RegisterEntity(2);
                Action<double> frame = now =>
                {
                    a.SetEntityState(1, new NetsyncVec3(0, 0, 0), NetsyncQuat.Identity);
                    b.SetEntityState(2, new NetsyncVec3(3, 0, 0), NetsyncQuat.Identity);
                    TestSupport.Step(now, a, b);
                };
                NetsyncTransform seen;
                TestSupport.Pump("A to see B's car", 5.0, frame, () => TestSupport.TryFind(a.LastTransforms, 2, out seen));
                a.ReportCollision(1, 2);
                TestSupport.Pump("the refusal", 5.0, frame, () => refusals.Count > 0);
                Assert.AreEqual(2UL, refusals[0].Key);
                Assert.AreEqual(ClaimRefusal.NotNeutral, refusals[0].Value);
                Assert.IsFalse(a.Holds(2));
            }
        }

        [Test]
        public void AClientWithoutRelayReportsTheTimeout()
        {
            var config = NetsyncClientConfig.CreateDefault();
            config.connect_timeout = 0.3;
            config.Reconnect = false;
            int port;
            using (var probe = TestSupport.StartRelay())
            {
                port = probe.Port; // a port that was free a moment ago; nobody listens now
            }
            using (var client = SyncClient.Connect("127.0.0.1:" + port, config))
            {
                var reasons = new List<DisconnectReason>();
                client.Disconnected += reasons.Add;
                double ignored;
                Assert.IsFalse(client.TryGetServerTime(TestSupport.Now, out ignored));
                Assert.Throws<NetsyncException>(() => client.ServerTime(TestSupport.Now));
                TestSupport.Pump("the connect timeout", 5.0, now => TestSupport.Step(now, client), () => reasons.Count > 0);
                Assert.AreEqual(DisconnectReason.ConnectTimeout, reasons[0]);
                Assert.AreEqual(ConnectionState.Disconnected, client.State);
            }
        }
    }
}
