using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>A client's recording played back through <see cref="Replay"/>; bad files refused by code.</summary>
    [TestFixture]
    public class ReplayTests
    {
        string _dir;

        [SetUp]
        public void CreateFolder()
        {
            _dir = Path.Combine(Path.GetTempPath(), "netsync-replay-tests-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(_dir);
        }

        [TearDown]
        public void RemoveFolder()
        {
            Directory.Delete(_dir, true);
        }

        // Exactly: the same entities, poses and flags in the same order.
        static void AssertSameBatch(NetsyncTransform[] live, ReadOnlySpan<NetsyncTransform> shown, string what)
        {
            Assert.AreEqual(live.Length, shown.Length, what + ": entities");
            for (int i = 0; i < live.Length; i++)
            {
                Assert.IsTrue(live[i].entity_id == shown[i].entity_id && live[i].position.Equals(shown[i].position) &&
                              live[i].rotation.Equals(shown[i].rotation) && live[i].flags == shown[i].flags,
                    what + ": live " + live[i] + ", replayed " + shown[i]);
            }
        }

        [Test]
        public void AClientsRecordingReplaysItsTicksExactlySeeksAndChangesSpeed()
        {
            string path = Path.Combine(_dir, "b.nsrec");
            const ulong car = 3;
            var live = new List<KeyValuePair<double, NetsyncTransform[]>>(); // every tick of B: time, batch
            uint idB = 0;
            using (var relay = TestSupport.StartRelay())
            using (var a = TestSupport.ConnectTo(relay))
            using (var b = TestSupport.ConnectTo(relay))
            {
                b.Connected += id => idB = id;
                b.Record(path); // before the first tick
                var e = Assert.Throws<NetsyncException>(() => b.Record(path));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_WRONG_STATE, e.Code, "a second recording");
                bool moving = false;
                double firstSeen = -1;
                Action<double> frame = now =>
                {
                    double serverTime;
                    if (moving && a.TryGetServerTime(now, out serverTime))
                    {
                        a.SetEntityState(new NetsyncSample(car, TestSupport.Circle(serverTime), TestSupport.Yaw(serverTime)));
                    }
                    a.Tick(now);
                    var shown = b.Tick(now);
                    live.Add(new KeyValuePair<double, NetsyncTransform[]>(now, shown.ToArray()));
                    NetsyncTransform seen;
                    if (firstSeen < 0 && TestSupport.TryFind(shown, car, out seen))
                    {
                        firstSeen = now;
                    }
                    a.DispatchEvents();
                    b.DispatchEvents();
                };
                TestSupport.Pump("clients to connect", 5.0, frame,
                    () => a.State == ConnectionState.Connected && b.State == ConnectionState.Connected);
                a.RegisterEntity(car);
                moving = true;
                TestSupport.Pump("B to show A's car for 1 s", 8.0, frame,
                    () => firstSeen >= 0 && TestSupport.Now - firstSeen > 1.0);
                b.StopRecording();
                e = Assert.Throws<NetsyncException>(b.StopRecording);
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_WRONG_STATE, e.Code, "stopping twice");
                e = Assert.Throws<NetsyncException>(() => b.Record(path));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_WRONG_STATE, e.Code, "recording after a tick");
                StringAssert.Contains("before the first tick", e.NativeMessage);
            }

            using (var replay = Replay.Open(path))
            {
                var info = replay.Info;
                Assert.AreEqual(RecordingKind.Client, info.Kind);
                Assert.IsTrue(idB != 0, "B connected");
                Assert.AreEqual(idB, info.client_id);
                Assert.AreEqual((ulong)live.Count, info.ticks, "one recorded tick per live tick");
                Assert.AreEqual(1UL, info.entities);
                Assert.IsTrue(info.frames > 10, "frames " + info.frames);
                Assert.AreEqual((ulong)new FileInfo(path).Length, info.file_bytes);
                Assert.IsTrue(info.raw_bytes > 0);
                Assert.IsTrue(info.start_time <= live[0].Key && info.end_time >= live[live.Count - 1].Key,
                    "span " + info.start_time + ".." + info.end_time);

                double position;
                Assert.IsFalse(replay.TryGetPosition(out position), "no position before the first tick");
                var e = Assert.Throws<NetsyncException>(() => { var p = replay.Position; });
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_WRONG_STATE, e.Code);

                // At B's tick times: B's batches, exactly.
                int withCar = 0;
                foreach (var tick in live)
                {
                    var shown = replay.TickAt(tick.Key);
                    AssertSameBatch(tick.Value, shown, "at " + tick.Key);
                    NetsyncTransform seen;
                    if (TestSupport.TryFind(shown, car, out seen))
                    {
                        withCar++;
                    }
                }
                Assert.IsTrue(withCar > 20, "the car in " + withCar + " replayed ticks");
                // Back in time: replayed from the start, the same again.
                var middle = live[live.Count / 2];
                AssertSameBatch(middle.Value, replay.TickAt(middle.Key), "going back");
                Assert.IsTrue(replay.TryGetPosition(out position));
                Assert.AreEqual(middle.Key, position);

                // On the engine's clock: seek, double speed, pause.
                replay.Seek(middle.Key);
                replay.Speed = 2.0;
                Assert.AreEqual(2.0, replay.Speed);
                NetsyncTransform atSeek;
                Assert.IsTrue(TestSupport.TryFind(replay.Tick(500.0), car, out atSeek), "the car at the seek time");
                Assert.AreEqual(middle.Key, replay.Position, "the first tick after a seek shows the seek time");
                replay.Tick(500.25);
                Assert.AreEqual(middle.Key + 0.5, replay.Position, 1e-9, "0.25 s at double speed");
                replay.Speed = 0;
                replay.Tick(501.0);
                Assert.AreEqual(middle.Key + 0.5, replay.Position, 1e-9, "speed 0 pauses");
                e = Assert.Throws<NetsyncException>(() => replay.Speed = 101);
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
                StringAssert.Contains("speed must be in 0..=100", e.NativeMessage);
                Assert.AreEqual(0.0, replay.Speed, "a refused speed changes nothing");
                e = Assert.Throws<NetsyncException>(() => replay.Seek(double.NaN));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            }

            // The same recording from memory.
            using (var fromMemory = Replay.OpenBuffer(File.ReadAllBytes(path)))
            {
                Assert.AreEqual((ulong)live.Count, fromMemory.Info.ticks);
                var last = live[live.Count - 1];
                AssertSameBatch(last.Value, fromMemory.TickAt(last.Key), "from memory");
            }

            var disposed = Replay.Open(path);
            int liveObjects = NetsyncRuntime.LiveObjects;
            disposed.Dispose();
            disposed.Dispose();
            Assert.IsTrue(disposed.IsDisposed);
            Assert.AreEqual(liveObjects - 1, NetsyncRuntime.LiveObjects);
            Assert.Throws<ObjectDisposedException>(() => { disposed.TickAt(1.0); });
            Assert.Throws<ObjectDisposedException>(() => { var s = disposed.Speed; });
        }

        [Test]
        public void MissingDamagedAndForeignRecordingsAreRefusedWithTheirCodes()
        {
            // A small valid recording: a client that never reaches a relay, ticked five times.
            string path = Path.Combine(_dir, "offline.nsrec");
            using (var client = SyncClient.Connect("127.0.0.1:9"))
            {
                client.Record(path);
                for (int i = 0; i < 5; i++)
                {
                    client.Tick(i * 0.1);
                }
                client.StopRecording();
                var e = Assert.Throws<NetsyncException>(client.StopRecording);
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_WRONG_STATE, e.Code, "not recording");
            }
            var bytes = File.ReadAllBytes(path);
            using (var replay = Replay.OpenBuffer(bytes))
            {
                var info = replay.Info;
                Assert.AreEqual(5UL, info.ticks);
                Assert.AreEqual(0u, info.client_id, "never connected");
                Assert.AreEqual(0, replay.TickAt(0.4).Length);
            }

            var missing = Assert.Throws<NetsyncException>(() => Replay.Open(Path.Combine(_dir, "missing.nsrec")));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_IO, missing.Code);
            StringAssert.StartsWith("NETSYNC_ERR_IO: netsync_replay_open:", missing.Message);

            string damaged = Path.Combine(_dir, "damaged.nsrec");
            var cut = new byte[bytes.Length - 3];
            Array.Copy(bytes, cut, cut.Length);
            File.WriteAllBytes(damaged, cut);
            var e2 = Assert.Throws<NetsyncException>(() => Replay.Open(damaged));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e2.Code);
            StringAssert.Contains("truncated", e2.NativeMessage);

            var flipped = (byte[])bytes.Clone();
            flipped[flipped.Length - 1] ^= 0x40; // in the last block's packed bytes
            e2 = Assert.Throws<NetsyncException>(() => Replay.OpenBuffer(flipped));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e2.Code);
            StringAssert.Contains("corrupt", e2.NativeMessage);

            var newer = (byte[])bytes.Clone();
            newer[8] = 2; // the format version
            e2 = Assert.Throws<NetsyncException>(() => Replay.OpenBuffer(newer));
            StringAssert.Contains("version 2 is not supported", e2.NativeMessage);

            e2 = Assert.Throws<NetsyncException>(() => Replay.OpenBuffer(Encoding.ASCII.GetBytes("GIF89a, not a recording")));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e2.Code);
            StringAssert.Contains("not a netsync recording", e2.NativeMessage);
            e2 = Assert.Throws<NetsyncException>(() => Replay.OpenBuffer(new byte[0]));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e2.Code, "no bytes");

            Assert.Throws<ArgumentNullException>(() => Replay.Open(null));
            Assert.Throws<ArgumentNullException>(() => Replay.OpenBuffer((byte[])null));
            using (var client = SyncClient.Connect("127.0.0.1:9"))
            {
                e2 = Assert.Throws<NetsyncException>(() => client.Record(Path.Combine(_dir, "no-such-folder", "x.nsrec")));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_IO, e2.Code);
                Assert.Throws<ArgumentNullException>(() => client.Record(null));
            }
        }

        [Test]
        public void AnEmbeddedServerRecordsTheCommandsItRelays()
        {
            string path = Path.Combine(_dir, "relay.nsrec");
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;
            var missing = Assert.Throws<NetsyncException>(
                () => RelayServer.StartRecording(config, Path.Combine(_dir, "no/such/dir.nsrec"), "127.0.0.1"));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_IO, missing.Code);
            StringAssert.Contains("no/such/dir.nsrec", missing.NativeMessage);
            using (var relay = RelayServer.StartRecording(config, path, "127.0.0.1"))
            using (var a = TestSupport.ConnectTo(relay))
            {
                TestSupport.WaitConnected(a);
                a.SendGlobalCommand(Encoding.UTF8.GetBytes("recorded"));
                bool delivered = false;
                a.GlobalCommandReceived += (sender, seq, serverTime, data) => delivered = true;
                TestSupport.Pump("the command to come back", 5.0, now =>
                {
                    a.Tick(now);
                    a.Dispatch();
                }, () => delivered);
            }
            using (var replay = Replay.Open(path))
            {
                Assert.AreEqual(NativeMethods.NETSYNC_RECORDING_RELAY, replay.Info.kind);
                Assert.IsTrue(replay.Info.messages >= 1, "the global command: " + replay.Info.messages);
            }
        }
    }
}
