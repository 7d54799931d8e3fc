//! Ollama's native API. Ollama picks a default window by version and
//! memory (2,048, then 4,096, now up to 262,144) and, by default, silently
//! drops the oldest messages of a prompt that does not fit; so every
//! request names its window (`num_ctx`) and asks for an error instead of a
//! cut (`truncate: false`, `shift: false`).

use serde_json::{Value, json};

use crate::client::{ChatReply, ChatRequest, Client, Probe, Usage};
use crate::error::{LlmError, excerpt};
use crate::http::{Http, error_message, push_text, read_stream};

#[derive(Debug)]
pub struct Ollama {
    http: Http,
    base: String,
    model: String,
}

impl Ollama {
    pub fn new(http: Http, base_url: &str, model: String) -> Ollama {
        let base = base_url.trim_end_matches('/');
        // Accept an OpenAI-style address for Ollama too.
        let base = base.strip_suffix("/v1").unwrap_or(base).to_string();
        Ollama { http, base, model }
    }

    fn classify<'a>(&'a self, url: &'a str) -> impl Fn(u16, &str) -> LlmError + 'a {
        move |status, body| {
            let message = error_message(body);
            let lower = message.to_lowercase();
            if status == 404 || (lower.contains("model") && lower.contains("not found")) {
                return LlmError::ModelNotFound {
                    url: url.to_string(),
                    model: self.model.clone(),
                    message,
                    available: " (`ollama pull` it, or see `ollama list`)".into(),
                };
            }
            if lower.contains("context length") || lower.contains("exceeds") {
                return LlmError::ContextExceeded {
                    url: url.to_string(),
                    prompt_tokens: None,
                    window: None,
                    message,
                };
            }
            if status == 401 || status == 403 {
                return LlmError::Auth {
                    url: url.to_string(),
                    status,
                    message,
                    hint: "Check the key in the variable llm.api_key_env names".into(),
                };
            }
            LlmError::Status {
                url: url.to_string(),
                status,
                message,
            }
        }
    }
}

/// `num_ctx 8192` in `/api/show`'s `parameters` text.
fn num_ctx_parameter(parameters: &str) -> Option<u64> {
    parameters.lines().find_map(|l| {
        let mut parts = l.split_whitespace();
        (parts.next() == Some("num_ctx"))
            .then(|| parts.next().and_then(|n| n.parse().ok()))
            .flatten()
    })
}

impl Client for Ollama {
    fn name(&self) -> String {
        format!("ollama:{}", self.model)
    }

    fn probe(&self) -> Result<Probe, LlmError> {
        let url = format!("{}/api/show", self.base);
        let body = json!({"model": self.model});
        let show = self.http.json(
            &url,
            || self.http.post(&url).json(&body),
            &self.classify(&url),
        )?;
        let model_max = show["model_info"].as_object().and_then(|info| {
            info.iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .and_then(|(_, v)| v.as_u64())
        });
        let configured = show["parameters"].as_str().and_then(num_ctx_parameter);
        let mut probe = Probe {
            provider: "ollama".into(),
            server: "ollama".into(),
            base_url: self.base.clone(),
            model: self.model.clone(),
            model_max,
            served: configured,
            fix: Some(
                "set num_ctx: OLLAMA_CONTEXT_LENGTH for the server, or PARAMETER num_ctx in the model's Modelfile".into(),
            ),
            ..Probe::default()
        };
        // Since Ollama 0.9.7, /api/ps says which window is loaded.
        let ps_url = format!("{}/api/ps", self.base);
        if let Ok(ps) = self
            .http
            .json(&ps_url, || self.http.get(&ps_url), &self.classify(&ps_url))
            && let Some(loaded) = ps["models"].as_array().and_then(|models| {
                models.iter().find(|m| {
                    m["name"].as_str() == Some(&self.model)
                        || m["model"].as_str() == Some(&self.model)
                })
            })
            && let Some(n) = loaded["context_length"].as_u64()
        {
            probe.served = Some(n);
        }
        if probe.served.is_none() {
            probe.notes.push(
                "the model is not loaded and its Modelfile sets no num_ctx: Ollama's default depends on its version and memory, so mnemon sends num_ctx with every request".into(),
            );
        }
        Ok(probe)
    }

    fn chat(
        &self,
        req: &ChatRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatReply, LlmError> {
        let url = format!("{}/api/chat", self.base);
        let mut options = json!({"num_predict": req.max_tokens});
        if let Some(w) = req.window {
            options["num_ctx"] = json!(w);
        }
        if let Some(t) = req.temperature {
            options["temperature"] = json!(t);
        }
        let mut body = json!({
            "model": self.model,
            "messages": req.messages,
            "stream": true,
            "options": options,
            "truncate": false,
            "shift": false,
        });
        if let Some(schema) = &req.json_schema {
            body["format"] = schema.clone();
        }
        let resp = self.http.send(
            &url,
            || self.http.post(&url).json(&body),
            &self.classify(&url),
        )?;
        let mut done = false;
        let mut reply = read_stream(&url, resp, |line, reply| {
            let v: Value = serde_json::from_str(line).map_err(|e| LlmError::BadReply {
                url: url.clone(),
                reason: format!("a streamed line is not JSON: {e}"),
                excerpt: excerpt(line, 200),
            })?;
            if v["error"].is_string() {
                return Err((self.classify(&url))(500, line));
            }
            if let Some(t) = v["message"]["content"].as_str()
                && !t.is_empty()
            {
                push_text(reply, on_text, t);
            }
            if v["done"] == true {
                done = true;
                reply.finish_reason = v["done_reason"].as_str().map(str::to_string);
                reply.usage = Usage {
                    prompt_tokens: v["prompt_eval_count"].as_u64(),
                    completion_tokens: v["eval_count"].as_u64(),
                };
                return Ok(false);
            }
            Ok(true)
        })?;
        if !done {
            return Err(LlmError::Cut {
                url,
                received: reply.text.len(),
                reason: "the stream ended before its `done` line".into(),
            });
        }
        // An Ollama that ignores `truncate: false` drops the oldest
        // messages silently; reading under half of what was sent is that
        // (its prompt cache lowers the count too, but not by half of a
        // request whose context changed).
        if let (Some(read), Some(sent)) = (reply.usage.prompt_tokens, req.expected_prompt_tokens)
            && read * 2 < sent
        {
            reply.truncated = Some(format!(
                "Ollama read {read} of about {sent} prompt tokens: it may have dropped the oldest messages to fit its window. Raise num_ctx (OLLAMA_CONTEXT_LENGTH) or lower the budget"
            ));
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num_ctx_is_read_from_the_parameters_text() {
        assert_eq!(
            num_ctx_parameter("stop \"<|im_end|>\"\nnum_ctx 32768\ntemperature 0.7"),
            Some(32_768)
        );
        assert_eq!(num_ctx_parameter("temperature 0.7"), None);
    }
}
