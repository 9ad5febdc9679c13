//! The query handler of `ternd`: the query engine over the published zone set.
//!
//! The zone set is loaded once per batch (a wait-free `arc_swap` guard), and so is each
//! zone's contents the batch answers from ([`Pins`]); the compression table and the
//! look-aheads are the worker's, reused batch after batch ([`EngineScratch`]). Each
//! query of the batch is then answered by
//! [`tern_engine::Engine::answer_with`] without allocating, locking or logging. The next
//! query of the batch is located while the current one is answered
//! ([`Handler::look_ahead`]), so its zone data is on the way from memory by its turn.
//!
//! What a reload may change — the engine's settings (`[identity]`, `tsig-max-fudge`),
//! rate limiting and the cookie secrets — is one `Live` value, swapped whole. Each
//! worker holds its own reference and reads one counter per batch to see whether a
//! reload swapped it (a full `arc_swap` load per batch cost some 90 instructions a
//! query when every query is its own batch); it then takes the new one, and fresh
//! copies of the secrets and a fresh rate-limiting tally when those changed.
//!
//! Cookies (RFC 7873) are checked and answered by the engine with the worker's copy of
//! the secrets ([`Cookies`]). With rate limiting on, each UDP answer is then judged by
//! the [`Limiter`] (with the time read once per batch) unless the query showed a valid
//! server cookie, and sent, dropped or replaced by a short answer.
//!
//! Each query, and each answer sent, is counted in the worker's own slot of
//! [`QueryCounters`] (a few relaxed stores into memory no other thread writes), and
//! again in its zone's row there when the zone has `query-stats` on: the engine's
//! look-ahead tells the zone's [`StatsTicket`].
//!
//! Refused transfers, updates and NOTIFYs are logged ([`tern_control::refusals`], rate-limited;
//! an answer's RCODE and a byte of the query tell them, nothing more is read unless a
//! line is written). A signed UPDATE is checked against the signatures accepted lately
//! ([`Replays`], behind a lock taken for signed updates only): a copy of one is answered
//! REFUSED and logged, not applied again.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use arc_swap::ArcSwap;
use tern_engine::{CookieSeen, Cookies, Engine, Lookahead, Notice, Outcome, Report, Request};
use tern_engine::{Schedule, Transfer, UpdateRequest};
use tern_wire::message::{CompressionTable, Flags};
use tern_wire::tsig::{Replays, Seen};
use tern_wire::{Rcode, Rtype};
use tern_zone::{Pins, StatsTicket, ZoneDb, ZoneSet};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tracing::{info, warn};

use crate::config::Config;
use crate::counters::control::{control, Direction};
use crate::counters::queries::{Answer, QueryCounters, WorkerCounters};
use crate::handler::AnswerStream;
use crate::handler::{Handler, MessageStream, RequestContext, Transport};
use crate::io::udp::reply::Replier;
use crate::rrl::{Counters, CountersSnapshot, Limiter, Verdict, WorkerLimits};
use tern_control::refusals::{refusals, refused_request, Kind, Refusal};
use tern_control::updates::{Reply, UpdateSink, UpdateTask};

/// A NOTIFY accepted by the data plane, for the control plane: the zone and serial, and
/// who sent it.
pub use tern_control::NoticeFrom;

/// Answers queries from the zones in a [`ZoneDb`].
#[derive(Debug)]
pub struct EngineHandler {
    /// What a reload may change (see the module comment).
    live: ArcSwap<Live>,
    /// Reloads that swapped `live` (bumped after each swap): a worker whose count
    /// differs takes the new one.
    reloads: AtomicU64,
    zones: Arc<ZoneDb>,
    /// Zone transfers out at once (`[transfer] max-outgoing`).
    outgoing: Arc<Semaphore>,
    /// Where accepted NOTIFYs go (the control plane), once it runs.
    notices: OnceLock<mpsc::Sender<NoticeFrom>>,
    /// What rate limiting counted, whichever limiter a reload made.
    rrl_counters: Arc<Counters>,
    /// Whether the process is what it will stay (after daemonizing): a limiter's
    /// reporter thread may start.
    reports: AtomicBool,
    /// Where accepted updates go (the control plane), once it runs.
    updates: OnceLock<Arc<dyn UpdateSink>>,
    /// The sockets UDP answers to updates leave from.
    replier: OnceLock<Arc<Replier>>,
    /// Every worker's counters.
    counters: Arc<QueryCounters>,
    /// The signatures of the signed updates accepted lately, to refuse copies.
    replays: Mutex<Replays>,
}

/// What a reload may change of how queries are answered (see the module comment).
#[derive(Debug)]
struct Live {
    engine: Engine,
    /// Response rate limiting; `None` when it is off.
    rrl: Option<Arc<Limiter>>,
    /// The cookie secrets each worker copies; `None` when cookies are off.
    cookies: Option<Schedule>,
    /// Bumped when `rrl` or `cookies` change: workers then take fresh copies.
    generation: u64,
}

/// What a worker keeps from batch to batch: the table the message writer compresses
/// names with (a new message clears it with one increment) and the look-ahead ring
/// (each look-ahead names the [`Pins`] it was made with, so one of an earlier batch
/// never matches). Some 7 KiB, so it is made once per worker and not per batch.
pub struct EngineScratch {
    table: CompressionTable,
    /// Questions located ahead of their answer (the current one's and the next two),
    /// used in turn; a look-ahead that does not match its query is only wasted.
    ahead: [Lookahead; RING],
    /// The worker's copy of the cookie secrets.
    cookies: Option<Cookies>,
    /// The worker's rate-limiting counts.
    limits: WorkerLimits,
    /// The worker's counters, which it alone writes.
    counters: Arc<WorkerCounters>,
    /// What a reload may change, as of the worker's last look.
    live: Arc<Live>,
    /// [`EngineHandler::reloads`] when it took `live`.
    reloads: u64,
    /// The `Live::generation` its cookies and limits were taken from.
    generation: u64,
}

/// What one batch holds: the zone set as it was when the batch began, the contents of
/// the zones its queries were answered from (held once for the batch, not per query),
/// and the worker's scratch.
pub struct EngineBatch<'s> {
    zones: arc_swap::Guard<Arc<ZoneSet>>,
    pins: Pins,
    scratch: &'s mut EngineScratch,
    next_ahead: usize,
    next_answer: usize,
    /// A zone transfer the last query asked for, for the TCP layer to stream.
    stream: Option<Box<dyn MessageStream>>,
    /// The rate limiter's time when the batch began (0 when rate limiting is off).
    now: u64,
}

/// How far ahead queries are located: two queries before its answer, a query's index
/// slots start loading; one query before, the nodes they point to.
const LOOK_AHEAD: usize = 2;
/// Look-aheads kept: the one being answered and those ahead of it.
const RING: usize = LOOK_AHEAD + 1;

impl std::fmt::Debug for EngineBatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EngineBatch({} zones)", self.zones.len())
    }
}

impl std::fmt::Debug for EngineScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EngineScratch")
    }
}

/// The batch lets go of what its look-aheads hold, with its own guards: nothing of it
/// outlives the batch in the scratch.
impl Drop for EngineBatch<'_> {
    fn drop(&mut self) {
        for ahead in &mut self.scratch.ahead {
            ahead.clear();
        }
    }
}

impl EngineHandler {
    /// A worker's scratch, counting into `counters`.
    fn scratch(&self, counters: Arc<WorkerCounters>) -> EngineScratch {
        let reloads = self.reloads.load(Ordering::Acquire);
        let live = self.live.load_full();
        EngineScratch {
            table: CompressionTable::new(),
            ahead: Default::default(),
            cookies: live.cookies.clone().map(Cookies::new),
            limits: WorkerLimits::default(),
            counters,
            generation: live.generation,
            live,
            reloads,
        }
    }

    /// A handler answering from `zones` with the engine settings of `config`.
    pub fn new(config: &Config, zones: Arc<ZoneDb>) -> EngineHandler {
        let outgoing = usize::try_from(config.transfer.max_outgoing).unwrap_or(usize::MAX);
        let rrl_counters = Arc::<Counters>::default();
        let rrl = new_limiter(config, &rrl_counters);
        let live = Live {
            engine: Engine::new(engine_config(config)),
            rrl,
            cookies: config.cookies.schedule(random_bytes::<16>),
            generation: 0,
        };
        EngineHandler {
            live: ArcSwap::from_pointee(live),
            reloads: AtomicU64::new(0),
            zones,
            outgoing: Arc::new(Semaphore::new(outgoing)),
            notices: OnceLock::new(),
            rrl_counters,
            reports: AtomicBool::new(false),
            updates: OnceLock::new(),
            replier: OnceLock::new(),
            counters: Arc::new(QueryCounters::new(config.query_stats_rows())),
            replays: Mutex::default(),
        }
    }

    /// Every worker's query counters.
    pub fn query_counters(&self) -> Arc<QueryCounters> {
        Arc::clone(&self.counters)
    }

    /// Starts logging what rate limiting does (a thread; call once the process is
    /// what it will stay: after daemonizing). Limiters a reload makes later start
    /// theirs at once.
    pub fn start_reports(&self) {
        self.reports.store(true, Ordering::Relaxed);
        if let Some(rrl) = &self.live.load().rrl {
            rrl.start_reports();
        }
    }

    /// The rate-limiting counters (`None` when rate limiting was never on).
    pub fn rrl_counters(&self) -> Option<CountersSnapshot> {
        let snapshot = self.rrl_counters.snapshot();
        (snapshot != CountersSnapshot::default() || self.live.load().rrl.is_some())
            .then_some(snapshot)
    }

    /// Sets `[transfer] max-outgoing` from `from` to `to` (a reload; fewer slots are
    /// taken away on `runtime` as running transfers end).
    pub fn resize_outgoing(&self, from: usize, to: usize, runtime: &tokio::runtime::Handle) {
        tern_control::shared::resize_slots(&self.outgoing, from, to, runtime);
    }

    /// Replaces the keys and access rules (the control plane's to set).
    pub fn set_access(&self, access: tern_engine::Access) {
        self.live.load().engine.set_access(access);
    }

    /// The keys and access rules in force (to change a few zones' of).
    pub fn access(&self) -> Arc<tern_engine::Access> {
        self.live.load().engine.access()
    }

    /// Takes what a reload changed of `old` in `new` (see the module comment): the
    /// engine's settings always; rate limiting and the cookie secrets only when their
    /// sections changed (a limiter's state and a generated secret are kept otherwise).
    /// Queries see it from their next batch. The sections that changed, for the log.
    pub fn reconfigure(&self, old: &Config, new: &Config) -> Vec<&'static str> {
        let live = self.live.load();
        let (rrl_changed, cookies_changed) = (old.rrl != new.rrl, old.cookies != new.cookies);
        let rrl = match rrl_changed {
            true => new_limiter(new, &self.rrl_counters),
            false => live.rrl.clone(),
        };
        if let Some(rrl) = rrl.as_ref().filter(|_| rrl_changed) {
            if self.reports.load(Ordering::Relaxed) {
                rrl.start_reports();
            }
        }
        let cookies = match cookies_changed {
            true => new.cookies.schedule(random_bytes::<16>),
            false => live.cookies.clone(),
        };
        let generation = live.generation + u64::from(rrl_changed || cookies_changed);
        let mut settings = engine_config(new);
        // The UDP workers' buffers are sized at start: the largest answer stays.
        settings.udp_max_payload = live.engine.config().udp_max_payload;
        let engine = live.engine.with_config(settings);
        self.live.store(Arc::new(Live { engine, rrl, cookies, generation }));
        self.reloads.fetch_add(1, Ordering::Release);
        let changed = [(rrl_changed, "rrl"), (cookies_changed, "cookies")];
        changed.into_iter().filter(|(c, _)| *c).map(|(_, name)| name).collect()
    }

    /// Sends accepted NOTIFYs to `notices` from now on (once).
    pub fn forward_notices(&self, notices: mpsc::Sender<NoticeFrom>) {
        let _ = self.notices.set(notices);
    }

    /// Sends accepted updates to `updates` from now on (once).
    pub fn forward_updates(&self, updates: Arc<dyn UpdateSink>) {
        let _ = self.updates.set(updates);
    }

    /// Sends the answers to updates that came over UDP from `replier` (once).
    pub fn send_late_answers(&self, replier: Arc<Replier>) {
        let _ = self.replier.set(replier);
    }

    /// Queues an accepted update for its zone's writer, which answers it once the
    /// change is durable (`tern_control::updates`); nothing is sent now. Over TCP the batch
    /// takes the stream that waits for that answer. Without a control plane, or with
    /// its queue full, the update is answered SERVFAIL (by the dropped task).
    fn queue_update(
        &self,
        batch: &mut EngineBatch<'_>,
        update: Box<UpdateRequest>,
        ctx: &RequestContext,
    ) -> Option<usize> {
        let reply = match ctx.transport {
            Transport::Udp => {
                let replier = Arc::clone(self.replier.get()?);
                Reply::Udp { replier, client: ctx.client, local: ctx.local }
            }
            Transport::Tcp | Transport::Tls | Transport::Quic => {
                let (stream, reply) = AnswerStream::pair();
                batch.stream = Some(Box::new(stream));
                reply
            }
        };
        let task = UpdateTask::new(update, reply);
        match self.updates.get() {
            Some(sink) => sink.submit(task),
            None => drop(task),
        }
        None
    }

    /// Passes an accepted NOTIFY on; if the control plane is behind, a refresh of that
    /// zone is already coming, so a full queue drops it.
    fn forward(&self, notice: Notice, from: SocketAddr) {
        if let Some(notices) = self.notices.get() {
            let _ = notices.try_send((notice, from));
        }
    }

    /// Hands a transfer to the batch for the TCP layer, or answers SERVFAIL when
    /// `max-outgoing` transfers are running already.
    fn start_transfer(
        &self,
        batch: &mut EngineBatch<'_>,
        mut transfer: Box<Transfer>,
        ctx: &RequestContext,
        out: &mut [u8],
    ) -> Option<usize> {
        let peer = ctx.client;
        let transport = match ctx.transport {
            Transport::Tls => "tls",
            Transport::Quic => "quic",
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
        };
        match Arc::clone(&self.outgoing).try_acquire_owned() {
            Ok(permit) => {
                let table = CompressionTable::new();
                let started = Instant::now();
                batch.stream = Some(Box::new(TransferStream {
                    transfer,
                    table,
                    peer,
                    transport,
                    started,
                    _permit: permit,
                }));
                None
            }
            Err(_) => {
                control().transfer_failed(Direction::Out);
                warn!(zone = %transfer.origin(), peer = %peer, "transfer refused: too many transfers out (max-outgoing)");
                transfer.refusal(out, &mut batch.scratch.table, Rcode::SERVFAIL)
            }
        }
    }
}

impl EngineHandler {
    /// A copy of a signed UPDATE accepted before (TSIG does not stop one: see
    /// [`tern_wire::tsig::replay`]) is answered REFUSED, signed (the key verified), and
    /// logged; `None` for a new update (every unsigned one too: nothing tells a copy).
    fn replayed(&self, update: &UpdateRequest, client: IpAddr, out: &mut [u8]) -> Option<usize> {
        let signature = update.signature()?;
        let now = unix_now();
        let seen = self.replays.lock().unwrap_or_else(PoisonError::into_inner).check(
            signature.key,
            signature.time_signed,
            signature.window,
            signature.mac,
            now,
        );
        let why = match seen {
            Seen::New => return None,
            Seen::Replayed => "replayed signed UPDATE: the same signature (key, time signed and MAC) was accepted before, within its time",
            Seen::Forgotten => "possibly replayed signed UPDATE: signed no later than an update its key had to forget (more were signed within their time than are remembered)",
        };
        refusals().note(Kind::Update, now, || Refusal {
            kind: Kind::Update,
            zone: update.zone().to_string(),
            client,
            key: Some(signature.key.to_string()),
            rcode: Rcode::REFUSED,
            why: why.to_owned(),
        });
        control().update(Rcode::REFUSED);
        update.answer(Rcode::REFUSED, out, now)
    }
}

/// The kind of a request answered with an error that the refusal log is about (a
/// transfer, an update, a NOTIFY), from its type and the opcode in its header.
#[inline]
fn refused_kind(query: &[u8], qtype: Rtype) -> Option<Kind> {
    let flags = Flags(u16::from_be_bytes([*query.get(2)?, *query.get(3)?]));
    Kind::of(flags.opcode(), qtype)
}

/// Notes a refused request in the refusal log (see [`tern_control::refusals`]).
#[cold]
#[inline(never)]
fn note_refused(kind: Kind, query: &[u8], answer: &[u8], rcode: Rcode, client: IpAddr) {
    refusals().note(kind, unix_now(), || refused_request(kind, query, answer, rcode, client));
}

/// Rate limiting's verdict on a UDP answer ([`Limiter::judge`]). Only answers are
/// judged, and not those to a query with a valid server cookie: the client is at the
/// address it claims.
#[inline(always)]
fn verdict(
    rrl: &Limiter,
    limits: &mut WorkerLimits,
    now: u64,
    outcome: &Outcome,
    report: &Report,
    client: &std::net::IpAddr,
) -> Verdict {
    match outcome {
        Outcome::Answered { .. } if report.cookie != CookieSeen::Valid => {
            rrl.judge(limits, now, client, report)
        }
        _ => Verdict::Send,
    }
}

/// What is sent in place of the UDP answer `held` (its outcome; its zone counts under
/// `zone`) that rate limiting held back: nothing, or a short answer; counted. Out of
/// line: the path of a flood, not of the answers that go.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn held_back(
    engine: &Engine,
    verdict: Verdict,
    held: &Outcome,
    zone: StatsTicket,
    request: &Request<'_>,
    out: &mut [u8],
    table: &mut CompressionTable,
    counters: &WorkerCounters,
) -> Option<usize> {
    let mut question = None;
    if let Outcome::Answered { qtype, dnssec_ok, .. } = *held {
        counters.question(qtype, dnssec_ok);
        question = Some(qtype);
    }
    let transport = Transport::Udp;
    let short = match verdict {
        Verdict::Short(short) => engine.answer_short(request, short, out, table),
        _ => Outcome::Dropped,
    };
    if let Outcome::Answered { len, rcode, truncated, .. } = short {
        counters.answer(Answer { transport, rcode, len, truncated });
        counters.zone(zone, question, Some(rcode));
        return Some(len);
    }
    counters.zone(zone, question, None);
    counters.unanswered(transport);
    None
}

/// A zone transfer being streamed to a client, holding one of the `max-outgoing`
/// permits until it ends.
struct TransferStream {
    transfer: Box<Transfer>,
    table: CompressionTable,
    peer: SocketAddr,
    /// `tcp`, `tls` or `quic`, for the log.
    transport: &'static str,
    started: Instant,
    _permit: OwnedSemaphorePermit,
}

impl MessageStream for TransferStream {
    fn next_message(&mut self, out: &mut [u8]) -> Option<usize> {
        self.transfer.next_message(out, &mut self.table)
    }

    /// One log line per transfer: zone, peer, kind, serials, records, bytes, time.
    fn finished(self: Box<Self>, complete: bool) {
        let t = &self.transfer;
        let stats = t.stats();
        let elapsed = self.started.elapsed();
        let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        let from = t.from_serial().map_or_else(|| "-".to_owned(), |s| s.to_string());
        let kind = t.kind().name();
        if complete {
            control().transfer_done(Direction::Out, stats.bytes, elapsed);
            info!(zone = %t.origin(), peer = %self.peer, transport = self.transport, kind, from, serial = t.serial(), records = stats.records, bytes = stats.bytes, messages = stats.messages, elapsed_ms, "transfer out done");
        } else {
            control().transfer_failed(Direction::Out);
            warn!(zone = %t.origin(), peer = %self.peer, transport = self.transport, kind, from, serial = t.serial(), records = stats.records, bytes = stats.bytes, messages = stats.messages, elapsed_ms, "transfer out cut short: the client did not take it");
        }
    }
}

/// Counts the query and what `outcome` answered (a transfer: its question, and the
/// query as unanswered; its messages are counted by the transfer counters), and the
/// same again in the row of its zone, which counts under `zone`.
#[inline]
fn count(counters: &WorkerCounters, transport: Transport, outcome: &Outcome, zone: StatsTicket) {
    match *outcome {
        Outcome::Answered { len, rcode, truncated, qtype, dnssec_ok } => {
            counters.question(qtype, dnssec_ok);
            counters.answer(Answer { transport, rcode, len, truncated });
            counters.zone(zone, Some(qtype), Some(rcode));
        }
        Outcome::Transfer(ref transfer) => {
            let qtype = match transfer.kind() {
                tern_engine::xfr::Kind::Axfr => tern_wire::Rtype::AXFR,
                _ => tern_wire::Rtype::IXFR,
            };
            counters.question(qtype, false);
            counters.unanswered(transport);
            counters.zone(zone, Some(qtype), None);
        }
        Outcome::Notified { len, .. } => {
            let rcode = tern_wire::Rcode::NOERROR;
            counters.answer(Answer { transport, rcode, len, truncated: false });
            counters.zone(zone, None, Some(rcode));
        }
        Outcome::Dropped | Outcome::Update(_) => counters.unanswered(transport),
    }
}

/// The engine's settings from the daemon's configuration.
pub fn engine_config(config: &Config) -> tern_engine::Config {
    let host = hostname();
    let identity = config.identity.resolve(&host);
    tern_engine::Config {
        udp_max_payload: u16::try_from(config.server.udp_payload_max).unwrap_or(u16::MAX),
        nsid: identity.nsid.map(String::into_bytes),
        version: identity.version,
        server_id: identity.hostname.clone(),
        hostname: identity.hostname,
        tsig_max_fudge: u16::try_from(config.server.tsig_max_fudge).unwrap_or(u16::MAX),
    }
}

/// Rate limiting as `config` says (`None` when off), counting into `counters`, with a
/// fresh random seed for its table's hash.
fn new_limiter(config: &Config, counters: &Arc<Counters>) -> Option<Arc<Limiter>> {
    let seed = u64::from_le_bytes(random_bytes::<8>());
    Limiter::new(&config.rrl, seed, Arc::clone(counters)).map(Arc::new)
}

/// Random bytes from the system's generator (zeros, which still work, if it fails).
fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if crate::random::fill(&mut bytes).is_err() {
        warn!("no random bytes: the rate limiter's hash and the cookie secret are predictable");
    }
    bytes
}

/// Seconds since the epoch (the engine's clock for TSIG and cookies).
pub use tern_control::clock::unix_now;

/// The machine's host name (empty if it cannot be read).
fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(buf.get(..end).unwrap_or(&[])).into_owned()
}

impl Handler for EngineHandler {
    type Scratch = EngineScratch;
    type Batch<'s> = EngineBatch<'s>;

    fn new_scratch(&self) -> EngineScratch {
        self.scratch(self.counters.register(false))
    }

    fn new_xdp_scratch(&self) -> EngineScratch {
        self.scratch(self.counters.register(true))
    }

    fn begin_batch<'s>(&self, scratch: &'s mut EngineScratch) -> EngineBatch<'s> {
        self.catch_up(scratch);
        let now = match &scratch.live.rrl {
            Some(rrl) => {
                let now = rrl.now();
                rrl.flush(&mut scratch.limits, now);
                now
            }
            None => 0,
        };
        EngineBatch {
            zones: self.zones.load(),
            pins: Pins::new(),
            scratch,
            next_ahead: 0,
            next_answer: 0,
            stream: None,
            now,
        }
    }

    fn handle(
        &self,
        batch: &mut EngineBatch<'_>,
        query: &[u8],
        ctx: &RequestContext,
        out: &mut [u8],
    ) -> Option<usize> {
        let transport = match ctx.transport {
            Transport::Udp => tern_engine::Transport::Udp,
            Transport::Tcp | Transport::Tls | Transport::Quic => tern_engine::Transport::Tcp,
        };
        let turn = batch.next_answer;
        batch.next_answer = (turn + 1) % RING;
        let (zones, pins, scratch) = (&batch.zones, &mut batch.pins, &mut *batch.scratch);
        let EngineScratch { table, ahead, cookies, limits, counters, live, .. } = scratch;
        let (engine, rrl) = (&live.engine, live.rrl.as_deref());
        let counters = &**counters;
        let request = Request {
            message: query,
            transport,
            tcp_keepalive: ctx.keepalive_units(),
            client: ctx.client.ip(),
            tls: ctx.tls.as_ref(),
            clock: unix_now,
            cookies: cookies.as_ref(),
        };
        let ahead = ahead.get_mut(turn)?;
        // Rate limiting needs the engine's report on the answer; nothing else does.
        let limiter = rrl.filter(|_| transport == tern_engine::Transport::Udp);
        let mut report = Report::error(CookieSeen::None);
        let outcome = match limiter {
            None => engine.answer_with(zones, pins, &request, ahead, out, table),
            Some(rrl) => {
                let early = |class, tag| rrl.prefetch(&request.client, class, tag);
                engine.answer_reported(
                    zones,
                    pins,
                    &request,
                    ahead,
                    out,
                    table,
                    &mut report,
                    &early,
                )
            }
        };
        let zone = ahead.stats_ticket();
        if let Some(rrl) = limiter {
            match verdict(rrl, limits, batch.now, &outcome, &report, &request.client) {
                Verdict::Send => {}
                held => {
                    let held =
                        held_back(engine, held, &outcome, zone, &request, out, table, counters);
                    return held;
                }
            }
        }
        count(counters, ctx.transport, &outcome, zone);
        match outcome {
            Outcome::Answered { len, rcode, qtype, .. } if rcode != Rcode::NOERROR => {
                if let Some(kind) = refused_kind(query, qtype) {
                    note_refused(kind, query, out.get(..len)?, rcode, ctx.client.ip());
                }
                Some(len)
            }
            Outcome::Answered { len, .. } => Some(len),
            Outcome::Dropped => None,
            Outcome::Notified { len, notice } => {
                self.forward(*notice, ctx.client);
                Some(len)
            }
            Outcome::Transfer(transfer) => self.start_transfer(batch, transfer, ctx, out),
            Outcome::Update(update) => match self.replayed(&update, ctx.client.ip(), out) {
                Some(len) => Some(len),
                None => self.queue_update(batch, update, ctx),
            },
        }
    }

    fn take_stream(&self, batch: &mut EngineBatch<'_>) -> Option<Box<dyn MessageStream>> {
        batch.stream.take()
    }

    const LOOK_AHEAD: usize = LOOK_AHEAD;

    /// What rate limiting tallied is handed over even when queries stop.
    fn idle(&self, scratch: &mut EngineScratch) {
        self.catch_up(scratch);
        if let Some(rrl) = &scratch.live.rrl {
            rrl.flush(&mut scratch.limits, rrl.now());
        }
    }

    /// The skipped query's look-ahead is passed over, so the next query finds its own.
    fn skip(&self, batch: &mut EngineBatch<'_>) {
        batch.next_answer = (batch.next_answer + 1) % RING;
    }

    /// Locates `query` (its index slots start loading) and advances the query located
    /// just before it (the nodes those slots point to start loading).
    fn look_ahead(&self, batch: &mut EngineBatch<'_>, query: &[u8]) {
        let turn = batch.next_ahead;
        batch.next_ahead = (turn + 1) % RING;
        let scratch = &mut *batch.scratch;
        let (ring, engine) = (&mut scratch.ahead, &scratch.live.engine);
        if let Some(previous) = ring.get((turn + RING - 1) % RING) {
            previous.advance(&batch.pins);
        }
        if let Some(ahead) = ring.get_mut(turn) {
            engine.look_ahead(&batch.zones, &mut batch.pins, query, ahead);
        }
    }
}

impl EngineHandler {
    /// Takes what a reload swapped in since the worker last looked (one load and one
    /// comparison when nothing was).
    #[inline(always)]
    fn catch_up(&self, scratch: &mut EngineScratch) {
        let reloads = self.reloads.load(Ordering::Acquire);
        if scratch.reloads != reloads {
            self.take_live(scratch, reloads);
        }
    }

    /// The worker's new `Live`, and with changed rate limiting or cookie secrets,
    /// fresh copies: the secrets, and an empty tally (what the old limiter had not been
    /// handed is dropped with it).
    #[cold]
    #[inline(never)]
    fn take_live(&self, scratch: &mut EngineScratch, reloads: u64) {
        let live = self.live.load_full();
        if scratch.generation != live.generation {
            scratch.cookies = live.cookies.clone().map(Cookies::new);
            scratch.limits = WorkerLimits::default();
            scratch.generation = live.generation;
        }
        scratch.live = live;
        scratch.reloads = reloads;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A skipped query passes over its own look-ahead: the next query answered is paired
    /// with the look-ahead made for it, not with the skipped one's.
    #[test]
    fn skip_keeps_look_aheads_in_step() {
        let config = Config::built_in(Vec::new(), Vec::new()).unwrap();
        let handler = EngineHandler::new(&config, Arc::new(ZoneDb::new()));
        let mut scratch = handler.new_scratch();
        let mut batch = handler.begin_batch(&mut scratch);
        for _ in 0..=LOOK_AHEAD {
            handler.look_ahead(&mut batch, &[]);
        }
        handler.skip(&mut batch); // query 0
        assert_eq!(batch.next_answer, 1, "query 1 is answered with look-ahead 1");
        let ctx = RequestContext {
            transport: Transport::Udp,
            client: "127.0.0.1:5300".parse().unwrap(),
            local: "127.0.0.1:53".parse().unwrap(),
            max_response: 1232,
            keepalive: None,
            tls: None,
        };
        let _ = handler.handle(&mut batch, &[], &ctx, &mut [0u8; 512]);
        assert_eq!(batch.next_answer, 2);
    }
}
