//! One bot against the relay: the same traffic shape as a table at the server, without the
//! game. A table's bots join one relay group; as many of them as the table has simultaneous
//! turns act, each sending a frame the size of the server's `events` messages after a think
//! time and waiting until the frame comes back to it (the relay's stand-in for the `ack`).
//!
//! A frame starts with an 8-byte key (the sender's seat and its frame counter) so that every
//! receiver can report it to the table's tracker; the rest is padding.
//!
//! Against Colyseus ([`Framing::Colyseus`]) the same bot wraps its frame in Colyseus's
//! protocol (`room.send("a", frame)`) and unwraps what the room broadcasts ([`crate::colyseus`]).

use std::sync::Arc;
use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use crate::bot::{BotSettings, Group};
use crate::colyseus::{self, ServerMessage};
use crate::link::{ANSWER_PATIENCE, BotError, Socket, sleep_until};
use crate::live::SeatedSignal;
use crate::rng::Rng;
use crate::stats::Window;

/// Length of the key at the start of every relay frame.
pub const KEY_BYTES: usize = 8;

/// The key of frame `counter` from `seat`.
pub fn relay_key(seat: usize, counter: u64) -> u64 {
    ((seat as u64) << 40) | (counter & ((1 << 40) - 1))
}

/// The message of a bot against Colyseus: `room.send("a", payload)`, the payload starting
/// with `key` and as long as makes the room's broadcast `frame_bytes` long (or the key alone).
pub fn colyseus_frame(key: u64, frame_bytes: usize) -> Vec<u8> {
    let mut payload = vec![0u8; colyseus::payload_bytes(frame_bytes).max(KEY_BYTES)];
    payload[..KEY_BYTES].copy_from_slice(&key.to_be_bytes());
    colyseus::encode_send(colyseus::MESSAGE_TYPE, &payload)
}

/// How a bot's frames travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// As they are: one WebSocket message per frame (the relay and the floor).
    #[default]
    Bare,
    /// In Colyseus's protocol: the frame is the payload of `room.send("a", frame)`, and the
    /// room's broadcast of it is about `frame_bytes` long.
    Colyseus,
}

/// One bot at the relay.
#[derive(Debug)]
pub struct RelayBot {
    framing: Framing,
    ws: Socket,
    settings: Arc<BotSettings>,
    group: Arc<Group>,
    seat: usize,
    actor: bool,
    frame_bytes: usize,
    rng: Rng,
    stop: CancellationToken,
    counter: u64,
    received: u64,
    /// With `games: Some(n)`, every actor sends `n` frames and every bot stops once it has
    /// received all `actors × n` frames of its group.
    expected: Option<(u64, u64)>,
    in_flight: Option<(u64, Instant)>,
    seated_signal: Option<SeatedSignal>,
}

impl RelayBot {
    /// A bot for `seat` of `group` on an open WebSocket to the group, where the first
    /// `actors` seats act, sending frames of `frame_bytes` bytes.
    pub fn new(
        ws: Socket,
        settings: Arc<BotSettings>,
        group: Arc<Group>,
        seat: usize,
        actors: usize,
        frame_bytes: usize,
        stop: CancellationToken,
    ) -> Self {
        let expected = settings
            .games
            .map(|frames| (u64::from(frames), actors as u64 * u64::from(frames)));
        let rng = Rng::new(settings.seed, ((group.index as u64) << 8) | seat as u64);
        Self {
            framing: Framing::Bare,
            ws,
            settings,
            group,
            seat,
            actor: seat < actors,
            frame_bytes: frame_bytes.max(KEY_BYTES),
            rng,
            stop,
            counter: 0,
            received: 0,
            expected,
            in_flight: None,
            seated_signal: None,
        }
    }

    /// Tells the fleet through `signal` once the bot's whole group is connected.
    pub fn with_seated_signal(mut self, signal: SeatedSignal) -> Self {
        self.seated_signal = Some(signal);
        self
    }

    /// Wraps and unwraps the frames with `framing`.
    pub fn with_framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// Relays until told to stop, then closes.
    pub async fn run(mut self) -> Result<(), BotError> {
        let seats = usize::from(self.settings.seats);
        self.group.connected.send_modify(|n| *n += 1);
        let mut everyone = self.group.connected.subscribe();
        let stop = self.stop.clone();
        tokio::select! {
            () = stop.cancelled() => {}
            _ = everyone.wait_for(|&n| n >= seats) => {}
        }
        Window::bump(&self.settings.window.counters.seated);
        if let Some(signal) = self.seated_signal.take() {
            signal.fire();
        }
        let mut stopping = stop.is_cancelled();
        let mut next_send: Option<Instant> = None;
        loop {
            if let Some((_, all)) = self.expected
                && self.received >= all
            {
                break;
            }
            if stopping && self.in_flight.is_none() {
                break;
            }
            let more = self.expected.is_none_or(|(mine, _)| self.counter < mine);
            if self.actor && more && !stopping && next_send.is_none() && self.in_flight.is_none() {
                next_send = Some(Instant::now() + self.settings.think.draw(&mut self.rng));
            }
            let patience = self.in_flight.map(|(_, sent)| sent + ANSWER_PATIENCE);
            tokio::select! {
                biased;
                () = stop.cancelled(), if !stopping => stopping = true,
                frame = self.ws.next() => {
                    let frame = match frame {
                        None => return Err(BotError::Closed(None)),
                        Some(frame) => frame?,
                    };
                    match frame {
                        Message::Binary(bytes) => self.on_frame(&bytes)?,
                        Message::Close(frame) => return Err(BotError::Closed(frame.map(|f| u16::from(f.code)))),
                        _ => {}
                    }
                }
                () = sleep_until(next_send), if next_send.is_some() && !stopping => {
                    next_send = None;
                    self.send_frame().await?;
                }
                () = sleep_until(patience), if patience.is_some() => {
                    return Err(BotError::Timeout("relayed frame"));
                }
            }
        }
        self.ws.close(None).await?;
        let drain = async {
            while let Some(frame) = self.ws.next().await {
                if let Ok(Message::Binary(bytes)) = frame {
                    let _ = self.on_frame(&bytes);
                }
            }
        };
        let _ = tokio::time::timeout(ANSWER_PATIENCE, drain).await;
        Ok(())
    }

    fn on_frame(&mut self, bytes: &[u8]) -> Result<(), BotError> {
        let now = Instant::now();
        let frame = match self.framing {
            Framing::Bare => bytes,
            Framing::Colyseus => match colyseus::decode(bytes) {
                Ok(ServerMessage::Data { payload, .. }) => payload,
                Ok(ServerMessage::Error { code, message }) => {
                    return Err(BotError::Refused {
                        request: "a Colyseus message",
                        code: format!("{code}: {message}"),
                    });
                }
                // Not a delivery (nor an error the bot could cause).
                Ok(_) => return Ok(()),
                Err(error) => {
                    return Err(BotError::Refused {
                        request: "a Colyseus message",
                        code: error.to_string(),
                    });
                }
            },
        };
        self.received += 1;
        let counters = &self.settings.window.counters;
        Window::bump(&counters.frames_in);
        Window::add(&counters.bytes_in, bytes.len() as u64);
        Window::bump(&counters.deliveries);
        Window::add(&counters.delivery_bytes, bytes.len() as u64);
        let Some(key) = frame
            .get(..KEY_BYTES)
            .and_then(|k| <[u8; KEY_BYTES]>::try_from(k).ok())
            .map(u64::from_be_bytes)
        else {
            return Ok(());
        };
        self.group.tracker.delivered(key, now);
        if let Some((mine, sent)) = self.in_flight
            && mine == key
        {
            self.in_flight = None;
            Window::bump(&counters.acks);
            self.settings
                .window
                .record_ack(now.saturating_duration_since(sent));
            self.group.tracker.acted(key, sent, now);
        }
        Ok(())
    }

    async fn send_frame(&mut self) -> Result<(), BotError> {
        self.counter += 1;
        let key = relay_key(self.seat, self.counter);
        let frame = match self.framing {
            Framing::Bare => {
                let mut frame = vec![0u8; self.frame_bytes];
                frame[..KEY_BYTES].copy_from_slice(&key.to_be_bytes());
                frame
            }
            Framing::Colyseus => colyseus_frame(key, self.frame_bytes),
        };
        let counters = &self.settings.window.counters;
        Window::bump(&counters.frames_out);
        Window::add(&counters.bytes_out, frame.len() as u64);
        Window::bump(&counters.actions);
        self.in_flight = Some((key, Instant::now()));
        self.ws.send(Message::Binary(frame.into())).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_colyseus_frame_carries_the_key_and_its_broadcast_is_the_frame_size() {
        let key = relay_key(3, 17);
        let sent = colyseus_frame(key, 120);
        let ServerMessage::Data { kind, payload } = colyseus::decode(&sent).unwrap() else {
            panic!("not a message")
        };
        assert_eq!(kind, colyseus::MESSAGE_TYPE);
        assert_eq!(payload[..KEY_BYTES], key.to_be_bytes());
        assert_eq!(
            colyseus::BROADCAST_HEADER_BYTES + payload.len(),
            120,
            "the room's broadcast of it is the frame size"
        );
        let tiny = colyseus_frame(key, 4);
        let ServerMessage::Data { payload, .. } = colyseus::decode(&tiny).unwrap() else {
            panic!("not a message")
        };
        assert_eq!(payload, key.to_be_bytes(), "the key always fits");
    }
}
