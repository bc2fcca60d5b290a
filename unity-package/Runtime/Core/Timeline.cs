using System;
using System.Runtime.InteropServices;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// Bring your own transport: snapshots in from any network layer, one
    /// batch of smooth, server-aligned transforms out per frame. Not
    /// thread-safe (overlapping calls fail with NETSYNC_ERR_BUSY).
    /// </summary>
    public sealed unsafe partial class Timeline : IDisposable
    {
        readonly TimelineHandle _handle;
        NetsyncTransform[] _transforms = new NetsyncTransform[64];
        int _transformCount;

        /// <summary>A timeline with the library's defaults (adaptive mode).</summary>
        public Timeline() : this(NetsyncTimelineConfig.CreateDefault())
        {
        }

        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT for a setting out of range.</exception>
        public Timeline(NetsyncTimelineConfig config)
        {
            NetsyncLibrary.EnsureCompatible();
            _handle = new TimelineHandle();
            NetsyncTimeline* native = null;
            var result = NativeMethods.netsync_timeline_new(&config, &native);
            if (result != NetsyncResult.NETSYNC_OK)
            {
                _handle.Dispose();
                throw NetsyncLibrary.Failure(result);
            }
            _handle.Adopt((IntPtr)native);
            NetsyncRuntime.Track(this);
        }

        public TimelineHandle Handle
        {
            get { return _handle; }
        }

        /// <summary>A snapshot stamped <paramref name="serverTime"/> arrived at client time <paramref name="now"/>.
        /// Entities not in it are taken as unchanged. Validates everything first: on error nothing changed.</summary>
        public void Push(double now, double serverTime, ReadOnlySpan<NetsyncSample> samples)
        {
            using (var l = _handle.Acquire())
            {
                fixed (NetsyncSample* p = &MemoryMarshal.GetReference(samples))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_timeline_push(
                        (NetsyncTimeline*)l.Pointer, now, serverTime, p, (UIntPtr)samples.Length));
                }
            }
        }

        /// <summary>Array form of <see cref="Push(double, double, ReadOnlySpan{NetsyncSample})"/>: the first <paramref name="count"/> samples.</summary>
        public void Push(double now, double serverTime, NetsyncSample[] samples, int count)
        {
            if (samples == null)
            {
                throw new ArgumentNullException("samples");
            }
            if (count < 0 || count > samples.Length)
            {
                throw new ArgumentOutOfRangeException("count", count, "must be 0.." + samples.Length);
            }
            Push(now, serverTime, new ReadOnlySpan<NetsyncSample>(samples, 0, count));
        }

        /// <summary>Advances to client time <paramref name="now"/> (never before the previous tick) and
        /// returns every entity's transform; the span is valid until the next tick.</summary>
        public ReadOnlySpan<NetsyncTransform> Tick(double now)
        {
            using (var l = _handle.Acquire())
            {
                while (true)
                {
                    UIntPtr count;
                    NetsyncResult result;
                    fixed (NetsyncTransform* buffer = _transforms)
                    {
                        result = NativeMethods.netsync_timeline_tick(
                            (NetsyncTimeline*)l.Pointer, now, buffer, (UIntPtr)_transforms.Length, &count);
                    }
                    if (result == NetsyncResult.NETSYNC_OK)
                    {
                        _transformCount = (int)count;
                        break;
                    }
                    if (result != NetsyncResult.NETSYNC_ERR_BUFFER_TOO_SMALL)
                    {
                        _transformCount = 0;
                        throw NetsyncLibrary.Failure(result);
                    }
                    // Nothing changed (the timeline's contract): grow and tick again.
                    _transforms = new NetsyncTransform[Math.Max((int)count, _transforms.Length * 2)];
                }
            }
            return new ReadOnlySpan<NetsyncTransform>(_transforms, 0, _transformCount);
        }

        /// <summary>Entities on the timeline.</summary>
        public int EntityCount
        {
            get
            {
                UIntPtr count;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_timeline_entity_count((NetsyncTimeline*)l.Pointer, &count));
                }
                return (int)count;
            }
        }

        /// <summary>Removes an entity; false when it was not there.</summary>
        public bool Remove(ulong entityId)
        {
            using (var l = _handle.Acquire())
            {
                var result = NativeMethods.netsync_timeline_remove((NetsyncTimeline*)l.Pointer, entityId);
                if (result == NetsyncResult.NETSYNC_ERR_UNKNOWN_ENTITY)
                {
                    return false;
                }
                NetsyncLibrary.Check(result);
                return true;
            }
        }

        /// <summary>One entity's mode; <see cref="InterpolationMode.Inherit"/> goes back to the timeline's.</summary>
        public void SetEntityMode(ulong entityId, InterpolationMode mode)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_timeline_set_entity_mode((NetsyncTimeline*)l.Pointer, entityId, (uint)mode));
            }
        }

        /// <summary>Predicted mode's lead past the arrival clock (s, |lead| &lt;= 10).</summary>
        public void SetPredictionLead(double lead)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_timeline_set_prediction_lead((NetsyncTimeline*)l.Pointer, lead));
            }
        }

        /// <summary>Server time that <paramref name="mode"/> showed at the last tick.</summary>
        public double RenderTime(InterpolationMode mode)
        {
            double t;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_timeline_render_time((NetsyncTimeline*)l.Pointer, (uint)mode, &t));
            }
            return t;
        }

        public NetsyncTimelineStats Stats
        {
            get
            {
                NetsyncTimelineStats stats;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_timeline_stats((NetsyncTimeline*)l.Pointer, &stats));
                }
                return stats;
            }
        }

        public void Dispose()
        {
            NetsyncRuntime.Untrack(this);
            _handle.Dispose();
        }
    }
}
