// Owns this game instance's netsync client (and, on a host, its relay) and
// ticks it once a frame: sends the state of what this client simulates,
// applies the network's transforms to synced actors, and turns the
// library's events into Blueprint events.

#pragma once

#include "CoreMinimal.h"
#include "Subsystems/GameInstanceSubsystem.h"
#include "Tickable.h"
#include "NetSyncThirdParty.h"
#include "NetSyncTypes.h"
#include "NetSyncSubsystem.generated.h"

class UNetSyncComponent;

DECLARE_DYNAMIC_MULTICAST_DELEGATE_TwoParams(FNetSyncConnectedSignature, int32, ClientId, bool, bReconnected);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FNetSyncDisconnectedSignature, ENetSyncDisconnectReason, Reason);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FNetSyncEntitySignature, int64, EntityId);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_TwoParams(FNetSyncEntityRemovedSignature, int64, EntityId, ENetSyncRemovalReason, Reason);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_TwoParams(FNetSyncClaimRefusedSignature, int64, EntityId, ENetSyncClaimRefusal, Reason);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FNetSyncMessageSignature, const FNetSyncMessage&, Message);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FNetSyncRelayClientSignature, int32, ClientId);

UCLASS()
class NETSYNC_API UNetSyncSubsystem : public UGameInstanceSubsystem, public FTickableGameObject
{
	GENERATED_BODY()

public:
	// --- Blueprint API ---------------------------------------------------------

	/** Starts connecting to the relay at a numeric "IP:port" and returns at once (On Connected follows). False, with Get Last Error, when the address or settings are refused. */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool Connect(const FString& Address);

	/** As Connect, to a relay in secure mode, with a connect token from the game's backend (NETSYNC_TOKEN_SIZE bytes; see docs/security.md). Address empty: the relay the token names. Refusals (token expired or in use, relay not secure) arrive through On Disconnected. */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool ConnectSecure(const TArray<uint8>& Token, const FString& Address = TEXT(""));

	/** Leaves the relay and stops the client's network thread. */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	void Disconnect();

	/** Runs a relay in this game instance (host or dedicated server) on Port (0: any free port; read it with Get Relay Port). */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool StartRelay(int32 Port = 7777, const FString& BindAddress = TEXT("0.0.0.0"));

	UFUNCTION(BlueprintCallable, Category = "NetSync")
	void StopRelay();

	UFUNCTION(BlueprintPure, Category = "NetSync")
	bool IsRelayRunning() const;

	/** From the relay running here: a global command to every client (sender 0), in the one order every client sees. */
	UFUNCTION(BlueprintCallable, Category = "NetSync|Relay")
	bool RelaySendGlobalCommand(const TArray<uint8>& Payload);

	/** The port the relay started here listens on; 0 when none runs. */
	UFUNCTION(BlueprintPure, Category = "NetSync")
	int32 GetRelayPort() const;

	UFUNCTION(BlueprintPure, Category = "NetSync")
	ENetSyncConnectionState GetConnectionState() const;

	UFUNCTION(BlueprintPure, Category = "NetSync")
	bool IsConnected() const;

	/** The id the relay gave this client (0 before the first connection). */
	UFUNCTION(BlueprintPure, Category = "NetSync")
	int32 GetClientId() const { return ClientId; }

	UFUNCTION(BlueprintPure, Category = "NetSync")
	FNetSyncStats GetStats() const;

	/** True while this client holds the send right of the entity (controls it, or holds or claims a neutral object): it simulates it. */
	UFUNCTION(BlueprintPure, Category = "NetSync")
	bool HoldsSendRight(int64 EntityId) const;

	/** My entity (controlled here) hit the neutral object Other: claims its send right (On Send Right Gained or On Claim Refused follows). */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool ReportCollision(int64 MyEntityId, int64 OtherEntityId);

	/** A neutral object this client holds lies still: its send right goes back to nobody. */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool ReportAtRest(int64 EntityId);

	/** Sends a global command: reliably, once, to every client (this one too) in the same order. */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool SendGlobalCommand(const TArray<uint8>& Payload);

	/** Sends a command for component ComponentId of an entity to whoever holds it (the component must be registered synced here). */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool SendComponentCommand(int64 EntityId, int32 ComponentId, const TArray<uint8>& Payload);

	/** Declares component ComponentId of an entity: synced components' states and commands travel. */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool RegisterSyncedComponent(int64 EntityId, int32 ComponentId, bool bSynced = true);

	/** The latest state of a synced component of an entity this client holds (sent reliably when it changes). */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool SetComponentState(int64 EntityId, int32 ComponentId, const TArray<uint8>& State);

	/** The last failure's code and message from the library (or the plugin). */
	UFUNCTION(BlueprintPure, Category = "NetSync")
	FString GetLastError() const { return LastError; }

	/** A stable entity id from a name that is the same on every machine (FNV-1a 64 of its UTF-8 bytes; never 0). */
	UFUNCTION(BlueprintPure, Category = "NetSync")
	static int64 EntityIdFromName(const FString& Name);

	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncConnectedSignature OnConnected;

	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncDisconnectedSignature OnDisconnected;

	/** A remote entity appeared; spawn an actor for it if none exists (with a NetSync component, this Entity Id and Authority Remote). */
	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncEntitySignature OnEntityAppeared;

	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncEntityRemovedSignature OnEntityRemoved;

	/** This client now holds the entity's send right: it simulates it. */
	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncEntitySignature OnSendRightGained;

	/** Another client (or nobody) holds it now: this client shows it. */
	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncEntitySignature OnSendRightLost;

	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncClaimRefusedSignature OnClaimRefused;

	/** A global command, a component command for an entity held here, or a remote component's state. */
	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncMessageSignature OnMessage;

	/** The relay running here admitted a client. */
	UPROPERTY(BlueprintAssignable, Category = "NetSync|Relay")
	FNetSyncRelayClientSignature OnRelayClientJoined;

	/** A client left the relay running here (or timed out). */
	UPROPERTY(BlueprintAssignable, Category = "NetSync|Relay")
	FNetSyncRelayClientSignature OnRelayClientLeft;

	/** A message for the relay running here: every global command, and component commands for server-owned or unheld entities. */
	UPROPERTY(BlueprintAssignable, Category = "NetSync|Relay")
	FNetSyncMessageSignature OnRelayMessage;

	// --- C++ API -------------------------------------------------------------------

	/** The client, for calls the Blueprint API leaves out (empty while not connected). Core units: metres, the frame of GetFrame(). */
	netsync::Client& GetClient() { return Client; }

	/** The relay started here (empty when none runs): its embedded-server calls move server-owned entities. */
	netsync::Server& GetRelay() { return Relay; }

	/** Unreal world <-> netsync conversion in use: the world's scale (the axes are fixed, netsync_unreal_convert.hpp). */
	const netsync::unreal::Frame& GetFrame() const { return Frame; }

	/** True when the entity has been shown from the network (it is someone else's). */
	bool IsKnownRemote(uint64 EntityId) const { return KnownRemote.Contains(EntityId); }

	/** A contact between two synced actors: claims the neutral one when the other is controlled here. True when a claim went out. */
	bool HandleContact(UNetSyncComponent* A, UNetSyncComponent* B);

	void AddSyncedComponent(UNetSyncComponent* Component);
	void RemoveSyncedComponent(UNetSyncComponent* Component);

	// --- USubsystem ----------------------------------------------------------------

	virtual bool ShouldCreateSubsystem(UObject* Outer) const override;
	virtual void Initialize(FSubsystemCollectionBase& Collection) override;
	virtual void Deinitialize() override;

	// --- FTickableGameObject ---------------------------------------------------

	virtual void Tick(float DeltaTime) override;
	virtual TStatId GetStatId() const override;
	virtual ETickableTickType GetTickableTickType() const override;
	virtual bool IsTickable() const override;
	virtual bool IsTickableWhenPaused() const override { return true; } // keep the connection alive
	virtual bool IsTickableInEditor() const override { return false; }
	virtual UWorld* GetTickableGameObjectWorld() const override;

private:
	/** Connect and ConnectSecure: Token null for plain mode. */
	bool ConnectWith(const FString& Address, const TArray<uint8>* Token);
	/** Registers a component's entity with the client, by kind and authority. */
	void RegisterWithClient(UNetSyncComponent& Component);
	void SendOwnedStates(double Now);
	void ApplyTransforms(double Now);
	void DispatchEvents();
	void DispatchMessages();
	void DispatchRelayEvents();
	/** Server-owned actors are simulated where the relay runs. */
	void RefreshServerOwned();
	void RefreshSimulatedHere(uint64 EntityId);
	UNetSyncComponent* FindComponent(uint64 EntityId) const;
	static FNetSyncMessage ToBlueprint(const netsync::MessageView& View);
	void UpdateFrame();
	bool Fail(const netsync::Error& Failure);
	bool Fail(const FString& Message);

	netsync::Client Client;
	netsync::Server Relay;
	netsync::unreal::Frame Frame;

	/** Synced actors by entity id. */
	TMap<uint64, TWeakObjectPtr<UNetSyncComponent>> Components;
	/** Entities shown from the network (appeared and not removed). */
	TSet<uint64> KnownRemote;

	int32 ClientId = 0;
	bool bInitialized = false;
	FString LastError;
};
