// Makes its actor a synced entity: this client sends its transform while it
// simulates the actor (a Controlled actor it controls, a Neutral object
// whose send right it holds) and applies the network's transform otherwise.
// Hits on the actor's root primitive claim neutral objects.

#pragma once

#include "CoreMinimal.h"
#include "Components/ActorComponent.h"
#include "NetSyncThirdParty.h"
#include "NetSyncTypes.h"
#include "NetSyncComponent.generated.h"

class UNetSyncSubsystem;
class UPrimitiveComponent;
struct FHitResult;

DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FNetSyncSimulatedHereChangedSignature, bool, bSimulatedHere);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FNetSyncComponentRemovedSignature, ENetSyncRemovalReason, Reason);

UCLASS(ClassGroup = (NetSync), meta = (BlueprintSpawnableComponent, DisplayName = "NetSync Entity"))
class NETSYNC_API UNetSyncComponent : public UActorComponent
{
	GENERATED_BODY()

	friend class UNetSyncSubsystem;

public:
	UNetSyncComponent();

	/** The entity's id, the same on every machine. 0: derived from the actor's path in its level (level-placed actors only; spawned actors need an explicit id, e.g. from Entity Id From Name). */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync", meta = (ExposeOnSpawn = true))
	int64 EntityId = 0;

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync", meta = (ExposeOnSpawn = true))
	ENetSyncEntityKind Kind = ENetSyncEntityKind::Controlled;

	/** Controlled actors: who simulates it. Set Remote on actors spawned to show other players' entities (On Entity Appeared). */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync", meta = (ExposeOnSpawn = true, EditCondition = "Kind == ENetSyncEntityKind::Controlled"))
	ENetSyncAuthority Authority = ENetSyncAuthority::Auto;

	/** Use this actor's own send thresholds instead of the project's (Project Settings > NetSync > Sending). */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Sending")
	bool bOverrideSendThresholds = false;

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Sending", meta = (EditCondition = "bOverrideSendThresholds", ClampMin = "0", Units = "cm"))
	float PositionThreshold = 1.0f;

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Sending", meta = (EditCondition = "bOverrideSendThresholds", ClampMin = "0", ClampMax = "180", Units = "deg"))
	float AngleThreshold = 1.0f;

	/** Send at least this often while simulated here. */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Sending", meta = (EditCondition = "bOverrideSendThresholds", ClampMin = "0.05", Units = "s"))
	float Heartbeat = 1.0f;

	/** Claim neutral objects on hit: this actor (controlled here) hitting one, or one being hit by an actor controlled here. Needs hit events on the root primitive ("Simulation Generates Hit Events" for physics bodies; set on Begin Play). */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Send Rights")
	bool bClaimOnHit = true;

	/** Neutral and server-owned objects: simulate physics on the root primitive while this game instance simulates the object (holds its send right; runs the relay), and move it kinematically from the network otherwise. */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Send Rights")
	bool bSimulatePhysicsWhenHeld = true;

	/** Neutral objects: give the send right back to nobody once the object lies still. */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Send Rights")
	bool bReportAtRest = true;

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Send Rights", meta = (EditCondition = "bReportAtRest", ClampMin = "0", Units = "cm/s"))
	float RestSpeed = 5.0f;

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Send Rights", meta = (EditCondition = "bReportAtRest", ClampMin = "0", Units = "deg/s"))
	float RestAngularSpeed = 5.0f;

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync|Send Rights", meta = (EditCondition = "bReportAtRest", ClampMin = "0", Units = "s"))
	float RestTime = 0.5f;

	/** Destroy the actor when the network removes its entity (its owner left or unregistered it). */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "NetSync")
	bool bDestroyOwnerWhenRemoved = false;

	/** This client started (true) or stopped (false) simulating the actor: its send right moved, or a Controlled actor's authority was resolved. */
	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncSimulatedHereChangedSignature OnSimulatedHereChanged;

	/** The network removed the entity. */
	UPROPERTY(BlueprintAssignable, Category = "NetSync")
	FNetSyncComponentRemovedSignature OnEntityRemoved;

	/** True while this client simulates the actor and sends its state; false while it shows the network's. */
	UFUNCTION(BlueprintPure, Category = "NetSync")
	bool IsSimulatedHere() const { return bSimulatedHere; }

	/** The id in use (EntityId, or the one derived from the actor's path); 0 before Begin Play. */
	UFUNCTION(BlueprintPure, Category = "NetSync")
	int64 GetNetEntityId() const { return static_cast<int64>(ResolvedId); }

	/** Claims this neutral object for an actor this client controls (as a hit would). */
	UFUNCTION(BlueprintCallable, Category = "NetSync")
	bool ClaimFor(UNetSyncComponent* Mine);

	virtual void BeginPlay() override;
	virtual void EndPlay(const EEndPlayReason::Type EndPlayReason) override;

private:
	UFUNCTION()
	void HandleHit(UPrimitiveComponent* HitComponent, AActor* OtherActor, UPrimitiveComponent* OtherComp, FVector NormalImpulse, const FHitResult& Hit);

	// --- called by UNetSyncSubsystem ---

	/** Controlled + Auto: whether this client controls it; unset while it cannot tell yet (a pawn not possessed yet). */
	TOptional<bool> ResolveLocalControl(const UNetSyncSubsystem& SyncSubsystem) const;

	/** The state to send: location, rotation and velocities of the actor, in the core's frame. */
	NetsyncSample CaptureState(const netsync::unreal::Frame& Frame) const;

	/** Whether the state captured at Now is worth sending under this actor's own thresholds (always true without an override). */
	bool ShouldSend(double Now, const NetsyncSample& State, const netsync::unreal::Frame& Frame);

	/** True once when a held neutral object has been still for RestTime. */
	bool UpdateRest(double Now, const NetsyncSample& State);

	void ApplyNetworkPose(const netsync::unreal::Pose& Pose, double Now);
	/** Starts or stops simulating here (physics of neutral objects follows); bForce applies it even when unchanged. */
	void SetSimulatedHere(bool bSimulated, bool bForce = false);
	void NotifyRemoved(ENetSyncRemovalReason Reason);
	UPrimitiveComponent* GetRootPrimitive() const;
	/** Part of its level (the same actor exists on every machine), as opposed to spawned at run time. */
	bool IsPlacedInLevel() const;

	uint64 ResolvedId = 0;
	bool bRegistered = false;
	bool bSimulatedHere = false;
	/** Controlled + Auto still waiting for the pawn to be possessed. */
	bool bAuthorityPending = false;

	// Velocity of the pose shown from the network, so that a client taking
	// over a moving object (a claim) keeps its momentum: the C ABI's
	// transforms carry no velocity.
	FVector LastNetworkLocation = FVector::ZeroVector;
	double LastNetworkTime = -1.0;
	FVector NetworkVelocity = FVector::ZeroVector;

	netsync::SendFilter OwnFilter;
	netsync::RestDetector Rest;
	bool bRestReported = false;

	UPROPERTY(Transient)
	TObjectPtr<UNetSyncSubsystem> Subsystem;
};
