// The NetSync runtime module: loads the native library at start-up, and
// the gameplay classes (subsystem, component, settings).

using UnrealBuildTool;

public class NetSync : ModuleRules
{
	public NetSync(ReadOnlyTargetRules Target) : base(Target)
	{
		PCHUsage = PCHUsageMode.UseExplicitOrSharedPCHs;

		PublicDependencyModuleNames.AddRange(new string[]
		{
			"Core",
			"CoreUObject",
			"Engine",
			"DeveloperSettings",
			"NetSyncLibrary",
		});

		PrivateDependencyModuleNames.AddRange(new string[]
		{
			"Projects", // IPluginManager: where the plugin, and so the library, is
		});

		// netsync.hpp works without exceptions and RTTI (Unreal's defaults):
		// the plugin calls only its try_* functions, which return results.
	}
}
