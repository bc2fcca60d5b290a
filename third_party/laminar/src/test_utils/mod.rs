pub use fake_socket::FakeSocket;
pub use network_emulator::{EmulatedSocket, NetworkEmulator};

mod fake_socket;
mod network_emulator;
