using System;
using System.Text;
using Netsync.Native;

namespace Netsync
{
    /// <summary>Owns a <c>NetsyncScriptedConfig*</c>.</summary>
    public sealed unsafe class ScriptedPathsHandle : NetsyncHandle
    {
        protected override bool ReleaseHandle()
        {
            NativeMethods.netsync_scripted_config_free((NetsyncScriptedConfig*)handle);
            return true;
        }
    }

    /// <summary>
    /// A path configuration of scripted elements (S5; the format is
    /// docs/scripted-paths.md), parsed and validated. Give the same one to
    /// the server and every client; they keep their own reference, so this
    /// one may be disposed after.
    /// </summary>
    public sealed unsafe class ScriptedPaths : IDisposable
    {
        readonly ScriptedPathsHandle _handle;

        ScriptedPaths(ScriptedPathsHandle handle)
        {
            _handle = handle;
        }

        /// <summary>Parses a configuration text.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT naming the line and
        /// the field; NETSYNC_ERR_TOO_LARGE over 1 MiB.</exception>
        public static ScriptedPaths Parse(string text)
        {
            if (text == null)
            {
                throw new ArgumentNullException("text");
            }
            NetsyncLibrary.EnsureCompatible();
            var bytes = Encoding.UTF8.GetBytes(text);
            NetsyncScriptedConfig* native = null;
            NetsyncResult result;
            fixed (byte* p = bytes)
            {
                result = NativeMethods.netsync_scripted_config_parse(p, (UIntPtr)bytes.Length, &native);
            }
            return Adopt(result, native);
        }

        /// <summary>Reads and parses a configuration file.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_IO when it cannot be read; parse
        /// errors as <see cref="Parse"/>, prefixed with the path.</exception>
        public static ScriptedPaths LoadFile(string path)
        {
            NetsyncLibrary.EnsureCompatible();
            var bytes = Utf8.ToNative(path, "path");
            NetsyncScriptedConfig* native = null;
            NetsyncResult result;
            fixed (byte* p = bytes)
            {
                result = NativeMethods.netsync_scripted_config_load_file(p, &native);
            }
            return Adopt(result, native);
        }

        static ScriptedPaths Adopt(NetsyncResult result, NetsyncScriptedConfig* native)
        {
            NetsyncLibrary.Check(result);
            var handle = new ScriptedPathsHandle();
            handle.Adopt((IntPtr)native);
            return new ScriptedPaths(handle);
        }

        public ScriptedPathsHandle Handle
        {
            get { return _handle; }
        }

        /// <summary>A hash of every value that shapes a motion: equal on the server and its clients.</summary>
        public ulong Fingerprint
        {
            get
            {
                ulong f;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_scripted_config_fingerprint((NetsyncScriptedConfig*)l.Pointer, &f));
                }
                return f;
            }
        }

        public int PathCount
        {
            get
            {
                uint n;
                using (var l = _handle.Acquire())
                {
                    NetsyncLibrary.Check(NativeMethods.netsync_scripted_config_path_count((NetsyncScriptedConfig*)l.Pointer, &n));
                }
                return (int)n;
            }
        }

        /// <summary>One element's transform at <paramref name="serverTime"/>, without any network.</summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_WRONG_STATE outside its life,
        /// NETSYNC_ERR_INVALID_ARGUMENT for an unknown path or a value out of range.</exception>
        public NetsyncTransform Evaluate(in NetsyncScriptedSpawn spawn, double serverTime)
        {
            var copy = spawn;
            NetsyncTransform t;
            using (var l = _handle.Acquire())
            {
                NetsyncLibrary.Check(NativeMethods.netsync_scripted_evaluate((NetsyncScriptedConfig*)l.Pointer, &copy, serverTime, &t));
            }
            return t;
        }

        public void Dispose()
        {
            _handle.Dispose();
        }
    }
}
