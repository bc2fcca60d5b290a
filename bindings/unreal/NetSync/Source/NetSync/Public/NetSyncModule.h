// The NetSync runtime module: loads the native netsync library from the
// plugin's folder at start-up, checks its ABI version, routes its log to
// LogNetSync, and releases it at shutdown.

#pragma once

#include "CoreMinimal.h"
#include "Modules/ModuleInterface.h"

NETSYNC_API DECLARE_LOG_CATEGORY_EXTERN(LogNetSync, Log, All);

class NETSYNC_API FNetSyncModule : public IModuleInterface
{
public:
	virtual void StartupModule() override;
	virtual void ShutdownModule() override;

	/** True once the library is loaded and its ABI matches the headers: only then may anything call it. */
	static bool IsLibraryReady();

	/** Why the library is not ready ("" when it is). */
	static FString GetLoadError();

	/** Most verbose netsync log level passed to LogNetSync (netsync's NETSYNC_LOG_*). */
	static void SetLogLevel(uint32 NativeLevel);

private:
	static FNetSyncModule* Get();

	void* LibraryHandle = nullptr;
	bool bLibraryReady = false;
	FString LoadError;
};
