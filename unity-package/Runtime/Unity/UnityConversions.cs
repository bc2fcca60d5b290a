using Netsync.Native;
using Unity.Collections.LowLevel.Unsafe;
using UnityEngine;

namespace Netsync.Native
{
    // NetsyncVec3 and Vector3 are both three floats (x, y, z); NetsyncQuat
    // and Quaternion both four (x, y, z, w). Conversions copy one value,
    // never an array; the ref views in NetsyncUnity copy nothing.
    public partial struct NetsyncVec3
    {
        public static implicit operator Vector3(NetsyncVec3 v)
        {
            return new Vector3(v.x, v.y, v.z);
        }

        public static implicit operator NetsyncVec3(Vector3 v)
        {
            return new NetsyncVec3(v.x, v.y, v.z);
        }
    }

    public partial struct NetsyncQuat
    {
        public static implicit operator Quaternion(NetsyncQuat q)
        {
            return new Quaternion(q.x, q.y, q.z, q.w);
        }

        public static implicit operator NetsyncQuat(Quaternion q)
        {
            return new NetsyncQuat(q.x, q.y, q.z, q.w);
        }
    }
}

namespace Netsync.Unity
{
    /// <summary>Zero-copy views between netsync's blittable structs and Unity's.</summary>
    public static class NetsyncUnity
    {
        /// <summary>The same 12 bytes seen as a Vector3 (no copy).</summary>
        public static ref Vector3 AsVector3(ref NetsyncVec3 v)
        {
            return ref UnsafeUtility.As<NetsyncVec3, Vector3>(ref v);
        }

        /// <summary>The same 16 bytes seen as a Quaternion (no copy).</summary>
        public static ref Quaternion AsQuaternion(ref NetsyncQuat q)
        {
            return ref UnsafeUtility.As<NetsyncQuat, Quaternion>(ref q);
        }

        public static Vector3 ToVector3(this NetsyncVec3 v)
        {
            return new Vector3(v.x, v.y, v.z);
        }

        public static Quaternion ToQuaternion(this NetsyncQuat q)
        {
            return new Quaternion(q.x, q.y, q.z, q.w);
        }

        public static NetsyncVec3 ToNetsync(this Vector3 v)
        {
            return new NetsyncVec3(v.x, v.y, v.z);
        }

        public static NetsyncQuat ToNetsync(this Quaternion q)
        {
            return new NetsyncQuat(q.x, q.y, q.z, q.w);
        }

        /// <summary>True when the layouts really match on this platform (the Unity tests check it).</summary>
        public static bool LayoutsMatch
        {
            get
            {
                return UnsafeUtility.SizeOf<Vector3>() == UnsafeUtility.SizeOf<NetsyncVec3>() &&
                       UnsafeUtility.SizeOf<Quaternion>() == UnsafeUtility.SizeOf<NetsyncQuat>();
            }
        }
    }
}
