using Netsync.Unity;
using UnityEditor;
using UnityEngine;

namespace Netsync.Editor
{
    /// <summary>A synced object's settings, and in play mode who holds it and how it is shown.</summary>
    [CustomEditor(typeof(SyncedTransform), true)]
    [CanEditMultipleObjects]
    sealed class SyncedTransformEditor : UnityEditor.Editor
    {
        public override bool RequiresConstantRepaint()
        {
            return Application.isPlaying;
        }

        public override void OnInspectorGUI()
        {
            DrawDefaultInspector();
            var synced = (SyncedTransform)target;
            if (synced.EntityId == 0)
            {
                EditorGUILayout.HelpBox("Entity id 0 is not an id. Give this object the same id on every machine " +
                                        "(context menu: Derive entity id from scene path).", MessageType.Warning);
            }
            if (!Application.isPlaying)
            {
                return;
            }
            EditorGUILayout.Space();
            EditorGUILayout.LabelField("Send right", synced.HolderDescription);
            EditorGUILayout.LabelField("Simulated here", synced.IsLocallySimulated ? "yes" : "no");
            if (!synced.IsLocallySimulated && synced.IsAttached)
            {
                double age = NetsyncManager.Now - synced.LastRemoteTime;
                EditorGUILayout.LabelField("Last remote pose", synced.LastRemoteTime > 0
                    ? synced.LastRemoteFlags + ", " + (age * 1000).ToString("F0") + " ms ago"
                    : "none yet");
            }
        }
    }
}
