// Project Settings > Plugins > NetSync (saved to Config/DefaultGame.ini).

#pragma once

#include "CoreMinimal.h"
#include "Engine/DeveloperSettings.h"
#include "NetSyncTypes.h"
#include "NetSyncSettings.generated.h"

UCLASS(Config = Game, DefaultConfig, meta = (DisplayName = "NetSync"))
class NETSYNC_API UNetSyncSettings : public UDeveloperSettings
{
	GENERATED_BODY()

public:
	UNetSyncSettings(const FObjectInitializer& ObjectInitializer);

	// --- Connection ---------------------------------------------------------

	/** Connect when the game instance starts (to the relay started here when Start Relay On Start is set, else to Relay Address). */
	UPROPERTY(Config, EditAnywhere, Category = "Connection")
	bool bConnectOnStart = false;

	/** Numeric "IP:port" of the relay ("127.0.0.1:7777", "[::1]:7777"). Resolve host names before calling Connect: the library never blocks on DNS. */
	UPROPERTY(Config, EditAnywhere, Category = "Connection")
	FString RelayAddress = TEXT("127.0.0.1:7777");

	/** One connection attempt gives up after this long. */
	UPROPERTY(Config, EditAnywhere, Category = "Connection", meta = (ClampMin = "0.5", ClampMax = "120", Units = "s"))
	float ConnectTimeout = 5.0f;

	/** The relay counts as gone after this much silence. */
	UPROPERTY(Config, EditAnywhere, Category = "Connection", meta = (ClampMin = "0.5", ClampMax = "600", Units = "s"))
	float IdleTimeout = 5.0f;

	/** Reconnect after losing the relay. */
	UPROPERTY(Config, EditAnywhere, Category = "Connection")
	bool bReconnect = true;

	// --- Relay (host or dedicated server) ------------------------------------

	/** Run a relay inside this game instance (a host or a dedicated server). Others connect to this machine's address and Relay Port. */
	UPROPERTY(Config, EditAnywhere, Category = "Relay")
	bool bStartRelayOnStart = false;

	UPROPERTY(Config, EditAnywhere, Category = "Relay", meta = (ClampMin = "0", ClampMax = "65535"))
	int32 RelayPort = 7777;

	/** "0.0.0.0" (every IPv4 interface), "127.0.0.1" (this machine only) or "::". */
	UPROPERTY(Config, EditAnywhere, Category = "Relay")
	FString RelayBindAddress = TEXT("0.0.0.0");

	/** The first client to register a neutral object holds it; off: nobody does until someone hits it. */
	UPROPERTY(Config, EditAnywhere, Category = "Relay")
	bool bFirstRegistrantHoldsNeutral = true;

	/** Claims on an object are refused this long after it changed hands. */
	UPROPERTY(Config, EditAnywhere, Category = "Relay", meta = (ClampMin = "0", ClampMax = "60", Units = "s"))
	float ClaimCooldown = 0.3f;

	/** A held neutral object whose holder sends no movement this long goes back to nobody (0: never). */
	UPROPERTY(Config, EditAnywhere, Category = "Relay", meta = (ClampMin = "0", ClampMax = "3600", Units = "s"))
	float RestTimeout = 2.0f;

	// --- Sending --------------------------------------------------------------

	/** Owned-state sends per second. */
	UPROPERTY(Config, EditAnywhere, Category = "Sending", meta = (ClampMin = "0.5", ClampMax = "240"))
	float SendRate = 30.0f;

	/** A simulated actor's state is sent when the receivers' dead reckoning would be this far off. Components may override it. */
	UPROPERTY(Config, EditAnywhere, Category = "Sending", meta = (ClampMin = "0", Units = "cm"))
	float PositionThreshold = 1.0f;

	UPROPERTY(Config, EditAnywhere, Category = "Sending", meta = (ClampMin = "0", ClampMax = "180", Units = "deg"))
	float AngleThreshold = 1.0f;

	/** Send at least this often, even when nothing changed. */
	UPROPERTY(Config, EditAnywhere, Category = "Sending", meta = (ClampMin = "0.05", Units = "s"))
	float Heartbeat = 1.0f;

	// --- Display ------------------------------------------------------------------

	UPROPERTY(Config, EditAnywhere, Category = "Display")
	ENetSyncInterpolationMode InterpolationMode = ENetSyncInterpolationMode::Adaptive;

	// --- Testing and logging ------------------------------------------------------

	/** Put this client's traffic through a simulated network (latency, jitter, loss). Development only. */
	UPROPERTY(Config, EditAnywhere, Category = "Testing")
	ENetSyncSimulatedNetwork SimulatedNetwork = ENetSyncSimulatedNetwork::None;

	/** Most verbose netsync (and laminar) log records passed to LogNetSync. */
	UPROPERTY(Config, EditAnywhere, Category = "Logging")
	ENetSyncLogLevel LogLevel = ENetSyncLogLevel::Warning;
};
