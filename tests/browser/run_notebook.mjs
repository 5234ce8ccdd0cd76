// Browser test: opens a notebook in the real Jupyter web UI, runs all cells with the
// project's GoNB kernel, waits for figures, and saves a full-page screenshot.
//
//   node run_notebook.mjs <jupyter URL with token> <notebook path relative to the server root> <screenshot.png>
//
// It fails (exit 1) if the notebook's kernel is not the project's, if any cell produces an
// error, or if fewer figures (visible <svg> or <img> of non-zero size) appear than the notebook
// promises in its metadata ("longmemory": {"min_figures": N}, default 1). Started by
// tests/browser/run.sh (`make browser-test`).
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [baseURL, notebook, screenshot] = process.argv.slice(2);
if (!baseURL || !notebook || !screenshot) {
  console.error("usage: node run_notebook.mjs <jupyter URL with token> <notebook> <screenshot.png>");
  process.exit(2);
}
const timeoutMs = Number(process.env.BROWSER_TEST_TIMEOUT_MS || 15 * 60 * 1000);
const fail = (msg) => { console.error("browser-test: " + msg); process.exitCode = 1; };

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "browser-test-profile-"));
const browser = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 1000 },
});
try {
  const page = await browser.newPage();
  const url = new URL(baseURL);
  url.pathname = "/notebooks/" + notebook;
  await page.goto(url.toString());
  // The classic Notebook UI: wait for the kernel to start and check which one it is.
  await page.waitForSelector("#kernel_indicator_icon.kernel_idle_icon", { timeout: 120000 });
  const kernel = (await page.textContent(".kernel_indicator_name, #kernel_indicator .kernel_name"))?.trim() || "";
  console.log(`browser-test: ${notebook}: kernel "${kernel}"`);
  if (!kernel.includes("GoNB")) {
    fail(`kernel is "${kernel}", want the project's GoNB kernel`);
  }
  // Cell > Run All, through the menus, as a user would.
  await page.click("#celllink");
  await page.click("#run_all_cells");
  // Wait until every code cell has run: no "In [*]" left and the kernel idle.
  const start = Date.now();
  await page.waitForFunction(() => {
    const prompts = [...document.querySelectorAll(".code_cell .input_prompt")].map((p) => p.textContent);
    const busy = document.querySelector("#kernel_indicator_icon.kernel_busy_icon");
    return prompts.length > 0 && !busy && prompts.every((p) => /In\s*\[\d+\]/.test(p));
  }, null, { timeout: timeoutMs, polling: 1000 });
  const seconds = ((Date.now() - start) / 1000).toFixed(1);
  const errors = await page.$$eval(".output_error, .output_stderr", (els) =>
    els.map((e) => e.textContent.slice(0, 300)).filter((t) => /error|panic/i.test(t)));
  await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: 30000 });
  // Visible figures: top-level <svg>/<img> in output areas with a non-zero rendered size.
  const figures = await page.$$eval(".output_area svg, .output_area img", (els) => els.filter((e) => {
    if (e.parentElement.closest("svg")) return false;
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && (e.tagName.toLowerCase() !== "img" || e.naturalWidth > 0);
  }).length);
  const want = await page.evaluate(() => window.Jupyter?.notebook?.metadata?.longmemory?.min_figures ?? 1);
  console.log(`browser-test: ${notebook}: ran in ${seconds} s, ${figures} visible figure(s) (want at least ${want}), ${errors.length} error output(s)`);
  // Let the page grow to its content so that the full-page screenshot holds it all.
  await page.addStyleTag({ content: "html, body, #site { height: auto !important; overflow: visible !important; }" });
  await page.screenshot({ path: screenshot, fullPage: true });
  if (errors.length > 0) fail(`cell errors:\n${errors.join("\n")}`);
  if (figures < want) fail(`${figures} visible figure(s) after running, want at least ${want}`);
} catch (e) {
  fail(e.message);
} finally {
  await browser.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
