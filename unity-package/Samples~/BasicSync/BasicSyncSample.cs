using System;
using System.Collections.Generic;
using Netsync.Unity;
using UnityEngine;

namespace Netsync.Samples
{
    /// <summary>
    /// Builds the whole sample from code in an empty scene: a manager (host
    /// or client), a floor, three shared balls and an overlay. Each player
    /// gets a cube once connected; other players' cubes appear as proxies.
    /// Run one instance with Host on and others (builds or editors) with it
    /// off and the host's address.
    /// </summary>
    [AddComponentMenu("Netsync/Samples/Basic Sync Sample")]
    public sealed class BasicSyncSample : MonoBehaviour
    {
        [Tooltip("Run the relay in this instance. The other instances connect to this machine.")]
        public bool host = true;

        [Tooltip("The host's address, for the instances that are not the host.")]
        public string hostAddress = "127.0.0.1";

        public int port = 7777;

        [Tooltip("Put this instance's traffic through a simulated network to see interpolation at work.")]
        public NetworkProfile simulatedNetwork = NetworkProfile.Average;

        /// <summary>Player cubes use ids from here on: PlayerIdBase + the relay's client id.</summary>
        public const ulong PlayerIdBase = 1000;

        /// <summary>The one global command of the sample: put every ball back.</summary>
        const byte ResetBallsCommand = 1;

        readonly Dictionary<ulong, GameObject> _proxies = new Dictionary<ulong, GameObject>();
        readonly List<SyncedRigidbody> _balls = new List<SyncedRigidbody>();
        NetsyncManager _manager;
        GameObject _player;

        void Start()
        {
            var floor = GameObject.CreatePrimitive(PrimitiveType.Plane);
            floor.name = "Floor";
            floor.transform.localScale = new Vector3(3, 1, 3);
            for (int i = 0; i < 3; i++)
            {
                // The same ids and places on every machine: neutral objects.
                var ball = Spawn<SyncedRigidbody>(PrimitiveType.Sphere, "Ball " + (i + 1), (ulong)(i + 1), SyncRole.Neutral,
                    new Vector3(-3 + 3 * i, 0.5f, 4), Color.yellow);
                ball.GetComponent<Rigidbody>().mass = 0.5f;
                ball.gameObject.AddComponent<BallPaint>();
                _balls.Add(ball);
            }
            if (Camera.main == null)
            {
                var cam = new GameObject("Camera").AddComponent<Camera>();
                cam.tag = "MainCamera";
            }
            Camera.main.transform.SetPositionAndRotation(new Vector3(0, 12, -12), Quaternion.Euler(45, 0, 0));

            _manager = NetsyncManager.Instance;
            if (_manager == null)
            {
                var go = new GameObject("Netsync Manager");
                go.SetActive(false);
                _manager = go.AddComponent<NetsyncManager>();
                _manager.connectOnStart = false;
                go.SetActive(true);
            }
            _manager.hostRelay = host;
            _manager.relayAddress = hostAddress;
            _manager.relayPort = port;
            _manager.simulatedNetwork = simulatedNetwork;
            _manager.Connected += OnConnected;
            _manager.RemoteEntityAppeared += OnRemoteEntityAppeared;
            _manager.RemoteEntityRemoved += OnRemoteEntityRemoved;
            _manager.GlobalCommandReceived += OnGlobalCommand;
            if (_manager.GetComponent<NetsyncStatsOverlay>() == null)
            {
                _manager.gameObject.AddComponent<NetsyncStatsOverlay>();
            }
            _manager.Connect();
        }

        void OnDestroy()
        {
            if (_manager != null)
            {
                _manager.Connected -= OnConnected;
                _manager.RemoteEntityAppeared -= OnRemoteEntityAppeared;
                _manager.RemoteEntityRemoved -= OnRemoteEntityRemoved;
                _manager.GlobalCommandReceived -= OnGlobalCommand;
            }
        }

        void OnConnected(uint clientId)
        {
            if (_player != null)
            {
                return; // reconnected: the relay replays this client's registrations
            }
            float x = (clientId % 5) * 2f - 4f;
            var player = Spawn<SyncedRigidbody>(PrimitiveType.Cube, "Player (you)", PlayerIdBase + clientId, SyncRole.Controlled,
                new Vector3(x, 0.5f, -2), Color.green);
            player.gameObject.AddComponent<BasicSyncPlayer>();
            _player = player.gameObject;
        }

        void OnRemoteEntityAppeared(ulong entityId)
        {
            if (entityId < PlayerIdBase || _proxies.ContainsKey(entityId))
            {
                return;
            }
            var proxy = Spawn<SyncedRigidbody>(PrimitiveType.Cube, "Player " + (entityId - PlayerIdBase), entityId,
                SyncRole.RemoteProxy, new Vector3(0, -10, 0), Color.red);
            _proxies[entityId] = proxy.gameObject;
        }

        void OnRemoteEntityRemoved(ulong entityId, RemovalReason reason)
        {
            GameObject proxy;
            if (_proxies.TryGetValue(entityId, out proxy))
            {
                _proxies.Remove(entityId);
                Destroy(proxy);
            }
        }

        void OnGUI()
        {
            if (_manager != null && _manager.IsConnected && GUI.Button(new Rect(Screen.width - 130, 10, 120, 30), "Reset balls"))
            {
                // A global command: every machine runs it once, in the same order.
                _manager.SendGlobalCommand(new[] { ResetBallsCommand });
            }
        }

        void OnGlobalCommand(uint sender, ulong sequence, double serverTime, ReadOnlySpan<byte> payload)
        {
            if (payload.Length != 1 || payload[0] != ResetBallsCommand)
            {
                return;
            }
            for (int i = 0; i < _balls.Count; i++)
            {
                // Only the holder moves a ball; everyone else sees it move.
                if (_balls[i].IsLocallySimulated)
                {
                    _balls[i].Teleport(new Vector3(-3 + 3 * i, 0.5f, 4), Quaternion.identity);
#if UNITY_6000_0_OR_NEWER
                    _balls[i].Body.linearVelocity = Vector3.zero;
#else
                    _balls[i].Body.velocity = Vector3.zero;
#endif
                }
            }
        }

        static T Spawn<T>(PrimitiveType shape, string name, ulong id, SyncRole role, Vector3 position, Color color)
            where T : SyncedTransform
        {
            var go = GameObject.CreatePrimitive(shape);
            go.name = name;
            go.SetActive(false); // id and role are set before the object registers
            go.transform.position = position;
            go.GetComponent<Renderer>().material.color = color;
            var synced = go.AddComponent<T>();
            synced.EntityId = id;
            synced.Role = role;
            go.SetActive(true);
            return synced;
        }
    }
}
