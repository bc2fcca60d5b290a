// The native netsync library (Rust, C ABI) as an external module: its
// headers, the library to link or delay-load per platform, and the runtime
// file to stage with packaged builds. Scripts/build-native.sh builds the
// library and puts every file where this module looks for it.

using System.IO;
using UnrealBuildTool;

public class NetSyncLibrary : ModuleRules
{
	public NetSyncLibrary(ReadOnlyTargetRules Target) : base(Target)
	{
		Type = ModuleType.External;

		// Headers: include/netsync.h (generated), netsync.hpp (C++ wrapper) and
		// netsync_unreal_convert.hpp. Staged into include/ next to this file,
		// or, when the plugin is used in place inside a netsync checkout
		// (bindings/unreal/NetSync), read from the checkout's include/.
		string StagedInclude = Path.Combine(ModuleDirectory, "include");
		string CheckoutInclude = Path.GetFullPath(Path.Combine(ModuleDirectory, "..", "..", "..", "..", "..", "..", "include"));
		string IncludeDir = File.Exists(Path.Combine(StagedInclude, "netsync.hpp")) ? StagedInclude : CheckoutInclude;
		if (!File.Exists(Path.Combine(IncludeDir, "netsync.hpp")))
		{
			throw new BuildException("NetSync: netsync.hpp not found in " + StagedInclude +
				". Run Scripts/build-native.sh (see the plugin's README.md) to stage the headers and the library.");
		}
		// System include path: the compiler's warnings stay out of third-party headers.
		PublicSystemIncludePaths.Add(IncludeDir);

		// Runtime files live in Binaries/ThirdParty/NetSyncLibrary/<Platform>/;
		// FNetSyncModule loads them from there at start-up.
		string BinariesDir = Path.Combine(PluginDirectory, "Binaries", "ThirdParty", "NetSyncLibrary");
		const string StagedBinaries = "$(PluginDir)/Binaries/ThirdParty/NetSyncLibrary";

		if (Target.Platform == UnrealTargetPlatform.Win64)
		{
			// Link the import library, delay-load the DLL: the module loads it by
			// full path before the first call, so it need not be on the search path.
			PublicAdditionalLibraries.Add(Path.Combine(ModuleDirectory, "lib", "Win64", "netsync.dll.lib"));
			PublicDelayLoadDLLs.Add("netsync.dll");
			RuntimeDependencies.Add(StagedBinaries + "/Win64/netsync.dll");
			if (File.Exists(Path.Combine(BinariesDir, "Win64", "netsync.pdb")))
			{
				RuntimeDependencies.Add(StagedBinaries + "/Win64/netsync.pdb", StagedFileType.DebugNonUFS);
			}
		}
		else if (Target.Platform == UnrealTargetPlatform.Mac)
		{
			// One universal (arm64 + x86_64) dylib whose install name is
			// @rpath/libnetsync.dylib (the script sets it).
			PublicDelayLoadDLLs.Add(Path.Combine(BinariesDir, "Mac", "libnetsync.dylib"));
			RuntimeDependencies.Add(StagedBinaries + "/Mac/libnetsync.dylib");
		}
		else if (Target.Platform == UnrealTargetPlatform.Linux || Target.Platform == UnrealTargetPlatform.LinuxArm64)
		{
			// Built with the soname libnetsync.so (the script sets it), so the
			// executable records the file name, not this path, and finds the
			// staged copy through the rpath Unreal adds for runtime dependencies.
			string Folder = Target.Platform == UnrealTargetPlatform.Linux ? "Linux" : "LinuxArm64";
			string SharedObject = Path.Combine(BinariesDir, Folder, "libnetsync.so");
			PublicAdditionalLibraries.Add(SharedObject);
			PublicDelayLoadDLLs.Add(SharedObject);
			RuntimeDependencies.Add(StagedBinaries + "/" + Folder + "/libnetsync.so");
		}
		else
		{
			throw new BuildException("NetSync: no native library for " + Target.Platform +
				" (Win64, Mac, Linux and LinuxArm64 are supported; see README.md).");
		}
	}
}
