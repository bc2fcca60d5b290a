using System.Runtime.CompilerServices;

// The package's Unity tests reach the Unity layer's internals (the
// manager's registry of synced objects).
[assembly: InternalsVisibleTo("Netsync.Tests.Runtime")]
[assembly: InternalsVisibleTo("Netsync.Editor")]
