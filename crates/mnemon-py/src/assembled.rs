//! An assembled context, kept as a Rust object whose parts Python reads
//! as it needs them.

use pyo3::prelude::*;

use crate::convert::json;

/// An assembled context, kept in Rust: its text is handed over as one
/// string, and its sections (each item's text again, several times the
/// text's size as JSON) are encoded only when Python reads them. Encoding
/// them with every call was a quarter of an 8K context's time.
#[pyclass(frozen, skip_from_py_object, module = "mnemon._native")]
#[derive(Debug)]
pub(crate) struct Assembled {
    pub(crate) a: mnemon::Assembled,
}

#[pymethods]
impl Assembled {
    #[getter]
    fn text(&self) -> &str {
        &self.a.text
    }

    #[getter]
    fn tokens(&self) -> u64 {
        self.a.tokens
    }

    #[getter]
    fn budget(&self) -> u64 {
        self.a.budget
    }

    #[getter]
    fn plan(&self) -> &str {
        &self.a.plan
    }

    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.a.warnings.clone()
    }

    /// Everything but the text and the sections, as JSON.
    fn head(&self) -> PyResult<String> {
        json(&serde_json::json!({
            "plan": self.a.plan,
            "budget": self.a.budget,
            "tokens": self.a.tokens,
            "format": self.a.format,
            "messages": self.a.messages,
            "warnings": self.a.warnings,
        }))
    }

    fn sections(&self) -> PyResult<String> {
        json(&self.a.sections)
    }
}
