#!/usr/bin/env bash
# examples/web/check.sh BUILD WORK [FRAMES] -- the particles page, run in a browser and checked
# (make platforms runs it after the wasm32 tests).
#
# BUILD is an emscripten build of opool with the default options (single-threaded). The
# script installs it under WORK/prefix, checks that the package asks nothing of its users'
# builds (no -pthread), builds examples/web against it as a user would (-Dopool_DIR), serves
# WORK/web from 127.0.0.1 and opens the page in headless Chromium. After FRAMES frames
# (default 300) the page writes its tally and its picture's slot count into #result; the same
# simulation built natively ($CC, default cc) prints what that text must be, and any
# difference, or a page that never got there, fails the check.
set -euo pipefail

build=$1 work=$2 frames=${3:-300}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$src/../.." && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)

cmake --install "$build" --prefix "$work/prefix" >/dev/null
if grep -n -- -pthread "$work"/prefix/lib/cmake/opool/*.cmake "$work"/prefix/lib/pkgconfig/opool.pc; then
    echo "web check: the single-threaded package passes -pthread on (above)" >&2
    exit 1
fi

rm -rf "$work/web"
emcmake cmake -S "$src" -B "$work/web" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS=-Werror -Dopool_DIR="$work/prefix/lib/cmake/opool" > "$work/build.log" 2>&1 &&
    cmake --build "$work/web" >> "$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; echo "web check: the page did not build" >&2; exit 1; }

# what the page must show: the same simulation, natively
${CC:-cc} -std=c11 -O1 -Wall -Wextra -Wpedantic -Werror -I"$root/include" \
    "$src/particles_web.c" "$root"/src/opool*.c -o "$work/native"
"$work/native" "$frames" > "$work/expected.txt"

# a server on a free port of 127.0.0.1 (it prints the port), stopped on the way out
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/web" > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
port=
for _ in $(seq 50); do
    port=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$work/server.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { cat "$work/server.log" >&2; echo "web check: no server" >&2; exit 1; }

# virtual time: the page's 60 frames a second take no real time; the budget leaves room
url="http://127.0.0.1:$port/index.html?frames=$frames"
timeout 120 chromium --headless --no-sandbox --disable-gpu \
    --virtual-time-budget=$((frames * 1000 / 60 + 10000)) --dump-dom "$url" \
    > "$work/page.html" 2> "$work/chromium.log" ||
    { tail -n 20 "$work/chromium.log" >&2; echo "web check: chromium failed" >&2; exit 1; }
sed -n '/<pre id="result">/,/<\/pre>/p' "$work/page.html" |
    sed -e 's/.*<pre id="result">//' -e 's/<\/pre>.*//' > "$work/shown.txt"

echo "   $url shows:"
sed 's/^/      /' "$work/shown.txt"
if ! diff -u "$work/expected.txt" "$work/shown.txt" > "$work/diff.txt"; then
    echo "web check: FAILED: the page does not show what the native build computes ($work/diff.txt):" >&2
    cat "$work/diff.txt" >&2
    exit 1
fi
echo "web check: the page shows what the native build computes"
