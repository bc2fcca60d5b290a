using System;
using System.Collections.Generic;
using Netsync.Native;
using UnityEngine;

namespace Netsync.Unity
{
    /// <summary>Who moves an object, seen from this machine.</summary>
    public enum SyncRole
    {
        /// <summary>Someone else moves it; this machine shows it (another player's avatar).</summary>
        RemoteProxy = 0,

        /// <summary>This machine's for good (this player's avatar or car): always simulated and sent here.</summary>
        Controlled = 1,

        /// <summary>A shared physics object: simulated by whoever holds its send right; hitting it claims the right.</summary>
        Neutral = 2,

        /// <summary>Only the server moves it: every client shows it.</summary>
        ServerOwned = 3,
    }

    /// <summary>
    /// Keeps this object's transform in step across machines. Give it the
    /// same <see cref="EntityId"/> on every machine and the
    /// <see cref="Role"/> it has on this one. The manager sends its pose while
    /// this machine simulates it and moves it to the remote pose otherwise.
    /// </summary>
    [DisallowMultipleComponent]
    [AddComponentMenu("Netsync/Synced Transform")]
    public class SyncedTransform : MonoBehaviour
    {
        [Tooltip("The same id on every machine. 0 is not an id: set one, or use the context menu to derive it from the scene path.")]
        [SerializeField]
        long entityId;

        [SerializeField]
        SyncRole role = SyncRole.Controlled;

        [Tooltip("Unchecked: netsync neither sends nor moves this object (it stays local).")]
        [SerializeField]
        bool synced = true;

        [Header("Send thresholds")]
        [Tooltip("Use the thresholds below for this object instead of the manager's.")]
        [SerializeField]
        bool overrideThresholds;

        [SerializeField]
        SendPolicy sendPolicy = SendPolicy.DeadReckoning;

        [Tooltip("Position error (m) that makes a state worth sending.")]
        [SerializeField, Min(0)]
        float positionThreshold = 0.01f;

        [Tooltip("Rotation error (degrees) that makes a state worth sending.")]
        [SerializeField, Min(0)]
        float angleThresholdDegrees = 1f;

        [Tooltip("Send at least this often (s).")]
        [SerializeField, Min(0.01f)]
        float maxSendInterval = 1f;

        [Tooltip("Send linear and angular velocity so that receivers can dead-reckon (from a Rigidbody when there is one, else measured).")]
        [SerializeField]
        bool sendVelocity = true;

        SyncClient _client;
        NetsyncManager _manager;
        SendFilter _filter;
        bool _listed;
        bool _holds;
        bool _teleport;
        bool _haveLast;
        Vector3 _lastPosition;
        Quaternion _lastRotation;
        double _lastCaptureTime;
        string _lastSendError;
        readonly List<SyncedComponent> _components = new List<SyncedComponent>();

        /// <summary>The game's id for this object, the same on every machine. Set it before the object is enabled.</summary>
        public ulong EntityId
        {
            get { return (ulong)entityId; }
            set
            {
                if (_listed)
                {
                    throw new InvalidOperationException("change the entity id of " + name + " while it is disabled");
                }
                entityId = (long)value;
            }
        }

        /// <summary>Who moves this object, seen from this machine. Set it before the object is enabled.</summary>
        public SyncRole Role
        {
            get { return role; }
            set
            {
                if (_listed)
                {
                    throw new InvalidOperationException("change the role of " + name + " while it is disabled");
                }
                role = value;
            }
        }

        /// <summary>Marks this object synced or unsynced at run time.</summary>
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
                if (isActiveAndEnabled)
                {
                    if (value)
                    {
                        Enlist();
                    }
                    else
                    {
                        Dismiss();
                    }
                }
            }
        }

        /// <summary>The manager this object is registered with (null while detached).</summary>
        public NetsyncManager Manager
        {
            get { return _manager; }
        }

        /// <summary>The connection this object is registered on (null while detached).</summary>
        protected SyncClient Client
        {
            get { return _client; }
        }

        /// <summary>True while registered with a connected manager.</summary>
        public bool IsAttached
        {
            get { return _client != null && !_client.IsDisposed; }
        }

        /// <summary>This machine holds the right to send it (controlled, or a neutral object it holds or claims).</summary>
        public bool HoldsRight
        {
            get { return role == SyncRole.Controlled || (role == SyncRole.Neutral && _holds); }
        }

        /// <summary>This machine simulates the object and sends its state; otherwise it follows the network.</summary>
        public bool IsLocallySimulated
        {
            get { return IsAttached && HoldsRight; }
        }

        /// <summary>
        /// Who holds the object's send right as the relay last announced it:
        /// a client id (this machine's is <see cref="NetsyncManager.ClientId"/>),
        /// 0 for nobody or the server. False while detached, and until the
        /// relay has announced the object. A claim of this machine that the
        /// relay has not answered yet is not shown: see <see cref="HoldsRight"/>.
        /// </summary>
        public bool TryGetHolder(out uint holderClientId)
        {
            uint epoch;
            if (!IsAttached)
            {
                holderClientId = 0;
                return false;
            }
            return _client.TryGetHolder(EntityId, out holderClientId, out epoch);
        }

        /// <summary>Who holds the object's send right, for Inspectors and overlays.</summary>
        public string HolderDescription
        {
            get
            {
                if (!synced)
                {
                    return "not synced";
                }
                if (!IsAttached)
                {
                    return "not connected";
                }
                switch (role)
                {
                    case SyncRole.Controlled:
                        return "this client (controlled)";
                    case SyncRole.ServerOwned:
                        return "the server";
                    case SyncRole.Neutral:
                        if (_holds)
                        {
                            return "this client (holds the right)";
                        }
                        break;
                }
                uint holder;
                if (!TryGetHolder(out holder))
                {
                    return role == SyncRole.Neutral ? "not announced yet" : "its remote owner";
                }
                if (holder == 0)
                {
                    return role == SyncRole.Neutral ? "nobody" : "nobody, or the server";
                }
                if (_manager != null && holder == _manager.ClientId)
                {
                    return "this client (client " + holder + ")";
                }
                return "client " + holder;
            }
        }

        /// <summary>Flags of the last remote transform (extrapolated, held, predicted, blending).</summary>
        public TransformFlags LastRemoteFlags { get; private set; }

        /// <summary>Engine time (<see cref="NetsyncManager.Now"/>) of the last remote transform applied.</summary>
        public double LastRemoteTime { get; private set; }

        public event Action RightGained;
        public event Action RightLost;
        public event Action<ClaimRefusal> RightRefused;

        /// <summary>The remote entity was removed: its owner left or unregistered it, or it left this client's interest.</summary>
        public event Action<RemovalReason> RemoteRemoved;

        protected virtual void OnEnable()
        {
            if (synced)
            {
                Enlist();
            }
        }

        protected virtual void OnDisable()
        {
            Dismiss();
        }

        void Enlist()
        {
            if (entityId == 0)
            {
                Debug.LogError("[netsync] " + name + " has entity id 0: give it an id (the same on every machine)", this);
                return;
            }
            _listed = true;
            NetsyncManager.Enlist(this);
        }

        void Dismiss()
        {
            if (_listed)
            {
                NetsyncManager.Dismiss(this);
                _listed = false;
            }
        }

        /// <summary>Moves the object to a new place at once: receivers snap instead of sweeping.</summary>
        public void Teleport(Vector3 position, Quaternion rotation)
        {
            transform.SetPositionAndRotation(position, rotation);
            _teleport = true;
            _haveLast = false;
        }

        /// <summary>
        /// Claims this neutral object's send right because <paramref name="mine"/>
        /// (an object this machine controls) hit it. Optimistic: this machine
        /// simulates it at once; <see cref="RightGained"/> or
        /// <see cref="RightRefused"/> follows.
        /// </summary>
        public void ClaimBy(SyncedTransform mine)
        {
            if (mine == null)
            {
                throw new ArgumentNullException("mine");
            }
            if (!IsAttached || role != SyncRole.Neutral || _holds)
            {
                return;
            }
            if (mine.role != SyncRole.Controlled || !mine.IsAttached)
            {
                throw new InvalidOperationException(mine.name + " is not controlled by this machine");
            }
            _client.ReportCollision(mine.EntityId, EntityId);
            SetHolds(_client.Holds(EntityId));
        }

        /// <summary>
        /// Shows the expected result of a command at once on this remote
        /// object (e.g. a door this player just opened elsewhere), until the
        /// holder's real state covers that moment; then blends into it.
        /// </summary>
        public void Predict(Vector3 position, Quaternion rotation, Vector3 velocity)
        {
            if (!IsAttached)
            {
                throw new InvalidOperationException(name + " is not connected");
            }
            var sample = new NetsyncSample(EntityId, position.ToNetsync(), rotation.ToNetsync());
            sample.linear_velocity = velocity.ToNetsync();
            sample.Flags = SampleFlags.HasVelocity;
            _client.Predict(NetsyncManager.Now, in sample);
        }

        /// <summary>
        /// Puts this object (which this machine holds) in an interest region
        /// (0: found by its grid cell) and sets the least device class that
        /// sees it (0: every client).
        /// </summary>
        public void SetInterestRegion(uint region, byte minDeviceClass = 0)
        {
            if (!IsAttached)
            {
                throw new InvalidOperationException(name + " is not connected");
            }
            _client.SetEntityInterest(EntityId, region, minDeviceClass);
        }

        /// <summary>The synced component with this id on this object, or null.</summary>
        public SyncedComponent FindComponent(uint componentId)
        {
            for (int i = 0; i < _components.Count; i++)
            {
                if (_components[i].ComponentId == componentId)
                {
                    return _components[i];
                }
            }
            return null;
        }

        internal void AddSyncedComponent(SyncedComponent component)
        {
            var other = FindComponent(component.ComponentId);
            if (other != null && other != component)
            {
                Debug.LogError("[netsync] " + name + " has two synced components with id " + component.ComponentId, component);
                return;
            }
            if (other == null)
            {
                _components.Add(component);
            }
            if (IsAttached)
            {
                component.Attach(_client);
            }
        }

        internal void RemoveSyncedComponent(SyncedComponent component)
        {
            _components.Remove(component);
            component.Detach();
        }

        internal void FlushComponents()
        {
            for (int i = 0; i < _components.Count; i++)
            {
                _components[i].Flush();
            }
        }

        // ---- called by the manager ------------------------------------------

        internal void Attach(SyncClient client, NetsyncManager manager)
        {
            if (client == null || _client == client)
            {
                return;
            }
            _client = client;
            _manager = manager;
            try
            {
                switch (role)
                {
                    case SyncRole.Controlled:
                        client.RegisterEntity(EntityId, EntityKind.Controlled);
                        break;
                    case SyncRole.Neutral:
                        client.RegisterEntity(EntityId, EntityKind.Neutral);
                        break;
                }
                if (overrideThresholds && (role == SyncRole.Controlled || role == SyncRole.Neutral))
                {
                    var config = NetsyncSendFilterConfig.CreateDefault();
                    config.Policy = sendPolicy;
                    config.position_threshold = positionThreshold;
                    config.angle_threshold = angleThresholdDegrees * Mathf.Deg2Rad;
                    config.max_interval = maxSendInterval;
                    _filter = new SendFilter(config);
                }
            }
            catch (NetsyncException e)
            {
                Debug.LogError("[netsync] " + name + " (entity " + EntityId + ") could not register: " + e.Message, this);
            }
            _haveLast = false;
            _holds = role == SyncRole.Neutral && client.Holds(EntityId);
            for (int i = 0; i < _components.Count; i++)
            {
                _components[i].Attach(client);
            }
            OnHoldsChanged(HoldsRight);
        }

        internal void Detach(SyncClient client)
        {
            if (_client == null)
            {
                return;
            }
            if (role == SyncRole.Controlled && !_client.IsDisposed)
            {
                try
                {
                    _client.UnregisterEntity(EntityId);
                }
                catch (NetsyncException e)
                {
                    Debug.LogWarning("[netsync] " + name + ": " + e.Message, this);
                }
            }
            if (_filter != null)
            {
                _filter.Dispose();
                _filter = null;
            }
            for (int i = 0; i < _components.Count; i++)
            {
                _components[i].Detach();
            }
            _client = null;
            _manager = null;
            _holds = false;
            OnHoldsChanged(HoldsRight);
        }

        /// <summary>This frame's state, when this machine simulates the object and it is worth sending.</summary>
        internal bool TryCapture(double now, out NetsyncSample sample)
        {
            sample = default(NetsyncSample);
            if (!IsLocallySimulated)
            {
                return false;
            }
            var t = transform;
            Vector3 position = t.position;
            Quaternion rotation = t.rotation;
            sample.entity_id = EntityId;
            sample.position = position.ToNetsync();
            sample.rotation = rotation.ToNetsync();
            if (sendVelocity)
            {
                Vector3 linear, angular;
                if (TryGetVelocity(out linear, out angular) || MeasureVelocity(now, position, rotation, out linear, out angular))
                {
                    sample.linear_velocity = linear.ToNetsync();
                    sample.angular_velocity = angular.ToNetsync();
                    sample.Flags = SampleFlags.HasVelocity | SampleFlags.HasAngularVelocity;
                }
            }
            if (_teleport)
            {
                sample.Flags |= SampleFlags.Teleport;
            }
            _lastPosition = position;
            _lastRotation = rotation;
            _lastCaptureTime = now;
            _haveLast = true;
            if (_filter != null && _filter.Update(now, in sample) == SendDecision.Skip)
            {
                return false;
            }
            _teleport = false;
            return true;
        }

        /// <summary>Velocity from the physics engine; false when there is none (a plain transform).</summary>
        protected virtual bool TryGetVelocity(out Vector3 linear, out Vector3 angular)
        {
            linear = angular = Vector3.zero;
            return false;
        }

        bool MeasureVelocity(double now, Vector3 position, Quaternion rotation, out Vector3 linear, out Vector3 angular)
        {
            linear = angular = Vector3.zero;
            double dt = now - _lastCaptureTime;
            if (!_haveLast || dt <= 1e-6 || _teleport)
            {
                return false;
            }
            linear = (position - _lastPosition) / (float)dt;
            float degrees;
            Vector3 axis;
            Quaternion delta = rotation * Quaternion.Inverse(_lastRotation);
            delta.ToAngleAxis(out degrees, out axis);
            if (degrees > 180f)
            {
                degrees -= 360f;
            }
            angular = float.IsInfinity(axis.x) || float.IsNaN(axis.x) ? Vector3.zero : axis * (degrees * Mathf.Deg2Rad / (float)dt);
            return true;
        }

        internal void ReportSendFailure(NetsyncException e)
        {
            // One message per distinct failure, not one a frame.
            if (e.Message != _lastSendError)
            {
                _lastSendError = e.Message;
                Debug.LogError("[netsync] " + name + " (entity " + EntityId + "): " + e.Message, this);
            }
        }

        /// <summary>Moves the object to this frame's remote pose.</summary>
        internal virtual void ApplyRemote(in NetsyncTransform remote, double now)
        {
            if (HoldsRight)
            {
                return; // this machine simulates it (a claim is on its way)
            }
            LastRemoteFlags = remote.Flags;
            LastRemoteTime = now;
            transform.SetPositionAndRotation(remote.position, remote.rotation);
        }

        internal void OnRightGained()
        {
            SetHolds(true);
            var handler = RightGained;
            if (handler != null)
            {
                handler();
            }
        }

        internal void OnRightLost()
        {
            SetHolds(false);
            var handler = RightLost;
            if (handler != null)
            {
                handler();
            }
        }

        internal void OnRightRefused(ClaimRefusal reason)
        {
            SetHolds(_client != null && !_client.IsDisposed && _client.Holds(EntityId));
            var handler = RightRefused;
            if (handler != null)
            {
                handler(reason);
            }
        }

        internal void OnRemoteRemoved(RemovalReason reason)
        {
            var handler = RemoteRemoved;
            if (handler != null)
            {
                handler(reason);
            }
        }

        void SetHolds(bool holds)
        {
            if (_holds == holds)
            {
                return;
            }
            _holds = holds;
            _haveLast = false;
            OnHoldsChanged(HoldsRight);
        }

        /// <summary>Called when this machine may have started or stopped simulating the object
        /// (a right gained or lost, attached to or detached from a connection).</summary>
        protected virtual void OnHoldsChanged(bool simulatedHere)
        {
        }

        /// <summary>A stable id from the scene and hierarchy path (FNV-1a, 63 bits).</summary>
        [ContextMenu("Netsync/Derive entity id from scene path")]
        void DeriveIdFromPath()
        {
            string path = name;
            for (var p = transform.parent; p != null; p = p.parent)
            {
                path = p.name + "/" + path;
            }
            path = gameObject.scene.name + ":" + path;
            ulong hash = 14695981039346656037UL;
            foreach (char c in path)
            {
                hash ^= c;
                hash *= 1099511628211UL;
            }
            entityId = (long)(hash & 0x7FFFFFFFFFFFFFFFUL);
            if (entityId == 0)
            {
                entityId = 1;
            }
        }
    }
}
