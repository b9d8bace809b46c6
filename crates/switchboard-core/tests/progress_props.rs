//! Property test: random sequences of emitter calls, valid and invalid,
//! across several trackers, run by a real agent in a real
//! [`RequestHandler`] on a paused clock.
//!
//! A small model predicts which calls must be accepted and which refused.
//! Then the task's event log is read back and every progress snapshot must
//! be valid for our validator *and* for the normative JSON Schema, progress
//! must never go down per tracker, a finished tracker must keep appearing
//! with its final values until it makes room for a new one (and never come
//! back after), no value from a refused call may ever appear, and after the
//! final flush the last snapshot must show exactly the model's running
//! trackers with their latest values, and every tracker started, up to
//! `maxTrackers`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../switchboard-protocol/tests/schema/mod.rs"]
mod schema;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use schema::progress_schema;
use serde_json::Value;
use switchboard_core::progress::{ProgressEmitter, Tracker};
use switchboard_core::store::conformance::fixtures::log_of;
use switchboard_core::{RequestHandler, agent_fn};
use switchboard_protocol::progress::*;
use switchboard_protocol::{AgentCard, StreamResponse};

const SLOTS: usize = 5;
const MAX_TRACKERS: usize = 3;
const MAX_MSG: usize = 16;
const MAX_ID: usize = 8;

#[derive(Debug, Clone)]
enum Op {
    Start(Start),
    StartBadId {
        long: bool,
    },
    /// An update of the tracker started in `slot` (if one was).
    Update {
        slot: usize,
        update: Update,
    },
    Sleep {
        ms: u16,
    },
    Flush,
}

/// Start a tracker in `slot` (its id is [`id`]`(slot)`).
#[derive(Debug, Clone, Copy)]
struct Start {
    slot: usize,
    total: Option<u16>,
    initial: u16,
    msg_len: usize,
}

#[derive(Debug, Clone, Copy)]
enum Update {
    Set(u16),
    Advance(i16),
    SetTotal(u16),
    /// A message of this many characters.
    Message(usize),
    SetNan,
    Complete,
    /// Fail with a message of this many characters.
    Fail(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let slot = 0..SLOTS;
    let update = prop_oneof![
        6 => (0u16..70).prop_map(Update::Set),
        4 => (-3i16..12).prop_map(Update::Advance),
        1 => (0u16..80).prop_map(Update::SetTotal),
        2 => (0usize..20).prop_map(Update::Message),
        1 => Just(Update::SetNan),
        2 => Just(Update::Complete),
        1 => (0usize..30).prop_map(Update::Fail),
    ];
    prop_oneof![
        3 => (slot.clone(), prop::option::weighted(0.7, 0u16..60), 0u16..40, 0usize..20)
            .prop_map(|(slot, total, initial, msg_len)| Op::Start(Start { slot, total, initial, msg_len })),
        1 => any::<bool>().prop_map(|long| Op::StartBadId { long }),
        // As likely as each update kind was as an op of its own.
        17 => (slot, update).prop_map(|(slot, update)| Op::Update { slot, update }),
        3 => (0u16..1500).prop_map(|ms| Op::Sleep { ms }),
        1 => Just(Op::Flush),
    ]
}

fn id(slot: usize) -> String {
    format!("t{slot}")
}

fn text(len: usize) -> String {
    "m".repeat(len)
}

/// What the model knows about one slot.
#[derive(Debug, Clone, PartialEq)]
enum Slot {
    Never,
    Active {
        progress: f64,
        total: Option<f64>,
    },
    Done {
        status: TrackerStatus,
        progress: f64,
        total: Option<f64>,
    },
}

#[derive(Debug)]
struct Model {
    slots: Vec<Slot>,
    /// Every progress / total / message value ever accepted, per slot.
    progress_seen: Vec<HashSet<u64>>,
    totals_seen: Vec<HashSet<u64>>,
    messages_seen: Vec<HashSet<String>>,
}

impl Model {
    fn new() -> Self {
        Model {
            slots: vec![Slot::Never; SLOTS],
            progress_seen: vec![HashSet::new(); SLOTS],
            totals_seen: vec![HashSet::new(); SLOTS],
            messages_seen: vec![HashSet::new(); SLOTS],
        }
    }

    fn active(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| matches!(s, Slot::Active { .. }))
            .count()
    }

    fn accept_progress(&mut self, slot: usize, p: f64) {
        self.progress_seen[slot].insert(p.to_bits());
    }

    /// `None`: the op is not applicable (no handle); otherwise whether the
    /// emitter must accept it.
    fn step(&mut self, op: &Op, limits: &ProgressLimits) -> Option<bool> {
        match *op {
            Op::Start(Start {
                slot,
                total,
                initial,
                msg_len,
            }) => {
                let total = total.map(f64::from);
                let initial = f64::from(initial);
                let ok = self.slots[slot] == Slot::Never
                    && self.active() < MAX_TRACKERS
                    && total.is_none_or(|t| initial <= t)
                    && msg_len <= limits.max_message_chars;
                if ok {
                    self.slots[slot] = Slot::Active {
                        progress: initial,
                        total,
                    };
                    self.accept_progress(slot, initial);
                    if let Some(t) = total {
                        self.totals_seen[slot].insert(t.to_bits());
                    }
                    self.messages_seen[slot].insert(text(msg_len));
                }
                Some(ok)
            }
            Op::StartBadId { .. } => Some(false),
            Op::Sleep { .. } | Op::Flush => Some(true),
            Op::Update { slot, update } => {
                let (progress, total) = match self.slots[slot] {
                    Slot::Never => return None,
                    Slot::Done { .. } => return Some(false),
                    Slot::Active { progress, total } => (progress, total),
                };
                let within = |p: f64| p >= progress && total.is_none_or(|t| p <= t);
                let next = match update {
                    Update::Set(value) => {
                        let v = f64::from(value);
                        within(v).then_some(Slot::Active { progress: v, total })
                    }
                    Update::Advance(delta) => {
                        let v = progress + f64::from(delta);
                        (delta >= 0 && within(v)).then_some(Slot::Active { progress: v, total })
                    }
                    Update::SetTotal(t) => {
                        let t = f64::from(t);
                        (t >= progress).then(|| {
                            self.totals_seen[slot].insert(t.to_bits());
                            Slot::Active {
                                progress,
                                total: Some(t),
                            }
                        })
                    }
                    Update::Message(len) => (len <= limits.max_message_chars).then(|| {
                        self.messages_seen[slot].insert(text(len));
                        Slot::Active { progress, total }
                    }),
                    Update::SetNan => None,
                    Update::Complete => Some(Slot::Done {
                        status: TrackerStatus::Completed,
                        progress: total.unwrap_or(progress),
                        total,
                    }),
                    Update::Fail(len) => {
                        let mut m = text(len);
                        if len > limits.max_message_chars {
                            m = format!("{}…", text(limits.max_message_chars - 1));
                        }
                        self.messages_seen[slot].insert(m);
                        Some(Slot::Done {
                            status: TrackerStatus::Failed,
                            progress,
                            total,
                        })
                    }
                };
                match next {
                    Some(s) => {
                        if let Slot::Active { progress, .. } | Slot::Done { progress, .. } = s {
                            self.accept_progress(slot, progress);
                        }
                        self.slots[slot] = s;
                        Some(true)
                    }
                    None => Some(false),
                }
            }
        }
    }
}

/// Runs the ops in an agent; returns each op's outcome (`None`: skipped)
/// and the raw progress entries of the task's log, in order.
async fn execute(ops: Vec<Op>, limits: ProgressLimits) -> (Vec<Option<bool>>, Vec<Value>) {
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let out = outcomes.clone();
    let ops = Arc::new(ops);
    let agent_limits = limits.clone();
    let agent = agent_fn(move |_ctx, events| {
        let ops = ops.clone();
        let out = out.clone();
        let limits = agent_limits.clone();
        async move {
            let p = ProgressEmitter::new(events, limits);
            let mut handles: Vec<Option<Tracker>> = vec![None; SLOTS];
            for op in ops.iter() {
                let r: Option<bool> = match op {
                    Op::Start(start) => {
                        let mut b = p
                            .tracker(id(start.slot))
                            .progress(start.initial)
                            .message(text(start.msg_len));
                        if let Some(t) = start.total {
                            b = b.total(t);
                        }
                        match b.start().await {
                            Ok(t) => {
                                handles[start.slot] = Some(t);
                                Some(true)
                            }
                            Err(_) => Some(false),
                        }
                    }
                    Op::StartBadId { long } => {
                        let id = if *long {
                            "x".repeat(MAX_ID + 1)
                        } else {
                            String::new()
                        };
                        Some(p.tracker(id).start().await.is_ok())
                    }
                    Op::Sleep { ms } => {
                        tokio::time::sleep(Duration::from_millis(u64::from(*ms))).await;
                        Some(true)
                    }
                    Op::Flush => Some(p.flush().await.is_ok()),
                    Op::Update { slot, update } => match &handles[*slot] {
                        None => None,
                        Some(t) => Some(
                            match *update {
                                Update::Set(value) => t.set(value).await,
                                Update::Advance(delta) => t.advance(delta).await,
                                Update::SetTotal(total) => t.set_total(total).await,
                                Update::Message(len) => t.set_message(text(len)).await,
                                Update::SetNan => t.set(f64::NAN).await,
                                Update::Complete => t.complete().await,
                                Update::Fail(len) => t.fail(text(len)).await,
                            }
                            .is_ok(),
                        ),
                    },
                };
                out.lock().unwrap().push(r);
            }
            p.flush().await?;
            Ok(())
        }
    });
    let mut card = AgentCard::new("prop", "prop", "1");
    card.capabilities.extensions.push(limits.to_extension());
    let h = RequestHandler::builder(agent, card).build();
    let task = common::run_task(&h).await;
    let log = log_of(h.store().as_ref(), "", &task.id).await;
    let mut entries = Vec::new();
    for e in log {
        if let StreamResponse::StatusUpdate(u) = e.event
            && let Some(v) = u.metadata.as_ref().and_then(|m| m.get(TASK_PROGRESS_URI))
        {
            let in_message = u
                .status
                .message
                .as_ref()
                .and_then(|m| m.metadata.as_ref())
                .and_then(|m| m.get(TASK_PROGRESS_URI));
            assert_eq!(in_message, Some(v), "both locations carry the snapshot");
            entries.push(v.clone());
        }
    }
    let outcomes = outcomes.lock().unwrap().clone();
    (outcomes, entries)
}

fn check(ops: Vec<Op>, rate: f64) -> Result<(), TestCaseError> {
    let limits = ProgressLimits {
        max_trackers: MAX_TRACKERS,
        max_message_chars: MAX_MSG,
        max_id_chars: MAX_ID,
        recommended_max_updates_per_second: rate,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let (outcomes, entries) = rt.block_on(execute(ops.clone(), limits.clone()));

    // 1. Accepted and refused exactly as the model says.
    let mut model = Model::new();
    for (i, op) in ops.iter().enumerate() {
        let expected = model.step(op, &limits);
        prop_assert_eq!(expected, outcomes[i], "op #{}: {:?}", i, op);
    }

    // 2. Every snapshot is valid, for us and for the schema.
    let validator = progress_schema();
    let mut snaps = Vec::new();
    for v in &entries {
        prop_assert!(validator.is_valid(v), "schema rejects {}", v);
        let p = ProgressPayload::from_value(v, &limits);
        prop_assert!(p.is_ok(), "{:?}", p);
        snaps.push(p.unwrap());
    }

    // 3. Monotonic, finished ones unchanged until they leave, only
    //    accepted values.
    let mut last: HashMap<String, f64> = HashMap::new();
    let mut finished: HashMap<String, ProgressTracker> = HashMap::new();
    let mut left: HashSet<String> = HashSet::new();
    for (n, p) in snaps.iter().enumerate() {
        if n > 0 {
            prop_assert!(check_monotonic(&snaps[n - 1], p).is_empty());
        }
        for id in finished.keys() {
            if p.tracker(id).is_none() {
                left.insert(id.clone());
            }
        }
        for t in &p.trackers {
            prop_assert!(!left.contains(&t.id), "{} came back after leaving", t.id);
            if let Some(before) = finished.get(&t.id) {
                prop_assert_eq!(before, t, "a finished tracker changed");
                continue;
            }
            let slot: usize = t.id[1..].parse().unwrap();
            let progress = t.progress.unwrap();
            let before = last.insert(t.id.clone(), progress).unwrap_or(0.0);
            prop_assert!(progress >= before, "{} went back", t.id);
            prop_assert!(
                model.progress_seen[slot].contains(&progress.to_bits()),
                "{} shows progress {} that was never accepted",
                t.id,
                progress
            );
            if let Some(total) = t.total {
                prop_assert!(model.totals_seen[slot].contains(&total.to_bits()));
            }
            if let Some(m) = &t.message {
                prop_assert!(model.messages_seen[slot].contains(m), "message {:?}", m);
            }
            if t.is_terminal() {
                finished.insert(t.id.clone(), t.clone());
            }
        }
    }

    // 4. The end state: every finished slot was reported as such, and the
    //    last snapshot shows the running ones with their latest values.
    for (slot, s) in model.slots.iter().enumerate() {
        if let Slot::Done {
            status,
            progress,
            total,
        } = s
        {
            let t = snaps
                .iter()
                .rev()
                .find_map(|p| p.tracker(&id(slot)))
                .expect("a finished tracker was sent");
            prop_assert_eq!(t.status, Some(*status));
            prop_assert_eq!(t.progress, Some(*progress));
            prop_assert_eq!(t.total, *total);
        }
    }
    if let Some(final_snap) = snaps.last() {
        let mut running: Vec<(String, f64, Option<f64>)> = final_snap
            .trackers
            .iter()
            .filter(|t| !t.is_terminal())
            .map(|t| (t.id.clone(), t.progress.unwrap(), t.total))
            .collect();
        running.sort_by(|a, b| a.0.cmp(&b.0));
        let expected: Vec<(String, f64, Option<f64>)> = model
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, s)| match s {
                Slot::Active { progress, total } => Some((id(slot), *progress, *total)),
                _ => None,
            })
            .collect();
        prop_assert_eq!(running, expected);
        // Finished trackers are listed too, as long as there is room.
        let started = model
            .slots
            .iter()
            .filter(|s| !matches!(s, Slot::Never))
            .count();
        prop_assert_eq!(final_snap.trackers.len(), started.min(MAX_TRACKERS));
        // The aggregate covers every tracker ever started.
        let agg = final_snap.aggregate.as_ref().unwrap();
        let mut sum = 0.0;
        let mut total_sum = Some(0.0);
        for s in &model.slots {
            let (p, t) = match s {
                Slot::Never => continue,
                Slot::Active { progress, total }
                | Slot::Done {
                    progress, total, ..
                } => (*progress, *total),
            };
            sum += p;
            total_sum = total_sum.zip(t).map(|(a, b)| a + b);
        }
        prop_assert_eq!(agg.progress, Some(sum));
        prop_assert_eq!(agg.total, total_sum);
    } else {
        prop_assert!(model.slots.iter().all(|s| *s == Slot::Never));
    }
    Ok(())
}

/// The failure proptest once shrank to, kept as a case of its own: the
/// seed saved in `progress_props.proptest-regressions` was drawn with an
/// earlier encoding of the ops and no longer produces it.
#[test]
fn setting_a_tracker_back_after_moving_on() {
    let start = Op::Start(Start {
        slot: 0,
        total: None,
        initial: 0,
        msg_len: 0,
    });
    let set = |value| Op::Update {
        slot: 0,
        update: Update::Set(value),
    };
    check(vec![start, set(25), set(0)], 1.0).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_emitter_sessions_emit_valid_monotonic_snapshots(
        ops in prop::collection::vec(op(), 0..60),
        rate in prop_oneof![Just(1.0), Just(2.0), Just(5.0), Just(f64::INFINITY)],
    ) {
        check(ops, rate)?;
    }
}
