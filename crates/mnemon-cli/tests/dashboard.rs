//! The dashboard in a real browser: headless Chromium (Debian's package)
//! driven over the DevTools protocol, against `mnemon serve`, while other
//! `mnemon` processes and API clients (curl) write into the project, as a
//! person would watch an agent work.
//!
//! `.ci/run` installs Chromium and sets `MNEMON_REQUIRE_CHROMIUM=1`, so
//! there a missing browser fails the test; on a machine without one the test
//! says so and passes without running. Screenshots of each step are written
//! under the cargo target's temporary directory (`dashboard-screens/`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};

mod common;

use common::{ok, serve, token};

fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("MNEMON_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
                .iter()
                .map(PathBuf::from)
                .find(|p| p.exists())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("MNEMON_REQUIRE_CHROMIUM").is_none(),
            "MNEMON_REQUIRE_CHROMIUM is set but no Chromium was found: apt-get install chromium"
        );
        eprintln!("no Chromium here (apt-get install chromium); the browser test did not run");
    }
    found
}

/// Waits until the page's `expr` is truthy, and returns its value.
fn wait_js(tab: &Tab, expr: &str, what: &str) -> serde_json::Value {
    let start = Instant::now();
    loop {
        // A node is not sent back by value: report it as found.
        let wrapped =
            format!("(() => {{ const v = ({expr}); return v instanceof Node ? true : v; }})()");
        let got = tab
            .evaluate(&wrapped, false)
            .ok()
            .and_then(|r| r.value)
            .unwrap_or(serde_json::Value::Null);
        let truthy = match &got {
            serde_json::Value::Null => false,
            serde_json::Value::Bool(b) => *b,
            serde_json::Value::String(s) => !s.is_empty(),
            serde_json::Value::Number(n) => n.as_f64() != Some(0.0),
            _ => true,
        };
        if truthy {
            return got;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let shown = tab
                .evaluate("document.body ? document.body.innerText : ''", false)
                .ok()
                .and_then(|r| r.value);
            panic!("waited 30 s for {what} ({expr}); the page shows:\n{shown:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The gauge's token count, as a page expression.
const USED: &str = "parseInt(document.getElementById('used').textContent.replace(/,/g, ''), 10)";

fn used(tab: &Tab) -> u64 {
    tab.evaluate(USED, false)
        .ok()
        .and_then(|r| r.value)
        .and_then(|v| v.as_u64())
        .expect("the gauge shows a count")
}

fn text(tab: &Tab, selector: &str) -> String {
    let expr = format!(
        "(() => {{ const e = document.querySelector({selector:?}); return e ? e.textContent : ''; }})()"
    );
    tab.evaluate(&expr, false)
        .ok()
        .and_then(|r| r.value)
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn shot(tab: &Tab, name: &str) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard-screens");
    std::fs::create_dir_all(&dir).unwrap();
    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    std::fs::write(dir.join(format!("{name}.png")), &png).unwrap();
    // `MNEMON_SCREENSHOT=path` keeps the full dashboard for the README.
    if name == "4-refreshed"
        && let Some(p) = std::env::var_os("MNEMON_SCREENSHOT")
    {
        std::fs::write(p, &png).unwrap();
    }
}

/// An API call with curl, as an agent's script would make it.
fn curl(addr: &str, token: &str, method: &str, path: &str, body: &str) -> serde_json::Value {
    let out = Command::new("curl")
        .args(["-sS", "-X", method, "-H"])
        .arg(format!("Authorization: Bearer {token}"))
        .args(["-H", "content-type: application/json", "--data", body])
        .arg(format!("http://{addr}/v1/projects/default/{path}"))
        .output()
        .expect("curl (apt-get install curl)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(body.get("error").is_none(), "{method} {path}: {body}");
    body
}

fn launch() -> Option<(Browser, Arc<Tab>)> {
    let path = chromium()?;
    let browser = Browser::new(
        LaunchOptions::default_builder()
            .path(Some(path))
            .headless(true)
            // The tests may run as root, where Chromium's sandbox refuses.
            .sandbox(false)
            .window_size(Some((1280, 1900)))
            .args(vec![OsStr::new("--disable-dev-shm-usage")])
            .idle_browser_timeout(Duration::from_secs(120))
            .build()
            .unwrap(),
    )
    .unwrap();
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));
    Some((browser, tab))
}

#[test]
fn a_person_watches_the_window_fill_checkpoint_and_refresh() {
    let Some((_browser, tab)) = launch() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A small window, so a few writes cross the zones.
    ok(dir, &["init", "--model", "gpt-4o", "--window", "4000"]);
    let token = token(dir, "default");
    let server = serve(dir);
    let addr = server.addr.clone();

    // The login page; a wrong token is refused on the page.
    tab.navigate_to(&format!("http://{addr}/")).unwrap();
    tab.wait_for_element("#token").unwrap().click().unwrap();
    tab.type_str("mnm_not_a_real_one").unwrap();
    tab.press_key("Enter").unwrap();
    wait_js(
        &tab,
        "document.querySelector('.error') && document.querySelector('.error').textContent",
        "the refusal",
    );
    assert!(text(&tab, ".error").contains("not known to the server"));

    // `/?token=T` logs in and leaves the address bar clean; the cookie is
    // out of the page's reach.
    tab.navigate_to(&format!("http://{addr}/?token={token}"))
        .unwrap();
    wait_js(&tab, "document.getElementById('zone')", "the gauge");
    assert_eq!(tab.get_url(), format!("http://{addr}/"));
    let cookie = wait_js(&tab, "'[' + document.cookie + ']'", "document.cookie");
    assert_eq!(cookie, "[]", "the token cookie must be HttpOnly");
    assert_eq!(text(&tab, "#zone"), "green");
    wait_js(
        &tab,
        "document.getElementById('live').textContent === 'live'",
        "the event stream",
    );
    shot(&tab, "1-empty");

    // The page as served says what it is waiting for before its script has
    // drawn anything (curl, logged in with the same token).
    let jar = dir.join("cookies.txt");
    let raw = Command::new("curl")
        .args(["-sS", "-L", "-c"])
        .arg(&jar)
        .arg("-b")
        .arg(&jar)
        .arg(format!("http://{addr}/?token={token}"))
        .output()
        .expect("curl (apt-get install curl)");
    let raw = String::from_utf8_lossy(&raw.stdout);
    for waiting in ["Loading the window…", "Loading the history…", "Loading…"] {
        assert!(
            raw.contains(waiting),
            "{waiting} missing from the page: {raw}"
        );
    }
    assert_eq!(
        wait_js(
            &tab,
            "String(document.getElementById('gauge').hasAttribute('aria-busy'))",
            "the gauge"
        ),
        "false",
        "drawn, the gauge is no longer busy"
    );
    // The configured maximum is said once, with the other sizes known.
    let numbers = text(&tab, "#numbers");
    assert!(numbers.contains("4,000, from config"), "{numbers}");
    assert!(!numbers.contains("config 4,000"), "said twice: {numbers}");
    assert!(numbers.contains("registry 128,000"), "{numbers}");
    assert!(numbers.contains("0 refreshes"), "{numbers}");

    // A first small write: the chart's y-axis fits it instead of drawing a
    // flat line at the bottom of a 4,000-token scale.
    ok(
        dir,
        &["record", "--type", "note", "--data", r#"{"text": "first"}"#],
    );
    wait_js(
        &tab,
        "document.getElementById('chart-scale')",
        "the chart scaled to the data",
    );
    assert!(text(&tab, "#chart-scale").contains("scaled to the data"));
    // The chart is 260 high with the x-axis at y = 232: scaled, the line's
    // highest point is at least a third of the way up.
    let line_top: f64 = wait_js(
        &tab,
        "String(document.getElementById('usage-line').getBBox().y)",
        "the usage line",
    )
    .as_str()
    .unwrap()
    .parse()
    .unwrap();
    assert!(
        line_top < 182.0,
        "a flat line at the bottom: y = {line_top}"
    );

    // Writes from another process (the CLI, no server involved) and from
    // the API: the page follows without being reloaded.
    let marker = wait_js(&tab, "document.body.dataset.updated", "a first render");
    let used0 = used(&tab);
    for i in 0..3 {
        ok(
            dir,
            &[
                "record",
                "--type",
                "file_modified",
                "--data",
                &format!(r#"{{"path": "src/auth/login_{i}.rs", "note": "hashing with argon2"}}"#),
                "--tokens",
                "500",
            ],
        );
    }
    let cli_done = Instant::now();
    wait_js(
        &tab,
        &format!(
            "document.body.dataset.updated !== {marker} && {USED} >= {}",
            used0 + 1_500
        ),
        "the CLI's writes on the gauge",
    );
    // How long the page took to show the last write is printed, not
    // asserted: a figure for people, from a noisy machine.
    eprintln!(
        "the page showed another process's write {:?} after it",
        cli_done.elapsed()
    );
    let used1 = used(&tab);
    assert!(used1 >= used0 + 1_500, "{used0} -> {used1}");
    let before = text(&tab, "#zone");
    curl(
        &addr,
        &token,
        "POST",
        "operations",
        r#"{"type": "error", "data": {"message": "Never run migrations on Fridays"}, "tokens": 900}"#,
    );
    let api_done = Instant::now();
    wait_js(
        &tab,
        &format!("{USED} >= {}", used1 + 900),
        "the API's write on the gauge",
    );
    eprintln!(
        "the page showed an API write {:?} after it",
        api_done.elapsed()
    );
    let after = text(&tab, "#zone");
    assert_ne!(before, after, "the zone moved as the window filled");
    wait_js(
        &tab,
        "document.getElementById('chart-scale') === null",
        "the whole window on the chart once usage nears the zones",
    );
    shot(&tab, "2-filling");

    // A checkpoint appears on the chart; selecting it shows its JSON.
    ok(dir, &["checkpoint", "create", "--trigger", "manual"]);
    wait_js(
        &tab,
        "document.querySelector('.marker.checkpoint')",
        "the checkpoint marker",
    );
    tab.evaluate(
        "document.querySelector('.marker.checkpoint').dispatchEvent(new MouseEvent('click', {bubbles: true}))",
        false,
    )
    .unwrap();
    let json = wait_js(
        &tab,
        "document.getElementById('checkpoint-json') && document.getElementById('checkpoint-json').textContent",
        "the checkpoint's JSON",
    );
    let cp: serde_json::Value = serde_json::from_str(json.as_str().unwrap()).unwrap();
    assert!(cp.to_string().contains("CP-"), "{cp}");
    shot(&tab, "3-checkpoint");

    // A refresh: the line drops, and its marker opens the compaction audit.
    ok(dir, &["refresh"]);
    wait_js(
        &tab,
        "document.querySelector('.marker.refresh')",
        "the refresh marker",
    );
    // Keyboard: focus the marker and press Enter.
    tab.evaluate("document.querySelector('.marker.refresh').focus()", false)
        .unwrap();
    tab.press_key("Enter").unwrap();
    let shown = wait_js(
        &tab,
        "document.getElementById('marker-detail').textContent.includes('Compaction') && document.getElementById('marker-detail').textContent",
        "the compaction audit",
    );
    assert!(
        shown
            .as_str()
            .unwrap()
            .contains("Never run migrations on Fridays"),
        "the pinned error is kept verbatim: {shown}"
    );
    let now = used(&tab);
    assert!(now < used1 + 900, "the refresh emptied the window: {now}");
    shot(&tab, "4-refreshed");
    // The session log was compacted on the way (a grey marker): its audit
    // opens the same way.
    tab.evaluate(
        "document.querySelector('.marker[data-kind=compact]').dispatchEvent(new MouseEvent('click', {bubbles: true}))",
        false,
    )
    .unwrap();
    wait_js(
        &tab,
        "document.getElementById('marker-detail').textContent.includes('Compaction (session log)')",
        "the session log's compaction audit",
    );

    // What the model would see, within the budget, by section.
    tab.evaluate(
        "document.getElementById('budget').value = '300'; document.getElementById('query').value = 'argon2 hashing';",
        false,
    )
    .unwrap();
    tab.find_element("#context-form button")
        .unwrap()
        .click()
        .unwrap();
    let total = wait_js(
        &tab,
        "document.getElementById('context-total') && document.getElementById('context-total').textContent",
        "the assembled context",
    );
    let sent: u64 = total
        .as_str()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(sent > 0 && sent <= 300, "{total}");
    assert!(
        wait_js(
            &tab,
            "document.querySelectorAll('[data-section]').length",
            "sections"
        )
        .as_u64()
        .unwrap()
            >= 1
    );
    shot(&tab, "5-context");

    // Search across every tier.
    tab.find_element("#tab-search").unwrap().click().unwrap();
    tab.wait_for_element("#search-q").unwrap().click().unwrap();
    tab.type_str("argon2").unwrap();
    tab.press_key("Enter").unwrap();
    wait_js(&tab, "document.querySelector('[data-hit]')", "a search hit");
    assert!(text(&tab, "#search-out").contains("argon2"));

    // Restore an earlier session from the sessions list.
    ok(dir, &["session", "start", "--title", "second"]);
    tab.find_element("#tab-sessions").unwrap().click().unwrap();
    wait_js(
        &tab,
        "document.querySelector('button.restore')",
        "a restore button",
    );
    tab.find_element("button.restore").unwrap().click().unwrap();
    wait_js(&tab, "document.getElementById('restored')", "the restore");
    let sessions = common::json(dir, &["session", "list", "--json"]);
    let active: Vec<_> = sessions
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "active")
        .map(|s| s["title"].clone())
        .collect();
    assert!(
        !active.contains(&serde_json::json!("second")),
        "the restored session replaced `second`: {sessions}"
    );
    shot(&tab, "6-restored");

    // `mnemon chat` in another terminal plans work; the work plan tab shows
    // it as a tree without a reload.
    std::fs::write(
        dir.join("plan.txt"),
        "Create an epic for user authentication\nAdd 3 stories to it: login, signup, and MFA\n",
    )
    .unwrap();
    ok(dir, &["chat", "--script", "plan.txt", "--keep-session"]);
    tab.find_element("#tab-entities").unwrap().click().unwrap();
    wait_js(
        &tab,
        "document.querySelectorAll('.tree > li > ul > li').length === 3",
        "the epic with its three stories",
    );
    assert!(text(&tab, ".tree").to_lowercase().contains("signup"));

    // A decision and a goal from an agent's API calls, on their tabs.
    curl(
        &addr,
        &token,
        "POST",
        "decisions",
        r#"{"title": "Hash passwords with argon2id", "context": "bcrypt truncates at 72 bytes",
            "decision": "Use argon2id with the OWASP parameters",
            "consequences": {"positive": ["no truncation"], "negative": ["more memory per login"]},
            "alternatives": [{"option": "bcrypt", "rejected_because": "truncates"}],
            "status": "Accepted"}"#,
    );
    curl(
        &addr,
        &token,
        "POST",
        "hot",
        r#"{"kind": "goal", "text": "Ship the login flow"}"#,
    );
    tab.find_element("#tab-decisions").unwrap().click().unwrap();
    wait_js(
        &tab,
        "document.querySelector('.adr')",
        "the decision record",
    );
    let adr = text(&tab, ".adr");
    for part in [
        "Hash passwords with argon2id",
        "+ no truncation",
        "− more memory per login",
        "bcrypt",
    ] {
        assert!(adr.contains(part), "{part} missing from {adr}");
    }
    tab.find_element("#tab-hot").unwrap().click().unwrap();
    wait_js(
        &tab,
        "document.getElementById('panel').textContent.includes('Ship the login flow')",
        "the goal in the hot context",
    );
    assert!(
        text(&tab, "#panel").contains("v1"),
        "hot items show their version"
    );
    // The decision record is a key decision in the hot context, with
    // nothing stray after it.
    wait_js(
        &tab,
        "document.querySelector('[data-hot-group=key_decisions]')",
        "the key decisions in the hot context",
    );
    let panel = text(&tab, "#panel");
    assert!(panel.contains("Key decisions"), "{panel}");
    assert!(
        !panel.contains("null"),
        "stray text in the hot context: {panel}"
    );
    // The memory section sits below the fold.
    tab.evaluate(
        "window.scrollTo(0, document.getElementById('memory').offsetTop)",
        false,
    )
    .unwrap();
    shot(&tab, "8-hot-decisions");

    // The work plan document changed with the epic: a diff of two versions.
    tab.find_element("#tab-documents").unwrap().click().unwrap();
    wait_js(
        &tab,
        "document.getElementById('doc-out') && document.getElementById('doc-out').textContent.includes('version')",
        "a document",
    );
    tab.evaluate(
        "const k = document.getElementById('doc-kind'); k.value = 'work_plan'; k.dispatchEvent(new Event('change'));",
        false,
    )
    .unwrap();
    wait_js(
        &tab,
        "document.getElementById('doc-b').value !== '' && Number(document.getElementById('doc-b').value) > 1",
        "two versions of the work plan",
    );
    tab.find_element("#doc-out").unwrap();
    tab.evaluate(
        "document.querySelector('#panel form button').click()",
        false,
    )
    .unwrap();
    wait_js(
        &tab,
        "document.querySelector('#doc-diff .add')",
        "added lines in the diff",
    );
    assert!(
        text(&tab, "#doc-diff")
            .to_lowercase()
            .contains("authentication")
    );
    shot(&tab, "7-diff");

    // Keyboard: the tabs move with the arrow keys.
    tab.evaluate("document.getElementById('tab-sessions').focus()", false)
        .unwrap();
    tab.press_key("ArrowRight").unwrap();
    wait_js(
        &tab,
        "document.activeElement && document.activeElement.id === 'tab-documents'",
        "the next tab focused",
    );
    wait_js(
        &tab,
        "document.getElementById('doc-out') && document.getElementById('doc-out').textContent.includes('version')",
        "a document",
    );

    assert!(server.stop(), "the server stops cleanly");
}
