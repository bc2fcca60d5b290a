using System;
using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class RelayServer
    {
        NetsyncTransform[] _scripted = new NetsyncTransform[64];

        /// <summary>The path configuration this server spawns scripted elements with.</summary>
        public void SetScriptedPaths(ScriptedPaths paths)
        {
            if (paths == null)
            {
                throw new ArgumentNullException("paths");
            }
            using (var l = _handle.Acquire())
            using (var p = paths.Handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_server_set_scripted_config(
                    (NetsyncServer*)l.Pointer, (NetsyncScriptedConfig*)p.Pointer));
            }
        }

        /// <summary>
        /// Spawns a scripted element: sent reliably to every client (and to
        /// clients joining while it lives), computed on every machine.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE without paths,
        /// NETSYNC_ERR_INVALID_ARGUMENT for an unknown path or a value out of range,
        /// NETSYNC_ERR_LIMIT past 65 536 live elements.</exception>
        public void SpawnScripted(in NetsyncScriptedSpawn spawn)
        {
            var copy = spawn;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_server_spawn_scripted((NetsyncServer*)l.Pointer, &copy));
            }
        }

        /// <summary>Ends a live scripted element early (clients get a removal).</summary>
        public void DespawnScripted(ulong elementId)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_server_despawn_scripted((NetsyncServer*)l.Pointer, elementId));
            }
        }

        /// <summary>
        /// Every scripted element this server spawned at <paramref name="serverTime"/>
        /// (pass <see cref="ServerTime"/>), in id order, in a buffer reused until the next call.
        /// </summary>
        public ReadOnlySpan<NetsyncTransform> ScriptedTick(double serverTime)
        {
            using (var l = _handle.Acquire())
            {
                while (true)
                {
                    UIntPtr count;
                    NetsyncResult result;
                    fixed (NetsyncTransform* buffer = _scripted)
                    {
                        result = NativeMethods.netsync_server_scripted_tick(
                            (NetsyncServer*)l.Pointer, serverTime, buffer, (UIntPtr)_scripted.Length, &count);
                    }
                    if (result == NetsyncResult.NETSYNC_OK)
                    {
                        return new ReadOnlySpan<NetsyncTransform>(_scripted, 0, (int)count);
                    }
                    if (result != NetsyncResult.NETSYNC_ERR_BUFFER_TOO_SMALL)
                    {
                        throw NetsyncLibrary.Failure(result);
                    }
                    _scripted = new NetsyncTransform[Math.Max((int)count, _scripted.Length * 2)];
                }
            }
        }
    }
}
