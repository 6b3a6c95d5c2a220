//! The delivery worker: leases due deliveries, sends each in a task of its own (a receiver
//! that hangs holds only its own deliveries), records the answer. Every instance of the logs
//! host runs one; leases keep them from sending a delivery twice at once.
//!
//! A task that delivered goes on with the next delivery of the same queue (rule and
//! destination) at once, so a queue drains as fast as its receiver answers, in order; the poll
//! only starts queues. A lease is short and renewed while its request is in flight, so the
//! deliveries of a worker that died are taken again within [`LEASE`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use auth_core::second_factor::SealKey;
use chrono::{DateTime, Utc};
use logs_core::alert_delivery::{backoff, Allow, RateLimit};
use logs_core::alert_messages::{discord_message, ConsoleLinks, Firing};
use logs_core::alert_queue::{AlertQueue, Attempt, Leased};
use logs_core::alert_store::DestinationKind;
use rand::Rng;
use tokio::sync::Semaphore;

use crate::{Client, Secrets};

/// Deliveries in flight at once per instance.
const IN_FLIGHT: usize = 64;
/// Firings of one rule sent in one Discord message when they queued up behind each other.
const DISCORD_MERGE: usize = 50;
/// Finished deliveries (and their firings) are kept this long for the delivery log.
pub const KEEP_FINISHED: chrono::Duration = chrono::Duration::days(7);

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub allow: Allow,
    /// The console's public address, for links in messages.
    pub console_url: String,
    /// How often the outbox is looked at.
    pub poll: Duration,
    /// Opens destinations' secrets (`SECOND_FACTOR_KEY`); without it nothing can be sent.
    pub key: Option<SealKey>,
}

pub struct Worker {
    alerts: Arc<dyn AlertQueue>,
    client: Client,
    config: WorkerConfig,
    /// Discord's global rate limit: no Discord message before this.
    discord_hold: Mutex<Option<DateTime<Utc>>>,
}

/// How long a lease holds without renewal: the deliveries of a worker killed mid-request are
/// taken again after at most this.
pub const LEASE: Duration = Duration::from_secs(6);
/// How often a lease is renewed while its request is in flight.
const RENEW_EVERY: Duration = Duration::from_secs(2);

fn lease() -> chrono::Duration {
    chrono::Duration::from_std(LEASE).unwrap_or_default()
}

impl Worker {
    pub fn new(alerts: Arc<dyn AlertQueue>, config: WorkerConfig) -> Result<Self, String> {
        Ok(Self {
            client: Client::new(config.allow)?,
            alerts,
            config,
            discord_hold: Mutex::new(None),
        })
    }

    /// Runs until the process ends.
    pub fn spawn(self: Arc<Self>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let slots = Arc::new(Semaphore::new(IN_FLIGHT));
            let mut last_prune: Option<DateTime<Utc>> = None;
            loop {
                let now = Utc::now();
                if last_prune.is_none_or(|t| now - t > chrono::Duration::minutes(10)) {
                    last_prune = Some(now);
                    if let Err(e) = self.alerts.prune(now, KEEP_FINISHED).await {
                        tracing::warn!(error = %e, "alert outbox pruning failed");
                    }
                }
                let free = slots.available_permits();
                if free > 0 {
                    match self.alerts.lease_due(free, now, lease()).await {
                        Ok(leased) => {
                            for l in leased {
                                let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                                    return;
                                };
                                let me = Arc::clone(&self);
                                tokio::spawn(async move {
                                    me.drain(l).await;
                                    drop(slot);
                                });
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "alert outbox unavailable"),
                    }
                }
                tokio::time::sleep(self.config.poll).await;
            }
        })
    }

    /// Delivers `head`, then the deliveries queued behind it in its queue, one after another,
    /// until one fails or is held back, or the queue has nothing due.
    async fn drain(&self, head: Leased) {
        let mut next = Some(head);
        while let Some(l) = next.take() {
            let Some(last) = self.deliver(l).await else {
                return;
            };
            match self.alerts.lease_next(&last, Utc::now(), lease()).await {
                Ok(found) => next = found,
                // the next poll starts the queue again
                Err(e) => tracing::warn!(error = %e, "alert outbox unavailable"),
            }
        }
    }

    /// Sends one leased delivery (with, to Discord, the firings of its rule queued behind it)
    /// and records the answer; the last delivery sent when they were delivered.
    async fn deliver(&self, head: Leased) -> Option<Leased> {
        let kind = DestinationKind::parse(&head.kind).unwrap_or(DestinationKind::Webhook);
        let mut batch = vec![head];
        let now = Utc::now();
        let secrets = match &self.config.key {
            None => Err(
                "SECOND_FACTOR_KEY is not set: destinations' secrets cannot be opened".to_owned(),
            ),
            Some(key) => {
                Secrets::open(key, &batch[0].destination_id, &batch[0].sealed).map_err(|_| {
                    "the destination's secrets do not open with this SECOND_FACTOR_KEY".to_owned()
                })
            }
        };
        let secrets = match secrets {
            Ok(s) => s,
            Err(error) => {
                self.record(
                    &batch,
                    Attempt::Failed {
                        code: None,
                        error,
                        retry_at: self.retry_at(&batch[0], now),
                    },
                    now,
                )
                .await;
                return None;
            }
        };
        if kind == DestinationKind::Discord {
            if let Some(until) = self.discord_held(now) {
                self.record(&batch, Attempt::Held { until }, now).await;
                return None;
            }
            let every =
                batch[0].rule_id.is_some() && firing(&batch[0]).is_some_and(|f| f.breach.is_none());
            if every {
                match self
                    .alerts
                    .lease_behind(&batch[0], DISCORD_MERGE - 1, now, lease())
                    .await
                {
                    Ok(behind) => batch.extend(behind),
                    Err(e) => tracing::warn!(error = %e, "alert outbox unavailable"),
                }
            }
        }
        let body = self.body(kind, &batch);
        let answer = self
            .renewing(&batch, self.client.send(kind, &secrets, &batch[0].id, body))
            .await;
        let now = Utc::now();
        let attempt = match answer.rate {
            RateLimit::Limited { wait, global } => {
                let until = now + wait;
                if global {
                    *self.discord_hold.lock().unwrap_or_else(|e| e.into_inner()) = Some(until);
                }
                Attempt::Held { until }
            }
            _ if answer.delivered() => {
                if let RateLimit::Drained(wait) = answer.rate {
                    if let Err(e) = self.alerts.hold(&batch[0].destination_id, now + wait).await {
                        tracing::warn!(error = %e, "could not record a Discord rate limit");
                    }
                }
                Attempt::Delivered {
                    code: i32::from(answer.status.unwrap_or(200)),
                }
            }
            _ => Attempt::Failed {
                code: answer.status.map(i32::from),
                error: answer.error.unwrap_or_else(|| "failed".into()),
                retry_at: self.retry_at(&batch[0], now),
            },
        };
        let delivered = matches!(attempt, Attempt::Delivered { .. });
        self.record(&batch, attempt, now).await;
        delivered.then(|| batch.pop()).flatten()
    }

    /// Runs `send` while renewing the lease of `batch` every [`RENEW_EVERY`].
    async fn renewing<T>(&self, batch: &[Leased], send: impl std::future::Future<Output = T>) -> T {
        let seqs: Vec<i64> = batch.iter().map(|l| l.seq).collect();
        tokio::pin!(send);
        let mut tick = tokio::time::interval(RENEW_EVERY);
        tick.tick().await; // the first tick is at once; the lease is fresh
        loop {
            tokio::select! {
                out = &mut send => return out,
                _ = tick.tick() => {
                    if let Err(e) = self.alerts.renew(&seqs, Utc::now() + lease()).await {
                        // the lease may run out: another worker may send it again, same id
                        tracing::warn!(error = %e, "could not renew an alert delivery's lease");
                    }
                }
            }
        }
    }

    fn discord_held(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let hold = *self.discord_hold.lock().unwrap_or_else(|e| e.into_inner());
        hold.filter(|until| *until > now)
    }

    fn retry_at(&self, l: &Leased, now: DateTime<Utc>) -> DateTime<Utc> {
        now + backoff(l.attempts, rand::thread_rng().gen::<f64>())
    }

    /// The request body: Discord's message, or the firing with its delivery's id.
    fn body(&self, kind: DestinationKind, batch: &[Leased]) -> Vec<u8> {
        let now = Utc::now();
        let firings: Vec<Firing> = batch
            .iter()
            .map(|l| firing(l).unwrap_or_else(|| Firing::test(now)))
            .collect();
        let json = match kind {
            DestinationKind::Discord => {
                discord_message(&firings, &ConsoleLinks(&self.config.console_url)).to_json()
            }
            DestinationKind::Webhook => {
                let mut v = serde_json::to_value(&firings[0]).unwrap_or_default();
                v["deliveryId"] = batch[0].id.clone().into();
                v
            }
        };
        serde_json::to_vec(&json).unwrap_or_default()
    }

    async fn record(&self, batch: &[Leased], attempt: Attempt, now: DateTime<Utc>) {
        let outcome = match &attempt {
            Attempt::Delivered { .. } => "delivered",
            Attempt::Failed { .. } => "failed",
            Attempt::Held { .. } => "held",
        };
        metrics::counter!("alerts_delivery_attempts_total", "outcome" => outcome)
            .increment(batch.len() as u64);
        let seqs: Vec<i64> = batch.iter().map(|l| l.seq).collect();
        if let Err(e) = self
            .alerts
            .finish(&seqs, &batch[0].destination_id, &attempt, now)
            .await
        {
            // the lease runs out and the delivery is sent again, with the same id
            tracing::warn!(error = %e, "could not record an alert delivery's answer");
        }
    }
}

/// The firing a delivery sends (`None`: a test message).
fn firing(l: &Leased) -> Option<Firing> {
    l.body.clone().and_then(|b| serde_json::from_value(b).ok())
}
