//! The words a POSIX shell would pass for one line, for the forms the
//! README and the `--help` examples use: single and double quotes, a
//! comment, and a pipe or redirection (of a pipeline, the side that runs
//! mnemon; a redirection ends its words). Shared by the quick-start test
//! and the examples' test (`src/examples.rs` includes this file).

pub fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (None, '#') if !started => break,
            (None, '|') if !out.iter().any(|w: &String| w == "mnemon") => {
                (out, cur, started) = (Vec::new(), String::new(), false);
            }
            (None, '|' | '>') => break,
            (None, '\'' | '"') => (quote, started) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            (_, c) => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(cur);
    }
    out
}
