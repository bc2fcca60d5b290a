using System;
using System.Collections.Generic;
using System.Threading;
using Netsync.Native;
using NUnit.Framework;

namespace Netsync.Tests
{
    /// <summary>The log callback and the shutdown the editor relies on.</summary>
    [TestFixture]
    public class LogAndRuntimeTests
    {
        sealed class Record
        {
            public NetsyncLogLevel Level;
            public string Target;
            public string Message;
            public int Thread;
        }

        readonly List<Record> _records = new List<Record>();

        void Collect(NetsyncLogLevel level, string target, string message)
        {
            lock (_records)
            {
                _records.Add(new Record { Level = level, Target = target, Message = message, Thread = System.Threading.Thread.CurrentThread.ManagedThreadId });
            }
        }

        Record Find(Func<Record, bool> match)
        {
            lock (_records)
            {
                foreach (var r in _records)
                {
                    if (match(r))
                    {
                        return r;
                    }
                }
            }
            return null;
        }

        [TearDown]
        public void ClearLog()
        {
            NetsyncLog.ClearHandler();
        }

        [Test]
        public void TheLogCallbackFiresAndStopsWhenCleared()
        {
            NetsyncLog.SetHandler(Collect, NetsyncLogLevel.Debug);
            NetsyncLog.Write(NetsyncLogLevel.Warn, "hello from C# ünïcödé");
            var own = Find(r => r.Message == "hello from C# ünïcödé");
            Assert.IsNotNull(own, "the record written through netsync_log_message came back");
            Assert.AreEqual(NetsyncLogLevel.Warn, own.Level);
            Assert.AreEqual("netsync::host", own.Target);

            // A failing call logs its reason at debug level from inside the library.
            Assert.Throws<NetsyncException>(() => SyncClient.Connect("nowhere"));
            var ffi = Find(r => r.Target == "netsync::ffi" && r.Message.Contains("netsync_client_connect"));
            Assert.IsNotNull(ffi, "the library's own debug record of the failure reached the handler");
            Assert.AreEqual(NetsyncLogLevel.Debug, ffi.Level);

            // A panic is logged as an error too.
            Assert.Throws<NetsyncException>(NetsyncLibrary.DebugPanic);
            var panic = Find(r => r.Level == NetsyncLogLevel.Error && r.Message.Contains("internal panic"));
            Assert.IsNotNull(panic);

            NetsyncLog.ClearHandler();
            Assert.IsNull(NetsyncLog.Handler);
            int before;
            lock (_records)
            {
                before = _records.Count;
            }
            NetsyncLog.Write(NetsyncLogLevel.Error, "nobody hears this");
            lock (_records)
            {
                Assert.AreEqual(before, _records.Count);
            }
        }

        [Test]
        public void TheLevelFilterHoldsBackVerboseRecords()
        {
            NetsyncLog.SetHandler(Collect, NetsyncLogLevel.Warn);
            NetsyncLog.Write(NetsyncLogLevel.Info, "too chatty");
            NetsyncLog.Write(NetsyncLogLevel.Error, "important");
            Assert.IsNull(Find(r => r.Message == "too chatty"));
            Assert.IsNotNull(Find(r => r.Message == "important"));
            Assert.Throws<ArgumentException>(() => NetsyncLog.SetHandler(Collect, NetsyncLogLevel.Off));
            Assert.Throws<ArgumentException>(() => NetsyncLog.Write(NetsyncLogLevel.Off, "x"));
        }

        [Test]
        public void AThrowingHandlerIsContained()
        {
            int failures = NetsyncLog.HandlerFailures;
            NetsyncLog.SetHandler((level, target, message) => { throw new InvalidOperationException("handler bug"); });
            NetsyncLog.Write(NetsyncLogLevel.Error, "boom");
            Assert.AreEqual(failures + 1, NetsyncLog.HandlerFailures);
        }

        [Test]
        public void ShutdownDropsTheLogThenStopsEveryObject()
        {
            NetsyncLog.SetHandler(Collect, NetsyncLogLevel.Info);
            var relay = TestSupport.StartRelay();
            var client = TestSupport.ConnectTo(relay);
            var timeline = new Timeline();
            var filter = new SendFilter();
            Assert.IsTrue(NetsyncRuntime.LiveObjects >= 4);

            int stopped = NetsyncRuntime.Shutdown();

            Assert.IsTrue(stopped >= 4, "stopped " + stopped);
            Assert.AreEqual(0, NetsyncRuntime.LiveObjects);
            Assert.IsNull(NetsyncLog.Handler);
            Assert.IsTrue(client.IsDisposed);
            Assert.IsTrue(relay.IsDisposed);
            Assert.IsTrue(timeline.Handle.IsClosed);
            Assert.IsTrue(filter.Handle.IsClosed);
            Assert.AreEqual(0, NetsyncRuntime.Shutdown(), "a second shutdown finds nothing");
            // The native objects are gone: the port is free again.
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;
            using (var again = RelayServer.Start(config, "127.0.0.1"))
            {
                Assert.IsTrue(again.Port > 0);
            }
        }

#if !UNITY_5_3_OR_NEWER
        // Plain Mono only: Unity's Boehm collector scans stacks conservatively,
        // so no test there can count on one given object being collected.
        [Test]
        public void AnUndisposedClientIsFreedByItsFinalizer()
        {
            var config = NetsyncServerConfig.CreateDefault();
            config.port = 0;
            config.idle_timeout = 0.5;
            using (var relay = RelayServer.Start(config, "127.0.0.1"))
            {
                int live = NetsyncRuntime.LiveObjects;
                ConnectAndForget(relay);
                Assert.AreEqual(1, relay.Stats.clients);
                // Nobody disposes the client: the finalizer of its handle
                // frees it, its network thread stops, and the relay drops it
                // after its idle timeout.
                TestSupport.Pump("the relay to drop the leaked client", 5.0, now =>
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                }, () => relay.Stats.clients == 0);
                Assert.AreEqual(1, relay.Stats.clients_left);
                Assert.AreEqual(live, NetsyncRuntime.LiveObjects);
            }
        }

        // Not inlined into the test so that no local keeps the client alive.
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static void ConnectAndForget(RelayServer relay)
        {
            var client = TestSupport.ConnectTo(relay);
            TestSupport.WaitConnected(client);
            TestSupport.Pump("the relay to count the client", 5.0, now => TestSupport.Step(now, client),
                () => relay.Stats.clients == 1);
        }
#endif
    }
}
