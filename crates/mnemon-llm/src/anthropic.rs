//! Anthropic's Messages API: usage as `input_tokens`, exact prompt sizes
//! from its token-counting endpoint.

use serde_json::{Value, json};

use crate::client::{ChatMessage, ChatReply, ChatRequest, Client, Probe};
use crate::error::{LlmError, excerpt};
use crate::http::{Http, error_message, push_text, read_stream};

const VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub struct Anthropic {
    http: Http,
    base: String,
    model: String,
    key: Option<String>,
}

impl Anthropic {
    pub fn new(http: Http, base_url: &str, model: String, key: Option<String>) -> Anthropic {
        let base = base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base).to_string();
        Anthropic {
            http,
            base,
            model,
            key,
        }
    }

    fn request(&self, rb: reqwest::blocking::RequestBuilder) -> reqwest::blocking::RequestBuilder {
        let rb = rb.header("anthropic-version", VERSION);
        match &self.key {
            Some(k) => rb.header("x-api-key", k),
            None => rb,
        }
    }

    fn classify<'a>(&'a self, url: &'a str) -> impl Fn(u16, &str) -> LlmError + 'a {
        move |status, body| {
            let message = error_message(body);
            let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
            let kind = v["error"]["type"].as_str().unwrap_or("");
            if status == 401 || status == 403 || kind == "authentication_error" {
                return LlmError::Auth {
                    url: url.to_string(),
                    status,
                    message,
                    hint: if self.key.is_none() {
                        "No key was sent: set llm.api_key_env to the variable that holds it".into()
                    } else {
                        "Check the key in the variable llm.api_key_env names".into()
                    },
                };
            }
            if status == 404 || kind == "not_found_error" {
                return LlmError::ModelNotFound {
                    url: url.to_string(),
                    model: self.model.clone(),
                    message,
                    available: String::new(),
                };
            }
            if message.to_lowercase().contains("prompt is too long") {
                return LlmError::ContextExceeded {
                    url: url.to_string(),
                    prompt_tokens: None,
                    window: None,
                    message,
                };
            }
            LlmError::Status {
                url: url.to_string(),
                status,
                message,
            }
        }
    }

    /// System messages go in `system`; the rest alternate.
    fn split(messages: &[ChatMessage]) -> (String, Vec<&ChatMessage>) {
        let system: Vec<&str> = messages
            .iter()
            .filter(|m| m.role == "system")
            .map(|m| m.content.as_str())
            .collect();
        let rest = messages.iter().filter(|m| m.role != "system").collect();
        (system.join("\n\n"), rest)
    }
}

impl Client for Anthropic {
    fn name(&self) -> String {
        format!("anthropic:{}", self.model)
    }

    fn probe(&self) -> Result<Probe, LlmError> {
        let url = format!("{}/v1/models/{}", self.base, self.model);
        let v = self.http.json(
            &url,
            || self.request(self.http.get(&url)),
            &self.classify(&url),
        )?;
        Ok(Probe {
            provider: "anthropic".into(),
            server: "anthropic".into(),
            base_url: self.base.clone(),
            model: v["id"].as_str().unwrap_or(&self.model).to_string(),
            model_max: v["max_input_tokens"].as_u64(),
            served: None,
            exact_tokens: self.key.is_some(),
            fix: None,
            notes: Vec::new(),
        })
    }

    fn chat(
        &self,
        req: &ChatRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatReply, LlmError> {
        let url = format!("{}/v1/messages", self.base);
        let (system, messages) = Anthropic::split(&req.messages);
        let mut body = json!({
            "model": self.model,
            "max_tokens": req.max_tokens,
            "messages": messages,
            "stream": true,
        });
        if !system.is_empty() {
            body["system"] = json!(system);
        }
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        let resp = self.http.send(
            &url,
            || self.request(self.http.post(&url)).json(&body),
            &self.classify(&url),
        )?;
        let mut done = false;
        let reply = read_stream(&url, resp, |line, reply| {
            let Some(data) = line.strip_prefix("data:") else {
                return Ok(true);
            };
            let v: Value = serde_json::from_str(data.trim()).map_err(|e| LlmError::BadReply {
                url: url.clone(),
                reason: format!("a streamed event is not JSON: {e}"),
                excerpt: excerpt(data, 200),
            })?;
            match v["type"].as_str() {
                Some("message_start") => {
                    reply.usage.prompt_tokens = v["message"]["usage"]["input_tokens"].as_u64();
                }
                Some("content_block_delta") => {
                    if let Some(t) = v["delta"]["text"].as_str() {
                        push_text(reply, on_text, t);
                    }
                }
                Some("message_delta") => {
                    reply.finish_reason = v["delta"]["stop_reason"].as_str().map(str::to_string);
                    reply.usage.completion_tokens = v["usage"]["output_tokens"].as_u64();
                }
                Some("message_stop") => {
                    done = true;
                    return Ok(false);
                }
                Some("error") => {
                    return Err((self.classify(&url))(500, data.trim()));
                }
                _ => {}
            }
            Ok(true)
        })?;
        if !done {
            return Err(LlmError::Cut {
                url,
                received: reply.text.len(),
                reason: "the stream ended before message_stop".into(),
            });
        }
        Ok(reply)
    }

    fn count_tokens(&self, text: &str) -> Result<Option<u64>, LlmError> {
        if self.key.is_none() {
            return Ok(None);
        }
        let url = format!("{}/v1/messages/count_tokens", self.base);
        let body = json!({"model": self.model, "messages": [{"role": "user", "content": text}]});
        let v = self.http.json(
            &url,
            || self.request(self.http.post(&url)).json(&body),
            &self.classify(&url),
        )?;
        Ok(v["input_tokens"].as_u64())
    }
}
