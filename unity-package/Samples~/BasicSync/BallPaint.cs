using System;
using Netsync.Unity;
using UnityEngine;

namespace Netsync.Samples
{
    /// <summary>
    /// A synced component: a ball takes the colour of the player who last
    /// took it. The holder writes the state (the client id, 4 bytes) when
    /// it gains the right; every other machine, late joiners too, reads it.
    /// </summary>
    public sealed class BallPaint : SyncedComponent
    {
        uint _paintedBy;
        Renderer _renderer;

        void Awake()
        {
            _renderer = GetComponent<Renderer>();
            Entity.RightGained += OnRightGained;
        }

        void OnDestroy()
        {
            Entity.RightGained -= OnRightGained;
        }

        void OnRightGained()
        {
            var manager = NetsyncManager.Instance;
            if (manager != null)
            {
                Paint(manager.ClientId);
                MarkDirty(); // sent at the end of this frame
            }
        }

        protected override int WriteState(Span<byte> buffer)
        {
            buffer[0] = (byte)_paintedBy;
            buffer[1] = (byte)(_paintedBy >> 8);
            buffer[2] = (byte)(_paintedBy >> 16);
            buffer[3] = (byte)(_paintedBy >> 24);
            return 4;
        }

        protected override void ReadState(ReadOnlySpan<byte> state, ulong version)
        {
            if (state.Length == 4)
            {
                Paint((uint)(state[0] | state[1] << 8 | state[2] << 16 | state[3] << 24));
            }
        }

        void Paint(uint clientId)
        {
            _paintedBy = clientId;
            // A colour per client id, the same on every machine.
            _renderer.material.color = Color.HSVToRGB((clientId * 0.618034f) % 1f, 0.7f, 0.95f);
        }
    }
}
