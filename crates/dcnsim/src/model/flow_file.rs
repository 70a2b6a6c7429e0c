//! Flow files: a fixed list of flows to replay instead of drawing Poisson arrivals
//! (docs/models.md §6.4).
//!
//! The format is the one of the HPCC authors' ns-3 simulator (`simulation/mix/flow.txt` of
//! alibaba-edu/High-Precision-Congestion-Control, written by its `traffic_gen.py`): the first
//! line holds the number of flows N, each of the next N lines one flow
//!
//! ```text
//! src dst pg dport size start
//! ```
//!
//! with `src` and `dst` host indices (here: positions in the workload's host list), `pg`
//! the priority group (here: the traffic class, which selects the service), `dport` a port
//! number (read and checked, otherwise unused), `size` in bytes and `start` in seconds. As in
//! that simulator only the first N flow lines are read; lines after them are ignored. Blank
//! lines and text after `#` are skipped. The flows are returned in start order (ties keep
//! file order), so a file need not be sorted.

use crate::base::units::SimTime;

/// One flow of a flow file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileFlow {
    /// Host indices into the workload's host list.
    pub src: u32,
    pub dst: u32,
    /// Traffic class (`pg`).
    pub class: u8,
    pub bytes: u64,
    pub start: SimTime,
}

/// Largest flow accepted (1 TB), largest start (one day) and most flows (10 million).
const MAX_BYTES: u64 = 1 << 40;
const MAX_START_S: f64 = 86_400.0;
const MAX_FLOWS: u64 = 10_000_000;

fn int(file: &str, line: usize, what: &str, s: &str, max: u64) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(v) if v <= max => Ok(v),
        Ok(v) => Err(format!("{file}:{line}: {what}: {v} is above {max}")),
        Err(_) => Err(format!(
            "{file}:{line}: {what}: expected a whole number, found '{s}'"
        )),
    }
}

/// Parse a flow file's `text` (named `file` in errors) for a workload of `hosts` hosts.
/// Errors are one line: file, line, field and what was expected.
pub fn parse_flow_file(text: &str, file: &str, hosts: usize) -> Result<Vec<FileFlow>, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(n, raw)| (n + 1, raw.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty());
    let Some((ln, first)) = lines.next() else {
        return Err(format!(
            "{file}: empty: expected the number of flows on line 1"
        ));
    };
    let n = int(file, ln, "number of flows", first, MAX_FLOWS)?;
    if n == 0 {
        return Err(format!("{file}:{ln}: number of flows: expected at least 1"));
    }
    let last_host = hosts.saturating_sub(1) as u64;
    let mut flows = Vec::with_capacity(n as usize);
    for (ln, l) in lines.by_ref().take(n as usize) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 6 {
            return Err(format!(
                "{file}:{ln}: expected 'src dst pg dport size start' (6 fields), found {}",
                f.len()
            ));
        }
        let src = int(file, ln, "src (host index)", f[0], last_host)? as u32;
        let dst = int(file, ln, "dst (host index)", f[1], last_host)? as u32;
        if src == dst {
            return Err(format!("{file}:{ln}: dst: the same host as src ({src})"));
        }
        let class = int(file, ln, "pg (traffic class)", f[2], 255)? as u8;
        int(file, ln, "dport", f[3], 65_535)?;
        let bytes = int(file, ln, "size (bytes)", f[4], MAX_BYTES)?;
        if bytes == 0 {
            return Err(format!("{file}:{ln}: size (bytes): expected at least 1"));
        }
        let start = match f[5].parse::<f64>() {
            Ok(s) if (0.0..=MAX_START_S).contains(&s) => SimTime::from_secs_f64(s),
            _ => {
                return Err(format!(
                    "{file}:{ln}: start: expected seconds in [0, {MAX_START_S}], found '{}'",
                    f[5]
                ))
            }
        };
        flows.push(FileFlow {
            src,
            dst,
            class,
            bytes,
            start,
        });
    }
    if (flows.len() as u64) < n {
        return Err(format!(
            "{file}: line 1 announces {n} flows, the file has {}",
            flows.len()
        ));
    }
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_n_flows_in_start_order() {
        let text = "3\n2 1 3 100 200000 2\n# a comment\n\n0 1 3 100 5000 0.5\n1 0 1 100 7 1e-6\n9 9 9 9 9 9\n";
        let f = parse_flow_file(text, "f.txt", 3).unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(
            f[0],
            FileFlow {
                src: 1,
                dst: 0,
                class: 1,
                bytes: 7,
                start: SimTime::from_us(1)
            }
        );
        assert_eq!(
            (f[1].src, f[1].bytes, f[1].start),
            (0, 5000, SimTime::from_ms(500))
        );
        assert_eq!((f[2].src, f[2].dst, f[2].class), (2, 1, 3));
        assert_eq!(f[2].start, SimTime::from_ms(2000));
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let e = |t: &str| parse_flow_file(t, "f.txt", 4).unwrap_err();
        assert_eq!(
            e(""),
            "f.txt: empty: expected the number of flows on line 1"
        );
        assert_eq!(
            e("x\n"),
            "f.txt:1: number of flows: expected a whole number, found 'x'"
        );
        assert_eq!(
            e("2\n0 1 3 100 10 0\n"),
            "f.txt: line 1 announces 2 flows, the file has 1"
        );
        assert_eq!(
            e("1\n0 1 3 100 10\n"),
            "f.txt:2: expected 'src dst pg dport size start' (6 fields), found 5"
        );
        assert_eq!(
            e("1\n0 4 3 100 10 0\n"),
            "f.txt:2: dst (host index): 4 is above 3"
        );
        assert_eq!(
            e("1\n2 2 3 100 10 0\n"),
            "f.txt:2: dst: the same host as src (2)"
        );
        assert_eq!(
            e("1\n0 1 256 100 10 0\n"),
            "f.txt:2: pg (traffic class): 256 is above 255"
        );
        assert_eq!(
            e("1\n0 1 3 100 0 0\n"),
            "f.txt:2: size (bytes): expected at least 1"
        );
        assert_eq!(
            e("1\n0 1 3 100 10 -1\n"),
            "f.txt:2: start: expected seconds in [0, 86400], found '-1'"
        );
        assert_eq!(
            e("1\n0 1 3 100 10 nan\n"),
            "f.txt:2: start: expected seconds in [0, 86400], found 'nan'"
        );
    }
}
