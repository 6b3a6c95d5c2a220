//! Group commit: `ingest` calls queue their batches, and a few writer tasks each take every
//! batch waiting (up to a bound) and store them in one transaction
//! ([`super::batch_commit::store_group`]). A caller is answered only after the transaction
//! holding its batch has committed, and a batch is never split across transactions.
//!
//! Why: on a database with few cores, many concurrent one-batch transactions cost Postgres
//! more CPU per event (they write the same index pages and hourly-count rows) and each adds its
//! own round trips, while few one-batch transactions leave it idle between statements. Two
//! writers with several batches each keep it busy at the lower cost (docs/benchmarks.md,
//! analysis of ingestion).
//!
//! The writers run on a thread of their own, started by the first `ingest` call and started
//! again if every writer has ended (a panic): a caller never waits on a queue nobody reads.

use std::sync::{Arc, Mutex};

use auth_core::{Cause, StoreError};
use logs_core::store::IngestOutcome;
use tokio::sync::{mpsc, oneshot};

use super::alerts::RuleCache;
use super::batch_commit::{store_group, PendingBatch};
use crate::Db;

/// Writer transactions at once.
pub const WRITERS: usize = 2;
/// A group stops taking batches once it holds this many events (the last one taken may pass it
/// by up to one batch).
const GROUP_EVENTS: usize = 2_000;
/// ... or this many batches.
const GROUP_BATCHES: usize = 16;

type Answer = Result<IngestOutcome, StoreError>;

struct Queued {
    pending: PendingBatch,
    reply: oneshot::Sender<Answer>,
}

pub(super) struct Writers {
    db: Db,
    rules: Arc<RuleCache>,
    count: usize,
    queue: Mutex<Option<mpsc::UnboundedSender<Queued>>>,
}

impl Writers {
    pub fn new(db: Db, rules: Arc<RuleCache>, count: usize) -> Self {
        Self {
            db,
            rules,
            count: count.max(1),
            queue: Mutex::new(None),
        }
    }

    /// Queues the batch and waits for the answer of the transaction that stored it.
    pub async fn store(&self, pending: PendingBatch) -> Answer {
        let (reply, answer) = oneshot::channel();
        let mut queued = Queued { pending, reply };
        // a queue whose writers have all ended is replaced once
        for _ in 0..2 {
            match self.sender().send(queued) {
                Ok(()) => break,
                Err(mpsc::error::SendError(back)) => queued = back,
            }
        }
        answer.await.unwrap_or_else(|_| {
            Err(StoreError::Unavailable(Cause::from(
                "the batch writer stopped before answering",
            )))
        })
    }

    fn sender(&self) -> mpsc::UnboundedSender<Queued> {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = queue.as_ref().filter(|tx| !tx.is_closed()) {
            return tx.clone();
        }
        let (tx, rx) = mpsc::unbounded_channel();
        if let Err(e) = self.start(rx) {
            // the receiver is gone with the failed start: this call and the next are answered
            // unavailable, and the next starts again
            tracing::error!(error = %e, "could not start the log batch writers");
        }
        *queue = Some(tx.clone());
        tx
    }

    /// Starts the writers on a thread of their own, with a pool of their own whose
    /// connections are made (and so driven) there: their round trips never wait behind the
    /// HTTP workers' parsing.
    fn start(&self, rx: mpsc::UnboundedReceiver<Queued>) -> Result<(), Cause> {
        let db = self
            .db
            .sibling(self.count)
            .map_err(|e| Cause::context("writer pool", e))?;
        let count = self.count;
        let rules = Arc::clone(&self.rules);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Cause::context("writer runtime", e))?;
        std::thread::Builder::new()
            .name("log-writers".into())
            .spawn(move || {
                let rx = Arc::new(tokio::sync::Mutex::new(rx));
                runtime.block_on(async move {
                    let tasks: Vec<_> = (0..count)
                        .map(|_| tokio::spawn(write(db.clone(), rules.clone(), rx.clone())))
                        .collect();
                    drop(rx);
                    for task in tasks {
                        if let Err(e) = task.await {
                            tracing::error!(error = %e, "a log batch writer ended");
                        }
                    }
                });
            })
            .map(|_| ())
            .map_err(|e| Cause::context("writer thread", e))
    }
}

/// One writer: takes the first batch waiting and what queued behind it, stores them together,
/// answers each caller; until the queue is dropped.
async fn write(
    db: Db,
    rules: Arc<RuleCache>,
    queue: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Queued>>>,
) {
    loop {
        let group = {
            let mut queue = queue.lock().await;
            let Some(first) = queue.recv().await else {
                return;
            };
            let mut events = first.pending.batch.events.len();
            let mut group = vec![first];
            while group.len() < GROUP_BATCHES && events < GROUP_EVENTS {
                let Ok(next) = queue.try_recv() else { break };
                events += next.pending.batch.events.len();
                group.push(next);
            }
            group
        };
        metrics::histogram!("logs_ingest_group_batches").record(group.len() as f64);
        let (batches, replies): (Vec<PendingBatch>, Vec<_>) =
            group.into_iter().map(|q| (q.pending, q.reply)).unzip();
        let answers = store_group(&db, &rules, &batches).await;
        for (reply, answer) in replies.into_iter().zip(answers) {
            // a caller that went away (its client disconnected) finds the batch stored on retry
            let _ = reply.send(answer);
        }
    }
}
