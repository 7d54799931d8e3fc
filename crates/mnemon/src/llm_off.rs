//! The model server's place in a build without the `llm` feature: the
//! window comes from the configuration and the model registry, a refresh
//! summarizes extractively, chat lines go to the rules alone. Where
//! `[llm]` asks for more, the user is told why it is not done rather than
//! left to wonder.

use std::path::Path;

use crate::Mnemon;
use crate::detection::Detection;
use crate::error::Result;
use crate::writes::Written;

const NO_LLM: &str = "this build of the mnemon library has no LLM client (build it with the `llm` feature; the mnemon CLI and server have it)";

/// No probe: a note when `[llm]` asks for one.
pub(crate) fn detect(
    config: &mnemon_core::config::Config,
    _dir: Option<&Path>,
    _fresh: bool,
) -> Detection {
    if !config.llm.enabled() || !config.context_window.auto_detect {
        return Detection::default();
    }
    Detection {
        detected: None,
        notes: vec![format!(
            "[llm] is set, but {NO_LLM}: the window comes from the configuration and the model registry"
        )],
    }
}

impl Mnemon {
    /// An extractive refresh that says why, when `[llm]` names a
    /// summarizer; `None` (the plain refresh) otherwise.
    pub(crate) fn refresh_by_llm(&self) -> Option<Result<Written<()>>> {
        self.settings().loaded().config.llm.summarizer_endpoint()?;
        Some((|| {
            let e = self.engine()?;
            let out = e.refresh("manual")?;
            let mut written = self.written(&e, out);
            written.warnings.push(format!(
                "[llm] names a summarizer, but {NO_LLM}; the summary is extractive"
            ));
            Ok(written)
        })())
    }

    /// Chat lines go to the rules alone.
    pub(crate) fn llm_parser(&self) -> Option<Box<dyn mnemon_chat::CommandParser>> {
        None
    }
}
