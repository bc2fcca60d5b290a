using System;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>Bring-your-own-transport pieces: the timeline and the send filter.</summary>
    [TestFixture]
    public class TimelineTests
    {
        static NetsyncSample[] Frame(int entities, double serverTime)
        {
            var samples = new NetsyncSample[entities];
            for (int i = 0; i < entities; i++)
            {
                // Entity i moves along x at 1 m/s, offset by i along z.
                samples[i] = new NetsyncSample((ulong)(i + 1), new NetsyncVec3((float)serverTime, 0f, i), NetsyncQuat.Identity);
            }
            return samples;
        }

        [Test]
        public void FixedDelayInterpolatesEveryEntityInOneGrowingBatch()
        {
            var config = NetsyncTimelineConfig.CreateDefault();
            config.Mode = InterpolationMode.Fixed;
            config.fixed_delay = 0.1;
            using (var timeline = new Timeline(config))
            {
                const int entities = 200; // more than the first buffer holds
                for (int f = 0; f <= 10; f++)
                {
                    double t = f * 0.05;
                    timeline.Push(t, 100.0 + t, Frame(entities, t), entities);
                }
                Assert.AreEqual(entities, timeline.EntityCount);
                var shown = timeline.Tick(0.5);
                Assert.AreEqual(entities, shown.Length);
                var seen = new bool[entities];
                for (int i = 0; i < shown.Length; i++)
                {
                    int index = (int)shown[i].entity_id - 1;
                    seen[index] = true;
                    // Shown 0.1 s behind the newest state (0.5): x near 0.4.
                    Assert.AreEqual(0.4, shown[i].position.x, 0.06, "entity " + shown[i].entity_id);
                    Assert.AreEqual((float)index, shown[i].position.z, 1e-4);
                    Assert.AreEqual(1.0, shown[i].rotation.w, 1e-6);
                }
                Assert.IsTrue(Array.TrueForAll(seen, s => s));
                double render = timeline.RenderTime(InterpolationMode.Fixed);
                Assert.AreEqual(100.4, render, 0.06);
                var stats = timeline.Stats;
                Assert.AreEqual(11UL, stats.frames);
                Assert.AreEqual((ulong)entities, stats.entities);

                Assert.IsTrue(timeline.Remove(1));
                Assert.IsFalse(timeline.Remove(1));
                Assert.AreEqual(entities - 1, timeline.Tick(0.51).Length);
                timeline.SetEntityMode(2, InterpolationMode.Predicted);
                timeline.SetEntityMode(2, InterpolationMode.Inherit);
                timeline.SetPredictionLead(0.05);
                var e = Assert.Throws<NetsyncException>(() => timeline.SetEntityMode(9999, InterpolationMode.Fixed));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_UNKNOWN_ENTITY, e.Code);
            }
        }

        [Test]
        public void TheSendFilterSendsFirstSkipsStillnessAndSeesJumps()
        {
            using (var filter = new SendFilter())
            {
                var still = new NetsyncSample(7, new NetsyncVec3(1, 2, 3), NetsyncQuat.Identity);
                Assert.AreEqual(SendDecision.First, filter.Update(0.0, still));
                Assert.AreEqual(SendDecision.Skip, filter.Update(0.1, still));
                var moved = new NetsyncSample(7, new NetsyncVec3(1.5f, 2, 3), NetsyncQuat.Identity);
                Assert.AreNotEqual(SendDecision.Skip, filter.Update(0.2, moved));
                var jumped = moved;
                jumped.position = new NetsyncVec3(50, 2, 3);
                jumped.Flags = SampleFlags.Teleport;
                Assert.AreEqual(SendDecision.Teleport, filter.Update(0.3, jumped));
                var resting = jumped;
                resting.Flags = SampleFlags.None;
                Assert.AreEqual(SendDecision.Skip, filter.Update(0.4, resting));
                Assert.AreEqual(SendDecision.Heartbeat, filter.Update(1.5, resting), "one send a second at least");
                Assert.IsTrue(filter.Forget(7));
                Assert.IsFalse(filter.Forget(7));
                Assert.AreEqual(SendDecision.First, filter.Update(1.6, jumped));
            }
        }
    }
}
