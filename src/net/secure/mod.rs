//! Secure mode (docs/security.md): connect tokens a game's backend issues
//! with the relay's secret, and authenticated encryption of every
//! datagram after the handshake, with a replay window. Sans-IO: the
//! sockets in net::laminar_socket call into it.

pub mod replay_window;
pub mod session;
pub mod token;

pub use session::{OpenError, Opener, Sealer, Session, SECURE_MARK, SECURE_OVERHEAD};
pub use token::{
    issue_token, ConnectToken, OpenedToken, PresentedToken, RelaySecret, SessionKeys, TokenError,
};
