//! Durable, streaming writes for the local filesystem backend.
//!
//! `object_store`'s local backend never calls `fsync`, and its multipart upload buffers whole
//! parts before writing any of them, so a large upload used to reach the disk only after the
//! last byte arrived, and then waited for all of it to be flushed. Here an object is written to
//! `<location>.partial` while it arrives, in batches of [`BATCH_BYTES`] on the blocking pool (one
//! batch in flight, so memory per upload stays at about two batches). After each batch, writeback
//! of that range is started without waiting for it (on Linux, `posix_fadvise(DONTNEED)`, which
//! queues the dirty pages for writing and returns), so the disk works while the network does.
//! Measured and not kept (docs/benchmarks.md, upload analysis): an `fdatasync` per batch was
//! slower (each is a journal commit and a device cache flush); an `fdatasync` running in the
//! background beside the writes was no better within the noise, nor, in a model of the upload,
//! `sync_file_range` per batch. On finish the file is flushed once, renamed to its location and
//! the directory entry flushed: a 2xx is only sent after all three.
//!
//! No blocking thread is held while waiting for the client: each batch is its own blocking task.
//! A `.partial` file left by a crash is an unreferenced object to `stowctl gc`, which removes it
//! once it is older than its minimum age.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use tokio::task::JoinHandle;

/// Received chunks go to the disk in batches of about this size.
pub const BATCH_BYTES: usize = 1024 * 1024;

/// Where an object is written until it is complete.
pub fn staging_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// Creates `dir` and any missing ancestors, flushing each new directory's entry.
fn ensure_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut cur = Some(dir);
    while let Some(d) = cur.filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        missing.push(d.to_path_buf());
        cur = d.parent();
    }
    fs::create_dir_all(dir)?;
    for d in missing.iter().rev() {
        if let Some(parent) = d.parent() {
            File::open(parent)?.sync_all()?;
        }
    }
    Ok(())
}

fn create(staging: &Path) -> io::Result<File> {
    if let Some(dir) = staging.parent() {
        ensure_dir(dir)?;
    }
    File::options().write(true).create_new(true).open(staging)
}

fn write_chunks(mut file: &File, chunks: &[Bytes]) -> io::Result<()> {
    for chunk in chunks {
        file.write_all(chunk)?;
    }
    Ok(())
}

/// Starts writing `len` bytes at `offset` back to the disk without waiting (advice: errors ignored).
fn start_writeback(file: &File, offset: u64, len: usize) {
    #[cfg(target_os = "linux")]
    if let Some(len) = std::num::NonZeroU64::new(len as u64) {
        let _ = rustix::fs::fadvise(file, offset, Some(len), rustix::fs::Advice::DontNeed);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

/// Flushes the staged bytes, moves them to `path` and flushes the directory entry.
fn publish(file: &File, staging: &Path, path: &Path) -> io::Result<()> {
    file.sync_data()?;
    fs::rename(staging, path)?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Writes a whole object durably (blocking; run it on the blocking pool).
pub fn put(path: &Path, chunks: &[Bytes]) -> io::Result<()> {
    let staging = staging_path(path);
    let result = create(&staging).and_then(|file| {
        write_chunks(&file, chunks)?;
        publish(&file, &staging, path)
    });
    if result.is_err() {
        let _ = fs::remove_file(&staging);
    }
    result
}

async fn join(task: JoinHandle<io::Result<()>>) -> io::Result<()> {
    task.await.map_err(io::Error::other)?
}

/// One object being streamed to disk; see the module docs. Dropped unfinished, its staged file
/// is removed.
pub struct Upload {
    path: PathBuf,
    staging: PathBuf,
    file: Arc<File>,
    batch: Vec<Bytes>,
    batch_len: usize,
    writing: Option<JoinHandle<io::Result<()>>>,
    /// Bytes handed to the blocking pool so far.
    offset: u64,
    finished: bool,
}

impl Upload {
    /// Creates the staged file for `path`.
    pub async fn start(path: PathBuf) -> io::Result<Self> {
        let staging = staging_path(&path);
        let file = {
            let staging = staging.clone();
            tokio::task::spawn_blocking(move || create(&staging))
                .await
                .map_err(io::Error::other)??
        };
        Ok(Self {
            path,
            staging,
            file: Arc::new(file),
            batch: Vec::new(),
            batch_len: 0,
            writing: None,
            offset: 0,
            finished: false,
        })
    }

    /// Appends a chunk (kept by reference until its batch is written).
    pub async fn write(&mut self, chunk: Bytes) -> io::Result<()> {
        self.batch_len += chunk.len();
        self.batch.push(chunk);
        if self.batch_len >= BATCH_BYTES {
            self.submit().await?;
        }
        Ok(())
    }

    async fn submit(&mut self) -> io::Result<()> {
        // one batch in flight: waiting here is the backpressure on the client
        if let Some(task) = self.writing.take() {
            join(task).await?;
        }
        let batch = std::mem::take(&mut self.batch);
        let len = std::mem::take(&mut self.batch_len);
        let offset = self.offset;
        self.offset += len as u64;
        let file = Arc::clone(&self.file);
        self.writing = Some(tokio::task::spawn_blocking(move || {
            write_chunks(&file, &batch)?;
            start_writeback(&file, offset, len);
            Ok(())
        }));
        Ok(())
    }

    /// Writes the rest, flushes, and moves the object into place.
    pub async fn finish(mut self) -> io::Result<()> {
        if let Some(task) = self.writing.take() {
            join(task).await?;
        }
        let batch = std::mem::take(&mut self.batch);
        let (file, staging, path) = (
            Arc::clone(&self.file),
            self.staging.clone(),
            self.path.clone(),
        );
        join(tokio::task::spawn_blocking(move || {
            write_chunks(&file, &batch)?;
            publish(&file, &staging, &path)
        }))
        .await?;
        self.finished = true;
        Ok(())
    }

    /// Abandons the object and removes what was staged.
    pub async fn abort(mut self) {
        self.finished = true;
        let staging = self.staging.clone();
        if let Some(task) = self.writing.take() {
            let _ = task.await;
        }
        match tokio::task::spawn_blocking(move || fs::remove_file(staging)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) if e.kind() == io::ErrorKind::NotFound => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %e, path = %self.staging.display(), "removing a staged upload failed; `stowctl gc` will")
            }
            Err(e) => tracing::warn!(error = %e, "removing a staged upload failed"),
        }
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let staging = self.staging.clone();
        // in a runtime (the normal case) the unlink runs on the blocking pool, never on a worker
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn_blocking(move || fs::remove_file(staging));
            }
            Err(_) => {
                let _ = fs::remove_file(staging);
            }
        }
    }
}
