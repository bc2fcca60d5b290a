using System.Globalization;
using Netsync.Native;
using UnityEngine;

namespace Netsync.Unity
{
    /// <summary>
    /// An on-screen panel with the connection's RTT, jitter, render delay,
    /// loss and bandwidth (and a hosted relay's counters), and a label over
    /// each synced object naming who holds its send right (the holder's
    /// client id, as the relay announced it). Add it anywhere in the scene.
    /// </summary>
    [AddComponentMenu("Netsync/Stats Overlay")]
    public sealed class NetsyncStatsOverlay : MonoBehaviour
    {
        public bool showPanel = true;

        [Tooltip("Label each synced object with the holder of its send right.")]
        public bool showHolders = true;

        [Tooltip("Camera for the labels (the main camera when empty).")]
        public Camera worldCamera;

        public Vector2 panelPosition = new Vector2(10, 10);

#if ENABLE_LEGACY_INPUT_MANAGER
        [Tooltip("Toggles the overlay (legacy Input Manager).")]
        public KeyCode toggleKey = KeyCode.F3;

        void Update()
        {
            if (Input.GetKeyDown(toggleKey))
            {
                showPanel = !showPanel;
                showHolders = showPanel;
            }
        }
#endif

        /// <summary>The panel's lines for these figures (also used by the Inspector).</summary>
        public static string Describe(NetsyncClientStats s, bool connected)
        {
            var c = CultureInfo.InvariantCulture;
            return string.Format(c,
                "netsync: {0} (client {1})\n" +
                "RTT {2:F1} ms (min {3:F1}), jitter {4:F1} ms, loss {5:P1}\n" +
                "render delay {6:F1} ms (target {7:F1})\n" +
                "up {8:F1} kB/s, down {9:F1} kB/s\n" +
                "remote entities {10}, frames {11}, reconnects {12}\n" +
                "states sent {13}, held back {14}",
                connected ? "connected" : s.State.ToString().ToLowerInvariant(), s.client_id,
                s.rtt * 1000, s.rtt_min * 1000, s.jitter * 1000, s.loss,
                s.render_delay * 1000, s.target_delay * 1000,
                s.bytes_per_second_up / 1000, s.bytes_per_second_down / 1000,
                s.remote_entities, s.frames_received, s.reconnects,
                s.states_sent, s.states_skipped);
        }

        /// <summary>The panel's lines for a hosted relay's counters (also used by the Inspector).</summary>
        public static string DescribeRelay(NetsyncServerStats r, int port)
        {
            var c = CultureInfo.InvariantCulture;
            return string.Format(c,
                "relay :{0}: {1} clients, {2} entities, up {3} KiB, down {4} KiB\n" +
                "claims granted {5}, refused {6}; commands {7} (duplicates {8}, refused {9})\n" +
                "component states {10}, interest removals {11}, server inbox dropped {12}",
                port, r.clients, r.entities, r.bytes_sent / 1024, r.bytes_received / 1024,
                r.claims_granted, r.claims_refused, r.commands, r.commands_duplicate, r.commands_refused,
                r.component_states, r.interest_removals, r.server_messages_dropped + r.server_events_dropped);
        }

        void OnGUI()
        {
            var manager = NetsyncManager.Instance;
            if (manager == null)
            {
                return;
            }
            if (showPanel)
            {
                string text = manager.Client == null ? "netsync: not connected" : Describe(manager.Stats, manager.IsConnected);
                if (manager.Relay != null)
                {
                    text += "\n" + DescribeRelay(manager.RelayStats, manager.relayPort);
                }
                var content = new GUIContent(text);
                Vector2 size = GUI.skin.box.CalcSize(content);
                GUI.Box(new Rect(panelPosition.x, panelPosition.y, size.x + 8, size.y + 4), content);
            }
            if (showHolders)
            {
                var cam = worldCamera != null ? worldCamera : Camera.main;
                if (cam == null)
                {
                    return;
                }
                foreach (var pair in manager.SyncedObjects)
                {
                    var synced = pair.Value;
                    if (synced == null)
                    {
                        continue;
                    }
                    Vector3 screen = cam.WorldToScreenPoint(synced.transform.position);
                    if (screen.z <= 0)
                    {
                        continue;
                    }
                    string label = "#" + pair.Key + ": " + synced.HolderDescription;
                    var content = new GUIContent(label);
                    Vector2 size = GUI.skin.label.CalcSize(content);
                    GUI.Label(new Rect(screen.x - size.x / 2, Screen.height - screen.y - size.y, size.x, size.y), content);
                }
            }
        }
    }
}
