using System;
using System.Runtime.InteropServices;
using Netsync.Native;

namespace Netsync
{
    public sealed unsafe partial class SyncClient
    {
        /// <summary>
        /// What this client hears about (until called: everything). It sees
        /// entities within <paramref name="radius"/> grid cells (0: the same
        /// cell) of the entities it controls, on the relay's grid (x-z plane),
        /// plus those placed in any of <paramref name="regions"/>; with
        /// <see cref="InterestFlags.GlobalView"/> it sees every entity.
        /// <paramref name="deviceClass"/> is compared with each entity's least
        /// class. Entities leaving the interest are removed with
        /// <see cref="RemovalReason.OutOfInterest"/> and come back with full state.
        /// </summary>
        public void SetInterest(InterestFlags flags, byte deviceClass, uint radius, ReadOnlySpan<uint> regions)
        {
            using (var l = _handle.Acquire())
            {
                fixed (uint* p = &MemoryMarshal.GetReference(regions))
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_client_set_interest(
                        (NetsyncClient*)l.Pointer, (uint)flags, deviceClass, radius, p, (UIntPtr)regions.Length));
                }
            }
        }

        /// <summary>Area of interest only: <paramref name="radius"/> cells around this client's entities, plus regions.</summary>
        public void SetInterest(uint radius, params uint[] regions)
        {
            SetInterest(InterestFlags.None, 0, radius, regions ?? new uint[0]);
        }

        /// <summary>
        /// Places an entity this client holds in <paramref name="region"/> (0:
        /// found by its grid cell) and sets the least device class that sees
        /// it (0: all).
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_NOT_HELD for an entity this client does not hold.</exception>
        public void SetEntityInterest(ulong entityId, uint region, byte minClass = 0)
        {
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_set_entity_interest(
                    (NetsyncClient*)l.Pointer, entityId, region, minClass));
            }
        }

        /// <summary>
        /// Shows <paramref name="state"/> for a remote entity at once (the
        /// expected result of a command just sent), dead-reckoned with its
        /// velocity, until authoritative state covering this moment arrives;
        /// then blends into it without a jump. <paramref name="now"/> is the
        /// clock passed to <see cref="Tick"/>.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE for an entity this client
        /// simulates, or before the server clock is known; NETSYNC_ERR_UNKNOWN_ENTITY.</exception>
        public void Predict(double now, in NetsyncSample state)
        {
            var copy = state;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_client_predict((NetsyncClient*)l.Pointer, now, &copy));
            }
        }
    }
}
