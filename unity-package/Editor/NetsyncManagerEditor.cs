using Netsync.Unity;
using UnityEditor;
using UnityEngine;

namespace Netsync.Editor
{
    /// <summary>The manager's settings, and in play mode its live figures.</summary>
    [CustomEditor(typeof(NetsyncManager))]
    sealed class NetsyncManagerEditor : UnityEditor.Editor
    {
        public override bool RequiresConstantRepaint()
        {
            return Application.isPlaying;
        }

        public override void OnInspectorGUI()
        {
            var manager = (NetsyncManager)target;
            using (new EditorGUI.DisabledScope(Application.isPlaying && manager.Client != null))
            {
                DrawDefaultInspector();
            }
            if (!Application.isPlaying)
            {
                EditorGUILayout.HelpBox("Live figures (RTT, jitter, render delay, bandwidth) show here in play mode.", MessageType.None);
                return;
            }
            EditorGUILayout.Space();
            if (manager.Client == null)
            {
                EditorGUILayout.HelpBox("Not connected.", MessageType.Info);
                if (GUILayout.Button("Connect"))
                {
                    manager.Connect();
                }
                return;
            }
            EditorGUILayout.HelpBox(NetsyncStatsOverlay.Describe(manager.Stats, manager.IsConnected), MessageType.None);
            if (manager.Relay != null)
            {
                EditorGUILayout.HelpBox(NetsyncStatsOverlay.DescribeRelay(manager.RelayStats, manager.relayPort), MessageType.None);
            }
            EditorGUILayout.LabelField("Synced objects", EditorStyles.boldLabel);
            foreach (var pair in manager.SyncedObjects)
            {
                if (pair.Value != null)
                {
                    EditorGUILayout.LabelField("#" + pair.Key + " " + pair.Value.name, pair.Value.HolderDescription);
                }
            }
            if (GUILayout.Button("Disconnect"))
            {
                manager.Disconnect();
            }
        }
    }
}
