//! Object-store adapter over `object_store`: local filesystem (default), `memory://` and
//! `s3://bucket` (S3-compatible, configured by the usual `AWS_*` variables, `AWS_ENDPOINT` for
//! an endpoint override).
//!
//! Bytes are always written to a fresh location (`o/<org>/<ulid>`), never over a live object:
//! the database row is switched to the new location only once the bytes are complete, so a
//! reader never sees a partial object. Nothing is visible at a location before
//! [`ObjectWriter::finish`] returns.
//!
//! On S3 (and `memory://`) small bodies are buffered and written with one `put`; larger ones
//! stream through `object_store`'s multipart upload, invisible until completed. On the local
//! filesystem, writes go through the `local` module instead of `object_store`: it stages the file beside
//! its location, writes it while it arrives, flushes it with `fsync` (which `object_store`'s local
//! backend never does) and renames it into place. Reads, listings and deletes use `object_store`
//! on every backend. Memory per upload stays bounded either way.
//!
//! Durable before acknowledged: [`ObjectWriter::finish`] and [`Objects::put`] return only once
//! the bytes and the directory entry naming them are on disk; a caller commits its row after.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use auth_core::Cause;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, GetOptions, GetRange, ObjectStore, PutOptions, PutPayload,
};

pub use object_store::path::Path as ObjectPath;

mod error;
mod local;
mod writer;

use error::write_error;
pub use error::ObjectsError;
pub use writer::ObjectWriter;

pub use local::READ_CHUNK_BYTES;

/// On S3, bodies up to this size are written with a single `put`; larger ones use multipart
/// upload. (On local disk, bodies over 1 MiB are streamed to the file as they arrive.)
pub const SINGLE_PUT_LIMIT: usize = 5 * 1024 * 1024;
/// Part size of multipart uploads (S3's minimum part size).
pub const PART_SIZE: usize = 5 * 1024 * 1024;

/// A cloneable handle on the configured store.
#[derive(Clone)]
pub struct Objects {
    store: Arc<dyn ObjectStore>,
    op_timeout: Duration,
    supports_attributes: bool,
    description: String,
    /// Set for the local filesystem backend, whose writes go through the `local` module.
    local: Option<Arc<LocalFileSystem>>,
    /// Set when a write failed for lack of space, cleared by the next write that succeeds (or a
    /// successful [`Objects::probe_space`]): readiness reports the store as degraded meanwhile.
    out_of_space: Arc<AtomicBool>,
}

impl Objects {
    /// Opens `file:///abs/dir` (created when missing), `memory://` or `s3://bucket[/prefix]`.
    pub fn from_url(url: &str) -> Result<Self, ObjectsError> {
        Self::open(url, true)
    }

    /// Like [`Objects::from_url`], but a `file://` directory that does not exist is an error
    /// instead of being created (tools that only read or clean a store the services made).
    pub fn from_existing_url(url: &str) -> Result<Self, ObjectsError> {
        Self::open(url, false)
    }

    fn open(url: &str, create: bool) -> Result<Self, ObjectsError> {
        let parsed =
            url::Url::parse(url).map_err(|e| ObjectsError::Config(format!("{url}: {e}")))?;
        match parsed.scheme() {
            "file" => {
                let dir = parsed
                    .to_file_path()
                    .map_err(|_| ObjectsError::Config(format!("{url}: not an absolute path")))?;
                if !create && !dir.is_dir() {
                    return Err(ObjectsError::Config(format!(
                        "the object store {} does not exist",
                        dir.display()
                    )));
                }
                std::fs::create_dir_all(&dir).map_err(|e| {
                    ObjectsError::Config(format!("creating {}: {e}", dir.display()))
                })?;
                // no automatic cleanup of empty directories: removing one races with an upload
                // creating its file there (one directory per organization is left at most)
                let fs = Arc::new(
                    LocalFileSystem::new_with_prefix(&dir)
                        .map_err(|e| ObjectsError::Config(e.to_string()))?,
                );
                let mut objects = Self::new(
                    Arc::clone(&fs) as Arc<dyn ObjectStore>,
                    false,
                    format!("file://{}", dir.display()),
                );
                objects.local = Some(fs);
                Ok(objects)
            }
            "memory" => Ok(Self::memory()),
            "s3" => {
                let bucket = parsed
                    .host_str()
                    .ok_or_else(|| ObjectsError::Config(format!("{url}: missing bucket")))?;
                let mut builder = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_client_options(
                        object_store::ClientOptions::new()
                            .with_timeout(Duration::from_secs(30))
                            .with_connect_timeout(Duration::from_secs(5))
                            .with_allow_http(true),
                    );
                if let Ok(endpoint) =
                    std::env::var("AWS_ENDPOINT_URL").or_else(|_| std::env::var("AWS_ENDPOINT"))
                {
                    builder = builder.with_endpoint(endpoint);
                }
                let s3 = builder
                    .build()
                    .map_err(|e| ObjectsError::Config(e.to_string()))?;
                let prefix = parsed.path().trim_matches('/');
                let store: Arc<dyn ObjectStore> = if prefix.is_empty() {
                    Arc::new(s3)
                } else {
                    Arc::new(object_store::prefix::PrefixStore::new(s3, prefix))
                };
                Ok(Self::new(store, true, format!("s3://{bucket}")))
            }
            other => Err(ObjectsError::Config(format!(
                "unsupported scheme `{other}` (use file://, memory:// or s3://)"
            ))),
        }
    }

    pub fn memory() -> Self {
        Self::new(Arc::new(InMemory::new()), false, "memory://".into())
    }

    fn new(store: Arc<dyn ObjectStore>, supports_attributes: bool, description: String) -> Self {
        Self {
            store,
            op_timeout: Duration::from_secs(30),
            supports_attributes,
            description,
            out_of_space: Arc::new(AtomicBool::new(false)),
            local: None,
        }
    }

    /// The file behind `location` on the local filesystem backend.
    fn local_file(&self, location: &Path) -> Option<Result<std::path::PathBuf, ObjectsError>> {
        self.local
            .as_ref()
            .map(|fs| fs.path_to_filesystem(location).map_err(Into::into))
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    /// A location nobody has written to.
    pub fn fresh_location(org_id: &str) -> Path {
        Path::from(format!(
            "o/{org_id}/{}",
            ulid::Ulid::new().to_string().to_lowercase()
        ))
    }

    async fn timed<T, F>(&self, fut: F) -> Result<T, ObjectsError>
    where
        F: std::future::Future<Output = Result<T, object_store::Error>>,
    {
        self.timed_io(async { fut.await.map_err(ObjectsError::from) })
            .await
    }

    /// Bounds one step of a streaming write (a chunk, a wait for capacity) by the store timeout.
    /// Not recorded as an operation: the upload's start and finish are.
    async fn bounded<T, F>(&self, fut: F) -> Result<T, ObjectsError>
    where
        F: std::future::Future<Output = Result<T, ObjectsError>>,
    {
        let result = match tokio::time::timeout(self.op_timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(ObjectsError::Unavailable("upload timed out".into())),
        };
        self.note_space(&result);
        result
    }

    /// Raises the out-of-space flag when `result` is a write that failed for lack of space;
    /// every write path reports through here (`timed_io`, `bounded`), so which step of a write
    /// hits the full disk does not matter.
    fn note_space<T>(&self, result: &Result<T, ObjectsError>) {
        if matches!(result, Err(ObjectsError::NoSpace(_)))
            && !self.out_of_space.swap(true, Ordering::Relaxed)
        {
            metrics::gauge!("object_store_out_of_space").set(1.0);
        }
    }

    /// Bounds an operation by the store timeout and records its duration and failures.
    async fn timed_io<T, F>(&self, fut: F) -> Result<T, ObjectsError>
    where
        F: std::future::Future<Output = Result<T, ObjectsError>>,
    {
        let started = std::time::Instant::now();
        let result = match tokio::time::timeout(self.op_timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(ObjectsError::Unavailable("operation timed out".into())),
        };
        self.note_space(&result);
        metrics::histogram!("object_store_operation_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        if matches!(
            result,
            Err(ObjectsError::Unavailable(_) | ObjectsError::Other(_) | ObjectsError::NoSpace(_))
        ) {
            metrics::counter!("object_store_errors_total").increment(1);
        }
        result
    }

    fn attributes(&self, content_type: Option<&str>) -> Attributes {
        let mut attrs = Attributes::new();
        if self.supports_attributes {
            if let Some(ct) = content_type {
                attrs.insert(Attribute::ContentType, ct.to_owned().into());
            }
        }
        attrs
    }

    /// Starts writing a new object at `location`.
    pub fn writer(&self, location: Path, content_type: Option<String>) -> ObjectWriter {
        ObjectWriter::new(self.clone(), location, content_type)
    }

    /// Whether the last write attempt failed for lack of space (and none succeeded since).
    pub fn out_of_space(&self) -> bool {
        self.out_of_space.load(Ordering::Relaxed)
    }

    fn wrote(&self) {
        if self.out_of_space.swap(false, Ordering::Relaxed) {
            metrics::gauge!("object_store_out_of_space").set(0.0);
            tracing::info!(store = %self.description, "object store accepts writes again");
        }
    }

    /// While the store is out of space: writes and removes a one-byte probe, clearing the state
    /// when that works (space was freed with no upload since). True when the store takes writes.
    pub async fn probe_space(&self) -> bool {
        if !self.out_of_space() {
            return true;
        }
        let probe = Path::from("readyz-space-probe");
        if self
            .put(&probe, Bytes::from_static(b"."), None)
            .await
            .is_err()
        {
            return false;
        }
        let _ = self.delete(&probe).await;
        true
    }

    /// Writes a whole body at once.
    pub async fn put(
        &self,
        location: &Path,
        body: Bytes,
        content_type: Option<&str>,
    ) -> Result<(), ObjectsError> {
        let result = match self.local_file(location) {
            Some(file) => self.put_local(file?, vec![body]).await,
            None => {
                let opts = PutOptions {
                    attributes: self.attributes(content_type),
                    ..Default::default()
                };
                self.timed(self.store.put_opts(location, PutPayload::from(body), opts))
                    .await
                    .map(drop)
            }
        };
        if result.is_ok() {
            self.wrote();
        }
        result
    }

    /// A whole local object, written and flushed in one blocking task.
    async fn put_local(
        &self,
        file: std::path::PathBuf,
        chunks: Vec<Bytes>,
    ) -> Result<(), ObjectsError> {
        let task =
            tokio::task::spawn_blocking(move || local::put(&file, &chunks).map_err(|e| (file, e)));
        self.timed_io(async {
            task.await
                .map_err(|e| ObjectsError::Other(Cause::context("write task", e)))?
                .map_err(|(file, e)| write_error(&format!("writing {}", file.display()), e))
        })
        .await
    }

    /// Streams an object (or one byte range of it).
    pub async fn get(
        &self,
        location: &Path,
        range: Option<Range<u64>>,
    ) -> Result<BoxStream<'static, Result<Bytes, ObjectsError>>, ObjectsError> {
        if let Some(file) = self.local_file(location) {
            let file = file?;
            let shown = file.display().to_string();
            let stream = self
                .timed_io(async {
                    local::read(file, range).await.map_err(|e| match e.kind() {
                        std::io::ErrorKind::NotFound => ObjectsError::NotFound,
                        _ => ObjectsError::Other(Cause::context(&format!("reading {shown}"), e)),
                    })
                })
                .await?;
            return Ok(stream
                .map_err(move |e| {
                    ObjectsError::Other(Cause::context(&format!("reading {shown}"), e))
                })
                .boxed());
        }
        let opts = GetOptions {
            range: range.map(|r| GetRange::Bounded(r.start as usize..r.end as usize)),
            ..Default::default()
        };
        let result = self.timed(self.store.get_opts(location, opts)).await?;
        Ok(result.into_stream().map_err(ObjectsError::from).boxed())
    }

    /// Reads an object fully (small objects and tests only).
    pub async fn read_all(&self, location: &Path) -> Result<Bytes, ObjectsError> {
        let result = self.timed(self.store.get(location)).await?;
        self.timed(result.bytes()).await
    }

    pub async fn exists(&self, location: &Path) -> Result<bool, ObjectsError> {
        match self.timed(self.store.head(location)).await {
            Ok(_) => Ok(true),
            Err(ObjectsError::NotFound) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Deletes an object; deleting a missing one is not an error.
    pub async fn delete(&self, location: &Path) -> Result<(), ObjectsError> {
        match self.timed(self.store.delete(location)).await {
            Ok(()) | Err(ObjectsError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every stored location under `prefix`, with its last-modified time (for garbage collection).
    pub fn list(
        &self,
        prefix: &str,
    ) -> BoxStream<'static, Result<(String, chrono::DateTime<chrono::Utc>), ObjectsError>> {
        let prefix = Path::from(prefix);
        let store = Arc::clone(&self.store);
        let (tx, rx) = tokio::sync::mpsc::channel(256);
        tokio::spawn(async move {
            let mut listing = store.list(Some(&prefix));
            while let Some(item) = listing.next().await {
                let item = item
                    .map(|m| (m.location.to_string(), m.last_modified))
                    .map_err(ObjectsError::from);
                if tx.send(item).await.is_err() {
                    break;
                }
            }
        });
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|i| (i, rx)) })
            .boxed()
    }

    /// Reachability probe for `/readyz`: a HEAD of a name that never exists.
    pub async fn ping(&self) -> Result<(), ObjectsError> {
        match self
            .timed(self.store.head(&Path::from("readyz-probe")))
            .await
        {
            Ok(_) | Err(ObjectsError::NotFound) => Ok(()),
            Err(e) => Err(ObjectsError::Unavailable(Cause::from_error(e))),
        }
    }
}

#[cfg(test)]
mod tests;
