//! Progress output for the long commands (`bench`, `run`).
//!
//! On a terminal it is an `indicatif` bar with a status message, and result lines printed above
//! it. Written to a pipe or a file (a CI log, `2> bench.log`, `nohup`) a bar would draw nothing,
//! so every status change and every result line becomes one plain line on standard error
//! instead, prefixed with the time since the start: a long run is never silent.

use std::fmt;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Where the plain lines go when there is no terminal.
type Sink = Box<dyn Write + Send>;

/// A progress bar on a terminal, plain lines anywhere else.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    /// `Some` when lines are written plainly (no terminal, or a test's buffer).
    plain: Option<Mutex<Sink>>,
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("plain", &self.plain.is_some())
            .finish_non_exhaustive()
    }
}

impl Progress {
    /// A bar of `length` units drawn with `template` on standard error when it is a terminal;
    /// plain lines on standard error otherwise.
    pub fn new(length: u64, template: &str) -> Self {
        let bar = ProgressBar::new(length);
        bar.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let plain = bar
            .is_hidden()
            .then(|| Mutex::new(Box::new(std::io::stderr()) as Sink));
        Self {
            bar,
            started: Instant::now(),
            plain,
        }
    }

    /// Plain lines into `sink`, whatever standard error is.
    pub fn plain(sink: Sink) -> Self {
        Self {
            bar: ProgressBar::hidden(),
            started: Instant::now(),
            plain: Some(Mutex::new(sink)),
        }
    }

    /// Whether lines are written plainly (no bar is drawn).
    pub fn is_plain(&self) -> bool {
        self.plain.is_some()
    }

    /// What is happening now: the bar's message, or a plain line.
    pub fn status(&self, message: impl Into<String>) {
        let message = message.into();
        if !self.write_plain(&message) {
            self.bar.set_message(message);
        }
    }

    /// A line that stays: printed above the bar, or a plain line.
    pub fn line(&self, line: impl Into<String>) {
        let line = line.into();
        if !self.write_plain(&line) {
            self.bar.println(line);
        }
    }

    /// Moves the bar `delta` units on (nothing is written plainly).
    pub fn inc(&self, delta: u64) {
        self.bar.inc(delta);
    }

    /// Sets the bar's position (nothing is written plainly).
    pub fn set_position(&self, position: u64) {
        self.bar.set_position(position);
    }

    /// Sets the bar's length (nothing is written plainly).
    pub fn set_length(&self, length: u64) {
        self.bar.set_length(length);
    }

    /// Removes the bar.
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }

    fn write_plain(&self, text: &str) -> bool {
        let Some(sink) = &self.plain else {
            return false;
        };
        let elapsed = elapsed_text(self.started.elapsed());
        let mut sink = sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Progress is best effort: a closed standard error must not stop the run.
        let _ = writeln!(sink, "[{elapsed}] {text}").and_then(|()| sink.flush());
        true
    }
}

/// `h:mm:ss`, as the bar shows it.
fn elapsed_text(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn without_a_terminal_every_status_and_line_is_a_plain_line() {
        let shared = Shared::default();
        let progress = Progress::plain(Box::new(shared.clone()));
        assert!(progress.is_plain());
        progress.status("server · starting");
        progress.inc(3);
        progress.set_position(5);
        progress.line("server: capacity 100 deliveries/s");
        progress.finish_and_clear();
        let text = String::from_utf8(shared.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with("[0:00:0"), "{text}");
        assert!(lines[0].ends_with("] server · starting"), "{text}");
        assert!(
            lines[1].ends_with("] server: capacity 100 deliveries/s"),
            "{text}"
        );
    }

    #[test]
    fn elapsed_time_reads_like_the_bar() {
        assert_eq!(elapsed_text(Duration::from_secs(0)), "0:00:00");
        assert_eq!(elapsed_text(Duration::from_millis(61_900)), "0:01:01");
        assert_eq!(
            elapsed_text(Duration::from_secs(3 * 3600 + 59 * 60 + 7)),
            "3:59:07"
        );
    }
}
