//! Changes between two JSON states, for differential state: what an
//! orchestrator needs to know is what moved since the state it last saw,
//! not the whole state again.

use serde_json::{Map, Value};

/// `{"set": {"/a/b": new}, "removed": ["/c"]}`, paths being JSON Pointers
/// (RFC 6901) into nested objects; arrays and scalars are compared whole.
/// `{}` when equal.
pub fn diff(old: &Value, new: &Value) -> Value {
    let mut set = Map::new();
    let mut removed = Vec::new();
    walk("", old, new, &mut set, &mut removed);
    let mut out = Map::new();
    if !set.is_empty() {
        out.insert("set".into(), Value::Object(set));
    }
    if !removed.is_empty() {
        out.insert("removed".into(), Value::Array(removed));
    }
    Value::Object(out)
}

fn join(prefix: &str, key: &str) -> String {
    format!("{prefix}/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect()
}

fn walk(
    prefix: &str,
    old: &Value,
    new: &Value,
    set: &mut Map<String, Value>,
    removed: &mut Vec<Value>,
) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, nv) in b {
                let path = join(prefix, k);
                match a.get(k) {
                    Some(ov) => walk(&path, ov, nv, set, removed),
                    None => {
                        set.insert(path, nv.clone());
                    }
                }
            }
            for k in a.keys().filter(|k| !b.contains_key(*k)) {
                removed.push(Value::String(join(prefix, k)));
            }
        }
        (a, b) if a == b => {}
        (_, b) => {
            set.insert(prefix.to_string(), b.clone());
        }
    }
}

/// `old` with `delta` applied: the inverse of [`diff`], so a delta is
/// never a lossy view of the state.
#[allow(
    clippy::expect_used,
    reason = "invariants of this function, not outside input: made an object above"
)]
pub fn apply(old: &Value, delta: &Value) -> Value {
    let mut out = old.clone();
    if let Some(set) = delta.get("set").and_then(Value::as_object) {
        for (path, v) in set {
            let keys = segments(path);
            let Some((last, parents)) = keys.split_last() else {
                out = v.clone();
                continue;
            };
            let mut cur = &mut out;
            for k in parents {
                if !cur.is_object() {
                    *cur = Value::Object(Map::new());
                }
                cur = cur
                    .as_object_mut()
                    .expect("made an object above")
                    .entry(k.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
            }
            if !cur.is_object() {
                *cur = Value::Object(Map::new());
            }
            cur.as_object_mut()
                .expect("made an object above")
                .insert(last.clone(), v.clone());
        }
    }
    if let Some(removed) = delta.get("removed").and_then(Value::as_array) {
        for path in removed.iter().filter_map(Value::as_str) {
            let keys = segments(path);
            let Some((last, parents)) = keys.split_last() else {
                continue;
            };
            let mut cur = Some(&mut out);
            for k in parents {
                cur = cur.and_then(|c| c.get_mut(k.as_str()));
            }
            if let Some(obj) = cur.and_then(Value::as_object_mut) {
                obj.remove(last.as_str());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_changes_and_removals_round_trip() {
        let old = json!({"epic": {"id": 5, "status": "pending", "stories": [1, 2]}, "phase": "planning", "gone": true, "a/b": 1});
        let new = json!({"epic": {"id": 5, "status": "in_progress", "stories": [1, 2, 3]}, "phase": "planning", "added": {"x": 1}, "a/b": 2});
        let d = diff(&old, &new);
        assert_eq!(
            d,
            json!({"set": {"/epic/status": "in_progress", "/epic/stories": [1, 2, 3], "/added": {"x": 1}, "/a~1b": 2}, "removed": ["/gone"]})
        );
        assert_eq!(apply(&old, &d), new);
        assert_eq!(diff(&new, &new), json!({}));
        assert_eq!(
            apply(&json!(1), &diff(&json!(1), &json!({"k": 2}))),
            json!({"k": 2})
        );
    }
}
