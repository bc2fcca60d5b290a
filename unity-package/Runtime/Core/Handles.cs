using System;
using System.Runtime.InteropServices;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// Owns one native netsync handle and frees it exactly once: on
    /// Dispose, or from the finalizer if the owner was never disposed. The
    /// native handles are checked ids, so even a stale one is an error code
    /// in the library, never a crash. Use <see cref="SafeHandle.DangerousGetHandle"/>
    /// only to call <see cref="NativeMethods"/> directly.
    /// </summary>
    public abstract class NetsyncHandle : SafeHandle
    {
        protected NetsyncHandle() : base(IntPtr.Zero, true)
        {
        }

        public override bool IsInvalid
        {
            get { return handle == IntPtr.Zero; }
        }

        internal void Adopt(IntPtr value)
        {
            SetHandle(value);
        }

        /// <summary>Keeps the handle alive for one native call (no allocation).</summary>
        internal Lease Acquire()
        {
            return new Lease(this);
        }

        internal struct Lease : IDisposable
        {
            readonly NetsyncHandle _owner;
            readonly bool _added;
            public readonly IntPtr Pointer;

            public Lease(NetsyncHandle owner)
            {
                _owner = owner;
                bool added = false;
                // Throws ObjectDisposedException once the handle is closed.
                owner.DangerousAddRef(ref added);
                _added = added;
                Pointer = owner.DangerousGetHandle();
            }

            public void Dispose()
            {
                if (_added)
                {
                    _owner.DangerousRelease();
                }
            }
        }
    }

    /// <summary>Owns a <c>NetsyncClient*</c>; freeing it stops and joins the network thread.</summary>
    public sealed unsafe class ClientHandle : NetsyncHandle
    {
        protected override bool ReleaseHandle()
        {
            NativeMethods.netsync_client_free((NetsyncClient*)handle);
            return true;
        }
    }

    /// <summary>Owns a <c>NetsyncServer*</c>; freeing it stops and joins the relay thread.</summary>
    public sealed unsafe class ServerHandle : NetsyncHandle
    {
        protected override bool ReleaseHandle()
        {
            NativeMethods.netsync_server_free((NetsyncServer*)handle);
            return true;
        }
    }

    /// <summary>Owns a <c>NetsyncTimeline*</c>.</summary>
    public sealed unsafe class TimelineHandle : NetsyncHandle
    {
        protected override bool ReleaseHandle()
        {
            NativeMethods.netsync_timeline_free((NetsyncTimeline*)handle);
            return true;
        }
    }

    /// <summary>Owns a <c>NetsyncReplay*</c>.</summary>
    public sealed unsafe class ReplayHandle : NetsyncHandle
    {
        protected override bool ReleaseHandle()
        {
            NativeMethods.netsync_replay_free((NetsyncReplay*)handle);
            return true;
        }
    }

    /// <summary>Owns a <c>NetsyncSendFilter*</c>.</summary>
    public sealed unsafe class SendFilterHandle : NetsyncHandle
    {
        protected override bool ReleaseHandle()
        {
            NativeMethods.netsync_send_filter_free((NetsyncSendFilter*)handle);
            return true;
        }
    }
}
