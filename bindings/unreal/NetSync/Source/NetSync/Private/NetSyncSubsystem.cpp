#include "NetSyncSubsystem.h"

#include "Engine/GameInstance.h"
#include "Engine/World.h"
#include "GameFramework/WorldSettings.h"
#include "HAL/PlatformTime.h"
#include "NetSyncComponent.h"
#include "NetSyncModule.h"
#include "NetSyncSettings.h"
#include "UObject/UObjectHash.h"

#include <optional>
#include <utility>

namespace
{
	namespace ue = netsync::unreal;

	netsync::Kind NetSyncKindOf(ENetSyncEntityKind Kind)
	{
		return static_cast<netsync::Kind>(NetSync::KindToNative(Kind));
	}

	netsync::Span<const uint8_t> NetSyncBytesOf(const TArray<uint8>& Bytes)
	{
		return netsync::Span<const uint8_t>(Bytes.GetData(), static_cast<size_t>(Bytes.Num()));
	}
}

// --- USubsystem -----------------------------------------------------------------

bool UNetSyncSubsystem::ShouldCreateSubsystem(UObject* /*Outer*/) const
{
	// A project's subclass of this subsystem replaces it.
	TArray<UClass*> Subclasses;
	GetDerivedClasses(GetClass(), Subclasses, false);
	return Subclasses.Num() == 0;
}

void UNetSyncSubsystem::Initialize(FSubsystemCollectionBase& Collection)
{
	Super::Initialize(Collection);
	bInitialized = true;

	const UNetSyncSettings* Settings = GetDefault<UNetSyncSettings>();
	if (!FNetSyncModule::IsLibraryReady())
	{
		Fail(FNetSyncModule::GetLoadError());
		return;
	}
	FNetSyncModule::SetLogLevel(NetSync::LogLevelToNative(Settings->LogLevel));
	UpdateFrame();

	if (Settings->bStartRelayOnStart)
	{
		StartRelay(Settings->RelayPort, Settings->RelayBindAddress);
	}
	if (Settings->bConnectOnStart)
	{
		FString Address = Settings->RelayAddress;
		if (IsRelayRunning())
		{
			// Our own relay, on the loopback of the family it listens on.
			Address = Settings->RelayBindAddress.Contains(TEXT(":"))
				? FString::Printf(TEXT("[::1]:%d"), GetRelayPort())
				: FString::Printf(TEXT("127.0.0.1:%d"), GetRelayPort());
		}
		Connect(Address);
	}
}

void UNetSyncSubsystem::Deinitialize()
{
	Disconnect();
	StopRelay();
	Components.Reset();
	KnownRemote.Reset();
	bInitialized = false;
	Super::Deinitialize();
}

// --- FTickableGameObject --------------------------------------------------------

TStatId UNetSyncSubsystem::GetStatId() const
{
	RETURN_QUICK_DECLARE_CYCLE_STAT(UNetSyncSubsystem, STATGROUP_Tickables);
}

ETickableTickType UNetSyncSubsystem::GetTickableTickType() const
{
	// The class default object never ticks; instances tick while a client runs.
	return IsTemplate() ? ETickableTickType::Never : ETickableTickType::Conditional;
}

bool UNetSyncSubsystem::IsTickable() const
{
	return bInitialized && (static_cast<bool>(Client) || static_cast<bool>(Relay));
}

UWorld* UNetSyncSubsystem::GetTickableGameObjectWorld() const
{
	const UGameInstance* GameInstance = GetGameInstance();
	return GameInstance != nullptr ? GameInstance->GetWorld() : nullptr;
}

void UNetSyncSubsystem::Tick(float /*DeltaTime*/)
{
	if (!Client && !Relay)
	{
		return;
	}
	// netsync wants a monotonic, unscaled clock: not the world's (paused, dilated) time.
	const double Now = FPlatformTime::Seconds();
	UpdateFrame();
	SendOwnedStates(Now);
	if (Client)
	{
		ApplyTransforms(Now);
		DispatchEvents();
		DispatchMessages();
	}
	if (Relay)
	{
		DispatchRelayEvents();
	}
}

// --- the frame --------------------------------------------------------------------

void UNetSyncSubsystem::UpdateFrame()
{
	Frame.units_per_metre = ue::kCentimetresPerMetre;
	if (const UWorld* World = GetTickableGameObjectWorld())
	{
		if (const AWorldSettings* WorldSettings = World->GetWorldSettings(false, false))
		{
			if (WorldSettings->WorldToMeters > 0.0f)
			{
				Frame.units_per_metre = WorldSettings->WorldToMeters;
			}
		}
	}
}

void UNetSyncSubsystem::SendOwnedStates(double Now)
{
	for (auto It = Components.CreateIterator(); It; ++It)
	{
		UNetSyncComponent* Component = It.Value().Get();
		if (Component == nullptr || Component->GetOwner() == nullptr)
		{
			It.RemoveCurrent();
			continue;
		}
		if (Client && !Component->bRegistered)
		{
			RegisterWithClient(*Component); // a pawn possessed since, or a failed registration
		}
		if (!Component->bSimulatedHere)
		{
			continue;
		}
		const NetsyncSample State = Component->CaptureState(Frame);
		if (Component->Kind == ENetSyncEntityKind::ServerOwned)
		{
			// Moved by the relay running here; it stamps the state with its clock.
			if (Relay && Component->ShouldSend(Now, State, Frame))
			{
				const netsync::Status Moved = Relay.try_set_entity_state(State);
				if (!Moved.ok())
				{
					Fail(Moved.error());
				}
			}
			continue;
		}
		if (!Client)
		{
			continue;
		}
		if (Component->UpdateRest(Now, State))
		{
			const netsync::Status AtRest = Client.try_report_at_rest(Component->ResolvedId);
			if (!AtRest.ok())
			{
				Fail(AtRest.error());
			}
		}
		if (!Component->ShouldSend(Now, State, Frame))
		{
			continue;
		}
		const netsync::Status Sent = Client.try_set_entity_state(State);
		if (!Sent.ok())
		{
			Fail(Sent.error());
		}
	}
}

void UNetSyncSubsystem::ApplyTransforms(double Now)
{
	const netsync::Result<netsync::Span<const NetsyncTransform>> Shown = Client.try_tick(Now);
	if (!Shown.ok())
	{
		Fail(Shown.error());
		return;
	}
	for (const NetsyncTransform& Transform : Shown.value())
	{
		UNetSyncComponent* Component = FindComponent(Transform.entity_id);
		if (Component != nullptr && !Component->bSimulatedHere)
		{
			Component->ApplyNetworkPose(ue::pose_from_core(Transform, Frame), Now);
		}
	}
}

void UNetSyncSubsystem::DispatchEvents()
{
	// Collect first: Blueprint handlers may call back into this subsystem
	// (even Disconnect) while they run.
	TArray<NetsyncClientEvent, TInlineAllocator<16>> Events;
	const netsync::Status Drained = Client.try_drain_events([&Events](const NetsyncClientEvent& Event) { Events.Add(Event); });
	if (!Drained.ok())
	{
		Fail(Drained.error());
	}
	for (const NetsyncClientEvent& Event : Events)
	{
		const int64 Entity = static_cast<int64>(Event.entity_id);
		switch (netsync::kind_of(Event))
		{
		case netsync::EventKind::Connected:
		case netsync::EventKind::Reconnected:
			ClientId = static_cast<int32>(Event.client_id);
			OnConnected.Broadcast(ClientId, netsync::kind_of(Event) == netsync::EventKind::Reconnected);
			break;
		case netsync::EventKind::Disconnected:
			OnDisconnected.Broadcast(NetSync::DisconnectReasonFromNative(Event.reason));
			break;
		case netsync::EventKind::EntityAppeared:
			KnownRemote.Add(Event.entity_id);
			OnEntityAppeared.Broadcast(Entity);
			break;
		case netsync::EventKind::EntityRemoved:
		{
			KnownRemote.Remove(Event.entity_id);
			const ENetSyncRemovalReason Reason = NetSync::RemovalReasonFromNative(Event.reason);
			if (UNetSyncComponent* Component = FindComponent(Event.entity_id))
			{
				Component->NotifyRemoved(Reason);
			}
			OnEntityRemoved.Broadcast(Entity, Reason);
			break;
		}
		case netsync::EventKind::RightGained:
			RefreshSimulatedHere(Event.entity_id);
			OnSendRightGained.Broadcast(Entity);
			break;
		case netsync::EventKind::RightLost:
			RefreshSimulatedHere(Event.entity_id);
			OnSendRightLost.Broadcast(Entity);
			break;
		case netsync::EventKind::RightRefused:
			RefreshSimulatedHere(Event.entity_id);
			OnClaimRefused.Broadcast(Entity, NetSync::ClaimRefusalFromNative(Event.reason));
			break;
		default:
			break;
		}
		if (!Client)
		{
			return; // a handler disconnected
		}
	}
}

void UNetSyncSubsystem::DispatchMessages()
{
	TArray<FNetSyncMessage> Received;
	while (Client)
	{
		netsync::Result<std::optional<netsync::MessageView>> Next = Client.try_poll_message();
		if (!Next.ok())
		{
			Fail(Next.error());
			break;
		}
		if (!Next.value().has_value())
		{
			break;
		}
		Received.Add(ToBlueprint(*Next.value()));
	}
	for (const FNetSyncMessage& Message : Received)
	{
		OnMessage.Broadcast(Message);
	}
}

FNetSyncMessage UNetSyncSubsystem::ToBlueprint(const netsync::MessageView& View)
{
	FNetSyncMessage Message;
	Message.Kind = NetSync::MessageKindFromNative(View.header.kind);
	Message.Sender = static_cast<int32>(View.header.sender);
	Message.EntityId = static_cast<int64>(View.header.entity_id);
	Message.ComponentId = static_cast<int32>(View.header.component_id);
	Message.Sequence = static_cast<int64>(View.header.sequence);
	Message.ServerTime = View.header.server_time;
	Message.Payload.Append(View.payload.data(), static_cast<int32>(View.payload.size()));
	return Message;
}

void UNetSyncSubsystem::DispatchRelayEvents()
{
	TArray<NetsyncServerEvent, TInlineAllocator<8>> Events;
	const netsync::Status Drained = Relay.try_drain_events([&Events](const NetsyncServerEvent& Event) { Events.Add(Event); });
	if (!Drained.ok())
	{
		Fail(Drained.error());
	}
	// Drained every frame even when nobody listens: the relay keeps only so many.
	TArray<FNetSyncMessage> Received;
	for (;;)
	{
		netsync::Result<std::optional<netsync::MessageView>> Next = Relay.try_poll_message();
		if (!Next.ok())
		{
			Fail(Next.error());
			break;
		}
		if (!Next.value().has_value())
		{
			break;
		}
		Received.Add(ToBlueprint(*Next.value()));
	}
	for (const NetsyncServerEvent& Event : Events)
	{
		switch (netsync::kind_of(Event))
		{
		case netsync::ServerEventKind::ClientJoined:
			OnRelayClientJoined.Broadcast(static_cast<int32>(Event.client_id));
			break;
		case netsync::ServerEventKind::ClientLeft:
			OnRelayClientLeft.Broadcast(static_cast<int32>(Event.client_id));
			break;
		case netsync::ServerEventKind::CallRefused:
			UE_LOG(LogNetSync, Warning, TEXT("NetSync: the relay refused a call about entity %llu (reason %u: a client registered it, or it is unknown)"),
				static_cast<uint64>(Event.entity_id), Event.reason);
			break;
		default:
			break;
		}
	}
	for (const FNetSyncMessage& Message : Received)
	{
		OnRelayMessage.Broadcast(Message);
	}
}

// --- synced actors ------------------------------------------------------------------

UNetSyncComponent* UNetSyncSubsystem::FindComponent(uint64 EntityId) const
{
	const TWeakObjectPtr<UNetSyncComponent>* Found = Components.Find(EntityId);
	return Found != nullptr ? Found->Get() : nullptr;
}

void UNetSyncSubsystem::AddSyncedComponent(UNetSyncComponent* Component)
{
	if (Component == nullptr || Component->ResolvedId == 0)
	{
		return;
	}
	if (UNetSyncComponent* Existing = FindComponent(Component->ResolvedId))
	{
		if (Existing != Component)
		{
			UE_LOG(LogNetSync, Error, TEXT("NetSync: %s and %s share entity id %llu; the second is not synced"),
				*Existing->GetOwner()->GetName(), *Component->GetOwner()->GetName(), Component->ResolvedId);
			return;
		}
	}
	Components.Add(Component->ResolvedId, Component);
	Component->bRegistered = false;
	if (Component->Kind == ENetSyncEntityKind::ServerOwned)
	{
		Component->SetSimulatedHere(IsRelayRunning(), true);
	}
	RegisterWithClient(*Component);
}

void UNetSyncSubsystem::RemoveSyncedComponent(UNetSyncComponent* Component)
{
	if (Component == nullptr || FindComponent(Component->ResolvedId) != Component)
	{
		return;
	}
	if (Client && Component->bRegistered && Component->Kind == ENetSyncEntityKind::Controlled && Component->bSimulatedHere)
	{
		const netsync::Status Unregistered = Client.try_unregister_entity(Component->ResolvedId);
		if (!Unregistered.ok())
		{
			Fail(Unregistered.error());
		}
	}
	if (Relay && Component->Kind == ENetSyncEntityKind::ServerOwned && Component->bSimulatedHere)
	{
		const netsync::Status Removed = Relay.try_remove_entity(Component->ResolvedId);
		if (!Removed.ok())
		{
			Fail(Removed.error());
		}
	}
	Components.Remove(Component->ResolvedId);
}

void UNetSyncSubsystem::RegisterWithClient(UNetSyncComponent& Component)
{
	if (!Client || Component.bRegistered)
	{
		return;
	}
	const uint64 Id = Component.ResolvedId;
	if (Component.Kind == ENetSyncEntityKind::Controlled)
	{
		const TOptional<bool> Local = Component.ResolveLocalControl(*this);
		if (!Local.IsSet())
		{
			return; // a pawn not possessed yet: shown from the network meanwhile, asked again next frame
		}
		if (!Local.GetValue())
		{
			Component.bRegistered = true; // someone else's: shown from the network
			Component.SetSimulatedHere(false, true);
			return;
		}
		const netsync::Status Registered = Client.try_register_entity(Id);
		if (!Registered.ok())
		{
			Fail(Registered.error());
			Component.bRegistered = true; // do not retry every frame
			return;
		}
		Component.bRegistered = true;
		Component.SetSimulatedHere(true, true);
		return;
	}

	// Neutral objects are registered by every client (the first one holds
	// it); server-owned ones are declared, and simulated where the relay runs.
	const netsync::Status Registered = Client.try_register_entity(Id, NetSyncKindOf(Component.Kind));
	Component.bRegistered = true;
	if (!Registered.ok())
	{
		Fail(Registered.error());
		return;
	}
	if (Component.Kind == ENetSyncEntityKind::Neutral)
	{
		Component.SetSimulatedHere(Client.try_holds(Id).value_or(false), true);
	}
}

void UNetSyncSubsystem::RefreshServerOwned()
{
	for (const TPair<uint64, TWeakObjectPtr<UNetSyncComponent>>& Pair : Components)
	{
		UNetSyncComponent* Component = Pair.Value.Get();
		if (Component != nullptr && Component->Kind == ENetSyncEntityKind::ServerOwned)
		{
			Component->SetSimulatedHere(IsRelayRunning());
		}
	}
}

void UNetSyncSubsystem::RefreshSimulatedHere(uint64 EntityId)
{
	UNetSyncComponent* Component = FindComponent(EntityId);
	if (Component != nullptr && Component->Kind == ENetSyncEntityKind::Neutral && Client)
	{
		Component->SetSimulatedHere(Client.try_holds(EntityId).value_or(false));
	}
}

bool UNetSyncSubsystem::HandleContact(UNetSyncComponent* A, UNetSyncComponent* B)
{
	if (!Client || A == nullptr || B == nullptr || A->ResolvedId == 0 || B->ResolvedId == 0)
	{
		return false;
	}
	const netsync::ContactSide SideA{A->ResolvedId, NetSyncKindOf(A->Kind), Client.try_holds(A->ResolvedId).value_or(false)};
	const netsync::ContactSide SideB{B->ResolvedId, NetSyncKindOf(B->Kind), Client.try_holds(B->ResolvedId).value_or(false)};
	const std::optional<netsync::Claim> Claim = netsync::claim_for_contact(SideA, SideB);
	if (!Claim.has_value())
	{
		return false;
	}
	const netsync::Status Claimed = Client.try_report_collision(Claim->mine, Claim->other);
	if (!Claimed.ok())
	{
		return Fail(Claimed.error());
	}
	// Optimistic: simulate it from this frame on; a refusal hands it back.
	RefreshSimulatedHere(Claim->other);
	return true;
}

// --- Blueprint API ----------------------------------------------------------------

bool UNetSyncSubsystem::Connect(const FString& Address)
{
	return ConnectWith(Address, nullptr);
}

bool UNetSyncSubsystem::ConnectSecure(const TArray<uint8>& Token, const FString& Address)
{
	if (Token.Num() != NETSYNC_TOKEN_SIZE)
	{
		return Fail(FString::Printf(TEXT("a connect token has %d bytes, not %d"), Token.Num(), NETSYNC_TOKEN_SIZE));
	}
	return ConnectWith(Address, &Token);
}

bool UNetSyncSubsystem::ConnectWith(const FString& Address, const TArray<uint8>* Token)
{
	if (!FNetSyncModule::IsLibraryReady())
	{
		return Fail(FNetSyncModule::GetLoadError());
	}
	Disconnect();
	UpdateFrame();

	const UNetSyncSettings* Settings = GetDefault<UNetSyncSettings>();
	netsync::Result<NetsyncClientConfig> Defaults = netsync::try_default_client_config();
	if (!Defaults.ok())
	{
		return Fail(Defaults.error());
	}
	NetsyncClientConfig Config = Defaults.value();
	Config.timeline.mode = NetSync::InterpolationModeToNative(Settings->InterpolationMode);
	Config.send_filter.position_threshold = ue::distance_to_core(Settings->PositionThreshold, Frame);
	Config.send_filter.angle_threshold = ue::degrees_to_radians(Settings->AngleThreshold);
	Config.send_filter.max_interval = Settings->Heartbeat;
	Config.send_rate = Settings->SendRate;
	Config.connect_timeout = Settings->ConnectTimeout;
	Config.idle_timeout = Settings->IdleTimeout;
	Config.reconnect = Settings->bReconnect ? 1 : 0;
	Config.conditioner = NetSync::SimulatedNetworkToNative(Settings->SimulatedNetwork);
	Config.conditioner_seed = FPlatformTime::Cycles64();

	const FTCHARToUTF8 Utf8Address(*Address);
	netsync::Result<netsync::Client> Connected = Token
		? netsync::Client::try_connect_secure(
			  netsync::Span<const uint8_t>(Token->GetData(), static_cast<std::size_t>(Token->Num())), &Config,
			  Address.IsEmpty() ? nullptr : Utf8Address.Get())
		: netsync::Client::try_connect(Utf8Address.Get(), &Config);
	if (!Connected.ok())
	{
		return Fail(Connected.error());
	}
	Client = std::move(Connected).value();
	ClientId = 0;
	KnownRemote.Reset();
	for (const TPair<uint64, TWeakObjectPtr<UNetSyncComponent>>& Pair : Components)
	{
		if (UNetSyncComponent* Component = Pair.Value.Get())
		{
			Component->bRegistered = false;
			RegisterWithClient(*Component);
		}
	}
	UE_LOG(LogNetSync, Log, TEXT("NetSync: connecting to %s%s"), Address.IsEmpty() ? TEXT("the token's relay") : *Address, Token ? TEXT(" (secure)") : TEXT(""));
	return true;
}

void UNetSyncSubsystem::Disconnect()
{
	if (!Client)
	{
		return;
	}
	Client.disconnect(); // stops and joins the network thread
	ClientId = 0;
	KnownRemote.Reset();
	for (const TPair<uint64, TWeakObjectPtr<UNetSyncComponent>>& Pair : Components)
	{
		if (UNetSyncComponent* Component = Pair.Value.Get())
		{
			Component->bRegistered = false;
		}
	}
}

bool UNetSyncSubsystem::StartRelay(int32 Port, const FString& BindAddress)
{
	if (!FNetSyncModule::IsLibraryReady())
	{
		return Fail(FNetSyncModule::GetLoadError());
	}
	if (Port < 0 || Port > 65535)
	{
		return Fail(FString::Printf(TEXT("NetSync: relay port %d is not in 0..65535"), Port));
	}
	StopRelay();
	netsync::Result<NetsyncServerConfig> Defaults = netsync::try_default_server_config();
	if (!Defaults.ok())
	{
		return Fail(Defaults.error());
	}
	const UNetSyncSettings* Settings = GetDefault<UNetSyncSettings>();
	NetsyncServerConfig Config = Defaults.value();
	Config.port = static_cast<uint16_t>(Port);
	Config.neutral_initial_holder = Settings->bFirstRegistrantHoldsNeutral ? NETSYNC_NEUTRAL_FIRST_READY : NETSYNC_NEUTRAL_NOBODY;
	Config.claim_cooldown = Settings->ClaimCooldown;
	Config.rest_timeout = Settings->RestTimeout;
	netsync::Result<netsync::Server> Started = netsync::Server::try_start(&Config, TCHAR_TO_UTF8(*BindAddress));
	if (!Started.ok())
	{
		return Fail(Started.error());
	}
	Relay = std::move(Started).value();
	UE_LOG(LogNetSync, Log, TEXT("NetSync: relay listening on %s port %d"), *BindAddress, GetRelayPort());
	RefreshServerOwned();
	return true;
}

void UNetSyncSubsystem::StopRelay()
{
	if (!Relay)
	{
		return;
	}
	Relay.stop(); // joins the relay thread; clients notice by their idle timeout
	RefreshServerOwned();
}

bool UNetSyncSubsystem::RelaySendGlobalCommand(const TArray<uint8>& Payload)
{
	if (!Relay)
	{
		return Fail(TEXT("NetSync: no relay runs here"));
	}
	const netsync::Status Sent = Relay.try_send_global_command(NetSyncBytesOf(Payload));
	return Sent.ok() || Fail(Sent.error());
}

bool UNetSyncSubsystem::IsRelayRunning() const
{
	return static_cast<bool>(Relay);
}

int32 UNetSyncSubsystem::GetRelayPort() const
{
	return Relay ? static_cast<int32>(Relay.try_port().value_or(0)) : 0;
}

ENetSyncConnectionState UNetSyncSubsystem::GetConnectionState() const
{
	if (!Client)
	{
		return ENetSyncConnectionState::NotStarted;
	}
	const netsync::Result<netsync::ConnectionState> State = Client.try_state();
	return State.ok() ? NetSync::ConnectionStateFromNative(static_cast<uint32>(State.value())) : ENetSyncConnectionState::Disconnected;
}

bool UNetSyncSubsystem::IsConnected() const
{
	return GetConnectionState() == ENetSyncConnectionState::Connected;
}

FNetSyncStats UNetSyncSubsystem::GetStats() const
{
	FNetSyncStats Stats;
	if (!Client)
	{
		return Stats;
	}
	const netsync::Result<NetsyncClientStats> Native = Client.try_stats();
	if (!Native.ok())
	{
		Stats.State = ENetSyncConnectionState::Disconnected;
		return Stats;
	}
	const NetsyncClientStats& S = Native.value();
	Stats.State = NetSync::ConnectionStateFromNative(S.state);
	Stats.ClientId = static_cast<int32>(S.client_id);
	Stats.RoundTripMs = static_cast<float>(S.rtt * 1000.0);
	Stats.JitterMs = static_cast<float>(S.jitter * 1000.0);
	Stats.Loss = static_cast<float>(S.loss);
	Stats.RenderDelayMs = static_cast<float>(S.render_delay * 1000.0);
	Stats.RemoteEntities = static_cast<int32>(S.remote_entities);
	Stats.BytesPerSecondUp = static_cast<float>(S.bytes_per_second_up);
	Stats.BytesPerSecondDown = static_cast<float>(S.bytes_per_second_down);
	Stats.Reconnects = static_cast<int32>(S.reconnects);
	return Stats;
}

bool UNetSyncSubsystem::HoldsSendRight(int64 EntityId) const
{
	return Client && Client.try_holds(static_cast<uint64>(EntityId)).value_or(false);
}

bool UNetSyncSubsystem::ReportCollision(int64 MyEntityId, int64 OtherEntityId)
{
	if (!Client)
	{
		return Fail(TEXT("NetSync: not connected"));
	}
	const netsync::Status Claimed = Client.try_report_collision(static_cast<uint64>(MyEntityId), static_cast<uint64>(OtherEntityId));
	if (!Claimed.ok())
	{
		return Fail(Claimed.error());
	}
	RefreshSimulatedHere(static_cast<uint64>(OtherEntityId));
	return true;
}

bool UNetSyncSubsystem::ReportAtRest(int64 EntityId)
{
	if (!Client)
	{
		return Fail(TEXT("NetSync: not connected"));
	}
	const netsync::Status AtRest = Client.try_report_at_rest(static_cast<uint64>(EntityId));
	return AtRest.ok() || Fail(AtRest.error());
}

bool UNetSyncSubsystem::SendGlobalCommand(const TArray<uint8>& Payload)
{
	if (!Client)
	{
		return Fail(TEXT("NetSync: not connected"));
	}
	const netsync::Status Sent = Client.try_send_global_command(NetSyncBytesOf(Payload));
	return Sent.ok() || Fail(Sent.error());
}

bool UNetSyncSubsystem::SendComponentCommand(int64 EntityId, int32 ComponentId, const TArray<uint8>& Payload)
{
	if (!Client)
	{
		return Fail(TEXT("NetSync: not connected"));
	}
	const netsync::Status Sent = Client.try_send_component_command(static_cast<uint64>(EntityId), static_cast<uint32>(ComponentId), NetSyncBytesOf(Payload));
	return Sent.ok() || Fail(Sent.error());
}

bool UNetSyncSubsystem::RegisterSyncedComponent(int64 EntityId, int32 ComponentId, bool bSynced)
{
	if (!Client)
	{
		return Fail(TEXT("NetSync: not connected"));
	}
	const netsync::Status Registered = Client.try_register_component(static_cast<uint64>(EntityId), static_cast<uint32>(ComponentId), bSynced);
	return Registered.ok() || Fail(Registered.error());
}

bool UNetSyncSubsystem::SetComponentState(int64 EntityId, int32 ComponentId, const TArray<uint8>& State)
{
	if (!Client)
	{
		return Fail(TEXT("NetSync: not connected"));
	}
	const netsync::Status Set = Client.try_set_component_state(static_cast<uint64>(EntityId), static_cast<uint32>(ComponentId), NetSyncBytesOf(State));
	return Set.ok() || Fail(Set.error());
}

int64 UNetSyncSubsystem::EntityIdFromName(const FString& Name)
{
	const FTCHARToUTF8 Utf8(*Name);
	return static_cast<int64>(ue::entity_id_from_name(std::string_view(reinterpret_cast<const char*>(Utf8.Get()), static_cast<size_t>(Utf8.Length()))));
}

// --- errors ------------------------------------------------------------------------------

bool UNetSyncSubsystem::Fail(const netsync::Error& Failure)
{
	// "NETSYNC_ERR_...: <the library's message>"
	return Fail(FString(UTF8_TO_TCHAR(Failure.what())));
}

bool UNetSyncSubsystem::Fail(const FString& Message)
{
	// Per-frame calls may fail the same way every frame: log each new failure once.
	if (Message != LastError)
	{
		UE_LOG(LogNetSync, Warning, TEXT("%s"), *Message);
	}
	LastError = Message;
	return false;
}
