using UnityEngine;

namespace Netsync.Samples
{
    /// <summary>
    /// Pushes this player's cube around: arrow keys or WASD with the legacy
    /// Input Manager, otherwise (or with Autopilot) a circle that runs into
    /// the balls now and then.
    /// </summary>
    [RequireComponent(typeof(Rigidbody))]
    public sealed class BasicSyncPlayer : MonoBehaviour
    {
        public float force = 20f;
        public bool autopilot;

        Rigidbody _body;

        void Awake()
        {
            _body = GetComponent<Rigidbody>();
#if !ENABLE_LEGACY_INPUT_MANAGER
            autopilot = true;
#endif
        }

        void FixedUpdate()
        {
            Vector3 direction;
            if (autopilot)
            {
                float t = Time.time * 0.6f;
                Vector3 goal = new Vector3(Mathf.Cos(t) * 4f, 0.5f, 2f + Mathf.Sin(t) * 3f);
                direction = Vector3.ClampMagnitude(goal - transform.position, 1f);
            }
            else
            {
#if ENABLE_LEGACY_INPUT_MANAGER
                direction = new Vector3(Input.GetAxis("Horizontal"), 0, Input.GetAxis("Vertical"));
#else
                direction = Vector3.zero;
#endif
            }
            _body.AddForce(direction * force);
        }
    }
}
