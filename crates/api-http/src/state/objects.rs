//! What the object routes share on the state: a stored record in its wire shapes, and the commit of
//! a staged upload.

use super::*;

/// Rows in their wire shapes, and the upload commit.
impl ApiState {
    pub fn uploaded(&self, slug: &str, r: &ObjectRecord) -> UploadedObject {
        UploadedObject {
            key: r.key.to_string(),
            size: r.size,
            content_type: r.content_type.clone(),
            etag: r.etag.clone(),
            public_url: self.public_url(slug, &r.key),
            metadata: r.metadata.clone(),
        }
    }

    pub fn listed(&self, slug: &str, r: &ObjectRecord) -> ListedObject {
        ListedObject {
            key: r.key.to_string(),
            size: r.size,
            content_type: r.content_type.clone(),
            etag: r.etag.clone(),
            last_modified: r
                .last_modified
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            metadata: r.metadata.clone(),
            public_url: self.public_url(slug, &r.key),
        }
    }

    /// Commits a placed file: the row switches to the new bytes in one statement, then the bytes
    /// it replaced are removed. Until the commit nothing is visible; after it, the object is
    /// complete.
    pub async fn commit(
        &self,
        org_id: &OrgId,
        file: &StagedFile,
        placement: Placement,
        metadata: Metadata,
        guard: &mut StageGuard,
        existing: Existing,
    ) -> Result<ObjectRecord, ApiError> {
        let location = file
            .location
            .clone()
            .ok_or_else(|| ApiError::internal("commit of a file that was not stored"))?;
        let now = Utc::now().trunc_subsecs(3);
        let record = ObjectRecord {
            key: placement.key,
            size: file.size as i64,
            content_type: Some(placement.content_type),
            etag: file.etag(),
            metadata,
            storage_path: location.to_string(),
            last_modified: now,
            created_at: now,
            keep: false,
        };
        let replaced = match existing {
            Existing::Replace => self.stores.records.upsert(org_id, &record).await?,
            Existing::Keep => {
                if !self.stores.records.create(org_id, &record).await? {
                    // the staged bytes stay pending in the guard, which removes them
                    return Err(ApiError::new(
                        Code::PreconditionFailed,
                        format!(
                            "an object already has the key `{}` and `If-None-Match: *` asks to \
                             create only; nothing was stored or replaced",
                            record.key
                        ),
                    ));
                }
                None
            }
        };
        self.forget_row(org_id, &record.key);
        metrics::counter!("cdn_uploaded_bytes_total").increment(file.size);
        metrics::counter!("cdn_uploaded_objects_total").increment(1);
        guard.keep(&location);
        if let Some(old) = replaced.filter(|old| *old != record.storage_path) {
            let objects = self.blobs.clone();
            tokio::spawn(async move {
                if let Err(e) = objects
                    .delete(&stow_objects::ObjectPath::from(old.as_str()))
                    .await
                {
                    tracing::warn!(error = %e, location = %old, "removing replaced bytes failed; `stowctl gc` will");
                }
            });
        }
        Ok(record)
    }
}
