using System;
using System.Runtime.InteropServices;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// A recording (<see cref="SyncClient.Record"/>, or <c>netsync relay
    /// --record</c>) played back like a live client (docs/replay.md): at a
    /// time the recording client ticked at, <see cref="TickAt"/> returns
    /// exactly the transforms its tick returned. Not thread-safe
    /// (overlapping calls fail with NETSYNC_ERR_BUSY).
    /// </summary>
    public sealed unsafe class Replay : IDisposable
    {
        readonly ReplayHandle _handle;
        NetsyncTransform[] _transforms;
        double _speed = 1.0;

        Replay(ReplayHandle handle, NetsyncReplayInfo info)
        {
            _handle = handle;
            // Every entity a tick can show has a recorded state: with room for
            // all of them no tick is repeated to grow the buffer (a repeat
            // would apply entries stamped after the live tick at that time).
            _transforms = new NetsyncTransform[(int)Math.Min(info.entities, (ulong)int.MaxValue)];
            NetsyncRuntime.Track(this);
        }

        /// <summary>Opens the recording at <paramref name="path"/> and reads it whole, checking every block.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_IO when it cannot be read;
        /// NETSYNC_ERR_INVALID_ARGUMENT, the native message naming the reason, for a file
        /// cut short, damaged, of another format or of a newer version.</exception>
        public static Replay Open(string path)
        {
            NetsyncLibrary.EnsureCompatible();
            var pathBytes = Utf8.ToNative(path, "path");
            var handle = new ReplayHandle();
            NetsyncReplay* native = null;
            NetsyncResult result;
            fixed (byte* p = pathBytes)
            {
                result = NativeMethods.netsync_replay_open(p, &native);
            }
            return Adopt(handle, result, native);
        }

        /// <summary>Opens a recording held in memory (copied: the array may change after this).</summary>
        /// <exception cref="NetsyncException">As <see cref="Open"/>, without NETSYNC_ERR_IO.</exception>
        public static Replay OpenBuffer(byte[] data)
        {
            if (data == null)
            {
                throw new ArgumentNullException("data");
            }
            return OpenBuffer(new ReadOnlySpan<byte>(data));
        }

        /// <summary>Opens a recording held in memory (copied).</summary>
        public static Replay OpenBuffer(ReadOnlySpan<byte> data)
        {
            NetsyncLibrary.EnsureCompatible();
            var handle = new ReplayHandle();
            NetsyncReplay* native = null;
            NetsyncResult result;
            byte none = 0;
            fixed (byte* p = &MemoryMarshal.GetReference(data))
            {
                // An empty span has no pointer: the library is to judge the
                // (missing) contents, not refuse a NULL.
                result = NativeMethods.netsync_replay_open_buffer(data.IsEmpty ? &none : p, (UIntPtr)data.Length, &native);
            }
            return Adopt(handle, result, native);
        }

        static Replay Adopt(ReplayHandle handle, NetsyncResult result, NetsyncReplay* native)
        {
            if (result != NetsyncResult.NETSYNC_OK)
            {
                handle.Dispose();
                throw NetsyncLibrary.Failure(result);
            }
            handle.Adopt((IntPtr)native);
            NetsyncReplayInfo info;
            result = NativeMethods.netsync_replay_info(native, &info);
            if (result != NetsyncResult.NETSYNC_OK)
            {
                var failure = NetsyncLibrary.Failure(result); // the last error before freeing
                handle.Dispose();
                throw failure;
            }
            return new Replay(handle, info);
        }

        /// <summary>The native handle, for calls through <see cref="NativeMethods"/> directly.</summary>
        public ReplayHandle Handle
        {
            get { return _handle; }
        }

        public bool IsDisposed
        {
            get { return _handle.IsClosed; }
        }

        /// <summary>Kind, client id, time span, counts of entries, ticks, frames, messages,
        /// right changes and entities, file and raw sizes.</summary>
        public NetsyncReplayInfo Info
        {
            get
            {
                NetsyncReplayInfo info;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_replay_info((NetsyncReplay*)l.Pointer, &info));
                }
                return info;
            }
        }

        /// <summary>
        /// Shows the recording at recording time <paramref name="time"/> (the
        /// recording client's engine clock; the relay's for a relay
        /// recording). Going back in time replays from the start. The span
        /// views a buffer this replay reuses: valid until the next tick.
        /// </summary>
        public ReadOnlySpan<NetsyncTransform> TickAt(double time)
        {
            return Show(time, true);
        }

        /// <summary>
        /// Plays on the engine's clock <paramref name="now"/> (any monotonic
        /// clock, seconds): the first tick, and the first after a
        /// <see cref="Seek"/>, shows the start (or the seek time); later ones
        /// advance at <see cref="Speed"/>. Valid until the next tick.
        /// </summary>
        public ReadOnlySpan<NetsyncTransform> Tick(double now)
        {
            return Show(now, false);
        }

        ReadOnlySpan<NetsyncTransform> Show(double time, bool atRecordingTime)
        {
            using (var l = _handle.Acquire())
            {
                while (true)
                {
                    UIntPtr count;
                    NetsyncResult result;
                    fixed (NetsyncTransform* buffer = _transforms)
                    {
                        var capacity = (UIntPtr)_transforms.Length;
                        result = atRecordingTime
                            ? NativeMethods.netsync_replay_tick_at((NetsyncReplay*)l.Pointer, time, buffer, capacity, &count)
                            : NativeMethods.netsync_replay_tick((NetsyncReplay*)l.Pointer, time, buffer, capacity, &count);
                    }
                    if (result == NetsyncResult.NETSYNC_OK)
                    {
                        return new ReadOnlySpan<NetsyncTransform>(_transforms, 0, (int)count);
                    }
                    if (result != NetsyncResult.NETSYNC_ERR_BUFFER_TOO_SMALL)
                    {
                        throw NetsyncLibrary.Failure(result);
                    }
                    // Not with the buffer sized at open; should it happen, grow
                    // and show the same time again.
                    _transforms = new NetsyncTransform[Math.Max((int)count, _transforms.Length * 2)];
                }
            }
        }

        /// <summary>The next <see cref="Tick"/> shows recording time <paramref name="time"/>.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT for NaN or an infinite time.</exception>
        public void Seek(double time)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_replay_seek((NetsyncReplay*)l.Pointer, time));
            }
        }

        /// <summary>
        /// How fast <see cref="Tick"/> plays, in times real time: 0 pauses, at
        /// most 100; 1 until set. A change plays on from where the replay is.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT outside 0..100 (nothing changes).</exception>
        public double Speed
        {
            get
            {
                if (_handle.IsClosed)
                {
                    throw new ObjectDisposedException("Replay");
                }
                // The library does not report it: what was last set here.
                return _speed;
            }
            set
            {
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_replay_set_speed((NetsyncReplay*)l.Pointer, value));
                }
                _speed = value;
            }
        }

        /// <summary>Recording time of the last tick.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE before the first tick.</exception>
        public double Position
        {
            get
            {
                double t;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_replay_position((NetsyncReplay*)l.Pointer, &t));
                }
                return t;
            }
        }

        /// <summary>Like <see cref="Position"/>, but false (no exception) before the first tick.</summary>
        public bool TryGetPosition(out double position)
        {
            double t;
            NetsyncResult result;
            using (var l = _handle.Acquire())
            {
                result = NativeMethods.netsync_replay_position((NetsyncReplay*)l.Pointer, &t);
            }
            if (result == NetsyncResult.NETSYNC_ERR_WRONG_STATE)
            {
                position = 0;
                return false;
            }
            NetsyncLibrary.Check(result);
            position = t;
            return true;
        }

        /// <summary>Frees the replay. Idempotent.</summary>
        public void Dispose()
        {
            NetsyncRuntime.Untrack(this);
            _handle.Dispose();
        }
    }
}
