// Blueprint-visible enums and structs of the NetSync plugin, and their
// mapping from the library's codes.

#pragma once

#include "CoreMinimal.h"
#include "NetSyncTypes.generated.h"

/** Send-right kind of a synced actor. */
UENUM(BlueprintType)
enum class ENetSyncEntityKind : uint8
{
	/** One client's for good (a player's car or character). */
	Controlled,
	/** Shared physics object: simulated by whoever holds its send right (the first to register it, then whoever hits it). */
	Neutral,
	/** Moved only by the server: simulated where the relay runs (a host or dedicated server started it with Start Relay), shown everywhere else. */
	ServerOwned,
};

/** Who simulates a Controlled actor. */
UENUM(BlueprintType)
enum class ENetSyncAuthority : uint8
{
	/** Pawns: this client when locally controlled. Other actors: this client when spawned here and not already known as remote; level-placed actors are remote. */
	Auto,
	/** This client controls and sends it. */
	Local,
	/** Another client does; this one shows it. */
	Remote,
};

UENUM(BlueprintType)
enum class ENetSyncConnectionState : uint8
{
	/** No client: Connect was not called, or Disconnect was. */
	NotStarted,
	Connecting,
	Connected,
	/** Lost the relay; reconnecting unless turned off in the settings. */
	Disconnected,
};

UENUM(BlueprintType)
enum class ENetSyncDisconnectReason : uint8
{
	None,
	ConnectTimeout,
	RelayTimeout,
	/** The relay speaks another protocol version. */
	VersionMismatch,
	RelayFull,
	Closed,
	/** The relay runs in secure mode: connect with a connect token. */
	TokenRequired,
	/** A connect token was presented to a relay in plain mode. */
	NotSecure,
	/** The connect token expired: get a new one from the game's backend. */
	TokenExpired,
	/** The connect token (or its client id) is in use by another connection. */
	TokenInUse,
	Unknown,
};

UENUM(BlueprintType)
enum class ENetSyncRemovalReason : uint8
{
	/** Its owner unregistered it. */
	Unregistered,
	/** Its owner left. */
	OwnerLeft,
	/** It left this client's interest; it comes back with full state when it re-enters. */
	OutOfInterest,
	/** Not heard of again after a reconnect. */
	Stale,
	Unknown,
};

UENUM(BlueprintType)
enum class ENetSyncClaimRefusal : uint8
{
	UnknownEntity,
	/** Registered with another kind or controller. */
	Conflict,
	NotNeutral,
	/** The hitting actor is not this client's. */
	NotYourController,
	/** The object changed hands too recently. */
	Cooldown,
	AlreadyHolder,
	NotHolder,
	/** The object changed hands after the hit the claim reported. */
	Stale,
	Unknown,
};

/** How remote actors are shown (see the netsync docs, sync-core). */
UENUM(BlueprintType)
enum class ENetSyncInterpolationMode : uint8
{
	Literal,
	Adaptive,
	Fixed,
	Buffered,
	Predicted,
};

/** Simulated networks for trying a game on a bad connection. */
UENUM(BlueprintType)
enum class ENetSyncSimulatedNetwork : uint8
{
	None,
	Lan,
	Good,
	Average,
	Poor,
	Spiky,
	Hostile,
};

UENUM(BlueprintType)
enum class ENetSyncLogLevel : uint8
{
	Off,
	Error,
	Warning,
	Info,
	Debug,
	Trace,
};

UENUM(BlueprintType)
enum class ENetSyncMessageKind : uint8
{
	/** A global command: every client gets it, in the same order. */
	GlobalCommand,
	/** A command for a component of an actor this client holds. */
	ComponentCommand,
	/** The latest state of a synced component of a remote actor. */
	ComponentState,
	Unknown,
};

/** A received command or component state. */
USTRUCT(BlueprintType)
struct NETSYNC_API FNetSyncMessage
{
	GENERATED_BODY()

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	ENetSyncMessageKind Kind = ENetSyncMessageKind::Unknown;

	/** Client id of the sender; 0: the server (and component states). */
	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	int32 Sender = 0;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	int64 EntityId = 0;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	int32 ComponentId = 0;

	/** Global commands: the relay's number; component states: their version. */
	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	int64 Sequence = 0;

	/** Server time (s) at which the relay handled it. */
	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	double ServerTime = 0.0;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	TArray<uint8> Payload;
};

/** Connection figures for a HUD or a log. */
USTRUCT(BlueprintType)
struct NETSYNC_API FNetSyncStats
{
	GENERATED_BODY()

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	ENetSyncConnectionState State = ENetSyncConnectionState::NotStarted;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	int32 ClientId = 0;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync", meta = (Units = "ms"))
	float RoundTripMs = 0.0f;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync", meta = (Units = "ms"))
	float JitterMs = 0.0f;

	/** Share of recent clock probes lost on the round trip (0..1). */
	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	float Loss = 0.0f;

	/** How far behind the freshest data remote actors are shown. */
	UPROPERTY(BlueprintReadOnly, Category = "NetSync", meta = (Units = "ms"))
	float RenderDelayMs = 0.0f;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	int32 RemoteEntities = 0;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	float BytesPerSecondUp = 0.0f;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	float BytesPerSecondDown = 0.0f;

	UPROPERTY(BlueprintReadOnly, Category = "NetSync")
	int32 Reconnects = 0;
};

/** The library's codes as the plugin's enums (NetSyncTypes.cpp). */
namespace NetSync
{
	NETSYNC_API ENetSyncConnectionState ConnectionStateFromNative(uint32 State);
	NETSYNC_API ENetSyncDisconnectReason DisconnectReasonFromNative(uint32 Reason);
	NETSYNC_API ENetSyncRemovalReason RemovalReasonFromNative(uint32 Reason);
	NETSYNC_API ENetSyncClaimRefusal ClaimRefusalFromNative(uint32 Reason);
	NETSYNC_API ENetSyncMessageKind MessageKindFromNative(uint32 Kind);
	NETSYNC_API uint32 KindToNative(ENetSyncEntityKind Kind);
	NETSYNC_API uint32 InterpolationModeToNative(ENetSyncInterpolationMode Mode);
	NETSYNC_API uint32 SimulatedNetworkToNative(ENetSyncSimulatedNetwork Network);
	NETSYNC_API uint32 LogLevelToNative(ENetSyncLogLevel Level);
}
