#include "NetSyncModule.h"

#include "HAL/PlatformProcess.h"
#include "Interfaces/IPluginManager.h"
#include "Misc/Paths.h"
#include "Modules/ModuleManager.h"
#include "NetSyncThirdParty.h"

#include <string>

DEFINE_LOG_CATEGORY(LogNetSync);

namespace
{
	// Where Scripts/build-native.sh puts the library, relative to the
	// plugin's folder; NetSyncLibrary.Build.cs stages the same file with
	// packaged builds, so the path holds there too.
#if PLATFORM_WINDOWS
	const TCHAR* const LibraryRelativePath = TEXT("Binaries/ThirdParty/NetSyncLibrary/Win64/netsync.dll");
#elif PLATFORM_MAC
	const TCHAR* const LibraryRelativePath = TEXT("Binaries/ThirdParty/NetSyncLibrary/Mac/libnetsync.dylib");
#elif PLATFORM_LINUX && PLATFORM_CPU_ARM_FAMILY
	const TCHAR* const LibraryRelativePath = TEXT("Binaries/ThirdParty/NetSyncLibrary/LinuxArm64/libnetsync.so");
#elif PLATFORM_LINUX
	const TCHAR* const LibraryRelativePath = TEXT("Binaries/ThirdParty/NetSyncLibrary/Linux/libnetsync.so");
#else
	const TCHAR* const LibraryRelativePath = nullptr;
#endif

	FString ToFString(std::string_view Text)
	{
		const std::string Terminated(Text);
		return FString(UTF8_TO_TCHAR(Terminated.c_str()));
	}

	// Called from any netsync thread (UE_LOG is thread-safe); must not throw.
	void ForwardLog(netsync::LogLevel Level, std::string_view Target, std::string_view Message)
	{
		const FString Where = ToFString(Target);
		const FString What = ToFString(Message);
		switch (Level)
		{
		case netsync::LogLevel::Error:
			UE_LOG(LogNetSync, Error, TEXT("%s: %s"), *Where, *What);
			break;
		case netsync::LogLevel::Warn:
			UE_LOG(LogNetSync, Warning, TEXT("%s: %s"), *Where, *What);
			break;
		case netsync::LogLevel::Info:
			UE_LOG(LogNetSync, Log, TEXT("%s: %s"), *Where, *What);
			break;
		case netsync::LogLevel::Debug:
			UE_LOG(LogNetSync, Verbose, TEXT("%s: %s"), *Where, *What);
			break;
		default:
			UE_LOG(LogNetSync, VeryVerbose, TEXT("%s: %s"), *Where, *What);
			break;
		}
	}
}

void FNetSyncModule::StartupModule()
{
	const TSharedPtr<IPlugin> Plugin = IPluginManager::Get().FindPlugin(TEXT("NetSync"));
	if (!Plugin.IsValid() || LibraryRelativePath == nullptr)
	{
		LoadError = TEXT("NetSync: no native library for this platform");
		UE_LOG(LogNetSync, Error, TEXT("%s"), *LoadError);
		return;
	}
	const FString LibraryPath = FPaths::ConvertRelativePathToFull(FPaths::Combine(Plugin->GetBaseDir(), LibraryRelativePath));
	LibraryHandle = FPlatformProcess::GetDllHandle(*LibraryPath);
	if (LibraryHandle == nullptr)
	{
		LoadError = FString::Printf(TEXT("NetSync: cannot load %s; build it with the plugin's Scripts/build-native.sh (README.md)"), *LibraryPath);
		UE_LOG(LogNetSync, Error, TEXT("%s"), *LoadError);
		return;
	}

	// Refuse a library the headers do not describe before calling anything else.
	const netsync::AbiVersion Library = netsync::library_abi_version();
	const netsync::AbiVersion Header = netsync::header_abi_version();
	if (!netsync::abi_compatible(Library, Header))
	{
		LoadError = FString::Printf(TEXT("NetSync: %s has ABI %u.%u but the plugin was built for %u.%u; rebuild the library and the plugin from one netsync version"),
			*LibraryPath, Library.major, Library.minor, Header.major, Header.minor);
		UE_LOG(LogNetSync, Error, TEXT("%s"), *LoadError);
		FPlatformProcess::FreeDllHandle(LibraryHandle);
		LibraryHandle = nullptr;
		return;
	}

	bLibraryReady = true;
	SetLogLevel(NETSYNC_LOG_WARN);
	UE_LOG(LogNetSync, Log, TEXT("NetSync: loaded %s (ABI %u.%u)"), *LibraryPath, Library.major, Library.minor);
}

void FNetSyncModule::ShutdownModule()
{
	if (bLibraryReady)
	{
		// No log call reaches us once this returns: safe to unload.
		const netsync::Status Cleared = netsync::try_clear_log_handler();
		if (!Cleared.ok())
		{
			UE_LOG(LogNetSync, Warning, TEXT("NetSync: clearing the log handler: %s"), UTF8_TO_TCHAR(Cleared.error().what()));
		}
		bLibraryReady = false;
	}
	if (LibraryHandle != nullptr)
	{
		FPlatformProcess::FreeDllHandle(LibraryHandle);
		LibraryHandle = nullptr;
	}
}

FNetSyncModule* FNetSyncModule::Get()
{
	return FModuleManager::GetModulePtr<FNetSyncModule>(TEXT("NetSync"));
}

bool FNetSyncModule::IsLibraryReady()
{
	const FNetSyncModule* Module = Get();
	return Module != nullptr && Module->bLibraryReady;
}

FString FNetSyncModule::GetLoadError()
{
	const FNetSyncModule* Module = Get();
	return Module != nullptr ? Module->LoadError : FString(TEXT("NetSync: the module is not loaded"));
}

void FNetSyncModule::SetLogLevel(uint32 NativeLevel)
{
	if (!IsLibraryReady())
	{
		return;
	}
	netsync::Status Outcome = NativeLevel == NETSYNC_LOG_OFF
		? netsync::try_clear_log_handler()
		: netsync::try_set_log_handler(&ForwardLog, static_cast<netsync::LogLevel>(NativeLevel));
	if (!Outcome.ok())
	{
		UE_LOG(LogNetSync, Warning, TEXT("NetSync: setting the log level: %s"), UTF8_TO_TCHAR(Outcome.error().what()));
	}
}

IMPLEMENT_MODULE(FNetSyncModule, NetSync)
