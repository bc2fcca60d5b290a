using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using Netsync.Native;
using UnityEngine;

namespace Netsync.Unity
{
    /// <summary>
    /// Connects this game to a relay (and can host one), then once a frame,
    /// on an unscaled monotonic clock: hands the states of the objects this
    /// machine simulates to netsync, ticks, and applies every remote
    /// transform in one batch. One per scene (or per game, with
    /// <see cref="dontDestroyOnLoad"/>).
    /// </summary>
    [DefaultExecutionOrder(-1000)]
    [DisallowMultipleComponent]
    [AddComponentMenu("Netsync/Netsync Manager")]
    public sealed class NetsyncManager : MonoBehaviour
    {
        [Header("Relay")]
        [Tooltip("IP or host name of the relay. A host name is resolved once when connecting.")]
        public string relayAddress = "127.0.0.1";

        [Range(1, 65535)]
        public int relayPort = 7777;

        [Tooltip("Connect in Start. Off: call Connect() yourself.")]
        public bool connectOnStart = true;

        [Tooltip("Also run a relay in this process on relayPort (a host). Clients on other machines connect to this machine's address.")]
        public bool hostRelay;

        [Tooltip("Address the hosted relay listens on: 0.0.0.0 for every interface, 127.0.0.1 for this machine only.")]
        public string hostBindAddress = "0.0.0.0";

        [Header("Hosted relay")]
        [Tooltip("Most clients the hosted relay admits.")]
        [Min(1)]
        public int relayMaxClients = 1024;

        [Tooltip("Silence (s) after which the hosted relay drops a client, 0.5 to 600.")]
        [Range(0.5f, 600f)]
        public float relayIdleTimeout = 5f;

        [Tooltip("Interest grid cell edge on the x-z plane (m); 0: no grid (regions and global views only).")]
        [Min(0)]
        public float relayCellSize = 50f;

        [Tooltip("Claims on an object are refused this long (s) after it changed hands, 0 to 60.")]
        [Range(0f, 60f)]
        public float relayClaimCooldown = 0.3f;

        [Tooltip("A held neutral object whose holder sends no movement this long (s) returns to nobody; 0: never.")]
        [Range(0f, 3600f)]
        public float relayRestTimeout = 2f;

        [Tooltip("Who simulates a neutral object before anyone hit it: the first client that registers it, or nobody.")]
        public NeutralInitialHolder relayNeutralInitialHolder = NeutralInitialHolder.FirstReady;

        [Tooltip("Most commands for the server kept until this host handles them (Relay events, dispatched every frame). 0: no game side (no server-owned entities, no server commands or events).")]
        [Min(0)]
        public int relayInboxCapacity = 65536;

        [Header("Interpolation")]
        public InterpolationMode interpolationMode = InterpolationMode.Adaptive;

        [Tooltip("Fixed mode: delay behind the estimated server clock (s).")]
        [Min(0)]
        public float fixedDelay = 0.1f;

        [Tooltip("Adaptive mode: smallest delay (s).")]
        [Min(0)]
        public float minDelay = 0f;

        [Tooltip("Adaptive mode: largest delay (s).")]
        [Min(0)]
        public float maxDelay = 1.5f;

        [Tooltip("Predicted mode: how far past the newest data to show (s), about the one-way latency.")]
        public float predictionLead = 0f;

        [Header("Sending")]
        [Tooltip("Owned-state sends per second.")]
        [Range(1f, 240f)]
        public float sendRate = 30f;

        public SendPolicy sendPolicy = SendPolicy.DeadReckoning;

        [Tooltip("Position error (m) that makes a state worth sending.")]
        [Min(0)]
        public float positionThreshold = 0.01f;

        [Tooltip("Rotation error (degrees) that makes a state worth sending.")]
        [Min(0)]
        public float angleThresholdDegrees = 1f;

        [Tooltip("Send at least this often (s), even when nothing moved.")]
        [Min(0.01f)]
        public float maxSendInterval = 1f;

        [Header("Interest")]
        [Tooltip("Hear only about nearby objects and chosen regions (otherwise: everything).")]
        public bool useInterest;

        [Tooltip("See every object (spectator, game master); areas are then ignored.")]
        public bool globalView;

        [Tooltip("Grid cells (of the relay's cell size) around this client's objects that it hears about; 0: their own cells.")]
        [Min(0)]
        public int interestRadius = 1;

        [Tooltip("Region ids (not 0) this client also hears about.")]
        public int[] interestRegions = new int[0];

        [Tooltip("Compared with each object's least device class.")]
        [Range(0, 255)]
        public int deviceClass;

        [Header("Testing")]
        [Tooltip("Put this client's traffic through a simulated network.")]
        public NetworkProfile simulatedNetwork = NetworkProfile.None;

        public long simulatedNetworkSeed = 1;

        [Header("Logging")]
        public NetsyncLogLevel logLevel = NetsyncLogLevel.Info;

        [Header("Lifetime")]
        [Tooltip("Keep the manager (and the connection) across scene loads.")]
        public bool dontDestroyOnLoad = true;

        static readonly List<SyncedTransform> s_pending = new List<SyncedTransform>();

        readonly Dictionary<ulong, SyncedTransform> _synced = new Dictionary<ulong, SyncedTransform>();
        readonly List<SyncedTransform> _senders = new List<SyncedTransform>();
        NetsyncClientStats _stats;
        NetsyncServerStats _relayStats;

        /// <summary>The manager of this game, once its Awake ran.</summary>
        public static NetsyncManager Instance { get; private set; }

        /// <summary>The connection (null before <see cref="Connect"/>).</summary>
        public SyncClient Client { get; private set; }

        /// <summary>The hosted relay, when <see cref="hostRelay"/> is on.</summary>
        public RelayServer Relay { get; private set; }

        /// <summary>The id the relay gave this client (0 until connected).</summary>
        public uint ClientId { get; private set; }

        /// <summary>The clock netsync runs on: unscaled, monotonic seconds.</summary>
        public static double Now
        {
            get { return Time.realtimeSinceStartupAsDouble; }
        }

        public bool IsConnected
        {
            get { return Client != null && !Client.IsDisposed && _stats.State == ConnectionState.Connected; }
        }

        /// <summary>RTT, jitter, render delay, bandwidth... as of this frame.</summary>
        public NetsyncClientStats Stats
        {
            get { return _stats; }
        }

        /// <summary>The hosted relay's counters as of this frame.</summary>
        public NetsyncServerStats RelayStats
        {
            get { return _relayStats; }
        }

        /// <summary>Every remote transform of this frame's tick (valid until the next frame).</summary>
        public ReadOnlySpan<NetsyncTransform> LastTransforms
        {
            get { return Client == null || Client.IsDisposed ? default(ReadOnlySpan<NetsyncTransform>) : Client.LastTransforms; }
        }

        /// <summary>The synced objects of this machine, by entity id.</summary>
        public IReadOnlyDictionary<ulong, SyncedTransform> SyncedObjects
        {
            get { return _synced; }
        }

        /// <summary>Connected (or reconnected) with this client id.</summary>
        public event Action<uint> Connected;

        public event Action<DisconnectReason> Disconnected;

        /// <summary>A remote entity this machine has no object for may need spawning.</summary>
        public event Action<ulong> RemoteEntityAppeared;

        public event Action<ulong, RemovalReason> RemoteEntityRemoved;

        /// <summary>A global command: every machine gets it once, in the same order.</summary>
        public event GlobalCommandHandler GlobalCommandReceived;

        /// <summary>
        /// The hosted relay started (<see cref="hostRelay"/>). Subscribe to its
        /// events here (<see cref="RelayServer.ClientJoined"/>,
        /// <see cref="RelayServer.ComponentCommandReceived"/>...): the manager
        /// dispatches them once a frame on the main thread. It starts in the
        /// manager's Start, before other objects' Start: subscribe in Awake or
        /// OnEnable, or read <see cref="Relay"/>.
        /// </summary>
        public event Action<RelayServer> RelayStarted;

        [RuntimeInitializeOnLoadMethod(RuntimeInitializeLoadType.SubsystemRegistration)]
        static void ResetStatics()
        {
            // Play mode without a domain reload keeps statics: start clean.
            Instance = null;
            s_pending.Clear();
            Application.quitting -= OnQuitting;
            Application.quitting += OnQuitting;
        }

        static void OnQuitting()
        {
            NetsyncRuntime.Shutdown();
        }

        void Awake()
        {
            if (Instance != null && Instance != this)
            {
                Debug.LogWarning("[netsync] a second NetsyncManager was disabled; keep one per game", this);
                enabled = false;
                return;
            }
            Instance = this;
            if (dontDestroyOnLoad && transform.parent == null)
            {
                DontDestroyOnLoad(gameObject);
            }
            try
            {
                UnityLogBridge.Install(logLevel);
            }
            catch (Exception e)
            {
                Debug.LogException(e, this);
            }
            foreach (var pending in s_pending)
            {
                if (pending != null)
                {
                    Add(pending);
                }
            }
            s_pending.Clear();
        }

        void Start()
        {
            if (connectOnStart && Client == null)
            {
                Connect();
            }
        }

        /// <summary>The client settings the Inspector fields describe.</summary>
        public NetsyncClientConfig BuildClientConfig()
        {
            var config = NetsyncClientConfig.CreateDefault();
            config.timeline.Mode = interpolationMode;
            config.timeline.fixed_delay = fixedDelay;
            config.timeline.min_delay = minDelay;
            config.timeline.max_delay = maxDelay;
            config.timeline.prediction_lead = predictionLead;
            config.send_rate = sendRate;
            config.send_filter.Policy = sendPolicy;
            config.send_filter.position_threshold = positionThreshold;
            config.send_filter.angle_threshold = angleThresholdDegrees * Mathf.Deg2Rad;
            config.send_filter.max_interval = maxSendInterval;
            config.Conditioner = simulatedNetwork;
            config.conditioner_seed = (ulong)simulatedNetworkSeed;
            return config;
        }

        /// <summary>The hosted relay's settings the Inspector fields describe.</summary>
        public NetsyncServerConfig BuildRelayConfig()
        {
            var config = NetsyncServerConfig.CreateDefault();
            config.port = (ushort)relayPort;
            config.max_clients = (uint)Mathf.Max(1, relayMaxClients);
            config.idle_timeout = relayIdleTimeout;
            config.cell_size = relayCellSize;
            config.claim_cooldown = relayClaimCooldown;
            config.rest_timeout = relayRestTimeout;
            config.NeutralInitialHolder = relayNeutralInitialHolder;
            config.server_inbox_capacity = (uint)Mathf.Max(0, relayInboxCapacity);
            return config;
        }

        /// <summary>
        /// Starts the hosted relay (when <see cref="hostRelay"/>) and starts
        /// connecting; returns at once. Errors (a taken port, a bad setting)
        /// are thrown as <see cref="NetsyncException"/> and logged.
        /// </summary>
        public void Connect()
        {
            if (Client != null && !Client.IsDisposed)
            {
                return;
            }
            try
            {
                if (hostRelay && (Relay == null || Relay.IsDisposed))
                {
                    Relay = RelayServer.Start(BuildRelayConfig(), hostBindAddress);
                    var started = RelayStarted;
                    if (started != null)
                    {
                        started(Relay);
                    }
                }
                string host = hostRelay ? "127.0.0.1" : relayAddress;
                Client = SyncClient.Connect(Endpoint(host, relayPort), BuildClientConfig());
            }
            catch (Exception e)
            {
                Debug.LogException(e, this);
                Disconnect();
                throw;
            }
            Client.Connected += OnConnected;
            Client.Reconnected += OnConnected;
            Client.Disconnected += OnDisconnected;
            Client.EntityAppeared += OnEntityAppeared;
            Client.EntityRemoved += OnEntityRemoved;
            Client.RightGained += id => Route(id, s => s.OnRightGained());
            Client.RightLost += id => Route(id, s => s.OnRightLost());
            Client.RightRefused += (id, reason) => Route(id, s => s.OnRightRefused(reason));
            Client.ComponentStateReceived += OnComponentState;
            Client.ComponentCommandReceived += OnComponentCommand;
            Client.GlobalCommandReceived += OnGlobalCommand;
            if (useInterest)
            {
                ApplyInterest();
            }
            foreach (var synced in _synced.Values)
            {
                synced.Attach(Client, this);
            }
        }

        /// <summary>Sends the Interest fields to the relay (call again after changing them at run time).</summary>
        public void ApplyInterest()
        {
            if (Client == null || Client.IsDisposed)
            {
                return;
            }
            var regions = new uint[interestRegions == null ? 0 : interestRegions.Length];
            for (int i = 0; i < regions.Length; i++)
            {
                regions[i] = (uint)interestRegions[i];
            }
            Client.SetInterest(globalView ? InterestFlags.GlobalView : InterestFlags.None,
                (byte)Mathf.Clamp(deviceClass, 0, 255), (uint)Mathf.Max(0, interestRadius), regions);
        }

        /// <summary>Sends a global command to every machine (this one included), reliably, in one order.</summary>
        public void SendGlobalCommand(ReadOnlySpan<byte> command)
        {
            if (Client == null || Client.IsDisposed)
            {
                throw new InvalidOperationException("netsync is not connected");
            }
            Client.SendGlobalCommand(command);
        }

        /// <summary>Stops the client (and the hosted relay): their threads are joined before this returns.</summary>
        public void Disconnect()
        {
            foreach (var synced in _synced.Values)
            {
                synced.Detach(Client);
            }
            if (Client != null)
            {
                Client.Dispose();
                Client = null;
            }
            if (Relay != null)
            {
                Relay.Dispose();
                Relay = null;
            }
            ClientId = 0;
            _stats = default(NetsyncClientStats);
        }

        /// <summary>"IP:port" for the native client, resolving a host name (blocks on DNS).</summary>
        public static string Endpoint(string host, int port)
        {
            IPAddress ip;
            if (!IPAddress.TryParse(host, out ip))
            {
                IPAddress[] found = Dns.GetHostAddresses(host);
                if (found.Length == 0)
                {
                    throw new ArgumentException("relay host `" + host + "` has no address");
                }
                ip = Array.Find(found, a => a.AddressFamily == AddressFamily.InterNetwork) ?? found[0];
            }
            return ip.AddressFamily == AddressFamily.InterNetworkV6 ? "[" + ip + "]:" + port : ip + ":" + port;
        }

        void LateUpdate()
        {
            UnityLogBridge.Flush();
            if (Client == null || Client.IsDisposed)
            {
                return;
            }
            double now = Now;
            // 1. What this machine simulates, after this frame's Update and physics.
            for (int i = 0; i < _senders.Count; i++)
            {
                var synced = _senders[i];
                NetsyncSample sample;
                if (synced.TryCapture(now, out sample))
                {
                    try
                    {
                        Client.SetEntityState(in sample);
                    }
                    catch (NetsyncException e)
                    {
                        synced.ReportSendFailure(e);
                    }
                }
                synced.FlushComponents();
            }
            // 2. One tick, one batch: every remote transform of this frame.
            ReadOnlySpan<NetsyncTransform> transforms = Client.Tick(now);
            for (int i = 0; i < transforms.Length; i++)
            {
                SyncedTransform synced;
                if (_synced.TryGetValue(transforms[i].entity_id, out synced))
                {
                    synced.ApplyRemote(in transforms[i], now);
                }
            }
            // 3. Connection and send-right events, then commands and component
            //    states, on the main thread.
            Client.DispatchEvents();
            if (Client != null)
            {
                Client.DispatchMessages();
            }
            if (Client == null)
            {
                return; // a handler disconnected
            }
            // 4. The hosted relay's events and commands for the server.
            if (Relay != null)
            {
                Relay.Dispatch();
            }
            if (Client == null)
            {
                return;
            }
            _stats = Client.Stats;
            if (Relay != null)
            {
                _relayStats = Relay.Stats;
            }
        }

        void OnDestroy()
        {
            if (Instance != this)
            {
                return;
            }
            Disconnect();
            Instance = null;
            // Objects that outlive this manager wait for the next one.
            foreach (var synced in _synced.Values)
            {
                if (synced != null && !s_pending.Contains(synced))
                {
                    s_pending.Add(synced);
                }
            }
            _synced.Clear();
            _senders.Clear();
        }

        void OnConnected(uint clientId)
        {
            ClientId = clientId;
            var handler = Connected;
            if (handler != null)
            {
                handler(clientId);
            }
        }

        void OnDisconnected(DisconnectReason reason)
        {
            Debug.LogWarning("[netsync] disconnected from the relay: " + reason, this);
            var handler = Disconnected;
            if (handler != null)
            {
                handler(reason);
            }
        }

        void OnEntityAppeared(ulong entityId)
        {
            if (_synced.ContainsKey(entityId))
            {
                return;
            }
            var handler = RemoteEntityAppeared;
            if (handler != null)
            {
                handler(entityId);
            }
        }

        void OnEntityRemoved(ulong entityId, RemovalReason reason)
        {
            Route(entityId, s => s.OnRemoteRemoved(reason));
            var handler = RemoteEntityRemoved;
            if (handler != null)
            {
                handler(entityId, reason);
            }
        }

        void OnComponentState(ulong entityId, uint componentId, ulong version, ReadOnlySpan<byte> payload)
        {
            SyncedTransform synced;
            if (_synced.TryGetValue(entityId, out synced) && synced != null)
            {
                var component = synced.FindComponent(componentId);
                if (component != null)
                {
                    component.ReceiveState(payload, version);
                }
            }
        }

        void OnComponentCommand(uint sender, ulong entityId, uint componentId, ReadOnlySpan<byte> payload)
        {
            SyncedTransform synced;
            if (_synced.TryGetValue(entityId, out synced) && synced != null)
            {
                var component = synced.FindComponent(componentId);
                if (component != null)
                {
                    component.ReceiveCommand(sender, payload);
                }
            }
        }

        void OnGlobalCommand(uint sender, ulong sequence, double serverTime, ReadOnlySpan<byte> payload)
        {
            var handler = GlobalCommandReceived;
            if (handler != null)
            {
                handler(sender, sequence, serverTime, payload);
            }
        }

        void Route(ulong entityId, Action<SyncedTransform> action)
        {
            SyncedTransform synced;
            if (_synced.TryGetValue(entityId, out synced) && synced != null)
            {
                action(synced);
            }
        }

        // ---- the registry the components use ------------------------------

        internal static void Enlist(SyncedTransform synced)
        {
            if (Instance != null)
            {
                Instance.Add(synced);
            }
            else if (!s_pending.Contains(synced))
            {
                s_pending.Add(synced);
            }
        }

        internal static void Dismiss(SyncedTransform synced)
        {
            s_pending.Remove(synced);
            if (Instance != null)
            {
                Instance.Remove(synced);
            }
        }

        void Add(SyncedTransform synced)
        {
            SyncedTransform other;
            if (_synced.TryGetValue(synced.EntityId, out other) && other != synced)
            {
                Debug.LogError("[netsync] entity id " + synced.EntityId + " is used by both " + other.name + " and " +
                               synced.name + "; the second is not synced", synced);
                return;
            }
            _synced[synced.EntityId] = synced;
            if (!_senders.Contains(synced))
            {
                _senders.Add(synced);
            }
            if (Client != null && !Client.IsDisposed)
            {
                synced.Attach(Client, this);
            }
        }

        void Remove(SyncedTransform synced)
        {
            SyncedTransform current;
            if (_synced.TryGetValue(synced.EntityId, out current) && current == synced)
            {
                _synced.Remove(synced.EntityId);
            }
            _senders.Remove(synced);
            synced.Detach(Client);
        }
    }
}
