// Browser test of the saved notebooks, as a reader sees them without running anything:
//
//   node check_saved.mjs <jupyter URL with token> <server root dir> <html dir> <out dir> [notebook.ipynb...]
//
// For every notebook named (paths relative to the server's root; default: every *.ipynb in it):
//  (a) it opens the notebook in the classic Jupyter web UI, where a notebook the reader did not
//      run is "Not Trusted" (the server is started with an empty notary, so none is trusted),
//      waits for it to render, and checks that every figure output of the notebook's JSON (a
//      display_data or execute_result with image/png or image/svg+xml, or text/html holding
//      <svg or <img) shows, in the page's output area of the same cell and output index, an
//      <img> or <svg> that is visible with non-zero width and height; and that no output on the
//      page shows SVG text run together (what the UI's sanitiser leaves of an untrusted SVG);
//      it stops the kernel the page started and saves a full-page screenshot <out>/<name>.png;
//  (b) it opens the notebook's `jupyter nbconvert --to html` export, <html dir>/<name>.html, and
//      checks the same figures there (screenshot <out>/html/<name>.png).
// Failures name the notebook, the cell index and the output index (as in the .ipynb JSON). One
// summary line per notebook. Exit 1 on any failure. Started by tests/browser/run.sh.
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [baseURL, nbDir, htmlDir, outDir, ...named] = process.argv.slice(2);
if (!baseURL || !nbDir || !htmlDir || !outDir) {
  console.error("usage: node check_saved.mjs <jupyter URL with token> <server root dir> <html dir> <out dir> [notebook.ipynb...]");
  process.exit(2);
}
const failures = [];
const fail = (nb, where, msg) => {
  failures.push(`${nb}${where ? " " + where : ""}: ${msg}`);
  console.error(`browser-test: FAIL ${nb}${where ? " " + where : ""}: ${msg}`);
};

// --- The notebook's JSON: which outputs are figures, and how they map to output areas. ---

const str = (v) => (Array.isArray(v) ? v.join("") : typeof v === "string" ? v : "");

// figureKind: "" if the output is not a figure, else what it carries.
function figureKind(o) {
  if (o.output_type !== "display_data" && o.output_type !== "execute_result") return "";
  const d = o.data || {};
  const parts = [];
  if ("image/png" in d) parts.push("image/png");
  if ("image/svg+xml" in d) parts.push("image/svg+xml");
  const h = str(d["text/html"]);
  if (h.includes("<svg")) parts.push("SVG inside text/html");
  else if (h.includes("<img")) parts.push("<img> inside text/html");
  return parts.join(" + ");
}

// svgLabels: the texts of an output's SVG <text> elements, to recognise them run together.
function svgLabels(o) {
  const d = o.data || {};
  const src = str(d["image/svg+xml"]) + str(d["text/html"]);
  return [...src.matchAll(/<text\b[^>]*>([^<]*)<\/text>/g)].map((m) => m[1].trim()).filter(Boolean);
}

// The classic UI's mime types (its display_order), to know which outputs give no output area.
const uiMimes = ["application/javascript", "text/html", "text/markdown", "text/latex", "image/svg+xml",
  "image/png", "image/jpeg", "image/gif", "application/pdf", "text/plain"];

// areaMap returns, for a cell's outputs, the output-area index each output lands in, as the
// classic UI (ui = true) or nbconvert (ui = false) lay them out, given how many areas the page
// has: one area per output, or consecutive stream outputs of one name merged into one area
// (and, in the UI, displays with nothing it can show dropped). null if neither fits.
function areaMap(outputs, domCount, ui) {
  const oneToOne = outputs.map((_, j) => j);
  if (domCount === outputs.length) return oneToOne;
  const merged = [];
  let area = -1, last = null;
  for (const o of outputs) {
    if (o.output_type === "stream" && last && last.output_type === "stream" && last.name === o.name) {
      merged.push(area);
    } else if (ui && (o.output_type === "display_data" || o.output_type === "execute_result") &&
               !uiMimes.some((m) => o.data && o.data[m] !== undefined)) {
      merged.push(-1);
    } else {
      merged.push(++area);
    }
    last = o;
  }
  return area + 1 === domCount ? merged : null;
}

// --- In the page: what each output area of each cell shows. ---

// describeAreas runs in the page: for each cell (in order), for each output-area element, the
// visible images/SVGs it holds and its text. cellSel/areaSel select the cells and their output
// areas (classic UI or nbconvert).
function describeAreas([cellSel, areaSel]) {
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    const s = getComputedStyle(e);
    let ok = r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none" && Number(s.opacity) > 0;
    for (let p = e.parentElement; ok && p; p = p.parentElement) {
      const ps = getComputedStyle(p);
      if (ps.display === "none" || ps.visibility === "hidden" || Number(ps.opacity) === 0) ok = false;
    }
    if (e.tagName.toLowerCase() === "img" && !(e.complete && e.naturalWidth > 0)) ok = false;
    return { tag: e.tagName.toLowerCase(), w: Math.round(r.width), h: Math.round(r.height), ok };
  };
  return [...document.querySelectorAll(cellSel)].map((cell) => ({
    type: cell.className,
    areas: [...cell.querySelectorAll(areaSel)].map((a) => ({
      figures: [...a.querySelectorAll("img, svg")].filter((e) => !e.parentElement.closest("svg")).map(visible),
      text: (a.innerText || "").slice(0, 4000),
      html: !!a.querySelector(".output_html, .jp-RenderedHTMLCommon, .jp-RenderedHTML"),
    })),
  }));
}

// --- Checks. ---

// runTogether says whether an output area's text looks like an SVG whose elements were
// stripped: the figure's labels glued together, or tick numbers run together ("0.00.51.0").
function runTogether(area, labels) {
  if (area.figures.some((f) => f.ok)) return false;
  const t = area.text.replace(/\s+/g, "");
  if (!t) return false;
  for (let k = 0; k + 2 < labels.length; k++) {
    const glued = (labels[k] + labels[k + 1] + labels[k + 2]).replace(/\s+/g, "");
    if (glued.length >= 6 && t.includes(glued)) return true;
  }
  // Tick numbers glued with no space between them (an HTML table's cells are separated by tabs).
  return area.html && /(\d+\.\d+){4,}/.test(area.text);
}

// checkPage checks one rendering (view: "UI" or "html") of notebook nbName against its JSON;
// it returns [figures in JSON, figures visible].
function checkPage(nbName, view, nb, cells, ui) {
  let want = 0, seen = 0;
  if (cells.length !== nb.cells.length) {
    fail(nbName, `(${view})`, `the page shows ${cells.length} cells, the notebook has ${nb.cells.length}`);
    return [0, 0];
  }
  nb.cells.forEach((c, i) => {
    const outputs = c.outputs || [];
    const areas = cells[i].areas;
    const map = areaMap(outputs, areas.length, ui);
    const figs = outputs.map((o, j) => [o, j]).filter(([o]) => figureKind(o));
    want += figs.length;
    if (!map) {
      fail(nbName, `cell ${i} (${view})`, `${outputs.length} output(s) in the notebook but ${areas.length} output area(s) on the page: cannot map them`);
      return;
    }
    for (const [o, j] of figs) {
      const a = map[j] >= 0 ? areas[map[j]] : null;
      const where = `cell ${i} output ${j} (${view})`;
      if (!a) { fail(nbName, where, `figure (${figureKind(o)}) has no output area on the page`); continue; }
      const ok = a.figures.filter((f) => f.ok);
      if (ok.length > 0) { seen++; continue; }
      const why = a.figures.length
        ? `its ${a.figures.map((f) => `<${f.tag}> ${f.w}x${f.h}`).join(", ")} not visible`
        : "no <img> or <svg> in the output";
      const shown = a.text.trim() ? `; it shows text ${JSON.stringify(a.text.trim().replace(/\s+/g, " ").slice(0, 80))}` : "; it is blank";
      fail(nbName, where, `figure (${figureKind(o)}) not visible: ${why}${shown}`);
    }
    // Any output (figure or not) shown as run-together SVG text.
    outputs.forEach((o, j) => {
      const a = map[j] >= 0 ? areas[map[j]] : null;
      if (a && runTogether(a, svgLabels(o))) {
        fail(nbName, `cell ${i} output ${j} (${view})`, `shows run-together SVG text: ${JSON.stringify(a.text.replace(/\s+/g, " ").slice(0, 80))}`);
      }
    });
  });
  return [want, seen];
}

// Lets the classic UI's page grow to its content so that a full-page screenshot holds it all.
const unclip = `html, body, #site { height: auto !important; overflow: visible !important; }
  body.notebook_app { overflow: visible !important; }`;

async function stopKernel(nbName) {
  // The page started a kernel for the notebook, as it does for a reader: stop it.
  const u = new URL(baseURL);
  const token = u.searchParams.get("token");
  const api = (p) => new URL(p + "?token=" + encodeURIComponent(token), u.origin).toString();
  try {
    const sessions = await (await fetch(api("/api/sessions"))).json();
    for (const s of sessions.filter((s) => (s.path || s.notebook?.path) === nbName)) {
      await fetch(api("/api/sessions/" + s.id), { method: "DELETE" });
    }
  } catch (e) {
    console.error(`browser-test: ${nbName}: could not stop its kernel: ${e.message}`);
  }
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "browser-test-profile-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 1000 },
});
// No request leaves the machine: nbconvert's page may name a CDN; only the Jupyter server and
// local files are allowed.
const origin = new URL(baseURL).origin;
await context.route("**/*", (r) => {
  const u = r.request().url();
  return u.startsWith(origin) || u.startsWith("file:") || u.startsWith("data:") ? r.continue() : r.abort();
});
fs.mkdirSync(path.join(outDir, "html"), { recursive: true });
const names = named.length ? named : fs.readdirSync(nbDir).filter((f) => f.endsWith(".ipynb")).sort();
if (names.length === 0) fail(nbDir, "", "no notebooks");
const totals = { want: 0, ui: 0, html: 0 };
try {
  for (const name of names) {
    const start = Date.now();
    const before = failures.length;
    const base = path.basename(name, ".ipynb");
    const nb = JSON.parse(fs.readFileSync(path.join(nbDir, name), "utf8"));
    const page = await context.newPage();
    let ui = [0, 0], html = [0, 0];
    try {
      // (a) The classic UI, untrusted, not run.
      const url = new URL(baseURL);
      url.pathname = "/notebooks/" + name.split("/").map(encodeURIComponent).join("/");
      await page.goto(url.toString(), { waitUntil: "domcontentloaded" });
      await page.waitForFunction(() => window.Jupyter?.notebook?._fully_loaded === true, null, { timeout: 60000 });
      await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: 30000 });
      await page.waitForTimeout(300); // let setTimeout(0) renders and layout settle
      const trusted = await page.evaluate(() => window.Jupyter.notebook.trusted);
      if (trusted === true && (nb.cells || []).some((c) => (c.outputs || []).length)) {
        fail(name, "(UI)", "the page says the notebook is trusted; a reader's copy is not (is the notary empty?)");
      }
      const cells = await page.evaluate(describeAreas, ["#notebook-container > .cell", ".output_wrapper .output > .output_area"]);
      ui = checkPage(name, "UI", nb, cells, true);
      await page.addStyleTag({ content: unclip });
      // The screenshot shows the page as a reader sees it: with the Markdown's math typeset.
      await page.waitForFunction(() => !window.MathJax?.Hub || (window.MathJax.Hub.queue.pending === 0 && !window.MathJax.Hub.queue.running),
        null, { timeout: 60000 }).catch(() => {});
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(outDir, base + ".png"), fullPage: true });
      await stopKernel(name);

      // (b) The nbconvert HTML export.
      const htmlFile = path.resolve(htmlDir, base + ".html");
      if (!fs.existsSync(htmlFile)) {
        fail(name, "(html)", `no nbconvert export ${htmlFile}`);
      } else {
        await page.goto(pathToFileURL(htmlFile).toString(), { waitUntil: "load", timeout: 60000 });
        await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: 30000 });
        const hcells = await page.evaluate(describeAreas, [".jp-Cell.jp-Notebook-cell", ".jp-OutputArea > .jp-OutputArea-child"]);
        html = checkPage(name, "html", nb, hcells, false);
        await page.screenshot({ path: path.join(outDir, "html", base + ".png"), fullPage: true });
      }
    } catch (e) {
      fail(name, "", e.message.split("\n")[0]);
    } finally {
      await page.close();
    }
    totals.want += ui[0]; totals.ui += ui[1]; totals.html += html[1];
    const secs = ((Date.now() - start) / 1000).toFixed(1);
    const status = failures.length === before ? "ok" : `FAIL (${failures.length - before} problem(s))`;
    console.log(`browser-test: ${name}: ${ui[0]} figure(s); visible in the untrusted UI ${ui[1]}/${ui[0]}, in nbconvert HTML ${html[1]}/${html[0]}; ${secs} s; ${status}`);
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
console.log(`browser-test: saved notebooks: ${names.length} notebook(s), ${totals.want} figure(s), visible in the UI ${totals.ui}, in HTML ${totals.html}; ${failures.length} problem(s)`);
if (failures.length) process.exitCode = 1;
