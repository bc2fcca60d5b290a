// Unity (Mono and IL2CPP) defines AOT.MonoPInvokeCallbackAttribute in
// UnityEngine; IL2CPP needs it on every static method passed to native code
// as a callback. Outside Unity (the Mono test harness, plain .NET) this shim
// gives the same attribute so that the same source compiles.
#if !UNITY_5_3_OR_NEWER
using System;

namespace AOT
{
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type type)
        {
            Type = type;
        }

        public Type Type { get; private set; }
    }
}
#endif
