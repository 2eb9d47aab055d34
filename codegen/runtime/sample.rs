//! Random values of every generated type that respect the schema's constraints, for
//! property tests (feature `sample`). A small seeded generator keeps runs reproducible.

use serde_json::{Map, Value};

/// A source of random choices, with a depth budget that keeps recursive types finite.
#[derive(Clone, Debug)]
pub struct Sampler {
    state: u64,
    depth: u32,
}

/// How deep collections and optional members keep growing before they stay empty.
const MAX_DEPTH: u32 = 4;

impl Sampler {
    /// A sampler whose choices follow from `seed`.
    pub fn new(seed: u64) -> Self {
        Sampler {
            state: seed ^ 0x9e37_79b9_7f4a_7c15,
            depth: 0,
        }
    }

    /// The next random number (splitmix64).
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// A coin flip.
    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    /// Whether an optional member is present: always stops past the depth budget.
    pub fn present(&mut self) -> bool {
        self.depth < MAX_DEPTH && self.coin()
    }

    /// How many items a collection gets: none past the depth budget.
    pub fn count(&mut self) -> usize {
        if self.depth < MAX_DEPTH {
            self.below(3)
        } else {
            0
        }
    }

    /// Samples a nested value one level deeper.
    pub fn nested<T: Sample>(&mut self) -> T {
        self.depth += 1;
        let value = T::sample(self);
        self.depth -= 1;
        value
    }

    /// A string, with characters JSON must escape now and then.
    pub fn string(&mut self) -> String {
        const PIECES: &[&str] = &["a", "Z", "0", "_", "-", " ", "é", "\"", "\\", "\n", "→", "𝄞", "id", "/"];
        (0..self.below(8)).map(|_| PIECES[self.below(PIECES.len())]).collect()
    }

    /// A string that `pattern` matches.
    pub fn matching(&mut self, pattern: &str) -> String {
        match crate::pattern::parse_pattern(pattern) {
            Ok(parsed) => parsed.sample(&mut |n| self.below(n)),
            Err(_) => String::new(),
        }
    }

    /// An integer within the bounds (inclusive), small when unbounded.
    pub fn integer(&mut self, min: Option<f64>, max: Option<f64>) -> i64 {
        let lo = min.map_or(-1_000_000, |m| m.ceil() as i64);
        let hi = max.map_or(lo.max(0) + 2_000_000, |m| m.floor() as i64);
        let span = (hi - lo).max(0) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    /// A finite number within the bounds.
    pub fn number(&mut self, min: Option<f64>, max: Option<f64>) -> f64 {
        let lo = min.unwrap_or(-1.0e6);
        let hi = max.unwrap_or(lo.max(0.0) + 2.0e6);
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// A JSON number within the bounds: an integer or a fraction.
    pub fn json_number(&mut self, min: Option<f64>, max: Option<f64>) -> serde_json::Number {
        if self.coin() {
            serde_json::Number::from(self.integer(min, max))
        } else {
            let value = self.number(min, max);
            serde_json::Number::from_f64(value).unwrap_or_else(|| serde_json::Number::from(0))
        }
    }

    /// A wire value an enum or union does not list, so it round-trips as unknown.
    pub fn unknown_value(&mut self, known: &[&str]) -> String {
        loop {
            let candidate = format!("future{}", self.below(1000));
            if !known.contains(&candidate.as_str()) {
                return candidate;
            }
        }
    }

    /// Members a newer schema might add, under names `known` does not use.
    pub fn unknown_members(&mut self, known: &[&str]) -> Map<String, Value> {
        let mut out = Map::new();
        if self.depth < MAX_DEPTH && self.below(4) == 0 {
            let name = format!("future{}", self.unknown_value(known));
            out.insert(name, self.json());
        }
        out
    }

    /// Any JSON value, small.
    pub fn json(&mut self) -> Value {
        let depth_left = self.depth < MAX_DEPTH;
        match self.below(if depth_left { 7 } else { 5 }) {
            0 => Value::Null,
            1 => Value::Bool(self.coin()),
            2 => Value::from(self.integer(None, None)),
            3 => Value::from(self.number(None, None)),
            4 => Value::String(self.string()),
            5 => {
                self.depth += 1;
                let items = (0..self.count()).map(|_| self.json()).collect();
                self.depth -= 1;
                Value::Array(items)
            }
            _ => Value::Object(self.object()),
        }
    }

    /// Any JSON object, small.
    pub fn object(&mut self) -> Map<String, Value> {
        self.depth += 1;
        let mut out = Map::new();
        for _ in 0..self.count() {
            let key = self.string();
            let value = self.json();
            out.insert(key, value);
        }
        self.depth -= 1;
        out
    }
}

/// A type whose values can be sampled.
pub trait Sample: Sized {
    /// A random value that the schema accepts.
    fn sample(g: &mut Sampler) -> Self;
}

impl Sample for String {
    fn sample(g: &mut Sampler) -> Self {
        g.string()
    }
}

impl Sample for i64 {
    fn sample(g: &mut Sampler) -> Self {
        g.integer(None, None)
    }
}

impl Sample for f64 {
    fn sample(g: &mut Sampler) -> Self {
        g.number(None, None)
    }
}

impl Sample for serde_json::Number {
    fn sample(g: &mut Sampler) -> Self {
        g.json_number(None, None)
    }
}

impl Sample for bool {
    fn sample(g: &mut Sampler) -> Self {
        g.coin()
    }
}

impl Sample for Value {
    fn sample(g: &mut Sampler) -> Self {
        g.json()
    }
}

impl Sample for Map<String, Value> {
    fn sample(g: &mut Sampler) -> Self {
        g.object()
    }
}

impl<T: Sample> Sample for Box<T> {
    fn sample(g: &mut Sampler) -> Self {
        Box::new(T::sample(g))
    }
}

impl<T: Sample> Sample for Option<T> {
    fn sample(g: &mut Sampler) -> Self {
        g.present().then(|| g.nested())
    }
}

impl<T: Sample> Sample for crate::Tristate<T> {
    fn sample(g: &mut Sampler) -> Self {
        match g.below(3) {
            0 => crate::Tristate::Absent,
            1 => crate::Tristate::Null,
            _ if g.present() => crate::Tristate::Value(g.nested()),
            _ => crate::Tristate::Absent,
        }
    }
}

impl<T: Sample> Sample for Vec<T> {
    fn sample(g: &mut Sampler) -> Self {
        (0..g.count()).map(|_| g.nested()).collect()
    }
}

impl<T: Sample> Sample for std::collections::BTreeMap<String, T> {
    fn sample(g: &mut Sampler) -> Self {
        (0..g.count()).map(|_| (g.string(), g.nested())).collect()
    }
}

/// A member that a `dependentRequired` rule may drop: an optional one.
#[doc(hidden)]
pub trait Dependent {
    /// Whether the member is absent.
    fn is_absent(&self) -> bool;
    /// Drops the member.
    fn clear(&mut self);
}

impl<T> Dependent for Option<T> {
    fn is_absent(&self) -> bool {
        self.is_none()
    }
    fn clear(&mut self) {
        *self = None;
    }
}

impl<T> Dependent for crate::Tristate<T> {
    fn is_absent(&self) -> bool {
        crate::Tristate::is_absent(self)
    }
    fn clear(&mut self) {
        *self = crate::Tristate::Absent;
    }
}

/// A struct's [`Sample`] impl, from one entry a member: `kind field = "wire"`, the kinds as in
/// `support::impl_serde!` (`required`, `nullable`, `optional`, `tristate`). A member is
/// drawn by its type, or within its constraints: `=> matching("pattern")`,
/// `=> integer(min M max M)`, `=> number(min M max M)` (either bound may be left out). After
/// the unknown members' field, `; member needs other …` for each `dependentRequired` rule: the
/// member is dropped when one it needs is absent.
macro_rules! impl_sample {
    (
        $name:ident {
            $($(#[$gate:meta])* $kind:ident $field:ident = $wire:literal $(=> $draw:ident $how:tt)?,)*
        } $unknown:ident $(; $member:ident needs $($need:ident)+)*
    ) => {
        impl $crate::sample::Sample for $name {
            fn sample(g: &mut $crate::sample::Sampler) -> Self {
                #[allow(unused_mut)]
                let mut value = Self {
                    $($(#[$gate])* $field: $crate::sample::impl_sample!(@member g $kind [$($draw $how)?]),)*
                    $unknown: g.unknown_members(&[$($wire),*]),
                };
                $(
                    if $($crate::sample::Dependent::is_absent(&value.$need))||+ {
                        $crate::sample::Dependent::clear(&mut value.$member);
                    }
                )*
                value
            }
        }
    };
    (@member $g:ident required [$($draw:tt)*]) => {
        $crate::sample::impl_sample!(@draw $g $($draw)*)
    };
    (@member $g:ident nullable [$($draw:tt)*]) => {
        if $g.coin() { Some($crate::sample::impl_sample!(@draw $g $($draw)*)) } else { None }
    };
    (@member $g:ident optional [$($draw:tt)*]) => {
        if $g.present() { Some($crate::sample::impl_sample!(@draw $g $($draw)*)) } else { None }
    };
    (@member $g:ident tristate [$($draw:tt)*]) => {
        match $g.below(3) {
            0 => $crate::Tristate::Absent,
            1 => $crate::Tristate::Null,
            _ if $g.present() => $crate::Tristate::Value($crate::sample::impl_sample!(@draw $g $($draw)*)),
            _ => $crate::Tristate::Absent,
        }
    };
    // By the member's type (a box samples what it holds).
    (@draw $g:ident) => {
        $g.nested()
    };
    // Within the constraints; `into` boxes the value for a boxed member.
    (@draw $g:ident matching ($pattern:literal)) => {
        $g.matching($pattern).into()
    };
    (@draw $g:ident integer ($(min $min:literal)? $(max $max:literal)?)) => {
        $g.integer($crate::sample::impl_sample!(@bound $($min)?), $crate::sample::impl_sample!(@bound $($max)?)).into()
    };
    (@draw $g:ident number ($(min $min:literal)? $(max $max:literal)?)) => {
        $g.json_number($crate::sample::impl_sample!(@bound $($min)?), $crate::sample::impl_sample!(@bound $($max)?)).into()
    };
    (@bound) => {
        None
    };
    (@bound $bound:literal) => {
        Some($bound)
    };
}

pub(crate) use impl_sample;
