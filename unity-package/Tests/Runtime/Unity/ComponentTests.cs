using System;
using System.Collections;
using System.Collections.Generic;
using Netsync.Native;
using Netsync.Unity;
using NUnit.Framework;
using UnityEngine;
using UnityEngine.TestTools;

namespace Netsync.Tests
{
    /// <summary>
    /// The components in play mode: a manager hosting a relay in this scene,
    /// and a plain <see cref="SyncClient"/> standing in for another machine.
    /// </summary>
    public class ComponentTests
    {
        /// <summary>A synced component holding one int.</summary>
        public sealed class Counter : SyncedComponent
        {
            public int Value;
            public int Commands;

            public void Set(int value)
            {
                Value = value;
                MarkDirty();
            }

            protected override int WriteState(Span<byte> buffer)
            {
                BitConverter.TryWriteBytes(buffer, Value);
                return 4;
            }

            protected override void ReadState(ReadOnlySpan<byte> state, ulong version)
            {
                Value = BitConverter.ToInt32(state);
            }

            protected override void OnCommand(uint sender, ReadOnlySpan<byte> command)
            {
                Commands++;
            }
        }

        readonly List<GameObject> _objects = new List<GameObject>();
        SyncClient _other;

        [TearDown]
        public void TearDown()
        {
            if (_other != null)
            {
                _other.Dispose();
                _other = null;
            }
            foreach (var o in _objects)
            {
                if (o != null)
                {
                    UnityEngine.Object.DestroyImmediate(o);
                }
            }
            _objects.Clear();
            NetsyncRuntime.Shutdown();
        }

        static int FreePort()
        {
            using (var probe = TestSupport.StartRelay())
            {
                return probe.Port;
            }
        }

        NetsyncManager HostManager()
        {
            var go = new GameObject("netsync manager");
            _objects.Add(go);
            var manager = go.AddComponent<NetsyncManager>();
            manager.dontDestroyOnLoad = false;
            manager.hostRelay = true;
            manager.hostBindAddress = "127.0.0.1";
            manager.relayPort = FreePort();
            manager.logLevel = NetsyncLogLevel.Warn;
            return manager;
        }

        T Synced<T>(string name, ulong id, SyncRole role, Vector3 position) where T : SyncedTransform
        {
            var go = GameObject.CreatePrimitive(PrimitiveType.Cube);
            go.name = name;
            go.SetActive(false);
            go.transform.position = position;
            _objects.Add(go);
            var synced = go.AddComponent<T>();
            synced.EntityId = id;
            synced.Role = role;
            go.SetActive(true);
            return synced;
        }

        IEnumerator Until(string what, float seconds, Func<bool> done)
        {
            float end = Time.realtimeSinceStartup + seconds;
            while (!done())
            {
                if (_other != null)
                {
                    _other.Tick(NetsyncManager.Now);
                    _other.Dispatch();
                }
                if (Time.realtimeSinceStartup > end)
                {
                    Assert.Fail("timed out waiting for " + what);
                }
                yield return null;
            }
        }

        [Test]
        public void NetsyncStructsHaveUnityLayouts()
        {
            Assert.IsTrue(NetsyncUnity.LayoutsMatch);
            var v = new NetsyncVec3(1, 2, 3);
            ref Vector3 view = ref NetsyncUnity.AsVector3(ref v);
            view.y = 5;
            Assert.AreEqual(5f, v.y);
            var q = NetsyncQuat.Identity;
            Assert.AreEqual(Quaternion.identity, NetsyncUnity.AsQuaternion(ref q));
            Vector3 converted = new NetsyncVec3(4, 5, 6);
            Assert.AreEqual(new Vector3(4, 5, 6), converted);
        }

        [UnityTest]
        public IEnumerator TheManagerSendsControlledObjectsAndMovesProxies()
        {
            var manager = HostManager();
            var mine = Synced<SyncedTransform>("mine", 43, SyncRole.Controlled, new Vector3(1, 2, 3));
            var proxy = Synced<SyncedTransform>("proxy", 42, SyncRole.RemoteProxy, Vector3.zero);
            yield return Until("the manager to connect", 5, () => manager.IsConnected);

            _other = SyncClient.Connect("127.0.0.1:" + manager.relayPort);
            _other.RegisterEntity(42);
            var target = new Vector3(-4, 1, 7);
            NetsyncTransform seen = default(NetsyncTransform);
            yield return Until("both sides to see the other's object", 8, () =>
            {
                _other.SetEntityState(42, target.ToNetsync(), Quaternion.Euler(0, 90, 0).ToNetsync());
                mine.transform.position = new Vector3(1, 2, 3);
                return (proxy.transform.position - target).magnitude < 0.01f &&
                       TestSupport.TryFind(_other.LastTransforms, 43, out seen);
            });
            Assert.AreEqual(3f, seen.position.z, 1e-3);
            Assert.AreEqual(90f, proxy.transform.rotation.eulerAngles.y, 0.5f);
            Assert.IsTrue(mine.IsLocallySimulated);
            Assert.IsFalse(proxy.IsLocallySimulated);
            Assert.IsTrue(manager.Stats.rtt > 0, "rtt " + manager.Stats.rtt);
        }

        [UnityTest]
        public IEnumerator ACollisionClaimsANeutralBodyAndMakesItSimulated()
        {
            var manager = HostManager();
            yield return Until("the manager to connect", 5, () => manager.IsConnected);
            _other = SyncClient.Connect("127.0.0.1:" + manager.relayPort);
            bool otherLost = false;
            _other.RightLost += id => otherLost |= id == 61;
            _other.RegisterEntity(61, EntityKind.Neutral); // the other machine holds the ball first
            yield return Until("the other machine to hold the ball", 5, () => _other.Holds(61));

            var ball = Synced<SyncedRigidbody>("ball", 61, SyncRole.Neutral, new Vector3(0, 0.5f, 0));
            yield return Until("the ball to be registered here", 5, () => ball.IsAttached);
            Assert.IsTrue(ball.Body.isKinematic, "someone else simulates the ball");

            // This machine's car falls onto the ball.
            var car = Synced<SyncedRigidbody>("car", 60, SyncRole.Controlled, new Vector3(0, 3f, 0));
            Assert.IsFalse(car.Body.isKinematic);
            yield return Until("the collision to claim the ball", 8, () =>
            {
                _other.SetEntityState(61, new NetsyncVec3(0, 0.5f, 0), NetsyncQuat.Identity);
                return ball.HoldsRight && otherLost;
            });
            Assert.IsFalse(ball.Body.isKinematic, "the ball is simulated here now");
            Assert.IsFalse(_other.Holds(61));
        }

        [UnityTest]
        public IEnumerator SyncedComponentsSendStateAndReceiveCommands()
        {
            var manager = HostManager();
            var mine = Synced<SyncedTransform>("mine", 80, SyncRole.Controlled, Vector3.zero);
            var counter = mine.gameObject.AddComponent<Counter>();
            yield return Until("the manager to connect", 5, () => manager.IsConnected);
            _other = SyncClient.Connect("127.0.0.1:" + manager.relayPort);
            int seen = -1;
            _other.ComponentStateReceived += (entity, component, version, payload) =>
            {
                if (entity == 80 && component == counter.ComponentId)
                {
                    seen = BitConverter.ToInt32(payload);
                }
            };
            counter.Set(41);
            yield return Until("the other machine to get the state", 5, () => seen == 41);

            _other.RegisterComponent(80, counter.ComponentId, true);
            _other.SendComponentCommand(80, counter.ComponentId, new byte[] { 1 });
            yield return Until("the command to reach the holder", 5, () => counter.Commands == 1);

            counter.Synced = false;
            counter.Set(42);
            float until = Time.realtimeSinceStartup + 0.5f;
            yield return Until("half a second of frames", 2, () => Time.realtimeSinceStartup > until);
            Assert.AreEqual(41, seen, "an unsynced component stays here");
            counter.Synced = true;
            yield return Until("the state once synced again", 5, () => seen == 42);
        }
    }
}
