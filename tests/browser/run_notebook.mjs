// Browser test: opens a notebook in the real Jupyter web UI, runs all cells with the
// project's GoNB kernel, waits for figures, and saves a screenshot.
//
//   node run_notebook.mjs <jupyter URL with token> <notebook path relative to the server root> <screenshot.png>
//
// It fails (exit 1) if the notebook's kernel is not the project's, if any cell produces an
// error, or if no figure (SVG or image) appears. Started by `make browser-test`.
import { chromium } from "playwright-core";

const [baseURL, notebook, screenshot] = process.argv.slice(2);
if (!baseURL || !notebook || !screenshot) {
  console.error("usage: node run_notebook.mjs <jupyter URL with token> <notebook> <screenshot.png>");
  process.exit(2);
}
const timeoutMs = Number(process.env.BROWSER_TEST_TIMEOUT_MS || 15 * 60 * 1000);
const fail = (msg) => { console.error("browser-test: " + msg); process.exitCode = 1; };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
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
  const figures = await page.$$eval(".output_area svg, .output_area img", (els) => els.length);
  console.log(`browser-test: ${notebook}: ran in ${seconds} s, ${figures} figure(s), ${errors.length} error output(s)`);
  await page.screenshot({ path: screenshot, fullPage: true });
  if (errors.length > 0) fail(`cell errors:\n${errors.join("\n")}`);
  if (figures === 0) fail("no figure appeared");
} catch (e) {
  fail(e.message);
} finally {
  await browser.close();
}
