// The part of NUnit's API that the package's engine-independent tests use
// (unity-package/Tests/Runtime/Core), with NUnit's semantics, so that the
// very files Unity's Test Framework runs also run under plain Mono, where
// Debian ships no NUnit. Only the harness compiles this file.
using System;
using System.Collections;
using System.Globalization;

namespace NUnit.Framework
{
    [AttributeUsage(AttributeTargets.Class)]
    public sealed class TestFixtureAttribute : Attribute
    {
    }

    [AttributeUsage(AttributeTargets.Method)]
    public sealed class TestAttribute : Attribute
    {
    }

    [AttributeUsage(AttributeTargets.Method)]
    public sealed class SetUpAttribute : Attribute
    {
    }

    [AttributeUsage(AttributeTargets.Method)]
    public sealed class TearDownAttribute : Attribute
    {
    }

    public delegate void TestDelegate();

    public sealed class AssertionException : Exception
    {
        public AssertionException(string message) : base(message)
        {
        }
    }

    public static class Assert
    {
        static string With(string what, string message)
        {
            return string.IsNullOrEmpty(message) ? what : message + ": " + what;
        }

        public static void Fail(string message)
        {
            throw new AssertionException(message);
        }

        static bool IsNumeric(object o)
        {
            return o is sbyte || o is byte || o is short || o is ushort || o is int || o is uint ||
                   o is long || o is ulong || o is float || o is double || o is decimal;
        }

        /// <summary>NUnit compares numbers of different types by value.</summary>
        static bool AreEqualValues(object expected, object actual)
        {
            if (expected == null || actual == null)
            {
                return expected == null && actual == null;
            }
            if (IsNumeric(expected) && IsNumeric(actual))
            {
                if (expected is float || expected is double || actual is float || actual is double)
                {
                    return Convert.ToDouble(expected, CultureInfo.InvariantCulture) ==
                           Convert.ToDouble(actual, CultureInfo.InvariantCulture);
                }
                return Convert.ToDecimal(expected, CultureInfo.InvariantCulture) ==
                       Convert.ToDecimal(actual, CultureInfo.InvariantCulture);
            }
            return expected.Equals(actual);
        }

        public static void AreEqual(object expected, object actual, string message = null)
        {
            if (!AreEqualValues(expected, actual))
            {
                Fail(With("expected <" + expected + "> but was <" + actual + ">", message));
            }
        }

        public static void AreEqual(double expected, double actual, double delta, string message = null)
        {
            if (!(Math.Abs(expected - actual) <= delta))
            {
                Fail(With("expected <" + expected + "> +/- " + delta + " but was <" + actual + ">", message));
            }
        }

        public static void AreNotEqual(object expected, object actual, string message = null)
        {
            if (AreEqualValues(expected, actual))
            {
                Fail(With("expected anything but <" + expected + ">", message));
            }
        }

        public static void IsTrue(bool condition, string message = null)
        {
            if (!condition)
            {
                Fail(With("expected true", message));
            }
        }

        public static void IsFalse(bool condition, string message = null)
        {
            if (condition)
            {
                Fail(With("expected false", message));
            }
        }

        public static void IsNull(object value, string message = null)
        {
            if (value != null)
            {
                Fail(With("expected null but was <" + value + ">", message));
            }
        }

        public static void IsNotNull(object value, string message = null)
        {
            if (value == null)
            {
                Fail(With("expected not null", message));
            }
        }

        /// <summary>Like NUnit: the exception must be exactly of type T.</summary>
        public static T Throws<T>(TestDelegate code, string message = null) where T : Exception
        {
            try
            {
                code();
            }
            catch (Exception e)
            {
                if (e.GetType() == typeof(T))
                {
                    return (T)e;
                }
                Fail(With("expected " + typeof(T).Name + " but got " + e.GetType().Name + ": " + e.Message, message));
            }
            Fail(With("expected " + typeof(T).Name + " but nothing was thrown", message));
            return null;
        }
    }

    public static class StringAssert
    {
        public static void Contains(string expected, string actual, string message = null)
        {
            if (actual == null || actual.IndexOf(expected, StringComparison.Ordinal) < 0)
            {
                Assert.Fail((message == null ? "" : message + ": ") + "expected a string containing \"" + expected + "\" but was \"" + actual + "\"");
            }
        }

        public static void StartsWith(string expected, string actual, string message = null)
        {
            if (actual == null || !actual.StartsWith(expected, StringComparison.Ordinal))
            {
                Assert.Fail((message == null ? "" : message + ": ") + "expected a string starting with \"" + expected + "\" but was \"" + actual + "\"");
            }
        }
    }

    public static class CollectionAssert
    {
        public static void Contains(IEnumerable collection, object expected, string message = null)
        {
            foreach (var item in collection)
            {
                if (Equals(item, expected))
                {
                    return;
                }
            }
            Assert.Fail((message == null ? "" : message + ": ") + "expected the collection to contain <" + expected + ">");
        }
    }
}
