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
//!
//! Reads for delivery come through here too ([`read`]): `object_store`'s local reader hands out
//! 8 KiB per blocking-pool task, one hand-off per 8 KiB; [`READ_CHUNK_BYTES`] chunks cut that
//! while a download in progress holds little memory (the figures and the chunk sizes tried are in
//! docs/benchmarks.md and docs/operations.md).
//! A `.partial` file left by a crash is an unreferenced object to `stowctl gc`, which removes it
//! once it is older than its minimum age.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use tokio::task::JoinHandle;

/// Received chunks go to the disk in batches of about this size.
pub const BATCH_BYTES: usize = 1024 * 1024;

/// Local objects are read in chunks of this size, one blocking-pool task each. `object_store`'s
/// local reader uses 8 KiB chunks, one task each: 128 hand-offs per MiB delivered.
pub const READ_CHUNK_BYTES: usize = 256 * 1024;

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

/// Opens `path` and positions it at the start of `range` (the whole file when `None`); returns
/// the file and how many bytes to read. A range past the end of the file is an error.
fn open_range(path: &Path, range: Option<Range<u64>>) -> io::Result<(File, u64)> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "not a file"));
    }
    let len = meta.len();
    let range = range.unwrap_or(0..len);
    if range.start > range.end || range.end > len {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "range {}..{} is outside the object's {len} bytes",
                range.start, range.end
            ),
        ));
    }
    file.seek(SeekFrom::Start(range.start))?;
    Ok((file, range.end - range.start))
}

/// Reads up to [`READ_CHUNK_BYTES`] of the `remaining` bytes; a file shorter than promised is an
/// error, never a short body.
fn read_chunk(file: &mut File, remaining: u64) -> io::Result<Bytes> {
    let want = remaining.min(READ_CHUNK_BYTES as u64) as usize;
    let mut buf = Vec::with_capacity(want);
    let got = file.take(want as u64).read_to_end(&mut buf)?;
    if got < want {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the object ended before its length",
        ));
    }
    Ok(buf.into())
}

/// Streams `range` of the local object at `path` (blocking I/O on the blocking pool: one task
/// opens the file, one more per chunk). A missing file is `NotFound` when this returns, so the
/// caller can still answer 404; errors after that end the stream.
pub async fn read(
    path: PathBuf,
    range: Option<Range<u64>>,
) -> io::Result<BoxStream<'static, io::Result<Bytes>>> {
    let start = join(tokio::task::spawn_blocking(move || {
        open_range(&path, range)
    }))
    .await?;
    Ok(
        stream::try_unfold(start, |(mut file, remaining)| async move {
            if remaining == 0 {
                return Ok(None);
            }
            let (file, chunk) = join(tokio::task::spawn_blocking(move || {
                read_chunk(&mut file, remaining).map(|chunk| (file, chunk))
            }))
            .await?;
            let left = remaining - chunk.len() as u64;
            Ok(Some((chunk, (file, left))))
        })
        .boxed(),
    )
}

/// The result of a blocking-pool task (a panicked or cancelled task is an I/O error).
async fn join<T>(task: JoinHandle<io::Result<T>>) -> io::Result<T> {
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
            join(tokio::task::spawn_blocking(move || create(&staging))).await?
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

#[cfg(test)]
mod tests {
    use futures::TryStreamExt;

    use super::*;

    fn scratch(name: &str, data: &[u8]) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("stow-local-{}", ulid::Ulid::new()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        fs::write(&path, data).unwrap();
        (dir, path)
    }

    async fn chunks(path: &Path, range: Option<Range<u64>>) -> io::Result<Vec<Bytes>> {
        read(path.to_path_buf(), range).await?.try_collect().await
    }

    #[tokio::test]
    async fn reads_whole_files_in_chunks_of_the_read_size() {
        const C: usize = READ_CHUNK_BYTES;
        for size in [0, 1, C - 1, C, C + 1, 3 * C + 7] {
            let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let (dir, path) = scratch("whole", &data);
            let got = chunks(&path, None).await.unwrap();
            assert_eq!(got.len(), size.div_ceil(C), "chunks for {size} bytes");
            assert!(got.iter().all(|c| !c.is_empty() && c.len() <= C));
            assert_eq!(got.concat(), data, "{size} bytes");
            fs::remove_dir_all(dir).unwrap();
        }
    }

    #[tokio::test]
    async fn reads_ranges_across_chunk_boundaries() {
        const C: u64 = READ_CHUNK_BYTES as u64;
        let data: Vec<u8> = (0..2 * C + 5).map(|i| (i % 253) as u8).collect();
        let (dir, path) = scratch("ranges", &data);
        let len = data.len() as u64;
        for r in [
            0..1,
            2..9,
            C - 2..C + 3,
            C..2 * C,
            1..len,
            len - 1..len,
            0..len,
        ] {
            let got = chunks(&path, Some(r.clone())).await.unwrap().concat();
            assert_eq!(got, data[r.start as usize..r.end as usize], "{r:?}");
        }
        fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn missing_files_and_ranges_past_the_end_fail_before_any_byte() {
        let (dir, path) = scratch("short", b"0123456789");
        let missing = chunks(&dir.join("nope"), None).await.unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let directory = chunks(&dir, None).await.unwrap_err();
        assert_eq!(directory.kind(), io::ErrorKind::NotFound);
        for r in [0..11, 10..11, 20..30] {
            let e = read(path.clone(), Some(r.clone())).await.err();
            assert_eq!(
                e.map(|e| e.kind()),
                Some(io::ErrorKind::InvalidInput),
                "{r:?}"
            );
        }
        fs::remove_dir_all(dir).unwrap();
    }

    /// A file that shrinks after it was opened ends the stream with an error: the response's
    /// length was already sent, so a short body must be an error, never a silent truncation.
    #[tokio::test]
    async fn a_file_shorter_than_its_length_is_an_error_not_a_short_body() {
        let (dir, path) = scratch("shrinks", &vec![7u8; READ_CHUNK_BYTES + 10]);
        let mut s = read(path.clone(), None).await.unwrap();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(5)
            .unwrap();
        let first = s.next().await.unwrap();
        assert_eq!(first.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        fs::remove_dir_all(dir).unwrap();
    }
}
