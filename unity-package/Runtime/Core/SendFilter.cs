using System;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// Sender side of S4: decides whether an owned entity's state is worth
    /// sending (dead reckoning or change thresholds, heartbeat). For your own
    /// transport; a <see cref="SyncClient"/> has one inside already.
    /// </summary>
    public sealed unsafe partial class SendFilter : IDisposable
    {
        readonly SendFilterHandle _handle;

        /// <summary>Dead reckoning, 1 cm, 1 degree, 1 s heartbeat.</summary>
        public SendFilter() : this(NetsyncSendFilterConfig.CreateDefault())
        {
        }

        public SendFilter(NetsyncSendFilterConfig config)
        {
            NetsyncLibrary.EnsureCompatible();
            _handle = new SendFilterHandle();
            NetsyncSendFilter* native = null;
            var result = NativeMethods.netsync_send_filter_new(&config, &native);
            if (result != NetsyncResult.NETSYNC_OK)
            {
                _handle.Dispose();
                throw NetsyncLibrary.Failure(result);
            }
            _handle.Adopt((IntPtr)native);
            NetsyncRuntime.Track(this);
        }

        public SendFilterHandle Handle
        {
            get { return _handle; }
        }

        /// <summary>Feeds the true state at <paramref name="now"/> (s); anything but
        /// <see cref="SendDecision.Skip"/> means send it (and it becomes the reference).</summary>
        public SendDecision Update(double now, in NetsyncSample state)
        {
            uint decision;
            var copy = state;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_send_filter_update((NetsyncSendFilter*)l.Pointer, now, &copy, &decision));
            }
            return (SendDecision)decision;
        }

        /// <summary>Forgets an entity (its next update is sent); false when it was not tracked.</summary>
        public bool Forget(ulong entityId)
        {
            using (var l = _handle.Acquire())
            {
                var result = NativeMethods.netsync_send_filter_forget((NetsyncSendFilter*)l.Pointer, entityId);
                if (result == NetsyncResult.NETSYNC_ERR_UNKNOWN_ENTITY)
                {
                    return false;
                }
                NetsyncLibrary.Check(result);
                return true;
            }
        }

        public void Dispose()
        {
            NetsyncRuntime.Untrack(this);
            _handle.Dispose();
        }
    }
}
