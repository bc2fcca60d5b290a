using System;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// A netsync call failed. <see cref="Code"/> is the native result code;
    /// <see cref="NativeMessage"/> is the library's own detail
    /// (<c>netsync_last_error</c>), which names the call and the problem.
    /// </summary>
    public class NetsyncException : Exception
    {
        public NetsyncResult Code { get; }

        /// <summary>The detail from <c>netsync_last_error</c>, e.g.
        /// "netsync_client_connect: `x` is not IP:port".</summary>
        public string NativeMessage { get; }

        public NetsyncException(NetsyncResult code, string nativeMessage)
            : base(NetsyncLibrary.ResultName(code) + ": " + nativeMessage)
        {
            Code = code;
            NativeMessage = nativeMessage;
        }
    }

    /// <summary>
    /// The native library is missing, or its ABI does not match these
    /// bindings. Nothing else in netsync works until this is fixed.
    /// </summary>
    public sealed class NetsyncLibraryException : Exception
    {
        public NetsyncLibraryException(string message, Exception inner = null)
            : base(message, inner)
        {
        }
    }
}
