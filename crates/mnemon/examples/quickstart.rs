//! Open a project in memory, record a few operations, ask for a context
//! under a budget, and print where the window stands.
//!
//! `cargo run -p mnemon --example quickstart`

use mnemon::{ContextQuery, HotKind, Mnemon, NewMessage, NewOperation, Role};
use serde_json::json;

fn main() -> Result<(), mnemon::Error> {
    let m = Mnemon::in_memory()?;

    m.add_hot(HotKind::Goal, "Ship the login flow by Friday", None, None)?;
    m.record(NewOperation::new(
        "task_execution",
        json!({"task": 15, "result": "login form validates e-mail and password"}),
    ))?;
    m.record(NewOperation::new(
        "decision",
        json!({"decision": "Sessions live in Redis", "why": "they survive restarts"}),
    ))?;
    m.message(NewMessage::new(Role::User, "Where do sessions live again?"))?;

    let ctx = m.context(&ContextQuery {
        budget: Some(300),
        query: Some("where do sessions live".into()),
        ..ContextQuery::default()
    })?;
    println!("{}", ctx.text);
    println!("-- {} of {} tokens", ctx.tokens, ctx.budget);

    let s = m.status()?;
    println!(
        "-- {} · {} / {} tokens · {}",
        s.window.zone.name(),
        s.window.used,
        s.window.effective_max,
        s.window.action.name()
    );
    Ok(())
}
