using System;
using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class SyncClient
    {
        /// <summary>
        /// The path configuration this client computes scripted elements with
        /// (the server's). They come in <see cref="Tick"/> with
        /// <see cref="TransformFlags.Scripted"/>.
        /// </summary>
        public void SetScriptedPaths(ScriptedPaths paths)
        {
            if (paths == null)
            {
                throw new ArgumentNullException("paths");
            }
            using (var l = _handle.Acquire())
            using (var p = paths.Handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_set_scripted_config(
                    (NetsyncClient*)l.Pointer, (NetsyncScriptedConfig*)p.Pointer));
            }
        }

        /// <summary>The server time the last tick computed scripted elements at; false before any.</summary>
        public bool TryGetScriptedTime(out double serverTime)
        {
            double t;
            NetsyncResult result;
            using (var l = _handle.Acquire())
            {
                result = NativeMethods.netsync_client_scripted_time((NetsyncClient*)l.Pointer, &t);
            }
            if (result == NetsyncResult.NETSYNC_ERR_WRONG_STATE)
            {
                serverTime = 0;
                return false;
            }
            NetsyncLibrary.Check(result);
            serverTime = t;
            return true;
        }
    }
}
