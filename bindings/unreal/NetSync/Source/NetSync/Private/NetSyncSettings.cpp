#include "NetSyncSettings.h"

UNetSyncSettings::UNetSyncSettings(const FObjectInitializer& ObjectInitializer)
	: Super(ObjectInitializer)
{
	// Project Settings > Plugins > NetSync.
	CategoryName = TEXT("Plugins");
	SectionName = TEXT("NetSync");
}
