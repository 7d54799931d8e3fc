"""The context proxy driven by the official `openai` and `anthropic` SDKs.

    proxy_client.py relay UPSTREAM LOG      serve on a free port (printed) and
                                            pass every request on to UPSTREAM,
                                            logging each body to LOG
    proxy_client.py SCENARIO BASE TOKEN UPSTREAM LOG

BASE is `mnemon serve`'s address (http://127.0.0.1:PORT), TOKEN a mnemon
token, UPSTREAM the llama-server mnemon's [llm] reaches through the relay.
The relay is instrumentation, not a double: every answer is llama-server's
own; it records what mnemon sent upstream, and it can break a stream off or
answer with an HTML page when a file `LOG.cut` or `LOG.html` exists.
Each scenario prints what it checked and exits non-zero on a failure.
"""

import json
import os
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def relay(upstream, log):
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self, body):
            headers = {
                k: v
                for k, v in self.headers.items()
                if k.lower() in ("content-type", "authorization", "x-api-key", "anthropic-version")
            }
            req = urllib.request.Request(upstream + self.path, data=body, headers=headers, method=self.command)
            try:
                return urllib.request.urlopen(req, timeout=300)
            except urllib.error.HTTPError as e:
                return e

        def do_GET(self):
            self.answer(self.forward(None), cut=False)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock, open(log, "a") as f:
                f.write(json.dumps({"path": self.path, "body": body.decode()}) + "\n")
            if os.path.exists(log + ".html"):
                os.remove(log + ".html")
                page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
                self.send_response(500)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            cut = os.path.exists(log + ".cut")
            if cut:
                os.remove(log + ".cut")
            self.answer(self.forward(body), cut)

        def answer(self, resp, cut):
            self.send_response(resp.status if hasattr(resp, "status") else resp.code)
            for k, v in resp.headers.items():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            sent = 0
            while True:
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
                if not chunk:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                sent += 1
                if cut and sent >= 2:
                    # Gone mid-stream: no last chunk, the connection dropped.
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
            self.wfile.write(b"0\r\n\r\n")

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            # A client gone mid-answer (the scenarios do that on purpose).
            pass

    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def check(ok, what):
    if not ok:
        print("FAILED:", what, flush=True)
        sys.exit(1)
    print("ok:", what, flush=True)


def upstream_log(log):
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [json.loads(line) for line in f if line.strip()]


def model_of(client):
    return client.models.list().data[0].id


SYSTEM = "You are a helpful assistant. Answer in one short English sentence."


def long_conversation(base, token, upstream, log):
    """150 turns, about four times the served window: every turn answered,
    the system prompt verbatim upstream, a fact of turn 2 sent with the
    question of turn 150, tool calls never parted from their results, and
    the prefix stable between compactions."""
    import openai

    client = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0)
    model = model_of(client)
    messages = [{"role": "system", "content": SYSTEM}]
    managed = []
    topics = ["rivers", "bread", "trains", "owls", "glass", "chess", "tea", "maps", "bees", "clocks"]
    for turn in range(1, 151):
        if turn == 2:
            text = "Please remember this: my locker code is 4417."
        elif turn == 150:
            text = "What is my locker code?"
        else:
            t = topics[turn % len(topics)]
            text = f"Turn {turn}: tell me one fact about {t}, and why {t} matter to people in towns."
        messages.append({"role": "user", "content": text})
        if turn % 25 == 10:
            # A tool exchange, as an agent's history holds them.
            call = {"id": f"call_{turn}", "type": "function",
                    "function": {"name": "lookup", "arguments": json.dumps({"topic": f"t{turn}"})}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"call_{turn}", "content": f"result {turn}: nothing found"})
        raw = client.chat.completions.with_raw_response.create(model=model, messages=messages, max_tokens=24, temperature=0)
        reply = raw.parse()
        managed.append(raw.headers.get("x-mnemon-managed"))
        messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})
    check(len(managed) == 150, "all 150 turns were answered through mnemon")
    check("compacted" in managed, f"mnemon compacted ({managed.count('compacted')} of 150 requests)")

    sent = [json.loads(e["body"]) for e in upstream_log(log) if e["path"].endswith("/chat/completions")]
    check(len(sent) >= 150, f"{len(sent)} requests went upstream")
    check(all(s["messages"][0] == {"role": "system", "content": SYSTEM} for s in sent),
          "the system prompt is verbatim, first, in every upstream request")
    check("4417" in json.dumps(sent[-1]), "the fact of turn 2 is in what mnemon sent with turn 150")
    for s in sent:
        ids = [c["id"] for m in s["messages"] for c in (m.get("tool_calls") or [])]
        results = [m["tool_call_id"] for m in s["messages"] if m["role"] == "tool"]
        if ids != results:
            check(False, f"a tool call is parted from its result: calls {ids}, results {results}")
    check(True, "no tool call was parted from its result")
    # Between compactions, each request's body up to the retrieval for its
    # own question (the second memory block) is where the next one starts.
    bodies = [e["body"] for e in upstream_log(log) if e["path"].endswith("/chat/completions")]
    marker = '"<mnemon-memory'

    def stable_prefix(body):
        first = body.find(marker)
        second = body.find(marker, first + 1)
        if first < 0 or second < 0:
            return None
        return body[: body.rfind("{", 0, second)]

    def block(body):
        return json.loads(body)["messages"][1].get("content")

    stable = 0
    for a, b in zip(bodies, bodies[1:]):
        prefix = stable_prefix(a)
        if prefix is None or block(a) != block(b):
            continue
        stable += 1
        check(b.startswith(prefix), "consecutive requests between compactions share their prefix byte for byte")
    check(stable >= 5, f"{stable} consecutive pairs kept one compaction's prefix byte for byte")

    # The same history sent straight to llama-server is refused.
    direct = openai.OpenAI(base_url=upstream + "/v1", api_key="none", max_retries=0)
    try:
        direct.chat.completions.create(model=model, messages=messages, max_tokens=24)
        check(False, "llama-server refuses the whole history")
    except openai.BadRequestError as e:
        check("exceed" in str(e) or "context" in str(e), f"llama-server alone refuses it: {str(e)[:120]}")


def anthropic_long(base, token, upstream, log):
    """40 turns through the Anthropic SDK, past the window: compacted with
    the LLM summarizer, the system prompt verbatim in every request."""
    import anthropic

    client = anthropic.Anthropic(base_url=base, api_key=token, max_retries=0)
    model = client.models.list().data[0].id
    system = "You are a patient tutor. Reply with one sentence."
    messages = []
    managed = []
    for turn in range(1, 41):
        if turn == 2:
            text = "Please remember this: my cat is called Biscuit."
        elif turn == 40:
            text = "What is my cat called?"
        else:
            text = (f"Turn {turn}: explain in plain words how a bicycle gear of size {turn} "
                    "changes the effort of riding uphill on a long and windy road.")
        messages.append({"role": "user", "content": text})
        raw = client.messages.with_raw_response.create(model=model, system=system, max_tokens=24,
                                                        messages=messages)
        reply = raw.parse()
        managed.append(raw.headers.get("x-mnemon-managed"))
        messages.append({"role": "assistant", "content": reply.content[0].text if reply.content else "."})
    check("compacted" in managed, f"mnemon compacted ({managed.count('compacted')} of 40 requests)")
    sent = [json.loads(e["body"]) for e in upstream_log(log) if e["path"].endswith("/messages")]
    check(len(sent) == 40, f"{len(sent)} requests went upstream")
    check(all(s["system"] == system for s in sent), "the system prompt is verbatim in every upstream request")
    check("Biscuit" in json.dumps(sent[-1]), "the fact of turn 2 is in what mnemon sent with turn 40")


def mismatch(base, token, upstream, log):
    """mnemon counts a 4,096-token window, llama-server serves 2,048: the
    requests between the two are refused upstream for length, and mnemon
    sends each again, compacted harder (twice at most)."""
    import openai

    oa = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0)
    model = model_of(oa)
    messages = [{"role": "system", "content": SYSTEM}]
    for turn in range(1, 31):
        messages.append({"role": "user", "content": f"Turn {turn}: " + "describe the old harbour, its cranes, its ferries and the fish market at dawn. " * 4})
        r = oa.chat.completions.create(model=model, messages=messages, max_tokens=16)
        messages.append({"role": "assistant", "content": r.choices[0].message.content or "."})
    check(True, "all 30 turns were answered")
    sent = [json.loads(e["body"]) for e in upstream_log(log) if e["path"].endswith("/chat/completions")]
    check(len(sent) > 30, f"{len(sent) - 30} refused requests were sent again, smaller")


def inject(base, token, upstream, log):
    """[proxy] inject = "hot": the standing facts after the system prompt."""
    import openai

    oa = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0)
    model = model_of(oa)
    r = oa.chat.completions.create(model=model, max_tokens=8, messages=[
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": "Where do we deploy?"}])
    check(r.choices[0].message.content is not None, "answered")
    sent = json.loads(upstream_log(log)[-1]["body"])["messages"]
    check(sent[0] == {"role": "system", "content": SYSTEM}, "the system prompt first, verbatim")
    check("<mnemon-memory" in sent[1]["content"] and "Frankfurt" in sent[1]["content"],
          "the hot context right after it")
    check(sent[2] == {"role": "user", "content": "Where do we deploy?"}, "then the client's turn, verbatim")


def streams(base, token, upstream, log):
    import anthropic
    import openai

    oa = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0)
    model = model_of(oa)
    chunks = list(oa.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Name a color."}], max_tokens=12,
        stream=True, stream_options={"include_usage": True}, extra_headers={"x-mnemon-session": "stream-openai"}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    usage = [c.usage for c in chunks if c.usage]
    check(text and usage and usage[-1].prompt_tokens > 0, f"OpenAI stream with usage: {text!r}")

    an = anthropic.Anthropic(base_url=base, api_key=token, max_retries=0)
    with an.messages.stream(model=model, max_tokens=12, system="Be brief.",
                            messages=[{"role": "user", "content": "Name a fruit."}],
                            extra_headers={"x-mnemon-session": "stream-anthropic"}) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    check(text and final.usage.input_tokens > 0, f"Anthropic stream with usage: {text!r}")
    m = an.messages.create(model=model, max_tokens=12, messages=[{"role": "user", "content": "Say hi."}],
                           metadata={"user_id": "anthropic-whole"})
    check(m.content[0].text, "Anthropic whole answer")
    n = an.messages.count_tokens(model=model, messages=[{"role": "user", "content": "Say hi."}])
    check(n.input_tokens > 0, f"count_tokens: {n.input_tokens}")
    listed = an.models.list()
    check(listed.data[0].id == model, "Anthropic's models list")

    # The upstream gone mid-stream: the client gets an error, nothing is
    # recorded twice, and the retry is answered.
    open(log + ".cut", "w").close()
    history = [{"role": "user", "content": "Tell me a long story about a lighthouse keeper."}]
    try:
        for _ in oa.chat.completions.create(model=model, messages=history, max_tokens=48, stream=True,
                                            extra_headers={"x-mnemon-session": "cut-stream"}):
            pass
        check(False, "a stream broken off upstream raises in the client")
    except openai.APIError as e:
        check(True, f"a stream broken off upstream raises in the client: {type(e).__name__}")
    again = oa.chat.completions.create(model=model, messages=history, max_tokens=48,
                                       extra_headers={"x-mnemon-session": "cut-stream"})
    check(again.choices[0].message.content, "the retry is answered")

    # A client that goes away half-way through a stream: its question is
    # kept, and an answer it never read is not recorded.
    stream = oa.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Write a long poem about the sea and its ships."}],
        max_tokens=300, stream=True, extra_headers={"x-mnemon-session": "dropped"})
    next(iter(stream))
    stream.close()
    check(True, "a client dropped a stream after its first chunk")


def bad_input(base, token, upstream, log):
    import anthropic
    import openai

    oa = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0)
    model = model_of(oa)

    def refused(call, cls, want):
        try:
            call()
        except cls as e:
            check(want in str(e), f"{cls.__name__}: {str(e)[:140]}")
            return
        check(False, f"refused with {cls.__name__}")

    refused(lambda: oa.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}]),
            openai.NotFoundError, "no-such-model")
    refused(lambda: oa.chat.completions.create(model=model, messages=[{"role": "wizard", "content": "x"}]),
            openai.BadRequestError, "role `wizard`")
    refused(lambda: oa.chat.completions.create(model=model, messages=[]), openai.BadRequestError, "empty")
    refused(lambda: oa.chat.completions.create(model=model, messages=[{"role": "user", "content": "x" * (4 * 1024 * 1024)}]),
            openai.APIStatusError, "larger than 4 MiB")
    refused(lambda: openai.OpenAI(base_url=base + "/v1", api_key="wrong", max_retries=0).chat.completions.create(
        model=model, messages=[{"role": "user", "content": "x"}]), openai.AuthenticationError, "not known")
    refused(lambda: anthropic.Anthropic(base_url=base, api_key="wrong", max_retries=0).messages.create(
        model=model, max_tokens=8, messages=[{"role": "user", "content": "x"}]), anthropic.AuthenticationError, "not known")
    refused(lambda: anthropic.Anthropic(base_url=base, api_key=token, max_retries=0).messages.create(
        model=model, max_tokens=8, messages=[{"role": "system", "content": "x"}]), anthropic.BadRequestError, "`system` field")
    # A single turn larger than the whole window: the provider's own error.
    refused(lambda: oa.chat.completions.create(
        model=model, max_tokens=16, extra_headers={"x-mnemon-session": "too-long"},
        messages=[{"role": "user", "content": "Read this: " + "lorem ipsum dolor sit amet " * 600}]),
        openai.BadRequestError, "window")
    # Not JSON at all, with curl's manners.
    req = urllib.request.Request(base + "/v1/chat/completions", data=b"{not json", method="POST",
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req)
        check(False, "a body that is not JSON is refused")
    except urllib.error.HTTPError as e:
        body = json.loads(e.read())
        check(e.code == 400 and "not a JSON object" in body["error"]["message"], "a body that is not JSON: 400 in OpenAI's shape")
    # An upstream answering an HTML page.
    open(log + ".html", "w").close()
    refused(lambda: oa.chat.completions.create(model=model, messages=[{"role": "user", "content": "x"}],
                                               extra_headers={"x-mnemon-session": "html"}),
            openai.APIStatusError, "502 Bad Gateway")


def concurrent(base, token, upstream, log):
    import openai

    oa = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0)
    model = model_of(oa)
    errors = []

    def one(i):
        try:
            history = []
            for turn in range(3):
                history.append({"role": "user", "content": f"Conversation {i}, turn {turn}: name an animal."})
                r = oa.chat.completions.create(model=model, messages=history, max_tokens=8,
                                               extra_headers={"x-mnemon-session": f"many-{i}"})
                history.append({"role": "assistant", "content": r.choices[0].message.content or ""})
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, f"16 concurrent conversations of 3 turns: {errors[:2]}")


if __name__ == "__main__":
    if sys.argv[1] == "relay":
        relay(sys.argv[2], sys.argv[3])
    else:
        {
            "long": long_conversation,
            "anthropic_long": anthropic_long,
            "inject": inject,
            "mismatch": mismatch,
            "streams": streams,
            "bad": bad_input,
            "concurrent": concurrent,
        }[sys.argv[1]](*sys.argv[2:6])
