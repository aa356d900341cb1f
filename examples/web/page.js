// page.js -- runs particles_web.c at 60 frames a second: each frame draws the live particles on
// the canvas and, every PICTURE_EVERY frames, the pool's own picture (opool_draw_svg) beside
// it. A timer, not requestAnimationFrame, steps the simulation: a fixed step, and one that a
// headless browser's virtual time runs too.
// At frame CHECK_FRAMES (?frames=N, default 300) it writes into #result the tally and the
// slots the picture shows, counted from the picture's titles ("slots 3-7: live");
// examples/web/check.sh compares that text with the native build's.
"use strict";

const CHECK_FRAMES = Number(new URLSearchParams(location.search).get("frames") || 300);
const PICTURE_EVERY = 30;
const result = document.getElementById("result");

// particles_web.js reads Module: start once main has created the pool
var Module = { postRun: [start] };

window.addEventListener("error", (e) => { result.textContent = "error: " + e.message; });

// The slots a picture shows, and how many of them are live.
function countSlots(picture) {
  let slots = 0, live = 0;
  for (const title of picture.querySelectorAll("title")) {
    const m = /^slots? (\d+)(?:-(\d+))?: (.+)$/.exec(title.textContent);
    if (!m) continue;
    const n = Number(m[2] || m[1]) - Number(m[1]) + 1;
    slots += n;
    if (m[3] === "live") live += n;
  }
  return { slots, live };
}

function showPicture() {
  const picture = document.getElementById("picture");
  picture.innerHTML = Module.UTF8ToString(Module._web_svg());
  return countSlots(picture);
}

function draw(live) {
  const canvas = document.getElementById("particles");
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#0b1020";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const at = Module._web_points() / 4; // 3 floats a particle: x, y, kind
  const f = Module.HEAPF32;
  for (let i = 0; i < live; i++) {
    ctx.fillStyle = f[at + 3 * i + 2] ? "#ff922b" : "#74c0fc";
    ctx.fillRect(f[at + 3 * i] - 1, f[at + 3 * i + 1] - 1, 3, 3);
  }
}

function start() {
  let frame = 0;
  function step() {
    const live = Module._web_frame();
    frame++;
    draw(live);
    if (frame % PICTURE_EVERY === 0 || frame === CHECK_FRAMES) {
      const shown = showPicture();
      if (frame === CHECK_FRAMES) {
        result.textContent = Module.UTF8ToString(Module._web_result()) +
          "\npicture: " + shown.slots + " slots, " + shown.live + " live";
      }
    }
    setTimeout(step, 1000 / 60);
  }
  step();
}
