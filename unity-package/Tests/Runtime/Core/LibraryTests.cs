using System;
using System.Collections.Generic;
using System.Reflection;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>The loaded library, the generated file and the idiomatic layer agree.</summary>
    [TestFixture]
    public class LibraryTests
    {
        [Test]
        public void AbiMajorOfTheLoadedLibraryMatchesTheBindings()
        {
            uint loaded = NetsyncLibrary.LoadedAbiVersion;
            Assert.AreEqual(NetsyncLibrary.BindingsAbiMajor, loaded >> 16);
            Assert.AreEqual(NetsyncLibrary.BindingsAbiMinor, loaded & 0xFFFF, "library and bindings of another minor");
        }

        [Test]
        public void AbiCheckRefusesAnotherMajorAndAnOtherMinorBeforeOnePointZero()
        {
            uint current = (NetsyncLibrary.BindingsAbiMajor << 16) | NetsyncLibrary.BindingsAbiMinor;
            NetsyncLibrary.CheckAbi(current);
            uint bindingsMajor = NetsyncLibrary.BindingsAbiMajor; // a variable: both branches compile
            if (bindingsMajor == 0)
            {
                // Before 1.0 a newer minor may change struct layouts.
                var newer = Assert.Throws<NetsyncLibraryException>(() => NetsyncLibrary.CheckAbi(current + 1));
                StringAssert.Contains("rebuild the library", newer.Message);
            }
            else
            {
                NetsyncLibrary.CheckAbi(current + 1); // a newer minor only adds functions
            }
            var major = Assert.Throws<NetsyncLibraryException>(
                () => NetsyncLibrary.CheckAbi(((NetsyncLibrary.BindingsAbiMajor + 1) << 16) | NetsyncLibrary.BindingsAbiMinor));
            StringAssert.Contains("need major " + NetsyncLibrary.BindingsAbiMajor, major.Message);
            if (NetsyncLibrary.BindingsAbiMinor > 0)
            {
                var minor = Assert.Throws<NetsyncLibraryException>(() => NetsyncLibrary.CheckAbi(current - 1));
                StringAssert.Contains("rebuild the library", minor.Message);
            }
        }

        [Test]
        public void EveryResultCodeHasItsNativeName()
        {
            foreach (NetsyncResult code in Enum.GetValues(typeof(NetsyncResult)))
            {
                Assert.AreEqual(code.ToString(), NetsyncLibrary.ResultName(code));
            }
            Assert.AreEqual("NETSYNC_UNKNOWN", NetsyncLibrary.ResultName((NetsyncResult)9999));
        }

        static readonly Dictionary<string, Type> s_groups = new Dictionary<string, Type>
        {
            { "NETSYNC_STATE_", typeof(ConnectionState) },
            { "NETSYNC_EVENT_", typeof(ClientEventKind) },
            { "NETSYNC_KIND_", typeof(EntityKind) },
            { "NETSYNC_CLAIM_", typeof(ClaimRefusal) },
            { "NETSYNC_REASON_", typeof(DisconnectReason) },
            { "NETSYNC_NETWORK_", typeof(NetworkProfile) },
            { "NETSYNC_LOG_", typeof(NetsyncLogLevel) },
            { "NETSYNC_MODE_", typeof(InterpolationMode) },
            { "NETSYNC_ORDER_", typeof(PredictionOrder) },
            { "NETSYNC_SMOOTHING_", typeof(SmoothingKind) },
            { "NETSYNC_SEND_", typeof(SendPolicy) },
            { "NETSYNC_DECISION_", typeof(SendDecision) },
            { "NETSYNC_SAMPLE_", typeof(SampleFlags) },
            { "NETSYNC_TRANSFORM_", typeof(TransformFlags) },
            { "NETSYNC_REMOVED_", typeof(RemovalReason) },
            { "NETSYNC_MESSAGE_", typeof(MessageKind) },
            { "NETSYNC_INTEREST_", typeof(InterestFlags) },
            { "NETSYNC_NEUTRAL_", typeof(NeutralInitialHolder) },
            { "NETSYNC_SERVER_EVENT_", typeof(ServerEventKind) },
            { "NETSYNC_SERVER_REFUSED_", typeof(CallRefusal) },
            { "NETSYNC_LOCKSTEP_STATE_", typeof(LockstepState) },
            { "NETSYNC_LOCKSTEP_ITEM_", typeof(LockstepItemKind) },
            { "NETSYNC_LOCKSTEP_INPUT_", typeof(LockstepInputFlags) },
            { "NETSYNC_LOCKSTEP_EVENT_", typeof(LockstepEventKind) },
            { "NETSYNC_RECORDING_", typeof(RecordingKind) },
            { "NETSYNC_LOCKSTEP_REFUSED_", typeof(LockstepRefusal) },
            { "NETSYNC_SCRIPTED_REFUSED_", typeof(ScriptedRefusal) },
        };

        [Test]
        public void EveryNativeConstantHasATypedEnumMember()
        {
            var missing = new List<string>();
            foreach (var field in typeof(NativeMethods).GetFields(BindingFlags.Public | BindingFlags.Static))
            {
                if (!field.IsLiteral || !field.Name.StartsWith("NETSYNC_", StringComparison.Ordinal) ||
                    field.Name.StartsWith("NETSYNC_ABI_VERSION", StringComparison.Ordinal))
                {
                    continue;
                }
                Type group = null;
                foreach (var pair in s_groups)
                {
                    if (field.Name.StartsWith(pair.Key, StringComparison.Ordinal) &&
                        (group == null || pair.Key.Length > GroupPrefixLength(group)))
                    {
                        group = pair.Value;
                    }
                }
                if (group == null)
                {
                    missing.Add(field.Name + " (no enum for its group: add one in Runtime/Core)");
                    continue;
                }
                object value = Enum.ToObject(group, field.GetValue(null));
                if (!Enum.IsDefined(group, value))
                {
                    missing.Add(field.Name + " (no member of " + group.Name + ")");
                }
            }
            Assert.IsTrue(missing.Count == 0, "constants without a typed member: " + string.Join(", ", missing.ToArray()));
        }

        static int GroupPrefixLength(Type group)
        {
            foreach (var pair in s_groups)
            {
                if (pair.Value == group)
                {
                    return pair.Key.Length;
                }
            }
            return 0;
        }

        [Test]
        public unsafe void BlittableStructsHaveTheHeaderLayout()
        {
            // Sizes of the C structs (x86_64 and arm64 alike).
            Assert.AreEqual(12, sizeof(NetsyncVec3));
            Assert.AreEqual(16, sizeof(NetsyncQuat));
            Assert.AreEqual(64, sizeof(NetsyncSample));
            Assert.AreEqual(40, sizeof(NetsyncTransform));
            Assert.AreEqual(24, sizeof(NetsyncClientEvent));
            Assert.AreEqual(48, sizeof(NetsyncMessage));
            Assert.AreEqual(120, sizeof(NetsyncServerConfig));
            Assert.AreEqual(31 * 8, sizeof(NetsyncServerStats));
            Assert.AreEqual(24, sizeof(NetsyncServerEvent));
            Assert.AreEqual(24, sizeof(NetsyncLockstepFrame));
            Assert.AreEqual(16, sizeof(NetsyncLockstepInput));
            Assert.AreEqual(24, sizeof(NetsyncLockstepEvent));
            Assert.AreEqual(64, sizeof(NetsyncLockstepStatus));
            Assert.AreEqual(56, sizeof(NetsyncScriptedSpawn));
            Assert.AreEqual(88, sizeof(NetsyncReplayInfo));
            // Documented defaults read through the structs: a wrong offset
            // before a field shows up as garbage in it.
            var server = NetsyncServerConfig.CreateDefault();
            Assert.AreEqual(7777, server.port);
            Assert.AreEqual(1200, server.mtu);
            Assert.AreEqual(19200, server.budget_per_tick);
            Assert.AreEqual(1024, server.max_clients);
            Assert.AreEqual(4096, server.max_entities_per_client);
            Assert.AreEqual(5.0, server.idle_timeout);
            Assert.AreEqual(50f, server.cell_size);
            Assert.AreEqual(0.3, server.claim_cooldown, 1e-12);
            Assert.AreEqual(2.0, server.rest_timeout);
            Assert.AreEqual(NeutralInitialHolder.FirstReady, server.NeutralInitialHolder);
            Assert.AreEqual(65536, server.server_inbox_capacity);
            Assert.AreEqual(3, server.lockstep_input_delay);
            Assert.AreEqual(30, server.lockstep_sync_interval);
            Assert.AreEqual(1.0, server.lockstep_stall_timeout);
            Assert.AreEqual(1, server.lockstep_min_members);
            Assert.AreEqual(16, server.lockstep_max_members);
            Assert.AreEqual(36000, server.lockstep_history_frames);
            Assert.AreEqual(16UL << 20, server.lockstep_history_bytes);
            Assert.AreEqual(600, server.lockstep_hash_window);
            var timeline = NetsyncTimelineConfig.CreateDefault();
            Assert.AreEqual(InterpolationMode.Adaptive, timeline.Mode);
            Assert.AreEqual(64, timeline.max_samples_per_entity);
            Assert.AreEqual(1048576, timeline.max_entities);
            var filter = NetsyncSendFilterConfig.CreateDefault();
            Assert.AreEqual(SendPolicy.DeadReckoning, filter.Policy);
            var client = NetsyncClientConfig.CreateDefault();
            Assert.AreEqual(timeline.max_entities, client.timeline.max_entities);
            Assert.AreEqual(filter.order, client.send_filter.order);
            Assert.IsTrue(client.Reconnect);
            Assert.AreEqual(NetworkProfile.None, client.Conditioner);
            // And written through them: the library names the field a bad
            // value landed in, so each one is where C# put it.
            ExpectRefusal("max_entities must be > 0", () =>
            {
                var c = NetsyncClientConfig.CreateDefault();
                c.timeline.max_entities = 0;
                SyncClient.Connect("127.0.0.1:7777", c).Dispose();
            });
            ExpectRefusal("max_interval must be finite and > 0", () =>
            {
                var c = NetsyncClientConfig.CreateDefault();
                c.send_filter.max_interval = -1;
                SyncClient.Connect("127.0.0.1:7777", c).Dispose();
            });
            ExpectRefusal("reconnect must be 0 or 1", () =>
            {
                var c = NetsyncClientConfig.CreateDefault();
                c.reconnect = 2;
                SyncClient.Connect("127.0.0.1:7777", c).Dispose();
            });
            ExpectRefusal("conditioner 99 is not a NETSYNC_NETWORK_*", () =>
            {
                var c = NetsyncClientConfig.CreateDefault();
                c.conditioner = 99;
                SyncClient.Connect("127.0.0.1:7777", c).Dispose();
            });
            ExpectRefusal("idle_timeout must be 0.5..=600 s", () =>
            {
                var c = NetsyncServerConfig.CreateDefault();
                c.idle_timeout = 0.1;
                RelayServer.Start(c, "127.0.0.1").Dispose();
            });
            ExpectRefusal("cell_size must be 0 (no grid) ..= 1e6 m", () =>
            {
                var c = NetsyncServerConfig.CreateDefault();
                c.cell_size = -1f;
                RelayServer.Start(c, "127.0.0.1").Dispose();
            });
            ExpectRefusal("claim_cooldown must be 0..=60 s", () =>
            {
                var c = NetsyncServerConfig.CreateDefault();
                c.claim_cooldown = 61;
                RelayServer.Start(c, "127.0.0.1").Dispose();
            });
            ExpectRefusal("rest_timeout must be 0 (never) ..= 3600 s", () =>
            {
                var c = NetsyncServerConfig.CreateDefault();
                c.rest_timeout = double.NaN;
                RelayServer.Start(c, "127.0.0.1").Dispose();
            });
            ExpectRefusal("neutral_initial_holder 7 is not a NETSYNC_NEUTRAL_* value", () =>
            {
                var c = NetsyncServerConfig.CreateDefault();
                c.neutral_initial_holder = 7;
                RelayServer.Start(c, "127.0.0.1").Dispose();
            });
        }

        static void ExpectRefusal(string message, TestDelegate code)
        {
            var e = Assert.Throws<NetsyncException>(code);
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_INVALID_ARGUMENT, e.Code);
            StringAssert.Contains(message, e.NativeMessage);
        }

        [Test]
        public void APanicInsideTheLibraryIsAnExceptionNotACrash()
        {
            var e = Assert.Throws<NetsyncException>(NetsyncLibrary.DebugPanic);
            Assert.AreEqual(NetsyncResult.NETSYNC_ERR_PANIC, e.Code);
            StringAssert.Contains("deliberate panic", e.NativeMessage);
            StringAssert.StartsWith("NETSYNC_ERR_PANIC: netsync_debug_panic: internal panic", e.Message);
            // The library goes on working.
            using (var timeline = new Timeline())
            {
                Assert.AreEqual(0, timeline.EntityCount);
            }
        }
    }
}
