using System;
using Netsync.Native;

namespace Netsync
{
    /// <summary>
    /// Secure mode's keys. A relay started with a secret
    /// (<see cref="RelayServer.StartSecure"/>) admits only clients presenting
    /// a connect token issued with that secret
    /// (<see cref="SyncClient.ConnectSecure(byte[], NetsyncClientConfig, string)"/>),
    /// and encrypts and authenticates every datagram after the handshake.
    /// The secret stays on the relay and the game's backend; the backend
    /// issues one short-lived token per player and sends it to the game,
    /// which never sees the secret.
    /// </summary>
    public static unsafe class ConnectTokens
    {
        // `usize` constants in the C ABI, which the generated file leaves
        // out (see NetsyncLibrary); the Mono harness checks both at their edge.

        /// <summary>Bytes of a relay secret (NETSYNC_SECRET_SIZE).</summary>
        public const int SecretSize = 32;

        /// <summary>Bytes of a connect token (NETSYNC_TOKEN_SIZE).</summary>
        public const int TokenSize = 225;

        /// <summary>Longest lifetime of a token, in seconds (a day).</summary>
        public const uint MaxLifetimeSeconds = 86400;

        /// <summary>
        /// A new random relay secret (<see cref="SecretSize"/> bytes from the
        /// operating system's CSPRNG). Keep it on the relay and the game's
        /// backend only: whoever holds it can issue tokens.
        /// </summary>
        /// <exception cref="NetsyncException">NETSYNC_ERR_IO when the system has no randomness to give.</exception>
        public static byte[] GenerateSecret()
        {
            NetsyncLibrary.EnsureCompatible();
            var secret = new byte[SecretSize];
            fixed (byte* s = secret)
            {
                NetsyncLibrary.Check(NativeMethods.netsync_secret_generate(s, (UIntPtr)secret.Length));
            }
            return secret;
        }

        /// <summary>
        /// Issues a connect token, for the game's backend: client
        /// <paramref name="clientId"/> may connect to the relay at
        /// <paramref name="relayAddress"/> started with <paramref name="secret"/>,
        /// for <paramref name="lifetimeSeconds"/> from now. The relay admits
        /// the client under that id (the id of <see cref="SyncClient.Connected"/>),
        /// one connection per token and per id.
        /// </summary>
        /// <param name="secret">The relay's secret, <see cref="SecretSize"/> bytes.</param>
        /// <param name="clientId">1 and up: the player's id in the session.</param>
        /// <param name="relayAddress">Numeric "IP:port" as clients reach the relay (its public address).</param>
        /// <param name="lifetimeSeconds">1 to <see cref="MaxLifetimeSeconds"/>: how long the
        /// token admits its client (connecting and reconnecting).</param>
        /// <returns>The token, <see cref="TokenSize"/> bytes: send it to that player's game.</returns>
        /// <exception cref="NetsyncException">NETSYNC_ERR_INVALID_ARGUMENT for a secret of
        /// another size, client id 0, a bad address or lifetime; NETSYNC_ERR_NULL_POINTER
        /// for a null or empty secret.</exception>
        public static byte[] IssueToken(byte[] secret, uint clientId, string relayAddress, uint lifetimeSeconds)
        {
            NetsyncLibrary.EnsureCompatible();
            var address = Utf8.ToNative(relayAddress, "relayAddress");
            var token = new byte[TokenSize];
            UIntPtr length; // always TokenSize
            fixed (byte* s = secret)
            fixed (byte* a = address)
            fixed (byte* t = token)
            {
                NetsyncLibrary.Check(NativeMethods.netsync_token_issue(
                    s, LengthOf(secret), clientId, a, lifetimeSeconds, t, (UIntPtr)token.Length, &length));
            }
            return token;
        }

        /// <summary>Length of a caller's buffer for the native checks (0 for null).</summary>
        internal static UIntPtr LengthOf(byte[] bytes)
        {
            return (UIntPtr)(bytes == null ? 0 : bytes.Length);
        }
    }
}
