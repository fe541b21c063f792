//! The handle through which a table actor (or a connection's reader) talks to one connection:
//! its outbox of WebSocket frames and a way to close it with a code and a reason. It knows
//! nothing of tables or of the server: everything above it may use it.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

use grand_melee_protocol::{self as wire, ClientMessage, ErrorCode, ServerMessage, close};
use tracing::info;

use crate::metrics::Metrics;
use crate::outbox::{Frame, Outbox, Refused};

/// The way a table actor (or the reader) talks to one connection: its outbox (frames written
/// straight to the socket when they would not block, a bounded queue otherwise) and a way to
/// close it with a code.
///
/// One allocation shared by the connection's session and its table's member: a copy is one
/// pointer, and cloning it one count (not one per part).
#[derive(Debug, Clone)]
pub(crate) struct Conn(Arc<Link>);

/// What a [`Conn`] shares.
#[derive(Debug)]
pub(crate) struct Link {
    pub id: u64,
    /// The client's address (for per-address caps and bans).
    pub peer: IpAddr,
    pub(crate) outbox: Outbox,
    pub(crate) metrics: Arc<Metrics>,
    /// Cluster mode: a connection held by another node, whose frames the table's owner sends
    /// through the table's outbound subject instead of a local queue.
    pub(crate) remote: Option<Arc<Remote>>,
}

impl std::ops::Deref for Conn {
    type Target = Link;

    fn deref(&self) -> &Link {
        &self.0
    }
}

impl crate::hosts::Stop for Link {
    fn stop(&self) {
        self.outbox.kick();
    }
}

impl crate::reactor::Ready for Link {
    fn ready(&self) {
        self.outbox.socket_event();
    }
}

/// Where a connection held by another node is: the node and its id there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Remote {
    pub node: Arc<str>,
    pub id: u64,
}

impl Conn {
    pub fn new(link: Link) -> Self {
        Self(Arc::new(link))
    }

    /// A connection whose link is made knowing where it will be (a plain connection's socket
    /// registers it as what its events wake).
    pub fn new_cyclic(link: impl FnOnce(&std::sync::Weak<Link>) -> Link) -> Self {
        Self(Arc::new_cyclic(link))
    }

    /// How a host stops the connection's session at the shutdown (it kicks the connection).
    pub fn stopper(&self) -> Arc<dyn crate::hosts::Stop> {
        Arc::clone(&self.0) as Arc<dyn crate::hosts::Stop>
    }

    /// Sends one frame (shared, not copied). A full queue means the client cannot keep up: it
    /// is closed (1008) rather than allowed to stall whoever is sending. Returns whether it was
    /// sent. The caller counts what it sends (once per batch, not once per frame: the counters
    /// are shared by every thread).
    pub fn send(&self, frame: &Frame) -> bool {
        match self.outbox.push(frame) {
            Ok(()) => true,
            Err(Refused::Full) => {
                if !self.outbox.is_kicked() {
                    Metrics::add(&self.metrics.slow_readers_dropped, 1);
                    info!(
                        connection = self.id,
                        "outgoing queue full: dropping a slow reader"
                    );
                    self.close_because(
                        close::POLICY_VIOLATION,
                        "outgoing queue overflow: reading too slowly",
                    );
                }
                false
            }
            Err(Refused::Finished | Refused::Shed) => false,
        }
    }

    /// Sends one frame that may be left out (a camera signal): left out, not queued, when the
    /// connection's queue is half full, so it never costs the connection its place. Returns
    /// whether it was sent.
    pub fn send_unless_busy(&self, frame: &Frame) -> bool {
        match self.outbox.push_unless_busy(frame) {
            Ok(()) => true,
            Err(Refused::Shed) => {
                Metrics::add(&self.metrics.signals_shed, 1);
                false
            }
            Err(Refused::Full | Refused::Finished) => self.send(frame),
        }
    }

    /// Encodes and queues one message, counting it.
    pub fn send_message(&self, message: &ServerMessage) -> bool {
        self.metrics.check_reply(message);
        let frame = Frame::binary(&wire::encode_server(message));
        let sent = self.send(&frame);
        if sent {
            self.metrics.count_out(1, frame.payload().len());
        }
        sent
    }

    /// Answers a request with a typed error: its code and, when the refusal has one, a message
    /// that says more than the code's description (a `bad_settings` names the setting).
    pub fn reject(&self, request: Option<&ClientMessage>, refusal: impl Into<Refusal>) {
        let refusal = refusal.into();
        Metrics::add(&self.metrics.rejected, 1);
        let mut answer = ServerMessage::error(request, refusal.code);
        if let (ServerMessage::Error { message, .. }, Some(more)) = (&mut answer, refusal.message) {
            *message = more;
        }
        self.send_message(&answer);
    }

    /// Closes the connection with a WebSocket close code and its usual reason (the first close
    /// wins).
    pub fn close(&self, code: u16) {
        self.close_because(code, close_reason(code));
    }

    /// Closes the connection with a WebSocket close code and a reason saying what happened (the
    /// first close wins).
    pub fn close_because(&self, code: u16, reason: impl Into<Cow<'static, str>>) {
        self.outbox.close_because(code, reason);
    }
}

/// The usual human-readable reason sent with a close code; closes for a policy violation give
/// their own (`Conn::close_because`).
pub(crate) fn close_reason(code: u16) -> &'static str {
    match code {
        close::NORMAL => "bye",
        close::GOING_AWAY => "server going away",
        close::PROTOCOL_ERROR => "protocol error",
        close::INVALID_PAYLOAD => "a text frame that is not valid UTF-8",
        close::POLICY_VIOLATION => "policy violation",
        close::MESSAGE_TOO_BIG => "message too big",
        close::INTERNAL_ERROR => "internal error: the server could not write its journal",
        close::TABLE_MOVED => close::TABLE_MOVED_REASON,
        _ => "",
    }
}

/// Why a request was refused: its code, and a message when there is more to say than the
/// code's description.
#[derive(Debug)]
pub struct Refusal {
    /// The code.
    pub code: ErrorCode,
    /// What exactly is wrong, if the code does not say it.
    pub message: Option<String>,
}

impl Refusal {
    /// `bad_settings`, naming the setting.
    pub fn settings(message: String) -> Self {
        Self {
            code: ErrorCode::BadSettings,
            message: Some(message),
        }
    }
}

impl From<ErrorCode> for Refusal {
    fn from(code: ErrorCode) -> Self {
        Self {
            code,
            message: None,
        }
    }
}
