//! [`ObjectWriter`]: one new object streamed into the store, invisible until it is finished.

use bytes::Bytes;
use object_store::path::Path;
use object_store::{PutMultipartOpts, PutOptions, PutPayload, WriteMultipart};

use crate::error::local_error;
use crate::{local, Objects, ObjectsError, PART_SIZE, SINGLE_PUT_LIMIT};

/// Where an [`ObjectWriter`]'s bytes go once they outgrow its buffer.
enum Sink {
    /// Still buffering (small bodies are written with one `put`).
    Buffer,
    /// Remote stores: `object_store`'s multipart upload.
    Multipart(WriteMultipart),
    /// The local filesystem: streamed and flushed as it arrives ([`local::Upload`]).
    Local(local::Upload),
}

/// Streams one new object into the store; nothing is visible until [`ObjectWriter::finish`].
pub struct ObjectWriter {
    objects: Objects,
    location: Path,
    content_type: Option<String>,
    /// Chunks as received (no copy) until the body outgrows a single `put`.
    buffer: Vec<Bytes>,
    buffered: usize,
    sink: Sink,
    written: u64,
}

impl ObjectWriter {
    pub(crate) fn new(objects: Objects, location: Path, content_type: Option<String>) -> Self {
        Self {
            objects,
            location,
            content_type,
            buffer: Vec::new(),
            buffered: 0,
            sink: Sink::Buffer,
            written: 0,
        }
    }

    pub fn location(&self) -> &Path {
        &self.location
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// Updates the content type recorded with the object (S3 only) before the upload starts.
    pub fn set_content_type(&mut self, content_type: Option<String>) {
        self.content_type = content_type;
    }

    /// Appends a chunk. The chunk is kept by reference, never copied.
    pub async fn write(&mut self, chunk: Bytes) -> Result<(), ObjectsError> {
        self.written += chunk.len() as u64;
        let objects = &self.objects;
        match &mut self.sink {
            Sink::Multipart(mp) => {
                objects
                    .bounded(async { mp.wait_for_capacity(4).await.map_err(ObjectsError::from) })
                    .await?;
                mp.put(chunk);
                return Ok(());
            }
            Sink::Local(upload) => {
                return objects
                    .bounded(async { upload.write(chunk).await.map_err(local_error) })
                    .await;
            }
            Sink::Buffer => {}
        }
        self.buffered += chunk.len();
        self.buffer.push(chunk);
        let limit = if objects.local.is_some() {
            local::BATCH_BYTES
        } else {
            SINGLE_PUT_LIMIT
        };
        if self.buffered > limit {
            self.sink = self.start_streaming().await?;
        }
        Ok(())
    }

    /// Opens the sink for a body too large to buffer and hands it what was buffered.
    async fn start_streaming(&mut self) -> Result<Sink, ObjectsError> {
        let buffered = std::mem::take(&mut self.buffer);
        self.buffered = 0;
        if let Some(file) = self.objects.local_file(&self.location) {
            let file = file?;
            let mut upload = self
                .objects
                .timed_io(async { local::Upload::start(file).await.map_err(local_error) })
                .await?;
            for chunk in buffered {
                self.objects
                    .bounded(async { upload.write(chunk).await.map_err(local_error) })
                    .await?;
            }
            return Ok(Sink::Local(upload));
        }
        let opts = PutMultipartOpts {
            attributes: self.objects.attributes(self.content_type.as_deref()),
            ..Default::default()
        };
        let upload = self
            .objects
            .timed(self.objects.store.put_multipart_opts(&self.location, opts))
            .await?;
        let mut mp = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
        for chunk in buffered {
            mp.put(chunk);
        }
        Ok(Sink::Multipart(mp))
    }

    /// Completes the object. On error nothing is visible at the location.
    pub async fn finish(self) -> Result<(), ObjectsError> {
        let objects = self.objects;
        let result = match self.sink {
            Sink::Multipart(mp) => objects.timed(mp.finish()).await.map(drop),
            Sink::Local(upload) => {
                objects
                    .timed_io(async { upload.finish().await.map_err(local_error) })
                    .await
            }
            Sink::Buffer => match objects.local_file(&self.location) {
                Some(file) => objects.put_local(file?, self.buffer).await,
                None => {
                    let opts = PutOptions {
                        attributes: objects.attributes(self.content_type.as_deref()),
                        ..Default::default()
                    };
                    let payload: PutPayload = self.buffer.into_iter().collect();
                    objects
                        .timed(objects.store.put_opts(&self.location, payload, opts))
                        .await
                        .map(drop)
                }
            },
        };
        if result.is_ok() {
            objects.wrote();
        }
        result
    }

    /// Abandons the object; any staged bytes are removed.
    pub async fn abort(self) {
        match self.sink {
            Sink::Multipart(mp) => {
                if let Err(e) = mp.abort().await {
                    tracing::warn!(error = %e, location = %self.location, "aborting multipart upload failed");
                }
            }
            Sink::Local(upload) => upload.abort().await,
            Sink::Buffer => {}
        }
    }
}
