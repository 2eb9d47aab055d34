//! A small regular-expression matcher for `pattern` constraints, so that generated code
//! needs no regex engine. The generator refuses patterns outside the subset.

/// Whether `text` matches `pattern`, a regular expression of the subset the generator
/// accepts: literals, `.`, escapes, bracket classes, groups without alternation, the
/// quantifiers `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`, and the anchors `^` and `$`.
pub fn pattern_matches(pattern: &str, text: &str) -> bool {
    match parse_pattern(pattern) {
        Ok(pattern) => pattern.is_match(text),
        Err(_) => false,
    }
}

/// A pattern of the supported subset, parsed.
#[derive(Debug)]
pub struct Pattern {
    nodes: Vec<Node>,
    anchored_start: bool,
    anchored_end: bool,
}

#[derive(Debug)]
enum Atom {
    Any,
    Char(char),
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Group(Vec<Node>),
}

#[derive(Debug)]
struct Node {
    atom: Atom,
    min: usize,
    max: usize,
}

/// Parses `pattern`, or says why the generator cannot use it.
pub fn parse_pattern(pattern: &str) -> Result<Pattern, String> {
    let mut chars: Vec<char> = pattern.chars().collect();
    let anchored_start = chars.first() == Some(&'^');
    if anchored_start {
        chars.remove(0);
    }
    let anchored_end = chars.last() == Some(&'$') && !ends_escaped(&chars);
    if anchored_end {
        chars.pop();
    }
    let mut pos = 0;
    let nodes = parse_sequence(&chars, &mut pos, false)?;
    if pos != chars.len() {
        return Err(format!("unexpected `{}` at {}", chars[pos], pos));
    }
    Ok(Pattern {
        nodes,
        anchored_start,
        anchored_end,
    })
}

fn ends_escaped(chars: &[char]) -> bool {
    let slashes = chars[..chars.len() - 1]
        .iter()
        .rev()
        .take_while(|c| **c == '\\')
        .count();
    slashes % 2 == 1
}

fn parse_sequence(chars: &[char], pos: &mut usize, in_group: bool) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    while *pos < chars.len() {
        let atom = match chars[*pos] {
            ')' if in_group => return Ok(nodes),
            '|' => return Err("alternation `|` is not supported".into()),
            '^' | '$' => return Err("anchors are supported only at the ends".into()),
            '(' => {
                *pos += 1;
                if chars.get(*pos) == Some(&'?') {
                    return Err("group modifiers are not supported".into());
                }
                let inner = parse_sequence(chars, pos, true)?;
                if chars.get(*pos) != Some(&')') {
                    return Err("unclosed group".into());
                }
                *pos += 1;
                Atom::Group(inner)
            }
            '[' => parse_class(chars, pos)?,
            '.' => {
                *pos += 1;
                Atom::Any
            }
            '\\' => parse_escape(chars, pos)?,
            '*' | '+' | '?' | '{' | ')' => {
                return Err(format!("`{}` has nothing to repeat", chars[*pos]))
            }
            c => {
                *pos += 1;
                Atom::Char(c)
            }
        };
        let (min, max) = parse_quantifier(chars, pos)?;
        nodes.push(Node { atom, min, max });
    }
    if in_group {
        return Err("unclosed group".into());
    }
    Ok(nodes)
}

fn parse_escape(chars: &[char], pos: &mut usize) -> Result<Atom, String> {
    let c = *chars.get(*pos + 1).ok_or("trailing backslash")?;
    *pos += 2;
    let digit = vec![('0', '9')];
    let word = vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
    let space = vec![(' ', ' '), ('\t', '\r')];
    Ok(match c {
        'd' => Atom::Class {
            negated: false,
            ranges: digit,
        },
        'D' => Atom::Class {
            negated: true,
            ranges: digit,
        },
        'w' => Atom::Class {
            negated: false,
            ranges: word,
        },
        'W' => Atom::Class {
            negated: true,
            ranges: word,
        },
        's' => Atom::Class {
            negated: false,
            ranges: space,
        },
        'S' => Atom::Class {
            negated: true,
            ranges: space,
        },
        c if c.is_ascii_alphanumeric() => return Err(format!("escape `\\{c}` is not supported")),
        c => Atom::Char(c),
    })
}

fn parse_class(chars: &[char], pos: &mut usize) -> Result<Atom, String> {
    *pos += 1;
    let negated = chars.get(*pos) == Some(&'^');
    if negated {
        *pos += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(*pos).ok_or("unclosed class")?;
        if c == ']' && !first {
            *pos += 1;
            break;
        }
        first = false;
        let start = if c == '\\' {
            *pos += 1;
            *chars.get(*pos).ok_or("trailing backslash")?
        } else {
            c
        };
        *pos += 1;
        if chars.get(*pos) == Some(&'-') && chars.get(*pos + 1).is_some_and(|c| *c != ']') {
            let end = chars[*pos + 1];
            *pos += 2;
            ranges.push((start, end));
        } else {
            ranges.push((start, start));
        }
    }
    Ok(Atom::Class { negated, ranges })
}

fn parse_quantifier(chars: &[char], pos: &mut usize) -> Result<(usize, usize), String> {
    let bounds = match chars.get(*pos) {
        Some('?') => (0, 1),
        Some('*') => (0, usize::MAX),
        Some('+') => (1, usize::MAX),
        Some('{') => {
            let close = chars[*pos..]
                .iter()
                .position(|c| *c == '}')
                .ok_or("unclosed `{`")?;
            let body: String = chars[*pos + 1..*pos + close].iter().collect();
            *pos += close;
            let number = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("bad bound `{{{body}}}`"))
            };
            match body.split_once(',') {
                None => {
                    let n = number(&body)?;
                    (n, n)
                }
                Some((lo, "")) => (number(lo)?, usize::MAX),
                Some((lo, hi)) => (number(lo)?, number(hi)?),
            }
        }
        _ => return Ok((1, 1)),
    };
    *pos += 1;
    if matches!(chars.get(*pos), Some('?') | Some('+')) {
        return Err("lazy and possessive quantifiers are not supported".into());
    }
    Ok(bounds)
}

impl Pattern {
    /// Whether the pattern matches somewhere in `text` (everywhere, when anchored).
    pub fn is_match(&self, text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        let starts = if self.anchored_start {
            0..=0
        } else {
            0..=chars.len()
        };
        starts.into_iter().any(|start| {
            match_nodes(&self.nodes, &chars, start, &mut |end| {
                !self.anchored_end || end == chars.len()
            })
        })
    }
}

// Backtracking over a sequence: `accept` decides whether an end position completes a match.
fn match_nodes(
    nodes: &[Node],
    text: &[char],
    at: usize,
    accept: &mut dyn FnMut(usize) -> bool,
) -> bool {
    let Some((node, rest)) = nodes.split_first() else {
        return accept(at);
    };
    match_repeat(node, 0, rest, text, at, accept)
}

fn match_repeat(
    node: &Node,
    count: usize,
    rest: &[Node],
    text: &[char],
    at: usize,
    accept: &mut dyn FnMut(usize) -> bool,
) -> bool {
    if count < node.max
        && match_atom(&node.atom, text, at, &mut |next| {
            next != at && match_repeat(node, count + 1, rest, text, next, accept)
        })
    {
        return true;
    }
    count >= node.min && match_nodes(rest, text, at, accept)
}

fn match_atom(
    atom: &Atom,
    text: &[char],
    at: usize,
    accept: &mut dyn FnMut(usize) -> bool,
) -> bool {
    match atom {
        Atom::Group(nodes) => match_nodes(nodes, text, at, accept),
        _ => {
            let Some(c) = text.get(at) else { return false };
            let hit = match atom {
                Atom::Any => *c != '\n',
                Atom::Char(want) => c == want,
                Atom::Class { negated, ranges } => {
                    ranges.iter().any(|(lo, hi)| lo <= c && c <= hi) != *negated
                }
                Atom::Group(_) => unreachable!("handled above"),
            };
            hit && accept(at + 1)
        }
    }
}

impl Pattern {
    /// A string the pattern matches; `pick(n)` chooses a number below `n` (random in tests).
    ///
    /// Repetitions stay short (at most three beyond the minimum); unanchored patterns get no
    /// extra text around the match.
    pub fn sample(&self, pick: &mut dyn FnMut(usize) -> usize) -> String {
        let mut out = String::new();
        sample_nodes(&self.nodes, pick, &mut out);
        out
    }
}

fn sample_nodes(nodes: &[Node], pick: &mut dyn FnMut(usize) -> usize, out: &mut String) {
    for node in nodes {
        let extra = node.max.saturating_sub(node.min).min(3);
        let count = node.min + pick(extra + 1);
        for _ in 0..count {
            match &node.atom {
                Atom::Char(c) => out.push(*c),
                Atom::Any => out.push(char::from(b' ' + pick(95) as u8)),
                Atom::Group(inner) => sample_nodes(inner, pick, out),
                Atom::Class {
                    negated: false,
                    ranges,
                } => {
                    let (lo, hi) = ranges[pick(ranges.len())];
                    let span = (hi as u32).saturating_sub(lo as u32) as usize + 1;
                    out.push(char::from_u32(lo as u32 + pick(span) as u32).unwrap_or(lo));
                }
                Atom::Class {
                    negated: true,
                    ranges,
                } => {
                    let allowed: Vec<char> = (' '..='~')
                        .filter(|c| !ranges.iter().any(|(lo, hi)| lo <= c && c <= hi))
                        .collect();
                    if let Some(c) = allowed.get(pick(allowed.len().max(1))) {
                        out.push(*c);
                    }
                }
            }
        }
    }
}
