//! Timing with a fixed budget per case, and the report lines the scripts read.

use std::io::Write;
use std::time::{Duration, Instant};

/// Seconds of measurement per case: `MSP_BENCH_SECS`, default 1.5.
pub fn budget() -> Duration {
    let secs = std::env::var("MSP_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.5);
    Duration::from_secs_f64(secs.max(0.05))
}

/// Whether case `name` runs: `MSP_BENCH_ONLY`, when set, must be part of its name (for
/// profiling one case), or with a leading `=` all of it.
pub fn selected(name: &str) -> bool {
    std::env::var("MSP_BENCH_ONLY").map_or(true, |only| picks(&only, name))
}

/// Whether the selection `only` (as in `MSP_BENCH_ONLY`) picks case `name`.
pub fn picks(only: &str, name: &str) -> bool {
    match only.strip_prefix('=') {
        Some(exact) => name == exact,
        None => name.contains(only),
    }
}

/// Median time of one call of `pass`, after a short warm-up, within `budget` (at least 5 calls).
///
/// With `MSP_BENCH_PASSES=N`, exactly `N` calls and no warm-up, for instruction counts under
/// `valgrind --tool=callgrind` that do not depend on speed.
pub fn median_pass(budget: Duration, mut pass: impl FnMut()) -> Duration {
    if let Some(n) = std::env::var("MSP_BENCH_PASSES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
    {
        let mut samples: Vec<Duration> = (0..n.max(1))
            .map(|_| {
                let t = Instant::now();
                pass();
                t.elapsed()
            })
            .collect();
        return median(&mut samples);
    }
    let warm = Instant::now();
    while warm.elapsed() < budget / 5 {
        pass();
    }
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 5 || start.elapsed() < budget {
        let t = Instant::now();
        pass();
        samples.push(t.elapsed());
    }
    median(&mut samples)
}

/// Cases timed side by side, so that a machine whose speed drifts (other work, frequency)
/// skews every case alike: `MSP_BENCH_ROUNDS` rounds (default 3), each running every case in
/// turn for an equal share of the budget; a case's time is the median of its round medians.
#[derive(Default)]
pub struct Group<'a> {
    cases: Vec<(String, Box<dyn FnMut() + 'a>)>,
}

impl<'a> Group<'a> {
    /// Adds case `name` if it is [`selected`].
    pub fn add(&mut self, name: impl Into<String>, pass: impl FnMut() + 'a) {
        let name = name.into();
        if selected(&name) {
            self.cases.push((name, Box::new(pass)));
        }
    }

    /// Runs every case; their times in the order they were added.
    pub fn run(self, budget: Duration) -> Vec<(String, Duration)> {
        self.run_rounds(budget)
            .into_iter()
            .map(|(name, mut rounds)| (name, median(&mut rounds)))
            .collect()
    }

    /// Runs every case; each one's time in every round, in the order they were added.
    pub fn run_rounds(mut self, budget: Duration) -> Vec<(String, Vec<Duration>)> {
        let rounds = rounds(3);
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); self.cases.len()];
        for _ in 0..rounds {
            for (case, out) in self.cases.iter_mut().zip(&mut times) {
                out.push(median_pass(budget / rounds, &mut case.1));
            }
        }
        self.cases
            .into_iter()
            .zip(times)
            .map(|((name, _), t)| (name, t))
            .collect()
    }

    /// Runs one pass of the case named `base` next to each pass of every other case, `pairs`
    /// times over, after a warm-up pass of each. On a machine whose speed swings by tens of
    /// percent within a second, the ratio of two passes seconds apart is mostly that swing; of
    /// two adjacent passes, much less. Which of the two runs first alternates from pair to
    /// pair, so that what one pass leaves the next (a warm or a cold cache, a heap to tidy)
    /// weighs on both sides alike.
    pub fn run_paired(mut self, base: &str, pairs: u32) -> Paired {
        let at = self.cases.iter().position(|(name, _)| name == base);
        for case in &mut self.cases {
            (case.1)();
        }
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); self.cases.len()];
        let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); self.cases.len()];
        for pair in 0..pairs.max(1) {
            for case in 0..self.cases.len() {
                // The base on its own only when nothing else is there to pair it with.
                if at == Some(case) && self.cases.len() > 1 {
                    continue;
                }
                let (time, base_time) = match at.filter(|&at| at != case) {
                    Some(at) if pair % 2 == 0 => {
                        let base_time = timed(&mut self.cases[at].1);
                        (timed(&mut self.cases[case].1), Some(base_time))
                    }
                    Some(at) => {
                        let time = timed(&mut self.cases[case].1);
                        (time, Some(timed(&mut self.cases[at].1)))
                    }
                    None => (timed(&mut self.cases[case].1), None),
                };
                times[case].push(time);
                if let (Some(at), Some(base_time)) = (at, base_time) {
                    times[at].push(base_time);
                    ratios[case].push(time.as_secs_f64() / base_time.as_secs_f64());
                }
            }
        }
        let names: Vec<String> = self.cases.into_iter().map(|(name, _)| name).collect();
        Paired {
            times: names.iter().cloned().zip(times).collect(),
            ratios: names.into_iter().zip(ratios).collect(),
        }
    }
}

/// What [`Group::run_paired`] measured.
pub struct Paired {
    /// Every case's pass times (the base's from every pair).
    pub times: Vec<(String, Vec<Duration>)>,
    /// Every case's ratios to the base pass just before each of its passes (none for the base).
    pub ratios: Vec<(String, Vec<f64>)>,
}

impl Paired {
    /// How many pairs the cases ran (none when the base ran alone).
    pub fn pairs(&self) -> usize {
        self.ratios.iter().map(|(_, r)| r.len()).max().unwrap_or(0)
    }

    /// The median of case `name`'s ratios to the base, if it ran.
    pub fn ratio(&self, name: &str) -> Option<f64> {
        let ratios = self.sorted(name)?;
        ratios.get(ratios.len() / 2).copied()
    }

    /// The first and third quartiles of case `name`'s ratios: how far the pairs spread.
    pub fn middle_half(&self, name: &str) -> Option<(f64, f64)> {
        let ratios = self.sorted(name)?;
        let last = ratios.len().checked_sub(1)?;
        Some((ratios[last / 4], ratios[last - last / 4]))
    }

    fn sorted(&self, name: &str) -> Option<Vec<f64>> {
        let (_, ratios) = self.ratios.iter().find(|(case, _)| case == name)?;
        let mut ratios = ratios.clone();
        ratios.sort_by(f64::total_cmp);
        Some(ratios)
    }
}

/// How many times a bench repeats its corpus a pass: the environment variable `var`, or
/// `default`; at least 1.
pub fn repeat(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(default)
        .max(1)
}

/// `MSP_BENCH_ROUNDS`, or `default`.
pub fn rounds(default: u32) -> u32 {
    std::env::var("MSP_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or(default)
        .max(1)
}

fn timed(pass: &mut dyn FnMut()) -> Duration {
    let start = Instant::now();
    pass();
    start.elapsed()
}

/// The median of `samples`.
pub fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Megabytes (10^6 bytes) per second.
pub fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

/// Key-value results, printed and, when `MSP_BENCH_OUT` names a folder, written there as
/// `<name>.tsv` for `scripts/bench_all.sh`.
pub struct Report {
    name: &'static str,
    rows: Vec<(String, String)>,
}

impl Report {
    /// An empty report named `name`.
    pub fn new(name: &'static str) -> Self {
        Report {
            name,
            rows: Vec::new(),
        }
    }

    /// Records one value.
    pub fn put(&mut self, key: impl Into<String>, value: impl ToString) {
        self.rows.push((key.into(), value.to_string()));
    }

    /// Writes `<MSP_BENCH_OUT>/<name>.tsv` if the variable is set.
    pub fn save(&self) {
        let Some(dir) = std::env::var_os("MSP_BENCH_OUT") else {
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        let path = dir.join(format!("{}.tsv", self.name));
        let written = std::fs::create_dir_all(&dir).and_then(|()| {
            let mut file = std::fs::File::create(&path)?;
            for (key, value) in &self.rows {
                writeln!(file, "{key}\t{value}")?;
            }
            Ok(())
        });
        if let Err(e) = written {
            eprintln!("could not write {}: {e}", path.display());
        }
    }
}

/// `a / b`, formatted with two decimals; `n/a` when either is missing or `b` is zero.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => format!("{:.2}", a / b),
        _ => "n/a".to_owned(),
    }
}
