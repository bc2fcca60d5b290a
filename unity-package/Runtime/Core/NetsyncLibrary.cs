using System;
using System.Text;
using System.Threading;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// The loaded native library: ABI check, result names, the last error,
    /// and the test hook for the panic boundary.
    /// </summary>
    public static unsafe class NetsyncLibrary
    {
        /// <summary>ABI major these bindings were generated for.</summary>
        public const uint BindingsAbiMajor = NativeMethods.NETSYNC_ABI_VERSION_MAJOR;

        /// <summary>ABI minor these bindings were generated for: a library
        /// with an older minor lacks functions these bindings call, and
        /// before 1.0 any other minor may lay its structs out differently.</summary>
        public const uint BindingsAbiMinor = NativeMethods.NETSYNC_ABI_VERSION_MINOR;

        // The three sizes below are `usize` constants in the C ABI, which the
        // generated file leaves out (C# has no const UIntPtr); the Mono
        // harness checks each against the library's behaviour at its edge.

        /// <summary>Most samples one <see cref="Timeline.Push(double, double, NetsyncSample[], int)"/> takes
        /// (NETSYNC_MAX_SAMPLES_PER_PUSH).</summary>
        public const int MaxSamplesPerPush = 1 << 20;

        /// <summary>Largest payload of a command or component state, in bytes (NETSYNC_MAX_PAYLOAD).</summary>
        public const int MaxPayload = 960;

        /// <summary>Most region ids one client may subscribe to (NETSYNC_MAX_REGIONS).</summary>
        public const int MaxRegions = 192;

        static int s_checked; // 1 once the loaded library passed the check

        /// <summary>The loaded library's ABI version, <c>(major &lt;&lt; 16) | minor</c>.</summary>
        public static uint LoadedAbiVersion
        {
            get
            {
                EnsureCompatible();
                return NativeMethods.netsync_abi_version();
            }
        }

        /// <summary>
        /// Loads the native library (first call) and refuses it when its ABI
        /// major differs from <see cref="BindingsAbiMajor"/> or its minor is
        /// older than <see cref="BindingsAbiMinor"/> (before 1.0: differs from
        /// it). Every netsync object
        /// calls this before its first native call; cheap afterwards.
        /// </summary>
        /// <exception cref="NetsyncLibraryException">missing library or ABI mismatch.</exception>
        public static void EnsureCompatible()
        {
            if (Volatile.Read(ref s_checked) == 1)
            {
                return;
            }
            uint loaded;
            try
            {
                loaded = NativeMethods.netsync_abi_version();
            }
            catch (DllNotFoundException e)
            {
                throw new NetsyncLibraryException(
                    "the native netsync library was not found (libnetsync.so, netsync.dll, libnetsync.dylib): " +
                    "build it into the package with scripts/build-unity-native.sh, or put it on the library path",
                    e);
            }
            catch (EntryPointNotFoundException e)
            {
                throw new NetsyncLibraryException(
                    "a library named netsync was loaded but it has no netsync_abi_version: not a netsync build", e);
            }
            CheckAbi(loaded);
            Volatile.Write(ref s_checked, 1);
        }

        /// <summary>
        /// The rule <see cref="EnsureCompatible"/> applies to a loaded
        /// version; public so that it can be tested without another library.
        /// </summary>
        /// <exception cref="NetsyncLibraryException">when <paramref name="loaded"/> cannot serve these bindings.</exception>
        public static void CheckAbi(uint loaded)
        {
            uint major = loaded >> 16;
            uint minor = loaded & 0xFFFF;
            if (major != BindingsAbiMajor)
            {
                throw new NetsyncLibraryException(
                    "the native netsync library has ABI " + major + "." + minor + " but these C# bindings need major " +
                    BindingsAbiMajor + ": rebuild the library and the bindings from the same source");
            }
            // Before 1.0 a minor may change struct layouts: require the same one.
            if (minor < BindingsAbiMinor || (major == 0 && minor != BindingsAbiMinor))
            {
                throw new NetsyncLibraryException(
                    "the native netsync library has ABI " + major + "." + minor + " but these C# bindings were made for " +
                    BindingsAbiMajor + "." + BindingsAbiMinor + ": rebuild the library and the bindings from the same source");
            }
        }

        /// <summary>Name of a result code ("NETSYNC_OK", ...).</summary>
        public static string ResultName(NetsyncResult code)
        {
            try
            {
                return Utf8.FromNative(NativeMethods.netsync_result_str((int)code));
            }
            catch (DllNotFoundException)
            {
                return code.ToString();
            }
        }

        /// <summary>Detail of the last failed netsync call on this thread ("" when none).</summary>
        public static string LastError
        {
            get { return Utf8.FromNative(NativeMethods.netsync_last_error()); }
        }

        /// <summary>Throws <see cref="NetsyncException"/> with the native detail unless <paramref name="result"/> is OK.</summary>
        public static void Check(NetsyncResult result)
        {
            if (result != NetsyncResult.NETSYNC_OK)
            {
                throw Failure(result);
            }
        }

        /// <summary>The exception for a failed call (reads the last error now, on this thread).</summary>
        public static NetsyncException Failure(NetsyncResult result)
        {
            return new NetsyncException(result, LastError);
        }

        /// <summary>
        /// Panics inside the library on purpose. The panic boundary turns it
        /// into NETSYNC_ERR_PANIC, which this throws as a
        /// <see cref="NetsyncException"/>: proof that a bug in netsync is an
        /// error, never a crash of the engine.
        /// </summary>
        public static void DebugPanic()
        {
            EnsureCompatible();
            Check(NativeMethods.netsync_debug_panic());
        }
    }

    /// <summary>NUL-terminated UTF-8 strings across the boundary.</summary>
    internal static unsafe class Utf8
    {
        /// <summary>The bytes of <paramref name="text"/> with a NUL at the end.</summary>
        public static byte[] ToNative(string text, string parameterName)
        {
            if (text == null)
            {
                throw new ArgumentNullException(parameterName);
            }
            if (text.IndexOf('\0') >= 0)
            {
                throw new ArgumentException("must not contain NUL characters", parameterName);
            }
            var bytes = new byte[Encoding.UTF8.GetByteCount(text) + 1];
            Encoding.UTF8.GetBytes(text, 0, text.Length, bytes, 0);
            return bytes;
        }

        /// <summary>Copies a NUL-terminated UTF-8 string ("" for NULL).</summary>
        public static string FromNative(byte* text)
        {
            if (text == null)
            {
                return "";
            }
            int length = 0;
            while (text[length] != 0)
            {
                length++;
            }
            return Encoding.UTF8.GetString(text, length);
        }
    }
}
