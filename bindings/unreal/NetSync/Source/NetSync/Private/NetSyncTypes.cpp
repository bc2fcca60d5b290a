#include "NetSyncTypes.h"

#include "NetSyncThirdParty.h"

namespace NetSync
{
	ENetSyncConnectionState ConnectionStateFromNative(uint32 State)
	{
		switch (State)
		{
		case NETSYNC_STATE_CONNECTING: return ENetSyncConnectionState::Connecting;
		case NETSYNC_STATE_CONNECTED: return ENetSyncConnectionState::Connected;
		default: return ENetSyncConnectionState::Disconnected;
		}
	}

	ENetSyncDisconnectReason DisconnectReasonFromNative(uint32 Reason)
	{
		switch (Reason)
		{
		case NETSYNC_REASON_NONE: return ENetSyncDisconnectReason::None;
		case NETSYNC_REASON_CONNECT_TIMEOUT: return ENetSyncDisconnectReason::ConnectTimeout;
		case NETSYNC_REASON_RELAY_TIMEOUT: return ENetSyncDisconnectReason::RelayTimeout;
		case NETSYNC_REASON_VERSION_MISMATCH: return ENetSyncDisconnectReason::VersionMismatch;
		case NETSYNC_REASON_RELAY_FULL: return ENetSyncDisconnectReason::RelayFull;
		case NETSYNC_REASON_CLOSED: return ENetSyncDisconnectReason::Closed;
		case NETSYNC_REASON_TOKEN_REQUIRED: return ENetSyncDisconnectReason::TokenRequired;
		case NETSYNC_REASON_NOT_SECURE: return ENetSyncDisconnectReason::NotSecure;
		case NETSYNC_REASON_TOKEN_EXPIRED: return ENetSyncDisconnectReason::TokenExpired;
		case NETSYNC_REASON_TOKEN_IN_USE: return ENetSyncDisconnectReason::TokenInUse;
		default: return ENetSyncDisconnectReason::Unknown;
		}
	}

	ENetSyncRemovalReason RemovalReasonFromNative(uint32 Reason)
	{
		switch (Reason)
		{
		case NETSYNC_REMOVED_UNREGISTERED: return ENetSyncRemovalReason::Unregistered;
		case NETSYNC_REMOVED_OWNER_LEFT: return ENetSyncRemovalReason::OwnerLeft;
		case NETSYNC_REMOVED_OUT_OF_INTEREST: return ENetSyncRemovalReason::OutOfInterest;
		case NETSYNC_REMOVED_STALE: return ENetSyncRemovalReason::Stale;
		default: return ENetSyncRemovalReason::Unknown;
		}
	}

	ENetSyncClaimRefusal ClaimRefusalFromNative(uint32 Reason)
	{
		switch (Reason)
		{
		case NETSYNC_CLAIM_UNKNOWN_ENTITY: return ENetSyncClaimRefusal::UnknownEntity;
		case NETSYNC_CLAIM_CONFLICT: return ENetSyncClaimRefusal::Conflict;
		case NETSYNC_CLAIM_NOT_NEUTRAL: return ENetSyncClaimRefusal::NotNeutral;
		case NETSYNC_CLAIM_NOT_YOUR_CONTROLLER: return ENetSyncClaimRefusal::NotYourController;
		case NETSYNC_CLAIM_COOLDOWN: return ENetSyncClaimRefusal::Cooldown;
		case NETSYNC_CLAIM_ALREADY_HOLDER: return ENetSyncClaimRefusal::AlreadyHolder;
		case NETSYNC_CLAIM_NOT_HOLDER: return ENetSyncClaimRefusal::NotHolder;
		case NETSYNC_CLAIM_STALE: return ENetSyncClaimRefusal::Stale;
		default: return ENetSyncClaimRefusal::Unknown;
		}
	}

	ENetSyncMessageKind MessageKindFromNative(uint32 Kind)
	{
		switch (Kind)
		{
		case NETSYNC_MESSAGE_GLOBAL_COMMAND: return ENetSyncMessageKind::GlobalCommand;
		case NETSYNC_MESSAGE_COMPONENT_COMMAND: return ENetSyncMessageKind::ComponentCommand;
		case NETSYNC_MESSAGE_COMPONENT_STATE: return ENetSyncMessageKind::ComponentState;
		default: return ENetSyncMessageKind::Unknown;
		}
	}

	uint32 KindToNative(ENetSyncEntityKind Kind)
	{
		switch (Kind)
		{
		case ENetSyncEntityKind::Neutral: return NETSYNC_KIND_NEUTRAL;
		case ENetSyncEntityKind::ServerOwned: return NETSYNC_KIND_SERVER_OWNED;
		default: return NETSYNC_KIND_CONTROLLED;
		}
	}

	uint32 InterpolationModeToNative(ENetSyncInterpolationMode Mode)
	{
		switch (Mode)
		{
		case ENetSyncInterpolationMode::Literal: return NETSYNC_MODE_LITERAL;
		case ENetSyncInterpolationMode::Fixed: return NETSYNC_MODE_FIXED;
		case ENetSyncInterpolationMode::Buffered: return NETSYNC_MODE_BUFFERED;
		case ENetSyncInterpolationMode::Predicted: return NETSYNC_MODE_PREDICTED;
		default: return NETSYNC_MODE_ADAPTIVE;
		}
	}

	uint32 SimulatedNetworkToNative(ENetSyncSimulatedNetwork Network)
	{
		switch (Network)
		{
		case ENetSyncSimulatedNetwork::Lan: return NETSYNC_NETWORK_LAN;
		case ENetSyncSimulatedNetwork::Good: return NETSYNC_NETWORK_GOOD;
		case ENetSyncSimulatedNetwork::Average: return NETSYNC_NETWORK_AVG;
		case ENetSyncSimulatedNetwork::Poor: return NETSYNC_NETWORK_POOR;
		case ENetSyncSimulatedNetwork::Spiky: return NETSYNC_NETWORK_SPIKY;
		case ENetSyncSimulatedNetwork::Hostile: return NETSYNC_NETWORK_HOSTILE;
		default: return NETSYNC_NETWORK_NONE;
		}
	}

	uint32 LogLevelToNative(ENetSyncLogLevel Level)
	{
		switch (Level)
		{
		case ENetSyncLogLevel::Error: return NETSYNC_LOG_ERROR;
		case ENetSyncLogLevel::Warning: return NETSYNC_LOG_WARN;
		case ENetSyncLogLevel::Info: return NETSYNC_LOG_INFO;
		case ENetSyncLogLevel::Debug: return NETSYNC_LOG_DEBUG;
		case ENetSyncLogLevel::Trace: return NETSYNC_LOG_TRACE;
		default: return NETSYNC_LOG_OFF;
		}
	}
}
