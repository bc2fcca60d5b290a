#include "NetSyncComponent.h"

#include "Components/PrimitiveComponent.h"
#include "Engine/GameInstance.h"
#include "Engine/World.h"
#include "GameFramework/Actor.h"
#include "GameFramework/Pawn.h"
#include "NetSyncModule.h"
#include "NetSyncSubsystem.h"

namespace
{
	namespace ue = netsync::unreal;
}

UNetSyncComponent::UNetSyncComponent()
{
	// The subsystem drives every synced actor once a frame, in one pass.
	PrimaryComponentTick.bCanEverTick = false;
	bAutoActivate = true;
}

void UNetSyncComponent::BeginPlay()
{
	Super::BeginPlay();

	AActor* Owner = GetOwner();
	const UGameInstance* GameInstance = GetWorld() != nullptr ? GetWorld()->GetGameInstance() : nullptr;
	Subsystem = GameInstance != nullptr ? GameInstance->GetSubsystem<UNetSyncSubsystem>() : nullptr;
	if (Owner == nullptr || Subsystem == nullptr)
	{
		UE_LOG(LogNetSync, Warning, TEXT("NetSync: %s is not synced (no game instance subsystem; is the library loaded?)"), *GetPathName());
		return;
	}

	if (EntityId != 0)
	{
		ResolvedId = static_cast<uint64>(EntityId);
	}
	else if (IsPlacedInLevel())
	{
		// The same level actor has the same path on every machine once the
		// editor's PIE prefix (UEDPIE_<n>_) is removed.
		const FString Path = UWorld::RemovePIEPrefix(Owner->GetPathName());
		const FTCHARToUTF8 Utf8(*Path);
		ResolvedId = ue::entity_id_from_name(std::string_view(reinterpret_cast<const char*>(Utf8.Get()), static_cast<size_t>(Utf8.Length())));
	}
	else
	{
		UE_LOG(LogNetSync, Warning, TEXT("NetSync: %s was spawned without an Entity Id; it is not synced (set Entity Id, the same on every machine, before Begin Play)"), *Owner->GetName());
		return;
	}

	if (bClaimOnHit)
	{
		if (UPrimitiveComponent* Root = GetRootPrimitive())
		{
			Root->SetNotifyRigidBodyCollision(true);
			Root->OnComponentHit.AddDynamic(this, &UNetSyncComponent::HandleHit);
		}
	}

	Subsystem->AddSyncedComponent(this);
}

void UNetSyncComponent::EndPlay(const EEndPlayReason::Type EndPlayReason)
{
	if (UPrimitiveComponent* Root = GetRootPrimitive())
	{
		Root->OnComponentHit.RemoveDynamic(this, &UNetSyncComponent::HandleHit);
	}
	if (Subsystem != nullptr)
	{
		Subsystem->RemoveSyncedComponent(this);
	}
	Subsystem = nullptr;
	Super::EndPlay(EndPlayReason);
}

UPrimitiveComponent* UNetSyncComponent::GetRootPrimitive() const
{
	const AActor* Owner = GetOwner();
	return Owner != nullptr ? Cast<UPrimitiveComponent>(Owner->GetRootComponent()) : nullptr;
}

void UNetSyncComponent::HandleHit(UPrimitiveComponent* /*HitComponent*/, AActor* OtherActor, UPrimitiveComponent* /*OtherComp*/, FVector /*NormalImpulse*/, const FHitResult& /*Hit*/)
{
	if (Subsystem == nullptr || OtherActor == nullptr || OtherActor == GetOwner())
	{
		return;
	}
	if (UNetSyncComponent* Other = OtherActor->FindComponentByClass<UNetSyncComponent>())
	{
		Subsystem->HandleContact(this, Other);
	}
}

bool UNetSyncComponent::ClaimFor(UNetSyncComponent* Mine)
{
	return Subsystem != nullptr && Mine != nullptr && Subsystem->HandleContact(Mine, this);
}

TOptional<bool> UNetSyncComponent::ResolveLocalControl(const UNetSyncSubsystem& SyncSubsystem) const
{
	switch (Authority)
	{
	case ENetSyncAuthority::Local:
		return true;
	case ENetSyncAuthority::Remote:
		return false;
	default:
		break;
	}
	// Already shown from the network: someone else's (an actor spawned for
	// On Entity Appeared keeps Auto and still comes out remote).
	if (SyncSubsystem.IsKnownRemote(ResolvedId))
	{
		return false;
	}
	const AActor* Actor = GetOwner();
	if (const APawn* Pawn = Cast<APawn>(Actor))
	{
		if (Pawn->GetController() == nullptr)
		{
			return TOptional<bool>(); // not possessed yet: ask again next frame
		}
		return Pawn->IsLocallyControlled();
	}
	// Spawned here: ours. Placed in the level: on every machine, so nobody's
	// in particular (make such actors Neutral, or set Authority).
	return Actor != nullptr && !IsPlacedInLevel();
}

bool UNetSyncComponent::IsPlacedInLevel() const
{
	// Loaded with its level (a packaged game, a streamed level) or, in PIE,
	// duplicated from the editor's level: both are "net startup" actors.
	const AActor* Actor = GetOwner();
	return Actor != nullptr && (Actor->IsNetStartupActor() || Actor->HasAnyFlags(RF_WasLoaded));
}

NetsyncSample UNetSyncComponent::CaptureState(const ue::Frame& Frame) const
{
	const AActor* Owner = GetOwner();
	FVector AngularVelocity = FVector::ZeroVector;
	const UPrimitiveComponent* Root = GetRootPrimitive();
	if (Root != nullptr && Root->IsSimulatingPhysics())
	{
		AngularVelocity = Root->GetPhysicsAngularVelocityInRadians();
	}
	// GetVelocity: the physics body's, or the movement component's.
	return ue::sample_to_core(ResolvedId, Owner->GetActorLocation(), Owner->GetActorQuat(), Owner->GetVelocity(), AngularVelocity, Frame);
}

bool UNetSyncComponent::ShouldSend(double Now, const NetsyncSample& State, const ue::Frame& Frame)
{
	if (!bOverrideSendThresholds)
	{
		return true; // the client's own filter (project thresholds) decides
	}
	if (!OwnFilter)
	{
		// This actor's thresholds, in the core's units. The client's filter
		// (project thresholds) still runs on what passes here.
		NetsyncSendFilterConfig Config = netsync::try_default_send_filter_config().value_or(NetsyncSendFilterConfig{});
		Config.policy = NETSYNC_SEND_DEAD_RECKONING;
		Config.position_threshold = ue::distance_to_core(PositionThreshold, Frame);
		Config.angle_threshold = ue::degrees_to_radians(AngleThreshold);
		Config.max_interval = FMath::Max(0.05, static_cast<double>(Heartbeat));
		netsync::Result<netsync::SendFilter> Created = netsync::SendFilter::try_create(Config);
		if (!Created.ok())
		{
			UE_LOG(LogNetSync, Warning, TEXT("NetSync: %s: send thresholds refused (%s); using the project's"), *GetOwner()->GetName(), UTF8_TO_TCHAR(Created.error().what()));
			bOverrideSendThresholds = false;
			return true;
		}
		OwnFilter = std::move(Created).value();
	}
	const netsync::Result<netsync::Decision> Decision = OwnFilter.try_update(Now, State);
	return !Decision.ok() || Decision.value() != netsync::Decision::Skip;
}

bool UNetSyncComponent::UpdateRest(double Now, const NetsyncSample& State)
{
	if (!bReportAtRest || Kind != ENetSyncEntityKind::Neutral || bRestReported)
	{
		return false;
	}
	const float Speed = netsync::length(State.linear_velocity);
	const float Spin = netsync::length(State.angular_velocity);
	if (Rest.update(Now, Speed, Spin))
	{
		bRestReported = true;
		return true;
	}
	return false;
}

void UNetSyncComponent::ApplyNetworkPose(const ue::Pose& Pose, double Now)
{
	AActor* Owner = GetOwner();
	if (Owner == nullptr)
	{
		return;
	}
	const FVector Location = ue::as<FVector>(Pose.Location);
	if (LastNetworkTime >= 0.0 && Now > LastNetworkTime)
	{
		NetworkVelocity = (Location - LastNetworkLocation) / (Now - LastNetworkTime);
	}
	LastNetworkLocation = Location;
	LastNetworkTime = Now;
	// No sweep: the network's pose is the truth. Moving a kinematic body
	// (not a teleport) lets it push simulated bodies it meets.
	Owner->SetActorLocationAndRotation(Location, ue::as<FQuat>(Pose.Rotation), false, nullptr, ETeleportType::None);
}

void UNetSyncComponent::SetSimulatedHere(bool bSimulated, bool bForce)
{
	if (bSimulated == bSimulatedHere && !bForce)
	{
		return;
	}
	const bool bChanged = bSimulated != bSimulatedHere;
	bSimulatedHere = bSimulated;
	OwnFilter = netsync::SendFilter(); // a fresh reference state next time
	bRestReported = false;
	if (Subsystem != nullptr)
	{
		const ue::Frame& Frame = Subsystem->GetFrame();
		Rest = netsync::RestDetector(ue::distance_to_core(RestSpeed, Frame), ue::degrees_to_radians(RestAngularSpeed), RestTime);
	}

	if (Kind != ENetSyncEntityKind::Controlled && bSimulatePhysicsWhenHeld)
	{
		if (UPrimitiveComponent* Root = GetRootPrimitive())
		{
			Root->SetSimulatePhysics(bSimulated);
			if (bSimulated)
			{
				// Keep the momentum it was shown with (a claim mid-flight).
				Root->SetPhysicsLinearVelocity(NetworkVelocity);
			}
		}
	}
	if (!bSimulated)
	{
		LastNetworkTime = -1.0;
		NetworkVelocity = FVector::ZeroVector;
	}
	if (bChanged)
	{
		OnSimulatedHereChanged.Broadcast(bSimulated);
	}
}

void UNetSyncComponent::NotifyRemoved(ENetSyncRemovalReason Reason)
{
	OnEntityRemoved.Broadcast(Reason);
	if (bDestroyOwnerWhenRemoved && !bSimulatedHere)
	{
		if (AActor* Owner = GetOwner())
		{
			Owner->Destroy();
		}
	}
}
