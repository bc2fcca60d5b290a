using System;
using UnityEditor;
using UnityEngine;

namespace Netsync.Editor
{
    /// <summary>
    /// Keeps native threads from calling into managed code that is going
    /// away. Before a domain reload (script compile, entering play mode with
    /// reloads on) and when play mode ends, it drops the log callback first
    /// and then frees every client and relay, which stops and joins their
    /// network threads. Without this a network thread could call the log
    /// callback of an unloaded domain and take the editor down.
    /// </summary>
    [InitializeOnLoad]
    static class NetsyncEditorLifecycle
    {
        static NetsyncEditorLifecycle()
        {
            AssemblyReloadEvents.beforeAssemblyReload += OnBeforeAssemblyReload;
            EditorApplication.playModeStateChanged += OnPlayModeStateChanged;
            EditorApplication.quitting += OnQuitting;
        }

        static void OnBeforeAssemblyReload()
        {
            Shutdown("a domain reload");
        }

        static void OnPlayModeStateChanged(PlayModeStateChange change)
        {
            if (change == PlayModeStateChange.ExitingPlayMode)
            {
                Shutdown("leaving play mode");
            }
        }

        static void OnQuitting()
        {
            Shutdown("quitting");
        }

        static void Shutdown(string why)
        {
            try
            {
                int stopped = NetsyncRuntime.Shutdown();
                if (stopped > 0)
                {
                    Debug.Log("[netsync] stopped " + stopped + " netsync objects before " + why);
                }
            }
            catch (NetsyncLibraryException)
            {
                // The native library never loaded: nothing runs.
            }
            catch (Exception e)
            {
                Debug.LogException(e);
            }
        }
    }
}
