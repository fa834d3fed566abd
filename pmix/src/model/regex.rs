//! `PMIx_generate_regex` and `PMIx_generate_ppn` (PMIx v5.0 §17.2.1, §17.2.2), and their
//! parsing: the compact strings a host registers as `PMIX_NODE_MAP` and `PMIX_PROC_MAP`.
//!
//! The standard leaves the format to the implementation; a server must read what hosts built
//! against either implementation send, so this module speaks OpenPMIx 4.2's formats, as
//! measured from its `libpmix.so.2`:
//!
//! | input | OpenPMIx 4.2.2 output |
//! |---|---|
//! | `node001,node002,node003,node010,c1,c2` | `pmix[node[3:1-3,10],c[1:1-2]]` |
//! | `n9,n10,n11,n3` | `pmix[n[1:9],n[2:10-11],n[1:3]]` |
//! | `a1b2,a1b3` | `pmix[a[1:1]b2,a[1:1]b3]` |
//! | `a,b,c` | `pmix[a,b,c]` |
//! | `0,1,2;3,4;5` (ranks per node) | `raw:0,1,2;3,4;5` |
//! | `0,…,7;8,…,15` | `pmix[0-7;8-15]` |
//!
//! A node list is `pmix[` elements `]`, elements separated by commas outside brackets. An
//! element is a plain name, or `prefix[width:ranges]suffix` standing for the names
//! `prefix` + each number of `ranges` zero-padded to `width` digits + `suffix`; ranges are
//! `a` or `a-b`, comma-separated. Consecutive names with the same prefix, width and suffix
//! share an element, in the order given. A ranks-per-node list is `pmix[` nodes `]` with nodes
//! separated by `;`, each a comma-separated list of `a` or `a-b`; or `raw:` followed by the
//! list as given. Parsing also accepts a plain list without prefix. OpenPMIx's compressed form
//! (`blob:`, zlib) is not produced by 4.2.2 for the sizes measured (2000 nodes) and is
//! answered `PMIX_ERR_NOT_SUPPORTED`.
//!
//! Expansion is bounded: at most [`MAX_EXPANDED`] names or ranks, beyond which input is a
//! `PMIX_ERR_BAD_PARAM`, so a hostile `n[1:0-4000000000]` cannot exhaust memory.

use crate::model::Status;

/// The most names or ranks a map may expand to.
pub const MAX_EXPANDED: usize = 1 << 22;

/// `PMIx_generate_regex`: a comma-separated list of node names as a node map.
pub fn generate_regex(nodes: &str) -> Result<String, Status> {
    if nodes.is_empty() {
        return Ok("raw:".into());
    }
    let mut elements: Vec<Element> = Vec::new();
    for name in nodes.split(',') {
        if name.is_empty() || name.contains(['[', ']', ';', ':']) {
            return Err(Status::ERR_BAD_PARAM);
        }
        let next = Element::of(name);
        match (elements.last_mut(), next) {
            (Some(Element::Numbered(last)), Element::Numbered(n)) if last.same_shape(&n) => {
                last.push(n.numbers[0]);
            }
            (_, e) => elements.push(e),
        }
    }
    let body: Vec<String> = elements.iter().map(Element::render).collect();
    Ok(format!("pmix[{}]", body.join(",")))
}

/// `PMIx_generate_ppn`: ranks per node (`;` between nodes, `,` between ranks) as a proc map.
pub fn generate_ppn(ranks: &str) -> Result<String, Status> {
    let nodes = parse_rank_lists(ranks)?;
    let native: Vec<String> = nodes.iter().map(|n| render_ranges(n, "-")).collect();
    let native = format!("pmix[{}]", native.join(";"));
    let raw = format!("raw:{ranks}");
    // Both forms parse everywhere; use the shorter.
    Ok(if native.len() < raw.len() {
        native
    } else {
        raw
    })
}

/// Expand a node map into its node names.
pub fn parse_regex(map: &str) -> Result<Vec<String>, Status> {
    if map.starts_with("blob:") {
        return Err(Status::ERR_NOT_SUPPORTED);
    }
    let body = if let Some(b) = map.strip_prefix("raw:") {
        return Ok(split_plain(b));
    } else if let Some(b) = map.strip_prefix("pmix[").and_then(|b| b.strip_suffix(']')) {
        b
    } else {
        return Ok(split_plain(map));
    };
    let mut out = Vec::new();
    for element in split_outside_brackets(body)? {
        expand_element(element, &mut out)?;
    }
    Ok(out)
}

/// Expand a proc map into the ranks of each node.
pub fn parse_ppn(map: &str) -> Result<Vec<Vec<u32>>, Status> {
    if map.starts_with("blob:") {
        return Err(Status::ERR_NOT_SUPPORTED);
    }
    let body = map
        .strip_prefix("raw:")
        .or_else(|| map.strip_prefix("pmix[").and_then(|b| b.strip_suffix(']')))
        .unwrap_or(map);
    parse_rank_lists(body)
}

// ---- node names ----

/// One element of a node map.
#[derive(Debug)]
enum Element {
    Plain(String),
    Numbered(Numbered),
}

/// `prefix[width:numbers]suffix`.
#[derive(Debug)]
struct Numbered {
    prefix: String,
    width: usize,
    suffix: String,
    numbers: Vec<u64>,
}

impl Numbered {
    fn same_shape(&self, other: &Numbered) -> bool {
        self.prefix == other.prefix && self.width == other.width && self.suffix == other.suffix
    }

    fn push(&mut self, n: u64) {
        self.numbers.push(n);
    }
}

impl Element {
    /// Split a name at its first run of digits.
    fn of(name: &str) -> Element {
        let Some(start) = name.find(|c: char| c.is_ascii_digit()) else {
            return Element::Plain(name.to_owned());
        };
        let digits_len = name[start..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(name.len() - start);
        let digits = &name[start..start + digits_len];
        let prefix = &name[..start];
        let suffix = &name[start + digits_len..];
        // Characters OpenPMIx keeps out of numbered elements are kept out here too.
        let plain_only = |s: &str| s.contains(|c: char| !(c.is_ascii_alphanumeric() || c == '.'));
        match digits.parse::<u64>() {
            Ok(n) if !plain_only(prefix) && !plain_only(suffix) => Element::Numbered(Numbered {
                prefix: prefix.to_owned(),
                width: digits_len,
                suffix: suffix.to_owned(),
                numbers: vec![n],
            }),
            _ => Element::Plain(name.to_owned()),
        }
    }

    fn render(&self) -> String {
        match self {
            Element::Plain(s) => s.clone(),
            Element::Numbered(n) => format!(
                "{}[{}:{}]{}",
                n.prefix,
                n.width,
                render_ranges(&n.numbers, "-"),
                n.suffix
            ),
        }
    }
}

/// Numbers as `a-b` runs of consecutive values, comma-separated, in the given order.
fn render_ranges<T: Copy + Into<u64>>(numbers: &[T], dash: &str) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let first: u64 = numbers[i].into();
        let mut last = first;
        while i + 1 < numbers.len() && numbers[i + 1].into() == last + 1 {
            last += 1;
            i += 1;
        }
        parts.push(if first == last {
            first.to_string()
        } else {
            format!("{first}{dash}{last}")
        });
        i += 1;
    }
    parts.join(",")
}

fn split_plain(list: &str) -> Vec<String> {
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Split at commas that are not inside `[...]`.
fn split_outside_brackets(body: &str) -> Result<Vec<&str>, Status> {
    let mut out = Vec::new();
    let mut depth = 0u32;
    let mut start = 0;
    for (i, c) in body.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' => return Err(Status::ERR_BAD_PARAM), // nested brackets
            ']' if depth == 1 => depth = 0,
            ']' => return Err(Status::ERR_BAD_PARAM),
            ',' if depth == 0 => {
                out.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    out.push(&body[start..]);
    Ok(out)
}

fn expand_element(element: &str, out: &mut Vec<String>) -> Result<(), Status> {
    let Some(open) = element.find('[') else {
        if element.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        out.push(element.to_owned());
        return Ok(());
    };
    let close = element.find(']').ok_or(Status::ERR_BAD_PARAM)?;
    let (prefix, inner, suffix) = (
        &element[..open],
        &element[open + 1..close],
        &element[close + 1..],
    );
    let (width, ranges) = inner.split_once(':').ok_or(Status::ERR_BAD_PARAM)?;
    let width: usize = width.parse().map_err(|_| Status::ERR_BAD_PARAM)?;
    if width > 20 {
        return Err(Status::ERR_BAD_PARAM);
    }
    for_each_in_ranges(ranges, out.len(), |n| {
        out.push(format!("{prefix}{n:0width$}{suffix}"));
    })
}

// ---- ranks ----

fn parse_rank_lists(body: &str) -> Result<Vec<Vec<u32>>, Status> {
    let mut total = 0usize;
    let mut nodes = Vec::new();
    for node in body.split(';') {
        let mut ranks = Vec::new();
        if !node.is_empty() {
            for_each_in_ranges(node, total, |r| ranks.push(r))?;
        }
        total += ranks.len();
        let ranks = ranks
            .into_iter()
            .map(|r| u32::try_from(r).map_err(|_| Status::ERR_BAD_PARAM))
            .collect::<Result<Vec<u32>, Status>>()?;
        nodes.push(ranks);
    }
    Ok(nodes)
}

/// Call `f` for each number of `a,b-c,...`, refusing expansions past [`MAX_EXPANDED`] (counting
/// `already` produced before).
fn for_each_in_ranges(ranges: &str, already: usize, mut f: impl FnMut(u64)) -> Result<(), Status> {
    let mut count = already;
    for part in ranges.split(',') {
        let number = |s: &str| s.trim().parse::<u64>().map_err(|_| Status::ERR_BAD_PARAM);
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if last < first {
            return Err(Status::ERR_BAD_PARAM);
        }
        let len = usize::try_from(last - first)
            .ok()
            .and_then(|l| l.checked_add(1))
            .ok_or(Status::ERR_BAD_PARAM)?;
        count = count.checked_add(len).ok_or(Status::ERR_BAD_PARAM)?;
        if count > MAX_EXPANDED {
            return Err(Status::ERR_BAD_PARAM);
        }
        for n in first..=last {
            f(n);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &str) -> Vec<String> {
        split_plain(list)
    }

    #[test]
    fn generates_what_openpmix_4_2_2_generates() {
        // Each expected string was produced by OpenPMIx 4.2.2's PMIx_generate_regex on the
        // same input (Debian's libpmix.so.2).
        for (input, openpmix) in [
            (
                "node001,node002,node003,node010,c1,c2",
                "pmix[node[3:1-3,10],c[1:1-2]]",
            ),
            ("n9,n10,n11,n3", "pmix[n[1:9],n[2:10-11],n[1:3]]"),
            ("a1b2,a1b3", "pmix[a[1:1]b2,a[1:1]b3]"),
            ("a,b,c", "pmix[a,b,c]"),
            ("n01,n02,n03,n1", "pmix[n[2:1-3],n[1:1]]"),
            ("node_1,node_2", "pmix[node_1,node_2]"),
        ] {
            assert_eq!(generate_regex(input).unwrap(), openpmix, "{input}");
        }
    }

    #[test]
    fn parses_what_openpmix_4_2_2_generates() {
        for (openpmix, input) in [
            (
                "pmix[node[3:1-3,10],c[1:1-2]]",
                "node001,node002,node003,node010,c1,c2",
            ),
            (
                "pmix[n[2:1],n[1:1-2],n[3:2],x,y[1:5],y[2:5],node-a1,[1:2-3]]",
                "n01,n1,n2,n002,x,y5,y05,node-a1,2,3",
            ),
            ("pmix[node[4:0-1999]]", ""),
        ] {
            let expanded = parse_regex(openpmix).unwrap();
            if input.is_empty() {
                assert_eq!(expanded.len(), 2000);
                assert_eq!(expanded[0], "node0000");
                assert_eq!(expanded[1999], "node1999");
            } else {
                assert_eq!(expanded, names(input), "{openpmix}");
            }
        }
        assert_eq!(
            parse_ppn("raw:0,1,2;3,4;5").unwrap(),
            vec![vec![0, 1, 2], vec![3, 4], vec![5]]
        );
        assert_eq!(
            parse_ppn("pmix[0-7;8-15]").unwrap(),
            vec![(0..8).collect::<Vec<u32>>(), (8..16).collect()]
        );
    }

    #[test]
    fn node_lists_round_trip() {
        for input in [
            "n1",
            "n1,n1",
            "node9,node10,node11",
            "x001,x002,x004,y,z7,z8.cluster,z9.cluster",
            "rack1-node1,rack1-node2",
            "10.0.0.1,10.0.0.2",
            "a,b,c",
        ] {
            let map = generate_regex(input).unwrap();
            assert_eq!(parse_regex(&map).unwrap(), names(input), "{input} -> {map}");
        }
        // A plain list, without prefix, is read as is.
        assert_eq!(parse_regex("a,b").unwrap(), names("a,b"));
        assert_eq!(parse_regex("raw:a,b").unwrap(), names("a,b"));
    }

    #[test]
    fn rank_lists_round_trip_in_the_shorter_form() {
        for input in ["0,1,2;3,4;5", "0,2,4;1,3", "5,4,3;0", "0"] {
            let map = generate_ppn(input).unwrap();
            let expected = parse_rank_lists(input).unwrap();
            assert_eq!(parse_ppn(&map).unwrap(), expected, "{input} -> {map}");
        }
        let big: Vec<String> = (0..100)
            .map(|n| {
                (n * 64..(n + 1) * 64)
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect();
        let map = generate_ppn(&big.join(";")).unwrap();
        assert!(map.starts_with("pmix[0-63;64-127;"), "{map}");
        assert_eq!(parse_ppn(&map).unwrap().len(), 100);
    }

    #[test]
    fn bad_maps_are_bad_parameters_not_panics_or_huge_allocations() {
        for bad in [
            "pmix[n[1:0-4000000000]]",
            "pmix[n[1:5-2]]",
            "pmix[n[x:1]]",
            "pmix[n[1:1]",
            "pmix[n[[1:1]]]",
            "pmix[n1:1]]",
            "pmix[n[99:1]]",
            "pmix[n[1:18446744073709551615-0]]",
            "pmix[n[1:0-18446744073709551615]]",
            "pmix[,]",
        ] {
            assert_eq!(parse_regex(bad), Err(Status::ERR_BAD_PARAM), "{bad}");
        }
        for bad in ["pmix[0-4294967296]", "raw:1,x", "raw:0-99999999999", "3-1"] {
            assert_eq!(parse_ppn(bad), Err(Status::ERR_BAD_PARAM), "{bad}");
        }
        assert_eq!(parse_regex("blob:xyz"), Err(Status::ERR_NOT_SUPPORTED));
        assert_eq!(generate_regex("a,,b"), Err(Status::ERR_BAD_PARAM));
        assert_eq!(generate_regex("a[1]"), Err(Status::ERR_BAD_PARAM));
    }
}
