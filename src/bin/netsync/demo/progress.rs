//! A one-line progress bar on stderr: redrawn in place on a terminal, a
//! line every few seconds otherwise (logs, CI). Ten lines of code did not
//! justify a dependency.

use std::io::{IsTerminal, Write};

pub struct Bar {
    total: f64,
    terminal: bool,
    next_draw: f64,
}

impl Bar {
    pub fn new(total: f64) -> Bar {
        Bar {
            total,
            terminal: std::io::stderr().is_terminal(),
            next_draw: 0.0,
        }
    }

    pub fn show(&mut self, at: f64, transfers: u64) {
        if at < self.next_draw {
            return;
        }
        self.next_draw = at + if self.terminal { 0.2 } else { 5.0 };
        let width = 30;
        let done = ((at / self.total).clamp(0.0, 1.0) * width as f64) as usize;
        let line = format!(
            "[{}{}] {:5.1} s / {:.0} s, {} rights changed hands",
            "#".repeat(done),
            "-".repeat(width - done),
            at,
            self.total,
            transfers
        );
        let mut err = std::io::stderr();
        if self.terminal {
            let _ = write!(err, "\r{line}");
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    pub fn finish(&mut self) {
        if self.terminal {
            let _ = writeln!(std::io::stderr());
        }
    }
}
