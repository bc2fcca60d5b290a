using System;
using System.Collections.Generic;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>Secure mode through the C# layer: a relay started with a
    /// secret, tokens issued as a game's backend would, clients that connect
    /// with them; plain clients and bad input refused by name.</summary>
    [TestFixture]
    public class SecureModeTests
    {
        /// <summary>A secure relay on a free loopback port.</summary>
        static RelayServer StartSecureRelay(byte[] secret)
        {
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;
            return RelayServer.StartSecure(config, secret, "127.0.0.1");
        }

        [Test]
        public void TwoClientsWithTokensExchangeStateAndAPlainOneIsRefused()
        {
            var secret = ConnectTokens.GenerateSecret();
            using (var relay = StartSecureRelay(secret))
            {
                // The backend's part: one token per player, naming the relay.
                string address = "127.0.0.1:" + relay.Port;
                var tokenA = ConnectTokens.IssueToken(secret, 501, address, 60);
                var tokenB = ConnectTokens.IssueToken(secret, 502, address, 60);
                Assert.AreEqual(ConnectTokens.TokenSize, tokenA.Length);

                using (var a = SyncClient.ConnectSecure(tokenA)) // the relay the token names
                using (var b = SyncClient.ConnectSecure(tokenB, NetsyncClientConfig.CreateDefault(), address))
                using (var plain = SyncClient.Connect(address))
                {
                    uint idA = 0, idB = 0;
                    a.Connected += id => idA = id;
                    b.Connected += id => idB = id;
                    var refusals = new List<DisconnectReason>();
                    plain.Disconnected += refusals.Add;
                    TestSupport.WaitConnected(a, b);
                    Assert.AreEqual(501u, idA, "A connected as its token's client id");
                    Assert.AreEqual(502u, idB, "B connected as its token's client id");

                    const ulong carA = 1001, carB = 1002;
                    a.RegisterEntity(carA);
                    b.RegisterEntity(carB);
                    NetsyncTransform onA = default(NetsyncTransform), onB = default(NetsyncTransform);
                    bool aSeesB = false, bSeesA = false;
                    TestSupport.Pump("each client to see the other's entity, and the plain client's refusal", 8.0, now =>
                    {
                        a.SetEntityState(new NetsyncSample(carA, TestSupport.Circle(now), TestSupport.Yaw(now)));
                        b.SetEntityState(carB, new NetsyncVec3(0, 0, 5), NetsyncQuat.Identity);
                        NetsyncTransform seen;
                        if (TestSupport.TryFind(a.Tick(now), carB, out seen))
                        {
                            onA = seen;
                            aSeesB = true;
                        }
                        if (TestSupport.TryFind(b.Tick(now), carA, out seen))
                        {
                            onB = seen;
                            bSeesA = true;
                        }
                        a.DispatchEvents();
                        b.DispatchEvents();
                        TestSupport.Step(now, plain);
                    }, () => aSeesB && bSeesA && refusals.Count > 0);

                    Assert.AreEqual(5f, onA.position.z, 1e-3, "A shows B's car where B put it");
                    double radius = Math.Sqrt(onB.position.x * onB.position.x + onB.position.z * onB.position.z);
                    Assert.AreEqual(1.0, radius, 0.05, "B shows A's car on its circle: " + onB.position);
                    Assert.AreEqual(502u, b.Stats.client_id);

                    Assert.AreEqual(DisconnectReason.TokenRequired, refusals[0]);
                    Assert.AreEqual(ConnectionState.Disconnected, plain.State);

                    var stats = relay.Stats;
                    Assert.AreEqual(2UL, stats.clients);
                    Assert.AreEqual(0UL, stats.dropped_bad_token);
                    Assert.AreEqual(0UL, stats.dropped_forged);
                    Assert.AreEqual(0UL, stats.dropped_replayed);
                }
            }
        }

        [Test]
        public void ATokenForAPlainRelayIsRefusedAsNotSecure()
        {
            using (var relay = TestSupport.StartRelay())
            {
                var token = ConnectTokens.IssueToken(ConnectTokens.GenerateSecret(), 7, "127.0.0.1:" + relay.Port, 60);
                using (var client = SyncClient.ConnectSecure(token))
                {
                    var reasons = new List<DisconnectReason>();
                    client.Disconnected += reasons.Add;
                    TestSupport.Pump("the refusal", 5.0, now => TestSupport.Step(now, client), () => reasons.Count > 0);
                    Assert.AreEqual(DisconnectReason.NotSecure, reasons[0]);
                    Assert.AreEqual(ConnectionState.Disconnected, client.State);
                }
            }
        }

        [Test]
        public void ATokenIssuedWithAnotherSecretIsDroppedAndCounted()
        {
            using (var relay = StartSecureRelay(ConnectTokens.GenerateSecret()))
            {
                string address = "127.0.0.1:" + relay.Port;
                var forged = ConnectTokens.IssueToken(ConnectTokens.GenerateSecret(), 9, address, 60);
                var config = NetsyncClientConfig.CreateDefault();
                config.connect_timeout = 0.5;
                config.Reconnect = false;
                using (var client = SyncClient.ConnectSecure(forged, config))
                {
                    var reasons = new List<DisconnectReason>();
                    client.Disconnected += reasons.Add;
                    TestSupport.Pump("the connect timeout", 5.0, now => TestSupport.Step(now, client), () => reasons.Count > 0);
                    Assert.AreEqual(DisconnectReason.ConnectTimeout, reasons[0], "a forged token gets no answer");
                    var stats = relay.Stats;
                    Assert.IsTrue(stats.dropped_bad_token >= 1, "dropped_bad_token " + stats.dropped_bad_token);
                    Assert.AreEqual(0UL, stats.clients);
                }
            }
        }

        [Test]
        public void SecretsAndTokensHaveTheNativeSizes()
        {
            var one = ConnectTokens.GenerateSecret();
            var two = ConnectTokens.GenerateSecret();
            Assert.AreEqual(ConnectTokens.SecretSize, one.Length);
            Assert.IsFalse(Convert.ToBase64String(one) == Convert.ToBase64String(two), "two secrets differ");
            Assert.IsFalse(Array.TrueForAll(one, x => x == 0), "a secret is not all zeros");

            // The sizes are the library's: one byte less is refused by name.
            var e = Assert.Throws<NetsyncException>(() => ConnectTokens.IssueToken(new byte[ConnectTokens.SecretSize - 1], 1, "127.0.0.1:7777", 60));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains("netsync_token_issue", e.NativeMessage);
            StringAssert.Contains("`secret` must be 32 bytes, got 31", e.NativeMessage);

            var token = ConnectTokens.IssueToken(one, 1, "127.0.0.1:7777", ConnectTokens.MaxLifetimeSeconds);
            Assert.AreEqual(ConnectTokens.TokenSize, token.Length);
            var truncated = new byte[ConnectTokens.TokenSize - 1];
            Array.Copy(token, truncated, truncated.Length);
            e = Assert.Throws<NetsyncException>(() => SyncClient.ConnectSecure(truncated));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains("netsync_client_connect_secure", e.NativeMessage);
            StringAssert.Contains("`token` must be 225 bytes, got 224", e.NativeMessage);
            StringAssert.StartsWith("NETSYNC_ERR_INVALID_ARGUMENT: netsync_client_connect_secure:", e.Message);

            e = Assert.Throws<NetsyncException>(() => ConnectTokens.IssueToken(one, 1, "127.0.0.1:7777", ConnectTokens.MaxLifetimeSeconds + 1));
            StringAssert.Contains("lifetime_seconds must be 1..=86400, got 86401", e.NativeMessage);
        }

        [Test]
        public void BadSecretsTokensAndAddressesAreRefusedWithTheNativeMessage()
        {
            var secret = ConnectTokens.GenerateSecret();
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;

            var e = Assert.Throws<NetsyncException>(() => RelayServer.StartSecure(config, new byte[16], "127.0.0.1"));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains("netsync_server_start_secure: `secret` must be 32 bytes, got 16", e.NativeMessage);
            e = Assert.Throws<NetsyncException>(() => RelayServer.StartSecure(config, null, "127.0.0.1"));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_NULL_POINTER, e.Code);
            StringAssert.Contains("`secret` is NULL", e.NativeMessage);
            e = Assert.Throws<NetsyncException>(() => RelayServer.StartSecure(config, secret, "127.0.0.1", "relay.example:7777"));
            StringAssert.Contains("`public_address` `relay.example:7777` is not IP:port", e.NativeMessage);

            e = Assert.Throws<NetsyncException>(() => ConnectTokens.IssueToken(secret, 0, "127.0.0.1:7777", 60));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains("client ids are 1..=4294967295", e.NativeMessage);
            e = Assert.Throws<NetsyncException>(() => ConnectTokens.IssueToken(secret, 1, "127.0.0.1:7777", 0));
            StringAssert.Contains("lifetime_seconds must be 1..=86400, got 0", e.NativeMessage);
            e = Assert.Throws<NetsyncException>(() => ConnectTokens.IssueToken(secret, 1, "nowhere", 60));
            StringAssert.Contains("`nowhere` is not IP:port", e.NativeMessage);
            e = Assert.Throws<NetsyncException>(() => ConnectTokens.IssueToken(null, 1, "127.0.0.1:7777", 60));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_NULL_POINTER, e.Code);
            Assert.Throws<ArgumentNullException>(() => ConnectTokens.IssueToken(secret, 1, null, 60));

            e = Assert.Throws<NetsyncException>(() => SyncClient.ConnectSecure(new byte[ConnectTokens.TokenSize]));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains("not a netsync connect token", e.NativeMessage);
            e = Assert.Throws<NetsyncException>(() => SyncClient.ConnectSecure(null));
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_NULL_POINTER, e.Code);
            StringAssert.Contains("`token` is NULL", e.NativeMessage);
            var token = ConnectTokens.IssueToken(secret, 1, "127.0.0.1:7777", 60);
            e = Assert.Throws<NetsyncException>(() => SyncClient.ConnectSecure(token, "not an address"));
            StringAssert.Contains("`not an address` is not IP:port", e.NativeMessage);
        }
    }
}
