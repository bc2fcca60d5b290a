using System;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>Bad input comes back as exceptions with the native message, never a crash.</summary>
    [TestFixture]
    public class ErrorTests
    {
        [Test]
        public void ABadAddressIsAnInvalidArgumentWithTheNativeMessage()
        {
            var e = Assert.Throws<NetsyncException>(() => SyncClient.Connect("not an address"));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains("netsync_client_connect", e.NativeMessage);
            StringAssert.Contains("`not an address` is not IP:port", e.NativeMessage);
            StringAssert.StartsWith("NETSYNC_ERR_INVALID_ARGUMENT: netsync_client_connect:", e.Message);
        }

        [Test]
        public void ManagedArgumentsAreCheckedBeforeTheCall()
        {
            Assert.Throws<ArgumentNullException>(() => SyncClient.Connect(null));
            Assert.Throws<ArgumentException>(() => SyncClient.Connect("127.0.0.1:7777\0trailing"));
            using (var timeline = new Timeline())
            {
                Assert.Throws<ArgumentNullException>(() => timeline.Push(0, 0, null, 0));
                Assert.Throws<ArgumentOutOfRangeException>(() => timeline.Push(0, 0, new NetsyncSample[2], 3));
            }
        }

        [Test]
        public void SettingsOutOfRangeAreRefusedByName()
        {
            var config = NetsyncClientConfig.CreateDefault();
            config.send_rate = 0;
            var e = Assert.Throws<NetsyncException>(() => SyncClient.Connect("127.0.0.1:7777", config));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains("send_rate", e.NativeMessage);

            var server = NetsyncServerConfig.CreateDefault();
            server.mtu = 100;
            e = Assert.Throws<NetsyncException>(() => RelayServer.Start(server, "127.0.0.1"));
            StringAssert.Contains("mtu must be 256..=1400", e.NativeMessage);

            var timeline = NetsyncTimelineConfig.CreateDefault();
            timeline.mode = 77;
            e = Assert.Throws<NetsyncException>(() => new Timeline(timeline));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
        }

        [Test]
        public void EntityErrorsCarryTheirCodes()
        {
            using (var relay = TestSupport.StartRelay())
            using (var client = TestSupport.ConnectTo(relay))
            {
                var e = Assert.Throws<NetsyncException>(
                    () => client.SetEntityState(5, TestSupport.Circle(0), NetsyncQuat.Identity));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_UNKNOWN_ENTITY, e.Code);

                client.RegisterEntity(5);
                e = Assert.Throws<NetsyncException>(() => client.RegisterEntity(5));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_WRONG_STATE, e.Code);

                e = Assert.Throws<NetsyncException>(
                    () => client.SetEntityState(5, new NetsyncVec3(float.NaN, 0, 0), NetsyncQuat.Identity));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
                StringAssert.Contains("finite", e.NativeMessage);

                e = Assert.Throws<NetsyncException>(
                    () => client.SetEntityState(5, TestSupport.Circle(0), new NetsyncQuat(0, 0, 0, 0)));
                StringAssert.Contains("rotation", e.NativeMessage);

                e = Assert.Throws<NetsyncException>(() => client.RegisterEntity(6, (EntityKind)42));
                StringAssert.Contains("kind 42", e.NativeMessage);

                e = Assert.Throws<NetsyncException>(() => client.ReportCollision(999, 5));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_UNKNOWN_ENTITY, e.Code);
                client.UnregisterEntity(5);
            }
        }

        [Test]
        public void ATakenPortIsAnIoError()
        {
            using (var first = TestSupport.StartRelay())
            {
                var config = NetsyncServerConfig.CreateDefault();
                config.port = first.Port;
                var e = Assert.Throws<NetsyncException>(() => RelayServer.Start(config, "127.0.0.1"));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_IO, e.Code);
            }
        }

        [Test]
        public void TimeGoingBackwardsIsRefused()
        {
            using (var timeline = new Timeline())
            {
                timeline.Tick(10.0);
                var e = Assert.Throws<NetsyncException>(() => timeline.Tick(9.0));
                Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            }
        }

        [Test]
        public void DisposedObjectsThrowAndDisposeTwiceIsHarmless()
        {
            var relay = TestSupport.StartRelay();
            var client = TestSupport.ConnectTo(relay);
            int live = NetsyncRuntime.LiveObjects;
            client.Dispose();
            client.Dispose();
            Assert.IsTrue(client.IsDisposed);
            Assert.AreEqual(live - 1, NetsyncRuntime.LiveObjects);
            Assert.Throws<ObjectDisposedException>(() => client.Tick(1.0));
            Assert.Throws<ObjectDisposedException>(() => { var s = client.State; });
            relay.Dispose();
            Assert.Throws<ObjectDisposedException>(() => { var p = relay.Port; });
        }
    }
}
