//! [`PgLogs`] as the `LogStore`: batch ingestion goes to the group-commit writers
//! ([`super::writers`]); the reads are in [`super::reads`].

use async_trait::async_trait;
use auth_core::OrgId;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use logs_core::event::Batch;
use logs_core::store::{
    BucketCount, CountQuery, EventQuery, EventRow, FacetQuery, Facets, IngestOutcome, IngestTarget,
    LogStore, NameQuery, PlayerEventsQuery, SearchError, ServerId, TailPage, TailPosition,
    TailQuery,
};

use super::batch_commit::PendingBatch;
use super::{reads, tail, PgLogs};
use crate::db_error;
use crate::schema::usage_counters;

#[async_trait]
impl LogStore for PgLogs {
    async fn ingest(
        &self,
        t: &IngestTarget,
        batch: Batch,
        now: DateTime<Utc>,
    ) -> Result<IngestOutcome, StoreError> {
        self.writers
            .store(PendingBatch {
                target: t.clone(),
                batch,
                now,
            })
            .await
    }

    async fn query(&self, q: &EventQuery) -> Result<Vec<EventRow>, SearchError> {
        reads::query(&mut self.db.conn().await?, q).await
    }

    async fn counts(&self, q: &CountQuery) -> Result<Vec<BucketCount>, SearchError> {
        reads::counts(&mut self.db.conn().await?, q).await
    }

    async fn facets(&self, q: &FacetQuery) -> Result<Facets, SearchError> {
        reads::facets(&mut self.db.conn().await?, q).await
    }

    async fn named(&self, q: &NameQuery) -> Result<Vec<EventRow>, SearchError> {
        super::names::named(&mut self.db.conn().await?, q).await
    }

    async fn player_events(&self, q: &PlayerEventsQuery) -> Result<Vec<EventRow>, StoreError> {
        super::player_events::player_events(&mut self.db.conn().await?, q).await
    }

    async fn tail_start(&self, _server: &ServerId) -> Result<TailPosition, StoreError> {
        tail::tail_start(&mut self.db.conn().await?).await
    }

    async fn tail(&self, q: &TailQuery) -> Result<TailPage, StoreError> {
        tail::tail(&mut self.db.conn().await?, q).await
    }

    async fn tail_batch_time(
        &self,
        server: &ServerId,
        seq: i64,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        tail::tail_batch_time(&mut self.db.conn().await?, server, seq).await
    }

    async fn monthly_usage(&self, org_id: &OrgId, now: DateTime<Utc>) -> Result<i64, StoreError> {
        let mut conn = self.db.conn().await?;
        let month = chrono::NaiveDate::from_ymd_opt(
            chrono::Datelike::year(&now),
            chrono::Datelike::month(&now),
            1,
        )
        .ok_or_else(|| StoreError::Internal("bad month".into()))?;
        usage_counters::table
            .find((org_id.as_str(), month))
            .select(usage_counters::log_events)
            .first(&mut conn)
            .await
            .optional()
            .map(|v| v.unwrap_or(0))
            .map_err(db_error)
    }

    async fn last_batches(
        &self,
        servers: &[ServerId],
    ) -> Result<std::collections::HashMap<ServerId, DateTime<Utc>>, StoreError> {
        super::last_batches::last_batches(&self.db, servers).await
    }
}
