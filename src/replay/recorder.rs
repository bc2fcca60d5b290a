//! Writes a recording: entries are encoded where they happen (cheap), and
//! a writer thread compresses and writes each block, so neither the
//! engine's frame nor the relay's tick waits for the disk.
//!
//! A block goes out every [`FLUSH_BYTES`] or [`FLUSH_SECONDS`] of entry
//! time, whichever comes first: a crash loses at most the last second,
//! and the file read back ends with a clear "truncated" error at most.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Sender};

use super::format::{encode_block, encode_entry, header, Entry, RecordingKind};
use crate::wire::cursor::Writer;

/// Uncompressed bytes gathered before a block is written.
const FLUSH_BYTES: usize = 64 * 1024;
/// Entry time gathered before a block is written (s).
const FLUSH_SECONDS: f64 = 1.0;

/// An open recording file.
pub struct Recorder {
    raw: Writer,
    first_sequence: u64,
    entries: u32,
    block_start: Option<f64>,
    to_writer: Option<Sender<(u64, u32, Vec<u8>)>>,
    writer: Option<JoinHandle<()>>,
    error: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("entries", &(self.first_sequence + self.entries as u64))
            .finish()
    }
}

impl Recorder {
    /// Creates (or replaces) the file at `path` and writes its header.
    pub fn create(path: &Path, kind: RecordingKind) -> std::io::Result<Recorder> {
        let mut file = BufWriter::new(File::create(path)?);
        file.write_all(&header(kind))?;
        file.flush()?;
        let (to_writer, blocks) = unbounded::<(u64, u32, Vec<u8>)>();
        let error = Arc::new(Mutex::new(None));
        let failed = error.clone();
        let writer = std::thread::Builder::new()
            .name("netsync-recorder".into())
            .spawn(move || {
                for (first, count, raw) in blocks {
                    let block = encode_block(first, count, &raw);
                    if let Err(e) = file.write_all(&block).and_then(|()| file.flush()) {
                        log::error!(target: "netsync::replay", "recording stopped: {e}");
                        *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                        return;
                    }
                }
            })?;
        Ok(Recorder {
            raw: Writer::new(),
            first_sequence: 0,
            entries: 0,
            block_start: None,
            to_writer: Some(to_writer),
            writer: Some(writer),
            error,
        })
    }

    /// Appends `entry` at `time`.
    pub fn log(&mut self, time: f64, entry: &Entry) {
        encode_entry(&mut self.raw, time, entry);
        self.entries += 1;
        let start = *self.block_start.get_or_insert(time);
        if self.raw.len() >= FLUSH_BYTES || time - start >= FLUSH_SECONDS {
            self.flush();
        }
    }

    /// Entries logged so far.
    pub fn entries(&self) -> u64 {
        self.first_sequence + self.entries as u64
    }

    /// Why writing failed, if it did (the recording then ends there).
    pub fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Hands the gathered entries to the writer thread as one block.
    pub fn flush(&mut self) {
        if self.entries == 0 {
            return;
        }
        let raw = std::mem::take(&mut self.raw.bytes);
        if let Some(tx) = &self.to_writer {
            let _ = tx.send((self.first_sequence, self.entries, raw));
        }
        self.first_sequence += self.entries as u64;
        self.entries = 0;
        self.block_start = None;
    }

    /// Writes what is left and waits for the file to be complete.
    pub fn finish(mut self) -> Result<(), String> {
        self.close();
        self.error().map_or(Ok(()), Err)
    }

    fn close(&mut self) {
        self.flush();
        self.to_writer = None;
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.close();
    }
}
