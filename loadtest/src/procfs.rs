//! CPU time and resident memory of a process, read from `/proc/<pid>/stat` and
//! `/proc/<pid>/status` (Linux).

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Clock ticks per second of `/proc/<pid>/stat`'s CPU times. Linux fixes `USER_HZ` at 100 on
/// every architecture it runs on with a stable ABI (x86-64, arm64), whatever the kernel's HZ.
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of a process.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ProcSample {
    /// User plus system CPU time so far, seconds.
    pub cpu_seconds: f64,
    /// Resident memory now, KiB (`VmRSS`).
    pub rss_kib: u64,
    /// Peak resident memory, KiB (`VmHWM`).
    pub peak_rss_kib: u64,
    /// When it was read.
    #[serde(skip, default = "Instant::now")]
    pub at: Instant,
}

/// Reads a process's CPU time and memory.
pub fn sample(pid: u32) -> std::io::Result<ProcSample> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    parse(&stat, &status).ok_or_else(|| std::io::Error::other("unexpected /proc format"))
}

/// Parses the contents of `/proc/<pid>/stat` and `/proc/<pid>/status`.
pub fn parse(stat: &str, status: &str) -> Option<ProcSample> {
    // The command name (field 2) is in parentheses and may hold spaces: count after its end.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    let kib = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some(ProcSample {
        cpu_seconds: (utime + stime) as f64 / TICKS_PER_SECOND,
        rss_kib: kib("VmRSS:")?,
        peak_rss_kib: kib("VmHWM:").unwrap_or(0),
        at: Instant::now(),
    })
}

/// CPU used between two readings, as a share of one core, and seconds of CPU.
pub fn cpu_between(before: &ProcSample, after: &ProcSample) -> (f64, f64) {
    let cpu = (after.cpu_seconds - before.cpu_seconds).max(0.0);
    let wall = after.at.saturating_duration_since(before.at).as_secs_f64();
    let share = if wall > 0.0 { cpu / wall } else { 0.0 };
    (share, cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_spaces_in_the_name_and_status() {
        let stat = "4242 (grand melee) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 3 0 100 1000 200";
        let status = "Name:\tgrand melee\nVmHWM:\t  20480 kB\nVmRSS:\t  10240 kB\n";
        let sample = parse(stat, status).expect("parses");
        assert!((sample.cpu_seconds - 3.0).abs() < 1e-9);
        assert_eq!(sample.rss_kib, 10240);
        assert_eq!(sample.peak_rss_kib, 20480);
        assert!(parse("garbage", status).is_none());
        let me = super::sample(std::process::id()).expect("reads /proc/self");
        assert!(me.rss_kib > 0);
    }
}
