#!/usr/bin/env python3
"""Runs the shell recipes of README.md and docs/api.md against a running stack (scripts/docs-check.sh
starts it) and fails when a request answers an unexpected status.

Every ```sh block with a `curl` in it runs, in document order, in one bash per block, in a
directory holding the files the recipes upload (shot.png, a.png, b.png, mugshot.png,
missing.png). What is rewritten before running: lines that set KEY, API or LOGS are dropped (the
stack's values are in the environment), and the documented addresses 127.0.0.1:8080 and :8081
become the stack's, and the alert recipes' receiver `https://hooks.example.com` becomes a local one
(scripts/docs_check_receiver.py). `curl` is a function that records each answer's status and fails the block on
anything but 2xx, unless the line ends with a comment giving the expected status (`# 404 …`). A
request the recipe cuts itself with `--max-time` (a stream) counts as answered. A block followed
by `<!-- docs-check: finds TEXT -->` lines (invisible when rendered) must also print each TEXT, so a recipe
that answers 200 with nothing in it (an empty search) fails too.
"""
import os, re, subprocess, sys, zlib, struct

PRELUDE = r'''
set -euo pipefail
curl() {
  local out status want=${EXPECT:-2xx} rc=0
  out=$(command curl -sS -w '\n%{http_code}' "$@" 2>/dev/null) || rc=$?
  # a stream (the live tail) cut by the recipe's own --max-time has answered; anything else has not
  if [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 28 ] && [[ " $* " == *" --max-time "* ]]; }; then
    echo "docs-check: curl could not complete (exit $rc): curl $*" >&2; return 1
  fi
  status=${out##*$'\n'}
  out=${out%$'\n'*}
  printf '%s\n' "$out"
  local shown="$*"
  echo "$status curl ${shown//$'\n'/ }" >> "$DOCS_CHECK_LOG"
  if { [ "$want" = 2xx ] && [ "${status:0:1}" != 2 ]; } || { [ "$want" != 2xx ] && [ "$status" != "$want" ]; }; then
    echo "docs-check: expected $want, got $status from: curl $*" >&2
    printf '%s\n' "$out" >&2
    return 1
  fi
}
'''


def png(width, height, rgb):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def blocks(path):
    text = open(path).read()
    for m in re.finditer(r"^```sh\n(.*?)^```\n((?:<!-- docs-check: finds .+? -->\n)*)", text, re.S | re.M):
        code = m.group(1)
        if "curl" in code:
            finds = re.findall(r"<!-- docs-check: finds (.+?) -->", m.group(2))
            yield text[: m.start()].count("\n") + 1, code, finds


def prepare(code):
    out = []
    for line in code.splitlines():
        if re.match(r"^(KEY|API|LOGS)=", line):
            continue
        line = line.replace("127.0.0.1:8080", os.environ["CDN_API_ADDR"]).replace("127.0.0.1:8081", os.environ["LOGS_API_ADDR"])
        line = line.replace("https://hooks.example.com", f"http://{os.environ['DOCS_CHECK_RECEIVER']}")
        expect = re.search(r"#\s*(\d{3})\b[^'\"]*$", line)
        if expect and line.lstrip().startswith("curl"):
            line = f"EXPECT={expect.group(1)} {line}"
        out.append(line)
    return "\n".join(out) + "\n"


def main():
    work = os.environ["DOCS_CHECK_DIR"]
    os.makedirs(work, exist_ok=True)
    for name, rgb in [("shot.png", (40, 90, 200)), ("a.png", (200, 40, 40)), ("b.png", (40, 200, 40)),
                      ("mugshot.png", (120, 120, 120)), ("missing.png", (255, 0, 255))]:
        with open(os.path.join(work, name), "wb") as f:
            f.write(png(8, 8, rgb))
    log = os.path.join(work, "statuses.log")
    open(log, "w").close()
    ran = 0
    for doc in sys.argv[1:]:
        for line, code, finds in blocks(doc):
            before = sum(1 for _ in open(log))
            r = subprocess.run(["bash", "-c", PRELUDE + prepare(code)], cwd=work, text=True, capture_output=True,
                               env={**os.environ, "DOCS_CHECK_LOG": log})
            calls = sum(1 for _ in open(log)) - before
            missing = [f for f in finds if f not in r.stdout]
            if r.returncode != 0 or calls == 0 or missing:
                why = f"its answers do not contain {missing}" if missing and r.returncode == 0 else f"exit {r.returncode}"
                print(f"docs-check: {doc}:{line}: the recipe failed ({why}, {calls} requests)\n{code}", file=sys.stderr)
                print(r.stdout[-4000:], r.stderr[-4000:], sep="\n", file=sys.stderr)
                sys.exit(1)
            print(f"docs-check: {doc}:{line}: {calls} request(s) answered as documented", file=sys.stderr)
            ran += 1
    print(f"docs-check: {ran} recipes passed", file=sys.stderr)


if __name__ == "__main__":
    main()
