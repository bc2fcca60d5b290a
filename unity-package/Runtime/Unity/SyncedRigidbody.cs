using Netsync.Native;
using UnityEngine;

namespace Netsync.Unity
{
    /// <summary>
    /// A synced physics object. While this machine holds its send right the
    /// body is simulated here and its state sent; otherwise it is kinematic
    /// and follows the network. A neutral body hit by an object this machine
    /// controls claims the right (<c>OnCollisionEnter</c>) and starts
    /// simulating at once; at rest it gives the right back.
    /// </summary>
    /// <remarks>Collisions are reported by Unity when at least one of the two
    /// bodies is not kinematic: give the controlled object a non-kinematic
    /// Rigidbody (or call <see cref="SyncedTransform.ClaimBy"/> yourself, e.g.
    /// from <c>OnControllerColliderHit</c>).</remarks>
    [RequireComponent(typeof(Rigidbody))]
    [AddComponentMenu("Netsync/Synced Rigidbody")]
    public class SyncedRigidbody : SyncedTransform
    {
        [Header("Send right")]
        [Tooltip("A hit by an object this machine controls claims this neutral body.")]
        [SerializeField]
        bool claimOnCollision = true;

        [Tooltip("Give the right back once the body rests (neutral bodies only).")]
        [SerializeField]
        bool releaseAtRest = true;

        [Tooltip("Below this speed (m/s and rad/s) the body counts as resting.")]
        [SerializeField, Min(0)]
        float restSpeed = 0.05f;

        [Tooltip("How long the body must rest before the right goes back (s).")]
        [SerializeField, Min(0)]
        float restTime = 0.5f;

        Rigidbody _body;
        float _restingFor;
        bool _releaseSent;
        Vector3 _remoteVelocity;
        Vector3 _previousRemotePosition;
        double _previousRemoteTime = -1;

        public Rigidbody Body
        {
            get
            {
                if (_body == null)
                {
                    _body = GetComponent<Rigidbody>();
                }
                return _body;
            }
        }

        protected virtual void Awake()
        {
            _body = GetComponent<Rigidbody>();
        }

        protected override void OnEnable()
        {
            base.OnEnable();
            UpdateBodyMode(false);
        }

        protected override bool TryGetVelocity(out Vector3 linear, out Vector3 angular)
        {
#if UNITY_6000_0_OR_NEWER
            linear = Body.linearVelocity;
#else
            linear = Body.velocity;
#endif
            angular = Body.angularVelocity;
            return !Body.isKinematic;
        }

        protected override void OnHoldsChanged(bool simulatedHere)
        {
            _restingFor = 0;
            _releaseSent = false;
            UpdateBodyMode(simulatedHere);
        }

        void UpdateBodyMode(bool carryOn)
        {
            bool simulate = IsLocallySimulated || !Synced || !IsAttached && Role != SyncRole.RemoteProxy;
            var body = Body;
            if (body.isKinematic != simulate)
            {
                return; // already in the right mode
            }
            body.isKinematic = !simulate;
            if (simulate && carryOn)
            {
                // Carry on with the motion last seen from the network.
#if UNITY_6000_0_OR_NEWER
                body.linearVelocity = _remoteVelocity;
#else
                body.velocity = _remoteVelocity;
#endif
            }
        }

        internal override void ApplyRemote(in NetsyncTransform remote, double now)
        {
            if (HoldsRight)
            {
                return;
            }
            Vector3 position = remote.position;
            if (_previousRemoteTime >= 0 && now > _previousRemoteTime)
            {
                _remoteVelocity = (position - _previousRemotePosition) / (float)(now - _previousRemoteTime);
            }
            _previousRemotePosition = position;
            _previousRemoteTime = now;
            base.ApplyRemote(in remote, now);
            var body = Body;
            if (body.isKinematic)
            {
                body.position = position;
                body.rotation = remote.rotation;
            }
        }

        protected virtual void FixedUpdate()
        {
            if (!releaseAtRest || Role != SyncRole.Neutral || !IsLocallySimulated || _releaseSent)
            {
                return;
            }
            var body = Body;
#if UNITY_6000_0_OR_NEWER
            float speed = body.linearVelocity.magnitude;
#else
            float speed = body.velocity.magnitude;
#endif
            if (speed < restSpeed && body.angularVelocity.magnitude < restSpeed)
            {
                _restingFor += Time.fixedDeltaTime;
                if (_restingFor >= restTime)
                {
                    _releaseSent = true; // RightLost follows and makes the body kinematic
                    try
                    {
                        Client.ReportAtRest(EntityId);
                    }
                    catch (NetsyncException e)
                    {
                        // The right moved on meanwhile: nothing to give back.
                        Debug.LogWarning("[netsync] " + name + ": " + e.Message, this);
                    }
                }
            }
            else
            {
                _restingFor = 0;
            }
        }

        protected virtual void OnCollisionEnter(Collision collision)
        {
            if (!claimOnCollision || !IsAttached)
            {
                return;
            }
            var other = collision.rigidbody != null
                ? collision.rigidbody.GetComponent<SyncedTransform>()
                : collision.collider.GetComponentInParent<SyncedTransform>();
            if (other == null || !other.IsAttached)
            {
                return;
            }
            if (Role == SyncRole.Neutral && !HoldsRight && other.Role == SyncRole.Controlled)
            {
                ClaimBy(other); // hit by this machine's object
            }
            else if (Role == SyncRole.Controlled && other.Role == SyncRole.Neutral && !other.HoldsRight)
            {
                other.ClaimBy(this); // this machine's object hit a shared one
            }
        }
    }
}
