// Runs every [TestFixture] of this assembly the way NUnit does (a fresh
// fixture instance, [SetUp] and [TearDown] around each [Test], fixtures and
// tests in name order) and prints "N passed, N failed". Exit code 1 on any
// failure, 2 when no test ran. `mono netsync-tests.exe <substring>` runs
// only the tests whose full name contains the substring.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Reflection;
using NUnit.Framework;

namespace Netsync.Tests
{
    public static class Runner
    {
        public static int Main(string[] args)
        {
            string filter = args.Length > 0 ? args[0] : null;
            int passed = 0, failed = 0;
            var total = Stopwatch.StartNew();
            var fixtures = typeof(Runner).Assembly.GetTypes()
                .Where(t => t.GetCustomAttributes(typeof(TestFixtureAttribute), false).Length > 0)
                .OrderBy(t => t.FullName, StringComparer.Ordinal);
            foreach (var fixture in fixtures)
            {
                var methods = fixture.GetMethods(BindingFlags.Public | BindingFlags.Instance);
                Func<Type, MethodInfo[]> marked = attribute =>
                    methods.Where(m => m.GetCustomAttributes(attribute, false).Length > 0).ToArray();
                var setUps = marked(typeof(SetUpAttribute));
                var tearDowns = marked(typeof(TearDownAttribute));
                foreach (var test in marked(typeof(TestAttribute)).OrderBy(m => m.Name, StringComparer.Ordinal))
                {
                    string name = fixture.Name + "." + test.Name;
                    if (filter != null && name.IndexOf(filter, StringComparison.Ordinal) < 0)
                    {
                        continue;
                    }
                    var clock = Stopwatch.StartNew();
                    Exception failure = null;
                    object instance = Activator.CreateInstance(fixture);
                    try
                    {
                        foreach (var m in setUps)
                        {
                            m.Invoke(instance, null);
                        }
                        test.Invoke(instance, null);
                    }
                    catch (TargetInvocationException e)
                    {
                        failure = e.InnerException;
                    }
                    foreach (var m in tearDowns)
                    {
                        try
                        {
                            m.Invoke(instance, null);
                        }
                        catch (TargetInvocationException e)
                        {
                            failure = failure ?? e.InnerException;
                        }
                    }
                    if (failure == null)
                    {
                        passed++;
                        Console.WriteLine("PASS {0} ({1} ms)", name, clock.ElapsedMilliseconds);
                    }
                    else
                    {
                        failed++;
                        Console.WriteLine("FAIL {0} ({1} ms): {2}", name, clock.ElapsedMilliseconds, failure);
                    }
                }
            }
            // Nothing may outlive the run (network threads of a failed test).
            Netsync.NetsyncRuntime.Shutdown();
            Console.WriteLine("C# tests took {0:F1} s", total.Elapsed.TotalSeconds);
            Console.WriteLine("{0} passed, {1} failed", passed, failed);
            if (failed > 0)
            {
                return 1;
            }
            return passed == 0 ? 2 : 0;
        }
    }
}
