using System;
using System.Threading;
using AOT;
using Netsync.Native;

namespace Netsync
{
    /// <summary>Receives one log record from netsync (and laminar under it).</summary>
    /// <remarks>Called on any netsync thread, network threads included. It
    /// must be quick and thread-safe; exceptions it throws are caught and
    /// counted in <see cref="NetsyncLog.HandlerFailures"/>, never passed to
    /// native code.</remarks>
    public delegate void NetsyncLogHandler(NetsyncLogLevel level, string target, string message);

    /// <summary>
    /// The one log sink of the native library. Set a handler once (the
    /// Unity manager forwards to <c>Debug.Log</c>); clear it before the code
    /// that holds the handler goes away (a domain reload): after
    /// <see cref="ClearHandler"/> returns, native code never calls back.
    /// </summary>
    public static unsafe class NetsyncLog
    {
        static readonly object s_gate = new object();
        static NetsyncLogHandler s_handler;
        static int s_failures;

        // One delegate for the process: the native side keeps its function
        // pointer, so it must never be collected.
        static readonly NativeMethods.netsync_set_log_callback_callback_delegate s_callback = OnNativeLog;

        /// <summary>The handler in place, or null.</summary>
        public static NetsyncLogHandler Handler
        {
            get { return Volatile.Read(ref s_handler); }
        }

        /// <summary>Exceptions thrown by handlers (swallowed at the boundary).</summary>
        public static int HandlerFailures
        {
            get { return Volatile.Read(ref s_failures); }
        }

        /// <summary>Routes every record up to <paramref name="maxLevel"/> to <paramref name="handler"/>.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE when called from inside a handler,
        /// or when a Rust host installed another logger.</exception>
        public static void SetHandler(NetsyncLogHandler handler, NetsyncLogLevel maxLevel = NetsyncLogLevel.Info)
        {
            if (handler == null)
            {
                ClearHandler();
                return;
            }
            if (maxLevel == NetsyncLogLevel.Off)
            {
                throw new ArgumentException("use ClearHandler to stop logging", "maxLevel");
            }
            NetsyncLibrary.EnsureCompatible();
            lock (s_gate)
            {
                var previous = s_handler;
                Volatile.Write(ref s_handler, handler);
                var result = NativeMethods.netsync_set_log_callback(s_callback, null, (uint)maxLevel);
                if (result != NetsyncResult.NETSYNC_OK)
                {
                    var failure = NetsyncLibrary.Failure(result);
                    Volatile.Write(ref s_handler, previous);
                    throw failure;
                }
            }
        }

        /// <summary>
        /// Stops all log calls. Waits for calls in flight: once this returns,
        /// the old handler is never called again (safe before a domain reload).
        /// </summary>
        public static void ClearHandler()
        {
            NetsyncLibrary.EnsureCompatible();
            lock (s_gate)
            {
                NetsyncLibrary.Check(NativeMethods.netsync_set_log_callback(null, null, NativeMethods.NETSYNC_LOG_OFF));
                Volatile.Write(ref s_handler, null);
            }
        }

        /// <summary>Sends a record through the native sink (checks the wiring end to end).</summary>
        public static void Write(NetsyncLogLevel level, string message)
        {
            if (level == NetsyncLogLevel.Off)
            {
                throw new ArgumentException("a record needs a level from Error to Trace", "level");
            }
            NetsyncLibrary.EnsureCompatible();
            var bytes = Utf8.ToNative(message, "message");
            fixed (byte* p = bytes)
            {
                NetsyncLibrary.Check(NativeMethods.netsync_log_message((uint)level, p));
            }
        }

        [MonoPInvokeCallback(typeof(NativeMethods.netsync_set_log_callback_callback_delegate))]
        static void OnNativeLog(void* userData, uint level, byte* target, byte* message)
        {
            // Nothing may unwind into native code.
            try
            {
                var handler = Volatile.Read(ref s_handler);
                if (handler != null)
                {
                    handler((NetsyncLogLevel)level, Utf8.FromNative(target), Utf8.FromNative(message));
                }
            }
            catch (Exception)
            {
                Interlocked.Increment(ref s_failures);
            }
        }
    }
}
