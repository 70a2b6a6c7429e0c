//! schema.txt (the text `dcnsim schema` prints) against the code, section by section: every
//! key of a section's struct is named in the section's text; a key with a constant default
//! is written `key = value` there, and that value, read by the real deserializer, gives
//! exactly the code's default; a key without one (an `Option`: required, or falling back on
//! other keys or the topology) is given no value; and a `key = value` written in the text is
//! a key of the struct. Changing a default without schema.txt (or the reverse) fails here.

use dcnsim::scenario::config::apps::{
    BulkCfg, CbrCfg, FlowsCfg, IncastCfg, MixCfg, PingCfg, TransactionsCfg, WorkloadCfg,
};
use dcnsim::scenario::config::l2::{PauseCfgFile, QcnCpCfg, RpCfgFile};
use dcnsim::scenario::{
    build, load, AppCfg, AqmCfg, MarkCfg, MarkDefaults, MeasureCfg, QueuesCfg, SimCfg, TcpCfgFile,
    TopologyCfg,
};
use serde::de::DeserializeOwned;
use std::fmt::Debug;

const SCHEMA: &str = include_str!("../../src/schema.txt");

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// The text from the first line that starts with `start` (after its indentation) to the
/// line before the first one after it that starts with `end`.
fn between(start: &str, end: &str) -> String {
    let lines: Vec<&str> = SCHEMA.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("schema.txt has no line starting {start:?}"));
    let j = (i + 1..lines.len())
        .find(|&j| lines[j].trim_start().starts_with(end))
        .unwrap_or_else(|| panic!("schema.txt has no line starting {end:?} after {start:?}"));
    lines[i..j].join("\n")
}

/// Every line that starts with one of `heads` (after its indentation), each with the
/// deeper-indented lines after it.
fn blocks(heads: &[&str]) -> String {
    let lines: Vec<&str> = SCHEMA.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        i += 1;
        if !heads.iter().any(|h| l.trim_start().starts_with(h)) {
            continue;
        }
        out.push(l);
        while i < lines.len() && indent(lines[i]) > indent(l) && !lines[i].trim().is_empty() {
            out.push(lines[i]);
            i += 1;
        }
    }
    assert!(!out.is_empty(), "schema.txt has no line starting {heads:?}");
    out.join("\n")
}

/// The offsets just after each `name = ` written in `text` (`name` as a whole word).
fn assignments(text: &str, name: &str) -> Vec<usize> {
    let pat = format!("{name} = ");
    text.match_indices(&pat)
        .filter(|(i, _)| !text[..*i].ends_with(is_word))
        .map(|(i, _)| i + pat.len())
        .collect()
}

/// Every word written `word = ` in `text`.
fn assigned_words(text: &str) -> Vec<&str> {
    text.match_indices(" = ")
        .filter_map(|(i, _)| {
            let start = text[..i].rfind(|c: char| !is_word(c)).map_or(0, |k| k + 1);
            let w = &text[start..i];
            (start < i && !w.starts_with(|c: char| c.is_ascii_digit())).then_some(w)
        })
        .collect()
}

/// The TOML value that starts `s`: a string, a bracketed list or a bare word.
fn value_at(s: &str) -> &str {
    let end = if let Some(rest) = s.strip_prefix('"') {
        rest.find('"').map(|i| i + 2)
    } else if s.starts_with('[') {
        let mut depth = 0;
        s.char_indices().find_map(|(i, c)| {
            depth += (c == '[') as i32 - (c == ']') as i32;
            (depth == 0).then_some(i + 1)
        })
    } else {
        s.find(|c: char| !(is_word(c) || c == '.' || c == '-'))
    };
    &s[..end.unwrap_or(s.len())]
}

/// How a field's default is known.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// A constant: written `key = value`.
    Constant,
    /// None: required or a fallback on other keys; named, given no value.
    Absent,
    /// An empty list (absent: none); named, its examples are not checked.
    EmptyList,
}

/// Each top-level field of a struct's pretty `Debug` output and how its default is known.
fn fields(debug: &str) -> Vec<(String, Kind)> {
    debug
        .lines()
        .filter(|l| l.starts_with("    ") && !l.starts_with("     "))
        .filter_map(|l| l.trim().split_once(": "))
        .map(|(k, v)| {
            let kind = match v {
                _ if v.starts_with("None") => Kind::Absent,
                "[]," => Kind::EmptyList,
                _ => Kind::Constant,
            };
            (k.to_string(), kind)
        })
        .collect()
}

/// One section of schema.txt and its struct.
struct Section<'a, T> {
    name: &'a str,
    /// The section's part of schema.txt.
    text: String,
    fields: Vec<(String, Kind)>,
    /// Keys not checked here (required keys of a type without `None`; nested tables that
    /// are sections of their own).
    skip: &'a [&'a str],
    /// Words written `word = ` in the text that are not keys (prose, other tables' keys);
    /// None: the text is not checked for them.
    others: Option<&'a [&'a str]>,
    /// The section's value from `key = value` lines ("": every default).
    parse: &'a dyn Fn(&str) -> Result<T, String>,
}

fn check<T: PartialEq + Debug>(s: Section<T>) {
    let (name, text) = (s.name, &s.text);
    let default = (s.parse)("").unwrap_or_else(|e| panic!("{name}: the defaults: {e}"));
    assert!(s.fields.len() > 1, "{name}: no fields read");
    for (key, kind) in &s.fields {
        if s.skip.contains(&key.as_str()) {
            continue;
        }
        let named = text.match_indices(key.as_str()).any(|(i, _)| {
            !text[..i].ends_with(is_word) && !text[i + key.len()..].starts_with(is_word)
        });
        assert!(named, "schema.txt, {name}: `{key}` is not listed");
        let at = assignments(text, key);
        match kind {
            Kind::EmptyList => continue,
            Kind::Absent => assert!(
                at.is_empty(),
                "schema.txt, {name}: `{key}` has no constant default but is written with one"
            ),
            Kind::Constant => assert!(
                !at.is_empty(),
                "schema.txt, {name}: `{key}` needs `{key} = <default>`"
            ),
        }
        for i in at {
            let v = value_at(&text[i..]);
            let parsed = (s.parse)(&format!("{key} = {v}\n"))
                .unwrap_or_else(|e| panic!("schema.txt, {name}: `{key} = {v}`: {e}"));
            assert_eq!(
                parsed, default,
                "schema.txt, {name}: `{key} = {v}` is not the default in the code"
            );
        }
    }
    if let Some(others) = s.others {
        for w in assigned_words(text) {
            let known = s.fields.iter().any(|(k, _)| k == w) || others.contains(&w);
            assert!(
                known,
                "schema.txt, {name}: `{w} = ...` is not a key of the section"
            );
        }
    }
}

fn toml_parse<T: DeserializeOwned>(prefix: &'static str) -> impl Fn(&str) -> Result<T, String> {
    move |doc| toml::from_str::<T>(&format!("{prefix}{doc}")).map_err(|e| e.to_string())
}

fn debug_fields<T: Debug>(v: &T) -> Vec<(String, Kind)> {
    fields(&format!("{v:#?}"))
}

/// The text of kind `kind`'s entry under `[[apps]]`: its `  kind:` line and the
/// deeper-indented lines after it.
fn app_entry(kind: &str) -> String {
    let apps = between("[[apps]]", "[measure]");
    let head = format!("  {kind}:");
    let n = apps.lines().filter(|l| l.starts_with(&head)).count();
    assert_eq!(n, 1, "schema.txt: one `{head}` line under [[apps]]");
    let lines: Vec<&str> = apps.lines().collect();
    let i = lines.iter().position(|l| l.starts_with(&head)).unwrap();
    let mut text = lines[i][head.len()..].to_string();
    for l in lines[i + 1..].iter().take_while(|l| l.starts_with("   ")) {
        text.push('\n');
        text.push_str(l);
    }
    text
}

#[test]
fn schema_txt_lists_every_app_key_with_its_default() {
    macro_rules! check_apps {
        ($($kind:literal => $cfg:ident),* $(,)?) => {$(
            check(Section {
                name: concat!("[[apps]] ", $kind),
                text: app_entry($kind),
                fields: debug_fields(&$cfg::default()),
                skip: &[],
                others: None,
                parse: &toml_parse::<AppCfg>(concat!("kind = \"", $kind, "\"\n")),
            });
        )*};
    }
    check_apps!(
        "incast" => IncastCfg,
        "bulk" => BulkCfg,
        "cbr" => CbrCfg,
        "flows" => FlowsCfg,
        "mix" => MixCfg,
        "ping" => PingCfg,
        "transactions" => TransactionsCfg,
        "workload" => WorkloadCfg,
    );
}

#[test]
fn the_schema_check_catches_a_wrong_default() {
    // The same check on a copy of a kind's entry with one default changed must fail.
    let entry = app_entry("cbr").replace("packet_size = 1500", "packet_size = 1400");
    let v = value_at(&entry[assignments(&entry, "packet_size")[0]..]).to_string();
    let parsed: AppCfg = toml::from_str(&format!("kind = \"cbr\"\npacket_size = {v}\n")).unwrap();
    assert_ne!(parsed, AppCfg::Cbr(CbrCfg::default()));
    let r = std::panic::catch_unwind(|| {
        check(Section {
            name: "measure (altered)",
            text: blocks(&["[measure]", "measure."]).replace("\"100ms\"", "\"10ms\""),
            fields: debug_fields(&MeasureCfg::default()),
            skip: &[],
            others: None,
            parse: &toml_parse::<MeasureCfg>(""),
        })
    });
    assert!(r.is_err(), "a changed silent_threshold went unnoticed");
}

#[test]
fn schema_txt_lists_sim_topology_and_measure_defaults() {
    let sim = toml_parse::<SimCfg>("duration = \"1s\"\n");
    check(Section {
        name: "[sim]",
        text: blocks(&["[sim]"]),
        fields: debug_fields(&sim("").unwrap()),
        skip: &["duration"],
        others: Some(&[]),
        parse: &sim,
    });
    // Nested tables (aqm, queues, qcn, pause) are sections of their own; the topology's text
    // holds theirs too, so it is not checked for unknown `key = ` words.
    let topo = toml_parse::<TopologyCfg>("kind = \"star\"\n");
    check(Section {
        name: "[topology]",
        text: blocks(&["[topology]", "[[topology.", "topology.", "common:"]),
        fields: debug_fields(&topo("").unwrap()),
        skip: &["kind", "aqm", "queues", "qcn", "pause"],
        others: None,
        parse: &topo,
    });
    check(Section {
        name: "[measure]",
        text: blocks(&["[measure]", "measure."]),
        fields: debug_fields(&MeasureCfg::default()),
        skip: &[],
        others: Some(&[]),
        parse: &toml_parse::<MeasureCfg>(""),
    });
}

#[test]
fn schema_txt_lists_queues_and_marking_defaults() {
    let text = format!(
        "{}\n{}",
        between("queues = {", "marking = {"),
        between("port_marking", "[[topology.queue_ports]]")
    );
    check(Section {
        name: "queues",
        text,
        fields: debug_fields(&QueuesCfg::default()),
        skip: &["marking", "port_marking"],
        others: Some(&["queues"]),
        parse: &toml_parse::<QueuesCfg>(""),
    });
    // The step/RED/marking keys stay `Option`s (a key of another kind is an error); their
    // constant defaults are `MarkDefaults`, one field for each such key of the tables.
    let marking = MarkCfg::default();
    let mut keys = debug_fields(&MarkDefaults::default());
    let defaults: Vec<String> = keys.iter().map(|(k, _)| k.clone()).collect();
    let without = ["kind", "k", "t_min", "t_max", "on_queues", "per_rate"];
    for (k, _) in debug_fields(&marking) {
        assert_eq!(
            defaults.contains(&k),
            !without.contains(&k.as_str()),
            "MarkCfg key `{k}` and MarkDefaults disagree"
        );
    }
    for (k, _) in debug_fields(&AqmCfg::default()) {
        assert!(
            k == "port" || debug_fields(&marking).iter().any(|(m, _)| *m == k),
            "{k}"
        );
    }
    keys.extend(
        ["k", "t_min", "t_max", "on_queues", "per_rate"].map(|k| (k.to_string(), Kind::Absent)),
    );
    check(Section {
        name: "aqm / marking",
        text: format!(
            "{}\n{}",
            between("aqm = {", "[[topology.aqm_ports]]"),
            between("marking = {", "port_marking")
        ),
        fields: keys,
        skip: &[],
        others: Some(&["kind", "aqm", "marking"]),
        parse: &toml_parse::<MarkDefaults>(""),
    });
}

#[test]
fn schema_txt_lists_layer2_defaults() {
    check(Section {
        name: "[topology] qcn",
        text: blocks(&["[topology] qcn"]),
        fields: debug_fields(&QcnCpCfg::default()),
        skip: &[],
        others: Some(&["qcn", "q", "n"]),
        parse: &toml_parse::<QcnCpCfg>(""),
    });
    check(Section {
        name: "[topology] pause",
        text: blocks(&["[topology] pause"]),
        fields: debug_fields(&PauseCfgFile::default()),
        skip: &[],
        others: Some(&["pause", "priority"]),
        parse: &toml_parse::<PauseCfgFile>(""),
    });
    check(Section {
        name: "[qcn] rp",
        text: blocks(&["[qcn] rp"]),
        fields: debug_fields(&RpCfgFile::default()),
        skip: &[],
        others: Some(&["rp"]),
        parse: &toml_parse::<RpCfgFile>(""),
    });
}

#[test]
fn schema_txt_lists_the_roce_defaults() {
    use dcnsim::scenario::config::roce::RoceCfg;
    check(Section {
        name: "[roce]",
        text: blocks(&["[roce]"]),
        fields: debug_fields(&RoceCfg::default()),
        skip: &[],
        others: Some(&[
            "transport",
            "kind",
            "queue",
            "count",
            "min_th",
            "max_th",
            "max_p",
        ]),
        parse: &toml_parse::<RoceCfg>(""),
    });
}

/// The TCP configuration of a flow built with `doc` as its `[tcp]` table.
fn tcp_of(doc: &str) -> Result<dcnsim::model::tcp::TcpConfig, String> {
    let text = format!(
        "[sim]\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nservers = 1\n\
         link_rate = \"1Gbps\"\n[tcp]\n{doc}\n[[apps]]\nkind = \"bulk\"\nsrc = \"server1\"\n\
         dst = \"client\"\n"
    );
    let loaded = load(&text, "t.toml", &[]).map_err(|e| e.to_string())?;
    let (sim, _) = build(&loaded).map_err(|e| e.to_string())?;
    Ok((*sim.hosts.flows[0].tcp().expect("a TCP flow").cfg).clone())
}

#[test]
fn schema_txt_lists_the_tcp_profile_defaults() {
    // Every `[tcp]` key is an `Option` (absent: the profile's value), so each is checked as
    // a constant: the value written must build the same configuration as no key at all.
    let keys = debug_fields(&TcpCfgFile::default())
        .into_iter()
        .map(|(k, _)| (k, Kind::Constant))
        .collect();
    check(Section {
        name: "[tcp]",
        text: between("[tcp]", "[[apps]]"),
        fields: keys,
        skip: &[],
        // Prose: "DupThresh = dupack_threshold", "cwnd = min(...)", "false = FreeBSD", "L = 2", Linux "tcp_recovery = 1".
        others: Some(&[
            "DupThresh",
            "cwnd",
            "ssthresh",
            "false",
            "L",
            "tcp_recovery",
        ]),
        parse: &tcp_of,
    });
    // A controller's own keys only act on it: checked again under that controller.
    let dctcp_keys = debug_fields(&TcpCfgFile::default())
        .into_iter()
        .filter(|(k, _)| k.starts_with("dctcp_"))
        .map(|(k, _)| (k, Kind::Constant))
        .collect();
    check(Section {
        name: "[tcp] with cc = \"dctcp\"",
        text: between("[tcp]", "[[apps]]"),
        fields: dctcp_keys,
        skip: &[],
        others: None,
        parse: &|doc| tcp_of(&format!("cc = \"dctcp\"\n{doc}")),
    });
}
