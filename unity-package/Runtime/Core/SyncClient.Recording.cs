using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class SyncClient
    {
        /// <summary>
        /// Records everything this client shows from the network (what its
        /// timeline is fed, its ticks, send rights and messages) to the file at
        /// <paramref name="path"/> until <see cref="StopRecording"/> or
        /// Dispose; play it back with <see cref="Replay.Open"/>. Call it
        /// before the first <see cref="Tick"/>: a recording holds the
        /// timeline's whole history, which is what makes a replay exact.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE after the first tick or
        /// when already recording; NETSYNC_ERR_IO when the file cannot be created.</exception>
        public void Record(string path)
        {
            var pathBytes = Utf8.ToNative(path, "path");
            using (var l = _handle.Acquire())
            {
                fixed (byte* p = pathBytes)
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_record((NetsyncClient*)l.Pointer, p));
                }
            }
        }

        /// <summary>Ends the recording and waits until the file is complete.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE when not recording.</exception>
        public void StopRecording()
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_stop_recording((NetsyncClient*)l.Pointer));
            }
        }
    }
}
