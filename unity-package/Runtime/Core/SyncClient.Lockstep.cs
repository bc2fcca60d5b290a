using System;
using System.Runtime.InteropServices;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// One confirmed lockstep frame (or the snapshot to start from), in
    /// buffers that <see cref="SyncClient.TryNextLockstepFrame"/> reuses and
    /// grows: no allocation per frame once they fit.
    /// </summary>
    public sealed class LockstepFrame
    {
        internal NetsyncLockstepFrame Header;
        internal NetsyncLockstepInput[] Inputs = new NetsyncLockstepInput[8];
        internal byte[] Bytes = new byte[256];

        /// <summary>The frame number (for a snapshot: the frame it is the state after).</summary>
        public ulong Frame
        {
            get { return Header.frame; }
        }

        public LockstepItemKind Kind
        {
            get { return (LockstepItemKind)Header.kind; }
        }

        /// <summary>Members' inputs in this frame (sorted by client id).</summary>
        public int InputCount
        {
            get { return (int)Header.input_count; }
        }

        /// <summary>Member <paramref name="i"/>'s client id, flags and input bytes.</summary>
        public uint ClientId(int i)
        {
            return Inputs[Check(i)].client_id;
        }

        public LockstepInputFlags Flags(int i)
        {
            return (LockstepInputFlags)Inputs[Check(i)].flags;
        }

        public ReadOnlySpan<byte> Input(int i)
        {
            var input = Inputs[Check(i)];
            return new ReadOnlySpan<byte>(Bytes, (int)input.offset, (int)input.size);
        }

        /// <summary>A snapshot's bytes (empty for a frame).</summary>
        public ReadOnlySpan<byte> Snapshot
        {
            get { return Kind == LockstepItemKind.Snapshot ? new ReadOnlySpan<byte>(Bytes, 0, (int)Header.size) : ReadOnlySpan<byte>.Empty; }
        }

        int Check(int i)
        {
            if (i < 0 || i >= InputCount)
            {
                throw new ArgumentOutOfRangeException("i");
            }
            return i;
        }
    }

    public sealed unsafe partial class SyncClient
    {
        /// <summary>
        /// Joins the relay's lockstep match; a <see cref="LockstepEventKind.Started"/>
        /// event follows (or Refused). After a reconnect the client joins again by
        /// itself and gets only the frames it lacks.
        /// </summary>
        public void LockstepJoin()
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_lockstep_join((NetsyncClient*)l.Pointer));
            }
        }

        /// <summary>Leaves the match; frames received stay to be taken.</summary>
        public void LockstepLeave()
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_lockstep_leave((NetsyncClient*)l.Pointer));
            }
        }

        /// <summary>
        /// Submits this member's input for its next frame (at most
        /// 256 bytes). False (NETSYNC_WAIT): not started yet, or the sync
        /// interval ahead of the newest confirmed frame; keep the input and
        /// try again after the next tick.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE when not joined,
        /// NETSYNC_ERR_TOO_LARGE for an input over 256 bytes.</exception>
        public bool TrySubmitLockstepInput(ReadOnlySpan<byte> input, out ulong frame)
        {
            ulong f = 0;
            NetsyncResult result;
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = &MemoryMarshal.GetReference(input))
                {
                    result = NativeMethods.netsync_client_lockstep_submit(
                        (NetsyncClient*)l.Pointer, p, (UIntPtr)input.Length, &f);
                }
            }
            frame = f;
            if (result == NetsyncResult.NETSYNC_WAIT)
            {
                return false;
            }
            NetsyncLibrary.Check(result);
            return true;
        }

        /// <summary>
        /// Takes the next confirmed frame (or the snapshot to start from)
        /// into <paramref name="frame"/>. False (NETSYNC_WAIT): nothing is
        /// confirmed yet; frames arrive with <see cref="Tick"/>. Never a guess.
        /// </summary>
        public bool TryNextLockstepFrame(LockstepFrame frame)
        {
            if (frame == null)
            {
                throw new ArgumentNullException("frame");
            }
            using (var l = _handle.Acquire())
            {
                while (true)
                {
                    NetsyncResult result;
                    NetsyncLockstepFrame header;
                    fixed (NetsyncLockstepInput* inputs = frame.Inputs)
                    fixed (byte* bytes = frame.Bytes)
                    {
                        result = NativeMethods.netsync_client_lockstep_next_frame(
                            (NetsyncClient*)l.Pointer, &header, inputs, (UIntPtr)frame.Inputs.Length,
                            bytes, (UIntPtr)frame.Bytes.Length);
                    }
                    if (result == NetsyncResult.NETSYNC_WAIT)
                    {
                        return false;
                    }
                    if (result == NetsyncResult.NETSYNC_ERR_BUFFER_TOO_SMALL)
                    {
                        // The frame stayed queued: grow to what it needs and take it.
                        if ((int)header.input_count > frame.Inputs.Length)
                        {
                            frame.Inputs = new NetsyncLockstepInput[(int)header.input_count];
                        }
                        if ((int)header.size > frame.Bytes.Length)
                        {
                            frame.Bytes = new byte[(int)header.size];
                        }
                        continue;
                    }
                    NetsyncLibrary.Check(result);
                    frame.Header = header;
                    return true;
                }
            }
        }

        /// <summary>Reports the hash of this member's state after <paramref name="frame"/>
        /// (a frame taken); the relay names the first frame whose hashes differ.</summary>
        public void ReportLockstepHash(ulong frame, ulong hash)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_lockstep_report_hash((NetsyncClient*)l.Pointer, frame, hash));
            }
        }

        /// <summary>Gives the relay the game state after <paramref name="frame"/> (a frame
        /// taken; at most 64 KiB, one a second) for joiners to start from.</summary>
        public void ProvideLockstepSnapshot(ulong frame, ReadOnlySpan<byte> state)
        {
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = &MemoryMarshal.GetReference(state))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_lockstep_provide_snapshot(
                        (NetsyncClient*)l.Pointer, frame, p, (UIntPtr)state.Length));
                }
            }
        }

        /// <summary>Pops the next lockstep event; false when none is waiting.</summary>
        public bool TryPollLockstepEvent(out NetsyncLockstepEvent lockstepEvent)
        {
            NetsyncLockstepEvent e;
            bool has;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_lockstep_poll_event((NetsyncClient*)l.Pointer, &e, &has));
            }
            lockstepEvent = has ? e : default(NetsyncLockstepEvent);
            return has;
        }

        /// <summary>Where this client stands in the match.</summary>
        public NetsyncLockstepStatus LockstepStatus
        {
            get
            {
                NetsyncLockstepStatus s;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_lockstep_status((NetsyncClient*)l.Pointer, &s));
                }
                return s;
            }
        }
    }
}
