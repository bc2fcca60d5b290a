//! Commands on the relay, sans-IO: client sessions that make every command
//! apply exactly once across duplicates and reconnects, and the numbered
//! log of global commands that lets a reconnecting client catch up.
//!
//! A client numbers its commands 1, 2, 3 ... within its session (a random
//! id it keeps for its whole life, across reconnects) and resends what the
//! relay has not acknowledged after a reconnect. The relay applies command
//! `n` only right after `n - 1`, so a duplicate or a resend of something
//! already applied changes nothing.

use std::collections::{HashMap, VecDeque};

/// What to do with a command from a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// New and next in line: apply it.
    Apply,
    /// Applied before (a duplicate or a resend): drop it.
    Duplicate,
    /// Out of line, or from a client that never named its session: drop it.
    Refused,
}

#[derive(Clone, Copy, Debug)]
struct Session {
    client: Option<u32>,
    /// Last command applied (0: none yet, the next one sets the baseline).
    applied: u64,
    /// Last component-state number applied.
    states: u64,
    /// Last `applied` acknowledged to the client.
    acked: u64,
    /// When its client left (for expiry).
    left_at: f64,
}

/// Sessions of every client, connected or recently gone.
#[derive(Debug, Default)]
pub struct Sessions {
    sessions: HashMap<u64, Session>,
    by_client: HashMap<u32, u64>,
    /// How long a session outlives its client (s).
    linger: f64,
    /// Most sessions kept (connected ones are never dropped).
    capacity: usize,
}

impl Sessions {
    pub fn new(linger: f64, capacity: usize) -> Self {
        Sessions {
            linger,
            capacity: capacity.max(1),
            ..Default::default()
        }
    }

    /// Binds `session` to `client`. A session still bound to another
    /// connected client is taken over: that is the same client, back on a
    /// new connection before the relay noticed the old one go quiet (the
    /// session is a 64-bit secret only it knows). Returns the client it
    /// was taken from, which the relay then drops.
    pub fn bind(&mut self, client: u32, session: u64, now: f64) -> Option<u32> {
        let displaced = self
            .sessions
            .get(&session)
            .and_then(|s| s.client)
            .filter(|&c| c != client);
        if let Some(old) = displaced {
            self.by_client.remove(&old);
        }
        if let Some(old) = self.by_client.insert(client, session) {
            if old != session {
                if let Some(s) = self.sessions.get_mut(&old) {
                    s.client = None;
                    s.left_at = now;
                }
            }
        }
        let s = self.sessions.entry(session).or_insert(Session {
            client: None,
            applied: 0,
            states: 0,
            acked: 0,
            left_at: now,
        });
        s.client = Some(client);
        // The client learns where it stands again.
        s.acked = 0;
        self.expire(now);
        displaced
    }

    /// Whether `client` has named its session (it has been caught up).
    pub fn is_bound(&self, client: u32) -> bool {
        self.by_client.contains_key(&client)
    }

    fn of(&mut self, client: u32) -> Option<&mut Session> {
        let session = self.by_client.get(&client)?;
        self.sessions.get_mut(session)
    }

    /// Command number `seq` from `client`.
    pub fn admit_command(&mut self, client: u32, seq: u64) -> Admit {
        let Some(s) = self.of(client) else {
            return Admit::Refused;
        };
        if s.applied == 0 || seq == s.applied + 1 {
            if seq == 0 {
                return Admit::Refused;
            }
            s.applied = seq;
            Admit::Apply
        } else if seq <= s.applied {
            Admit::Duplicate
        } else {
            Admit::Refused
        }
    }

    /// Component state number `seq` from `client` (latest wins: only newer
    /// ones apply).
    pub fn admit_state(&mut self, client: u32, seq: u64) -> Admit {
        let Some(s) = self.of(client) else {
            return Admit::Refused;
        };
        if seq > s.states {
            s.states = seq;
            Admit::Apply
        } else {
            Admit::Duplicate
        }
    }

    /// Acknowledgements due: (client, last command applied).
    pub fn acks_due(&mut self) -> Vec<(u32, u64)> {
        let mut due = Vec::new();
        for s in self.sessions.values_mut() {
            if let Some(client) = s.client {
                if s.applied > s.acked {
                    s.acked = s.applied;
                    due.push((client, s.applied));
                }
            }
        }
        due.sort_unstable();
        due
    }

    pub fn client_left(&mut self, client: u32, now: f64) {
        if let Some(session) = self.by_client.remove(&client) {
            if let Some(s) = self.sessions.get_mut(&session) {
                s.client = None;
                s.left_at = now;
            }
        }
    }

    fn expire(&mut self, now: f64) {
        let linger = self.linger;
        self.sessions
            .retain(|_, s| s.client.is_some() || now - s.left_at < linger);
        if self.sessions.len() > self.capacity {
            // Oldest departures first; connected sessions stay.
            let mut gone: Vec<(f64, u64)> = self
                .sessions
                .iter()
                .filter(|(_, s)| s.client.is_none())
                .map(|(&id, s)| (s.left_at, id))
                .collect();
            gone.sort_by(|a, b| a.0.total_cmp(&b.0));
            let excess = self.sessions.len() - self.capacity;
            for (_, id) in gone.into_iter().take(excess) {
                self.sessions.remove(&id);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// The relay's recent global commands, numbered from 1, encoded once.
#[derive(Debug)]
pub struct GlobalLog {
    next: u64,
    entries: VecDeque<(u64, Vec<u8>)>,
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
}

impl GlobalLog {
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        GlobalLog {
            next: 1,
            entries: VecDeque::new(),
            bytes: 0,
            max_entries: max_entries.max(1),
            max_bytes,
        }
    }

    /// The number the next global command gets.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Takes the next number for a command encoded by `encode(seq)`.
    pub fn append(&mut self, encode: impl FnOnce(u64) -> Vec<u8>) -> (u64, &[u8]) {
        let seq = self.next;
        self.next += 1;
        let bytes = encode(seq);
        self.bytes += bytes.len();
        self.entries.push_back((seq, bytes));
        while self.entries.len() > self.max_entries
            || (self.bytes > self.max_bytes && self.entries.len() > 1)
        {
            if let Some((_, old)) = self.entries.pop_front() {
                self.bytes -= old.len();
            }
        }
        let last = self.entries.back().expect("just pushed");
        (seq, &last.1)
    }

    /// The commands after `last` still kept, and whether any between were
    /// already forgotten.
    pub fn since(&self, last: u64) -> (impl Iterator<Item = &[u8]> + '_, bool) {
        let oldest = self.entries.front().map_or(self.next, |e| e.0);
        let gap = last.saturating_add(1) < oldest && last.saturating_add(1) < self.next;
        (
            self.entries
                .iter()
                .filter(move |(seq, _)| *seq > last)
                .map(|(_, b)| b.as_slice()),
            gap,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_apply_once_in_order_across_reconnects() {
        let mut s = Sessions::new(60.0, 100);
        assert_eq!(s.admit_command(1, 1), Admit::Refused, "no session yet");
        assert_eq!(s.bind(1, 0xAB, 0.0), None);
        assert_eq!(s.admit_command(1, 1), Admit::Apply);
        assert_eq!(s.admit_command(1, 1), Admit::Duplicate);
        assert_eq!(s.admit_command(1, 3), Admit::Refused, "gap");
        assert_eq!(s.admit_command(1, 2), Admit::Apply);
        assert_eq!(s.acks_due(), vec![(1, 2)]);
        assert!(s.acks_due().is_empty());
        // Reconnects as client 7 and resends 2 (unacked in its view) and 3.
        s.client_left(1, 1.0);
        assert_eq!(s.bind(7, 0xAB, 2.0), None);
        assert_eq!(s.admit_command(7, 2), Admit::Duplicate);
        assert_eq!(s.admit_command(7, 3), Admit::Apply);
        assert_eq!(s.acks_due(), vec![(7, 3)]);
        // Back again as 8 before 7 timed out: 8 takes the session over,
        // numbering continues, and 7 has none any more.
        assert_eq!(s.bind(8, 0xAB, 2.5), Some(7));
        assert_eq!(s.admit_command(8, 4), Admit::Apply);
        assert_eq!(s.admit_command(7, 5), Admit::Refused);
        // A relay that never saw the session takes the first number as is.
        let mut fresh = Sessions::new(60.0, 100);
        fresh.bind(1, 0xCD, 0.0);
        assert_eq!(fresh.admit_command(1, 41), Admit::Apply);
        assert_eq!(fresh.admit_command(1, 42), Admit::Apply);
    }

    #[test]
    fn sessions_expire_and_stay_bounded() {
        let mut s = Sessions::new(10.0, 3);
        for c in 1..=3 {
            s.bind(c, c as u64, 0.0);
            s.client_left(c, 0.0);
        }
        s.bind(4, 4, 5.0);
        assert!(s.len() <= 3);
        s.bind(5, 5, 20.0);
        assert_eq!(s.len(), 2, "left ones expired");
    }

    #[test]
    fn the_log_replays_what_a_client_missed() {
        let mut log = GlobalLog::new(3, 1 << 20);
        for i in 0..5u8 {
            log.append(|seq| vec![seq as u8, i]);
        }
        assert_eq!(log.next(), 6);
        let (items, gap) = log.since(3);
        assert_eq!(items.map(|b| b[0]).collect::<Vec<_>>(), vec![4, 5]);
        assert!(!gap);
        let (items, gap) = log.since(0);
        assert_eq!(items.count(), 3);
        assert!(gap, "1 and 2 are forgotten");
        assert!(!log.since(5).1);
    }
}
