//! OpenAI-compatible servers: llama.cpp's `llama-server`, vLLM, LM Studio
//! and OpenAI itself all speak `/v1/chat/completions`; what each says
//! about its window lives in a different place, so the probe finds out
//! which one it is talking to.

use serde_json::{Value, json};

use crate::client::{ChatReply, ChatRequest, Client, Probe, Usage};
use crate::error::{LlmError, excerpt};
use crate::http::{Http, error_message, push_text, read_stream, transport_error};

/// An OpenAI-compatible server.
#[derive(Debug)]
pub struct OpenAi {
    http: Http,
    /// Without `/v1`: where llama.cpp's `/props` and `/tokenize` are.
    root: String,
    /// With `/v1`.
    api: String,
    model: Option<String>,
    key: Option<String>,
}

impl OpenAi {
    /// `base_url` as for the OpenAI SDK (`http://localhost:8080/v1`);
    /// without `/v1` is accepted too.
    pub fn new(http: Http, base_url: &str, model: Option<String>, key: Option<String>) -> OpenAi {
        let base = base_url.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base).to_string();
        OpenAi {
            http,
            api: format!("{root}/v1"),
            root,
            model,
            key,
        }
    }

    fn auth(&self, rb: reqwest::blocking::RequestBuilder) -> reqwest::blocking::RequestBuilder {
        match &self.key {
            Some(k) => rb.bearer_auth(k),
            None => rb,
        }
    }

    fn classify<'a>(&'a self, url: &'a str) -> impl Fn(u16, &str) -> LlmError + 'a {
        move |status, body| classify(url, self.model.as_deref(), status, body)
    }

    fn get_json(&self, url: &str) -> Result<Value, LlmError> {
        self.http
            .json(url, || self.auth(self.http.get(url)), &self.classify(url))
    }

    /// `/v1/models`, and the entry for the configured model (else the
    /// first one).
    fn models(&self) -> Result<(Value, Option<Value>), LlmError> {
        let url = format!("{}/models", self.api);
        let v = self.get_json(&url)?;
        let data = v["data"].as_array().cloned().unwrap_or_default();
        let entry = match &self.model {
            Some(m) => data.iter().find(|d| d["id"].as_str() == Some(m)).cloned(),
            None => data.first().cloned(),
        };
        Ok((v, entry))
    }
}

/// An error answer as an [`LlmError`]: a prompt too long, a bad key, an
/// unknown model, or the server's own message.
fn classify(url: &str, model: Option<&str>, status: u16, body: &str) -> LlmError {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let e = &v["error"];
    let message = error_message(body);
    let kind = e["type"].as_str().or(e["code"].as_str()).unwrap_or("");
    let lower = message.to_lowercase();
    if kind == "exceed_context_size_error"
        || kind == "context_length_exceeded"
        || lower.contains("maximum context length")
        || lower.contains("exceeds the available context size")
    {
        return LlmError::ContextExceeded {
            url: url.to_string(),
            prompt_tokens: e["n_prompt_tokens"].as_u64(),
            window: e["n_ctx"].as_u64(),
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
    if status == 404 && (kind == "model_not_found" || lower.contains("model")) {
        return LlmError::ModelNotFound {
            url: url.to_string(),
            model: model.unwrap_or("").to_string(),
            message,
            available: String::new(),
        };
    }
    LlmError::Status {
        url: url.to_string(),
        status,
        message,
    }
}

impl Client for OpenAi {
    fn name(&self) -> String {
        format!("openai:{}", self.model.as_deref().unwrap_or("default"))
    }

    fn probe(&self) -> Result<Probe, LlmError> {
        let (list, entry) = self.models()?;
        let data = list["data"].as_array().cloned().unwrap_or_default();
        if let (Some(m), None) = (&self.model, &entry) {
            // llama.cpp serves its one model whatever name a request gives.
            let llama = data.iter().any(|d| d["owned_by"] == "llamacpp");
            if !llama {
                let names: Vec<&str> = data.iter().filter_map(|d| d["id"].as_str()).collect();
                return Err(LlmError::ModelNotFound {
                    url: format!("{}/models", self.api),
                    model: m.clone(),
                    message: "not in /v1/models".into(),
                    available: if names.is_empty() {
                        String::new()
                    } else {
                        format!(" (it has: {})", names.join(", "))
                    },
                });
            }
        }
        let entry = entry
            .or_else(|| data.first().cloned())
            .unwrap_or(Value::Null);
        let model = self
            .model
            .clone()
            .or_else(|| entry["id"].as_str().map(str::to_string))
            .unwrap_or_default();
        let mut probe = Probe {
            provider: "openai".into(),
            base_url: self.api.clone(),
            model,
            ..Probe::default()
        };
        if entry["owned_by"] == "llamacpp" || entry["meta"]["n_ctx_train"].is_u64() {
            probe.server = "llama.cpp".into();
            probe.model_max = entry["meta"]["n_ctx_train"].as_u64();
            let props = self.get_json(&format!("{}/props", self.root))?;
            let slots = props["total_slots"].as_u64();
            probe.served = props["default_generation_settings"]["n_ctx"]
                .as_u64()
                .or(entry["meta"]["n_ctx"].as_u64());
            probe.exact_tokens = true;
            probe.fix = Some(format!(
                "start llama-server with a larger -c (each of its {} slots gets its share; --parallel sets how many)",
                slots.unwrap_or(1)
            ));
            return Ok(probe);
        }
        if let Some(len) = entry["max_model_len"].as_u64() {
            probe.server = "vllm".into();
            probe.served = Some(len);
            probe.fix = Some("start vLLM with a larger --max-model-len".into());
            return Ok(probe);
        }
        // LM Studio's own REST API knows the loaded window.
        let lms_url = format!("{}/api/v1/models", self.root);
        if let Ok(v) = self.get_json(&lms_url)
            && let Some(models) = v["models"].as_array()
        {
            let m = models
                .iter()
                .find(|m| {
                    m["key"].as_str() == Some(probe.model.as_str())
                        || m["loaded_instances"]
                            .as_array()
                            .is_some_and(|l| l.iter().any(|i| i["id"] == probe.model.as_str()))
                })
                .or(models.first());
            if let Some(m) = m {
                probe.server = "lmstudio".into();
                probe.model_max = m["max_context_length"].as_u64();
                probe.served = m["loaded_instances"]
                    .as_array()
                    .and_then(|l| l.first())
                    .and_then(|i| i["config"]["context_length"].as_u64());
                probe.fix = Some("load the model in LM Studio with a larger context length".into());
                return Ok(probe);
            }
        }
        probe.server = if self.root.contains("api.openai.com") {
            "openai".into()
        } else {
            "openai-compatible".into()
        };
        probe.notes.push(
            "the server does not report its window; the model registry or context_window.max_tokens decides".into(),
        );
        Ok(probe)
    }

    fn chat(
        &self,
        req: &ChatRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatReply, LlmError> {
        let url = format!("{}/chat/completions", self.api);
        let mut body = json!({
            "messages": req.messages,
            "max_tokens": req.max_tokens,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if let Some(m) = &self.model {
            body["model"] = json!(m);
        }
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(schema) = &req.json_schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": true},
            });
        }
        let resp = self.http.send(
            &url,
            || self.auth(self.http.post(&url)).json(&body),
            &self.classify(&url),
        )?;
        let mut done = false;
        let reply = read_stream(&url, resp, |line, reply| {
            let Some(data) = line.strip_prefix("data:") else {
                return Ok(true);
            };
            let data = data.trim();
            if data == "[DONE]" {
                done = true;
                return Ok(false);
            }
            let v: Value = serde_json::from_str(data).map_err(|e| LlmError::BadReply {
                url: url.clone(),
                reason: format!("a streamed chunk is not JSON: {e}"),
                excerpt: excerpt(data, 200),
            })?;
            if v["error"].is_object() {
                return Err(classify(&url, self.model.as_deref(), 500, data));
            }
            if let Some(choice) = v["choices"].as_array().and_then(|c| c.first()) {
                if let Some(t) = choice["delta"]["content"].as_str() {
                    push_text(reply, on_text, t);
                }
                if let Some(f) = choice["finish_reason"].as_str() {
                    reply.finish_reason = Some(f.to_string());
                }
            }
            if v["usage"].is_object() {
                reply.usage = Usage {
                    prompt_tokens: v["usage"]["prompt_tokens"].as_u64(),
                    completion_tokens: v["usage"]["completion_tokens"].as_u64(),
                };
            }
            Ok(true)
        })?;
        if !done && reply.finish_reason.is_none() {
            return Err(LlmError::Cut {
                url,
                received: reply.text.len(),
                reason: "the stream ended without a finish reason or [DONE]".into(),
            });
        }
        Ok(reply)
    }

    fn count_tokens(&self, text: &str) -> Result<Option<u64>, LlmError> {
        let url = format!("{}/tokenize", self.root);
        let body = json!({"content": text, "add_special": false});
        let resp = self
            .auth(self.http.post(&url))
            .json(&body)
            .send()
            .map_err(|e| transport_error(&url, &e, self.http.limits()))?;
        if !resp.status().is_success() {
            // Not llama.cpp: no tokenizer endpoint.
            return Ok(None);
        }
        let v: Value = resp.json().map_err(|e| LlmError::BadReply {
            url: url.clone(),
            reason: e.to_string(),
            excerpt: String::new(),
        })?;
        Ok(v["tokens"].as_array().map(|t| t.len() as u64))
    }
}
