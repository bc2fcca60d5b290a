using System;
using Netsync.Native;
using UnityEngine;

namespace Netsync.Unity
{
    /// <summary>
    /// Base of a game component whose state and commands travel with its
    /// object (a door's open state, a car's fuel). The holder of the
    /// object's send right writes the state when it changed
    /// (<see cref="MarkDirty"/>); every other machine reads it, late joiners
    /// included. Commands go to whoever holds the object. Untick
    /// <see cref="Synced"/> to keep a component on this machine only.
    /// </summary>
    [RequireComponent(typeof(SyncedTransform))]
    public abstract class SyncedComponent : MonoBehaviour
    {
        [Tooltip("Unique among the synced components of this object, and the same on every machine.")]
        [SerializeField, Min(1)]
        int componentId = 1;

        [Tooltip("Unchecked: this component's state and commands never leave this machine.")]
        [SerializeField]
        bool synced = true;

        SyncedTransform _entity;
        SyncClient _client;
        byte[] _buffer;
        bool _dirty = true;

        public uint ComponentId
        {
            get { return (uint)componentId; }
        }

        /// <summary>The synced object this component belongs to.</summary>
        public SyncedTransform Entity
        {
            get
            {
                if (_entity == null)
                {
                    _entity = GetComponent<SyncedTransform>();
                }
                return _entity;
            }
        }

        /// <summary>Marks this component synced or unsynced (also at run time).</summary>
        public bool Synced
        {
            get { return synced; }
            set
            {
                if (synced == value)
                {
                    return;
                }
                synced = value;
                if (_client != null && !_client.IsDisposed)
                {
                    _client.RegisterComponent(Entity.EntityId, ComponentId, synced);
                }
                _dirty = true;
            }
        }

        /// <summary>State changed: the holder sends it at the end of this frame.</summary>
        protected void MarkDirty()
        {
            _dirty = true;
        }

        /// <summary>Writes the current state into <paramref name="buffer"/>
        /// (<see cref="NetsyncLibrary.MaxPayload"/> bytes) and returns how many bytes it used.</summary>
        protected abstract int WriteState(Span<byte> buffer);

        /// <summary>Applies a state written by the holder on another machine.</summary>
        protected abstract void ReadState(ReadOnlySpan<byte> state, ulong version);

        /// <summary>A command for this component arrived (this machine holds the object).</summary>
        protected virtual void OnCommand(uint sender, ReadOnlySpan<byte> command)
        {
        }

        /// <summary>Sends a command to whoever holds this object (reliably, once).</summary>
        /// <exception cref="InvalidOperationException">while not connected.</exception>
        /// <exception cref="NetsyncException">NETSYNC_ERR_UNSYNCED_COMPONENT when unsynced, NETSYNC_ERR_TOO_LARGE.</exception>
        public void SendCommand(ReadOnlySpan<byte> command)
        {
            if (_client == null || _client.IsDisposed)
            {
                throw new InvalidOperationException(name + " is not connected");
            }
            _client.SendComponentCommand(Entity.EntityId, ComponentId, command);
        }

        protected virtual void OnEnable()
        {
            Entity.AddSyncedComponent(this);
        }

        protected virtual void OnDisable()
        {
            Entity.RemoveSyncedComponent(this);
            _client = null;
        }

        // ---- called by the synced object and the manager ------------------

        internal void Attach(SyncClient client)
        {
            _client = client;
            _dirty = true;
            try
            {
                client.RegisterComponent(Entity.EntityId, ComponentId, synced);
            }
            catch (NetsyncException e)
            {
                Debug.LogError("[netsync] " + name + ": component " + ComponentId + " could not register: " + e.Message, this);
            }
        }

        internal void Detach()
        {
            _client = null;
        }

        /// <summary>Sends the state when it changed and this machine holds the object.</summary>
        internal void Flush()
        {
            if (!_dirty || !synced || _client == null || !Entity.IsLocallySimulated)
            {
                return;
            }
            if (_buffer == null)
            {
                _buffer = new byte[NetsyncLibrary.MaxPayload];
            }
            int length = WriteState(new Span<byte>(_buffer));
            if (length < 0 || length > _buffer.Length)
            {
                throw new InvalidOperationException(GetType().Name + ".WriteState returned " + length + " bytes");
            }
            _dirty = false;
            try
            {
                _client.SetComponentState(Entity.EntityId, ComponentId, new ReadOnlySpan<byte>(_buffer, 0, length));
            }
            catch (NetsyncException e)
            {
                Debug.LogError("[netsync] " + name + ": component " + ComponentId + ": " + e.Message, this);
            }
        }

        internal void ReceiveState(ReadOnlySpan<byte> state, ulong version)
        {
            if (synced && !Entity.IsLocallySimulated)
            {
                ReadState(state, version);
            }
        }

        internal void ReceiveCommand(uint sender, ReadOnlySpan<byte> command)
        {
            if (synced)
            {
                OnCommand(sender, command);
            }
        }
    }
}
