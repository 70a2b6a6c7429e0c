//! `--set dotted.key=value` overrides: applied to the parsed TOML table before it is read
//! as a `Scenario`, and the keys they set (an error about one of them has no line: the
//! value is not the file's).

/// Apply `dotted.key = value` overrides to a TOML table. The value is parsed as a TOML
/// literal; if that fails it is taken as a string.
pub fn apply_overrides(
    table: &mut toml::Table,
    overrides: &[(String, String)],
) -> Result<(), String> {
    let mut root = toml::Value::Table(std::mem::take(table));
    let res = apply_to_value(&mut root, overrides);
    if let toml::Value::Table(t) = root {
        *table = t;
    }
    res
}

fn apply_to_value(root: &mut toml::Value, overrides: &[(String, String)]) -> Result<(), String> {
    for (key, raw) in overrides {
        let value: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
            Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(raw.clone())),
            Err(_) => toml::Value::String(raw.clone()),
        };
        let parts: Vec<&str> = key.split('.').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(format!("--set {key}: empty part in the key"));
        }
        let mut cur: &mut toml::Value = root;
        for (i, part) in parts.iter().enumerate() {
            let last = i == parts.len() - 1;
            match cur {
                toml::Value::Table(t) => {
                    if last {
                        t.insert(part.to_string(), value.clone());
                        break;
                    }
                    cur = t
                        .entry(part.to_string())
                        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                }
                toml::Value::Array(a) => {
                    let idx: usize = part.parse().map_err(|_| {
                        format!("--set {key}: {part:?} must be an index into a list")
                    })?;
                    let len = a.len();
                    let slot = a.get_mut(idx).ok_or_else(|| {
                        format!("--set {key}: index {idx} is out of range (the list has {len})")
                    })?;
                    if last {
                        *slot = value.clone();
                        break;
                    }
                    cur = slot;
                }
                _ => {
                    return Err(format!(
                        "--set {key}: {} is not a table",
                        parts[..i].join(".")
                    ))
                }
            }
        }
    }
    Ok(())
}

/// The dotted keys `overrides` set, list indices left out ("apps.0.sru" is "apps.sru").
pub(crate) fn overridden_keys(overrides: &[(String, String)]) -> Vec<String> {
    overrides
        .iter()
        .map(|(k, _)| {
            let parts: Vec<&str> = k
                .split('.')
                .filter(|p| p.parse::<usize>().is_err())
                .collect();
            parts.join(".")
        })
        .collect()
}

/// The `--set` key an error after applying overrides is about: the override whose dotted
/// key (list indices left out) is the error's field or lies under it, or that names the
/// unknown field the message quotes. None: the error is about the file's own text.
pub(crate) fn override_field(
    field: Option<&str>,
    msg: &str,
    overridden: &[String],
) -> Option<String> {
    let unknown = msg
        .strip_prefix("unknown field `")
        .and_then(|m| m.split('`').next());
    overridden
        .iter()
        .find(|k| {
            let under = field.is_some_and(|f| *k == f || k.starts_with(&format!("{f}.")));
            let names = unknown.is_some_and(|u| k.split('.').any(|p| p == u));
            under && (unknown.is_none() || names) || (field.is_none() && names)
        })
        .cloned()
}
